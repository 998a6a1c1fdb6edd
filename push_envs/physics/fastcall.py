"""Calling a compiled kernel without numba's per-call type dispatch.

A numba dispatcher types every argument on every call. For a kernel that takes named
structures of arrays (``WorldArrays`` and friends) that is a Python-level walk over some sixty
arrays per call, several times the cost of stepping one small env. The arrays of a batch
never change type, so the entry point of the one compiled overload is looked up once and
called directly; callers must pass arguments of exactly the types it was looked up with
(C-contiguous float64 actions, the same structures).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def entry_point(kernel: Any, *args: Any) -> Callable[..., Any]:
    """The compiled entry point of ``kernel`` for the types of ``args`` (compiled, or loaded
    from numba's cache, now if needed)."""
    sig = tuple(kernel.typeof_pyval(a) for a in args)
    if sig not in kernel.overloads:
        kernel.compile(sig)
    return kernel.overloads[sig].entry_point
