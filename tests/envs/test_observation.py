"""The state observation's columns against the world state they describe (README table)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import push_envs  # noqa: F401


def _rot(c: np.ndarray, s: np.ndarray, v: np.ndarray) -> np.ndarray:
    """World vectors v (N, 2) into the frame of heading (c, s)."""
    return np.stack([c * v[:, 0] + s * v[:, 1], -s * v[:, 0] + c * v[:, 1]], 1)


@pytest.mark.parametrize("env_id,obj", [("PushBox-v0", "box"), ("PushT-v0", "tee")])
@pytest.mark.parametrize("max_contacts", [1, 4])
def test_columns_match_the_world(env_id, obj, max_contacts):
    env = gym.make_vec(env_id, num_envs=16, max_contacts=max_contacts)
    obs, _ = env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs, *_ = env.step(rng.uniform(-1, 1, (16, 2)))
    w = env.world
    robot, box, goal = w.state("robot")[:, :3], w.state(obj), env._goal
    o = obs.astype(np.float64)
    m = max_contacts
    assert obs.shape == (16, 21 + 6 * m + 8)
    tol = 1e-5  # float32 rounding of numbers of order 1-4
    c, s = np.cos(robot[:, 2]), np.sin(robot[:, 2])
    np.testing.assert_allclose(o[:, 0:2], robot[:, :2], atol=tol)
    np.testing.assert_allclose(o[:, 2], c, atol=tol)
    np.testing.assert_allclose(o[:, 3], s, atol=tol)
    np.testing.assert_allclose(o[:, 7:9], _rot(c, s, box[:, :2] - robot[:, :2]), atol=tol)
    np.testing.assert_allclose(o[:, 9], np.cos(box[:, 2] - robot[:, 2]), atol=tol)
    np.testing.assert_allclose(o[:, 10], np.sin(box[:, 2] - robot[:, 2]), atol=tol)
    np.testing.assert_allclose(o[:, 11:13], goal[:, :2] - box[:, :2], atol=tol)
    np.testing.assert_allclose(o[:, 15:17], goal[:, :2], atol=tol)
    t = 21 + 6 * m
    np.testing.assert_allclose(o[:, t + 4:t + 6], _rot(c, s, goal[:, :2] - robot[:, :2]),
                               atol=tol)
    np.testing.assert_allclose(o[:, t + 6:t + 8], _rot(c, s, goal[:, :2] - box[:, :2]),
                               atol=tol)
    env.close()
