"""CoopPush-v0's scripted pair (two diff robots): both line up on one box face, then push
together (one alone cannot move the box)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from push_envs.core import ObsIndex
from push_envs.core import TaskSpec
from push_envs.scripted import BatchPolicy
from push_envs.scripted import drive_to
from push_envs.scripted import wrap_angle


def coop_push_action(obs: np.ndarray, ix: ObsIndex, half: float = 0.3,
                     robot_r: float = 0.15, lateral: float = 0.16, orbit: float = 0.85,
                     done: float = 0.03) -> np.ndarray:
    """Joint action in [-1, 1]^4 for CoopPush-v0's two diff robots.

    The box face to push is one whose outward normal still has more than ``done`` [m] of
    goal distance against it; of those, the one whose push spots (as the task places them:
    ``half`` [m] half-width of the box, ``robot_r`` + 5 cm out, ``lateral`` [m] to either
    side) the robots reach with the least summed distance, so a face is kept while it is
    worth pushing and the box travels an L to the goal. A robot away from its spot orbits
    the box at ``orbit`` [m] (so it never leans on it alone), waits at the spot facing the
    box, and both push through the face once both are ready.
    """
    bx, by = float(obs[ix.box_xy]), float(obs[ix.box_xy + 1])
    cb, sb = float(obs[ix.box_heading]), float(obs[ix.box_heading + 1])
    gx, gy = float(obs[ix.goal_xy]), float(obs[ix.goal_xy + 1])
    robots = []
    for k in range(2):
        xy, hd = getattr(ix, f"r{k}_xy"), getattr(ix, f"r{k}_heading")
        rx, ry, c, s = (float(obs[q]) for q in (xy, xy + 1, hd, hd + 1))
        robots.append((rx, ry, math.atan2(s, c), obs[getattr(ix, f"r{k}_touches_box")] > 0.5))
    # Candidate faces: outward normals n with some goal distance left along -n.
    best = None
    for nx, ny in ((cb, sb), (-cb, -sb), (-sb, cb), (sb, -cb)):
        along = -((gx - bx) * nx + (gy - by) * ny)
        if along < done:
            continue
        cx, cy = bx + nx * (half + robot_r + 0.05), by + ny * (half + robot_r + 0.05)
        spots = ((cx - ny * lateral, cy + nx * lateral), (cx + ny * lateral, cy - nx * lateral))
        d = [math.hypot(r[0] - p[0], r[1] - p[1]) for r in robots for p in spots]
        cost, order = min((d[0] + d[3], (0, 1)), (d[1] + d[2], (1, 0)))
        if best is None or cost < best[0]:
            best = (cost, nx, ny, [spots[order[0]], spots[order[1]]])
    if best is None:
        return np.zeros(4, np.float32)
    _, nx, ny, spots = best
    ready = []
    for (rx, ry, _, touch), (sx, sy) in zip(robots, spots, strict=True):
        dx, dy = rx - bx, ry - by
        behind = dx * nx + dy * ny  # distance out from the face's side of the box
        lat = abs(-dx * ny + dy * nx)
        ready.append(math.hypot(sx - rx, sy - ry) < 0.12 or
                     (touch and behind > half and lat < half))
    out = []
    for (rx, ry, rth, _), (sx, sy), rdy in zip(robots, spots, ready, strict=True):
        if all(ready):
            # Push through the face, along -n, holding the spot's lateral line.
            v, w = drive_to(rx, ry, rth, sx - nx * 1.0, sy - ny * 1.0, 1.0, 0.2)
        elif rdy:
            err = wrap_angle(math.atan2(-ny, -nx) - rth)  # wait at the spot facing the box
            v, w = 0.0, max(-1.0, min(1.0, 1.5 * err))
        else:
            # Orbit the box at a safe radius until the spot's bearing is near, then go to it.
            pr = math.atan2(ry - by, rx - bx)
            gap = wrap_angle(math.atan2(sy - by, sx - bx) - pr)
            if abs(gap) < 0.35:
                v, w = drive_to(rx, ry, rth, sx, sy, 0.6, 0.2)
            else:
                a = pr + math.copysign(0.6, gap)
                v, w = drive_to(rx, ry, rth, bx + orbit * math.cos(a), by + orbit * math.sin(a),
                              1.0, 0.2)
        out += [v, w]
    return np.array(out, np.float32)


def expert(task: TaskSpec, env_kwargs: Mapping[str, Any] | None = None) -> BatchPolicy:
    """The pair's joint policy for ``task``, one observation at a time over a batch."""
    ix = ObsIndex(task.observation(), task.args)
    return lambda obs: np.stack([coop_push_action(o, ix) for o in np.asarray(obs)])
