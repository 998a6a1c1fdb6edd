"""One world step, as named stages (the order Box2D's b2World_Step follows):

1. sub-steps: a step is split so that no body travels more than a fraction of its own
   half-thickness per sub-step, at the speed it can reach (its own, or that of a faster body
   that can touch it this step); SAT then always pushes a body back the way it came, so
   nothing tunnels through a thin wall (or a grid cell) at any speed the sub-step cap allows.
2. drive:      commands -> drive state (limits, lag, acceleration and grip caps).
3. integrate:  driven bodies follow their drive exactly; passive bodies coast.
4. broad:      bodies at rest sleep, those an awake body can reach wake (sleeping.py);
               candidate pairs within the sub-step's travel.
5. solve:      prepare -> sort (contacts.py) -> Gauss-Seidel sweeps (position_solver.py).
6. apply:      velocities from the displacement, restitution and friction (velocity_solver.py).
7. sensors:    touching contacts of the last sub-step are written to the contact buffers.

``step_serial`` runs envs one after the other; ``step_parallel`` runs them with ``prange``.
Both call the same ``step_env`` with the env loop outermost and no reduction across envs, so
env i of a batch is bit-identical to a single world given the same inputs. Both entry kernels
are compiled without numba's reference counting (``_nrt=False``; see envs/step.py for
the measurement): the arrays are only borrowed, and a count per argument per call was a large
share of a step.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .abi import ROWS_SIG, CFunction, call_void, struct_ptr
from .arrays import cold_row, load_world
from .broadphase import body_boxes, find_pairs
from .contacts import (
    contact_graph,
    contact_levels,
    new_contacts,
    pair_contact_call,
    prepare,
    sort_pairs,
)
from .frames import com_offset
from .jit import compiled
from .kinematics import DRIVE_ACKER, DRIVE_OMNI, coast, drive_motion, drive_twist, drive_update
from .layout import (
    BF_ACC0,
    BF_ACC1,
    BF_BRAD,
    BF_COMX,
    BF_COMY,
    BF_HALF,
    BF_TAU,
    BF_VMAX0,
    BF_VMAX1,
    BF_VMIN0,
    BF_VMIN1,
    BF_WHEELBASE,
    BI_DRIVE,
    BI_KIND,
    BS_D0,
    BS_D1,
    BS_REACH,
    BS_SAVE,
    BS_T0,
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
    HL_NEED,
    HL_NSUB,
    HL_OVERFLOW,
    HL_SLEEP,
    HL_STATUS,
    HL_SWEEPS,
    IS_MOVED,
    IS_SKIP,
    IS_SLEEP,
    MODE_PUSH,
    MODE_STALL,
    PFL_TOUCH,
    PR_DT,
    PR_G,
    PR_MAXSUB,
    PR_REST,
    PR_SLEEP,
    PR_SLOP,
    PR_SUBFRAC,
    PR_SWEEPS,
    PRS_A,
    PRS_B,
    PRS_MODE,
    PRS_SP,
    ST_OVERFLOW,
    ST_SUBSTEPS,
)
from .position_solver import sweeps
from .prefetch import prefetch_world
from .sensors import write_contacts
from .sleeping import doze, restore_sleep, save_sleep, settle
from .velocity_solver import velocity_pass

_RELEVELS = 2  # times a sub-step may re-order its sweeps for contacts made while sweeping
_MIN_HALF = 1e-6  # [m] floor on the half-thickness used to size sub-steps (no division by 0)


@compiled
def _speed(e, b, bint, bflt, epar, vel, omg, drv, cmd):
    """Bound [m/s] on how fast any point of movable body b moves this step: a driven body's
    faster of its drive state and its (clipped) command, a passive body's velocity; both
    with the spin times the bounding radius."""
    reach = bflt[b, BF_BRAD] * epar[e, b, EP_SCALE]
    if bint[b, BI_KIND] != DRIVEN:
        return math.sqrt(vel[e, b, 0] ** 2 + vel[e, b, 1] ** 2) + abs(omg[e, b]) * reach
    c0 = min(max(cmd[e, b, 0], bflt[b, BF_VMIN0]), bflt[b, BF_VMAX0])
    c1 = min(max(cmd[e, b, 1], bflt[b, BF_VMIN1]), bflt[b, BF_VMAX1])
    d0 = max(abs(drv[e, b, 0]), abs(c0))
    d1 = max(abs(drv[e, b, 1]), abs(c1))
    drive = bint[b, BI_DRIVE]
    if drive == DRIVE_OMNI:
        return math.sqrt(d0 * d0 + d1 * d1)
    if drive == DRIVE_ACKER:
        return d0 * (1.0 + reach * abs(math.tan(min(d1, 1.5))) / bflt[b, BF_WHEELBASE])
    return d0 + d1 * reach


@compiled
def _count(speed, dt, frac, half):
    """Sub-steps [-] that keep a body at ``speed`` [m/s] within ``frac`` of ``half`` [m] per
    sub-step (uncapped; 1 << 30 for a speed past any count)."""
    r = speed * dt / (frac * half) if speed > 0.0 else 0.0
    if not r < 1e9:
        return 1 << 30
    return int(math.ceil(r)) if r > 1.0 else 1


# Sub-step count: no body may travel more than PR_SUBFRAC of its half-thickness per sub-step,
# so SAT always pushes it back the way it came. A body moves at its own speed, or, when pushed,
# at its pusher's: a 1 m/s robot pushing 1 cm discs into a wall must not move more than a
# disc's half-thickness per sub-step either, or SAT pushes the disc out through the far side
# of the wall. So each body b gets a reachable speed p_b, and the count is the largest
# ceil(p_b dt / (PR_SUBFRAC half_b)):
#
#   p_b = own speed of b                                      (every body)
#   p_c = max(p_c, p_b)  while the bounding circles of b and c are within (p_b + p_c) dt
#                        of each other (they can meet this step), until nothing changes
#
# The relaxation spreads a pusher's speed along any chain of bodies it can reach: each link's
# gap is at most the whole travel, so the set it marks holds every body that can be touched,
# directly or through others (a superset: the real chain spends its travel once). A thin body
# out of every fast body's reach keeps its own speed, and a fast robot far from it is not held
# to its thickness. The pairwise relaxation costs O(M^2) per pass over M movable bodies, so
# past _REACH_BODIES bodies (crowds) every body takes the fastest speed (the plain bound).
_REACH_BODIES = 24


@compiled
def _substeps(e, prm, bint, bflt, movable, epar, pos, vel, omg, drv, cmd, bsc):
    """Sub-steps the step needs so that no body travels more than PR_SUBFRAC of its
    half-thickness per sub-step, moving at the speed it can reach (see the sketch above).
    Returns the count uncapped; the caller compares it with PR_MAXSUB. Keeps each body's
    reachable speed [m/s] in its hot ``BS_REACH`` column."""
    dt = prm[PR_DT]
    frac = prm[PR_SUBFRAC]
    nm = movable.shape[0]
    fastest = 0.0
    thinnest = math.inf
    for i in range(nm):
        b = movable[i]
        p = _speed(e, b, bint, bflt, epar, vel, omg, drv, cmd)
        # The hot row: free motion reads this body's line right after, so the write costs no
        # extra memory traffic (the cold rows did: a miss per body on every step of a batch).
        bsc[e, b, BS_REACH] = p
        fastest = max(fastest, p)
        thinnest = min(thinnest, max(bflt[b, BF_HALF] * epar[e, b, EP_SCALE], _MIN_HALF))
    plain = _count(fastest, dt, frac, thinnest)
    if plain <= 1 or nm > _REACH_BODIES:
        return plain
    # A body no faster than `slow` needs one sub-step even at the thinnest body's half, so it
    # cannot raise any count: only the faster ones spread their speed.
    slow = frac * thinnest / dt
    for _ in range(nm):
        changed = False
        for i in range(nm):
            b = movable[i]
            pb = bsc[e, b, BS_REACH]
            if pb <= slow:
                continue
            rb = bflt[b, BF_BRAD] * epar[e, b, EP_SCALE]
            for j in range(nm):
                c = movable[j]
                pc = bsc[e, c, BS_REACH]
                if pc >= pb:
                    continue
                near = rb + bflt[c, BF_BRAD] * epar[e, c, EP_SCALE] + (pb + pc) * dt
                dx = pos[e, b, 0] - pos[e, c, 0]
                dy = pos[e, b, 1] - pos[e, c, 1]
                if dx * dx + dy * dy <= near * near:
                    bsc[e, c, BS_REACH] = pb
                    changed = True
        if not changed:
            break
    need = 1
    for i in range(nm):
        b = movable[i]
        half = max(bflt[b, BF_HALF] * epar[e, b, EP_SCALE], _MIN_HALF)
        need = max(need, _count(bsc[e, b, BS_REACH], dt, frac, half))
    return need


@compiled
def _save(e, movable, pos, ang, vel, omg, drv, bsc):
    """Keep env e's state at the step's start in the cold rows of ``bsc``, so a step of
    several sub-steps can be rolled back (a step of one is restored from its hot rows)."""
    for i in range(movable.shape[0]):
        b = movable[i]
        r = cold_row(bsc, b)
        bsc[e, r, BS_SAVE + 0] = pos[e, b, 0]
        bsc[e, r, BS_SAVE + 1] = pos[e, b, 1]
        bsc[e, r, BS_SAVE + 2] = ang[e, b]
        bsc[e, r, BS_SAVE + 3] = vel[e, b, 0]
        bsc[e, r, BS_SAVE + 4] = vel[e, b, 1]
        bsc[e, r, BS_SAVE + 5] = omg[e, b]
        bsc[e, r, BS_SAVE + 6] = drv[e, b, 0]
        bsc[e, r, BS_SAVE + 7] = drv[e, b, 1]


@compiled
def _restore(e, saved, sleep_on, bint, movable, pos, ang, vel, omg, drv, bsc, bis):
    """Roll env e back to the step's start: from the cold rows when ``saved`` (``_save``),
    else, in the step's first sub-step, from what free motion kept of it in the hot rows.

    Free motion is the only stage before the broad phase that changes the state: it copies
    the pose and velocity it starts from to BS_X0..BS_W0 and a drive's state to BS_D0,
    BS_D1, and it leaves the bodies asleep through the last sub-step (IS_SKIP) untouched.
    """
    for i in range(movable.shape[0]):
        b = movable[i]
        if saved:
            r = cold_row(bsc, b)
            pos[e, b, 0] = bsc[e, r, BS_SAVE + 0]
            pos[e, b, 1] = bsc[e, r, BS_SAVE + 1]
            ang[e, b] = bsc[e, r, BS_SAVE + 2]
            vel[e, b, 0] = bsc[e, r, BS_SAVE + 3]
            vel[e, b, 1] = bsc[e, r, BS_SAVE + 4]
            omg[e, b] = bsc[e, r, BS_SAVE + 5]
            drv[e, b, 0] = bsc[e, r, BS_SAVE + 6]
            drv[e, b, 1] = bsc[e, r, BS_SAVE + 7]
            continue
        if sleep_on and bis[e, b, IS_SKIP] != 0:
            continue
        pos[e, b, 0] = bsc[e, b, BS_X0]
        pos[e, b, 1] = bsc[e, b, BS_Y0]
        ang[e, b] = bsc[e, b, BS_T0]
        vel[e, b, 0] = bsc[e, b, BS_VX0]
        vel[e, b, 1] = bsc[e, b, BS_VY0]
        omg[e, b] = bsc[e, b, BS_W0]
        if bint[b, BI_KIND] == DRIVEN:
            drv[e, b, 0] = bsc[e, b, BS_D0]
            drv[e, b, 1] = bsc[e, b, BS_D1]


@compiled
def _free_motion(e, dt, gravity, sleep_on, bint, bflt, movable, epar, pos, ang, vel, omg, drv,
                 cmd, bsc, bis):
    """Stages 2-3: drive update and free motion of every movable body over ``dt``.

    A body that slept through the last sub-step (``IS_SLEEP`` 2, only when ``sleep_on``) is
    skipped: it has no velocity, so its free motion is none, and its scratch in ``bsc``
    already says so.
    """
    for i in range(movable.shape[0]):
        b = movable[i]
        if sleep_on and bis[e, b, IS_SLEEP] == 2:
            continue
        bsc[e, b, BS_X0] = pos[e, b, 0]
        bsc[e, b, BS_Y0] = pos[e, b, 1]
        bsc[e, b, BS_T0] = ang[e, b]
        bsc[e, b, BS_VX0] = vel[e, b, 0]
        bsc[e, b, BS_VY0] = vel[e, b, 1]
        bsc[e, b, BS_W0] = omg[e, b]
        mu_g = epar[e, b, EP_FRICTION] * gravity
        if bint[b, BI_KIND] == DRIVEN:
            drive = bint[b, BI_DRIVE]
            bsc[e, b, BS_D0] = drv[e, b, 0]
            bsc[e, b, BS_D1] = drv[e, b, 1]
            d0, d1 = drive_update(
                drive, drv[e, b, 0], drv[e, b, 1], cmd[e, b, 0], cmd[e, b, 1],
                bflt[b, BF_VMIN0], bflt[b, BF_VMIN1], bflt[b, BF_VMAX0], bflt[b, BF_VMAX1],
                bflt[b, BF_ACC0], bflt[b, BF_ACC1], bflt[b, BF_TAU], mu_g, dt,
            )
            drv[e, b, 0] = d0
            drv[e, b, 1] = d1
            # The drive moves the body origin; the COM rides along at its body-frame offset.
            th = ang[e, b]
            wb = bflt[b, BF_WHEELBASE]
            dx, dy, dth = drive_motion(drive, d0, d1, th, wb, dt)
            th2 = th + dth
            vx, vy, w = drive_twist(drive, d0, d1, th2, wb)
            if bflt[b, BF_COMX] == 0.0 and bflt[b, BF_COMY] == 0.0:
                pos[e, b, 0] += dx
                pos[e, b, 1] += dy
                ang[e, b] = th2
                bsc[e, b, BS_VXF] = vx
                bsc[e, b, BS_VYF] = vy
            else:
                lx, ly = com_offset(e, b, math.cos(th), math.sin(th), bflt, epar)
                ox, oy = pos[e, b, 0] - lx, pos[e, b, 1] - ly
                rx, ry = com_offset(e, b, math.cos(th2), math.sin(th2), bflt, epar)
                pos[e, b, 0] = ox + dx + rx
                pos[e, b, 1] = oy + dy + ry
                ang[e, b] = th2
                bsc[e, b, BS_VXF] = vx - w * ry
                bsc[e, b, BS_VYF] = vy + w * rx
            bsc[e, b, BS_WF] = w
        else:
            m = epar[e, b, EP_MASS]
            gyr = math.sqrt(epar[e, b, EP_INERTIA] / m)
            dx, dy, dth, vx, vy, w = coast(vel[e, b, 0], vel[e, b, 1], omg[e, b], mu_g, gyr, dt)
            pos[e, b, 0] += dx
            pos[e, b, 1] += dy
            ang[e, b] += dth
            bsc[e, b, BS_VXF] = vx
            bsc[e, b, BS_VYF] = vy
            bsc[e, b, BS_WF] = w
        bsc[e, b, BS_XP] = pos[e, b, 0]
        bsc[e, b, BS_YP] = pos[e, b, 1]
        bsc[e, b, BS_TP] = ang[e, b]
        vel[e, b, 0] = bsc[e, b, BS_VXF]
        vel[e, b, 1] = bsc[e, b, BS_VYF]
        omg[e, b] = bsc[e, b, BS_WF]


@compiled
def _refresh(e, npairs, prs, pos, ang, epar, bint, pint, pvert, pflt, sint, svert, sflt, tol,
             bis, vbuf, cbuf, pfl):
    """Re-evaluate the pairs of bodies the last sweep moved, at their final poses.

    A pair's stored contact is the one of its last evaluation; a body moved after that (later
    in the last sweep, or in any sweep when the cap cut them off) makes it stale. Refreshing
    those pairs gives the velocity pass current normals and makes max_penetration the true
    overlap left, not the one of some earlier evaluation. Pairs of unmoved bodies are current.
    """
    for k in range(npairs):
        a = prs[e, k, PRS_A]
        b = prs[e, k, PRS_B]
        if bis[e, a, IS_MOVED] == 0 and (prs[e, k, PRS_SP] >= 0 or bis[e, b, IS_MOVED] == 0):
            continue
        if pair_contact_call(e, k, prs, pos, ang, epar, bint, pint, pvert, pflt, sint, svert,
                             sflt, tol, vbuf, cbuf, pfl):
            pfl[e, k, PFL_TOUCH] = 1.0
        else:
            pfl[e, k, PFL_TOUCH] = 0.0


@compiled
def step_env(e, wp):
    """Advance env ``e`` of the worlds at ``wp`` (a :class:`WorldArrays` by pointer,
    ``abi.py``: a call costs two words, not W's ~300 flattened) by ``W.prm[PR_DT]`` s.

    Never silent: when the pair buffer is too small for some sub-step (``ST_OVERFLOW``, with
    the pairs needed in ``hl[e, HL_OVERFLOW]``) or the bodies move too fast for PR_MAXSUB
    sub-steps (``ST_SUBSTEPS``, needed count in ``hl[e, HL_NEED]``), the env is rolled back to
    the step's start and ``hl[e, HL_STATUS]`` says why; World grows the buffers and steps the
    env again, or raises. Callers stepping envs themselves must check HL_STATUS.
    """
    W = load_world(wp)
    prm, bint, bflt, movable, epar = W.prm, W.bint, W.bflt, W.movable, W.epar
    pos, ang, vel, omg, drv, cmd = W.pos, W.ang, W.vel, W.omg, W.drv, W.cmd
    pint, pvert, pflt, sint, svert, sflt = W.pint, W.pvert, W.pflt, W.sint, W.svert, W.sflt
    bsc, bis, prs, pfl, vbuf, cbuf = W.bsc, W.bis, W.prs, W.pfl, W.vbuf, W.cbuf
    gravity = prm[PR_G]
    slop = prm[PR_SLOP]
    tol = prm[PR_REST]
    W.hl[e, HL_STATUS] = 0.0
    W.hl[e, HL_OVERFLOW] = 0.0
    need = _substeps(e, prm, bint, bflt, movable, epar, pos, vel, omg, drv, cmd, bsc)
    W.hl[e, HL_NEED] = need
    if need > int(prm[PR_MAXSUB]):
        W.hl[e, HL_STATUS] = ST_SUBSTEPS
        return
    nsub = need
    dts = prm[PR_DT] / nsub
    cap = prs.shape[1]
    max_sweeps = int(prm[PR_SWEEPS])
    most = 0
    npairs = np.int64(0)  # not a literal: one signature of write_contacts
    sleep_on = prm[PR_SLEEP] != 0.0
    extra = tol + 2.0 * slop
    asleep = 0
    # A step of one sub-step (most steps) can be rolled back from the hot rows alone.
    saved = nsub > 1
    if saved:
        _save(e, movable, pos, ang, vel, omg, drv, bsc)
        if sleep_on:
            save_sleep(e, movable, bsc)
    for sub in range(nsub):
        # Sleeping bodies keep small boxes; the awake ones' boxes wake those they reach.
        if sleep_on:
            asleep = doze(e, sub == 0, movable, bint, pos, ang, vel, omg, bsc, bis)
        _free_motion(e, dts, gravity, sleep_on, bint, bflt, movable, epar, pos, ang, vel, omg,
                     drv, cmd, bsc, bis)
        travel = body_boxes(e, sleep_on, movable, bint, bflt, pint, pvert, pflt, epar, pos, ang,
                            bsc, bis, extra, W.aabb)
        while True:
            found, woke = find_pairs(e, movable, W.aabb, sint, sflt, W.grid, W.gstart, W.gitem,
                                     W.stamp, prs, asleep, travel + extra, bflt, epar, bsc, bis)
            if woke == 0:
                break
            asleep -= woke
        if found > cap:
            # Dropping pairs would drop contacts: roll back and let World grow the buffers.
            _restore(e, saved, sleep_on, bint, movable, pos, ang, vel, omg, drv, bsc, bis)
            if sleep_on:
                restore_sleep(e, saved, movable, bsc, bis)
            W.hl[e, HL_OVERFLOW] = found
            W.hl[e, HL_STATUS] = ST_OVERFLOW
            return
        npairs = found
        touching = prepare(e, npairs, prs, pos, ang, epar, bint, bflt, pint, pvert, pflt, sint,
                           svert, sflt, tol, gravity, movable, bsc, bis, vbuf, cbuf, pfl,
                           W.gsc)
        if touching == 0:
            # Nothing touches after free motion, so no correction can start: the free motion
            # stands (positions and velocities are already written).
            if sleep_on:
                settle(e, npairs, prs, pfl, bint, movable, pos, ang, vel, omg, bsc, bis)
            continue
        order = W.pord[e, sort_pairs(e, npairs, prs, bis, pfl, W.pord)]
        last = sweeps(e, npairs, order, max_sweeps, prs, pos, ang, epar, bint, pint, pvert,
                      pflt, sint, svert, sflt, tol, slop, bsc, bis, movable, vbuf, cbuf, pfl)
        ns = last
        for _ in range(_RELEVELS):
            # Contacts made during the sweeps (a pushed row reaching a wall) change the
            # levels: order again from the new graph and sweep on, so the wall's block runs
            # back to the drive instead of jamming the row between them.
            if new_contacts(e, npairs, prs, bint, pfl) == 0:
                break
            contact_graph(e, npairs, prs, movable, bis, W.gsc, pfl)
            contact_levels(e, npairs, prs, bint, movable, bis, W.gsc, pfl)
            order = W.pord[e, sort_pairs(e, npairs, prs, bis, pfl, W.pord)]
            last = sweeps(e, npairs, order, max_sweeps, prs, pos, ang, epar, bint, pint, pvert,
                          pflt, sint, svert, sflt, tol, slop, bsc, bis, movable, vbuf, cbuf, pfl)
            ns += last
        if last >= max_sweeps:
            # Still moving at the cap: the drives have jammed their loads (a pile wedged in a
            # corner). A jam is a load no traction moves, so the drives yield, as a stall
            # does, and the passive bodies settle among themselves and the walls.
            for k in range(npairs):
                if prs[e, k, PRS_MODE] == MODE_PUSH:
                    prs[e, k, PRS_MODE] = MODE_STALL
            ns += sweeps(e, npairs, order, max_sweeps, prs, pos, ang, epar, bint, pint, pvert,
                         pflt, sint, svert, sflt, tol, slop, bsc, bis, movable, vbuf, cbuf, pfl)
        if ns > most:
            most = ns
        _refresh(e, npairs, prs, pos, ang, epar, bint, pint, pvert, pflt, sint, svert, sflt, tol,
                 bis, vbuf, cbuf, pfl)
        velocity_pass(e, npairs, order, dts, prs, pos, ang, vel, omg, epar, bint, bflt, movable,
                      bsc, bis, pfl)
        if sleep_on:
            settle(e, npairs, prs, pfl, bint, movable, pos, ang, vel, omg, bsc, bis)
    write_contacts(e, npairs, dts, gravity, prs, bint, epar, bsc, bis, pfl, W.cti, W.ctf,
                   W.ctn, W.hl)
    W.hl[e, HL_SWEEPS] = most
    W.hl[e, HL_NSUB] = nsub
    W.hl[e, HL_SLEEP] = asleep


def physics_rows(lo, hi, wp):
    """Step envs ``lo .. hi-1`` of the worlds at ``wp`` (a :class:`WorldArrays` by pointer,
    ``abi.py``) whose ``active`` flag is set; each prefetches the next env's rows.

    The body of the engine's one compiled entry point, :data:`PHYSICS`: every kernel that
    steps physics (World's, every task's) calls it through its address, so the step is
    typed, optimised and cached once per machine, not once per caller.
    """
    W = load_world(wp)
    n = W.pos.shape[0]
    for e in range(lo, hi):
        if e + 1 < n:
            prefetch_world(e + 1, W)  # arrives while env e steps (prefetch.py)
        if W.active[e]:
            step_env(e, wp)


PHYSICS = CFunction(physics_rows, ROWS_SIG)
"""The physics step as a C function ``void(int64 lo, int64 hi, WorldArrays* W)``."""

CHUNK = 32  # envs per call of the physics from a prange loop: the structure is stored once
# per chunk, and a chunk is small enough to balance the two threads


@compiled
def rolled_back(W):
    """Active envs whose physics step was rolled back (``hl[e, HL_STATUS]`` != 0), counted
    after a ``prange`` loop (an integer count, no float reduction across envs)."""
    bad = 0
    for e in range(W.pos.shape[0]):
        if W.active[e] and W.hl[e, HL_STATUS] != 0.0:
            bad += 1
    return bad


@njit(cache=True, _nrt=False)
def step_serial(W, physics):
    """Step every env whose ``W.active`` flag is set, one after the other (fastest for a few),
    through the compiled step at address ``physics`` (:data:`PHYSICS`).

    Returns the number of active envs whose step was rolled back (``hl[e, HL_STATUS]`` != 0).
    """
    call_void(physics, (np.int64(0), np.int64(W.pos.shape[0]), struct_ptr(W)))
    return rolled_back(W)


@njit(cache=True, parallel=True, _nrt=False)
def step_parallel(W, physics):
    """Step the active envs with ``prange`` over chunks of envs (no reductions: bit-identical
    to serial). Returns the number of active envs whose step was rolled back."""
    n = W.pos.shape[0]
    for i in prange((n + CHUNK - 1) // CHUNK):
        # numba types a prange index as uint64: int64 keeps one signature of the call
        lo = np.int64(i) * CHUNK
        call_void(physics, (lo, min(lo + CHUNK, n), struct_ptr(W)))
    return rolled_back(W)
