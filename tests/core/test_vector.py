"""The native batched env: Gymnasium's vector contract, autoreset modes, and bit-equality."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.vector import VectorEnv

from push_envs import ENV_IDS
from push_envs.core.env import PushVectorEnv


def test_make_vec_returns_the_native_batch():
    env = gym.make_vec("PushBox-v0", num_envs=8)
    assert isinstance(env, PushVectorEnv) and isinstance(env, VectorEnv)
    assert env.world.num_envs == 8
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=0)
    assert obs.shape == (8, env.single_observation_space.shape[0])
    assert obs.dtype == np.float32
    assert env.observation_space.contains(obs)
    assert info["is_success"].shape == (8,) and info["_is_success"].all()


def test_make_vec_takes_the_single_env_arguments():
    env = gym.make_vec("PushT-v0", num_envs=3, robot="acker", obs_mode="goal",
                       reward_type="sparse", max_episode_steps=5)
    obs, _ = env.reset(seed=1)
    assert set(obs) == {"observation", "achieved_goal", "desired_goal"}
    assert obs["achieved_goal"].shape == (3, 4)
    assert env.world.kinematics("robot") == "acker"


# The batch tests walk the tasks in reverse registry order: on a fresh cache test_tasks.py
# compiles them in registry order on the other xdist worker meanwhile, so each task's kernels
# compile once and the later worker loads them from the shared numba cache.
TASKS_BACKWARDS = ENV_IDS[::-1]
# No other default test runs CoopPush in a batch of 16 or more, so its prange kernels (a
# minute of CPU to compile) are compiled for this test alone: it runs with the `slow` tests,
# and its serial batch (n = 3, same hooks) stays in the default suite.
_PRANGE_ONLY_HERE = {"CoopPush-v0"}
BIT_FOR_BIT = [pytest.param(n, env_id, marks=pytest.mark.slow)
               if n >= 16 and env_id in _PRANGE_ONLY_HERE else (n, env_id)
               for n in (3, 40) for env_id in TASKS_BACKWARDS]
# 40 runs the prange kernels, over two chunks of codegen.CHUNK = 32 envs (a full one and a
# part), so a chunk boundary that skipped or repeated an env would show.


def _single_envs(env_id, n, seed, **kw):
    envs = [gym.make(env_id, **kw) for _ in range(n)]
    return envs, [e.reset(seed=seed + i)[0] for i, e in enumerate(envs)]


@pytest.mark.parametrize(("n", "env_id"), BIT_FOR_BIT)
def test_sub_env_equals_single_env_bit_for_bit(env_id, n):
    steps, horizon = 120, 15
    vec = gym.make_vec(env_id, num_envs=n, max_episode_steps=horizon)
    vobs, _ = vec.reset(seed=100)
    singles, sobs = _single_envs(env_id, n, 100, max_episode_steps=horizon)
    for i in range(n):
        assert np.array_equal(vobs[i], sobs[i])
    dim = vec.single_action_space.shape[0]
    actions = np.random.default_rng(7).uniform(-1.2, 1.2, (steps, n, dim)).astype(np.float32)
    pending = [False] * n
    resets = 0
    for t in range(steps):
        vobs, vrew, vterm, vtrunc, _ = vec.step(actions[t])
        for i, env in enumerate(singles):
            if pending[i]:
                # NEXT_STEP: this step of the batch is the reset of sub-env i.
                obs, _ = env.reset()
                assert vrew[i] == 0.0 and not vterm[i] and not vtrunc[i]
                pending[i] = False
                resets += 1
            else:
                obs, rew, term, trunc, _ = env.step(actions[t, i])
                assert vrew[i] == rew and vterm[i] == term and vtrunc[i] == trunc
                pending[i] = term or trunc
            assert np.array_equal(vobs[i], obs), (t, i)
    assert resets >= n  # every sub-env went through at least one reset


def _run_modes(mode, steps=8, horizon=3):
    env = gym.make_vec("PushBox-v0", num_envs=2, max_episode_steps=horizon,
                       autoreset_mode=mode)
    obs, _ = env.reset(seed=3)
    zero = np.zeros((2, 2), np.float32)
    out = [env.step(zero) for _ in range(steps)]
    return env, obs, out


def test_next_step_autoreset_expectations():
    env, obs0, out = _run_modes(AutoresetMode.NEXT_STEP)
    # Steps 1-3 are an episode (truncated at 3); step 4 is the reset, reward 0, no flags.
    truncs = [o[3].tolist() for o in out]
    assert truncs == [[False, False], [False, False], [True, True], [False, False],
                      [False, False], [False, False], [True, True], [False, False]]
    assert [o[1].tolist() for o in out][3] == [0.0, 0.0]
    reset_obs = out[3][0]
    assert not np.array_equal(reset_obs, out[2][0])
    # The reset obs is a fresh spawn: the next step starts from it.
    assert "final_obs" not in out[2][4]


def test_same_step_autoreset_expectations():
    env, obs0, out = _run_modes(AutoresetMode.SAME_STEP)
    truncs = [o[3].tolist() for o in out]
    assert truncs == [[False, False], [False, False], [True, True], [False, False],
                      [False, False], [True, True], [False, False], [False, False]]
    info = out[2][4]
    assert info["_final_obs"].tolist() == [True, True]
    final = info["final_obs"]
    assert not np.array_equal(final, out[2][0])  # returned obs is already the new episode
    assert info["final_info"]["_is_success"].tolist() == [True, True]
    assert "final_obs" not in out[1][4]


def test_disabled_autoreset_with_reset_mask():
    env, obs0, out = _run_modes(AutoresetMode.DISABLED, steps=4)
    truncs = [o[3].tolist() for o in out]
    # Without a reset the counter keeps running past the horizon.
    assert truncs[2] == [True, True] and truncs[3] == [True, True]
    before = out[-1][0].copy()
    obs, info = env.reset(options={"reset_mask": np.array([True, False])})
    assert not np.array_equal(obs[0], before[0])
    assert np.array_equal(obs[1], before[1])
    assert info["_is_success"].tolist() == [True, False]
    _, _, _, trunc, _ = env.step(np.zeros((2, 2), np.float32))
    assert trunc.tolist() == [False, True]


def test_bad_vector_actions_raise():
    env = gym.make_vec("PushBox-v0", num_envs=4)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros((3, 2), np.float32))
    bad = np.zeros((4, 2), np.float32)
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        env.step(bad)


def test_vector_render_returns_first_k_frames():
    env = gym.make_vec("PushBox-v0", num_envs=6, render_mode="rgb_array")
    env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 4
    assert all(f.shape == frames[0].shape and f.dtype == np.uint8 for f in frames)
    assert not np.array_equal(frames[0], frames[1])


def test_num_threads_is_validated():
    with pytest.raises(ValueError, match="num_threads"):
        gym.make_vec("PushBox-v0", num_envs=32, num_threads=0)


@pytest.mark.parametrize("env_id", TASKS_BACKWARDS)
@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_sub_env_equals_single_env_in_same_step_and_disabled(env_id, mode):
    n, steps, horizon = 3, 40, 12
    vec = gym.make_vec(env_id, num_envs=n, max_episode_steps=horizon, autoreset_mode=mode)
    vobs, _ = vec.reset(seed=200)
    singles, sobs = _single_envs(env_id, n, 200, max_episode_steps=horizon)
    assert all(np.array_equal(vobs[i], sobs[i]) for i in range(n))
    dim = vec.single_action_space.shape[0]
    actions = np.random.default_rng(5).uniform(-1, 1, (steps, n, dim)).astype(np.float32)
    ends = 0
    for t in range(steps):
        vobs, vrew, vterm, vtrunc, info = vec.step(actions[t])
        done = vterm | vtrunc
        for i, env in enumerate(singles):
            obs, rew, term, trunc, _ = env.step(actions[t, i])
            assert vrew[i] == rew and vterm[i] == term and vtrunc[i] == trunc
            if mode == AutoresetMode.SAME_STEP and done[i]:
                # The batch reset inside the step: its final obs is the single env's last one.
                assert np.array_equal(info["final_obs"][i], obs), (t, i)
                obs, _ = env.reset()
            assert np.array_equal(vobs[i], obs), (t, i)
        if mode == AutoresetMode.DISABLED and done.any():
            vobs, _ = vec.reset(options={"reset_mask": done})
            for i in np.flatnonzero(done):
                assert np.array_equal(vobs[i], singles[i].reset()[0]), (t, i)
        ends += int(done.sum())
    assert ends >= n
