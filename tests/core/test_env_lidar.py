"""The lidar observation block (``lidar=dict(...)``): columns against World.lidar_array,
seeded noise equal in a batch and a single env, argument errors, check_env, beams drawn."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import push_envs  # noqa: F401
from push_envs.core import obs_layout as L

LIDAR = {"number": 32, "range_max": 3.0, "angle_range": 2 * np.pi}


@pytest.mark.parametrize("env_id", ["PushBox-v0", "PushT-v0"])
def test_lidar_block_matches_the_world(env_id):
    n = 20
    env = gym.make_vec(env_id, num_envs=n, lidar=LIDAR)
    base = gym.make_vec(env_id, num_envs=2)
    n_task = base.single_observation_space.shape[0]
    assert env.single_observation_space.shape == (n_task + 32,)
    assert "lidar2d ranges / range_max" in L.table(env.observation_layout)
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for step in range(40):
        obs, *_ = env.step(rng.uniform(-1, 1, (n, 2)))
        if step % 20 != 19:
            continue
        want = env.world.lidar_array("robot") / 3.0
        np.testing.assert_allclose(obs[:, n_task:], want, atol=1e-6)
        assert obs[:, n_task:].min() > 0.0 and obs[:, n_task:].max() <= 1.0
        assert (obs[:, n_task:] < 1.0).any()  # walls within 3 m are seen
        # Every column, through the layout's readers (the lidar's included).
        ctx = env.task.reading_context(env)
        for f, k, j in L.columns(env.observation_layout, env.task.args):
            got = (f.expect(ctx) if j is None else f.expect(ctx, j))
            np.testing.assert_allclose(obs[:, k:k + f.size], got, atol=f.atol, err_msg=f.name)
    env.close()


def test_noisy_lidar_batch_equals_single_envs():
    lid = dict(LIDAR, noise=True, std=0.05, angle_std=0.01)
    n = 20
    venv = gym.make_vec("PushBox-v0", num_envs=n, lidar=lid)
    obs, _ = venv.reset(seed=100)
    singles = [gym.make("PushBox-v0", lidar=lid) for _ in (0, 13)]
    sobs = [s.reset(seed=100 + i)[0] for s, i in zip(singles, (0, 13), strict=True)]
    for s, i in zip(sobs, (0, 13), strict=True):
        np.testing.assert_array_equal(obs[i], s)
    rng = np.random.default_rng(1)
    for _ in range(30):
        a = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
        obs, *_ = venv.step(a)
        for s, i in zip(singles, (0, 13), strict=True):
            o, *_ = s.step(a[i])
            np.testing.assert_array_equal(obs[i], o)
    # The noise is real: another scan of the same state (fresh noise) differs.
    again = venv.world.lidar_array("robot") / 3.0
    assert not np.allclose(obs[:, -32:], again, atol=1e-3)


def test_bad_lidar_arguments():
    with pytest.raises(ValueError, match=r"lidar: unknown key 'range_maxx'"):
        gym.make_vec("PushBox-v0", num_envs=1, lidar={"range_maxx": 1.0})
    with pytest.raises(ValueError, match=r"lidar\.number"):
        gym.make_vec("PushBox-v0", num_envs=1, lidar={"number": -3})
    with pytest.raises(ValueError, match="lidar must be None or a dict"):
        gym.make_vec("PushBox-v0", num_envs=1, lidar=32)


@pytest.mark.parametrize("obs_mode", ["state", "goal"])
def test_check_env_with_lidar(obs_mode):
    env = gym.make("PushBox-v0", obs_mode=obs_mode, lidar={"number": 16, "range_max": 2.0})
    check_env(env.unwrapped, skip_render_check=True)


def test_render_draws_the_beams():
    frames = {}
    for key, lid in (("with", {"number": 64, "range_max": 3.0}), ("without", None)):
        env = gym.make("PushBox-v0", render_mode="rgb_array", lidar=lid)
        env.reset(seed=0)
        env.step(np.zeros(2, np.float32))
        frames[key] = env.render()
        env.close()
    diff = np.any(frames["with"] != frames["without"], axis=2)
    assert diff.mean() > 0.01
