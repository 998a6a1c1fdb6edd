"""Per-env random streams that compiled kernels can draw from (SplitMix64).

Every env of a batch owns one 64-bit state, so env i of a batch seeded ``s`` draws exactly
the numbers of a single env seeded ``s + i``, whichever kernel (serial or ``prange``) runs it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .jit import compiled

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0  # 2^-53


def seed_states(seed: int, n: int) -> np.ndarray:
    """States of ``n`` streams seeded ``seed, seed + 1, ...`` (mixed so nearby seeds differ)."""
    return seed_states_of([int(seed) + i for i in range(n)])


def seed_states_of(seeds: Sequence[int]) -> np.ndarray:
    """States of one stream per seed: stream i is seeded ``seeds[i]`` (taken modulo 2**64),
    exactly as stream 0 of ``seed_states(seeds[i], 1)``."""
    out = np.empty(len(seeds), np.uint64)
    with np.errstate(over="ignore"):
        for i, seed in enumerate(seeds):
            z = np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF) + _GOLDEN
            z = (z ^ (z >> _S30)) * _M1
            z = (z ^ (z >> _S27)) * _M2
            out[i] = z ^ (z >> _S31)
    return out


@compiled
def next_u64(rng, e):
    """Next 64-bit output of stream ``e`` (advances ``rng[e]``)."""
    rng[e] += _GOLDEN
    z = rng[e]
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@compiled
def uniform(rng, e, lo, hi):
    """A float uniform in [lo, hi) from stream ``e``."""
    return lo + (hi - lo) * (float(next_u64(rng, e) >> _S11) * _INV53)


@compiled
def normal(rng, e, mean, std):
    """A normal draw N(mean, std^2) from stream ``e`` (Box-Muller; two uniforms per draw)."""
    u1 = 1.0 - float(next_u64(rng, e) >> _S11) * _INV53  # in (0, 1]: log is finite
    u2 = float(next_u64(rng, e) >> _S11) * _INV53
    return mean + std * math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
