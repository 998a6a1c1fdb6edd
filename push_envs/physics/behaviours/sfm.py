"""sfm: the social force model (IR-SIM's social_force_model and SocialForceModelBatch).

Each body integrates one step of ``v += dt a`` [m/s] from its current velocity, with::

    a = alpha_D (v0 e_goal - v) / tau                      desired force (Helbing-Molnar)
      + alpha_S sum over neighbours of f_v t + f_a n(t)     anisotropic social force
      + alpha_O sum over segments of exp(-d / sigma) u      obstacle force

where, per neighbour at distance dist in direction d_hat, t = lambda (v - v_other) + d_hat,
B = gamma |t|, theta the signed angle from t to d_hat, gap = max(dist - 2 safety_radius, 0),
f_v = -exp(-gap / B - (n_velocity B theta)^2) and f_a = -sign(theta) exp(-gap / B -
(n_angular B theta)^2) (Moussaid-Helbing 2009); and per line segment within 5 sigma + r of
the centre, d the gap from the body's disc to the segment's nearest point (0 when touching)
and u the unit vector from that point to the centre (Helbing-Molnar 1995's sum, so two
facing walls cancel). The speed is then capped at ``vmax``. v0 e_goal is IR-SIM's desired
velocity rescaled to ``vmax``.

Per object (``behavior: {name: sfm}``), a body's neighbours are the discs within
``neighbor_threshold`` of it. As a group (``group_behavior: {name: sfm}``), every member
reacts to every other member and to the bodies outside the group, within
``neighbor_threshold``, and members listed together in ``social_groups`` (indices in the
group's order) also feel coherence (a pull to their group's centre once farther than
(size - 1) / 2 m), repulsion (a push from members nearer than
``group_repulsion_threshold``, or their summed radii) and gaze (braking while the others'
centre lies more than ``gaze_vision_angle`` [deg] off the walking direction), after
Moussaid et al. 2010.

A diff drive follows the velocity through IR-SIM's vel_world2diff (the rate limit of its
velocity range, the step time, a 0.02 rad tolerance); an omni drive takes it rotated.
"""

from __future__ import annotations

import math

from ..abi import CFunction
from ..arrays import load_world
from ..jit import compiled
from .arrays import GR_COUNT
from .arrays import GR_START
from .arrays import load_behaviour
from .common import desired_omni
from .common import disc_in_reach
from .common import follow_velocity
from .common import own_state
from .common import segments_seen
from .common import step_time
from .common import targets
from .common import vel_range
from .layout import AG_NX
from .layout import AG_NY
from .layout import BI_NSEG
from .layout import BI_SEG0
from .layout import BI_SOCIAL
from .layout import SN_CX
from .layout import SN_CY
from .layout import SN_R
from .layout import SN_VX
from .layout import SN_VY
from .layout import SN_X
from .layout import SN_Y
from .signatures import BODY_SIG
from .signatures import GROUP_SIG

P_VMAX = 0  # [m/s]
P_THRESH = 1  # neighbor_threshold [m]
P_TAU = 2  # relaxation_time [s]
P_FD = 3  # force_factor_desired
P_FS = 4  # force_factor_social
P_FO = 5  # force_factor_obstacle
P_SIGMA = 6  # sigma_obstacle [m]
P_LAMBDA = 7  # lambda_importance
P_GAMMA = 8  # gamma
P_NA = 9  # n_angular
P_NV = 10  # n_velocity
P_SAFETY = 11  # safety_radius [m]
P_FC = 12  # force_factor_coherence (group)
P_FGR = 13  # force_factor_group_repulsion (group)
P_GRT = 14  # group_repulsion_threshold [m] (group; NaN: the summed radii)
P_FG = 15  # force_factor_gaze (group)
P_GAZE = 16  # gaze_vision_angle [deg] (group)
PARAMS = {"vmax": 1.5, "neighbor_threshold": 10.0, "relaxation_time": 0.5,
          "force_factor_desired": 1.0, "force_factor_social": 2.1,
          "force_factor_obstacle": 10.0, "sigma_obstacle": 0.8, "lambda_importance": 2.0,
          "gamma": 0.35, "n_angular": 2.0, "n_velocity": 3.0, "safety_radius": 0.0}
