"""train.fast_tanh: the policy's tanh, against the exact function and torch's."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from train.fast_tanh import tanh  # noqa: E402
from train.fast_tanh import tanh_numpy  # noqa: E402
from train.fast_tanh import use_fast_tanh  # noqa: E402


def ulps(got: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|got - tanh(x)| in units of the float32 spacing at the exact value."""
    exact = np.tanh(x.astype(np.float64))
    return np.abs(got - exact) / np.spacing(np.abs(exact).astype(np.float32))


def test_within_4_ulp_of_the_exact_tanh_on_a_dense_grid():
    # every regime: the series (|x| < 1/4) and its seam, the exp branch, the clamp at 9
    x = np.linspace(-12.0, 12.0, 480_001, dtype=np.float32)
    x = np.concatenate([x, np.float32([0.25, -0.25, np.nextafter(np.float32(0.25), 0),
                                       1e-3, -1e-6, 1e-30, 8.99, 9.0, 9.01])])
    assert ulps(tanh_numpy(x), x).max() <= 4.0
    rng = np.random.default_rng(0)
    y = rng.standard_normal(100_000).astype(np.float32) * np.float32(3.0)
    assert ulps(tanh_numpy(y), y).max() <= 4.0


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
    # d tanh / dx = 1 - tanh^2, from the kernel's own output (as nn.Tanh from torch's)
    expected = g * (1 - y.detach() ** 2)
    torch.testing.assert_close(x.grad, expected, rtol=0, atol=1e-6)
    np.testing.assert_array_less(np.abs(y.detach().numpy() - np.tanh(x.detach().numpy())),
                                 3e-7)
    # a non-contiguous input (a transpose) gives the same values
    torch.testing.assert_close(tanh(x.detach().T), y.detach().T, rtol=0, atol=0)


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
