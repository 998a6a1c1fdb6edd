"""Contact solver: position-based dynamics with anchored Gauss-Seidel sweeps.

One sub-step of contact resolution, for one env, runs these stages (IR-SIM's contact model,
with the corrections the project's issues ask for)::

    prepare   contact of every candidate pair at the predicted poses; traction decisions
              (a drive pushes a passive chain only while its mu m g is at least the chain's
              summed ground friction plus the traction of drives pushing the chain from the
              opposite side, otherwise it stalls); the contact-graph level of each body
              (distance from immovable bodies, then from drives); the sweep order:
              level, then deepest first, then by contact point, so the order never depends
              on how the bodies were listed.
    sweep     Gauss-Seidel passes. Each touching pair is separated along its normal, the
              correction shared by generalised inverse mass (1/m + (r x n)^2 / I, so an
              off-centre push turns a body). A two-point patch is solved as a 2x2 block so a
              box lying flat on a wall stays flat. A body pressed this sweep against an
              immovable or already-blocked body is "blocked": when a later pair moves it,
              its blocking contacts are re-solved at once with it alone moving (it keeps only
              the tangential part, within the friction cone of a static surface) and the
              partner takes the rest: simplified shock propagation, so a chain pushed into a
              wall settles in one sweep. Sweeps stop when one moves nothing, or at the cap.
    velocity  velocities are recovered from the displacement the contacts caused
              (v = v_free + (x - x_free) / dt), then each resolved contact that still
              approaches is given the separating speed -e * (approach speed before the
              sub-step), passive bodies only; static surfaces add Coulomb friction.
    forces    the normal force of a pair is its impulse over the sub-step (the XPBD
              estimate lambda / dt^2 of the position pass plus the velocity pass), capped at
              the traction of a drive in the pair.

Contacts between two bodies are frictionless; only a passive body against an immovable one
has friction, with the mean of the two coefficients.
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
    BS_TP,
    BS_VX0,
    BS_VXF,
    BS_VY0,
    BS_VYF,
    BS_W0,
    BS_WF,
    BS_X0,
    BS_XP,
    BS_Y0,
    BS_YP,
    DRIVEN,
    EP_FRICTION,
    EP_INERTIA,
    EP_MASS,
    EP_SCALE,
    IMMOVABLE,
    IS_BLK,
    IS_LEVEL,
    IS_MOVED,
    IS_NBLK,
    IS_UF,
    MAX_BLOCK,
    MODE_PUSH,
    MODE_SHARE,
    MODE_STALL,
    PASSIVE,
    PF_BCX,
    PF_BCY,
    PF_BRAD,
    PF_DMAX,
    PF_E,
    PF_KEY,
    PF_LPOS,
    PF_LTAN,
    PF_LVEL,
    PF_LVEL2,
    PF_LVT,
    PF_MAXX,
    PF_MAXY,
    PF_MINX,
    PF_MINY,
    PF_MU,
    PF_PJN,
    PF_PJT,
    PF_RAD,
    PF_TOUCH,
    PI_KIND,
    PI_NV,
    PR_A,
    PR_B,
    PR_MODE,
    PR_SP,
)
from .narrowphase import OUT_LEN, collide

_LEVEL_INF = 1 << 40
_TURN_RECHECK = 1e-4  # [rad] turns above this are re-checked for overshoot
_OVERSHOOT_REACH = 0.05  # [m] largest overshoot gap the re-check looks for
_LEVEL_DRIVE = 1 << 30


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
                if out[2] > best:
                    best = out[2]
                    for i in range(OUT_LEN):
                        pfl[e, k, i] = out[i]
    return best > -np.inf


# --------------------------------------------------------------------------------------------
# Weights and single-pair resolution
# --------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def pair_weights(e, k, prs, bint, epar, fa, fb, yield_drive):
    """Inverse mass [1/kg] and inverse inertia [1/(kg m^2)] of a and b for pair k.

    ``fa``/``fb`` freeze a side (immovable for the rest of this resolution); ``yield_drive``
    turns a pushing drive into a yielding one (it was stopped by a blocked load).
    """
    a = prs[e, k, PR_A]
    b = prs[e, k, PR_B]
    mode = prs[e, k, PR_MODE]
    wa = 1.0 / epar[e, a, EP_MASS]
    ia = 1.0 / epar[e, a, EP_INERTIA]
    if prs[e, k, PR_SP] >= 0 or bint[b, BI_KIND] == IMMOVABLE:
        wb = 0.0
        ib = 0.0
    else:
        wb = 1.0 / epar[e, b, EP_MASS]
        ib = 1.0 / epar[e, b, EP_INERTIA]
    if mode == MODE_PUSH and not yield_drive:
        wa = 0.0
        ia = 0.0
    elif mode == MODE_STALL:
        wb = 0.0
        ib = 0.0
    if fa:
        wa = 0.0
        ia = 0.0
    if fb:
        wb = 0.0
        ib = 0.0
    return wa, ia, wb, ib


@njit(cache=True, inline="always")
def _move(e, body, dx, dy, dth, pos, ang):
    pos[e, body, 0] += dx
    pos[e, body, 1] += dy
    ang[e, body] += dth


@njit(cache=True, inline="always")
def _friction(e, k, a, nx, ny, px, py, wa, pos, ang, bsc, pfl):
    """Coulomb friction of a (moving) against an immovable surface, in position space.

    The contact point's tangential travel since the sub-step began is cancelled while the
    accumulated tangential lambda stays within mu times the normal lambda (stick), and is
    otherwise reduced by that bound (slide).
    """
    mu = pfl[e, k, PF_MU]
    if mu <= 0.0 or wa <= 0.0:
        return
    tx, ty = -ny, nx
    u = (pos[e, a, 0] - bsc[e, a, BS_X0]) * tx + (pos[e, a, 1] - bsc[e, a, BS_Y0]) * ty
    # The friction impulse acts on the translation only: the wall's friction torque on a
    # single contact point is held by the ground's friction on the spin, so a stuck body
    # neither slides nor rolls along the wall.
    lim = mu * pfl[e, k, PF_LPOS]
    lt = pfl[e, k, PF_LTAN] - u / wa
    lt = -lim if lt < -lim else (lim if lt > lim else lt)
    dl = lt - pfl[e, k, PF_LTAN]
    pfl[e, k, PF_LTAN] = lt
    _move(e, a, tx * dl * wa, ty * dl * wa, 0.0, pos, ang)


@njit(cache=True)
def block2(k11, k12, k22, b1, b2):
    """Solve the 2x2 contact LCP: x >= 0, w = K x - b >= 0, x . w = 0 (by enumerating cases).

    K = [[k11, k12], [k12, k22]] is a two-point patch's effective inverse mass; b the wanted
    normal corrections (positions or speeds). Returns (x1, x2).
    """
    det = k11 * k22 - k12 * k12
    if det > 1e-12 * k11 * k22:
        x1 = (k22 * b1 - k12 * b2) / det
        x2 = (k11 * b2 - k12 * b1) / det
        if x1 >= 0.0 and x2 >= 0.0:
            return x1, x2
    x1 = b1 / k11
    if x1 >= 0.0 and k12 * x1 - b2 >= 0.0:
        return x1, 0.0
    x2 = b2 / k22
    if x2 >= 0.0 and k12 * x2 - b1 >= 0.0:
        return 0.0, x2
    return 0.0, 0.0


@njit(cache=True, inline="always")
def resolve(e, k, fa, fb, yield_drive, prs, pos, ang, epar, bint, pint, pvert, pflt, sint,
            svert, sflt, tol, slop, bsc, vbuf, cbuf, pfl):
    """Separate pair k once. Returns (touching, overlap removed [m]); overlap < 0 = none."""
    if not pair_contact(e, k, prs, pos, ang, epar, bint, pint, pvert, pflt, sint, svert, sflt,
                        tol, vbuf, cbuf, pfl):
        pfl[e, k, PF_TOUCH] = 0.0
        return False, -1.0
    pfl[e, k, PF_TOUCH] = 1.0
    d = pfl[e, k, 2]
    if d > pfl[e, k, PF_DMAX]:
        pfl[e, k, PF_DMAX] = d
    if d <= 0.0:
        return True, -1.0
    wa, ia, wb, ib = pair_weights(e, k, prs, bint, epar, fa, fb, yield_drive)
    if wa + ia + wb + ib <= 0.0:
        return True, -1.0
    a = prs[e, k, PR_A]
    b = prs[e, k, PR_B]
    nx, ny = pfl[e, k, 0], pfl[e, k, 1]
    npts = int(pfl[e, k, 3])
    p1x, p1y, c1 = pfl[e, k, 4], pfl[e, k, 5], pfl[e, k, 6] + slop
    p2x, p2y, c2 = pfl[e, k, 7], pfl[e, k, 8], pfl[e, k, 9] + slop
    ax, ay = pos[e, a, 0], pos[e, a, 1]
    bx, by = pos[e, b, 0], pos[e, b, 1]
    ra1 = (p1x - ax) * ny - (p1y - ay) * nx
    rb1 = (p1x - bx) * ny - (p1y - by) * nx
    k11 = wa + ia * ra1 * ra1 + wb + ib * rb1 * rb1
    l1 = 0.0
    l2 = 0.0
    ra2 = rb2 = 0.0
    if npts == 2:
        # Two-point patch: solve both points at once, so a flat face gets no false torque.
        ra2 = (p2x - ax) * ny - (p2y - ay) * nx
        rb2 = (p2x - bx) * ny - (p2y - by) * nx
        k22 = wa + ia * ra2 * ra2 + wb + ib * rb2 * rb2
        k12 = wa + ia * ra1 * ra2 + wb + ib * rb1 * rb2
        l1, l2 = block2(k11, k12, k22, c1, c2)
    else:
        l1 = max(c1, 0.0) / k11
    lam = l1 + l2
    pfl[e, k, PF_LPOS] += lam
    dtha = ia * (ra1 * l1 + ra2 * l2)
    dthb = ib * (rb1 * l1 + rb2 * l2)
    _move(e, a, nx * lam * wa, ny * lam * wa, dtha, pos, ang)
    if wb > 0.0 or ib > 0.0:
        _move(e, b, -nx * lam * wb, -ny * lam * wb, -dthb, pos, ang)
    if abs(dtha) + abs(dthb) > _TURN_RECHECK and wa + wb > 0.0:
        # A large turn overshoots its linearisation (a corner moves along an arc, not its
        # tangent) and can leave a gap the unilateral contact never closes; close it by
        # translation so the pair ends at the slop, as intended.
        if pair_contact(e, k, prs, pos, ang, epar, bint, pint, pvert, pflt, sint, svert, sflt,
                        _OVERSHOOT_REACH, vbuf, cbuf, pfl):
            gap = -pfl[e, k, 2] - slop
            if gap > 0.0:
                g = gap / (wa + wb)
                _move(e, a, -pfl[e, k, 0] * g * wa, -pfl[e, k, 1] * g * wa, 0.0, pos, ang)
                if wb > 0.0:
                    _move(e, b, pfl[e, k, 0] * g * wb, pfl[e, k, 1] * g * wb, 0.0, pos, ang)
            pfl[e, k, 2] = -slop
    if npts == 2:
        px, py = 0.5 * (p1x + p2x), 0.5 * (p1y + p2y)
    else:
        px, py = p1x, p1y
    _friction(e, k, a, nx, ny, px, py, wa, pos, ang, bsc, pfl)
    return True, d


# --------------------------------------------------------------------------------------------
# Blocked bodies (simplified shock propagation)
# --------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _register_block(e, body, k, bis):
    n = bis[e, body, IS_NBLK]
    for i in range(n):
        if bis[e, body, IS_BLK + i] == k:
            return
    if n < MAX_BLOCK:
        bis[e, body, IS_BLK + n] = k
        bis[e, body, IS_NBLK] = n + 1


_PROJECT_ITERS = 8


@njit(cache=True)
def _project(e, body, dx, dy, dth, prs, pos, epar, bint, bis, pfl):
    """Project a blocked body's displacement (dx, dy [m], dth [rad]) onto what its blockers allow.

    The blocking contacts are linearised at the body's current pose (rows J = [n, r x n] per
    patch point, n pointing out of the blocker) and the displacement is corrected by projected
    Gauss-Seidel on those rows: no point may move into its blocker, and against a static
    surface the tangential travel is held within the friction cone (|l_t| <= mu l_n). Working
    on the linear displacement, rather than moving the body and pushing it back out, keeps a
    large transient rotation from leaving the body short of the wall when it is undone.
    Returns the allowed displacement; the normal and friction lambdas go to the blockers.
    """
    m = epar[e, body, EP_MASS]
    im = 1.0 / m
    ii = 1.0 / epar[e, body, EP_INERTIA]
    bx, by = pos[e, body, 0], pos[e, body, 1]
    nblk = bis[e, body, IS_NBLK]
    # The lambdas live in the blocking pairs' rows: the entry kernels cannot allocate.
    for i in range(nblk):
        kb = bis[e, body, IS_BLK + i]
        pfl[e, kb, PF_PJN] = 0.0
        pfl[e, kb, PF_PJN + 1] = 0.0
        pfl[e, kb, PF_PJT] = 0.0
    for _ in range(_PROJECT_ITERS):
        for i in range(nblk):
            kb = bis[e, body, IS_BLK + i]
            sgn = 1.0 if prs[e, kb, PR_A] == body else -1.0
            nx, ny = sgn * pfl[e, kb, 0], sgn * pfl[e, kb, 1]
            npts = int(pfl[e, kb, 3])
            for j in range(npts):
                px, py = pfl[e, kb, 4 + 3 * j], pfl[e, kb, 5 + 3 * j]
                cr = (px - bx) * ny - (py - by) * nx
                v = dx * nx + dy * ny + dth * cr
                w = im + ii * cr * cr
                lo = pfl[e, kb, PF_PJN + j]
                ln = max(lo - v / w, 0.0)
                dl = ln - lo
                pfl[e, kb, PF_PJN + j] = ln
                dx += nx * dl * im
                dy += ny * dl * im
                dth += ii * cr * dl
            mu = pfl[e, kb, PF_MU]
            if mu > 0.0:
                # Translation-only friction, as in _friction.
                tx, ty = -ny, nx
                u = dx * tx + dy * ty
                lim = mu * (pfl[e, kb, PF_PJN] + pfl[e, kb, PF_PJN + 1])
                lo = pfl[e, kb, PF_PJT]
                lt = lo - u * m
                lt = -lim if lt < -lim else (lim if lt > lim else lt)
                dl = lt - lo
                pfl[e, kb, PF_PJT] = lt
                dx += tx * dl * im
                dy += ty * dl * im
    for i in range(nblk):
        kb = bis[e, body, IS_BLK + i]
        pfl[e, kb, PF_LPOS] += pfl[e, kb, PF_PJN] + pfl[e, kb, PF_PJN + 1]
        sgn = 1.0 if prs[e, kb, PR_A] == body else -1.0
        pfl[e, kb, PF_LTAN] += sgn * pfl[e, kb, PF_PJT]
    return dx, dy, dth


_BOTH_BLOCKED_ROUNDS = 4
_JAM_SWEEP = 8  # sweeps after which a stalled pair still overlapping may share


@njit(cache=True)
def _project_moves(e, a, b, a_blk, b_blk, ax0, ay0, at0, bx0, by0, bt0, prs, pos, ang, epar,
                   bint, bis, pfl):
    """Replace the blocked bodies' moves since the saved poses by their projections."""
    proj = False
    for side in range(2):
        body = a if side == 0 else b
        if not (a_blk if side == 0 else b_blk):
            continue
        x0, y0, t0 = (ax0, ay0, at0) if side == 0 else (bx0, by0, bt0)
        ddx, ddy, ddt = pos[e, body, 0] - x0, pos[e, body, 1] - y0, ang[e, body] - t0
        if ddx == 0.0 and ddy == 0.0 and ddt == 0.0:
            continue
        # Undo the free share and apply only what the blockers allow.
        pos[e, body, 0] = x0
        pos[e, body, 1] = y0
        ang[e, body] = t0
        ddx, ddy, ddt = _project(e, body, ddx, ddy, ddt, prs, pos, epar, bint, bis, pfl)
        _move(e, body, ddx, ddy, ddt, pos, ang)
        proj = True
    return proj


