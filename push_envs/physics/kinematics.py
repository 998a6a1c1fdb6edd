"""Drives and free motion: the free-motion stage of a step (``free_motion``, after the
sub-step count), and the drive models it runs.

Drive (driven bodies). A command is clipped to ``[vel_min, vel_max]``; the drive state follows
it as a first-order lag with time constant ``tau`` [s] (solved exactly over the step, so
sub-stepping composes); the change per step is then capped by ``acce`` (per second) and, for
the linear part, by the wheels' grip ``mu * g`` [m/s^2]. The drive state is, per model:

* ``diff``:  [v (m/s) along the heading, omega (rad/s)]
* ``omni``:  [vx, vy] (m/s) in the body frame
* ``omni_angular``: [vx, vy] (m/s) in the body frame and a yaw rate (rad/s), the third column
  (IR-SIM's omnidirectional drive that also turns)
* ``acker``: [v (m/s), steering angle (rad)]; omega = v tan(steer) / wheelbase

Motion noise (IR-SIM's ``kinematics: {noise: true, alpha: [...]}``): the velocity executed in
a step is the drive state plus sigma * z, z standard normal draws made once per step from
the env's own stream (``draw_noise``), sigma = sqrt(alpha0 v^2 + alpha1 w^2) for the linear
and sqrt(alpha2 v^2 + alpha3 w^2) for the second part of a diff or acker drive,
sqrt(alpha_k) for part k of an omni or omni_angular one. The drive state itself stays noise
free, as IR-SIM's commanded velocity does.

In IR-SIM's collision modes other than ``contact`` (``contact`` False), a drive takes its
command as it is, as IR-SIM's do: no lag (tau) and no grip cap, only the limits and ``acce``;
and it moves by IR-SIM's own update (:func:`irsim_step`): one Euler step at the heading it
starts from, an Ackermann drive turning by the steering angle it starts with. Those modes are
IR-SIM's kinematic world, with no forces and no contacts, and that update is its model: an
agent whose path depends on its last few millimetres (a crowd at a near-tie) arrives where and
when IR-SIM's does.

Integration in the contact mode. Driven bodies follow the drive exactly (a circular arc when
turning, not an Euler step: IR-SIM's diff update drifts 7.9 cm from the arc over a 150-step
turn, and the physics follows the law). Passive bodies coast under ground friction: the speed
falls by ``mu g`` per second and the spin by ``mu g / r_g`` (the rim of gyration slides on
the ground), and the position is the exact integral of that constant deceleration, stopping
when the speed reaches zero. Integrating the deceleration inside the step is what makes a
released box stop at v^2 / (2 mu g); a velocity-then-position (symplectic Euler) update stops
short by v dt / 2.
"""

from __future__ import annotations

import math

from .frames import com_offset
from .frames import heading
from .frames import keep_heading
from .jit import compiled
from .layout import BF_ACC0
from .layout import BF_ACC1
from .layout import BF_ACC2
from .layout import BF_ALPHA0
from .layout import BF_ALPHA1
from .layout import BF_ALPHA2
from .layout import BF_ALPHA3
from .layout import BF_COMX
from .layout import BF_COMY
from .layout import BF_NOISE
from .layout import BF_TAU
from .layout import BF_VMAX0
from .layout import BF_VMAX1
from .layout import BF_VMAX2
from .layout import BF_VMIN0
from .layout import BF_VMIN1
from .layout import BF_VMIN2
from .layout import BF_WHEELBASE
from .layout import BI_DRIVE
from .layout import BI_KIND
from .layout import BS_D0
from .layout import BS_D1
from .layout import BS_D2
from .layout import BS_T0
from .layout import BS_TP
from .layout import BS_VX0
from .layout import BS_VXF
from .layout import BS_VY0
from .layout import BS_VYF
from .layout import BS_W0
from .layout import BS_WF
from .layout import BS_X0
from .layout import BS_XP
from .layout import BS_Y0
from .layout import BS_YP
from .layout import DRIVEN
from .layout import EP_FRICTION
from .layout import EP_INERTIA
from .layout import EP_MASS
from .layout import IS_STOP
from .layout import YW_CMD
from .layout import YW_NOISE
from .layout import YW_STATE
from .rng import normal

