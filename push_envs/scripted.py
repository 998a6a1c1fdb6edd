"""A scripted pushing policy for PushBox-v0 (diff drive): go behind the box, push to the goal.

It reads only the state observation (see the task docstring's table), so it doubles as a
check that the observation carries what a controller needs.
"""

from __future__ import annotations

import math

import numpy as np


def _wrap(a: float) -> float:
    return (a + math.pi) % (2.0 * math.pi) - math.pi


def push_box_action(obs: np.ndarray, standoff: float = 0.32, align: float = 0.12) -> np.ndarray:
    """Action in [-1, 1]^2 for a diff robot (v max 1 m/s, omega max 2 rad/s).

    ``standoff`` [m] is how far behind the box centre the robot lines up; ``align`` [m] how
    far off the push line it may be before it re-approaches.
    """
    rx, ry, c, s = obs[0], obs[1], obs[2], obs[3]
    rth = math.atan2(s, c)
    bx = rx + c * obs[7] - s * obs[8]
    by = ry + s * obs[7] + c * obs[8]
    gx, gy = obs[15], obs[16]
    ux, uy = gx - bx, gy - by
    dist = math.hypot(ux, uy) + 1e-9
    ux, uy = ux / dist, uy / dist
    # Where the robot must stand to push the box toward the goal.
    px, py = bx - ux * standoff, by - uy * standoff
    # Offset of the robot from the push line, and how far behind the box it is.
    dx, dy = rx - bx, ry - by
    behind = -(dx * ux + dy * uy)
    lateral = abs(-dx * uy + dy * ux)
    if behind > 0.2 and lateral < align:
        tx, ty = gx, gy  # lined up: push through the box toward the goal
    elif behind > 0.0 or math.hypot(px - rx, py - ry) < 0.6:
        tx, ty = px, py
    else:
        # In front of the box: swing around it, keeping clear of its corners.
        side = 1.0 if (-dx * uy + dy * ux) >= 0.0 else -1.0
        tx = bx - uy * side * 0.45 - ux * 0.1
        ty = by + ux * side * 0.45 - uy * 0.1
    err = _wrap(math.atan2(ty - ry, tx - rx) - rth)
    v = max(math.cos(err), 0.0) * min(1.0, 2.0 * math.hypot(tx - rx, ty - ry) + 0.3)
    w = max(-1.0, min(1.0, 1.5 * err))
    return np.array([v, w], dtype=np.float32)
