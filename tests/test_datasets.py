"""Minari datasets recorded from the native batch (push_envs.datasets)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from push_envs.datasets import main
from push_envs.datasets import record
from push_envs.datasets import rollout
from push_envs.experts import expert
from push_envs.tasks.pushing.push_box.expert import push_box_action

push_box_actions = expert("PushBox-v0", "diff")

minari = pytest.importorskip("minari")

STEPS = 60  # short episodes keep the tests quick; the scripted policy still wins some


def _batch(n: int) -> gym.vector.VectorEnv:
    return gym.make_vec("PushBox-v0", num_envs=n, autoreset_mode=AutoresetMode.DISABLED,
                        max_episode_steps=STEPS)


def test_reset_info_carries_the_step_info_keys():
    # Minari stores one info row per observation: reset's info must have step's keys.
    venv = _batch(2)
    _, reset_info = venv.reset(seed=0)
    _, _, _, _, step_info = venv.step(np.zeros((2, 2)))
    assert set(reset_info) == set(step_info)
    assert {"is_success", "box_to_goal", "_is_success"} <= set(reset_info)
    assert reset_info["box_to_goal"].shape == (2,) and (reset_info["box_to_goal"] > 0).all()
    assert not reset_info["is_success"].any()


def test_batch_scripted_policy_equals_the_single_row_one():
    venv = _batch(16)
    obs, _ = venv.reset(seed=3)
    for _ in range(30):
        batch = push_box_actions(obs)
        rows = np.stack([push_box_action(o) for o in obs])
        assert np.array_equal(batch, rows)
        obs, *_ = venv.step(batch)
    with pytest.raises(ValueError, match="batch of state observations"):
        push_box_actions(obs[0])


def test_rollout_quota_shapes_and_replay_by_a_single_env():
    venv = _batch(4)
    eps = list(rollout(venv, push_box_actions, 10, seed=7))
    assert len(eps) == 10
    # Env i runs 10 // 4 episodes, one more for the first 10 % 4: nothing is cut short.
    assert sorted(np.bincount([e.env for e in eps]).tolist()) == [2, 2, 3, 3]
    assert np.bincount([e.env for e in eps]).tolist() == [3, 3, 2, 2]
    for e in eps:
        T = len(e)
        assert 1 <= T <= STEPS
        assert e.observations.shape == (T + 1, 53) and e.observations.dtype == np.float32
        assert e.actions.shape == (T, 2) and e.rewards.shape == (T,)
        assert all(v.shape == (T + 1,) for v in e.infos.values())
        # Only the last step ends the episode; it terminates exactly when it succeeds.
        assert not (e.terminations[:-1] | e.truncations[:-1]).any()
        assert e.terminations[-1] == e.success
        assert e.truncations[-1] == (not e.success and T == STEPS)
    assert any(e.success for e in eps) and not all(e.success for e in eps)
    # The first episode of env 1 is what a single env seeded 7 + 1 does with those actions.
    first = next(e for e in eps if e.env == 1)
    env = gym.make("PushBox-v0", max_episode_steps=STEPS)
    obs, info = env.reset(seed=8)
    assert np.array_equal(obs, first.observations[0])
    assert info["box_to_goal"] == first.infos["box_to_goal"][0]
    for t, a in enumerate(first.actions):
        obs, rew, term, trunc, info = env.step(a)
        assert np.array_equal(obs, first.observations[t + 1])
        assert rew == first.rewards[t] and term == first.terminations[t]
        assert info["is_success"] == first.infos["is_success"][t + 1]


def test_rollout_rejects_bad_input():
    with pytest.raises(ValueError, match="autoreset_mode=AutoresetMode.DISABLED"):
        next(rollout(gym.make_vec("PushBox-v0", num_envs=2), push_box_actions, 1))
    with pytest.raises(ValueError, match="episodes must be an int >= 1"):
        next(rollout(_batch(2), push_box_actions, 0))


def test_record_cli_writes_a_minari_dataset(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    dataset_id = "push_envs/PushBox-v0/test-v0"
    argv = ["record", "--env", "PushBox-v0", "--policy", "scripted", "--episodes", "12",
            "--num-envs", "4", "--seed", "7", "--out", dataset_id,
            "--env-kwargs", f"max_episode_steps={STEPS}"]
    assert main(argv) == 0
    assert "12 episodes" in capsys.readouterr().out
    ds = minari.load_dataset(dataset_id)
    assert ds.total_episodes == 12
    expected = list(rollout(_batch(4), push_box_actions, 12, seed=7))
    assert ds.total_steps == sum(len(e) for e in expected)
    for got, want in zip(ds.iterate_episodes(), expected, strict=True):
        assert np.array_equal(got.observations, want.observations)
        assert np.array_equal(got.actions, want.actions)
        assert np.array_equal(got.rewards, want.rewards)
        assert np.array_equal(got.terminations, want.terminations)
        assert np.array_equal(got.truncations, want.truncations)
        assert np.array_equal(got.infos["is_success"], want.infos["is_success"])
        assert set(got.infos) == set(want.infos)
    # The env spec carries the task arguments: the dataset rebuilds its env.
    assert ds.spec.env_spec.id == "PushBox-v0"
    assert ds.spec.env_spec.kwargs["max_episode_steps"] == STEPS
    env = ds.recover_environment()
    assert env.observation_space == ds.observation_space
    # An existing id is refused unless --overwrite.
    with pytest.raises(ValueError, match="already exists; pass --overwrite"):
        main(argv)
    assert main([*argv[:-2], "--episodes", "2", "--overwrite"] + argv[-2:]) == 0
    assert minari.load_dataset(dataset_id).total_episodes == 2


def test_record_only_success_and_policy_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    ds = record("PushBox-v0", "scripted", 5, "push_envs/PushBox-v0/wins-v0", num_envs=4,
                env_kwargs={"max_episode_steps": STEPS}, only_success=True)
    assert ds.total_episodes == 5
    assert all(ep.terminations[-1] and ep.infos["is_success"][-1]
               for ep in ds.iterate_episodes())
    assert ds.push_envs_stats["tried"] > 5  # some failures were dropped
    with pytest.raises(ValueError, match="no scripted expert for PushBox-v0 with robot='acker'"):
        record("PushBox-v0", "scripted", 1, "x-v0", env_kwargs={"robot": "acker"}, num_envs=1)
    with pytest.raises(FileNotFoundError, match="no model file"):
        record("PushBox-v0", str(tmp_path / "missing.zip"), 1, "x-v0", num_envs=1)


@pytest.mark.parametrize("dataset_id", ["", "no-version", "a//b-v0", "../up-v0", "./x-v0",
                                        "x/.hidden-v0", 7])
def test_an_empty_or_malformed_dataset_id_is_refused(tmp_path, monkeypatch, dataset_id):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    with pytest.raises(ValueError, match="dataset_id"):
        record("PushBox-v0", "scripted", 1, dataset_id, num_envs=1)
    assert list(tmp_path.iterdir()) == []  # nothing was written


def _interrupt_writes(monkeypatch):
    """Ctrl-C while Minari writes: after the first episode is on disk."""
    from minari.dataset._storages.arrow_storage import ArrowStorage
    from minari.dataset._storages.hdf5_storage import HDF5Storage

    for cls in (HDF5Storage, ArrowStorage):
        def interrupted(self, episodes, real=cls.update_episodes):
            real(self, list(episodes)[:1])
            raise KeyboardInterrupt

        monkeypatch.setattr(cls, "update_episodes", interrupted)


def _leftovers(root):
    return [p for p in root.rglob("*") if p.name.startswith(".push_envs")]


def test_an_interrupted_write_leaves_no_dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    dataset_id = "push_envs/PushBox-v0/cut-v0"
    _interrupt_writes(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        record("PushBox-v0", "scripted", 2, dataset_id, num_envs=2,
               env_kwargs={"max_episode_steps": STEPS})
    assert dataset_id not in minari.list_local_datasets()
    assert not (tmp_path / dataset_id).exists() and not _leftovers(tmp_path)


def _record_old(dataset_id):
    record("PushBox-v0", "scripted", 3, dataset_id, num_envs=3,
           env_kwargs={"max_episode_steps": STEPS})
    assert minari.load_dataset(dataset_id).total_episodes == 3


def test_a_failed_overwrite_keeps_the_old_dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    dataset_id = "push_envs/PushBox-v0/keep-v0"
    _record_old(dataset_id)
    calls = []

    def flaky(obs):
        calls.append(1)
        if len(calls) > 5:
            raise RuntimeError("policy crashed")
        return push_box_actions(obs)

    with pytest.raises(RuntimeError, match="policy crashed"):
        record("PushBox-v0", flaky, 4, dataset_id, num_envs=2, overwrite=True,
               env_kwargs={"max_episode_steps": STEPS})
    with pytest.raises(RuntimeError, match="succeeded"):  # only_success finds too few
        record("PushBox-v0", lambda obs: np.zeros((len(obs), 2)), 2, dataset_id, num_envs=2,
               overwrite=True, only_success=True, env_kwargs={"max_episode_steps": 5})
    _interrupt_writes(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        record("PushBox-v0", "scripted", 2, dataset_id, num_envs=2, overwrite=True,
               env_kwargs={"max_episode_steps": STEPS})
    monkeypatch.undo()
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    assert minari.load_dataset(dataset_id).total_episodes == 3
    assert not _leftovers(tmp_path)
    # A complete overwrite still replaces it.
    ds = record("PushBox-v0", "scripted", 2, dataset_id, num_envs=2, overwrite=True,
                env_kwargs={"max_episode_steps": STEPS})
    assert ds.total_episodes == 2 and minari.load_dataset(dataset_id).total_episodes == 2
    assert list(minari.list_local_datasets()) == [dataset_id]