@njit(cache=True)
def sweeps(e, npairs, order, max_sweeps, prs, pos, ang, epar, bint, pint, pvert, pflt, sint,
           svert, sflt, tol, slop, bsc, bis, movable, vbuf, cbuf, pfl):
    """Gauss-Seidel sweeps over the ordered pairs; returns the number of sweeps run."""
    n_done = 0
    for _sweep in range(max_sweeps):
        n_done += 1
        for i in range(movable.shape[0]):
            b = movable[i]
            bis[e, b, IS_NBLK] = 0
            if _sweep == 0:
                bis[e, b, IS_MOVED] = 0
        moved = False
        for idx in range(npairs):
            k = order[idx]
            a = prs[e, k, PR_A]
            b = prs[e, k, PR_B]
            static_b = prs[e, k, PR_SP] >= 0
            a_blk = bis[e, a, IS_NBLK] > 0
            b_blk = (not static_b) and bis[e, b, IS_NBLK] > 0
            ax0, ay0, at0 = pos[e, a, 0], pos[e, a, 1], ang[e, a]
            bx0, by0, bt0 = pos[e, b, 0], pos[e, b, 1], ang[e, b]
            dirty = bis[e, a, IS_MOVED] != 0 or (not static_b and bis[e, b, IS_MOVED] != 0)
            if not dirty and pfl[e, k, 2] <= 0.0:
                # Neither body moved since this pair was last evaluated, and it did not
                # overlap then: its contact is unchanged, so skip the narrow phase. (Large
                # scenes settle with a small active frontier; the rest is skipped.)
                touch, d = pfl[e, k, PF_TOUCH] > 0.0, -1.0
            else:
                touch, d = resolve(e, k, False, False, False, prs, pos, ang, epar, bint, pint,
                                   pvert, pflt, sint, svert, sflt, tol, slop, bsc, vbuf, cbuf,
                                   pfl)
            if not touch:
                continue
            if d > tol:
                # Corrections within the rest tolerance do not call for another sweep: the
                # linearised turns of a wedged pair otherwise creep on for all sweeps.
                moved = True
                if _sweep >= _JAM_SWEEP and prs[e, k, PR_MODE] == MODE_STALL:
                    # Still overlapping this late: the drive is wedged between loads it cannot
                    # push from opposite sides, so stalling alone has no solution. Let the
                    # pair share by mass for the rest of the sub-step: no interpenetration.
                    prs[e, k, PR_MODE] = MODE_SHARE
            if d > 0.0 and (a_blk or b_blk):
                proj = _project_moves(e, a, b, a_blk, b_blk, ax0, ay0, at0, bx0, by0, bt0, prs,
                                      pos, ang, epar, bint, bis, pfl)
                if proj and not (a_blk and b_blk):
                    # The blocked side kept only its tangential share: the partner yields.
                    resolve(e, k, a_blk, b_blk, True, prs, pos, ang, epar, bint, pint, pvert,
                            pflt, sint, svert, sflt, tol, slop, bsc, vbuf, cbuf, pfl)
                elif proj:
                    # Both are blocked (say a robot grazing a wall while it pushes a box into a
                    # corner): each may still yield in the directions its blockers leave free.
                    for _round in range(_BOTH_BLOCKED_ROUNDS):
                        ax0, ay0, at0 = pos[e, a, 0], pos[e, a, 1], ang[e, a]
                        bx0, by0, bt0 = pos[e, b, 0], pos[e, b, 1], ang[e, b]
                        touch2, d2 = resolve(e, k, False, False, True, prs, pos, ang, epar, bint,
                                             pint, pvert, pflt, sint, svert, sflt, tol, slop,
                                             bsc, vbuf, cbuf, pfl)
                        if not touch2 or d2 <= slop:
                            break
                        _project_moves(e, a, b, True, True, ax0, ay0, at0, bx0, by0, bt0, prs,
                                       pos, ang, epar, bint, bis, pfl)
            if pos[e, a, 0] != ax0 or pos[e, a, 1] != ay0 or ang[e, a] != at0:
                bis[e, a, IS_MOVED] |= 1
            if pos[e, b, 0] != bx0 or pos[e, b, 1] != by0 or ang[e, b] != bt0:
                bis[e, b, IS_MOVED] |= 1
            if static_b:
                _register_block(e, a, k, bis)
            else:
                if prs[e, k, PR_MODE] == MODE_PUSH:
                    # A body a drive pushes is backed by that drive: it cannot yield back into
                    # it, so a pushed chain settles in one sweep, like a chain against a wall.
                    _register_block(e, b, k, bis)
                if bis[e, b, IS_NBLK] > 0 and b != a:
                    _register_block(e, a, k, bis)
                elif a_blk:
                    _register_block(e, b, k, bis)
        for i in range(movable.shape[0]):
            b = movable[i]
            bis[e, b, IS_MOVED] = 2 if bis[e, b, IS_MOVED] & 1 else 0
        if not moved:
            break
    return n_done


