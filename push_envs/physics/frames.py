"""Body origin <-> centre of mass: the one place that turns one into the other.

The engine moves centres of mass (``pos[e, b]``); scenes, observations and spawns speak of
body origins. A body's centre of mass sits at ``(BF_COMX, BF_COMY)`` [m] in its own frame,
times its size factor, so in the world frame::

    com = origin + R(theta) (lx s, ly s)
"""

from __future__ import annotations

import math

import numpy as np

from .jit import compiled
from .layout import BF_COMX
from .layout import BF_COMY
from .layout import EP_SCALE
from .layout import OUT_LEN


@compiled
def com_offset(e, b, c, s, bflt, epar):
    """World-frame offset [m] from body b's origin to its centre of mass in env e, for a
    heading whose cosine and sine are ``c`` and ``s``."""
    k = epar[e, b, EP_SCALE]
    lx, ly = bflt[b, BF_COMX] * k, bflt[b, BF_COMY] * k
    return c * lx - s * ly, s * lx + c * ly


@compiled
def origin_pose(e, b, pos, ang, bflt, epar):
    """Origin pose of body b in env e: (x [m], y [m], theta [rad], cos, sin of theta)."""
    th = ang[e, b]
    c, s = math.cos(th), math.sin(th)
    ox, oy = com_offset(e, b, c, s, bflt, epar)
    return pos[e, b, 0] - ox, pos[e, b, 1] - oy, th, c, s


# LLVM-inlined: read for each body of every pair the narrow phase meets, and by observations
@compiled(inline="llvm")
def heading(e, b, ang, cbuf):
    """(cos, sin) of body b's heading, kept in ``cbuf`` after the narrow phase's output row
    (angle, cos, sin per body, from column OUT_LEN): a body met by several pairs at one pose,
    then observed at it, pays for its cosine and sine once. The same numbers as computing
    them."""
    th = ang[e, b]
    at = OUT_LEN + 3 * b
    # The same angle, bit for bit (-0.0 is not 0.0: its sine is -0.0); a NaN, as World starts
    # the cache with, never matches.
    old = cbuf[e, at]
    if not (old == th and math.copysign(1.0, old) == math.copysign(1.0, th)):
        keep_heading(e, b, th, math.cos(th), math.sin(th), cbuf)
    return cbuf[e, at + 1], cbuf[e, at + 2]


# LLVM-inlined into heading and free motion
@compiled(inline="llvm")
def keep_heading(e, b, th, c, s, cbuf):
    """Put (cos c, sin s) of heading th [rad] into :func:`heading`'s cache for body b: the
    caller computed them exactly (c = cos(th), s = sin(th)), so a later look-up at th hits."""
    at = OUT_LEN + 3 * b
    cbuf[e, at] = th
    cbuf[e, at + 1] = c
    cbuf[e, at + 2] = s


@compiled
def origin_pose_seen(e, b, pos, ang, bflt, epar, cbuf):
    """:func:`origin_pose`, its cosine and sine through :func:`heading`'s cache (``cbuf``):
    the same numbers, without the trigonometry when the narrow phase last met the body at
    this heading."""
    th = ang[e, b]
    c, s = heading(e, b, ang, cbuf)
    ox, oy = com_offset(e, b, c, s, bflt, epar)
    return pos[e, b, 0] - ox, pos[e, b, 1] - oy, th, c, s


@compiled
def place_origin(e, b, x, y, th, pos, ang, bflt, epar):
    """Put body b's origin at (x, y) [m] with heading th [rad] (moves its centre of mass)."""
    ox, oy = com_offset(e, b, math.cos(th), math.sin(th), bflt, epar)
    pos[e, b, 0] = x + ox
    pos[e, b, 1] = y + oy
    ang[e, b] = th


def com_offsets(bflt: np.ndarray, b: int | np.ndarray, theta: np.ndarray,
                scale: np.ndarray) -> np.ndarray:
    """numpy form of :func:`com_offset`: (..., 2) [m] for body (or bodies) ``b`` at headings
    ``theta`` [rad] and size factors ``scale``, broadcast together."""
    lx, ly = bflt[b, BF_COMX] * scale, bflt[b, BF_COMY] * scale
    c, s = np.cos(theta), np.sin(theta)
    return np.stack([c * lx - s * ly, s * lx + c * ly], axis=-1)
