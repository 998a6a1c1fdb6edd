"""Stable-Baselines3 over the native batch: one compiled world, not N Python envs.

>>> from push_envs.sb3 import make_vec_env
>>> venv = make_vec_env("PushBox-v0", n_envs=64, seed=0)      # a VecMonitor'ed VecEnv
>>> model = PPO("MlpPolicy", venv)

SB3 expects SAME_STEP autoreset: a finished sub-env is reset inside the step that ended it,
its last observation goes to ``info["terminal_observation"]`` and a time-limit cut sets
``info["TimeLimit.truncated"]``; infos come as a list of dicts. Building one dict per env per
step would cost more than the physics at large batches, so a sub-env's info dict is filled
only on the step its episode ends (with every info key of that step); other steps give an
empty dict. The per-step info arrays stay available as ``venv.get_attr("last_info")[0]``.

stable-baselines3 is imported here only, so the core package does not need it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env import VecMonitor

import push_envs  # noqa: F401  (registers the ids)

from .core.env import PushVectorEnv
from .core.env import check_action_dtype
from .core.env import env_seeds


class PushSB3VecEnv(VecEnv):
    """SB3 ``VecEnv`` view of a :class:`~push_envs.core.env.PushVectorEnv` (SAME_STEP)."""

    def __init__(self, venv: PushVectorEnv) -> None:
        if venv.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError("PushSB3VecEnv needs a batch made with "
                             "autoreset_mode=AutoresetMode.SAME_STEP")
        self.venv = venv
        self.render_mode = venv.render_mode
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._actions: np.ndarray | None = None
        self.last_info: dict[str, Any] = {}

    # ------------------------------------------------------------------------- stepping
    def reset(self) -> Any:
        # SB3 keeps one seed per sub-env (seed() fills them with seed + i); the batch takes
        # them as Gymnasium's per-env list, so sub-env i gets exactly self._seeds[i].
        seeds = self._seeds
        if all(s is None for s in seeds):
            seed = None
        elif any(s is None for s in seeds):
            raise ValueError(f"seed: the batch seeds every sub-env or none, got the per-env "
                             f"seeds {seeds}")
        else:
            seed = list(seeds)
        obs, info = self.venv.reset(seed=seed)
        self.last_info = info
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Take one action row per sub-env: exactly (num_envs, action_dim), as SB3's
        algorithms pass them (any int or float dtype). Another shape is refused, not
        reshaped: (2 * num_envs, dim / 2) would silently hand sub-env i another's action."""
        a = np.asarray(actions)
        check_action_dtype(a, "actions")
        shape = (self.num_envs, *self.action_space.shape)
        if a.shape != shape:
            raise ValueError(f"actions must have shape {shape} (num_envs, action_dim), got "
                             f"{a.shape}")
        self._actions = a.astype(np.float32)  # a copy: the caller may reuse its buffer

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rew, term, trunc, info = self.venv.step(self._actions)
        self.last_info = info
        dones = term | trunc
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        done_idx = np.flatnonzero(dones)
        if len(done_idx):
            final_obs = info["final_obs"]
            final_info = info["final_info"]
            keys = [k for k in final_info if not k.startswith("_")]
            for i in done_idx:
                d = {k: final_info[k][i].item() for k in keys}
                if isinstance(final_obs, dict):
                    d["terminal_observation"] = {k: v[i] for k, v in final_obs.items()}
                else:
                    d["terminal_observation"] = final_obs[i]
                d["TimeLimit.truncated"] = bool(trunc[i] and not term[i])
                infos[i] = d
        return obs, rew.astype(np.float32), dones, infos

    def close(self) -> None:
        self.venv.close()

    # ---------------------------------------------------------------------- env access
    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next reset: sub-env i gets ``seed + i`` (as SB3's own VecEnvs do); an int
        in [0, 2**64 - num_envs], numpy integers alike, checked here rather than at reset."""
        if seed is None:
            return [None] * self.num_envs
        self._seeds = env_seeds(seed, self.num_envs)
        return self._seeds

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The batch's attribute, once per requested index (the batch is one object)."""
        target = self if attr_name == "last_info" else self.venv
        value = getattr(target, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set an attribute on the batch (shared by every sub-env)."""
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None,
                   **method_kwargs: Any) -> list[Any]:
        """Call a batch method once; ``render_frame`` is called per index with ``env=i``."""
        idx = self._indices(indices)
        method = getattr(self.venv, method_name)
        if method_name == "render_frame":
            return [method(i) for i in idx]
        result = method(*method_args, **method_kwargs)
        return [result for _ in idx]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: Any = None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [self.venv.render_frame(i) for i in range(self.num_envs)]


def make_vec_env(env_id: str, n_envs: int = 1, seed: int | None = None, monitor: bool = True,
                 num_threads: int | None = None, **env_kwargs: Any) -> VecEnv:
    """An SB3 ``VecEnv`` (VecMonitor'ed unless ``monitor=False``) over the native batch.

    ``env_kwargs`` are the task's constructor arguments (robot, reward_type, obs_mode, ...);
    ``seed`` seeds sub-env i with ``seed + i``.
    """
    venv = gym.make_vec(env_id, num_envs=n_envs, autoreset_mode=AutoresetMode.SAME_STEP,
                        num_threads=num_threads, **env_kwargs)
    sb = PushSB3VecEnv(venv)
    if seed is not None:
        sb.seed(seed)
    return VecMonitor(sb) if monitor else sb
