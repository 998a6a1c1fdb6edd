"""Velocity solver: velocities from the position pass, then restitution and friction, then
the energy guard.

Velocities are recovered from the displacement the contacts caused
(v = v_free + (x - x_free) / dt); then each resolved contact that still approaches is given the
separating speed -e * (approach speed before the sub-step), passive bodies only, and static
surfaces add Coulomb friction, by sequential impulses with accumulated, clamped lambdas.
Last, ``energy_guard`` holds every island of passive bodies that no drive touches to the
kinetic energy it had at the sub-step's start (contacts never add energy).
"""

from __future__ import annotations

import math

from .arrays import cold_row
from .contacts import LEVEL_INF
from .jit import compiled
from .layout import BF_BRAD
from .layout import BI_KIND
from .layout import BS_KDRV
from .layout import BS_KE0
from .layout import BS_KE1
from .layout import BS_TP
from .layout import BS_VX0
from .layout import BS_VXF
from .layout import BS_VY0
from .layout import BS_VYF
from .layout import BS_W0
from .layout import BS_WF
from .layout import BS_X0
from .layout import BS_XP
from .layout import BS_YP
from .layout import DRIVEN
from .layout import EP_INERTIA
from .layout import EP_MASS
from .layout import EP_SCALE
from .layout import IMMOVABLE
from .layout import IS_GROUP
from .layout import IS_LEVEL
from .layout import IS_SKIP
from .layout import IS_SLEEP
from .layout import MODE_PUSH
from .layout import MODE_STALL
from .layout import PASSIVE
from .layout import PFL_DMAX
from .layout import PFL_E
from .layout import PFL_LPOS
from .layout import PFL_LTAN
from .layout import PFL_LVEL
from .layout import PFL_LVEL2
from .layout import PFL_LVT
from .layout import PFL_MU
from .layout import PFL_NPTS
from .layout import PFL_NX
from .layout import PFL_NY
from .layout import PFL_P1X
from .layout import PFL_P1Y
from .layout import PFL_PSTRIDE
from .layout import PFL_TOUCH
from .layout import PRS_A
from .layout import PRS_B
from .layout import PRS_MODE
from .layout import PRS_SP
from .position_solver import block2

# --------------------------------------------------------------------------------------------
# Velocity pass
# --------------------------------------------------------------------------------------------
_VEL_ITERS = 6
_VEL_TOL = 1e-12  # [N s] impulse change below which the velocity passes stop


@compiled
def _vel_weights(e, k, prs, bint, epar, bis):
    """Velocity-pass weights: passive bodies take impulses (and turn); a drive that yielded
    in this pair takes them on its translation only (it slides along what stopped it); a
    drive that pushes is unaffected (its drive re-asserts its velocity)."""
    a = prs[e, k, PRS_A]
    b = prs[e, k, PRS_B]
    mode = prs[e, k, PRS_MODE]
    static_b = prs[e, k, PRS_SP] >= 0 or bint[b, BI_KIND] == IMMOVABLE
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
            if la < lb and la < LEVEL_INF:
                wa = ia = 0.0
            elif lb < la and lb < LEVEL_INF:
                wb = ib = 0.0
    return wa, ia, wb, ib, static_b


# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def _point_vel(e, body, rx, ry, vel, omg):
    return vel[e, body, 0] - omg[e, body] * ry, vel[e, body, 1] + omg[e, body] * rx


# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def _saved_point_vel(e, body, rx, ry, bsc, c):
    """:func:`_point_vel` from a velocity kept in ``bsc``: vx, vy, omega in columns ``c`` ..
    ``c + 2`` (BS_VX0: the sub-step's start, BS_VXF: the end of free motion) [m/s]."""
    w = bsc[e, body, c + 2]
    return bsc[e, body, c] - w * ry, bsc[e, body, c + 1] + w * rx


# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def _point_travel(e, body, rx, ry, pos, ang, bsc, c0, c1):
    """How far [m] the point at lever arm (rx, ry) of ``body`` moved between two of its
    poses: columns ``c0`` .. ``c0 + 2`` of ``bsc`` and then ``c1`` .. ``c1 + 2`` (or its
    current pose, for ``c1`` < 0); the turn as a small rotation of the arm."""
    if c1 < 0:
        x1, y1, t1 = pos[e, body, 0], pos[e, body, 1], ang[e, body]
    else:
        x1, y1, t1 = bsc[e, body, c1], bsc[e, body, c1 + 1], bsc[e, body, c1 + 2]
    dt = t1 - bsc[e, body, c0 + 2]
    return x1 - bsc[e, body, c0] - dt * ry, y1 - bsc[e, body, c0 + 1] + dt * rx


# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def _impact_speed(e, a, b, static_b, nx, ny, rax, ray, rbx, rby, pos, ang, bsc):
    """Normal speed [m/s] of a patch point at the moment of impact, estimated inside the
    sub-step; negative while approaching.

    Ground friction and the drives act in free motion over the whole sub-step, so the
    point's normal speed goes from ``pre0`` (start) to ``preF`` (end of free motion). The
    contact is made part-way: of the normal distance the point travelled in free motion,
    ``s`` < 0, the position pass took back ``d`` >= 0, so the point travelled for a fraction
    about 1 - d / -s of the sub-step before it touched, and its normal speed then was
    interpolated linearly between the two. On a frictionless floor the two speeds are equal
    and this is ``pre0``, the approach speed the bounce used before.
    """
    p0x, p0y = _saved_point_vel(e, a, rax, ray, bsc, BS_VX0)
    pfx, pfy = _saved_point_vel(e, a, rax, ray, bsc, BS_VXF)
    sx, sy = _point_travel(e, a, rax, ray, pos, ang, bsc, BS_X0, BS_XP)
    dx, dy = _point_travel(e, a, rax, ray, pos, ang, bsc, BS_XP, -1)
    if not static_b:
        bx, by = _saved_point_vel(e, b, rbx, rby, bsc, BS_VX0)
        p0x, p0y = p0x - bx, p0y - by
        bx, by = _saved_point_vel(e, b, rbx, rby, bsc, BS_VXF)
        pfx, pfy = pfx - bx, pfy - by
        bx, by = _point_travel(e, b, rbx, rby, pos, ang, bsc, BS_X0, BS_XP)
        sx, sy = sx - bx, sy - by
        bx, by = _point_travel(e, b, rbx, rby, pos, ang, bsc, BS_XP, -1)
        dx, dy = dx - bx, dy - by
    pre0 = nx * p0x + ny * p0y
    pref = nx * pfx + ny * pfy
    if pref == pre0:
        return pre0
    s = nx * sx + ny * sy
    d = nx * dx + ny * dy
    before = 1.0  # the fraction of the sub-step the point travelled before it touched
    if s < 0.0:
        before = min(max(1.0 - d / -s, 0.0), 1.0)
    return pre0 + (pref - pre0) * before


# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def _vel_row(e, k, j, a, b, nx, ny, static_b, pos, ang, vel, omg, bsc, pfl):
    """Patch point j of pair k: (normal speed [m/s], speed wanted (the bounce) [m/s], lever
    arms r_a x n and r_b x n [m])."""
    px, py = pfl[e, k, PFL_P1X + PFL_PSTRIDE * j], pfl[e, k, PFL_P1Y + PFL_PSTRIDE * j]
    rax, ray = px - pos[e, a, 0], py - pos[e, a, 1]
    vax, vay = _point_vel(e, a, rax, ray, vel, omg)
    rbx = rby = vbx = vby = 0.0
    if not static_b:
        rbx, rby = px - pos[e, b, 0], py - pos[e, b, 1]
        vbx, vby = _point_vel(e, b, rbx, rby, vel, omg)
    target = 0.0
    if pfl[e, k, PFL_E] > 0.0:
        pre = _impact_speed(e, a, b, static_b, nx, ny, rax, ray, rbx, rby, pos, ang, bsc)
        if pre < 0.0:
            target = -pfl[e, k, PFL_E] * pre
    return (nx * (vax - vbx) + ny * (vay - vby), target, rax * ny - ray * nx,
            rbx * ny - rby * nx)


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def velocity_pass(e, npairs, order, dt, prs, pos, ang, vel, omg, epar, bint, bflt, aw, bsc,
                  bis, pfl):
    """Recover velocities from the displacement, then sequential impulses at the contacts.

    v = v_free + (x - x_free) / dt is the mean velocity over the sub-step; a contact made
    mid-step leaves some approach in it. A few Gauss-Seidel passes over the touching pairs,
    in the sweep order and with accumulated impulses clamped >= 0, give every patch point a
    normal speed of at least -e times its approach speed before the sub-step (the bounce,
    for pairs that collided) and zero otherwise, and static surfaces add Coulomb friction.
    """
    # No body leaves a contact faster than the fastest free motion in the env: in an exact
    # solve a push hands on at most the pusher's speed; more comes only from removing an
    # overlap, and turning that into speed is what makes a jammed pile explode (Box2D caps
    # it the same way with its contact push velocity). Bounces are added afterwards.
    # (Over the awake bodies ``aw``: a sleeper has no velocity, and nothing moved it.)
    vcap = 0.0
    for i in range(aw.shape[0]):
        b = aw[i]
        vcap = max(vcap, math.sqrt(bsc[e, b, BS_VXF] ** 2 + bsc[e, b, BS_VYF] ** 2))
    for i in range(aw.shape[0]):
        b = aw[i]
        vx = bsc[e, b, BS_VXF] + (pos[e, b, 0] - bsc[e, b, BS_XP]) / dt
        vy = bsc[e, b, BS_VYF] + (pos[e, b, 1] - bsc[e, b, BS_YP]) / dt
        sp = math.sqrt(vx * vx + vy * vy)
        if sp > vcap and bint[b, BI_KIND] == PASSIVE:
            vx *= vcap / sp
            vy *= vcap / sp
        vel[e, b, 0] = vx
        vel[e, b, 1] = vy
        w = bsc[e, b, BS_WF] + (ang[e, b] - bsc[e, b, BS_TP]) / dt
        # The same bound on the spin: no point of the body [m] faster than vcap.
        reach = bflt[b, BF_BRAD] * epar[e, b, EP_SCALE]
        if bint[b, BI_KIND] == PASSIVE and abs(w) * reach > vcap:
            w = math.copysign(vcap / reach, w)
        omg[e, b] = w
    for _ in range(_VEL_ITERS):
        change = 0.0
        for idx in range(npairs):
            k = order[idx]
            if pfl[e, k, PFL_TOUCH] <= 0.0:
                continue
            wa, ia, wb, ib, static_b = _vel_weights(e, k, prs, bint, epar, bis)
            if wa + ia + wb + ib <= 0.0:
                continue
            a = prs[e, k, PRS_A]
            b = prs[e, k, PRS_B]
            nx, ny = pfl[e, k, PFL_NX], pfl[e, k, PFL_NY]
            npts = int(pfl[e, k, PFL_NPTS])
            vn1, want1, ca1, cb1 = _vel_row(e, k, 0, a, b, nx, ny, static_b, pos, ang, vel, omg,
                                            bsc, pfl)
            k11 = wa + ia * ca1 * ca1 + wb + ib * cb1 * cb1
            old1 = pfl[e, k, PFL_LVEL]
            if npts == 2:
                vn2, want2, ca2, cb2 = _vel_row(e, k, 1, a, b, nx, ny, static_b, pos, ang, vel, omg,
                                                bsc, pfl)
                k22 = wa + ia * ca2 * ca2 + wb + ib * cb2 * cb2
                k12 = wa + ia * ca1 * ca2 + wb + ib * cb1 * cb2
                old2 = pfl[e, k, PFL_LVEL2]
                # Total impulses x >= 0 with K x = target - vn + K x_old, as one block.
                x1, x2 = block2(k11, k12, k22,
                                want1 - vn1 + k11 * old1 + k12 * old2,
                                want2 - vn2 + k12 * old1 + k22 * old2)
                l1, l2 = x1 - old1, x2 - old2
                pfl[e, k, PFL_LVEL2] = x2
            else:
                ca2 = cb2 = 0.0
                x1 = max(old1 + (want1 - vn1) / k11, 0.0)
                l1, l2 = x1 - old1, 0.0
            pfl[e, k, PFL_LVEL] = x1
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
            mu = pfl[e, k, PFL_MU]
            if mu > 0.0 and wa > 0.0:
                # Translation-only Coulomb friction against a static surface, as in the
                # position pass.
                tx, ty = -ny, nx
                vt = vel[e, a, 0] * tx + vel[e, a, 1] * ty
                normal = pfl[e, k, PFL_LPOS] / dt + pfl[e, k, PFL_LVEL] + pfl[e, k, PFL_LVEL2]
                lim = max(mu * normal - abs(pfl[e, k, PFL_LTAN]) / dt, 0.0)
                old = pfl[e, k, PFL_LVT]
                new = old - vt / wa
                new = -lim if new < -lim else (lim if new > lim else new)
                lt = new - old
                change = max(change, abs(lt))
                pfl[e, k, PFL_LVT] = new
                vel[e, a, 0] += tx * lt * wa
                vel[e, a, 1] += ty * lt * wa
        if change < _VEL_TOL:
            break


# --------------------------------------------------------------------------------------------
# Energy guard
# --------------------------------------------------------------------------------------------
# Relative and absolute rise [J] of an island's kinetic energy taken for rounding, not for a
# gain: well below the 1e-9 J the property test holds every step to.
_KE_RTOL = 1e-12
_KE_ATOL = 1e-15


@compiled
def _island(e, x, bis):
    """Root of passive body x's island (union-find over ``bis[e, :, IS_GROUP]``, free after
    the traction rule; path halving)."""
    while bis[e, x, IS_GROUP] != x:
        bis[e, x, IS_GROUP] = bis[e, bis[e, x, IS_GROUP], IS_GROUP]
        x = bis[e, x, IS_GROUP]
    return x


