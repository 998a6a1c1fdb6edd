"""What every behaviour reads: angles, IR-SIM's velocity conversions, the goal, the limits,
and the snapshot of the bodies taken once per step.

IR-SIM's conventions, kept here so that each behaviour module is only its own algorithm:

* a body's *state* is its origin pose (x [m], y [m], theta [rad]); the engine moves centres of
  mass, so the pose is taken back to the origin (``frames.origin_pose``);
* a body's *velocity_xy* is its drive's velocity in the world frame [m/s] (diff and acker:
  the speed along the heading; omni: the body-frame velocity rotated), a passive body's its
  centre of mass's, an immovable body's zero;
* a body is seen by the others as a disc at its geometry centroid, of its minimum bounding
  radius plus 0.1 m (IR-SIM's ``rvo_neighbor_state``), or, for a line string, as its segments;
* the *desired omni velocity* points at the current goal, at the body's speed limit along
  each world axis (diff and acker: the linear limit on both), and is zero within 0.1 m of it.

All behaviours of a step read one snapshot (:func:`snapshot`), taken before any command is
written, so the result does not depend on the order of the bodies, and env i of a batch is
env i of a single world.
"""

from __future__ import annotations

import math

from ..frames import origin_pose_seen
from ..jit import compiled
from ..kinematics import DRIVE_OMNI_ANGULAR
from ..kinematics import draw_noise
from ..kinematics import drive_motion
from ..kinematics import drive_update
from ..kinematics import irsim_motion
from ..kinematics import irsim_step
from ..layout import BF_ACC0
from ..layout import BF_ACC1
from ..layout import BF_NOISE
from ..layout import BF_TAU
from ..layout import BF_VMAX0
from ..layout import BF_VMAX1
from ..layout import BF_VMIN0
from ..layout import BF_VMIN1
from ..layout import BF_WHEELBASE
from ..layout import BI_DRIVE
from ..layout import BI_KIND
from ..layout import BS_D2
from ..layout import CM_CONTACT
from ..layout import DRIVEN
from ..layout import EP_FRICTION
from ..layout import EP_SCALE
from ..layout import IS_STOP
from ..layout import PR_DT
from ..layout import PR_G
from ..layout import PR_MODE
from ..layout import PR_NOISE
from ..layout import YW_STATE
from .layout import BF_ACCE
from .layout import BF_CX
from .layout import BF_CY
from .layout import BF_RADIUS
from .layout import BF_VMAX
from .layout import BF_VMIN
from .layout import BI_KIN
from .layout import BI_MOVES
from .layout import BI_NSEG
from .layout import BI_ROLE
from .layout import BI_SEG0
from .layout import BI_TARGET
from .layout import DESIRED_THRESHOLD
from .layout import GQ_DIMS
from .layout import GQ_T
from .layout import GQ_X
from .layout import GQ_Y
from .layout import GS_COUNT
from .layout import GS_HEAD
from .layout import KIN_ACKER
from .layout import KIN_DIFF
from .layout import KIN_NONE
from .layout import KIN_OMNI
from .layout import KIN_OMNI_ANGULAR
from .layout import RADIUS_EXTEND
from .layout import ROLE_OBSTACLE
from .layout import ROLE_ROBOT
from .layout import SN_CX
from .layout import SN_CY
from .layout import SN_R
from .layout import SN_T
from .layout import SN_V0
from .layout import SN_VX
from .layout import SN_VY
from .layout import SN_X
from .layout import SN_Y
from .layout import TARGET_ALL
from .layout import TARGET_OBSTACLE
from .layout import TARGET_ROBOT

PI = math.pi
TWO_PI = 2.0 * math.pi


@compiled
def wrap_to_pi(rad):
    """``rad`` [rad] wrapped to [-pi, pi) as IR-SIM's WrapToPi (a non-finite angle reads 0)."""
    if not math.isfinite(rad):
        return 0.0
    a = rad + PI
    # Python's float modulo, without its fmod call for the usual range: fmod is exact, so
    # in [0, 2 pi) it is a itself, in [-2 pi, 0) it is a + 2 pi (one rounding, as Python's
    # sign fix), and in [2 pi, 4 pi) a - 2 pi, exact by Sterbenz's lemma
    if 0.0 <= a < TWO_PI:
        m = a
    elif -TWO_PI <= a < 0.0:
        m = a + TWO_PI
    elif TWO_PI <= a < 2.0 * TWO_PI:
        m = a - TWO_PI
    else:
        m = a % TWO_PI
    return m - PI