"""sfm's parameters, in column order, with IR-SIM's defaults."""
GROUP_PARAMS = dict(PARAMS, force_factor_coherence=2.0, force_factor_group_repulsion=1.0,
                    group_repulsion_threshold=None, force_factor_gaze=3.0,
                    gaze_vision_angle=90.0)
"""The sfm group's parameters (``social_groups`` aside), in column order."""

# rows of lines[e, k, :] describing a neighbour: position, velocity, radius
NB_X = 0
NB_Y = 1
NB_VX = 2
NB_VY = 3
NB_R = 4


@compiled
def _row(lines, e, k, x, y, vx, vy, r):
    lines[e, k, NB_X] = x
    lines[e, k, NB_Y] = y
    lines[e, k, NB_VX] = vx
    lines[e, k, NB_VY] = vy
    lines[e, k, NB_R] = r


@compiled
def social_force(lines, e, n, skip, x, y, vx, vy, prm, b):
    """The summed social force on a body at (x, y) [m] moving at (vx, vy) [m/s] from the
    neighbour rows 0..n-1 of ``lines[e]`` (row ``skip`` is the body itself), with body b's
    parameters. Neighbours farther than neighbor_threshold or nearer than 1e-6 m push
    nothing."""
    lam = prm[b, P_LAMBDA]
    gamma = prm[b, P_GAMMA]
    n_a = prm[b, P_NA]
    n_v = prm[b, P_NV]
    reach = prm[b, P_THRESH]
    safety = prm[b, P_SAFETY]
    fx = 0.0
    fy = 0.0
    for k in range(n):
        if k == skip:
            continue
        dx = lines[e, k, NB_X] - x
        dy = lines[e, k, NB_Y] - y
        dist = math.sqrt(dx * dx + dy * dy)
        if dist < 1e-6 or dist > reach:
            continue
        hx = dx / dist
        hy = dy / dist
        tx = lam * (vx - lines[e, k, NB_VX]) + hx
        ty = lam * (vy - lines[e, k, NB_VY]) + hy
        tn = math.sqrt(tx * tx + ty * ty)
        if tn < 1e-9:
            continue
        tx /= tn
        ty /= tn
        big_b = gamma * tn
        theta = math.atan2(tx * hy - ty * hx, tx * hx + ty * hy)
        gap = max(dist - 2.0 * safety, 0.0)
        f_v = -math.exp(-gap / big_b - (n_v * big_b * theta) ** 2)
        sgn = 1.0 if theta > 0.0 else (-1.0 if theta < 0.0 else 0.0)
        f_a = -sgn * math.exp(-gap / big_b - (n_a * big_b * theta) ** 2)
        fx += f_v * tx - f_a * ty
        fy += f_v * ty + f_a * tx
    return fx, fy


@compiled
def obstacle_force(segw, nbi, e, first, ns, x, y, r, sigma):
    """The summed obstacle force on a disc of radius r [m] at (x, y) from the segments
    ``segw[e, nbi[e, first + k]]``, k < ns (IR-SIM's exponential repulsion, decay sigma [m];
    a segment through the centre pushes along +x)."""
    cutoff = 5.0 * sigma + r
    fx = 0.0
    fy = 0.0
    for k in range(first, first + ns):
        j = nbi[e, k]
        x1 = segw[e, j, 0]
        y1 = segw[e, j, 1]
        sx = segw[e, j, 2] - x1
        sy = segw[e, j, 3] - y1
        l2 = sx * sx + sy * sy
        cx = x1
        cy = y1
        if l2 >= 1e-12:
            t = ((x - x1) * sx + (y - y1) * sy) / l2
            t = max(0.0, min(1.0, t))
            cx = x1 + t * sx
            cy = y1 + t * sy
        dx = x - cx
        dy = y - cy
        dc = math.sqrt(dx * dx + dy * dy)
        if dc > cutoff:
            continue
        if dc < 1e-9:
            fx += 1.0
            continue
        amount = math.exp(-max(dc - r, 0.0) / sigma)
        fx += amount * dx / dc
        fy += amount * dy / dc
    return fx, fy


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def desired(e, b, B, vmax):
    """IR-SIM's desired velocity of body b, rescaled to ``vmax`` [m/s] (zero at the goal)."""
    dx, dy = desired_omni(e, b, B.snap, B.bi, B.bf, B.gq, B.gs)
    norm = math.sqrt(dx * dx + dy * dy)
    if norm > 1e-9:
        return vmax * dx / norm, vmax * dy / norm
    return dx, dy