# --------------------------------------------------------------------------------------------
# Preparation: traction decisions, levels and order
# --------------------------------------------------------------------------------------------
@njit(cache=True)
def _find(e, x, bis):
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
        bis[e, b, IS_LEVEL] = _LEVEL_DRIVE if bint[b, BI_KIND] == DRIVEN else _LEVEL_INF
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
            pfl[e, k, PF_KEY] = pfl[e, k, 2]
            if ka == PASSIVE and kb == PASSIVE:
                ra, rb = _find(e, a, bis), _find(e, b, bis)
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
            r = _find(e, b, bis)
            bsc[e, r, BS_LOAD] += epar[e, b, EP_FRICTION] * epar[e, b, EP_MASS] * gravity
    # Traction rule for drive -> passive pairs.
    for k in range(npairs):
        a = prs[e, k, PR_A]
        b = prs[e, k, PR_B]
        if prs[e, k, PR_SP] >= 0 or bint[a, BI_KIND] != DRIVEN or bint[b, BI_KIND] != PASSIVE:
            continue
        root = _find(e, b, bis)
        load = bsc[e, root, BS_LOAD]
        if pfl[e, k, PF_TOUCH] > 0.0:
            nx, ny = pfl[e, k, 0], pfl[e, k, 1]
            for j in range(npairs):
                if j == k or pfl[e, j, PF_TOUCH] <= 0.0 or prs[e, j, PR_SP] >= 0:
                    continue
                a2 = prs[e, j, PR_A]
                b2 = prs[e, j, PR_B]
                if a2 == a or bint[a2, BI_KIND] != DRIVEN or bint[b2, BI_KIND] != PASSIVE:
                    continue
                if _find(e, b2, bis) == root and nx * pfl[e, j, 0] + ny * pfl[e, j, 1] < 0.0:
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
    x1, x2 = pfl[e, k1, 4], pfl[e, k2, 4]
    if x1 != x2:
        return x1 < x2
    y1, y2 = pfl[e, k1, 5], pfl[e, k2, 5]
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


