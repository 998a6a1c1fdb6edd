"""Drives and free motion: the first two stages of a step.

Drive (driven bodies). A command is clipped to ``[vel_min, vel_max]``; the drive state follows
it as a first-order lag with time constant ``tau`` [s] (solved exactly over the step, so
sub-stepping composes); the change per step is then capped by ``acce`` (per second) and, for
the linear part, by the wheels' grip ``mu * g`` [m/s^2]. The drive state is, per model:

* ``diff``:  [v (m/s) along the heading, omega (rad/s)]
* ``omni``:  [vx, vy] (m/s) in the body frame
* ``acker``: [v (m/s), steering angle (rad)]; omega = v tan(steer) / wheelbase

Integration. Driven bodies follow the drive exactly (a circular arc when turning, not an Euler
step). Passive bodies coast under ground friction: the speed falls by ``mu g`` per second and
the spin by ``mu g / r_g`` (the rim of gyration slides on the ground), and the position is the
exact integral of that constant deceleration, stopping when the speed reaches zero. Integrating
the deceleration inside the step is what makes a released box stop at v^2 / (2 mu g); a
velocity-then-position (symplectic Euler) update stops short by v dt / 2.
"""

from __future__ import annotations

import math

from .jit import compiled

DRIVE_NONE = 0
DRIVE_DIFF = 1
DRIVE_OMNI = 2
DRIVE_ACKER = 3
DRIVE_NAMES = {"diff": DRIVE_DIFF, "omni": DRIVE_OMNI, "acker": DRIVE_ACKER}


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
    if drive == DRIVE_OMNI:
        m = math.sqrt(dd0 * dd0 + dd1 * dd1)
        if m > cap:
            s = cap / m
            dd0 *= s
            dd1 *= s
    else:
        dd0 = _clip(dd0, -cap, cap)
    return d0 + dd0, d1 + dd1


@compiled
def drive_twist(drive, d0, d1, theta, wheelbase):
    """World-frame velocity of the drive point and yaw rate: (vx, vy [m/s], omega [rad/s])."""
    c = math.cos(theta)
    s = math.sin(theta)
    if drive == DRIVE_OMNI:
        return c * d0 - s * d1, s * d0 + c * d1, 0.0
    if drive == DRIVE_ACKER:
        w = d0 * math.tan(d1) / wheelbase
    else:
        w = d1
    return c * d0, s * d0, w


@compiled
def drive_motion(drive, d0, d1, theta, wheelbase, dt):
    """Exact displacement (dx, dy [m], dtheta [rad]) of the drive point over ``dt``."""
    if drive == DRIVE_OMNI:
        c = math.cos(theta)
        s = math.sin(theta)
        return (c * d0 - s * d1) * dt, (s * d0 + c * d1) * dt, 0.0
    v = d0
    if drive == DRIVE_ACKER:
        w = v * math.tan(d1) / wheelbase
    else:
        w = d1
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