DRIVE_NONE = 0
DRIVE_DIFF = 1
DRIVE_OMNI = 2
DRIVE_ACKER = 3
DRIVE_OMNI_ANGULAR = 4
DRIVE_NAMES = {"diff": DRIVE_DIFF, "omni": DRIVE_OMNI, "acker": DRIVE_ACKER,
               "omni_angular": DRIVE_OMNI_ANGULAR}


@compiled
def _clip(x, lo, hi):
    return lo if x < lo else (hi if x > hi else x)


@compiled
def drive_update(drive, d0, d1, c0, c1, vmin0, vmin1, vmax0, vmax1, acc0, acc1, tau, grip, dt):
    """New drive state (d0, d1) after ``dt`` [s] toward command (c0, c1).

    ``grip`` is mu * g [m/s^2], the most the wheels can change the linear speed per second.
    """
    t0 = _clip(c0, vmin0, vmax0)
    t1 = _clip(c1, vmin1, vmax1)
    if tau > 0.0:
        f = 1.0 - math.exp(-dt / tau)
        w0 = d0 + (t0 - d0) * f
        w1 = d1 + (t1 - d1) * f
    else:
        w0, w1 = t0, t1
    dd0 = _clip(w0 - d0, -acc0 * dt, acc0 * dt)
    dd1 = _clip(w1 - d1, -acc1 * dt, acc1 * dt)
    cap = grip * dt
    if drive == DRIVE_OMNI or drive == DRIVE_OMNI_ANGULAR:
        m = math.sqrt(dd0 * dd0 + dd1 * dd1)
        if m > cap:
            s = cap / m
            dd0 *= s
            dd1 *= s
    else:
        dd0 = _clip(dd0, -cap, cap)
    return d0 + dd0, d1 + dd1


@compiled
def drive_yaw_update(d2, c2, vmin2, vmax2, acc2, tau, dt):
    """An omni_angular drive's new yaw rate [rad/s] after ``dt`` [s] toward command ``c2``: the
    limits, lag and ``acce`` of ``drive_update``; no grip cap (IR-SIM caps the translation
    only)."""
    t2 = _clip(c2, vmin2, vmax2)
    w2 = d2 + (t2 - d2) * (1.0 - math.exp(-dt / tau)) if tau > 0.0 else t2
    return d2 + _clip(w2 - d2, -acc2 * dt, acc2 * dt)


# LLVM-inlined: a line of every drive's motion
@compiled(inline="llvm")
def yaw_rate(drive, d0, d1, wheelbase):
    """Yaw rate [rad/s] of a differential drive (d1) or an Ackermann one (speed d0 [m/s],
    steering angle d1 [rad], ``wheelbase`` [m]) in drive state (d0, d1)."""
    if drive == DRIVE_ACKER:
        return d0 * math.tan(d1) / wheelbase
    return d1


# LLVM-inlined into drive_twist and irsim_drive_step
@compiled(inline="llvm")
def twist(drive, d0, d1, c, s, wheelbase):
    """:func:`drive_twist` at a heading of cosine ``c`` and sine ``s``."""
    if drive == DRIVE_OMNI:
        return c * d0 - s * d1, s * d0 + c * d1, 0.0
    return c * d0, s * d0, yaw_rate(drive, d0, d1, wheelbase)


@compiled
def drive_twist(drive, d0, d1, theta, wheelbase):
    """World-frame velocity of the drive point and yaw rate: (vx, vy [m/s], omega [rad/s])."""
    return twist(drive, d0, d1, math.cos(theta), math.sin(theta), wheelbase)


@compiled
def drive_twist3(drive, d0, d1, d2, theta, wheelbase):
    """:func:`drive_twist` of any drive, with the third column of an omni_angular one."""
    if drive == DRIVE_OMNI_ANGULAR:
        c = math.cos(theta)
        s = math.sin(theta)
        return c * d0 - s * d1, s * d0 + c * d1, d2
    return drive_twist(drive, d0, d1, theta, wheelbase)


