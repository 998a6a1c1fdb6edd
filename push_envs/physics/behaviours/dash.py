"""dash: straight at the goal (IR-SIM's DiffDash, OmniDash, OmniAngularDash, AckerDash).

Per kinematics, with d the distance to the goal [m], phi the goal's bearing in the body frame
[rad] and tol the ``angle_tolerance`` [rad] (0.1)::

    diff           d < threshold: stop.  v = vmax0 cos(phi);  omega = 0 within tol, else
                   sign(phi) * min(vmax1, -a dt + sqrt((a dt)^2 + 2 a (|phi| - tol)))
                   (a = acce[1]: the turn that can still stop at tol; vmax1 when a = inf)
    omni           d > threshold: (vmax0 cos(phi), vmax1 sin(phi)) in the body frame
    omni_angular   as omni, and a yaw rate as diff's omega toward the bearing, or, once
                   within the threshold, toward the goal's heading (a = acce[2])
    acker          d < threshold: stop.  v = vmax0;  steer = phi clipped to [-vmax1, vmax1],
                   0 within tol

Each command is then clipped to the velocity range ``acce`` allows this step (IR-SIM's
get_vel_range). Parameters: ``angle_tolerance`` [rad].
"""

from __future__ import annotations

import math

from ..abi import CFunction
from ..arrays import load_world
from ..jit import compiled
from .arrays import load_behaviour
from .common import clip
from .common import command_in_range
from .common import goal_of
from .common import step_time
from .common import wrap_to_pi
from .common import write_command
from .layout import BF_ACCE
from .layout import BF_THRESH
from .layout import BF_VMAX
from .layout import BI_KIN
from .layout import KIN_ACKER
from .layout import KIN_DIFF
from .layout import KIN_OMNI
from .layout import SN_T
from .layout import SN_X
from .layout import SN_Y
from .signatures import BODY_SIG

P_ANGLE_TOL = 0  # angle_tolerance [rad]
PARAMS = {"angle_tolerance": 0.1}
"""dash's parameters, in column order, with IR-SIM's defaults."""


@compiled
def turn_rate(err, tol, w_max, acc, dt):
    """A yaw rate [rad/s] that turns through the heading error ``err`` [rad] down to ``tol``
    [rad]: ``w_max`` [rad/s], lowered near the target to what the angular acceleration
    ``acc`` [rad/s^2] can still stop within the remaining angle in steps of ``dt`` [s]
    (the exact discrete form: w dt + w^2 / (2 acc) <= remaining)."""
    if abs(err) < tol:
        return 0.0
    w = abs(w_max)
    if math.isfinite(acc) and acc > 0.0:
        remaining = abs(err) - tol
        a_dt = acc * dt
        ramp = -a_dt + math.sqrt(a_dt * a_dt + 2.0 * acc * remaining)
        if ramp < w:
            w = ramp
    return w if err > 0.0 else -w


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def dash(e, b, W, B):
    """Body b's dash command in env e into ``W.cmd`` (zero without a goal)."""
    snap, bf = B.snap, B.bf
    has, gx, gy, gt, dims = goal_of(e, b, B.gq, B.gs)
    if not has:
        write_command(e, b, W, 0.0, 0.0, 0.0)
        return
    x = snap[e, b, SN_X]
    y = snap[e, b, SN_Y]
    th = snap[e, b, SN_T]
    dt = step_time(W)
    tol = B.prm[b, P_ANGLE_TOL]
    thr = bf[b, BF_THRESH]
    dist = math.hypot(gx - x, gy - y)
    bearing = wrap_to_pi(math.atan2(gy - y, gx - x))
    phi = wrap_to_pi(bearing - th)
    vmax0 = bf[b, BF_VMAX]
    vmax1 = bf[b, BF_VMAX + 1]
    kin = B.bi[b, BI_KIN]
    c0 = 0.0
    c1 = 0.0
    c2 = 0.0
    if kin == KIN_DIFF:
        if dist >= thr:
            c0 = vmax0 * math.cos(phi)
            c1 = turn_rate(phi, tol, vmax1, bf[b, BF_ACCE + 1], dt)
    elif kin == KIN_ACKER:
        if dist >= thr:
            c0 = vmax0
            c1 = 0.0 if -tol < phi < tol else clip(phi, -vmax1, vmax1)
    else:
        target = th
        if dist > thr:
            c0 = vmax0 * math.cos(phi)
            c1 = vmax1 * math.sin(phi)
            target = bearing
        elif dims > 2:
            target = gt
        if kin != KIN_OMNI:  # omni_angular: turn toward the bearing, then the goal heading
            c2 = turn_rate(wrap_to_pi(target - th), tol, bf[b, BF_VMAX + 2],
                           bf[b, BF_ACCE + 2], dt)
    command_in_range(e, b, W, B, c0, c1, c2)


def dash_c(e, b, wp, bp):
    """The C function of dash (signatures.BODY_SIG)."""
    dash(e, b, load_world(wp), load_behaviour(bp))


DASH = CFunction(dash_c, BODY_SIG)