# --------------------------------------------------------------------------------------------
# Velocity pass
# --------------------------------------------------------------------------------------------
_VEL_ITERS = 6
_VEL_TOL = 1e-12  # [N s] impulse change below which the velocity passes stop


@njit(cache=True)
def _vel_weights(e, k, prs, bint, epar, bis):
    """Velocity-pass weights: passive bodies take impulses (and turn); a drive that yielded
    in this pair takes them on its translation only (it slides along what stopped it); a
    drive that pushes is unaffected (its drive re-asserts its velocity)."""
    a = prs[e, k, PR_A]
    b = prs[e, k, PR_B]
    mode = prs[e, k, PR_MODE]
    static_b = prs[e, k, PR_SP] >= 0 or bint[b, BI_KIND] == IMMOVABLE
    wa = 1.0 / epar[e, a, EP_MASS]
    ia = 1.0 / epar[e, a, EP_INERTIA]
    if bint[a, BI_KIND] == DRIVEN:
        ia = 0.0
        if mode == MODE_PUSH:
            wa = 0.0
    wb = ib = 0.0
    if not static_b and mode != MODE_STALL:
        wb = 1.0 / epar[e, b, EP_MASS]
        ib = 1.0 / epar[e, b, EP_INERTIA]
        if bint[b, BI_KIND] == DRIVEN:
            ib = 0.0
        if bint[a, BI_KIND] == PASSIVE and bint[b, BI_KIND] == PASSIVE:
            # Shock propagation at the velocity level: of two passive bodies in a chain that a
            # wall or a drive backs, the one nearer the backing does not give way.
            la = bis[e, a, IS_LEVEL]
            lb = bis[e, b, IS_LEVEL]
            if la < lb and la < _LEVEL_INF:
                wa = ia = 0.0
            elif lb < la and lb < _LEVEL_INF:
                wb = ib = 0.0
    return wa, ia, wb, ib, static_b