@compiled
def drive_motion(drive, d0, d1, theta, wheelbase, dt):
    """Exact displacement (dx, dy [m], dtheta [rad]) of the drive point over ``dt``."""
    if drive == DRIVE_OMNI:
        c = math.cos(theta)
        s = math.sin(theta)
        return (c * d0 - s * d1) * dt, (s * d0 + c * d1) * dt, 0.0
    v = d0
    w = yaw_rate(drive, d0, d1, wheelbase)
    dth = w * dt
    if abs(dth) < 1e-9:
        # Straight line (second-order accurate midpoint heading for tiny turns).
        hm = theta + 0.5 * dth
        return v * dt * math.cos(hm), v * dt * math.sin(hm), dth
    r = v / w
    return (
        r * (math.sin(theta + dth) - math.sin(theta)),
        r * (math.cos(theta) - math.cos(theta + dth)),
        dth,
    )


# The drive step of free motion: drive_motion, then drive_twist at the new heading, from the
# cosine and sine of the old one (heading's cache). Every trigonometric value is of the same
# angle as in those two calls, so the numbers are theirs:
#
#   omni                    the heading stays: theta + 0.0 is theta but for the sign of a
#                           zero, so the cosine is c and the sine s + 0.0 (sin keeps a zero's
#                           sign)
#   no turn (dth == +-0)    the same for theta + dth and theta + dth / 2: c, and s + dth
#   arc (|dth| >= 1e-9)     cos, sin(theta + dth) serve the displacement and the twist
#   tiny turn               as before: the midpoint heading, then the new one
@compiled
def drive_step(drive, d0, d1, theta, c, s, wheelbase, dt):
    """:func:`drive_motion` and :func:`drive_twist` at the new heading, given ``c``, ``s``
    the cosine and sine of ``theta`` [rad]: (dx, dy [m], dtheta [rad], vx, vy [m/s],
    omega [rad/s], cosine, sine of theta + dtheta)."""
    if drive == DRIVE_OMNI:
        s2 = s + 0.0  # sin(theta + 0.0)
        return ((c * d0 - s * d1) * dt, (s * d0 + c * d1) * dt, 0.0,
                c * d0 - s2 * d1, s2 * d0 + c * d1, 0.0, c, s2)
    v = d0
    w = yaw_rate(drive, d0, d1, wheelbase)
    dth = w * dt
    if dth == 0.0:
        sm = s + 0.5 * dth  # sin(theta + dth / 2)
        s2 = s + dth
        return v * dt * c, v * dt * sm, dth, c * d0, s2 * d0, w, c, s2
    if abs(dth) < 1e-9:
        hm = theta + 0.5 * dth
        c2 = math.cos(theta + dth)
        s2 = math.sin(theta + dth)
        return v * dt * math.cos(hm), v * dt * math.sin(hm), dth, c2 * d0, s2 * d0, w, c2, s2
    c2 = math.cos(theta + dth)
    s2 = math.sin(theta + dth)
    r = v / w
    return r * (s2 - s), r * (c - c2), dth, c2 * d0, s2 * d0, w, c2, s2


@compiled
def drive_motion3(drive, d0, d1, d2, theta, wheelbase, dt):
    """:func:`drive_motion` of any drive, with the third column of an omni_angular one."""
    if drive == DRIVE_OMNI_ANGULAR:
        return _turning_omni(d0, d1, d2, theta, dt)
    return drive_motion(drive, d0, d1, theta, wheelbase, dt)


@compiled
def _turning_omni(vx, vy, w, theta, dt):
    """Displacement of a constant body-frame velocity (vx, vy) [m/s] turning at w [rad/s].

    It sweeps the integral of R(theta + w t) (vx, vy) over the step: with S_c, S_s the
    integrals of cos(theta + w t) and sin(theta + w t), dx = vx S_c - vy S_s and
    dy = vx S_s + vy S_c (for vy = 0 the arc of a diff drive).
    """
    dth = w * dt
    if abs(dth) < 1e-9:
        hm = theta + 0.5 * dth
        c = math.cos(hm)
        s = math.sin(hm)
        return (c * vx - s * vy) * dt, (s * vx + c * vy) * dt, dth
    sc = (math.sin(theta + dth) - math.sin(theta)) / w
    ss = (math.cos(theta) - math.cos(theta + dth)) / w
    return vx * sc - vy * ss, vx * ss + vy * sc, dth


