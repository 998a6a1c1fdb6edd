"""Contact preparation and ordering: the first stage of a sub-step's contact solve.

For one env, at the predicted poses (after free motion), this stage

* computes the deepest contact of every candidate pair (``pair_contact``: bounding-circle
  pre-check, then SAT per piece pair, see narrowphase.py);
* decides each drive -> passive pair's mode (push or stall) by the traction rule;
* gives every body its contact-graph level (graph distance from immovable bodies, then from
  drives) and
* sorts the pairs into the sweep order (level, then deepest first, then contact point), so the
  order never depends on how the bodies were listed.

The union-find helpers (``uf_find``) group touching passive bodies into chains; sensors.py reads
the same groups to cap reported forces.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .layout import (
    BF_REST,
    BI_KIND,
    BI_PCOUNT,
    BI_PSTART,
    BS_DRIVE,
    BS_LOAD,
    DRIVEN,
    EP_FRICTION,
    EP_MASS,
    EP_SCALE,
    IMMOVABLE,
    IS_LEVEL,
    IS_UF,
    MODE_PUSH,
    MODE_STALL,
    OUT_LEN,
    PASSIVE,
    PF_BCX,
    PF_BCY,
    PF_BRAD,
    PF_DEPTH,
    PF_DMAX,
    PF_E,
    PF_KEY,
    PF_MAXX,
    PF_MAXY,
    PF_MINX,
    PF_MINY,
    PF_MU,
    PF_NX,
    PF_NY,
    PF_P1X,
    PF_P1Y,
    PF_RAD,
    PF_TOUCH,
    PI_KIND,
    PI_NV,
    PR_A,
    PR_B,
    PR_MODE,
    PR_SP,
)
from .narrowphase import collide

LEVEL_INF = 1 << 40  # level of a body no immovable body or drive backs
LEVEL_DRIVE = 1 << 30  # start level of a drive (below LEVEL_INF)


# --------------------------------------------------------------------------------------------
# Narrow phase of one candidate pair
# --------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _place(e, p, cx, cy, c, s, sc, pint, pvert, vb):
    """World vertices of movable piece p of a body at COM (cx, cy), rotation (c, s), scale sc."""
    nv = pint[p, PI_NV]
    for i in range(nv):
        lx = pvert[p, i, 0] * sc
        ly = pvert[p, i, 1] * sc
        vb[i, 0] = cx + c * lx - s * ly
        vb[i, 1] = cy + s * lx + c * ly
    return nv


@njit(cache=True, inline="always")
def pair_contact(e, k, prs, pos, ang, epar, bint, pint, pvert, pflt, sint, svert, sflt, tol,
                 vbuf, cbuf, pfl):
    """Deepest contact between the pieces of pair k's bodies into ``pfl[e, k, :OUT_LEN]``.

    Returns True when some piece pair touches (gap <= tol).
    """
    a = prs[e, k, PR_A]
    b = prs[e, k, PR_B]
    sp = prs[e, k, PR_SP]
    va = vbuf[e, 0]
    vb = vbuf[e, 1]
    out = cbuf[e]
    best = -np.inf
    ax, ay, th = pos[e, a, 0], pos[e, a, 1], ang[e, a]
    ca, sa, sca = math.cos(th), math.sin(th), epar[e, a, EP_SCALE]
    if sp < 0:
        bx, by, th = pos[e, b, 0], pos[e, b, 1], ang[e, b]
        cb, sb, scb = math.cos(th), math.sin(th), epar[e, b, EP_SCALE]
        q0, q1 = bint[b, BI_PSTART], bint[b, BI_PSTART] + bint[b, BI_PCOUNT]
    else:
        q0, q1 = sp, sp + 1
    for p in range(bint[a, BI_PSTART], bint[a, BI_PSTART] + bint[a, BI_PCOUNT]):
        pcx = ax + (ca * pflt[p, PF_BCX] - sa * pflt[p, PF_BCY]) * sca
        pcy = ay + (sa * pflt[p, PF_BCX] + ca * pflt[p, PF_BCY]) * sca
        prad = pflt[p, PF_BRAD] * sca
        placed = False
        for q in range(q0, q1):
            if sp < 0:
                qcx = bx + (cb * pflt[q, PF_BCX] - sb * pflt[q, PF_BCY]) * scb
                qcy = by + (sb * pflt[q, PF_BCX] + cb * pflt[q, PF_BCY]) * scb
                qrad = pflt[q, PF_BRAD] * scb
                dx, dy = pcx - qcx, pcy - qcy
                reach = prad + qrad + tol
                if dx * dx + dy * dy > reach * reach:
                    continue
            else:
                # Static pieces are long (walls): test the piece's circle against their box.
                dx = max(sflt[q, PF_MINX] - pcx, 0.0, pcx - sflt[q, PF_MAXX])
                dy = max(sflt[q, PF_MINY] - pcy, 0.0, pcy - sflt[q, PF_MAXY])
                reach = prad + tol
                if dx * dx + dy * dy > reach * reach:
                    continue
            if not placed:
                na = _place(e, p, ax, ay, ca, sa, sca, pint, pvert, va)
                placed = True
            if sp < 0:
                nb = _place(e, q, bx, by, cb, sb, scb, pint, pvert, vb)
                kb, rb, vv = pint[q, PI_KIND], pflt[q, PF_RAD] * scb, vb
            else:
                nb, kb, rb, vv = sint[q, PI_NV], sint[q, PI_KIND], sflt[q, PF_RAD], svert[q]
            if collide(pint[p, PI_KIND], va, na, pflt[p, PF_RAD] * sca, kb, vv, nb, rb, tol, out):
                if out[PF_DEPTH] > best:
                    best = out[PF_DEPTH]
                    for i in range(OUT_LEN):
                        pfl[e, k, i] = out[i]
    return best > -np.inf


# --------------------------------------------------------------------------------------------
# Preparation: traction decisions, levels and order
# --------------------------------------------------------------------------------------------
@njit(cache=True)
def uf_find(e, x, bis):
    while bis[e, x, IS_UF] != x:
        bis[e, x, IS_UF] = bis[e, bis[e, x, IS_UF], IS_UF]
        x = bis[e, x, IS_UF]
    return x


@njit(cache=True)
def prepare(e, npairs, prs, pos, ang, epar, bint, bflt, pint, pvert, pflt, sint, svert, sflt,
            tol, gravity, movable, bsc, bis, vbuf, cbuf, pfl):
    """Contacts at the predicted poses, pair modes, friction/restitution and body levels.

    Returns the number of touching pairs.
    """
    nm = movable.shape[0]
    touching = 0
    for i in range(nm):
        b = movable[i]
        bis[e, b, IS_UF] = b
        bsc[e, b, BS_LOAD] = 0.0
        bsc[e, b, BS_DRIVE] = 0.0
        bis[e, b, IS_LEVEL] = LEVEL_DRIVE if bint[b, BI_KIND] == DRIVEN else LEVEL_INF
    for k in range(npairs):
        a = prs[e, k, PR_A]
        b = prs[e, k, PR_B]
        sp = prs[e, k, PR_SP]
        ka = bint[a, BI_KIND]
        kb = IMMOVABLE if sp >= 0 else bint[b, BI_KIND]
        if ka == PASSIVE and kb == DRIVEN:
            # Keep the drive on side a: the mode rules below read it there.
            prs[e, k, PR_A] = b
            prs[e, k, PR_B] = a
            a, b, ka, kb = b, a, kb, ka
        for j in range(OUT_LEN, pfl.shape[2]):
            pfl[e, k, j] = 0.0
        pfl[e, k, PF_DMAX] = -np.inf
        mu = 0.0
        if ka == PASSIVE and kb == IMMOVABLE:
            mu = 0.5 * (epar[e, a, EP_FRICTION] + epar[e, b, EP_FRICTION])
        pfl[e, k, PF_MU] = mu
        rest = 0.0
        if ka == PASSIVE or kb == PASSIVE:
            rest = 0.5 * (bflt[a, BF_REST] + bflt[b, BF_REST])
        pfl[e, k, PF_E] = rest
        if pair_contact(e, k, prs, pos, ang, epar, bint, pint, pvert, pflt, sint, svert, sflt,
                        tol, vbuf, cbuf, pfl):
            touching += 1
            pfl[e, k, PF_TOUCH] = 1.0
            pfl[e, k, PF_KEY] = pfl[e, k, PF_DEPTH]
            if ka == PASSIVE and kb == PASSIVE:
                ra, rb = uf_find(e, a, bis), uf_find(e, b, bis)
                if ra != rb:
                    if ra < rb:
                        bis[e, rb, IS_UF] = ra
                    else:
                        bis[e, ra, IS_UF] = rb
        else:
            pfl[e, k, PF_TOUCH] = 0.0
            pfl[e, k, PF_KEY] = -np.inf
    # Ground friction of each passive chain [N].
    for i in range(nm):
        b = movable[i]
        if bint[b, BI_KIND] == PASSIVE:
            r = uf_find(e, b, bis)
            bsc[e, r, BS_LOAD] += epar[e, b, EP_FRICTION] * epar[e, b, EP_MASS] * gravity
    # Traction rule for drive -> passive pairs.
    for k in range(npairs):
        a = prs[e, k, PR_A]
        b = prs[e, k, PR_B]
        if prs[e, k, PR_SP] >= 0 or bint[a, BI_KIND] != DRIVEN or bint[b, BI_KIND] != PASSIVE:
            continue
        root = uf_find(e, b, bis)
        load = bsc[e, root, BS_LOAD]
        if pfl[e, k, PF_TOUCH] > 0.0:
            nx, ny = pfl[e, k, PF_NX], pfl[e, k, PF_NY]
            for j in range(npairs):
                if j == k or pfl[e, j, PF_TOUCH] <= 0.0 or prs[e, j, PR_SP] >= 0:
                    continue
                a2 = prs[e, j, PR_A]
                b2 = prs[e, j, PR_B]
                if a2 == a or bint[a2, BI_KIND] != DRIVEN or bint[b2, BI_KIND] != PASSIVE:
                    continue
                if uf_find(e, b2, bis) == root and nx * pfl[e, j, 0] + ny * pfl[e, j, 1] < 0.0:
                    load += epar[e, a2, EP_FRICTION] * epar[e, a2, EP_MASS] * gravity
        traction = epar[e, a, EP_FRICTION] * epar[e, a, EP_MASS] * gravity
        if pfl[e, k, PF_TOUCH] > 0.0:
            bsc[e, root, BS_DRIVE] += traction
        prs[e, k, PR_MODE] = MODE_PUSH if traction >= load * (1.0 - 1e-12) else MODE_STALL
    # Levels: graph distance from immovable bodies (then from drives), by relaxation.
    changed = True
    guard = 0
    while changed and guard <= nm + 1:
        changed = False
        guard += 1
        for k in range(npairs):
            a = prs[e, k, PR_A]
            la = bis[e, a, IS_LEVEL]
            if prs[e, k, PR_SP] >= 0:
                if la > 1:
                    bis[e, a, IS_LEVEL] = 1
                    changed = True
                continue
            b = prs[e, k, PR_B]
            lb = bis[e, b, IS_LEVEL]
            if la + 1 < lb:
                bis[e, b, IS_LEVEL] = la + 1
                changed = True
            elif lb + 1 < la:
                bis[e, a, IS_LEVEL] = lb + 1
                changed = True
    return touching

@njit(cache=True, inline="always")
def _pair_level(e, k, prs, bis):
    if prs[e, k, PR_SP] >= 0:
        return 0
    return min(bis[e, prs[e, k, PR_A], IS_LEVEL], bis[e, prs[e, k, PR_B], IS_LEVEL])


@njit(cache=True)
def _before(e, k1, k2, prs, bis, pfl):
    """Sweep order: lower level, then deeper, then by contact point x, y."""
    l1 = _pair_level(e, k1, prs, bis)
    l2 = _pair_level(e, k2, prs, bis)
    if l1 != l2:
        return l1 < l2
    d1, d2 = pfl[e, k1, PF_KEY], pfl[e, k2, PF_KEY]
    if d1 != d2:
        return d1 > d2
    x1, x2 = pfl[e, k1, PF_P1X], pfl[e, k2, PF_P1X]
    if x1 != x2:
        return x1 < x2
    y1, y2 = pfl[e, k1, PF_P1Y], pfl[e, k2, PF_P1Y]
    if y1 != y2:
        return y1 < y2
    return k1 < k2


@njit(cache=True)
def sort_pairs(e, npairs, prs, bis, pfl, pord):
    """Stable bottom-up merge sort of pair indices by ``_before``; returns the row of
    ``pord[e]`` holding the order (a row index, not a view: the entry kernels run without
    numba's reference counting, which returning a view would need)."""
    s, d = 0, 1
    for i in range(npairs):
        pord[e, s, i] = i
    width = 1
    while width < npairs:
        for lo in range(0, npairs, 2 * width):
            mid = min(lo + width, npairs)
            hi = min(lo + 2 * width, npairs)
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                if _before(e, pord[e, s, j], pord[e, s, i], prs, bis, pfl):
                    pord[e, d, o] = pord[e, s, j]
                    j += 1
                else:
                    pord[e, d, o] = pord[e, s, i]
                    i += 1
                o += 1
            while i < mid:
                pord[e, d, o] = pord[e, s, i]
                i += 1
                o += 1
            while j < hi:
                pord[e, d, o] = pord[e, s, j]
                j += 1
                o += 1
        s, d = d, s
        width *= 2
    return s
