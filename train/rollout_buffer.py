"""SB3's rollout buffer with minibatches gathered by torch from views of the flat arrays.

:class:`LeanRolloutBuffer` is SB3's ``RolloutBuffer`` (same arrays, same GAE, the same one
``np.random.permutation`` per ``get``, the same minibatches bit for bit) with one change of
cost. SB3's ``_get_samples`` gathers each of six arrays with numpy's fancy indexing and then
copies the result again into a tensor (``th.tensor``): two passes over every minibatch, and
for the observations (2048 x 53 floats in PushBox-v0's recipe) the second pass is as dear as
the first. Here the flat arrays get one torch view each when the first minibatch of a
``get`` is drawn (``th.from_numpy`` shares their memory), and a minibatch is one
``index_select`` per array: one pass, into a new tensor, as SB3's copy is.

On CPU with a Box (not Dict) observation, which is what ``python -m train.train`` builds;
other devices fall back to SB3's gather.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from stable_baselines3.common.buffers import RolloutBuffer
from stable_baselines3.common.type_aliases import RolloutBufferSamples

_FLAT = ("observations", "actions", "values", "log_probs", "advantages", "returns")
"""The arrays a minibatch holds, in RolloutBufferSamples' order."""


class LeanRolloutBuffer(RolloutBuffer):
    """SB3's ``RolloutBuffer`` whose minibatches are gathered once, by torch (module docs)."""

    def reset(self) -> None:
        super().reset()
        self._views: tuple[th.Tensor, ...] | None = None

    def _flat_views(self) -> tuple[th.Tensor, ...]:
        """Torch views of the flat arrays SB3's ``get`` made (shared memory, no copy): the
        observations and actions as (N, ...), the four per-step columns as (N,)."""
        if self._views is None:
            views = []
            for name in _FLAT:
                a = self.__dict__[name]
                if name == "actions":
                    a = a.astype(np.float32, copy=False)  # as SB3's _get_samples casts
                elif name != "observations":
                    a = a.reshape(-1)
                views.append(th.from_numpy(np.ascontiguousarray(a)))
            self._views = tuple(views)
        return self._views

    def _get_samples(self, batch_inds: np.ndarray, env: Any = None) -> RolloutBufferSamples:
        if self.device.type != "cpu" or not self.generator_ready:
            return super()._get_samples(batch_inds, env)
        index = th.from_numpy(np.asarray(batch_inds, dtype=np.int64))
        return RolloutBufferSamples(*(v.index_select(0, index) for v in self._flat_views()))