@compiled
def cap(vx, vy, vmax):
    """(vx, vy) [m/s] with its speed capped at vmax."""
    speed = math.sqrt(vx * vx + vy * vy)
    if speed > vmax and speed > 1e-9:
        s = vmax / speed
        return vx * s, vy * s
    return vx, vy


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def command(e, b, W, B, wx, wy):
    """Body b follows the world velocity (wx, wy) [m/s]: a diff drive through
    vel_world2diff (0.02 rad tolerance), an omni drive rotated; clipped to its range."""
    dt = step_time(W)
    _lo1, hi1 = vel_range(e, b, 1, B.snap, B.bf, dt)
    follow_velocity(e, b, W, B, wx, wy, hi1, dt, 0.02, 0.02)


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def sfm(e, b, W, B):
    """Body b's sfm command in env e (per object) into ``W.cmd``."""
    snap, bi, prm = B.snap, B.bi, B.prm
    x, y, vx, vy, r = own_state(snap, e, b)
    vmax = prm[b, P_VMAX]
    thr2 = prm[b, P_THRESH] ** 2
    n = 0
    for o in range(bi.shape[0]):
        if disc_in_reach(e, b, o, bi, snap, x, y, thr2):
            _row(B.lines, e, n, snap[e, o, SN_CX], snap[e, o, SN_CY], snap[e, o, SN_VX],
                 snap[e, o, SN_VY], snap[e, o, SN_R])
            n += 1
    ns = segments_seen(e, b, B, 0)
    vdx, vdy = desired(e, b, B, vmax)
    fsx, fsy = social_force(B.lines, e, n, -1, x, y, vx, vy, prm, b)
    fox, foy = obstacle_force(B.segw, B.nbi, e, 0, ns, x, y, r, prm[b, P_SIGMA])
    tau = prm[b, P_TAU]
    ax = prm[b, P_FD] * (vdx - vx) / tau + prm[b, P_FS] * fsx + prm[b, P_FO] * fox
    ay = prm[b, P_FD] * (vdy - vy) / tau + prm[b, P_FS] * fsy + prm[b, P_FO] * foy
    dt = step_time(W)
    wx, wy = cap(vx + dt * ax, vy + dt * ay, vmax)
    command(e, b, W, B, wx, wy)


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def _group_forces(e, k, members, m, B, prm, b):
    """Coherence, repulsion and gaze on member k (body members[k]) of its social group
    (members sharing its BI_SOCIAL), unweighted: six numbers."""
    snap = B.snap
    me = members[k]
    sg = B.bi[me, BI_SOCIAL]
    px = snap[e, me, SN_X]
    py = snap[e, me, SN_Y]
    cx = 0.0
    cy = 0.0
    size = 0
    rx = 0.0
    ry = 0.0
    grt = prm[b, P_GRT]
    for q in range(m):
        o = members[q]
        if B.bi[o, BI_SOCIAL] != sg:
            continue
        ox = snap[e, o, SN_X]
        oy = snap[e, o, SN_Y]
        cx += ox
        cy += oy
        size += 1
        if q != k:
            ddx = px - ox
            ddy = py - oy
            thr = grt if not math.isnan(grt) else snap[e, me, SN_R] + snap[e, o, SN_R]
            if math.hypot(ddx, ddy) < thr:
                rx += ddx
                ry += ddy
    # coherence: toward the centre once farther than (size - 1) / 2 m, ramped by tanh
    mx = cx / size
    my = cy / size
    relx = mx - px
    rely = my - py
    soft = (math.tanh(math.hypot(relx, rely) - (size - 1) / 2.0) + 1.0) / 2.0
    # gaze: brake along v while the others' centre is out of the vision cone
    ox = (size * mx - px) / (size - 1)
    oy = (size * my - py) / (size - 1)
    gx = ox - px
    gy = oy - py
    vx = snap[e, me, SN_VX]
    vy = snap[e, me, SN_VY]
    speed = math.hypot(vx, vy)
    dist = math.hypot(gx, gy)
    rot = 0.0
    if speed > 1e-9 and dist > 1e-9:
        cphi = (vx * gx + vy * gy) / (speed * dist)
        phi = math.acos(min(max(cphi, -1.0), 1.0))
        rot = max(phi - math.radians(prm[b, P_GAZE]), 0.0)
    return relx * soft, rely * soft, rx, ry, -rot * vx, -rot * vy