@compiled
def world_to_diff(theta, vx, vy, w_max, guarantee_time, tolerance, mini_speed):
    """IR-SIM's vel_world2diff: the (v [m/s], omega [rad/s]) command of a differential drive
    at heading ``theta`` [rad] that follows the world velocity (vx, vy) [m/s].

    Below ``mini_speed`` [m/s] it stops. Otherwise it turns toward the velocity's direction
    at the rate that closes the heading error in ``guarantee_time`` [s], at most ``w_max``,
    unless the error is within ``tolerance`` [rad], and drives at the speed's projection on
    the heading, never backwards.
    """
    speed = math.sqrt(vx * vx + vy * vy)
    if speed <= mini_speed:
        return 0.0, 0.0
    diff = wrap_to_pi(theta - math.atan2(vy, vx))
    w = 0.0
    if abs(diff) >= tolerance:
        w = -diff / guarantee_time
        if w > w_max:
            w = w_max
        if w < -w_max:
            w = -w_max
    v = speed * math.cos(diff)
    if v < 0.0:
        v = 0.0
    return v, w


@compiled
def world_to_omni(theta, vx, vy):
    """IR-SIM's vel_world2omni: the body-frame (forward, lateral) [m/s] of the world
    velocity (vx, vy) [m/s] for a body at heading ``theta`` [rad]."""
    c = math.cos(theta)
    s = math.sin(theta)
    return vx * c + vy * s, -vx * s + vy * c


@compiled
def goal_of(e, b, gq, gs):
    """Body b's current goal in env e: (has_goal, x [m], y [m], theta [rad], dims)."""
    n = gs[e, b, GS_COUNT]
    if n <= 0:
        return False, 0.0, 0.0, 0.0, 0
    h = gs[e, b, GS_HEAD]
    return (True, gq[e, b, h, GQ_X], gq[e, b, h, GQ_Y], gq[e, b, h, GQ_T],
            int(gq[e, b, h, GQ_DIMS]))


@compiled
def desired_omni(e, b, snap, bi, bf, gq, gs):
    """IR-SIM's desired_omni_vel of body b in env e [m/s, world frame]: toward the goal at
    the speed limit along each axis, zero within 0.1 m of it or without a goal."""
    has, gx, gy, _gt, _d = goal_of(e, b, gq, gs)
    if not has:
        return 0.0, 0.0
    dx = gx - snap[e, b, SN_X]
    dy = gy - snap[e, b, SN_Y]
    if math.sqrt(dx * dx + dy * dy) <= DESIRED_THRESHOLD:
        return 0.0, 0.0
    rad = wrap_to_pi(math.atan2(dy, dx))
    sx = bf[b, BF_VMAX]
    kin = bi[b, BI_KIN]
    sy = sx if (kin == KIN_DIFF or kin == KIN_ACKER) else bf[b, BF_VMAX + 1]
    return sx * math.cos(rad), sy * math.sin(rad)


@compiled
def vel_range(e, b, k, snap, bf, dt):
    """IR-SIM's get_vel_range for command component k of body b: (lowest, highest), the
    limits narrowed to what ``acce`` allows from the current drive velocity in ``dt`` [s]."""
    v = snap[e, b, SN_V0 + k]
    a = bf[b, BF_ACCE + k] * dt
    lo = bf[b, BF_VMIN + k]
    hi = bf[b, BF_VMAX + k]
    if v - a > lo:
        lo = v - a
    if v + a < hi:
        hi = v + a
    return lo, hi


@compiled
def targets(bi, b, other):
    """Whether body b's behaviour reacts to body ``other`` (its target_roles)."""
    t = bi[b, BI_TARGET]
    if t == TARGET_ALL:
        return True
    role = bi[other, BI_ROLE]
    return (t == TARGET_ROBOT and role == ROLE_ROBOT) or \
        (t == TARGET_OBSTACLE and role == ROLE_OBSTACLE)


