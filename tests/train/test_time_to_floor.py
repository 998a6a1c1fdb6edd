"""train/time_to_floor.py: the first evaluation at or above the floor, from an evaluation log,
and the log an EvalCallback writes through EvalLog."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3.common.callbacks import EvalCallback  # noqa: E402

from train import time_to_floor as F  # noqa: E402
from train.hyperparameters import check  # noqa: E402


def _log(*rows: tuple[int, float, float, str]) -> list[dict]:
    return [F.entry(steps, wall, succ, 0.0, phase) for steps, wall, succ, phase in rows]


def test_first_at_floor_is_the_first_evaluation_at_or_above_it_in_play_order():
    log = _log((0, 3.0, 0.35, "clone"), (250_000, 6.5, 0.79, "ppo"),
               (500_000, 9.25, 0.80, "ppo"), (750_000, 12.0, 0.97, "ppo"),
               (1_000_000, 15.0, 0.60, "ppo"))
    hit = F.first_at_floor(log, 0.8)
    # 0.80 is at the floor (>=), before the higher 0.97; a later dip changes nothing.
    assert hit == {**log[2], "floor": 0.8}
    assert F.first_at_floor(log, 0.95)["env_steps"] == 750_000
    assert F.first_at_floor(log, 0.98) is None
    assert F.first_at_floor(log, None) is None
    # The clone's own evaluation counts when it is already above the floor (PushMaze-v1).
    assert F.first_at_floor(log, 0.3) == {**log[0], "floor": 0.3}


def test_nan_success_never_reaches_a_floor():
    log = _log((100, 1.0, float("nan"), "ppo"), (200, 2.0, 0.9, "ppo"))
    assert F.first_at_floor(log, 0.5)["env_steps"] == 200


def test_floors_of_the_issue_and_the_hyperparameter_override():
    assert F.floor_of("PushBox-v0", {}) == 0.8
    assert F.floor_of("Sweep-v1", {}) == F.floor_of("PushMaze-v1", {}) == 0.6
    assert F.floor_of("PushT-v0", {}) == 0.5
    assert F.floor_of("Custom-v9", {}) is None
    assert F.floor_of("Custom-v9", {"floor": 0.7}) == 0.7
    assert F.floor_of("PushBox-v0", {"floor": 0.95}) == 0.95
    assert F.describe(None, None).startswith("floor: none")
    assert "not reached" in F.describe(None, 0.8)
    hit = F.first_at_floor(_log((512, 4.25, 0.9, "ppo")), 0.8)
    assert F.describe(hit, 0.8) == ("floor 80%: reached at 4.2 s of wall clock, 512 env "
                                    "steps (90%, ppo)")


@pytest.mark.parametrize("value", [0.0, 1.5, -0.1, "high", True, float("nan")])
def test_floor_key_is_checked_as_a_success_rate(value):
    with pytest.raises(ValueError, match="floor"):
        check({"floor": value}, "ppo", "PushBox-v0 (ppo)")
    check({"floor": 1.0}, "ppo", "PushBox-v0 (ppo)")  # the top of the range is allowed


class _Model:
    num_timesteps = 0


def test_eval_log_appends_each_evaluation_with_its_wall_clock(monkeypatch):
    """EvalLog reads the EvalCallback it hangs from: its last successes and mean reward, the
    model's env steps, and the wall clock since the start it was given."""
    log: list[dict] = []
    cb = F.EvalLog(log, t_start=100.0)
    parent = EvalCallback.__new__(EvalCallback)  # only the fields EvalLog reads
    parent.evaluations_successes, parent.last_mean_reward = [], 0.0
    cb.parent, cb.model = parent, _Model()
    clock = iter([101.5, 104.0, 108.25])
    monkeypatch.setattr(F.time, "perf_counter", lambda: next(clock))
    for steps, succ, ret in ((4096, [True, False, False, False], 1.5),
                             (8192, [True, True, True, False], 2.5),
                             (12288, [], -1.0)):
        cb.model.num_timesteps = steps
        if succ:
            parent.evaluations_successes.append(succ)
        parent.last_mean_reward = ret
        cb.on_step()
    assert [e["env_steps"] for e in log] == [4096, 8192, 12288]
    assert [e["wall_clock_s"] for e in log] == [1.5, 4.0, 8.25]
    assert [e["success_rate"] for e in log[:2]] == [0.25, 0.75]
    # The third evaluation reported no success (the parent's list did not grow): NaN, not
    # the second one's rate again.
    assert math.isnan(log[2]["success_rate"]) and log[2]["mean_return"] == -1.0
    assert [e["mean_return"] for e in log] == [1.5, 2.5, -1.0]
    assert all(e["phase"] == "ppo" for e in log)
    assert F.first_at_floor(log, 0.5)["wall_clock_s"] == 4.0


def test_thread_plan_is_one_thread_a_phase_unless_asked():
    from train.train import thread_plan

    plan = thread_plan({})
    assert (plan.env, plan.collect, plan.update) == (1, 1, 1)
    assert thread_plan({"env_threads": None}) == plan
    plan = thread_plan({"env_threads": 2}, collect=2, update=2)
    assert (plan.env, plan.collect, plan.update) == (2, 2, 2)


def test_the_yml_sets_the_update_threads_and_the_flag_overrides_it():
    from train.hyperparameters import check
    from train.train import thread_plan

    assert thread_plan({"update_threads": 2}).update == 2
    assert thread_plan({"update_threads": 2}, update=1).update == 1
    assert thread_plan({"update_threads": None}).update == 1
    with pytest.raises(ValueError, match="update_threads"):
        check({"update_threads": 0, "n_envs": 4, "n_timesteps": 100}, "ppo", "PushBox-v0")
