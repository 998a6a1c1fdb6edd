"""train/rllib_ppo.py: one PPO iteration in the driver process and one with a remote EnvRunner
(Ray RLlib, new API stack; each runner steps one native batch)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from train_scripts import load_script  # noqa: E402

STEPS = 16  # episode length: episodes end inside one iteration, so success is measured


R = load_script("rllib_ppo.py", "rllib_ppo")


def _argv(tmp_path: Path, runners: int) -> list[str]:
    return ["--num-env-runners", str(runners), "--num-envs-per-runner", "8", "--iterations",
            "1", "--train-batch-size", "256", "--minibatch-size", "128", "--num-epochs", "2",
            "--env-kwargs", f"max_episode_steps={STEPS}", "--num-cpus", "2", "--run-dir",
            str(tmp_path), "--verbose", "0"]


def _check(tmp_path: Path, summary: dict) -> None:
    assert summary["iterations"] == 1
    assert summary["env_steps"] >= 256
    rows = json.loads((tmp_path / "PushBox-v0" / "rllib_ppo" / "0" / "progress.json").read_text())
    row = rows[0]
    # 256 steps of 16-step episodes: the episodes that ended report return and success.
    assert 0.0 <= row["success"] <= 1.0
    assert np.isfinite(row["return"]) and row["episode_len"] <= STEPS
    assert row["env_steps_per_s"] > 0


def test_one_iteration_in_the_driver(tmp_path: Path):
    summary = R.main(_argv(tmp_path, 0))
    _check(tmp_path, summary)
    assert (tmp_path / "PushBox-v0" / "rllib_ppo" / "0" / "checkpoint").is_dir()


def test_one_iteration_with_a_remote_runner(tmp_path: Path):
    summary = R.main([*_argv(tmp_path, 1), "--no-checkpoint"])
    _check(tmp_path, summary)


def test_seed_stride_keeps_runner_streams_apart():
    import gymnasium as gym

    from push_envs.rllib import make_batch

    a = make_batch({"env_id": "PushBox-v0", "num_envs": 4})
    b = make_batch({"env_id": "PushBox-v0", "num_envs": 4})
    assert isinstance(a.unwrapped, gym.vector.VectorEnv) and a.num_envs == 4
    obs_a, _ = a.reset(seed=10)   # runner k: seed + k = 10 -> envs 40..43
    obs_b, _ = b.reset(seed=11)   # runner k + 1 -> envs 44..47
    single = gym.make("PushBox-v0")
    for i in range(4):
        assert np.array_equal(obs_a[i], single.reset(seed=40 + i)[0])
        assert np.array_equal(obs_b[i], single.reset(seed=44 + i)[0])
    with pytest.raises(ValueError, match="env_config must name the task"):
        make_batch({"num_envs": 2})
