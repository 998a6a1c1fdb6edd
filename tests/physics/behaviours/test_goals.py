"""Goals and arrival, as IR-SIM's ObjectBase: a sequence is taken goal by goal, the last one
raises the arrive flag, loop starts again (a single goal: back to the start), wander draws
a new goal from each env's own stream, arrive_mode "state" needs the heading too."""

from __future__ import annotations

import math

import numpy as np
import pytest

# IR-SIM's default mode: commands apply at once (no lag, no grip cap)
FAST = {"collision_mode": "stop"}


def _omni(bw, goal, **kw):
    return bw.omni("r", 0, 0, goal=goal, behavior={"name": "dash", **kw.pop("beh", {})},
                   vel_max=[1, 1], vel_min=[-1, -1], **kw)


def _arrival_steps(w, name, steps, env=0):
    """Steps after which the goal changed or the arrive flag rose."""
    out = []
    last = w.goal(name)[env].copy()
    flag = False
    for k in range(1, steps + 1):
        w.step()
        g = w.goal(name)[env]
        if not np.array_equal(np.nan_to_num(g), np.nan_to_num(last)) or (
                w.arrived(name)[env] and not flag):
            out.append(k)
        last, flag = g.copy(), bool(w.arrived(name)[env])
    return out


def test_sequence_then_arrive(bw):
    """Omni dash at 1 m/s along x, 0.1 m per step, to x = 2.05 then back to x = 0.95.
    Arrival is checked after each step's physics (IR-SIM's status step): within 0.1 m."""
    w = bw.world([_omni(bw, [[2.05, 0, 0], [0.95, 0, 0]])], **FAST)
    np.testing.assert_array_equal(w.goal("r")[0], [2.05, 0, 0])
    for _ in range(19):
        w.step()
    assert w.state("r")[0, 0] == pytest.approx(1.9)
    np.testing.assert_array_equal(w.goal("r")[0], [2.05, 0, 0])
    w.step()  # at 2.0: the first goal is reached, the second taken
    np.testing.assert_array_equal(w.goal("r")[0], [0.95, 0, 0])
    assert not w.arrived("r")[0]
    for _ in range(9):
        w.step()
    assert w.state("r")[0, 0] == pytest.approx(1.1)
    assert not w.arrived("r")[0]
    w.step()
    assert w.arrived("r")[0] and w.done()[0]
    # at the last goal it stays
    x = w.state("r")[0, 0]
    w.step()
    assert w.state("r")[0, 0] == pytest.approx(x)
    assert w.arrived("r")[0]


def test_state_mode_needs_the_heading(bw):
    """arrive_mode state: sqrt(d^2 + heading error^2) < threshold; a diff robot at the goal
    position but facing away has not arrived."""
    w = bw.world([bw.diff("r", 0, 0, 0.0, goal=[0.05, 0, math.pi], arrive_mode="state",
                          goal_threshold=0.2, behavior={"name": "dash"})], **FAST)
    w.step()
    assert not w.arrived("r")[0]
    w2 = bw.world([bw.diff("r", 0, 0, 0.0, goal=[0.05, 0, 0.1], arrive_mode="state",
                           goal_threshold=0.2, behavior={"name": "dash"})], **FAST)
    w2.step()
    assert w2.arrived("r")[0]


def test_position_goal_ignores_heading_in_state_mode(bw):
    w = bw.world([bw.diff("r", 0, 0, 0.0, goal=[0.05, 0], arrive_mode="state",
                          behavior={"name": "dash"})], **FAST)
    w.step()
    assert w.arrived("r")[0]
    assert np.isnan(w.goal("r")[0, 2])


def test_loop_of_a_sequence_starts_again(bw):
    w = bw.world([_omni(bw, [[1.05, 0, 0], [1.05, 1.05, 0]], beh={"loop": True})], **FAST)
    steps = _arrival_steps(w, "r", 60)
    # 1.05 m, 1.05 m (10 steps each, within 0.1 m), then the sequence again, and so on
    assert steps[:2] == [10, 20]
    np.testing.assert_array_equal(w.goals("r")[:, :2][-1], [1.05, 1.05])
    assert len(steps) >= 4


def test_loop_of_one_goal_returns_to_the_start(bw):
    w = bw.world([_omni(bw, [2, 0, 0], beh={"loop": True})], **FAST)
    seen = []
    for _ in range(90):
        w.step()
        g = tuple(w.goal("r")[0, :2])
        if not seen or seen[-1] != g:
            seen.append(g)
    assert seen[:3] == [(2.0, 0.0), (0.0, 0.0), (2.0, 0.0)]


def test_wander_draws_per_env_from_its_stream(bw):
    rng_low, rng_high = [1, 1, -3.14], [6, 6, 3.14]
    beh = {"wander": True, "range_low": rng_low, "range_high": rng_high}
    w = bw.world([_omni(bw, None, beh=beh)], num_envs=3, **FAST)
    w.seed_behaviours(7)
    w.reset()
    goals = w.goal("r")
    assert len({tuple(g) for g in goals}) == 3  # each env its own draw
    assert np.all(goals >= rng_low) and np.all(goals <= rng_high)
    single = bw.world([_omni(bw, None, beh=beh)], **FAST)
    single.seed_behaviours(7 + 2)
    single.reset()
    np.testing.assert_array_equal(single.goal("r")[0], goals[2])
    # a new goal after each arrival, from the same stream as a single world's
    for _ in range(150):
        w.step()
        single.step()
    np.testing.assert_array_equal(single.goal("r")[0], w.goal("r")[2])
    np.testing.assert_array_equal(single.state("r")[0], w.state("r")[2])
    assert not np.array_equal(w.goal("r")[2], goals[2])


def test_set_goal_and_its_errors(bw):
    w = bw.world([_omni(bw, [5, 0, 0])], num_envs=2, **FAST)
    w.set_goal("r", [[1, 0], [1, 2, 0.5]], env=1)
    np.testing.assert_array_equal(w.goal("r")[0], [5, 0, 0])
    np.testing.assert_array_equal(w.goals("r", env=1)[1], [1, 2, 0.5])
    with pytest.raises(ValueError, match=r"World.set_goal: 'r'"):
        w.set_goal("r", [[1, 0], [1, 2], [3, 3]])  # longer than the scene's queues
    with pytest.raises(ValueError, match="x, y"):
        w.set_goal("r", [1])
    w.set_goal("r", None)
    assert np.isnan(w.goal("r")).all()
    w.step()
    np.testing.assert_array_equal(w.state("r")[:, :2], [[0, 0], [0, 0]])  # no goal: still
