"""Sweep-v0's scripted sweeper (diff drive): push the nearest puck outside the goal circle
toward its centre, pucks by the walls last."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from push_envs.core import ObsIndex, TaskSpec
from push_envs.scripted import BatchPolicy, push_action


def sweep_action(obs: np.ndarray, ix: ObsIndex, num_pucks: int,
                 region: tuple[float, float, float, float] = (0.0, 0.0, 3.0, 3.0),
                 clearance: float = 0.27) -> np.ndarray:
    """One observation's action (2,): push the nearest puck outside the goal circle toward
    the circle's centre, lined up behind it with the flat front face; pucks whose push pose
    lies within ``clearance`` [m] of the arena's walls (``region`` [m]) are left for last,
    since the 0.3 m x 0.4 m robot cannot stand there."""
    gx, gy = float(obs[ix.goal_xy]), float(obs[ix.goal_xy + 1])
    standoff = 0.24  # [m] half the robot's length + a puck radius + 4 cm
    x0, y0, x1, y1 = region
    rx, ry, c, s = obs[ix.robot_xy], obs[ix.robot_xy + 1], obs[ix.robot_heading], \
        obs[ix.robot_heading + 1]

    def world(k: int) -> tuple[float, float]:
        return rx + c * obs[k] - s * obs[k + 1], ry + s * obs[k] + c * obs[k + 1]

    cols = [ix.slot("puck_rel", j) for j in range(num_pucks)
            if obs[ix.slot("puck_inside", j)] < 0.5]
    outside = sorted((math.hypot(obs[k], obs[k + 1]), k) for k in cols)
    if not outside:
        return np.zeros(2, np.float32)
    px, py = world(outside[0][1])
    for _, k in outside:
        qx, qy = world(k)
        d = math.hypot(gx - qx, gy - qy) + 1e-9
        sx, sy = qx - (gx - qx) / d * standoff, qy - (gy - qy) / d * standoff
        if x0 + clearance <= sx <= x1 - clearance and y0 + clearance <= sy <= y1 - clearance:
            px, py = qx, qy
            break
    return push_action(rx, ry, math.atan2(s, c), px, py, gx, gy, standoff=standoff, align=0.1)


def expert(task: TaskSpec, env_kwargs: Mapping[str, Any] | None = None) -> BatchPolicy:
    """The sweeper for ``task``, one observation at a time over a batch."""
    ix = ObsIndex(task.observation(), task.args)
    n = task.args["num_pucks"]
    region = task.args["spawn_region"] or type(task).region
    return lambda obs: np.stack([sweep_action(o, ix, n, region) for o in np.asarray(obs)])
