"""SB3's CnnPolicy on pixel observations through push_envs.sb3.make_vec_env."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.vec_env import VecTransposeImage  # noqa: E402

from push_envs.sb3 import make_vec_env  # noqa: E402


def test_cnn_policy_trains_on_pixels():
    venv = make_vec_env("PushBox-v0", n_envs=4, seed=0, obs_mode="pixels",
                        max_episode_steps=20)
    assert venv.observation_space.shape == (96, 96, 3)
    venv = VecTransposeImage(venv)  # channel-first, as SB3's CNNs expect
    assert venv.observation_space.shape == (3, 96, 96)
    model = PPO("CnnPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, seed=0,
                device="cpu")
    model.learn(128)
    obs = venv.reset()
    action, _ = model.predict(obs, deterministic=True)
    assert action.shape == (4, 2) and np.all(np.abs(action) <= 1.0)
