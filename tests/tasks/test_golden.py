"""Golden hashes of whole task rollouts: any change to spawn, physics, observation, reward or
autoreset arithmetic changes them.

When a change is meant to alter the numbers, regenerate with::

    python -c "import tests.envs.test_golden as t; t.print_hashes()"

and say why in the commit message.
"""

from __future__ import annotations

import hashlib

import gymnasium as gym
import numpy as np
import pytest

import push_envs  # noqa: F401

GOLDEN = {
    "PushBox-v0": "7b04b4428493f99b37b152431d81a76e",
    "WallSlide-v0": "4a433f0b2fec646728fff40a5903075b",
    "PushT-v0": "141f4bb591a4172e9be0fd6b63996452",
    "CoopPush-v0": "83d22a05ba73e4278d46cdafbddbb065",
    "PushMaze-v0": "f89a1b9f5f76b7a92abd4a4021bcabbd",
    "PushMulti-v0": "afcb69fd279d4d36d1926faf65c0009e",
    "PushClutter-v0": "8f596561f728de2f0771274df164290f",
    "Sweep-v0": "6818f3c4b0e3618d80a02b391735064b",
}


def rollout_hash(env_id: str, num_envs: int = 8, steps: int = 400) -> tuple[str, dict]:
    """SHA-256 of observations, rewards and episode ends of a seeded random-action rollout
    (long enough for several autoresets), plus a few figures showing it did something."""
    env = gym.make_vec(env_id, num_envs=num_envs, max_episode_steps=60)
    obs, _ = env.reset(seed=123)
    rng = np.random.default_rng(7)
    h = hashlib.sha256(np.ascontiguousarray(obs).tobytes())
    ends = 0
    touched = 0
    for _ in range(steps):
        obs, rew, term, trunc, info = env.step(
            rng.uniform(-1, 1, (num_envs, *env.single_action_space.shape)))
        for a in (obs, rew, term, trunc):
            h.update(np.ascontiguousarray(a).tobytes())
        ends += int(np.sum(term | trunc))
        touched += int(np.sum(info["contacts"] > 0))
    env.close()
    return h.hexdigest()[:32], {"ends": ends, "contact_steps": touched}


def print_hashes() -> None:
    for env_id in GOLDEN:
        print(f'    "{env_id}": "{rollout_hash(env_id)[0]}",')


@pytest.mark.parametrize("env_id", sorted(GOLDEN))
def test_rollout_matches_golden_hash(env_id):
    digest, seen = rollout_hash(env_id)
    # The rollout must exercise autoresets and contacts for the hash to mean anything.
    assert seen["ends"] >= 48 and seen["contact_steps"] >= 20, seen
    assert digest == GOLDEN[env_id]