@njit(cache=True, inline="always")
def _point_vel(e, body, rx, ry, vel, omg):
    return vel[e, body, 0] - omg[e, body] * ry, vel[e, body, 1] + omg[e, body] * rx


@njit(cache=True, inline="always")
def _vel_row(e, k, j, a, b, nx, ny, static_b, pos, vel, omg, bsc, pfl):
    """Patch point j of pair k: (normal speed [m/s], speed wanted (the bounce) [m/s], lever
    arms r_a x n and r_b x n [m])."""
    px, py = pfl[e, k, 4 + 3 * j], pfl[e, k, 5 + 3 * j]
    rax, ray = px - pos[e, a, 0], py - pos[e, a, 1]
    vax, vay = _point_vel(e, a, rax, ray, vel, omg)
    rbx = rby = vbx = vby = 0.0
    if not static_b:
        rbx, rby = px - pos[e, b, 0], py - pos[e, b, 1]
        vbx, vby = _point_vel(e, b, rbx, rby, vel, omg)
    target = 0.0
    if pfl[e, k, PF_E] > 0.0:
        # Approach speed of this point before the sub-step.
        p0x = bsc[e, a, BS_VX0] - bsc[e, a, BS_W0] * ray
        p0y = bsc[e, a, BS_VY0] + bsc[e, a, BS_W0] * rax
        if not static_b:
            p0x -= bsc[e, b, BS_VX0] - bsc[e, b, BS_W0] * rby
            p0y -= bsc[e, b, BS_VY0] + bsc[e, b, BS_W0] * rbx
        pre = nx * p0x + ny * p0y
        if pre < 0.0:
            target = -pfl[e, k, PF_E] * pre
    return (nx * (vax - vbx) + ny * (vay - vby), target, rax * ny - ray * nx,
            rbx * ny - rby * nx)


