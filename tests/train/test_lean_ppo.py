"""train.lean_ppo: LeanPPO's rollout fills the buffer as SB3's own collect_rollouts does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import torch  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from torch import nn  # noqa: E402

from push_envs.sb3 import make_vec_env  # noqa: E402
from train.hyperparameters import normalized  # noqa: E402
from train.lean_ppo import LeanPPO  # noqa: E402

N_ENVS, N_STEPS = 16, 24
ENV_KWARGS = {"robot": "diff", "max_episode_steps": 7}  # cut every 7 steps: many bootstraps


class ExactTanh(LeanPPO):
    """LeanPPO's rollout with torch's tanh, to compare its bookkeeping with SB3's bit for
    bit (the kernel's tanh differs in the last bits, and so would every sampled action)."""

    fast_tanh = False


class Seen(BaseCallback):
    """What a callback is shown at each step: the infos of the envs that finished."""

    def __init__(self) -> None:
        super().__init__()
        self.finished: list[list[tuple[int, dict[str, Any]]]] = []

    def _on_step(self) -> bool:
        dones, infos = self.locals["dones"], self.locals["infos"]
        self.finished.append([(int(i), sorted(infos[i])) for i in np.flatnonzero(dones)])
        return True


def rollout(cls: type[PPO], seed: int = 3) -> tuple[PPO, Seen]:
    env = normalized(make_vec_env("PushBox-v0", n_envs=N_ENVS, seed=seed, num_threads=1,
                                  **ENV_KWARGS), {"normalize": True}, None, True)
    model = cls("MlpPolicy", env, n_steps=N_STEPS, batch_size=64, seed=seed, device="cpu",
                policy_kwargs={"net_arch": [32, 32], "activation_fn": nn.Tanh})
    _, callback = model._setup_learn(N_STEPS * N_ENVS, callback=(seen := Seen()))
    torch.manual_seed(seed)
    assert model.collect_rollouts(model.env, callback, model.rollout_buffer, N_STEPS)
    return model, seen


def test_lean_rollout_fills_the_buffer_as_sb3s():
    sb3, seen_sb3 = rollout(PPO)
    lean, seen_lean = rollout(ExactTanh)
    a, b = sb3.rollout_buffer, lean.rollout_buffer
    # episodes end (every env is cut at steps 7, 14 and 21) and are bootstrapped
    starts = a.episode_starts[1:].sum()
    assert starts >= 3 * N_ENVS
    for name in ("observations", "actions", "episode_starts", "values", "log_probs"):
        np.testing.assert_array_equal(getattr(b, name), getattr(a, name), err_msg=name)
    # the bootstrap's values come from one forward instead of one per env: the same to
    # float32 rounding (a row of a matrix product may round its last bit differently)
    np.testing.assert_allclose(b.rewards, a.rewards, rtol=0, atol=2e-6)
    np.testing.assert_allclose(b.advantages, a.advantages, rtol=0, atol=2e-5)
    np.testing.assert_allclose(b.returns, a.returns, rtol=0, atol=2e-5)
    # the bootstrap happened: a cut step's reward differs from VecNormalize's reward alone
    cut = a.episode_starts[1:] == 1  # the step before each start ended an episode
    assert np.all(np.abs(a.rewards[:-1][cut]) > 0)
    # the episode statistics SB3 keeps, and what callbacks see, are the same
    assert [e["l"] for e in lean.ep_info_buffer] == [e["l"] for e in sb3.ep_info_buffer]
    np.testing.assert_array_equal([e["r"] for e in lean.ep_info_buffer],
                                  [e["r"] for e in sb3.ep_info_buffer])
    assert list(lean.ep_success_buffer) == list(sb3.ep_success_buffer)
    assert len(lean.ep_info_buffer) >= 3 * N_ENVS
    assert seen_lean.finished == seen_sb3.finished
    assert lean.num_timesteps == sb3.num_timesteps == N_STEPS * N_ENVS
    np.testing.assert_array_equal(lean._last_obs, sb3._last_obs)


def test_lean_model_uses_the_fast_tanh_and_saves_as_ppo(tmp_path):
    model, _ = rollout(LeanPPO)
    tanhs = [m for m in model.policy.modules() if isinstance(m, nn.Tanh)]
    assert len(tanhs) == 4 and all("forward" in vars(m) for m in tanhs)
    model.save(tmp_path / "m.zip")
    plain = PPO.load(tmp_path / "m.zip", device="cpu")
    assert not any("forward" in vars(m) for m in plain.policy.modules())
    obs = model.rollout_buffer.observations[:, 0]
    a_lean, _ = model.predict(obs, deterministic=True)
    a_plain, _ = plain.predict(obs, deterministic=True)
    np.testing.assert_allclose(a_lean, a_plain, rtol=0, atol=1e-5)


def test_a_callback_can_stop_the_lean_rollout():
    class Stop(BaseCallback):
        def _on_step(self) -> bool:
            return self.n_calls < 3

    env = make_vec_env("PushBox-v0", n_envs=4, seed=0, num_threads=1)
    model = LeanPPO("MlpPolicy", env, n_steps=8, batch_size=32, seed=0, device="cpu")
    _, callback = model._setup_learn(32, callback=Stop())
    assert not model.collect_rollouts(model.env, callback, model.rollout_buffer, 8)
    assert model.num_timesteps == 3 * 4


def test_lean_ppo_gathers_by_torch_and_saves_sb3s_buffer_class():
    from stable_baselines3.common.buffers import RolloutBuffer

    from train.rollout_buffer import LeanRolloutBuffer

    model, _ = rollout(ExactTanh)
    assert type(model.rollout_buffer) is LeanRolloutBuffer
    assert model.rollout_buffer_class is RolloutBuffer  # what a saved zip names