# LLVM-inlined: read once per candidate velocity in rvo's penalty
@compiled(inline="llvm")
def own_state(snap, e, b):
    """What body b's behaviour reads of itself in env e's snapshot: its origin (x, y) [m],
    its velocity (vx, vy) [m/s, world] and its disc radius r [m]."""
    return snap[e, b, SN_X], snap[e, b, SN_Y], snap[e, b, SN_VX], snap[e, b, SN_VY], \
        snap[e, b, SN_R]


# LLVM-inlined: the test of every pair of bodies, in each behaviour's neighbour loop
@compiled(inline="llvm")
def disc_in_reach(e, b, o, bi, snap, x, y, thr2):
    """Whether body b's behaviour sees body o as a neighbour disc in env e: o is another body,
    a disc to the others (no line segments), one b reacts to (:func:`targets`), with its
    centroid closer to (x, y) [m] than the square root of ``thr2`` [m^2]."""
    if o == b or bi[o, BI_NSEG] > 0 or not targets(bi, b, o):
        return False
    return (x - snap[e, o, SN_CX]) ** 2 + (y - snap[e, o, SN_CY]) ** 2 < thr2


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def segments_seen(e, b, B, first):
    """Every line segment body b's behaviour reacts to in env e (of the line-string bodies it
    targets), as segment indices written into ``B.nbi[e]`` from ``first`` on; returns their
    number."""
    bi = B.bi
    ns = 0
    for o in range(bi.shape[0]):
        if o == b or bi[o, BI_NSEG] == 0 or not targets(bi, b, o):
            continue
        for j in range(bi[o, BI_SEG0], bi[o, BI_SEG0] + bi[o, BI_NSEG]):
            B.nbi[e, first + ns] = j
            ns += 1
    return ns


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def snapshot(e, W, B):
    """Fill ``B.snap[e]`` (every body's pose, centroid, velocity, disc radius and drive
    velocity) and ``B.segw[e]`` (line segments in the world) from env e's state.

    A body stopped by its last collision (IR-SIM's modes other than contact) reads the
    velocity it moved with until its turn in the stage (:func:`advance` zeroes it), as in
    IR-SIM, whose ``step`` zeroes a stopped object's velocity when it comes to that object;
    a body held for a second step reads zero here (the physics zeroed its drive)."""
    bi, bf, snap = B.bi, B.bf, B.snap
    nb = bi.shape[0]
    for b in range(nb):
        x, y, th, c, s = origin_pose_seen(e, b, W.pos, W.ang, W.bflt, W.epar, W.cbuf)
        k = W.epar[e, b, EP_SCALE]
        cx = bf[b, BF_CX] * k
        cy = bf[b, BF_CY] * k
        snap[e, b, SN_X] = x
        snap[e, b, SN_Y] = y
        snap[e, b, SN_T] = th
        snap[e, b, SN_CX] = x + c * cx - s * cy
        snap[e, b, SN_CY] = y + s * cx + c * cy
        snap[e, b, SN_R] = bf[b, BF_RADIUS] * k + RADIUS_EXTEND
        vx = 0.0
        vy = 0.0
        d0 = 0.0
        d1 = 0.0
        if bi[b, BI_MOVES] != 0:
            if W.bint[b, BI_KIND] == DRIVEN:
                d0 = W.drv[e, b, 0]
                d1 = W.drv[e, b, 1]
                kin = bi[b, BI_KIN]
                if kin == KIN_OMNI or kin == KIN_OMNI_ANGULAR:
                    vx = c * d0 - s * d1
                    vy = s * d0 + c * d1
                else:
                    vx = c * d0
                    vy = s * d0
            else:
                vx = W.vel[e, b, 0]
                vy = W.vel[e, b, 1]
        snap[e, b, SN_VX] = vx
        snap[e, b, SN_VY] = vy
        snap[e, b, SN_V0] = d0
        snap[e, b, SN_V0 + 1] = d1
        # a drive's third component: omni_angular's yaw rate (W.yaw), else the spin
        omni_angular = W.bint[b, BI_KIND] == DRIVEN and W.bint[b, BI_DRIVE] == DRIVE_OMNI_ANGULAR
        snap[e, b, SN_V0 + 2] = W.yaw[e, b, 1] if omni_angular else W.omg[e, b]
        n = bi[b, BI_NSEG]
        if n > 0:
            s0 = bi[b, BI_SEG0]
            for j in range(s0, s0 + n):
                for p in range(2):
                    px = B.seg[j, 2 * p] * k
                    py = B.seg[j, 2 * p + 1] * k
                    B.segw[e, j, 2 * p] = x + c * px - s * py
                    B.segw[e, j, 2 * p + 1] = y + s * px + c * py


