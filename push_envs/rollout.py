"""Whole episodes from a batch: a batch policy plays a compiled batch of envs (DISABLED
autoreset, finished rows restarted with ``reset_mask``) and each finished episode is cut out
of per-env buffers.

Env i of the batch (seeded ``seed + i``) plays ``episodes // num_envs`` episodes (one more
for the first ``episodes % num_envs`` envs) and then only idles, so every episode that is
started is kept: stopping at the first N finished episodes would favour the short ones. An
episode holds T + 1 observations and infos (the reset's and each step's) and T actions,
rewards, terminations and truncations.

The floor under what plays episodes: the scripted experts' evaluation
(:func:`push_envs.experts.evaluate`), the datasets (:mod:`push_envs.datasets`), the
pretrained agents' evaluation and the training scripts' demonstrations.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from .scripted import BatchPolicy


@dataclasses.dataclass
class Episode:
    """One finished episode of one env of the batch.

    ``observations`` and each ``infos`` entry have T + 1 rows (reset, then every step);
    ``actions`` (as applied, clipped to [-1, 1]), ``rewards``, ``terminations`` and
    ``truncations`` have T. ``observations`` is an array, or a dict of arrays for
    ``obs_mode="goal"``.
    """

    env: int
    observations: np.ndarray | dict[str, np.ndarray]
    actions: np.ndarray
    rewards: np.ndarray
    terminations: np.ndarray
    truncations: np.ndarray
    infos: dict[str, np.ndarray]

    @property
    def success(self) -> bool:
        """Whether the episode's last step succeeded."""
        return bool(self.infos["is_success"][-1])

    def __len__(self) -> int:
        return len(self.rewards)


def _info_keys(info: Mapping[str, Any]) -> list[str]:
    return [k for k in info if not k.startswith("_") and k not in ("final_obs", "final_info")]


def rollout(venv: Any, policy: BatchPolicy, episodes: int, seed: int | None = 0
            ) -> Iterator[Episode]:
    """Run ``policy`` on the batch ``venv`` (made with ``autoreset_mode=DISABLED``) and yield
    ``episodes`` finished episodes, in the order they finish.

    Env i runs its quota of episodes (see the module docs) back to back from the stream seeded
    ``seed + i``, so the result is fixed by the seed, the batch size and the policy.
    """
    if venv.autoreset_mode != AutoresetMode.DISABLED:
        raise ValueError("rollout needs a batch made with autoreset_mode=AutoresetMode.DISABLED")
    if isinstance(episodes, bool) or not isinstance(episodes, (int, np.integer)) or episodes < 1:
        raise ValueError(f"episodes must be an int >= 1, got {episodes!r}")
    E = venv.num_envs
    T = venv.max_episode_steps
    quota = np.full(E, episodes // E, np.int64)
    quota[: episodes % E] += 1
    obs, info = venv.reset(seed=seed)
    keys = _info_keys(info)
    dict_obs = isinstance(obs, dict)
    obs_keys = list(obs) if dict_obs else [None]

    def parts(o: Any) -> dict[Any, np.ndarray]:
        return o if dict_obs else {None: o}

    o_buf = {k: np.zeros((E, T + 1, *v.shape[1:]), v.dtype) for k, v in parts(obs).items()}
    i_buf = {k: np.zeros((E, T + 1), np.asarray(info[k]).dtype) for k in keys}
    a_buf = np.zeros((E, T, *venv.single_action_space.shape), np.float32)
    r_buf = np.zeros((E, T))
    te_buf = np.zeros((E, T), bool)
    tr_buf = np.zeros((E, T), bool)
    rows = np.arange(E)
    t = np.zeros(E, np.int64)

    def put_first(mask: np.ndarray, o: Any, inf: Mapping[str, Any]) -> None:
        for k in obs_keys:
            o_buf[k][mask, 0] = parts(o)[k][mask]
        for k in keys:
            i_buf[k][mask, 0] = inf[k][mask]

    put_first(np.ones(E, bool), obs, info)
    lo, hi = venv.single_action_space.low, venv.single_action_space.high
    while (quota > 0).any():
        act = np.clip(np.asarray(policy(obs), dtype=np.float32), lo, hi)
        a_buf[rows, t] = act
        obs, rew, term, trunc, info = venv.step(act)
        r_buf[rows, t] = rew
        te_buf[rows, t] = term
        tr_buf[rows, t] = trunc
        t += 1
        for k in obs_keys:
            o_buf[k][rows, t] = parts(obs)[k]
        for k in keys:
            i_buf[k][rows, t] = info[k]
        done = term | trunc
        if not done.any():
            continue
        for i in np.flatnonzero(done & (quota > 0)):
            n = int(t[i])
            o = {k: o_buf[k][i, :n + 1].copy() for k in obs_keys}
            yield Episode(env=int(i), observations=o if dict_obs else o[None],
                          actions=a_buf[i, :n].copy(), rewards=r_buf[i, :n].copy(),
                          terminations=te_buf[i, :n].copy(), truncations=tr_buf[i, :n].copy(),
                          infos={k: i_buf[k][i, :n + 1].copy() for k in keys})
            quota[i] -= 1
        obs, reset_info = venv.reset(options={"reset_mask": done})
        put_first(done, obs, reset_info)
        t[done] = 0


__all__ = ["Episode", "rollout"]