@compiled
def _kinetic(e, b, vx, vy, w, epar):
    """Kinetic energy [J] of body b moving at (vx, vy) [m/s] and spinning at w [rad/s]."""
    return 0.5 * epar[e, b, EP_MASS] * (vx * vx + vy * vy) + 0.5 * epar[e, b, EP_INERTIA] * w * w


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def energy_guard(e, sleep_on, npairs, prs, pfl, bint, epar, aw, vel, omg, bsc, bis):
    """Contacts never add kinetic energy: an island of passive bodies that no drive touches
    ends the sub-step with at most the kinetic energy it had at its start, so no step without
    a drive raises the kinetic energy (translational + rotational) of a scene. Returns the
    number of islands held back.

    The solve turns position corrections into velocity (v = v_free + dx / dt) and bounces
    each patch point by itself; both can hand a body energy no drive put in (a box spinning
    against a wall, frozen there by the shock propagation, bats a disc away). Islands are the
    connected components of the pairs that touched at some point of the sub-step; static
    bodies join none, and an island a drive touched is exempt (a drive does work). The
    reference is the energy at the sub-step's start, before ground friction: a contact may
    give back at most what the floor took in the same sub-step (which keeps every rollout of
    the tasks as it was). An island above it has every velocity and spin scaled by
    sqrt(E_before / E_after)::

        box (spinning, against the wall) + disc     island, no drive: E after <= E before
        robot -> box -> disc                        a drive touches it: exempt

    A rise within rounding (``_KE_RTOL``, ``_KE_ATOL``) is left alone, so an elastic bounce
    that keeps its energy is not touched.
    """
    nm = aw.shape[0]
    for i in range(nm):
        b = aw[i]
        bis[e, b, IS_GROUP] = b
        r = cold_row(bsc, b)
        bsc[e, r, BS_KE0] = 0.0
        bsc[e, r, BS_KE1] = 0.0
        bsc[e, r, BS_KDRV] = 0.0
    for k in range(npairs):
        if prs[e, k, PRS_SP] >= 0 or (pfl[e, k, PFL_TOUCH] <= 0.0
                                      and pfl[e, k, PFL_DMAX] == -math.inf):
            continue
        a = prs[e, k, PRS_A]
        b = prs[e, k, PRS_B]
        ka, kb = bint[a, BI_KIND], bint[b, BI_KIND]
        if ka == PASSIVE and kb == PASSIVE:
            ra, rb = _island(e, a, bis), _island(e, b, bis)
            if ra < rb:
                bis[e, rb, IS_GROUP] = ra
            elif rb < ra:
                bis[e, ra, IS_GROUP] = rb
        elif ka == DRIVEN and kb == PASSIVE:
            bsc[e, cold_row(bsc, b), BS_KDRV] = 1.0  # this body's own mark
        elif kb == DRIVEN and ka == PASSIVE:
            bsc[e, cold_row(bsc, a), BS_KDRV] = 1.0
    for i in range(nm):
        b = aw[i]
        if bint[b, BI_KIND] != PASSIVE or bis[e, b, IS_SLEEP] != 0:
            continue
        r = cold_row(bsc, _island(e, b, bis))
        if bsc[e, cold_row(bsc, b), BS_KDRV] != 0.0:
            bsc[e, r, BS_KE0] = math.inf  # a drive touches the island: it may gain
        elif not (sleep_on and bis[e, b, IS_SKIP] != 0):
            # (A body that slept into this sub-step, woken now, started it at rest; its
            # BS_VX0.. are those of an earlier sub-step.)
            bsc[e, r, BS_KE0] += _kinetic(e, b, bsc[e, b, BS_VX0], bsc[e, b, BS_VY0],
                                          bsc[e, b, BS_W0], epar)
        bsc[e, r, BS_KE1] += _kinetic(e, b, vel[e, b, 0], vel[e, b, 1], omg[e, b], epar)
    held = 0
    for i in range(nm):
        b = aw[i]
        if bint[b, BI_KIND] != PASSIVE or bis[e, b, IS_SLEEP] != 0:
            continue
        root = _island(e, b, bis)
        r = cold_row(bsc, root)
        before, after = bsc[e, r, BS_KE0], bsc[e, r, BS_KE1]
        if after <= before * (1.0 + _KE_RTOL) + _KE_ATOL:
            continue
        s = math.sqrt(before / after)
        vel[e, b, 0] *= s
        vel[e, b, 1] *= s
        omg[e, b] *= s
        if root == b:
            held += 1
    return held