@compiled
def clip(x, lo, hi):
    """x within [lo, hi]."""
    return lo if x < lo else (hi if x > hi else x)


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def command_in_range(e, b, W, B, c0, c1, c2):
    """Body b's command (c0, c1, c2) in env e, each component clipped to the range its
    limits allow this step (IR-SIM's gen_behavior_vel), written into ``W.cmd``."""
    dt = W.prm[PR_DT]
    lo, hi = vel_range(e, b, 0, B.snap, B.bf, dt)
    c0 = clip(c0, lo, hi)
    lo, hi = vel_range(e, b, 1, B.snap, B.bf, dt)
    c1 = clip(c1, lo, hi)
    lo, hi = vel_range(e, b, 2, B.snap, B.bf, dt)
    c2 = clip(c2, lo, hi)
    write_command(e, b, W, c0, c1, c2)


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def follow_velocity(e, b, W, B, wx, wy, w_max, guarantee_time, tolerance, mini_speed):
    """Body b follows the world velocity (wx, wy) [m/s] in env e: a diff drive through
    :func:`world_to_diff` (turn rate limit w_max [rad/s], guarantee_time [s], heading
    tolerance [rad], mini_speed [m/s]), any other drive rotated (:func:`world_to_omni`); the
    command, clipped to its range (:func:`command_in_range`), into ``W.cmd``."""
    th = B.snap[e, b, SN_T]
    if B.bi[b, BI_KIN] == KIN_DIFF:
        c0, c1 = world_to_diff(th, wx, wy, w_max, guarantee_time, tolerance, mini_speed)
    else:
        c0, c1 = world_to_omni(th, wx, wy)
    command_in_range(e, b, W, B, c0, c1, 0.0)


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def write_command(e, b, W, c0, c1, c2):
    """Body b's command in env e: (c0, c1) into the drive's command, and c2 (omni_angular's
    yaw rate [rad/s]) into its yaw command (``W.yaw``)."""
    W.cmd[e, b, 0] = c0
    W.cmd[e, b, 1] = c1
    if W.bint[b, BI_DRIVE] == DRIVE_OMNI_ANGULAR:
        W.yaw[e, b, 0] = c2


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def step_time(W):
    """The world's step time [s]."""
    return W.prm[PR_DT]


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def driven(W, bi, b):
    """Whether body b has a drive a behaviour can command."""
    return bi[b, BI_KIN] != KIN_NONE and bi[b, BI_MOVES] != 0 and \
        W.bint[b, BI_DRIVE] != 0



# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def advance(e, b, W, B):
    """Move body b's snapshot in env e to where its command takes it this step, had it
    nothing to touch, as the physics' free motion computes it in the world's collision mode
    (``kinematics.free_motion``): in the contact mode the drive's response (limits, lag,
    grip); in IR-SIM's other modes the command as it is (limits and ``acce`` only), and a
    body stopped by its last collision (``IS_STOP``) stays put and reads velocity zero from
    here on, as IR-SIM's ``step`` zeroes a stopped object's velocity at its turn.
    omni_angular drives and noisy ones move by ``kinematics.irsim_motion``, with this step's
    noise (drawn before the stage, :func:`peek_noise`); outside the contact mode every drive
    moves by IR-SIM's Euler step (``kinematics.irsim_step``), as the physics will move it.

    IR-SIM steps its objects one after the other, each behaviour seeing the objects stepped
    before it at their new state and velocity; the stage reproduces that order by advancing
    each body's snapshot once its command is written (the physics then moves every body from
    the state it started the step in)."""
    if B.bi[b, BI_MOVES] == 0:
        return
    snap, bflt = B.snap, W.bflt
    contact = W.prm[PR_MODE] == CM_CONTACT
    if not contact and W.bis[e, b, IS_STOP] != 0:
        for k in range(3):
            snap[e, b, SN_V0 + k] = 0.0
        snap[e, b, SN_VX] = 0.0
        snap[e, b, SN_VY] = 0.0
        return
    if W.bint[b, BI_KIND] != DRIVEN:
        return
    dt = W.prm[PR_DT]
    drive = W.bint[b, BI_DRIVE]
    tau = bflt[b, BF_TAU] if contact else 0.0
    grip = W.epar[e, b, EP_FRICTION] * W.prm[PR_G] if contact else math.inf
    d0, d1 = drive_update(drive, W.drv[e, b, 0], W.drv[e, b, 1], W.cmd[e, b, 0], W.cmd[e, b, 1],
                          bflt[b, BF_VMIN0], bflt[b, BF_VMIN1], bflt[b, BF_VMAX0],
                          bflt[b, BF_VMAX1], bflt[b, BF_ACC0], bflt[b, BF_ACC1], tau, grip, dt)
    th = snap[e, b, SN_T]
    wb = bflt[b, BF_WHEELBASE]
    if drive == DRIVE_OMNI_ANGULAR or bflt[b, BF_NOISE] != 0.0:
        # the physics' own function, its writes (the yaw-rate state and its rollback copy)
        # put back: the physics makes them again from the same values
        y_state = W.yaw[e, b, YW_STATE]
        saved = W.bsc[e, b, BS_D2]
        dx, dy, dth, _vx, _vy, _w = irsim_motion(e, b, drive, d0, d1, th, math.cos(th),
                                                 math.sin(th), W.drv[e, b, 1], wb, tau, dt,
                                                 W.yaw, bflt, W.bsc, not contact)
        if drive == DRIVE_OMNI_ANGULAR:
            snap[e, b, SN_V0 + 2] = W.yaw[e, b, YW_STATE]
        W.yaw[e, b, YW_STATE] = y_state
        W.bsc[e, b, BS_D2] = saved
    elif contact:
        dx, dy, dth = drive_motion(drive, d0, d1, th, wb, dt)
    else:
        dx, dy, dth = irsim_step(drive, d0, d1, 0.0, math.cos(th), math.sin(th), W.drv[e, b, 1],
                                 wb, dt)
    x = snap[e, b, SN_X] + dx
    y = snap[e, b, SN_Y] + dy
    th = th + dth
    c = math.cos(th)
    s = math.sin(th)
    k = W.epar[e, b, EP_SCALE]
    cx = B.bf[b, BF_CX] * k
    cy = B.bf[b, BF_CY] * k
    snap[e, b, SN_X] = x
    snap[e, b, SN_Y] = y
    snap[e, b, SN_T] = th
    snap[e, b, SN_CX] = x + c * cx - s * cy
    snap[e, b, SN_CY] = y + s * cx + c * cy
    # the drive's velocity, noise free (IR-SIM's _velocity is the commanded velocity)
    kin = B.bi[b, BI_KIN]
    if kin == KIN_OMNI or kin == KIN_OMNI_ANGULAR:
        snap[e, b, SN_VX] = c * d0 - s * d1
        snap[e, b, SN_VY] = s * d0 + c * d1
    else:
        snap[e, b, SN_VX] = c * d0
        snap[e, b, SN_VY] = s * d0
    snap[e, b, SN_V0] = d0
    snap[e, b, SN_V0 + 1] = d1


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def peek_noise(e, W):
    """This step's motion noise, drawn before the physics draws it (``kinematics.draw_noise``
    into ``W.yaw``), the env's stream then put back: the physics draws the same numbers, and
    :func:`advance` moves a noisy body by the noise it will have."""
    if W.prm[PR_NOISE] == 0.0:
        return
    stream = W.rng[e]
    draw_noise(e, W.bint, W.bflt, W.movable, W.yaw, W.rng)
    W.rng[e] = stream
