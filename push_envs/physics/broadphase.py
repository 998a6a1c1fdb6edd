"""Broad phase: candidate pairs within one step's travel.

Each movable body is bounded by a circle about its centre of mass; its box covers both the
pose at the start of the sub-step and the predicted pose after free motion, fattened by the
largest travel in the env (a correction can move a body at most about that far) plus the rest
tolerance. So pairs that a correction could bring into contact are found, not only the pairs
that overlap now.

* Movable against movable: sort-and-sweep on the box's lower x (all pairs for a handful of
  bodies, where sorting costs more than it saves).
* Movable against static pieces: static pieces never move, so they are binned once, at scene
  compile time, into a uniform grid; each body visits only the cells its box covers. A piece
  spanning several cells is reported once per body by stamping it with a query counter.

Bodies asleep (sleeping.py) are in no stage of the step: they keep a tight box, fattened only
by the rest tolerance, and the awake boxes look them up (sleeping.wake) to wake those they
reach, so a resting crowd costs nothing here.

``stamp[e]`` is the broad phase's integer scratch (layout.stamp_len): one tag per static
piece, the query counter, then the sweep order of the bodies it sorts (kept between steps),
and the sleep lists.

A body IR-SIM calls ``unobstructed`` (``BODY_UNOBS`` in ``bint[b, BI_FLAGS]``) is in no pair
(``collides``); an immovable one has no static pieces at all (scene.py).
"""

from __future__ import annotations

import math

from .jit import compiled
from .layout import BF_BRAD
from .layout import BI_FLAGS
from .layout import BI_PCOUNT
from .layout import BI_PSTART
from .layout import BODY_UNOBS
from .layout import BS_T0
from .layout import BS_TP
from .layout import BS_X0
from .layout import BS_XP
from .layout import BS_Y0
from .layout import BS_YP
from .layout import EP_SCALE
from .layout import PF_MAXX
from .layout import PF_MAXY
from .layout import PF_MINX
from .layout import PF_MINY
from .layout import PF_RAD
from .layout import PI_BODY
from .layout import PI_NV
from .layout import PRS_A
from .layout import PRS_B
from .layout import PRS_MODE
from .layout import PRS_SP

_SWEEP_MIN = 24  # below this many movable bodies, test all pairs directly


@compiled
def swept_box(e, b, bflt, epar, bsc, fat, aabb):
    """Box [m] of body b over its sub-step (start and predicted pose), grown by ``fat`` [m],
    into ``aabb[e, b]``; returns the body's travel [m] (displacement plus spin times reach)."""
    r = bflt[b, BF_BRAD] * epar[e, b, EP_SCALE]
    x0, y0 = bsc[e, b, BS_X0], bsc[e, b, BS_Y0]
    x1, y1 = bsc[e, b, BS_XP], bsc[e, b, BS_YP]
    aabb[e, b, 0] = min(x0, x1) - r - fat
    aabb[e, b, 1] = min(y0, y1) - r - fat
    aabb[e, b, 2] = max(x0, x1) + r + fat
    aabb[e, b, 3] = max(y0, y1) + r + fat
    spin = abs(bsc[e, b, BS_TP] - bsc[e, b, BS_T0]) * r
    return math.sqrt((x1 - x0) ** 2 + (y1 - y0) ** 2) + spin


@compiled
def shape_box(e, b, bint, pint, pvert, pflt, epar, pos, ang, fat, aabb):
    """Tight box [m] of body b's pieces at its current pose, grown by ``fat`` [m]."""
    c, s = math.cos(ang[e, b]), math.sin(ang[e, b])
    sc = epar[e, b, EP_SCALE]
    cx, cy = pos[e, b, 0], pos[e, b, 1]
    x0 = y0 = math.inf
    x1 = y1 = -math.inf
    for p in range(bint[b, BI_PSTART], bint[b, BI_PSTART] + bint[b, BI_PCOUNT]):
        r = pflt[p, PF_RAD] * sc
        for i in range(pint[p, PI_NV]):
            lx = pvert[p, i, 0] * sc
            ly = pvert[p, i, 1] * sc
            x = cx + c * lx - s * ly
            y = cy + s * lx + c * ly
            x0 = min(x0, x - r)
            y0 = min(y0, y - r)
            x1 = max(x1, x + r)
            y1 = max(y1, y + r)
    aabb[e, b, 0] = x0 - fat
    aabb[e, b, 1] = y0 - fat
    aabb[e, b, 2] = x1 + fat
    aabb[e, b, 3] = y1 + fat


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def body_boxes(e, aw, bflt, epar, bsc, extra, aabb):
    """Swept, fattened AABB [m] of each awake body ``aw`` into ``aabb[e, b]``; returns the
    largest travel.

    A box covers the body's bounding circle at its sub-step start and at its predicted pose
    (so any turn fits), fattened by the env's largest travel plus ``extra`` (a correction
    can move a body about that far). Sleepers keep the tight box they fell asleep with
    (sleeping.py); an awake body's own fattening covers its approach to them.
    """
    maxtravel = 0.0
    for i in range(aw.shape[0]):
        tr = swept_box(e, aw[i], bflt, epar, bsc, 0.0, aabb)
        if tr > maxtravel:
            maxtravel = tr
    fat = maxtravel + extra
    for i in range(aw.shape[0]):
        b = aw[i]
        aabb[e, b, 0] -= fat
        aabb[e, b, 1] -= fat
        aabb[e, b, 2] += fat
        aabb[e, b, 3] += fat
    return maxtravel


