"""The C signatures of the behaviour stage's functions (``physics/abi.py``)."""

from __future__ import annotations

from numba import types

BODY_SIG = types.void(types.int64, types.int64, types.voidptr, types.voidptr)
"""``behaviour(e, b, W*, B*)``: body b's command in env e, written into ``W.cmd``."""

GROUP_SIG = BODY_SIG
"""``group(e, g, W*, B*)``: the commands of group g's members in env e."""

CONTROL_SIG = types.void(types.int64, types.int64, types.int64, types.voidptr, types.voidptr)
"""``control(which, lo, hi, W*, B*)``: the stage over envs lo..hi-1; ``which`` one of
``layout.CTL_*`` (the commands before the physics, the arrivals after it, a reset)."""
