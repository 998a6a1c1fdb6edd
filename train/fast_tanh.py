"""tanh for the policy's hidden layers at a sixth of torch's CPU cost, to float32 precision.

Why: a PPO iteration on PushBox-v0's recipe (64 x 64 Tanh actor and critic, 1024 envs)
spent about a quarter of its CPU time in torch's ``tanh`` (docs/training.md, Speed): on
one core torch takes ~3.5 ns per float32 (a 1-ULP Sleef routine), four times its
``sigmoid``, more than the 64 x 64 matrix product that feeds it. The kernel here computes
the same function to within 6 ULP of the exact tanh (torch's own is within 1) in one
vectorised pass at ~0.5 ns per float; the backward pass is torch's own (``tanh_backward``:
grad * (1 - y^2), from the saved output, as ``nn.Tanh``'s).

The function, for a = |x| (tanh is odd: the sign is put back at the end):

* a <= 8.7: tanh(a) = a P(a^2) / Q(a^2), P of degree 6 and Q of degree 3 (13 / 6 in a).
  The coefficients are a fit of tanh(a) / a on [0, 8.7] that minimises the largest relative
  error (least squares linearised by the previous iterate's denominator, reweighted by
  Lawson's rule until the error equioscillates): 4.6e-9 in exact arithmetic, far below a
  float32 ULP. What is left is float32's rounding of the coefficients and of the Horner
  steps (fused multiply-adds, ``fastmath={"contract"}``): at most 4.9 ULP on a dense grid.
* a > 8.7: 1. The exact tanh is within 5.5e-8 of 1 there, less than one float32 spacing
  below 1, so this is within 1 ULP; it also keeps P and Q from overflowing.

No exp, no branch: the loop is multiply-adds, one division and two selects, which LLVM
vectorises (``error_model="numpy"`` drops the division's zero check, which would keep it
from vectorising; Q > 1 on the whole range anyway). NaN in gives NaN out, +-inf gives +-1,
-0 gives -0, as torch.

The previous kernel here (exp(-2a) as 2^f 2^k in two passes, within 4 ULP) cost ~1.1 ns a
float: a sixth of the update's time on the shipped recipe went to it.

:func:`use_fast_tanh` puts it into a policy's ``nn.Tanh`` modules (their ``forward``,
per instance: the modules stay ``nn.Tanh``, so a saved model, the export and everything
that reads the architecture see the same network).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from numba import njit
from torch import nn

_F = np.float32
CUT = 8.7
"""Above this |x| the kernel returns +-1 (within 1 ULP of the exact tanh)."""

# tanh(a) / a = P(a^2) / Q(a^2) on [0, CUT], lowest degree first (the fit above).
P = (1.0, 0.13096608221530914, 0.0031180819496512413, 1.1304021427349653e-05,
     -2.084788341960575e-08, 5.588272899981206e-11, -9.31866549528336e-14)
Q = (1.0, 0.46429938077926636, 0.024551276117563248, 0.00025668219313956797)
_P0, _P1, _P2, _P3, _P4, _P5, _P6 = (_F(c) for c in P)
_Q0, _Q1, _Q2, _Q3 = (_F(c) for c in Q)
_CUT = _F(CUT)


@njit(cache=True, error_model="numpy", boundscheck=False, fastmath={"contract"})
def _tanh_pass(x: np.ndarray, y: np.ndarray) -> None:  # pragma: no cover
    """tanh of every float of ``x`` into ``y`` (both 1-D float32)."""
    for i in range(x.size):
        xi = x[i]
        a = abs(xi)
        s = a * a
        num = a * (_P0 + s * (_P1 + s * (_P2 + s * (_P3 + s * (_P4 + s * (_P5 + s * _P6))))))
        den = _Q0 + s * (_Q1 + s * (_Q2 + s * _Q3))
        r = num / den
        r = _F(1.0) if a > _CUT else r          # NaN > CUT is false: NaN stays NaN
        y[i] = math.copysign(r, xi)


def tanh_numpy(x: np.ndarray) -> np.ndarray:
    """tanh of a float32 array (any shape), as a new C-contiguous float32 array."""
    x = np.ascontiguousarray(x, np.float32).reshape(-1)
    y = np.empty_like(x)
    _tanh_pass(x, y)
    return y


class _Tanh(torch.autograd.Function):
    """tanh by :func:`tanh_numpy`, backward by torch's ``tanh_backward`` from the output."""

    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        y = torch.from_numpy(tanh_numpy(x.detach().numpy())).view(x.shape)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor
                 ) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y)


def tanh(x: torch.Tensor) -> torch.Tensor:
    """tanh of a tensor; float32 CPU tensors by the kernel (differentiable), others by
    torch."""
    if x.dtype != torch.float32 or x.device.type != "cpu":
        return torch.tanh(x)
    if not (x.requires_grad and torch.is_grad_enabled()):
        # nothing to differentiate (the rollout's forwards): no autograd node, ~30 us less
        return torch.from_numpy(tanh_numpy(x.numpy())).view(x.shape)
    return _Tanh.apply(x)


class _Forward:
    """An ``nn.Tanh``'s ``forward`` by :func:`tanh`: an object, not a bound method, so the
    module still pickles and deep-copies."""

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return tanh(x)


def use_fast_tanh(module: nn.Module) -> int:
    """Make every ``nn.Tanh`` inside ``module`` compute by :func:`tanh` (its ``forward``,
    per instance); returns how many. The modules keep their class: saving, loading and
    exporting see plain ``nn.Tanh`` layers."""
    n = 0
    for m in module.modules():
        if type(m) is nn.Tanh:
            m.forward = _Forward()
            n += 1
    return n