@compiled
def sweep_order(e, at, n, aabb, stamp):
    """Sort the bodies ``stamp[e, at:at + n]`` by lower box x (then index).

    The order is kept from the last call: bodies move little per step, so an insertion sort
    is about linear, and the key (lower x, index) is a total order, so the result does not
    depend on history. No array is allocated: the entry kernels run without numba's
    allocator.
    """
    for ii in range(1, n):
        cur = stamp[e, at + ii]
        key = aabb[e, cur, 0]
        jj = ii - 1
        while jj >= 0:
            prev = stamp[e, at + jj]
            kp = aabb[e, prev, 0]
            if kp < key or (kp == key and prev < cur):
                break
            stamp[e, at + jj + 1] = prev
            jj -= 1
        stamp[e, at + jj + 1] = cur


@compiled
def collides(bint, a, b):
    """Whether bodies a and b (b: the static body of a static piece) may touch: unless one is
    IR-SIM's ``unobstructed`` (``BODY_UNOBS``). The one place to filter pairs: a pair it
    refuses is never listed, so no stage meets it. Called after the boxes meet, so the flags
    are read for candidate pairs only."""
    return ((bint[a, BI_FLAGS] | bint[b, BI_FLAGS]) & BODY_UNOBS) == 0


# LLVM-inlined into find_pairs (jit.py, 'Inlining')
@compiled(inline="llvm")
def grid_cells(grid, x0, y0, x1, y1):
    """Cells (i0, j0, i1, j1), inclusive, of the static grid ``grid`` (x0, y0, cell, nx, ny)
    that the box [x0, x1] x [y0, y1] [m] covers, clipped to the grid."""
    x0g, y0g, cell = grid[0], grid[1], grid[2]
    nx, ny = int(grid[3]), int(grid[4])
    i0 = max(int(math.floor((x0 - x0g) / cell)), 0)
    j0 = max(int(math.floor((y0 - y0g) / cell)), 0)
    i1 = min(int(math.floor((x1 - x0g) / cell)), nx - 1)
    j1 = min(int(math.floor((y1 - y0g) / cell)), ny - 1)
    return i0, j0, i1, j1


@compiled
def _push_pair(e, prs, n, cap, a, b, sp):
    if n < cap:
        prs[e, n, PRS_A] = a
        prs[e, n, PRS_B] = b
        prs[e, n, PRS_SP] = sp
        prs[e, n, PRS_MODE] = 0
    return n + 1


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def find_pairs(e, aw, order, cap, bint, aabb, sint, sflt, grid, gstart, gitem, stamp, prs):
    """Fill ``prs[e]`` with the candidate pairs of the awake bodies ``aw`` (every movable
    body, with sleeping off): each two whose boxes meet, and each with every static piece its
    box meets. Returns the pairs found (which may exceed ``cap``, the room in the buffers:
    the caller rolls back).

    ``order`` is where ``aw``'s bodies stand in ``stamp[e]`` in the sweep order (kept from
    sub-step to sub-step). Sleepers are in no pair: every sleeper an awake box meets was
    woken before (sleeping.wake), and the others touch nothing awake.
    """
    n = 0
    na = aw.shape[0]
    if na < _SWEEP_MIN:
        for i in range(na):
            a = aw[i]
            for j in range(i + 1, na):
                b = aw[j]
                if (
                    aabb[e, a, 0] <= aabb[e, b, 2]
                    and aabb[e, b, 0] <= aabb[e, a, 2]
                    and aabb[e, a, 1] <= aabb[e, b, 3]
                    and aabb[e, b, 1] <= aabb[e, a, 3]
                    and collides(bint, a, b)
                ):
                    n = _push_pair(e, prs, n, cap, min(a, b), max(a, b), -1)
    else:
        # Sort-and-sweep (``sweep_order``).
        sweep_order(e, order, na, aabb, stamp)
        for ii in range(na):
            a = stamp[e, order + ii]
            for jj in range(ii + 1, na):
                b = stamp[e, order + jj]
                if aabb[e, b, 0] > aabb[e, a, 2]:
                    break
                if aabb[e, a, 1] <= aabb[e, b, 3] and aabb[e, b, 1] <= aabb[e, a, 3] \
                        and collides(bint, a, b):
                    if a < b:
                        n = _push_pair(e, prs, n, cap, a, b, -1)
                    else:
                        n = _push_pair(e, prs, n, cap, b, a, -1)
    ns = sint.shape[0]
    if ns == 0:
        return n
    ny = int(grid[4])
    for i in range(na):
        a = aw[i]
        stamp[e, ns] += 1
        tag = stamp[e, ns]
        i0, j0, i1, j1 = grid_cells(grid, aabb[e, a, 0], aabb[e, a, 1], aabb[e, a, 2],
                                    aabb[e, a, 3])
        for ci in range(i0, i1 + 1):
            for cj in range(j0, j1 + 1):
                c = ci * ny + cj
                for q in range(gstart[c], gstart[c + 1]):
                    sp = gitem[q]
                    if stamp[e, sp] == tag:
                        continue
                    stamp[e, sp] = tag
                    if (
                        sflt[sp, PF_MAXX] >= aabb[e, a, 0]
                        and sflt[sp, PF_MINX] <= aabb[e, a, 2]
                        and sflt[sp, PF_MAXY] >= aabb[e, a, 1]
                        and sflt[sp, PF_MINY] <= aabb[e, a, 3]
                        and collides(bint, a, sint[sp, PI_BODY])
                    ):
                        n = _push_pair(e, prs, n, cap, a, sint[sp, PI_BODY], sp)
    return n
