"""One world step, as named stages (the order Box2D's b2World_Step follows):

1. sub-steps: a step is split so that no body travels more than a fraction of its own
   half-thickness per sub-step; SAT then always pushes a body back the way it came, so nothing
   tunnels through a thin wall (or a grid cell) at any speed the sub-step cap allows.
2. drive:      commands -> drive state (limits, lag, acceleration and grip caps).
3. integrate:  driven bodies follow their drive exactly; passive bodies coast.
4. broad:      candidate pairs within the sub-step's travel.
5. solve:      prepare -> sort -> Gauss-Seidel sweeps (solver.py).
6. apply:      velocities from the displacement, restitution and friction.
7. sensors:    touching contacts of the last sub-step are written to the contact buffers.

``step_serial`` runs envs one after the other; ``step_parallel`` runs them with ``prange``.
Both call the same ``step_env`` with the env loop outermost and no reduction across envs, so
env i of a batch is bit-identical to a single world given the same inputs. Both entry kernels
are compiled without numba's reference counting (``_nrt=False``; see envs/kernels.py for
the measurement): the arrays are only borrowed, and a count per argument per call was a large
share of a step.
"""

from __future__ import annotations

import math

from numba import njit, prange

from .broadphase import body_boxes, find_pairs
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
    BS_DRIVE,
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
    CT_DEPTH,
    CT_FN,
    CT_FT,
    CT_NPTS,
    CT_NX,
    CT_NY,
    CT_P1X,
    CT_P1Y,
    CT_P2X,
    CT_P2Y,
    CT_PX,
    CT_PY,
    DRIVEN,
    EP_FRICTION,
    EP_INERTIA,
    EP_MASS,
    EP_SCALE,
    HL_MAXPEN,
    HL_NSUB,
    HL_OVERFLOW,
    HL_SWEEPS,
    PASSIVE,
    PF_DMAX,
    PF_LPOS,
    PF_LTAN,
    PF_LVEL,
    PF_LVEL2,
    PF_LVT,
    PF_TOUCH,
    PR_A,
    PR_B,
    PR_DT,
    PR_G,
    PR_MAXSUB,
    PR_REST,
    PR_SLOP,
    PR_SP,
    PR_SUBFRAC,
    PR_SWEEPS,
)
from .solver import _find, prepare, sort_pairs, sweeps, velocity_pass

_MIN_HALF = 1e-3  # [m] floor on the half-thickness used to size sub-steps


@njit(cache=True)
def _substeps(e, prm, bint, bflt, movable, epar, vel, omg, drv, cmd):
    """Sub-steps needed so each body travels at most PR_SUBFRAC of its half-thickness."""
    dt = prm[PR_DT]
    worst = 0.0
    for i in range(movable.shape[0]):
        b = movable[i]
        sc = epar[e, b, EP_SCALE]
        reach = bflt[b, BF_BRAD] * sc
        if bint[b, BI_KIND] == DRIVEN:
            # The faster of the current drive state and the (clipped) command.
            c0 = min(max(cmd[e, b, 0], bflt[b, BF_VMIN0]), bflt[b, BF_VMAX0])
            c1 = min(max(cmd[e, b, 1], bflt[b, BF_VMIN1]), bflt[b, BF_VMAX1])
            d0 = max(abs(drv[e, b, 0]), abs(c0))
            d1 = max(abs(drv[e, b, 1]), abs(c1))
            drive = bint[b, BI_DRIVE]
            if drive == DRIVE_OMNI:
                speed = math.sqrt(d0 * d0 + d1 * d1)
            elif drive == DRIVE_ACKER:
                speed = d0 * (1.0 + reach * abs(math.tan(min(d1, 1.5))) / bflt[b, BF_WHEELBASE])
            else:
                speed = d0 + d1 * reach
        else:
            speed = math.sqrt(vel[e, b, 0] ** 2 + vel[e, b, 1] ** 2) + abs(omg[e, b]) * reach
        half = max(bflt[b, BF_HALF] * sc, _MIN_HALF)
        r = speed * dt / (prm[PR_SUBFRAC] * half)
        if r > worst:
            worst = r
    n = int(math.ceil(worst)) if worst > 1.0 else 1
    return min(n, int(prm[PR_MAXSUB]))