@compiled
def irsim_step(drive, v0, v1, v2, c, s, steer0, wheelbase, dt):
    """IR-SIM's update of a drive executing (v0, v1, v2) for ``dt`` [s] from a heading of
    cosine ``c`` and sine ``s``: (dx, dy [m], dtheta [rad]). One Euler step: the velocity
    turned by the heading it starts from, times dt; an omni_angular drive turns at v2
    [rad/s], a diff one at v1, an Ackermann one at v0 tan(steer0) / wheelbase with
    ``steer0`` [rad] the steering angle of its state before this step (IR-SIM turns the car
    by the angle in its state, then sets the state to the new one)."""
    if drive == DRIVE_OMNI or drive == DRIVE_OMNI_ANGULAR:
        dth = v2 * dt if drive == DRIVE_OMNI_ANGULAR else 0.0
        return (c * v0 - s * v1) * dt, (s * v0 + c * v1) * dt, dth
    w = v0 * math.tan(steer0) / wheelbase if drive == DRIVE_ACKER else v1
    return c * v0 * dt, s * v0 * dt, w * dt


@compiled
def irsim_drive_step(drive, d0, d1, theta, c, s, steer0, wheelbase, dt):
    """:func:`irsim_step` of a diff, omni or Ackermann drive in state (d0, d1) from heading
    ``theta`` [rad] of cosine ``c`` and sine ``s``, then its twist at the new heading, as
    :func:`drive_step` returns them (the new heading's cosine and sine last): the numbers of
    ``irsim_step`` and :func:`twist`, a heading that does not turn (omni, or no yaw rate)
    taking the old cosine and the sine s + 0.0 (sin keeps a zero's sign)."""
    dx, dy, dth = irsim_step(drive, d0, d1, 0.0, c, s, steer0, wheelbase, dt)
    if dth == 0.0:
        c2 = c
        s2 = s + dth
    else:
        c2 = math.cos(theta + dth)
        s2 = math.sin(theta + dth)
    vx, vy, w = twist(drive, d0, d1, c2, s2, wheelbase)
    return dx, dy, dth, vx, vy, w, c2, s2


@compiled
def noise_sigma(drive, b, d0, d1, bflt):
    """Standard deviations of a noisy drive's executed velocity for drive state (d0, d1)."""
    if drive == DRIVE_OMNI or drive == DRIVE_OMNI_ANGULAR:
        return (math.sqrt(bflt[b, BF_ALPHA0]), math.sqrt(bflt[b, BF_ALPHA1]),
                math.sqrt(bflt[b, BF_ALPHA2]))
    return (math.sqrt(bflt[b, BF_ALPHA0] * d0 * d0 + bflt[b, BF_ALPHA1] * d1 * d1),
            math.sqrt(bflt[b, BF_ALPHA2] * d0 * d0 + bflt[b, BF_ALPHA3] * d1 * d1), 0.0)


@compiled
def executed(e, b, drive, d0, d1, d2, bflt, yaw):
    """The velocity a drive executes this step: its state, plus this step's motion noise
    (drawn by ``draw_noise`` into ``yaw[e, b, YW_NOISE:]``) when it has any."""
    if bflt[b, BF_NOISE] == 0.0:
        return d0, d1, d2
    s0, s1, s2 = noise_sigma(drive, b, d0, d1, bflt)
    return (d0 + s0 * yaw[e, b, YW_NOISE], d1 + s1 * yaw[e, b, YW_NOISE + 1],
            d2 + s2 * yaw[e, b, YW_NOISE + 2])


@compiled
def irsim_motion(e, b, drive, d0, d1, th, c, s, steer0, wb, tau, dt, yaw, bflt, bsc, euler):
    """Free motion of an omni_angular drive, one with motion noise, or any drive in IR-SIM's
    own collision modes (``euler``), whose drive state (d0, d1) is already updated: the yaw
    rate's update (omni_angular: command and state in ``yaw[e, b]``, the state kept in BS_D2
    for a rollback), the executed velocity (plus this step's noise), and its motion (dx, dy
    [m], dtheta [rad]: exact, or with ``euler`` IR-SIM's :func:`irsim_step` from the heading
    ``th`` of cosine ``c``, sine ``s``, ``steer0`` the steering angle the step starts with)
    and twist (vx, vy [m/s], omega [rad/s]) at the new heading."""
    d2 = 0.0
    if drive == DRIVE_OMNI_ANGULAR:
        bsc[e, b, BS_D2] = yaw[e, b, YW_STATE]
        d2 = drive_yaw_update(yaw[e, b, YW_STATE], yaw[e, b, YW_CMD], bflt[b, BF_VMIN2],
                              bflt[b, BF_VMAX2], bflt[b, BF_ACC2], tau, dt)
        yaw[e, b, YW_STATE] = d2
    x0, x1, x2 = executed(e, b, drive, d0, d1, d2, bflt, yaw)
    if euler:
        dx, dy, dth = irsim_step(drive, x0, x1, x2, c, s, steer0, wb, dt)
    else:
        dx, dy, dth = drive_motion3(drive, x0, x1, x2, th, wb, dt)
    vx, vy, w = drive_twist3(drive, x0, x1, x2, th + dth, wb)
    return dx, dy, dth, vx, vy, w