@compiled
def sfm_group(e, g, W, B):
    """The commands of sfm group g's members in env e, all from one snapshot."""
    snap, bi, prm = B.snap, B.bi, B.prm
    first = B.grp[g, GR_START]
    m = B.grp[g, GR_COUNT]
    members = B.gmem[first:first + m]
    b0 = members[0]  # the group's parameters are on every member's row
    # rows 0..m-1: the members (at their origin); then the other bodies (at their centroid)
    for k in range(m):
        o = members[k]
        _row(B.lines, e, k, snap[e, o, SN_X], snap[e, o, SN_Y], snap[e, o, SN_VX],
             snap[e, o, SN_VY], snap[e, o, SN_R])
    n = m
    for o in range(bi.shape[0]):
        if bi[o, BI_NSEG] > 0 or not targets(bi, b0, o):
            continue
        inside = False
        for q in range(m):
            if members[q] == o:
                inside = True
        if inside:
            continue
        _row(B.lines, e, n, snap[e, o, SN_CX], snap[e, o, SN_CY], snap[e, o, SN_VX],
             snap[e, o, SN_VY], snap[e, o, SN_R])
        n += 1
    ns = 0
    for o in range(bi.shape[0]):
        if bi[o, BI_NSEG] == 0 or not targets(bi, b0, o):
            continue
        for j in range(bi[o, BI_SEG0], bi[o, BI_SEG0] + bi[o, BI_NSEG]):
            B.nbi[e, ns] = j
            ns += 1
    dt = step_time(W)
    vmax = prm[b0, P_VMAX]
    tau = prm[b0, P_TAU]
    for k in range(m):
        b = members[k]
        x, y, vx, vy, r = own_state(snap, e, b)
        vdx, vdy = desired(e, b, B, vmax)
        fsx, fsy = social_force(B.lines, e, n, k, x, y, vx, vy, prm, b0)
        fox, foy = obstacle_force(B.segw, B.nbi, e, 0, ns, x, y, r, prm[b0, P_SIGMA])
        ax = prm[b0, P_FD] * (vdx - vx) / tau + prm[b0, P_FS] * fsx + prm[b0, P_FO] * fox
        ay = prm[b0, P_FD] * (vdy - vy) / tau + prm[b0, P_FS] * fsy + prm[b0, P_FO] * foy
        if bi[b, BI_SOCIAL] >= 0:
            chx, chy, rpx, rpy, gzx, gzy = _group_forces(e, k, members, m, B, prm, b0)
            ax += prm[b0, P_FC] * chx + prm[b0, P_FGR] * rpx + prm[b0, P_FG] * gzx
            ay += prm[b0, P_FC] * chy + prm[b0, P_FGR] * rpy + prm[b0, P_FG] * gzy
        wx, wy = cap(vx + dt * ax, vy + dt * ay, vmax)
        B.agt[e, b, AG_NX] = wx
        B.agt[e, b, AG_NY] = wy
    for k in range(m):
        b = members[k]
        if B.manual[b] == 0:
            command(e, b, W, B, B.agt[e, b, AG_NX], B.agt[e, b, AG_NY])


def sfm_c(e, b, wp, bp):
    """The C function of per-object sfm (signatures.BODY_SIG)."""
    sfm(e, b, load_world(wp), load_behaviour(bp))


def sfm_group_c(e, g, wp, bp):
    """The C function of the sfm group behaviour (signatures.GROUP_SIG)."""
    sfm_group(e, g, load_world(wp), load_behaviour(bp))


SFM = CFunction(sfm_c, BODY_SIG)
SFM_GROUP = CFunction(sfm_group_c, GROUP_SIG)
