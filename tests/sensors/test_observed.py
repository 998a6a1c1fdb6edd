"""The sensors a robot carries, observed in a task env: an fmcw_lidar2d and a field of view
declared in the scene append their fields to the layout, their columns equal the World's own
readings, a batch equals single envs bit for bit (noise from each env's stream), SAME_STEP
final observations keep them, and render() draws them."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest

from push_envs.core import obs_layout as L
from push_envs.physics.safe_yaml import read_scene_yaml
from push_envs.tasks import spec

FMCW = {"name": "fmcw_lidar2d", "number": 24, "range_max": 3.0, "angle_range": 6.0,
        "range_min": 0.05}


def scene(fmcw=FMCW, fov=(2.0, 2.5)):
    raw = copy.deepcopy(read_scene_yaml(str(spec("PushBox-v0").scene_path())))
    robot = raw["robot"][0]
    if fmcw is not None:
        robot["sensors"] = [*robot["sensors"], dict(fmcw)]
    if fov is not None:
        robot["fov"], robot["fov_radius"] = fov
    return raw


def test_fields_follow_the_task_and_equal_the_worlds_readings():
    n = 20
    env = gym.make_vec("PushBox-v0", num_envs=n, scene=scene())
    base = gym.make_vec("PushBox-v0", num_envs=2)
    n_task = base.single_observation_space.shape[0]
    names = [f.name for f in env.observation_layout]
    assert names[-4:] == ["fmcw_range", "fmcw_radial_velocity", "fov_seen", "fov_xy"]
    B = len(env.world.names)
    assert env.single_observation_space.shape == (n_task + 2 * 24 + 3 * (B - 1),)
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    seen_any = moving = False
    for step in range(30):
        obs, *_ = env.step(rng.uniform(-1, 1, (n, 2)))
        if step % 10 != 9:
            continue
        ctx = env.task.reading_context(env)
        for f, k, j in L.columns(env.observation_layout, env.task.args):
            if j is None and f.name in names[-4:]:
                np.testing.assert_allclose(obs[:, k:k + f.size], f.expect(ctx), atol=1e-5,
                                           err_msg=f.name)
        at = L.offset(env.observation_layout, env.task.args, "fov_seen")
        seen_any |= bool(obs[:, at:at + B - 1].any())
        at = L.offset(env.observation_layout, env.task.args, "fmcw_radial_velocity")
        moving |= bool(np.abs(obs[:, at:at + 24]).max() > 0.05)
    assert seen_any and moving  # both sensors read something real


def test_noisy_batch_equals_single_envs_and_final_obs_keeps_the_sensors():
    noisy = dict(FMCW, noise=True, std=0.02, angle_std=0.01, velocity_noise_std=0.1)
    kw = dict(scene=scene(noisy), max_episode_steps=6)
    n = 18
    venv = gym.make_vec("PushBox-v0", num_envs=n, autoreset_mode="SameStep", **kw)
    obs, _ = venv.reset(seed=40)
    singles = {i: gym.make("PushBox-v0", **kw) for i in (0, 11)}
    for i, s in singles.items():
        np.testing.assert_array_equal(s.reset(seed=40 + i)[0], obs[i])
    rng = np.random.default_rng(3)
    for t in range(6):
        a = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
        obs, _, term, trunc, info = venv.step(a)
        for i, s in singles.items():
            o, *_ = s.step(a[i])
            want = info["final_obs"][i] if (term[i] or trunc[i]) else obs[i]
            np.testing.assert_array_equal(o, want, err_msg=f"step {t} env {i}")
    assert trunc.all() and not np.array_equal(info["final_obs"], obs)


def test_render_draws_the_sensors():
    frames = {}
    for key, raw in (("with", scene()), ("without", scene(fmcw=None, fov=None))):
        env = gym.make("PushBox-v0", render_mode="rgb_array", scene=raw)
        env.reset(seed=0)
        env.step(np.zeros(2, np.float32))
        frames[key] = env.render()
        env.close()
    assert np.any(frames["with"] != frames["without"], axis=2).mean() > 0.01


@pytest.mark.parametrize("obs_mode", ["state", "goal"])
def test_check_env_with_the_sensors(obs_mode):
    from gymnasium.utils.env_checker import check_env

    env = gym.make("PushBox-v0", obs_mode=obs_mode, scene=scene())
    check_env(env.unwrapped, skip_render_check=True)


def test_a_copy_senses_its_own_world():
    # A deep copy repacks its sensors' arrays: its observations are its own, bit for bit the
    # original's from the same state, and stepping it leaves the original alone.
    noisy = dict(FMCW, noise=True, std=0.02, velocity_noise_std=0.1)
    env = gym.make_vec("PushBox-v0", num_envs=3, scene=scene(noisy))
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    env.step(rng.uniform(-1, 1, (3, 2)))
    twin = copy.deepcopy(env)
    a = rng.uniform(-1, 1, (3, 2))
    np.testing.assert_array_equal(twin.step(a)[0], env.step(a)[0])
    before = env.unwrapped.env_arrays.obs.copy()
    twin.step(rng.uniform(-1, 1, (3, 2)))
    np.testing.assert_array_equal(env.unwrapped.env_arrays.obs, before)