@njit(cache=True)
def _free_motion(e, dt, gravity, bint, bflt, movable, epar, pos, ang, vel, omg, drv, cmd, bsc):
    """Stages 2-3: drive update and free motion of every movable body over ``dt``."""
    for i in range(movable.shape[0]):
        b = movable[i]
        bsc[e, b, BS_X0] = pos[e, b, 0]
        bsc[e, b, BS_Y0] = pos[e, b, 1]
        bsc[e, b, BS_T0] = ang[e, b]
        bsc[e, b, BS_VX0] = vel[e, b, 0]
        bsc[e, b, BS_VY0] = vel[e, b, 1]
        bsc[e, b, BS_W0] = omg[e, b]
        mu_g = epar[e, b, EP_FRICTION] * gravity
        if bint[b, BI_KIND] == DRIVEN:
            drive = bint[b, BI_DRIVE]
            d0, d1 = drive_update(
                drive, drv[e, b, 0], drv[e, b, 1], cmd[e, b, 0], cmd[e, b, 1],
                bflt[b, BF_VMIN0], bflt[b, BF_VMIN1], bflt[b, BF_VMAX0], bflt[b, BF_VMAX1],
                bflt[b, BF_ACC0], bflt[b, BF_ACC1], bflt[b, BF_TAU], mu_g, dt,
            )
            drv[e, b, 0] = d0
            drv[e, b, 1] = d1
            # The drive moves the body origin; the COM rides along at its body-frame offset.
            sc = epar[e, b, EP_SCALE]
            lx, ly = bflt[b, BF_COMX] * sc, bflt[b, BF_COMY] * sc
            th = ang[e, b]
            wb = bflt[b, BF_WHEELBASE]
            dx, dy, dth = drive_motion(drive, d0, d1, th, wb, dt)
            th2 = th + dth
            vx, vy, w = drive_twist(drive, d0, d1, th2, wb)
            if lx == 0.0 and ly == 0.0:
                pos[e, b, 0] += dx
                pos[e, b, 1] += dy
                ang[e, b] = th2
                bsc[e, b, BS_VXF] = vx
                bsc[e, b, BS_VYF] = vy
            else:
                c, s = math.cos(th), math.sin(th)
                ox = pos[e, b, 0] - (c * lx - s * ly)
                oy = pos[e, b, 1] - (s * lx + c * ly)
                c, s = math.cos(th2), math.sin(th2)
                rx, ry = c * lx - s * ly, s * lx + c * ly
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


@njit(cache=True)
def _write_contacts(e, npairs, dts, gravity, prs, bint, epar, bsc, bis, pfl, cti, ctf, ctn,
                    hl):
    """Stage 7: touching pairs of the last sub-step into the contact buffers."""
    n = 0
    cap = cti.shape[1]
    maxpen = 0.0
    for k in range(npairs):
        if pfl[e, k, PF_TOUCH] <= 0.0:
            continue
        a = prs[e, k, PR_A]
        b = prs[e, k, PR_B]
        depth_now = pfl[e, k, 2]
        if depth_now > maxpen:
            maxpen = depth_now
        if n >= cap:
            continue
        fn = (pfl[e, k, PF_LPOS] / dts + pfl[e, k, PF_LVEL] + pfl[e, k, PF_LVEL2]) / dts
        ft = (pfl[e, k, PF_LTAN] / dts + pfl[e, k, PF_LVT]) / dts
        raw = fn
        # A contact cannot carry more than the traction of a drive pushing into it.
        if bint[a, BI_KIND] == DRIVEN:
            fn = min(fn, epar[e, a, EP_FRICTION] * epar[e, a, EP_MASS] * gravity)
        if prs[e, k, PR_SP] < 0 and bint[b, BI_KIND] == DRIVEN:
            fn = min(fn, epar[e, b, EP_FRICTION] * epar[e, b, EP_MASS] * gravity)
        # Inside a passive chain that drives push, no contact carries more than their traction.
        if bint[a, BI_KIND] == PASSIVE:
            drive = bsc[e, _find(e, a, bis), BS_DRIVE]
            if drive > 0.0:
                fn = min(fn, drive)
        if raw > fn:
            ft *= fn / raw
        cti[e, n, 0] = a
        cti[e, n, 1] = b
        cti[e, n, 2] = prs[e, k, PR_SP]
        ctf[e, n, CT_NX] = pfl[e, k, 0]
        ctf[e, n, CT_NY] = pfl[e, k, 1]
        npts = pfl[e, k, 3]
        ctf[e, n, CT_P1X] = pfl[e, k, 4]
        ctf[e, n, CT_P1Y] = pfl[e, k, 5]
        ctf[e, n, CT_P2X] = pfl[e, k, 7]
        ctf[e, n, CT_P2Y] = pfl[e, k, 8]
        ctf[e, n, CT_PX] = 0.5 * (pfl[e, k, 4] + pfl[e, k, 7])
        ctf[e, n, CT_PY] = 0.5 * (pfl[e, k, 5] + pfl[e, k, 8])
        ctf[e, n, CT_NPTS] = npts
        dmax = pfl[e, k, PF_DMAX]
        ctf[e, n, CT_DEPTH] = dmax if dmax > 0.0 else depth_now
        ctf[e, n, CT_FN] = fn
        ctf[e, n, CT_FT] = ft
        n += 1
    ctn[e] = n
    hl[e, HL_MAXPEN] = maxpen


