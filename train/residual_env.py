"""What residual PPO's training (train/residual.py) and its export (train/export.py) share,
one floor below both: the batch a residual policy sees (:class:`ResidualVecEnv`), the
deterministic action of a trained one, and the command line's :class:`Args`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env import VecEnvWrapper
from stable_baselines3.common.vec_env import VecNormalize

from push_envs.baselines import Agent
from push_envs.baselines.agent import residual_action
from push_envs.baselines.agent import residual_inputs

from .common import RunArgs


@dataclass
class Args(RunArgs):
    """train/residual.py's command line: the run's arguments (:class:`~train.common.RunArgs`;
    its folder <run_dir>/<env>/residual/<seed>/, its hyperparams file read instead of the
    task's ``residual`` entry) and the base with the residual's reach."""

    base: str | None = None
    """the base policy: a train/dagger.py run folder, or an agent .npz (required)"""
    scale: float | None = None
    """the residual's reach: env action = clip(base + scale * residual) (default: the yml's)"""


class ResidualVecEnv(VecEnvWrapper):
    """The batch seen by a residual policy: it acts with a residual in [-1, 1], the batch
    steps with ``clip(base(obs) + scale * residual, low, high)``
    (:func:`~push_envs.baselines.agent.residual_action`), and it observes the observation
    with ``inputs`` appended (:func:`~push_envs.baselines.agent.residual_inputs`), in the
    observations, the reset and the ``terminal_observation`` PPO bootstraps from alike.
    The exported ``"residual"`` agent calls the same two functions."""

    def __init__(self, venv: VecEnv, base: Agent, scale: float,
                 inputs: tuple[str, ...] | list[str]) -> None:
        obs_space, act_space = venv.observation_space, venv.action_space
        if not isinstance(obs_space, gym.spaces.Box) or len(obs_space.shape) != 1 or \
                not isinstance(act_space, gym.spaces.Box) or len(act_space.shape) != 1:
            raise ValueError(f"a residual policy needs state observations and a Box action; "
                             f"this batch has {obs_space} and {act_space}")
        if (base.observation_dim, base.action_dim) != (obs_space.shape[0], act_space.shape[0]):
            raise ValueError(f"the base {base!r} does not fit this batch: it observes "
                             f"{obs_space.shape} and acts with {act_space.shape}")
        self.base, self.scale, self.inputs = base, float(scale), tuple(inputs)
        self.low, self.high = act_space.low, act_space.high
        self.base_action = np.zeros((venv.num_envs, act_space.shape[0]), np.float32)
        n_in = residual_inputs(base, np.zeros((1, obs_space.shape[0]), np.float32),
                               self.base_action[:1], self.inputs).shape[1]
        super().__init__(
            venv, observation_space=gym.spaces.Box(-np.inf, np.inf, (n_in,), np.float32),
            action_space=gym.spaces.Box(-1.0, 1.0, act_space.shape, np.float32))

    def observe(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the base's actions, the residual policy's inputs) on observations (N, obs_dim)."""
        base = self.base(obs)
        return base, residual_inputs(self.base, obs, base, self.inputs)

    def env_action(self, residual: np.ndarray, base: np.ndarray | None = None) -> np.ndarray:
        """The batch's action for the residual (on the last observations' base actions)."""
        base = self.base_action if base is None else base
        return residual_action(base, residual, self.scale, self.low, self.high)

    def reset(self) -> np.ndarray:
        self.base_action, x = self.observe(self.venv.reset())
        return x

    def step_async(self, actions: np.ndarray) -> None:
        self.venv.step_async(self.env_action(actions))

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rew, done, infos = self.venv.step_wait()
        self.base_action, x = self.observe(obs)
        ended = [i for i, info in enumerate(infos) if "terminal_observation" in info]
        if ended:
            _, last = self.observe(np.stack([infos[i]["terminal_observation"] for i in ended]))
            for i, row in zip(ended, last, strict=True):
                infos[i]["terminal_observation"] = row
        return x, rew, done, infos


def unwrap(env: VecEnv) -> tuple[ResidualVecEnv, VecNormalize | None]:
    """The :class:`ResidualVecEnv` of a wrapper stack and the VecNormalize above it."""
    norm = None
    while not isinstance(env, ResidualVecEnv):
        if isinstance(env, VecNormalize):
            norm = env
        if not isinstance(env, VecEnvWrapper):
            raise ValueError("no ResidualVecEnv in this wrapper stack")
        env = env.venv
    return env, norm


def deterministic_action(model: PPO, env: VecEnv, obs: np.ndarray) -> np.ndarray:
    """The batch action the residual policy ``model`` takes on raw observations ``obs``
    (N, obs_dim), deterministically, as in the wrapper stack ``env`` (its VecNormalize's
    statistics, its base, scale and inputs): the base's action plus the scaled mean
    residual that SB3's ``predict`` gives (clipped to [-1, 1])."""
    wrapper, norm = unwrap(env)
    base, x = wrapper.observe(np.asarray(obs, np.float32))
    if norm is not None:
        x = norm.normalize_obs(x)
    residual = model.predict(x, deterministic=True)[0]
    return wrapper.env_action(residual, base)
