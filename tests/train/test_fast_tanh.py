"""train.fast_tanh: the policy's tanh, against the exact function and torch's."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from train.fast_tanh import CUT  # noqa: E402
from train.fast_tanh import P  # noqa: E402
from train.fast_tanh import Q  # noqa: E402
from train.fast_tanh import tanh  # noqa: E402
from train.fast_tanh import tanh_numpy  # noqa: E402
from train.fast_tanh import use_fast_tanh  # noqa: E402


def ulps(got: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|got - tanh(x)| in units of the float32 spacing at the exact value."""
    exact = np.tanh(x.astype(np.float64))
    return np.abs(got - exact) / np.spacing(np.abs(exact).astype(np.float32))


def test_the_rational_fits_tanh_far_below_a_float32_ulp():
    # the coefficients in exact (float64) arithmetic: a fit, not float32 noise
    a = np.linspace(1e-6, CUT, 200_001)
    fit = a * np.polyval(P[::-1], a * a) / np.polyval(Q[::-1], a * a)
    assert np.abs(fit / np.tanh(a) - 1).max() < 1e-8
    # and past the cut, 1 is within one float32 spacing below 1 of the exact value
    assert 1 - np.tanh(CUT) < np.spacing(np.float32(0.75))


def test_within_6_ulp_of_the_exact_tanh_on_a_dense_grid():
    # every regime: near 0, the rational's whole range, its cut at 8.7, the constant past it
    x = np.linspace(-12.0, 12.0, 480_001, dtype=np.float32)
    cut = np.float32(CUT)
    x = np.concatenate([x, np.float32([1e-3, -1e-6, 1e-30, 8.69, 8.71, 9.0, 9.01]),
                        [cut, np.nextafter(cut, 0), np.nextafter(cut, 9), -cut]])
    assert ulps(tanh_numpy(x), x).max() <= 6.0
    rng = np.random.default_rng(0)
    y = rng.standard_normal(100_000).astype(np.float32) * np.float32(3.0)
    assert ulps(tanh_numpy(y), y).max() <= 6.0


def test_special_values_as_torch():
    x = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 40.0, -40.0])
    got = tanh_numpy(x)
    ref = torch.tanh(torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(got, ref)  # nan == nan for assert_array_equal
    np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))  # -0.0 stays -0.0


def test_tensor_shape_and_gradient():
    rng = np.random.default_rng(1)
    x = torch.from_numpy(rng.standard_normal((37, 64)).astype(np.float32) * 2)
    x.requires_grad_(True)
    g = torch.from_numpy(rng.standard_normal((37, 64)).astype(np.float32))
    y = tanh(x)
    assert y.shape == x.shape and y.dtype == torch.float32
    (y * g).sum().backward()
    # d tanh / dx = 1 - tanh^2 from the kernel's own output, bit for bit torch's
    # tanh_backward (as nn.Tanh computes it from torch's output)
    expected = torch.ops.aten.tanh_backward(g, y.detach())
    assert torch.equal(x.grad, expected)
    np.testing.assert_array_less(np.abs(y.detach().numpy() - np.tanh(x.detach().numpy())),
                                 4e-7)
    # a non-contiguous input (a transpose) gives the same values, and so does the path
    # without autograd (no gradient wanted)
    torch.testing.assert_close(tanh(x.detach().T), y.detach().T, rtol=0, atol=0)
    with torch.no_grad():
        plain = tanh(x)
    assert plain.grad_fn is None and torch.equal(plain, y.detach())


def test_other_dtypes_fall_back_to_torch():
    x = torch.linspace(-3, 3, 101, dtype=torch.float64)
    assert torch.equal(tanh(x), torch.tanh(x))


def test_use_fast_tanh_keeps_the_modules_and_their_outputs():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(5, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                        nn.Linear(64, 2), nn.ReLU())
    x = torch.randn(300, 5)
    before = net(x).detach()
    assert use_fast_tanh(net) == 2
    assert [type(m) for m in net] == [nn.Linear, nn.Tanh, nn.Linear, nn.Tanh, nn.Linear,
                                      nn.ReLU]
    after = net(x).detach()
    torch.testing.assert_close(after, before, rtol=0, atol=2e-6)
    assert "forward" in vars(net[1]) and "forward" not in vars(net[5])
    # the net still deep-copies and pickles, the copies computing as the original
    for twin in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert torch.equal(twin(x), after)
        assert "forward" in vars(twin[3])
