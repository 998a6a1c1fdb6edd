"""TorchRL over the native batch: ``torchrl.envs.GymWrapper`` around one compiled world.

>>> from push_envs.torchrl_env import make_torchrl_env
>>> env = make_torchrl_env("PushBox-v0", num_envs=64, seed=0)   # batch_size [64]
>>> from torchrl.collectors import Collector
>>> collector = Collector(env, policy, frames_per_batch=64 * 32, total_frames=...)

TorchRL resets finished sub-envs itself (a ``"_reset"`` mask), which is Gymnasium's DISABLED
autoreset with ``reset(options={"reset_mask": mask})``; it refuses NEXT_STEP, so the batch is
made with ``autoreset_mode=DISABLED``. The info keys named in ``info_keys`` (default
``is_success``) ride in the tensordict beside the observation, at reset and at every step.

torchrl is imported here only (the ``[torchrl]`` extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import torch
from gymnasium.vector import AutoresetMode
from torchrl.data import Unbounded
from torchrl.envs import GymWrapper
from torchrl.envs.gym_like import default_info_dict_reader

import push_envs  # noqa: F401  (registers the ids)


class SeedFirstReset(gym.vector.VectorWrapper):
    """The batch, its first reset seeded with ``seed`` when that reset names no seed.

    TorchRL's ``set_seed`` seeds by a reset of its own, and a collector then starts with
    another: its first episode was the second of the ``reset(seed=seed)`` stream. Seeding the
    first reset instead makes the first episode sub-env i plays the first of its seed
    ``seed + i``, as ``venv.reset(seed=seed)`` starts it."""

    def __init__(self, env: gym.vector.VectorEnv, seed: int) -> None:
        super().__init__(env)
        self._first_seed: int | None = seed

    def __getattr__(self, name: str) -> Any:
        # the batch's own attributes (TorchRL reads autoreset_mode, info_dtypes ...)
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.env, name)

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> Any:
        if seed is None:
            seed = self._first_seed
        self._first_seed = None
        return self.env.reset(seed=seed, options=options)


def make_torchrl_env(env_id: str, num_envs: int = 1, seed: int | None = None,
                     info_keys: Sequence[str] = ("is_success",), device: str = "cpu",
                     num_threads: int | None = None, **env_kwargs: Any) -> GymWrapper:
    """A TorchRL env of batch size ``[num_envs]`` stepping ``gym.make_vec(env_id, ...)``.

    ``env_kwargs`` are the task's constructor arguments; ``seed`` seeds sub-env i with
    ``seed + i`` at the first reset (the collector's): its first episode is the first of
    ``reset(seed=seed)`` of the batch (:class:`SeedFirstReset`); ``info_keys`` are copied from the
    batch's info into the tensordict (shape ``[num_envs]``): a sequence of key names, so a
    single str is refused (``"is_success"`` would read as the keys ``i``, ``s``, ...; pass
    ``("is_success",)``). A refused call leaves no batch open.
    """
    if isinstance(info_keys, (str, bytes)):
        raise ValueError(f"info_keys must be a sequence of info key names, not a single "
                         f"string: pass ({info_keys!r},), got {info_keys!r}")
    info_keys = list(info_keys)
    venv = gym.make_vec(env_id, num_envs=num_envs, autoreset_mode=AutoresetMode.DISABLED,
                        num_threads=num_threads, **env_kwargs)
    try:
        dtypes = venv.info_dtypes  # info key -> bool / int / float
        if seed is not None:
            venv = SeedFirstReset(venv, seed)
        unknown = sorted(set(info_keys) - set(dtypes), key=str)
        if unknown:
            raise ValueError(f"info_keys: {unknown} are not info keys of {env_id}; it has "
                             f"{sorted(dtypes)}")
        env = GymWrapper(venv, device=device)
        if info_keys:
            spec = {k: Unbounded(shape=(num_envs,), device=device,
                                 dtype={bool: torch.bool, int: torch.int64}.get(dtypes[k],
                                                                                torch.float64))
                    for k in info_keys}
            env.set_info_dict_reader(default_info_dict_reader(info_keys, spec=spec))
    except BaseException:
        venv.close()  # the batch was made for this env only: nobody else would close it
        raise
    return env