@compiled
def noise_bound(e, b, drive, d0, d1, bflt, yaw):
    """Largest change (|n0|, |n1|, |n2|) this step's noise makes to a drive whose state is at
    most (|d0|, |d1|) in size (sub-steps are counted for the executed speed)."""
    if bflt[b, BF_NOISE] == 0.0:
        return 0.0, 0.0, 0.0
    s0, s1, s2 = noise_sigma(drive, b, d0, d1, bflt)
    return (abs(s0 * yaw[e, b, YW_NOISE]), abs(s1 * yaw[e, b, YW_NOISE + 1]),
            abs(s2 * yaw[e, b, YW_NOISE + 2]))


@compiled
def draw_noise(e, bint, bflt, movable, yaw, rng):
    """This step's standard normal draws of every noisy drive of env ``e``, from the env's
    stream ``rng[e]``, into ``yaw[e, b, YW_NOISE:]`` (a rolled-back step restores the stream
    first, so it draws the same again)."""
    for i in range(movable.shape[0]):
        b = movable[i]
        if bint[b, BI_KIND] != DRIVEN or bflt[b, BF_NOISE] == 0.0:
            continue
        yaw[e, b, YW_NOISE] = normal(rng, e, 0.0, 1.0)
        yaw[e, b, YW_NOISE + 1] = normal(rng, e, 0.0, 1.0)
        yaw[e, b, YW_NOISE + 2] = normal(rng, e, 0.0, 1.0) \
            if bint[b, BI_DRIVE] == DRIVE_OMNI_ANGULAR else 0.0


@compiled
def _decelerate(speed, decel, dt):
    """Distance covered [m] and final speed [m/s] under constant deceleration from ``speed``."""
    if decel <= 0.0:
        return speed * dt, speed
    if speed <= decel * dt:
        return 0.5 * speed * speed / decel, 0.0
    return speed * dt - 0.5 * decel * dt * dt, speed - decel * dt


@compiled
def coast(vx, vy, w, mu_g, gyration, dt):
    """Free motion of a passive body over ``dt`` [s] under ground friction.

    ``mu_g`` is mu * g [m/s^2]; ``gyration`` the radius of gyration [m]. Returns
    (dx, dy [m], dtheta [rad], vx, vy [m/s], omega [rad/s]) at the end of the step.
    """
    speed = math.sqrt(vx * vx + vy * vy)
    dx = dy = 0.0
    nvx = nvy = 0.0
    if speed > 0.0:
        dist, ns = _decelerate(speed, mu_g, dt)
        ux = vx / speed
        uy = vy / speed
        dx, dy = ux * dist, uy * dist
        nvx, nvy = ux * ns, uy * ns
    dth = 0.0
    nw = 0.0
    if w != 0.0:
        alpha = mu_g / gyration if gyration > 0.0 else 0.0
        ang, nsw = _decelerate(abs(w), alpha, dt)
        sgn = 1.0 if w > 0.0 else -1.0
        dth = sgn * ang
        nw = sgn * nsw
    return dx, dy, dth, nvx, nvy, nw


# LLVM-inlined: six stores, in the free-motion loop and where a body falls asleep
@compiled(inline="llvm")
def keep_start(e, b, pos, ang, vel, omg, bsc):
    """Keep body b's pose (x, y [m], theta [rad]) and velocity (vx, vy [m/s], omega [rad/s])
    in env e as where the sub-step starts from (``bsc``'s ``BS_X0``..``BS_W0``): what a
    rolled-back step restores."""
    bsc[e, b, BS_X0] = pos[e, b, 0]
    bsc[e, b, BS_Y0] = pos[e, b, 1]
    bsc[e, b, BS_T0] = ang[e, b]
    bsc[e, b, BS_VX0] = vel[e, b, 0]
    bsc[e, b, BS_VY0] = vel[e, b, 1]
    bsc[e, b, BS_W0] = omg[e, b]


