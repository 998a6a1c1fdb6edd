"""The shared scripted controllers: what every task's scripted expert is built from.

They act on arrays (a batch of N robots at once: numpy, no per-env Python) and read no
observation columns themselves; each task's expert (``push_envs/tasks/<family>/<task>/
expert.py``) reads its observation by name (:class:`push_envs.core.ObsIndex`) and calls them,
and :func:`push_envs.experts.expert` looks an expert up by (task id, robot).

* :func:`drive_to`, :func:`steer`: diff-drive commands toward a point;
* :func:`push_targets`, :func:`push_actions`: line up behind an object on its line to a goal,
  then drive through it; :func:`omni_push_actions`: the same for an omni drive;
* :func:`first_blocker`, :func:`detour`: a waypoint around the first body in the way that a
  disc cannot move;
* :func:`robot_pose`, :func:`world_points`, :func:`state_batch`: reading a batch of state
  observations.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

BatchPolicy = Callable[[np.ndarray], np.ndarray]
"""A batch policy: observations (N, obs_dim) -> actions (N, 2R) in [-1, 1]."""


def wrap_angle(a: float) -> float:
    return (a + math.pi) % (2.0 * math.pi) - math.pi


def drive_to(rx: float, ry: float, rth: float, tx: float, ty: float, speed: float = 1.0,
           floor: float = 0.3) -> tuple[float, float]:
    """Diff-drive action (v, omega in [-1, 1]) from pose (rx, ry [m], rth [rad]) toward
    (tx, ty) [m]: turn toward it, drive forward as far as facing it, slowing near it."""
    err = wrap_angle(math.atan2(ty - ry, tx - rx) - rth)
    v = max(math.cos(err), 0.0) * min(speed, 2.0 * math.hypot(tx - rx, ty - ry) + floor)
    return v, max(-1.0, min(1.0, 1.5 * err))


def push_frame(rx, ry, bx, by, gx, gy, standoff, align):
    """The push geometry of robots at (rx, ry) [m], objects at (bx, by) [m] and goals at
    (gx, gy) [m]: the unit push direction (ux, uy), the push pose (px, py) ``standoff`` [m]
    behind the object, the robot's offset (dx, dy) [m] from the object, how far behind it
    (``behind`` [m]) and off its push line (``cross`` [m]) the robot stands, and whether it
    is pushing (behind the object, within ``align`` [m] of the line)."""
    ux, uy = gx - bx, gy - by
    dist = np.hypot(ux, uy) + 1e-9
    ux, uy = ux / dist, uy / dist
    px, py = bx - ux * standoff, by - uy * standoff
    dx, dy = rx - bx, ry - by
    behind = -(dx * ux + dy * uy)
    cross = -dx * uy + dy * ux
    pushing = (behind > standoff - 0.12) & (np.abs(cross) < align)
    return ux, uy, px, py, dx, dy, behind, cross, pushing


def push_targets(rx, ry, bx, by, gx, gy, standoff, align):
    """Where robots at (rx, ry) [m] head to push objects at (bx, by) toward (gx, gy): the
    point ``standoff`` [m] behind the object on its line to the goal, the goal itself once
    within ``align`` [m] of that line, or, from in front of the object, a point beside it clear
    of its corners. Returns (tx, ty, pushing)."""
    return _targets(push_frame(rx, ry, bx, by, gx, gy, standoff, align), rx, ry, bx, by, gx, gy)


def _targets(frame, rx, ry, bx, by, gx, gy):
    """:func:`push_targets` from the push geometry ``frame`` (:func:`push_frame`'s tuple)."""
    ux, uy, px, py, dx, dy, behind, cross, pushing = frame
    approach = ~pushing & ((behind > 0.0) | (np.hypot(px - rx, py - ry) < 0.6))
    # In front of the object: swing around it on the robot's side, clear of its corners.
    side = np.where(cross >= 0.0, 1.0, -1.0)
    tx = np.where(pushing, gx, np.where(approach, px, bx - uy * side * 0.45 - ux * 0.1))
    ty = np.where(pushing, gy, np.where(approach, py, by + ux * side * 0.45 - uy * 0.1))
    return tx, ty, pushing


def steer(rx, ry, rth, tx, ty) -> np.ndarray:
    """Diff-drive actions (N, 2) turning toward (tx, ty) [m], forward as far as facing it."""
    err = (np.arctan2(ty - ry, tx - rx) - rth + np.pi) % (2.0 * np.pi) - np.pi
    v = np.maximum(np.cos(err), 0.0) * np.minimum(1.0, 2.0 * np.hypot(tx - rx, ty - ry) + 0.3)
    w = np.clip(1.5 * err, -1.0, 1.0)
    return np.stack([v, w], axis=-1).astype(np.float32)


def push_actions(rx, ry, rth, bx, by, gx, gy, standoff: float = 0.32,
                 align: float = 0.12) -> np.ndarray:
    """Actions in [-1, 1]^2, shape (N, 2), for diff robots at (rx, ry, rth) [m, rad] pushing
    objects at (bx, by) [m] toward (gx, gy) [m] (arrays of N): line up ``standoff`` [m] behind
    the object on its line to the goal (within ``align`` [m] of that line), then drive
    through it (v max 1 m/s, omega max 2 rad/s)."""
    tx, ty, _ = push_targets(rx, ry, bx, by, gx, gy, standoff, align)
    return steer(rx, ry, rth, tx, ty)


def omni_push_actions(rx, ry, c, s, bx, by, gx, gy, standoff: float = 0.32,
                      align: float = 0.12, gain: float = 2.0) -> np.ndarray:
    """Body-frame velocity actions (N, 2) in [-1, 1] m/s for omni robots at (rx, ry) [m]
    heading (c, s) (its cosine and sine) pushing objects at (bx, by) [m] toward (gx, gy)
    [m]: the targets of :func:`push_targets`, reached by moving straight at them (an omni
    drive needs no turn), at min(1, 2 x distance + 0.3) m/s. While pushing, the robot also
    closes its offset from the push line at ``gain`` [1/s] x the offset, so it stays behind
    the object as the line turns."""
    frame = push_frame(rx, ry, bx, by, gx, gy, standoff, align)
    ux, uy, cross = frame[0], frame[1], frame[7]
    tx, ty, pushing = _targets(frame, rx, ry, bx, by, gx, gy)
    dx, dy = tx - rx, ty - ry
    d = np.hypot(dx, dy) + 1e-9
    speed = np.minimum(1.0, 2.0 * d + 0.3)
    vx, vy = speed * dx / d, speed * dy / d
    # cross is the offset along (-uy, ux): steer back against it while pushing
    vx = np.where(pushing, vx + gain * cross * uy, vx)
    vy = np.where(pushing, vy - gain * cross * ux, vy)
    n = np.maximum(np.hypot(vx, vy), 1.0)
    vx, vy = vx / n, vy / n
    return np.stack([c * vx + s * vy, -s * vx + c * vy], axis=-1).astype(np.float32)


def push_action(rx: float, ry: float, rth: float, bx: float, by: float, gx: float, gy: float,
                standoff: float = 0.32, align: float = 0.12) -> np.ndarray:
    """:func:`push_actions` for one robot and object: an action of shape (2,)."""
    return push_actions(*(np.array([v], np.float64) for v in (rx, ry, rth, bx, by, gx, gy)),
                        standoff, align)[0]


def robot_pose(o: np.ndarray, ix: Any) -> tuple[np.ndarray, ...]:
    """Origin x, y [m] and heading cos, sin of the robot, from a batch of observations (N,
    obs_dim) whose columns ``ix`` names (:class:`~push_envs.core.ObsIndex`; the robot's head
    fields ``robot_xy`` and ``robot_heading``)."""
    return o[:, ix.robot_xy], o[:, ix.robot_xy + 1], o[:, ix.robot_heading], \
        o[:, ix.robot_heading + 1]


def world_points(o: np.ndarray, ix: Any, k: Any) -> tuple[np.ndarray, np.ndarray]:
    """World points [m] of the robot-frame vectors at columns k, k + 1 (k an int, or one
    column per row) of a batch of observations (N, obs_dim), from the robot's origin."""
    rows = np.arange(len(o))
    x, y = o[rows, k], o[rows, k + 1]
    rx, ry, c, s = robot_pose(o, ix)
    return rx + c * x - s * y, ry + s * x + c * y


def state_batch(obs: np.ndarray, width: int) -> np.ndarray:
    o = np.asarray(obs, dtype=np.float64)
    if o.ndim != 2 or o.shape[1] < width:
        raise ValueError(f"obs must be a batch of state observations (N, >= {width}), got "
                         f"shape {np.shape(obs)}")
    return o


def near_edge(x, y, region, margin):
    """Whether points (x, y) [m] lie outside ``region`` (x0, y0, x1, y1) [m] shrunk by
    ``margin`` [m] on every side; one bool per row."""
    x0, y0, x1, y1 = region
    return (x < x0 + margin) | (x > x1 - margin) | (y < y0 + margin) | (y > y1 - margin)


def first_blocker(px, py, tx, ty, r_self, bodies, heavy, clear):
    """For segments p -> t [m] swept by a disc of radius ``r_self`` [m]: the index of the
    first body in ``bodies`` (list of (x, y, radius [m], load) arrays) with load > ``heavy``
    whose disc comes within ``clear`` [m] of the swept disc, or -1; also the segment's unit
    direction and that body's lateral offset from it [m]."""
    ux, uy = tx - px, ty - py
    length = np.hypot(ux, uy) + 1e-9
    ux, uy = ux / length, uy / length
    first = np.full(len(px), -1)
    along = np.full(len(px), np.inf)
    side = np.zeros(len(px))
    for j, (cx, cy, rj, load) in enumerate(bodies):
        t = (cx - px) * ux + (cy - py) * uy
        lat = (cy - py) * ux - (cx - px) * uy
        hit = ((load > heavy) & (t > -rj) & (t < length + rj)
               & (np.abs(lat) < r_self + rj + clear) & (t < along))
        first = np.where(hit, j, first)
        along = np.where(hit, t, along)
        side = np.where(hit, lat, side)
    return first, ux, uy, side


def detour(px, py, tx, ty, r_self, bodies, heavy, margin, region, hyst=0.06):
    """Where a disc of radius ``r_self`` [m] at p [m] should head for t [m] without meeting a
    body it cannot move: t itself, or a waypoint beside the first such body on the way.

    The waypoint stands ``r_self + r + margin + hyst`` [m] off the body's centre, square to
    the path, on the side that costs least: the detour's length, plus 10 m outside
    ``region`` (x0, y0, x1, y1) shrunk by 0.3 m, 2 m if the leg to it meets another such body,
    1 m if the leg after it does, and 0.3 m for switching to the side the body is not already
    off (so the choice does not flicker). A body counts as in the way only within ``margin -
    hyst`` [m], less than the waypoint's offset, so the waypoint, once reached, no longer
    blocks."""
    clear = margin - hyst
    first, ux, uy, lat = first_blocker(px, py, tx, ty, r_self, bodies, heavy, clear)
    wx, wy = tx.copy(), ty.copy()
    if (first < 0).all():
        return wx, wy
    pick = np.maximum(first, 0)
    cx, cy, rj = (np.choose(pick, [b[i] for b in bodies]) for i in range(3))
    off = r_self + rj + margin + hyst
    best = np.full(len(px), np.inf)
    for side in (-1.0, 1.0):
        ax, ay = cx - uy * side * off, cy + ux * side * off
        cost = np.hypot(ax - px, ay - py) + np.hypot(tx - ax, ty - ay)
        cost += np.where(near_edge(ax, ay, region, 0.3), 10.0, 0.0)
        leg1 = first_blocker(px, py, ax, ay, r_self, bodies, heavy, clear)[0]
        leg2 = first_blocker(ax, ay, tx, ty, r_self, bodies, heavy, clear)[0]
        cost += np.where((leg1 >= 0) & (leg1 != first), 2.0, 0.0)
        cost += np.where((leg2 >= 0) & (leg2 != first), 1.0, 0.0)
        cost += np.where(np.sign(lat) == -side, 0.0, 0.3)
        take = (first >= 0) & (cost < best)
        wx, wy = np.where(take, ax, wx), np.where(take, ay, wy)
        best = np.where(take, cost, best)
    return wx, wy
