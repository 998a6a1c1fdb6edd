"""Stable-Baselines3's PPO with a rollout that costs per finished episode, not per env.

:class:`LeanPPO` is SB3's ``PPO`` (same constructor, same update, same saved files: a
``LeanPPO`` zip loads with ``PPO.load``) with three changes that only touch cost:

* **The rollout's per-env loops run over the envs whose episode ended.** SB3's
  ``collect_rollouts`` walks every env's info dict twice per step (the episode statistics,
  ``_update_info_buffer``, and the time-limit bootstrap), a Python loop of ``n_envs``
  iterations; on a batch of a thousand envs that was as much CPU as the physics' own step
  (docs/training.md, Speed). Here both walk ``np.flatnonzero(dones)``. What they read is only
  ever there at a done: VecMonitor writes ``info["episode"]`` at an episode's end, SB3
  counts ``is_success`` only at a done, and the bootstrap is for a done's truncation.
* **The truncated episodes' values come from one forward.** SB3 bootstraps a time-limit cut
  (``r += gamma * V(terminal observation)``) with one policy call per cut env; here the
  step's cuts are stacked into one call. The values agree to float32 rounding (a matrix
  product over n rows may round the last bit differently than over one).
* **The hidden layers' tanh is :mod:`train.fast_tanh`'s**, the same function to 4 ULP at a
  fifth of torch's CPU cost; the modules stay ``nn.Tanh``.
* **Minibatches are gathered once, by torch** (:class:`train.rollout_buffer.LeanRolloutBuffer`:
  the same minibatches bit for bit, one copy instead of two). The model keeps SB3's
  ``rollout_buffer_class``, so a saved zip names no class of this package.

Everything else (the buffer's arrays, GAE, callbacks and their ``locals``, the update) is SB3's.
:func:`tests.train.test_lean_ppo` checks that a rollout fills the buffer as SB3's does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from stable_baselines3 import PPO
from stable_baselines3.common.buffers import RolloutBuffer
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import obs_as_tensor
from stable_baselines3.common.vec_env import VecEnv

from .fast_tanh import use_fast_tanh
from .rollout_buffer import LeanRolloutBuffer


def _stack(observations: list[Any]) -> Any:
    """A batch of single observations (arrays, or dicts of arrays)."""
    if isinstance(observations[0], dict):
        return {k: np.stack([o[k] for o in observations]) for k in observations[0]}
    return np.stack(observations)


class LeanPPO(PPO):
    """SB3's PPO with a rollout whose per-env work is per finished episode (module docs)."""

    fast_tanh: bool = True
    """the policy's ``nn.Tanh`` layers compute by :mod:`train.fast_tanh` (set when the model
    is built or loaded)"""

    def _setup_model(self) -> None:
        super()._setup_model()
        if type(self.rollout_buffer) is RolloutBuffer:  # not a Dict space, not a user's class
            self.rollout_buffer = LeanRolloutBuffer(
                self.n_steps, self.observation_space, self.action_space,  # type: ignore[arg-type]
                device=self.device, gamma=self.gamma, gae_lambda=self.gae_lambda,
                n_envs=self.n_envs, **self.rollout_buffer_kwargs)
        if self.fast_tanh:
            use_fast_tanh(self.policy)

    def _bootstrap_truncated(self, rewards: np.ndarray, infos: list[dict[str, Any]],
                             done_idx: np.ndarray) -> None:
        """``rewards[i] += gamma * V(terminal observation of i)`` for every env ``i`` whose
        episode the time limit cut this step, in one forward (SB3 bootstraps them one by
        one: its issue 633)."""
        cut = [i for i in done_idx if infos[i].get("terminal_observation") is not None
               and infos[i].get("TimeLimit.truncated", False)]
        if not cut:
            return
        terminal = self.policy.obs_to_tensor(_stack([infos[i]["terminal_observation"]
                                                     for i in cut]))[0]
        with th.no_grad():
            values = self.policy.predict_values(terminal)  # type: ignore[arg-type]
        rewards[cut] += (self.gamma * values[:, 0]).numpy()

    def collect_rollouts(self, env: VecEnv, callback: BaseCallback,
                         rollout_buffer: RolloutBuffer, n_rollout_steps: int) -> bool:
        """Fill ``rollout_buffer`` with ``n_rollout_steps`` steps of every env, as SB3's
        ``OnPolicyAlgorithm.collect_rollouts`` does (same calls to the policy, the env, the
        callbacks and the buffer, in the same order); False when a callback stopped it."""
        assert self._last_obs is not None, "No previous observation was provided"
        self.policy.set_training_mode(False)
        n_steps = 0
        rollout_buffer.reset()
        if self.use_sde:
            self.policy.reset_noise(env.num_envs)
        callback.on_rollout_start()
        box = isinstance(self.action_space, spaces.Box)
        discrete = isinstance(self.action_space, spaces.Discrete)

        while n_steps < n_rollout_steps:
            if self.use_sde and self.sde_sample_freq > 0 and n_steps % self.sde_sample_freq == 0:
                self.policy.reset_noise(env.num_envs)
            with th.no_grad():
                obs_tensor = obs_as_tensor(self._last_obs, self.device)  # type: ignore[arg-type]
                actions, values, log_probs = self.policy(obs_tensor)
            actions = actions.cpu().numpy()
            clipped_actions = actions
            if box:
                if self.policy.squash_output:
                    clipped_actions = self.policy.unscale_action(clipped_actions)
                else:
                    clipped_actions = np.clip(actions, self.action_space.low,
                                              self.action_space.high)

            new_obs, rewards, dones, infos = env.step(clipped_actions)
            self.num_timesteps += env.num_envs
            callback.update_locals(locals())  # callbacks read SB3's local names
            if not callback.on_step():
                return False

            done_idx = np.flatnonzero(dones)
            self._update_info_buffer([infos[i] for i in done_idx], dones[done_idx])
            n_steps += 1
            if discrete:
                actions = actions.reshape(-1, 1)
            self._bootstrap_truncated(rewards, infos, done_idx)
            rollout_buffer.add(self._last_obs, actions, rewards,  # type: ignore[arg-type]
                               self._last_episode_starts, values, log_probs)  # type: ignore[arg-type]
            self._last_obs = new_obs  # type: ignore[assignment]
            self._last_episode_starts = dones

        with th.no_grad():
            values = self.policy.predict_values(obs_as_tensor(new_obs, self.device))  # type: ignore[arg-type]
        rollout_buffer.compute_returns_and_advantage(last_values=values, dones=dones)
        callback.update_locals(locals())
        callback.on_rollout_end()
        return True
