"""Position solver: the anchored Gauss-Seidel sweeps of position-based dynamics.

Each touching pair is separated along its normal, the correction shared by generalised inverse
mass (1/m + (r x n)^2 / I, so an off-centre push turns a body). A two-point patch is solved as
a 2x2 block so a box lying flat on a wall stays flat. A body pressed this sweep against an
immovable or already-blocked body is "blocked": when a later pair moves it, its blocking
contacts are re-solved at once with it alone moving (it keeps only the tangential part, within
the friction cone of a static surface) and the partner takes the rest: simplified shock
propagation, so a chain pushed into a wall settles in one sweep. Sweeps stop when one moves
nothing, or at the cap.

Sketch of one sweep on a row pushed into a wall (pairs in level order, wall outward)::

    robot -> [b3][b2][b1]|wall
    pair b1|wall:  b1 leaves the wall                  b1 blocked (by the wall)
    pair b2|b1:    b1 is blocked: b2 alone moves back   b2 blocked (by b1)
    pair b3|b2:    b2 is blocked: b3 alone moves back   b3 blocked ...
    pair robot|b3: the robot, stalled, yields

A body "alone moves back" with its blockers' constraints projected out of the move, so it
can still slide along a wall within the friction cone (``_project``).

Contacts between two bodies are frictionless; only a passive body against an immovable one has
friction, with the mean of the two coefficients.
"""

from __future__ import annotations

import numpy as np

from .jit import compiled
from .layout import BI_KIND
from .layout import BS_X0
from .layout import BS_Y0
from .layout import EP_INERTIA
from .layout import EP_MASS
from .layout import IMMOVABLE
from .layout import IS_BLK
from .layout import IS_MOVED
from .layout import IS_NBLK
from .layout import MAX_BLOCK
from .layout import MODE_PUSH
from .layout import MODE_SHARE
from .layout import MODE_STALL
from .layout import PFL_DEPTH
from .layout import PFL_DMAX
from .layout import PFL_LPOS
from .layout import PFL_LTAN
from .layout import PFL_MU
from .layout import PFL_NPTS
from .layout import PFL_NX
from .layout import PFL_NY
from .layout import PFL_P1D
from .layout import PFL_P1X
from .layout import PFL_P1Y
from .layout import PFL_P2D
from .layout import PFL_P2X
from .layout import PFL_P2Y
from .layout import PFL_PJN
from .layout import PFL_PJT
from .layout import PFL_PSTRIDE
from .layout import PFL_TOUCH
from .layout import PRS_A
from .layout import PRS_B
from .layout import PRS_MODE
from .layout import PRS_SP
from .narrowphase import pair_contact
from .narrowphase import pair_contact_call

_TURN_RECHECK = 1e-4  # [rad] turns above this are re-checked for overshoot
_OVERSHOOT_REACH = 0.05  # [m] largest overshoot gap the re-check looks for


# --------------------------------------------------------------------------------------------
# Weights and single-pair resolution
# --------------------------------------------------------------------------------------------
# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def pair_weights(e, k, prs, bint, epar, fa, fb, yield_drive):
    """Inverse mass [1/kg] and inverse inertia [1/(kg m^2)] of a and b for pair k.

    ``fa``/``fb`` freeze a side (immovable for the rest of this resolution); ``yield_drive``
    turns a pushing drive into a yielding one (it was stopped by a blocked load).
    """
    a = prs[e, k, PRS_A]
    b = prs[e, k, PRS_B]
    mode = prs[e, k, PRS_MODE]
    wa = 1.0 / epar[e, a, EP_MASS]
    ia = 1.0 / epar[e, a, EP_INERTIA]
    if prs[e, k, PRS_SP] >= 0 or bint[b, BI_KIND] == IMMOVABLE:
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


# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def _move(e, body, dx, dy, dth, pos, ang):
    pos[e, body, 0] += dx
    pos[e, body, 1] += dy
    ang[e, body] += dth


# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def _friction(e, k, a, nx, ny, px, py, wa, pos, ang, bsc, pfl):
    """Coulomb friction of a (moving) against an immovable surface, in position space.

    The contact point's tangential travel since the sub-step began is cancelled while the
    accumulated tangential lambda stays within mu times the normal lambda (stick), and is
    otherwise reduced by that bound (slide).
    """
    mu = pfl[e, k, PFL_MU]
    if mu <= 0.0 or wa <= 0.0:
        return
    tx, ty = -ny, nx
    u = (pos[e, a, 0] - bsc[e, a, BS_X0]) * tx + (pos[e, a, 1] - bsc[e, a, BS_Y0]) * ty
    # The friction impulse acts on the translation only: the wall's friction torque on a
    # single contact point is held by the ground's friction on the spin, so a stuck body
    # neither slides nor rolls along the wall.
    lim = mu * pfl[e, k, PFL_LPOS]
    lt = pfl[e, k, PFL_LTAN] - u / wa
    lt = -lim if lt < -lim else (lim if lt > lim else lt)
    dl = lt - pfl[e, k, PFL_LTAN]
    pfl[e, k, PFL_LTAN] = lt
    _move(e, a, tx * dl * wa, ty * dl * wa, 0.0, pos, ang)


@compiled
def block2(k11, k12, k22, b1, b2):
    """Solve the 2x2 contact LCP: x >= 0, w = K x - b >= 0, x . w = 0 (by enumerating cases).

    K = [[k11, k12], [k12, k22]] is a two-point patch's effective inverse mass; b the wanted
    normal corrections (positions or speeds). Returns (x1, x2).

    A 2x2 LCP has four candidate solutions; the first that is feasible is the answer (K is
    positive semi-definite, so exactly one is, up to degeneracy)::

        both points push     x = K^-1 b            needs x1, x2 >= 0
        only point 1 pushes  x1 = b1 / k11, x2 = 0  needs point 2 not left overlapping
        only point 2 pushes  x2 = b2 / k22, x1 = 0  needs point 1 not left overlapping
        neither              x = 0                  (both already separating)
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


# LLVM-inlined into the sweep's hot path (jit.py, 'Inlining'): called, it takes ~20 arrays
# flattened per pair per sweep, and LLVM's own heuristics do not inline a body this size.
# Measured as a plain call (CPU time, best / median of 5 alternating rounds, with
# pair_contact likewise): PushClutter-v0 gym.make 0.67 / 0.75 of the inlined form.
@compiled(inline="llvm")
def resolve(e, k, fa, fb, yield_drive, prs, pos, ang, epar, bint, pint, pvert, pflt, sint,
            svert, sflt, tol, slop, bsc, vbuf, cbuf, pfl):
    """Separate pair k once. Returns (touching, overlap removed [m]); overlap < 0 = none."""
    if not pair_contact(e, k, prs, pos, ang, epar, bint, pint, pvert, pflt, sint, svert, sflt,
                        tol, vbuf, cbuf, pfl):
        pfl[e, k, PFL_TOUCH] = 0.0
        return False, -1.0
    pfl[e, k, PFL_TOUCH] = 1.0
    d = pfl[e, k, PFL_DEPTH]
    if d > pfl[e, k, PFL_DMAX]:
        pfl[e, k, PFL_DMAX] = d
    if d <= 0.0:
        return True, -1.0
    wa, ia, wb, ib = pair_weights(e, k, prs, bint, epar, fa, fb, yield_drive)
    if wa + ia + wb + ib <= 0.0:
        return True, -1.0
    a = prs[e, k, PRS_A]
    b = prs[e, k, PRS_B]
    nx, ny = pfl[e, k, PFL_NX], pfl[e, k, PFL_NY]
    npts = int(pfl[e, k, PFL_NPTS])
    p1x, p1y, c1 = pfl[e, k, PFL_P1X], pfl[e, k, PFL_P1Y], pfl[e, k, PFL_P1D] + slop
    p2x, p2y, c2 = pfl[e, k, PFL_P2X], pfl[e, k, PFL_P2Y], pfl[e, k, PFL_P2D] + slop
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
    pfl[e, k, PFL_LPOS] += lam
    dtha = ia * (ra1 * l1 + ra2 * l2)
    dthb = ib * (rb1 * l1 + rb2 * l2)
    _move(e, a, nx * lam * wa, ny * lam * wa, dtha, pos, ang)
    if wb > 0.0 or ib > 0.0:
        _move(e, b, -nx * lam * wb, -ny * lam * wb, -dthb, pos, ang)
    if abs(dtha) + abs(dthb) > _TURN_RECHECK and wa + wb > 0.0:
        # A large turn overshoots its linearisation (a corner moves along an arc, not its
        # tangent) and can leave a gap the unilateral contact never closes; close it by
        # translation so the pair ends at the slop, as intended.
        if pair_contact_call(e, k, prs, pos, ang, epar, bint, pint, pvert, pflt, sint, svert,
                             sflt, _OVERSHOOT_REACH, vbuf, cbuf, pfl):
            gap = -pfl[e, k, PFL_DEPTH] - slop
            if gap > 0.0:
                g = gap / (wa + wb)
                gx, gy = pfl[e, k, PFL_NX] * g, pfl[e, k, PFL_NY] * g
                _move(e, a, -gx * wa, -gy * wa, 0.0, pos, ang)
                if wb > 0.0:
                    _move(e, b, gx * wb, gy * wb, 0.0, pos, ang)
            pfl[e, k, PFL_DEPTH] = -slop
    if npts == 2:
        px, py = 0.5 * (p1x + p2x), 0.5 * (p1y + p2y)
    else:
        px, py = p1x, p1y
    _friction(e, k, a, nx, ny, px, py, wa, pos, ang, bsc, pfl)
    return True, d


# The sweep's hot path (every pair, every sweep) inlines resolve; the rare paths (a pair one
# of whose bodies is blocked) call this compiled copy, so resolve's body (and the two
# narrow-phase calls in it) is typed twice, not four times: sweeps compiled in 8.6 s instead
# of 20.6 s (PushBox-v0's first step), at no measurable cost in throughput.
resolve_call = compiled(resolve.py_func)


# --------------------------------------------------------------------------------------------
# Blocked bodies (simplified shock propagation)
# --------------------------------------------------------------------------------------------
# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def _register_block(e, body, k, bis):
    n = bis[e, body, IS_NBLK]
    for i in range(n):
        if bis[e, body, IS_BLK + i] == k:
            return
    if n < MAX_BLOCK:
        bis[e, body, IS_BLK + n] = k
        bis[e, body, IS_NBLK] = n + 1


_BACK_COS = 0.1  # a blocker backs a push within ~84 deg of its normal


# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def _backed(e, body, px, py, prs, bis, pfl):
    """Whether a push along (px, py) [unit] on a blocked ``body`` meets one of its blockers.

    A blocker's normal m, oriented into ``body``, resists motion along -m: the push is held
    when p . m < -_BACK_COS.
    """
    for i in range(bis[e, body, IS_NBLK]):
        kb = bis[e, body, IS_BLK + i]
        sgn = 1.0 if prs[e, kb, PRS_A] == body else -1.0
        if sgn * (pfl[e, kb, PFL_NX] * px + pfl[e, kb, PFL_NY] * py) < -_BACK_COS:
            return True
    return False


_PROJECT_ITERS = 8


@compiled
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
        pfl[e, kb, PFL_PJN] = 0.0
        pfl[e, kb, PFL_PJN + 1] = 0.0
        pfl[e, kb, PFL_PJT] = 0.0
    for _ in range(_PROJECT_ITERS):
        for i in range(nblk):
            kb = bis[e, body, IS_BLK + i]
            sgn = 1.0 if prs[e, kb, PRS_A] == body else -1.0
            nx, ny = sgn * pfl[e, kb, PFL_NX], sgn * pfl[e, kb, PFL_NY]
            npts = int(pfl[e, kb, PFL_NPTS])
            for j in range(npts):
                c = PFL_PSTRIDE * j
                px, py = pfl[e, kb, PFL_P1X + c], pfl[e, kb, PFL_P1Y + c]
                cr = (px - bx) * ny - (py - by) * nx
                v = dx * nx + dy * ny + dth * cr
                w = im + ii * cr * cr
                lo = pfl[e, kb, PFL_PJN + j]
                ln = max(lo - v / w, 0.0)
                dl = ln - lo
                pfl[e, kb, PFL_PJN + j] = ln
                dx += nx * dl * im
                dy += ny * dl * im
                dth += ii * cr * dl
            mu = pfl[e, kb, PFL_MU]
            if mu > 0.0:
                # Translation-only friction, as in _friction.
                tx, ty = -ny, nx
                u = dx * tx + dy * ty
                lim = mu * (pfl[e, kb, PFL_PJN] + pfl[e, kb, PFL_PJN + 1])
                lo = pfl[e, kb, PFL_PJT]
                lt = lo - u * m
                lt = -lim if lt < -lim else (lim if lt > lim else lt)
                dl = lt - lo
                pfl[e, kb, PFL_PJT] = lt
                dx += tx * dl * im
                dy += ty * dl * im
    for i in range(nblk):
        kb = bis[e, body, IS_BLK + i]
        pfl[e, kb, PFL_LPOS] += pfl[e, kb, PFL_PJN] + pfl[e, kb, PFL_PJN + 1]
        sgn = 1.0 if prs[e, kb, PRS_A] == body else -1.0
        pfl[e, kb, PFL_LTAN] += sgn * pfl[e, kb, PFL_PJT]
    return dx, dy, dth


_BOTH_BLOCKED_ROUNDS = 4
_JAM_SWEEP = 8  # sweeps after which a stalled pair still overlapping may share


@compiled
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


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def sweeps(e, npairs, order, max_sweeps, prs, pos, ang, epar, bint, pint, pvert, pflt, sint,
           svert, sflt, tol, slop, bsc, bis, movable, vbuf, cbuf, pfl, shock):
    """Gauss-Seidel sweeps over the ordered pairs; returns the number of sweeps run.

    With ``shock`` False no body is ever blocked (no shock propagation): every pair shares
    its correction by inverse mass (and by its mode), plain projected Gauss-Seidel, which
    converges wherever a non-overlapping arrangement is near; the jam fallback
    (pipeline.step_env) runs that way.
    """
    # Flags passed to the called (not inlined) kernels as booleans, not literals: a literal
    # True would compile them a second time.
    yes, no = np.bool_(True), np.bool_(False)
    n_done = 0
    for _sweep in range(max_sweeps):
        n_done += 1
        for i in range(movable.shape[0]):
            b = movable[i]
            bis[e, b, IS_NBLK] = 0
        moved = False
        for idx in range(npairs):
            k = order[idx]
            a = prs[e, k, PRS_A]
            b = prs[e, k, PRS_B]
            static_b = prs[e, k, PRS_SP] >= 0
            a_blk = bis[e, a, IS_NBLK] > 0
            b_blk = (not static_b) and bis[e, b, IS_NBLK] > 0
            ax0, ay0, at0 = pos[e, a, 0], pos[e, a, 1], ang[e, a]
            bx0, by0, bt0 = pos[e, b, 0], pos[e, b, 1], ang[e, b]
            dirty = bis[e, a, IS_MOVED] != 0 or (not static_b and bis[e, b, IS_MOVED] != 0)
            if not dirty and pfl[e, k, PFL_DEPTH] <= 0.0:
                # Neither body moved since this pair was last evaluated, and it did not
                # overlap then: its contact is unchanged, so skip the narrow phase. (Large
                # scenes settle with a small active frontier; the rest is skipped.)
                touch, d = pfl[e, k, PFL_TOUCH] > 0.0, -1.0
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
                if _sweep >= _JAM_SWEEP and prs[e, k, PRS_MODE] == MODE_STALL:
                    # Still overlapping this late: the drive is wedged between loads it cannot
                    # push from opposite sides, so stalling alone has no solution. Let the
                    # pair share by mass for the rest of the sub-step: no interpenetration.
                    prs[e, k, PRS_MODE] = MODE_SHARE
            if d > 0.0 and (a_blk or b_blk):
                proj = _project_moves(e, a, b, a_blk, b_blk, ax0, ay0, at0, bx0, by0, bt0, prs,
                                      pos, ang, epar, bint, bis, pfl)
                if proj and not (a_blk and b_blk):
                    # The blocked side kept only its tangential share: the partner yields.
                    resolve_call(e, k, a_blk, b_blk, yes, prs, pos, ang, epar, bint, pint, pvert,
                                 pflt, sint, svert, sflt, tol, slop, bsc, vbuf, cbuf, pfl)
                elif proj:
                    # Both are blocked (say a robot grazing a wall while it pushes a box into a
                    # corner): each may still yield in the directions its blockers leave free.
                    for _round in range(_BOTH_BLOCKED_ROUNDS):
                        # Round-local start poses: ax0.. must keep the poses before this
                        # pair, or a move in an earlier round goes unrecorded in IS_MOVED
                        # and the pairs of the moved body are skipped as unchanged.
                        rx0, ry0, rt0 = pos[e, a, 0], pos[e, a, 1], ang[e, a]
                        sx0, sy0, st0 = pos[e, b, 0], pos[e, b, 1], ang[e, b]
                        touch2, d2 = resolve_call(e, k, no, no, yes, prs, pos, ang, epar, bint,
                                                  pint, pvert, pflt, sint, svert, sflt, tol,
                                                  slop, bsc, vbuf, cbuf, pfl)
                        if not touch2 or d2 <= slop:
                            break
                        _project_moves(e, a, b, yes, yes, rx0, ry0, rt0, sx0, sy0, st0, prs,
                                       pos, ang, epar, bint, bis, pfl)
            if pos[e, a, 0] != ax0 or pos[e, a, 1] != ay0 or ang[e, a] != at0:
                bis[e, a, IS_MOVED] |= 1
            if pos[e, b, 0] != bx0 or pos[e, b, 1] != by0 or ang[e, b] != bt0:
                bis[e, b, IS_MOVED] |= 1
            if not shock:
                continue
            if static_b:
                _register_block(e, a, k, bis)
            else:
                if prs[e, k, PRS_MODE] == MODE_PUSH:
                    # A body a drive pushes is backed by that drive: it cannot yield back into
                    # it, so a pushed chain settles in one sweep, like a chain against a wall.
                    _register_block(e, b, k, bis)
                # Blocked status spreads only along the direction it holds: b backs a when
                # b's blockers resist being pushed along -n (the way a pushes it), and vice
                # versa. A row pushed along x must not make its side neighbours (normal
                # along y) blocked, or they freeze against each other and the sweeps stall.
                nx, ny = pfl[e, k, PFL_NX], pfl[e, k, PFL_NY]
                if bis[e, b, IS_NBLK] > 0 and b != a and _backed(e, b, -nx, -ny, prs, bis,
                                                                 pfl):
                    _register_block(e, a, k, bis)
                elif a_blk and _backed(e, a, nx, ny, prs, bis, pfl):
                    _register_block(e, b, k, bis)
        for i in range(movable.shape[0]):
            b = movable[i]
            bis[e, b, IS_MOVED] = 2 if bis[e, b, IS_MOVED] & 1 else 0
        if not moved:
            break
    return n_done
