"""Scripted pushing policies (diff drive): go behind the object, push it to the goal.

They read only the state observation (see the task docstring's table), so they double as a
check that the observation carries what a controller needs.
"""

from __future__ import annotations

import math

import numpy as np


def _wrap(a: float) -> float:
    return (a + math.pi) % (2.0 * math.pi) - math.pi


def push_action(rx: float, ry: float, rth: float, bx: float, by: float, gx: float, gy: float,
                standoff: float = 0.32, align: float = 0.12) -> np.ndarray:
    """Action in [-1, 1]^2 for a diff robot at (rx, ry, rth) [m, rad] pushing an object at
    (bx, by) [m] toward (gx, gy) [m]: line up ``standoff`` [m] behind the object on its line
    to the goal (within ``align`` [m] of that line), then drive through it.
    """
    ux, uy = gx - bx, gy - by
    dist = math.hypot(ux, uy) + 1e-9
    ux, uy = ux / dist, uy / dist
    # Where the robot must stand to push the object toward the goal.
    px, py = bx - ux * standoff, by - uy * standoff
    # Offset of the robot from the push line, and how far behind the object it is.
    dx, dy = rx - bx, ry - by
    behind = -(dx * ux + dy * uy)
    lateral = abs(-dx * uy + dy * ux)
    if behind > standoff - 0.12 and lateral < align:
        tx, ty = gx, gy  # lined up: push through the object toward the goal
    elif behind > 0.0 or math.hypot(px - rx, py - ry) < 0.6:
        tx, ty = px, py
    else:
        # In front of the object: swing around it, keeping clear of its corners.
        side = 1.0 if (-dx * uy + dy * ux) >= 0.0 else -1.0
        tx = bx - uy * side * 0.45 - ux * 0.1
        ty = by + ux * side * 0.45 - uy * 0.1
    err = _wrap(math.atan2(ty - ry, tx - rx) - rth)
    v = max(math.cos(err), 0.0) * min(1.0, 2.0 * math.hypot(tx - rx, ty - ry) + 0.3)
    w = max(-1.0, min(1.0, 1.5 * err))
    return np.array([v, w], dtype=np.float32)


def push_box_action(obs: np.ndarray, standoff: float = 0.32, align: float = 0.12) -> np.ndarray:
    """Action in [-1, 1]^2 for a diff robot (v max 1 m/s, omega max 2 rad/s).

    ``standoff`` [m] is how far behind the box centre the robot lines up; ``align`` [m] how
    far off the push line it may be before it re-approaches.
    """
    rx, ry, c, s = obs[0], obs[1], obs[2], obs[3]
    bx = rx + c * obs[7] - s * obs[8]
    by = ry + s * obs[7] + c * obs[8]
    return push_action(rx, ry, math.atan2(s, c), bx, by, obs[15], obs[16], standoff, align)


def _world(obs: np.ndarray, k: int) -> tuple[float, float]:
    """World point of the robot-frame vector at obs[k], obs[k + 1], from the robot origin."""
    rx, ry, c, s = obs[0], obs[1], obs[2], obs[3]
    return rx + c * obs[k] - s * obs[k + 1], ry + s * obs[k] + c * obs[k + 1]


def push_multi_action(obs: np.ndarray, num_objects: int = 3,
                      max_contacts: int = 4) -> np.ndarray:
    """PushMulti-v0 (diff): push the first box not at its goal to its goal (boxes in index
    order; it does not steer around placed boxes)."""
    base = 7 + 6 * max_contacts
    for j in range(num_objects):
        k = base + 10 * j
        if obs[k + 8] < 0.5:
            bx, by = _world(obs, k)
            gx, gy = _world(obs, k + 6)
            return push_action(obs[0], obs[1], math.atan2(obs[3], obs[2]), bx, by, gx, gy)
    return np.zeros(2, np.float32)


def push_clutter_action(obs: np.ndarray, max_contacts: int = 4) -> np.ndarray:
    """PushClutter-v0 (diff): push the box straight at its goal, ignoring the clutter (a
    baseline: it stalls where a heavy body stands in the way)."""
    k = 7 + 6 * max_contacts
    bx, by = _world(obs, k)
    gx, gy = _world(obs, k + 6)
    return push_action(obs[0], obs[1], math.atan2(obs[3], obs[2]), bx, by, gx, gy)


def sweep_action(obs: np.ndarray, num_pucks: int = 20, max_contacts: int = 4,
                 region: tuple[float, float, float, float] = (0.0, 0.0, 3.0, 3.0),
                 clearance: float = 0.27) -> np.ndarray:
    """Sweep-v0 (diff sweeper): push the nearest puck outside the goal circle toward the
    circle's centre, lined up behind it with the flat front face; pucks whose push pose lies
    within ``clearance`` [m] of the arena's walls (``region`` [m]) are left for last, since
    the 0.3 m x 0.4 m robot cannot stand there."""
    base = 7 + 6 * max_contacts
    gx, gy = float(obs[base + 2]), float(obs[base + 3])
    standoff = 0.24  # [m] half the robot's length + a puck radius + 4 cm
    x0, y0, x1, y1 = region
    outside = sorted((math.hypot(obs[k], obs[k + 1]), k) for k in
                     range(base + 5, base + 5 + 5 * num_pucks, 5) if obs[k + 4] < 0.5)
    if not outside:
        return np.zeros(2, np.float32)
    px, py = _world(obs, outside[0][1])
    for _, k in outside:
        qx, qy = _world(obs, k)
        d = math.hypot(gx - qx, gy - qy) + 1e-9
        sx, sy = qx - (gx - qx) / d * standoff, qy - (gy - qy) / d * standoff
        if x0 + clearance <= sx <= x1 - clearance and y0 + clearance <= sy <= y1 - clearance:
            px, py = qx, qy
            break
    return push_action(obs[0], obs[1], math.atan2(obs[3], obs[2]), px, py, gx, gy,
                       standoff=standoff, align=0.1)
