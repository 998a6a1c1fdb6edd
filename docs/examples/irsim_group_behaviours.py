"""IR-SIM's two custom group behaviours (``usage/13custom_behavior``), as compiled group
behaviours of push_envs: ``formation`` and ``swarm``, for omni robots.

IR-SIM's example scripts register them before loading their worlds
(``env.load_behavior("custom_group_methods")``); here, importing this module registers them,
after which ``custom_group_behavior.yaml`` and ``custom_swarm_behavior.yaml`` load as
written::

    import irsim_group_behaviours  # noqa: F401  (registers formation and swarm)
    from push_envs.physics import World

    world = World.from_config("custom_swarm_behavior.yaml", num_envs=64)
    world.step()

Each function receives the members of one group in one env (see
``register_group_behavior``): their ego rows, goals, the group's parameters, each member's
memory, and the command rows to fill. Both compute a velocity in the world frame [m/s],
capped at the member's top speed (IR-SIM's ``max_speed``: the norm of an omni drive's
``vel_max``), and give it to the drive in its command frame (forward, lateral): IR-SIM's
omni takes body-frame commands, so the world velocity is rotated by the member's heading.
(IR-SIM's example hands the world vector over as it is, which is the same only at heading 0.)
"""

from __future__ import annotations

import math

from numba import njit

from push_envs.physics.behaviours import EGO_THETA
from push_envs.physics.behaviours import EGO_VMAX
from push_envs.physics.behaviours import EGO_X
from push_envs.physics.behaviours import EGO_Y
from push_envs.physics.behaviours import register_group_behavior

# memory columns of a formation member
_SET = 0  # 1 once its place in the formation is taken
_OFFSET = 1  # its offset from the group's centroid [m], 2 columns


@njit(cache=True)
def _centroid(egos):
    """The members' mean position (x, y) [m]."""
    n = egos.shape[0]
    cx = 0.0
    cy = 0.0
    for i in range(n):
        cx += egos[i, EGO_X]
        cy += egos[i, EGO_Y]
    return cx / n, cy / n


@njit(cache=True)
def _command(ego, vx, vy, out):
    """World velocity (vx, vy) [m/s], capped at the member's top speed, as an omni drive's
    (forward, lateral) command in ``out``."""
    top = math.hypot(ego[EGO_VMAX], ego[EGO_VMAX + 1])
    speed = math.hypot(vx, vy)
    if speed > top:
        vx *= top / speed
        vy *= top / speed
    c = math.cos(ego[EGO_THETA])
    s = math.sin(ego[EGO_THETA])
    out[0] = c * vx + s * vy
    out[1] = -s * vx + c * vy


@register_group_behavior("omni", "formation", params={"formation_gain": 1.0, "goal_gain": 0.5})
@njit(cache=True)
def formation(egos, goals, params, memory, out):
    """Keep the shape the group starts in while its centroid moves to its goals' centroid.

    The first step after a reset records each member's offset from the centroid (IR-SIM's
    class-based behaviour does it when it is built). Then each member's velocity is
    formation_gain x (centroid + offset - position) + goal_gain x (goals' centroid -
    centroid), the goals' centroid being the mean of the members that have a goal (the
    centroid itself when none has)."""
    n = egos.shape[0]
    if n == 0:
        return
    cx, cy = _centroid(egos)
    gx = 0.0
    gy = 0.0
    m = 0
    for i in range(n):
        if goals[i, 3] != 0.0:
            gx += goals[i, 0]
            gy += goals[i, 1]
            m += 1
    if m > 0:
        gx /= m
        gy /= m
    else:
        gx, gy = cx, cy
    k_form = params[0]
    k_goal = params[1]
    for i in range(n):
        if memory[i, _SET] == 0.0:
            memory[i, _SET] = 1.0
            memory[i, _OFFSET] = egos[i, EGO_X] - cx
            memory[i, _OFFSET + 1] = egos[i, EGO_Y] - cy
        vx = k_form * (cx + memory[i, _OFFSET] - egos[i, EGO_X]) + k_goal * (gx - cx)
        vy = k_form * (cy + memory[i, _OFFSET + 1] - egos[i, EGO_Y]) + k_goal * (gy - cy)
        _command(egos[i], vx, vy, out[i])


@register_group_behavior("omni", "swarm", params={"cohesion_gain": 0.5, "goal_gain": 1.0})
@njit(cache=True)
def swarm(egos, goals, params, memory, out):
    """Each member toward the group's centroid and toward its own goal: velocity
    cohesion_gain x (centroid - position) + goal_gain x (goal - position) (no goal: the
    cohesion alone). Stateless."""
    n = egos.shape[0]
    if n == 0:
        return
    cx, cy = _centroid(egos)
    k_coh = params[0]
    k_goal = params[1]
    for i in range(n):
        x = egos[i, EGO_X]
        y = egos[i, EGO_Y]
        vx = k_coh * (cx - x)
        vy = k_coh * (cy - y)
        if goals[i, 3] != 0.0:
            vx += k_goal * (goals[i, 0] - x)
            vy += k_goal * (goals[i, 1] - y)
        _command(egos[i], vx, vy, out[i])