@njit(cache=True)
def velocity_pass(e, npairs, order, dt, prs, pos, ang, vel, omg, epar, bint, movable, bsc, bis,
                  pfl):
    """Recover velocities from the displacement, then sequential impulses at the contacts.

    v = v_free + (x - x_free) / dt is the mean velocity over the sub-step; a contact made
    mid-step leaves some approach in it. A few Gauss-Seidel passes over the touching pairs,
    in the sweep order and with accumulated impulses clamped >= 0, give every patch point a
    normal speed of at least -e times its approach speed before the sub-step (the bounce,
    for pairs that collided) and zero otherwise, and static surfaces add Coulomb friction.
    """
    for i in range(movable.shape[0]):
        b = movable[i]
        vel[e, b, 0] = bsc[e, b, BS_VXF] + (pos[e, b, 0] - bsc[e, b, BS_XP]) / dt
        vel[e, b, 1] = bsc[e, b, BS_VYF] + (pos[e, b, 1] - bsc[e, b, BS_YP]) / dt
        omg[e, b] = bsc[e, b, BS_WF] + (ang[e, b] - bsc[e, b, BS_TP]) / dt
    for _ in range(_VEL_ITERS):
        change = 0.0
        for idx in range(npairs):
            k = order[idx]
            if pfl[e, k, PF_TOUCH] <= 0.0:
                continue
            wa, ia, wb, ib, static_b = _vel_weights(e, k, prs, bint, epar, bis)
            if wa + ia + wb + ib <= 0.0:
                continue
            a = prs[e, k, PR_A]
            b = prs[e, k, PR_B]
            nx, ny = pfl[e, k, 0], pfl[e, k, 1]
            npts = int(pfl[e, k, 3])
            vn1, want1, ca1, cb1 = _vel_row(e, k, 0, a, b, nx, ny, static_b, pos, vel, omg, bsc,
                                            pfl)
            k11 = wa + ia * ca1 * ca1 + wb + ib * cb1 * cb1
            old1 = pfl[e, k, PF_LVEL]
            if npts == 2:
                vn2, want2, ca2, cb2 = _vel_row(e, k, 1, a, b, nx, ny, static_b, pos, vel, omg,
                                                bsc, pfl)
                k22 = wa + ia * ca2 * ca2 + wb + ib * cb2 * cb2
                k12 = wa + ia * ca1 * ca2 + wb + ib * cb1 * cb2
                old2 = pfl[e, k, PF_LVEL2]
                # Total impulses x >= 0 with K x = target - vn + K x_old, as one block.
                x1, x2 = block2(k11, k12, k22,
                                want1 - vn1 + k11 * old1 + k12 * old2,
                                want2 - vn2 + k12 * old1 + k22 * old2)
                l1, l2 = x1 - old1, x2 - old2
                pfl[e, k, PF_LVEL2] = x2
            else:
                ca2 = cb2 = 0.0
                x1 = max(old1 + (want1 - vn1) / k11, 0.0)
                l1, l2 = x1 - old1, 0.0
            pfl[e, k, PF_LVEL] = x1
            change = max(change, abs(l1) + abs(l2))
            lam = l1 + l2
            if l1 != 0.0 or l2 != 0.0:
                vel[e, a, 0] += nx * lam * wa
                vel[e, a, 1] += ny * lam * wa
                omg[e, a] += ia * (ca1 * l1 + ca2 * l2)
                if wb + ib > 0.0:
                    vel[e, b, 0] -= nx * lam * wb
                    vel[e, b, 1] -= ny * lam * wb
                    omg[e, b] -= ib * (cb1 * l1 + cb2 * l2)
            mu = pfl[e, k, PF_MU]
            if mu > 0.0 and wa > 0.0:
                # Translation-only Coulomb friction against a static surface (see _friction).
                tx, ty = -ny, nx
                vt = vel[e, a, 0] * tx + vel[e, a, 1] * ty
                normal = pfl[e, k, PF_LPOS] / dt + pfl[e, k, PF_LVEL] + pfl[e, k, PF_LVEL2]
                lim = max(mu * normal - abs(pfl[e, k, PF_LTAN]) / dt, 0.0)
                old = pfl[e, k, PF_LVT]
                new = old - vt / wa
                new = -lim if new < -lim else (lim if new > lim else new)
                lt = new - old
                change = max(change, abs(lt))
                pfl[e, k, PF_LVT] = new
                vel[e, a, 0] += tx * lt * wa
                vel[e, a, 1] += ty * lt * wa
        if change < _VEL_TOL:
            break
