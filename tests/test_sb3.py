"""The SB3 adapter over the native batch."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.evaluation import evaluate_policy  # noqa: E402
from stable_baselines3.common.vec_env import VecCheckNan  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402
from stable_baselines3.common.vec_env import VecNormalize  # noqa: E402

from push_envs.sb3 import PushSB3VecEnv  # noqa: E402
from push_envs.sb3 import make_vec_env  # noqa: E402


def test_same_step_infos_terminal_observation_and_time_limit():
    venv = make_vec_env("PushBox-v0", n_envs=3, seed=0, max_episode_steps=4)
    assert isinstance(venv, VecMonitor)
    obs = venv.reset()
    assert obs.shape == (3, venv.observation_space.shape[0])
    for _ in range(4):
        obs, rew, dones, infos = venv.step(np.zeros((3, 2), np.float32))
        assert isinstance(infos, list) and len(infos) == 3
    assert dones.all()
    for info in infos:
        assert info["TimeLimit.truncated"] is True
        assert info["terminal_observation"].shape == obs.shape[1:]
        assert not np.array_equal(info["terminal_observation"], obs[0])
        assert "episode" in info and info["episode"]["l"] == 4
        assert "is_success" in info


def test_seeded_like_sb3_vec_envs():
    a = make_vec_env("PushBox-v0", n_envs=2, seed=5).reset()
    b = make_vec_env("PushBox-v0", n_envs=2, seed=5).reset()
    assert np.array_equal(a, b)
    import gymnasium as gym

    single = gym.make("PushBox-v0")
    assert np.array_equal(single.reset(seed=6)[0], a[1])


def test_attr_and_method_access():
    venv = make_vec_env("PushBox-v0", n_envs=4, monitor=False)
    assert isinstance(venv, PushSB3VecEnv)
    assert venv.get_attr("reward_type") == ["dense"] * 4
    assert venv.get_attr("max_episode_steps", indices=[1]) == [200]
    venv.set_attr("render_envs", 2)
    assert venv.get_attr("render_envs", 0) == [2]
    assert venv.env_method("compute_reward", np.zeros((1, 2)), np.zeros((1, 2)), None,
                           indices=[0])[0].shape == (1,)
    assert venv.env_is_wrapped(VecMonitor) == [False] * 4
    venv.reset()
    venv.step(np.zeros((4, 2)))
    assert venv.get_attr("last_info")[0]["is_success"].shape == (4,)


def test_nan_check_and_normalize_wrap():
    venv = VecNormalize(VecCheckNan(make_vec_env("WallSlide-v0", n_envs=4, seed=1),
                                    raise_exception=True))
    venv.reset()
    for _ in range(30):
        venv.step(np.random.default_rng(0).uniform(-1, 1, (4, 2)).astype(np.float32))


def test_short_ppo_learn_and_evaluate():
    venv = make_vec_env("PushBox-v0", n_envs=8, seed=0)
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=512)
    mean, _ = evaluate_policy(model, venv, n_eval_episodes=4)
    assert np.isfinite(mean)


def test_goal_obs_for_her():
    venv = make_vec_env("PushBox-v0", n_envs=2, seed=0, obs_mode="goal", max_episode_steps=3,
                        reward_type="sparse")
    obs = venv.reset()
    assert set(obs) == {"observation", "achieved_goal", "desired_goal"}
    for _ in range(3):
        obs, rew, dones, infos = venv.step(np.zeros((2, 2), np.float32))
    assert dones.all() and set(infos[0]["terminal_observation"]) == set(obs)
    assert (rew == -1).all()


@pytest.mark.parametrize("shape", [(4, 2), (8,), (1, 8), (2, 2), (2, 4, 1)])
def test_an_action_batch_of_another_shape_is_refused_not_reshaped(shape):
    venv = make_vec_env("CoopPush-v0", n_envs=2, seed=0)
    venv.reset()
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.zeros(shape, np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_the_action_batches_sb3_passes_step(dtype):
    venv = make_vec_env("CoopPush-v0", n_envs=2, seed=0)
    venv.reset()
    obs, rew, dones, infos = venv.step(np.full((2, 4), 0.5).astype(dtype))
    assert obs.shape[0] == 2 and rew.shape == (2,)


def test_complex_actions_are_refused():
    venv = make_vec_env("PushBox-v0", n_envs=2, seed=0)
    venv.reset()
    with pytest.raises(ValueError, match="actions.*complex"):
        venv.step(np.full((2, 2), 0.5 + 1j))


def test_a_numpy_seed_seeds_like_the_python_int():
    a = make_vec_env("PushBox-v0", n_envs=2, seed=np.int64(5)).reset()
    b = make_vec_env("PushBox-v0", n_envs=2, seed=5).reset()
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="seed"):
        make_vec_env("PushBox-v0", n_envs=2, seed=-1)