# --------------------------------------------------------------------------------------------
# The free-motion stage: every movable body of an env
# --------------------------------------------------------------------------------------------
# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def free_motion(e, dt, gravity, contact, bint, bflt, aw, epar, pos, ang, vel, omg, drv, cmd,
                yaw, bsc, bis, cbuf):
    """The free-motion stage: drive update and free motion of every awake body ``aw`` of env
    ``e`` over ``dt`` [s], under ground friction ``gravity`` [m/s^2] times each body's
    coefficient.

    Keeps the pose and velocity it starts from (``BS_X0``..``BS_W0``, and a drive's state in
    ``BS_D0``..``BS_D2``: what a rolled-back step restores) and the free-motion pose and
    velocity (``BS_XP``.., ``BS_VXF``..: what the velocity pass measures the contacts'
    corrections against) in the hot rows of ``bsc``.

    A drive's heading cosine and sine come from, and its new ones go to, the per-body cache
    in ``cbuf`` (frames.heading).

    Sleepers are not in ``aw``: they have no velocity, so their free motion is none, and their
    scratch in ``bsc`` says so (sleeping.py). Outside the contact mode (``contact`` False,
    collision_modes.py) a stopped body (``IS_STOP``) is skipped, and drives take their
    commands without lag or grip cap and move by IR-SIM's update (:func:`irsim_step`).
    """
    for i in range(aw.shape[0]):
        b = aw[i]
        if not contact and bis[e, b, IS_STOP] != 0:
            continue
        keep_start(e, b, pos, ang, vel, omg, bsc)
        mu_g = epar[e, b, EP_FRICTION] * gravity
        if bint[b, BI_KIND] == DRIVEN:
            drive = bint[b, BI_DRIVE]
            bsc[e, b, BS_D0] = drv[e, b, 0]
            bsc[e, b, BS_D1] = drv[e, b, 1]
            tau = bflt[b, BF_TAU] if contact else 0.0
            d0, d1 = drive_update(
                drive, drv[e, b, 0], drv[e, b, 1], cmd[e, b, 0], cmd[e, b, 1],
                bflt[b, BF_VMIN0], bflt[b, BF_VMIN1], bflt[b, BF_VMAX0], bflt[b, BF_VMAX1],
                bflt[b, BF_ACC0], bflt[b, BF_ACC1], tau, mu_g if contact else math.inf, dt,
            )
            drv[e, b, 0] = d0
            drv[e, b, 1] = d1
            # The drive moves the body origin; the COM rides along at its body-frame offset.
            th = ang[e, b]
            wb = bflt[b, BF_WHEELBASE]
            c, s = heading(e, b, ang, cbuf)
            if drive == DRIVE_OMNI_ANGULAR or bflt[b, BF_NOISE] != 0.0:
                # Out of line, so the common drives' path stays as short as it was.
                dx, dy, dth, vx, vy, w = irsim_motion(e, b, drive, d0, d1, th, c, s,
                                                      bsc[e, b, BS_D1], wb, tau, dt, yaw, bflt,
                                                      bsc, not contact)
                th2 = th + dth
                c2, s2 = math.cos(th2), math.sin(th2)
            elif contact:
                dx, dy, dth, vx, vy, w, c2, s2 = drive_step(drive, d0, d1, th, c, s, wb, dt)
                th2 = th + dth
            else:
                dx, dy, dth, vx, vy, w, c2, s2 = irsim_drive_step(
                    drive, d0, d1, th, c, s, bsc[e, b, BS_D1], wb, dt)
                th2 = th + dth
            keep_heading(e, b, th2, c2, s2, cbuf)
            if bflt[b, BF_COMX] == 0.0 and bflt[b, BF_COMY] == 0.0:
                pos[e, b, 0] += dx
                pos[e, b, 1] += dy
                ang[e, b] = th2
                bsc[e, b, BS_VXF] = vx
                bsc[e, b, BS_VYF] = vy
            else:
                lx, ly = com_offset(e, b, c, s, bflt, epar)
                ox, oy = pos[e, b, 0] - lx, pos[e, b, 1] - ly
                rx, ry = com_offset(e, b, c2, s2, bflt, epar)
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