@njit(cache=True)
def step_env(e, prm, bint, bflt, pint, pvert, pflt, sint, svert, sflt, grid, gstart, gitem,
             movable, epar, pos, ang, vel, omg, drv, cmd, bsc, bis, aabb, stamp, prs, pfl, pord,
             vbuf, cbuf, cti, ctf, ctn, hl):
    """Advance env ``e`` by one step of ``prm[PR_DT]`` seconds."""
    gravity = prm[PR_G]
    slop = prm[PR_SLOP]
    tol = prm[PR_REST]
    nsub = _substeps(e, prm, bint, bflt, movable, epar, vel, omg, drv, cmd)
    dts = prm[PR_DT] / nsub
    cap = prs.shape[1]
    max_sweeps = int(prm[PR_SWEEPS])
    most = 0
    overflow = 0
    npairs = 0
    for _ in range(nsub):
        _free_motion(e, dts, gravity, bint, bflt, movable, epar, pos, ang, vel, omg, drv, cmd,
                     bsc)
        body_boxes(e, movable, bflt, epar, bsc, tol + 2.0 * slop, aabb)
        found = find_pairs(e, movable, aabb, sint, sflt, grid, gstart, gitem, stamp, prs)
        if found > cap:
            overflow += found - cap
        npairs = min(found, cap)
        touching = prepare(e, npairs, prs, pos, ang, epar, bint, bflt, pint, pvert, pflt, sint,
                           svert, sflt, tol, gravity, movable, bsc, bis, vbuf, cbuf, pfl)
        if touching == 0:
            # Nothing touches after free motion, so no correction can start: the free motion
            # stands (positions and velocities are already written).
            continue
        order = pord[e, sort_pairs(e, npairs, prs, bis, pfl, pord)]
        ns = sweeps(e, npairs, order, max_sweeps, prs, pos, ang, epar, bint, pint, pvert, pflt,
                    sint, svert, sflt, tol, slop, bsc, bis, movable, vbuf, cbuf, pfl)
        if ns > most:
            most = ns
        velocity_pass(e, npairs, order, dts, prs, pos, ang, vel, omg, epar, bint, movable, bsc,
                      bis, pfl)
    _write_contacts(e, npairs, dts, gravity, prs, bint, epar, bsc, bis, pfl, cti, ctf, ctn, hl)
    hl[e, HL_SWEEPS] = most
    hl[e, HL_NSUB] = nsub
    hl[e, HL_OVERFLOW] = overflow


@njit(cache=True, _nrt=False)
def step_serial(active, prm, bint, bflt, pint, pvert, pflt, sint, svert, sflt, grid, gstart,
                gitem, movable, epar, pos, ang, vel, omg, drv, cmd, bsc, bis, aabb, stamp, prs, pfl,
                pord, vbuf, cbuf, cti, ctf, ctn, hl):
    """Step every env whose ``active`` flag is set, one after the other (fastest for a few)."""
    for e in range(pos.shape[0]):
        if not active[e]:
            continue
        step_env(e, prm, bint, bflt, pint, pvert, pflt, sint, svert, sflt, grid, gstart, gitem,
                 movable, epar, pos, ang, vel, omg, drv, cmd, bsc, bis, aabb, stamp, prs, pfl,
                 pord, vbuf, cbuf, cti, ctf, ctn, hl)


@njit(cache=True, parallel=True, _nrt=False)
def step_parallel(active, prm, bint, bflt, pint, pvert, pflt, sint, svert, sflt, grid, gstart,
                  gitem, movable, epar, pos, ang, vel, omg, drv, cmd, bsc, bis, aabb, stamp, prs,
                  pfl, pord, vbuf, cbuf, cti, ctf, ctn, hl):
    """Step the active envs with ``prange`` over envs (no reductions: bit-identical to serial)."""
    for e in prange(pos.shape[0]):
        if not active[e]:
            continue
        step_env(e, prm, bint, bflt, pint, pvert, pflt, sint, svert, sflt, grid, gstart, gitem,
                 movable, epar, pos, ang, vel, omg, drv, cmd, bsc, bis, aabb, stamp, prs, pfl,
                 pord, vbuf, cbuf, cti, ctf, ctn, hl)
