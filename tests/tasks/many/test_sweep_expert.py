"""Sweep-v1's memoryless sweeper (the clone's teacher): a function of the observation, and a
sweeper that solves the task by itself."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

import push_envs  # noqa: F401
from push_envs.datasets import rollout
from push_envs.experts import expert

TEACHER = "expert:markov_expert"


def _observations() -> np.ndarray:
    """Observations along 60 steps of the planning sweeper in 3 envs, stacked: states the
    memoryless one meets mid-sweep (pucks on the face, the robot lined up or on its way)."""
    env = gym.make_vec("Sweep-v1", num_envs=3, num_threads=1)
    obs, _ = env.reset(seed=5)
    policy = expert("Sweep-v1", "diff")
    rows = []
    for _ in range(60):
        obs, *_ = env.step(policy(obs))
        rows.append(obs)
    env.close()
    return np.concatenate(rows)


def test_the_teacher_is_a_function_of_the_observation():
    # The planning sweeper keeps a mode and a pass between calls, so a clone cannot learn it
    # from observations; the teacher must give each row the same action whatever came before
    # it and whatever else is in the batch.
    obs = _observations()
    teacher = expert("Sweep-v1", "diff", factory_path=TEACHER)
    a = teacher(obs)
    order = np.random.default_rng(0).permutation(len(obs))
    np.testing.assert_array_equal(teacher(obs[order]), a[order])
    one_by_one = np.concatenate([teacher(obs[i:i + 1]) for i in range(0, len(obs), 7)])
    np.testing.assert_array_equal(one_by_one, a[::7])
    # It drives the face into pucks somewhere along the way, at the push's speed.
    assert np.any((a[:, 0] >= 0.2) & (a[:, 1] == 0.0))
    assert np.all(np.abs(a) <= 1.0)


def test_the_teacher_sweeps_by_itself():
    # 30 of 32 and 184 of 200 episodes when measured (seeds 0 and 10,000); these 12 (seed
    # 777) are deterministic (11 wins), and 9 or more hold with probability ~0.99 at 92 %.
    venv = gym.make_vec("Sweep-v1", num_envs=12, autoreset_mode=AutoresetMode.DISABLED,
                        num_threads=1)
    teacher = expert("Sweep-v1", "diff", factory_path=TEACHER)
    wins = [bool(ep.infos["is_success"][-1]) for ep in rollout(venv, teacher, 12, seed=777)]
    venv.close()
    assert sum(wins) >= 9, wins
