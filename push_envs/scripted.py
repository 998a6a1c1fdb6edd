"""Scripted pushing policies that read only the state observation (diff drive; Push-T omni).

* :func:`push_box_action`, PushBox-v0: go behind the box, push it to the goal
  (:func:`push_action` for any object and goal);
* :func:`push_multi_action`, :func:`push_clutter_action`, :func:`sweep_action`: the same push
  aimed at PushMulti-v0's next box, PushClutter-v0's target, Sweep-v0's nearest stray puck;
* :func:`coop_push_action`, CoopPush-v0: both robots line up on one box face, then push
  together (one alone cannot move the box);
* :func:`push_maze_action`, PushMaze-v0: PushBox's policy aimed at a point ahead on the box's
  geodesic path (it does not plan the robot's own way around walls to the box).
* :func:`push_t_action`, PushT-v0 (omni): picks the push point on the T whose quasi-static
  twist best matches the pose error, orbits to it, and pushes at a speed proportional to the
  error (0.95 coverage in 1000 of 1000 episodes).

They read only the observation (see each task docstring's table), so they double as a check
that it carries what a controller needs. The push controller is written once, on arrays:
:func:`push_box_actions`, :func:`push_multi_actions` and :func:`push_clutter_actions` step a
whole batch of observations (numpy, no per-env Python; the experts of the demonstration
datasets and of the warm starts in ``train/warm_start.py``), :func:`expert` looks a task's
batch policy up.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np

BatchPolicy = Callable[[np.ndarray], np.ndarray]


def _wrap(a: float) -> float:
    return (a + math.pi) % (2.0 * math.pi) - math.pi


def _drive(rx: float, ry: float, rth: float, tx: float, ty: float, speed: float = 1.0,
           floor: float = 0.3) -> tuple[float, float]:
    """Diff-drive action (v, omega in [-1, 1]) from pose (rx, ry [m], rth [rad]) toward
    (tx, ty) [m]: turn toward it, drive forward as far as facing it, slowing near it."""
    err = _wrap(math.atan2(ty - ry, tx - rx) - rth)
    v = max(math.cos(err), 0.0) * min(speed, 2.0 * math.hypot(tx - rx, ty - ry) + floor)
    return v, max(-1.0, min(1.0, 1.5 * err))


def _push_targets(rx, ry, bx, by, gx, gy, standoff, align):
    """Where robots at (rx, ry) [m] head to push objects at (bx, by) toward (gx, gy): the
    point ``standoff`` [m] behind the object on its line to the goal, the goal itself once
    within ``align`` [m] of that line, or, from in front of the object, a point beside it clear
    of its corners. Returns (tx, ty, pushing)."""
    ux, uy = gx - bx, gy - by
    dist = np.hypot(ux, uy) + 1e-9
    ux, uy = ux / dist, uy / dist
    # Where the robot must stand to push the object toward the goal.
    px, py = bx - ux * standoff, by - uy * standoff
    # Offset of the robot from the push line, and how far behind the object it is.
    dx, dy = rx - bx, ry - by
    behind = -(dx * ux + dy * uy)
    cross = -dx * uy + dy * ux
    pushing = (behind > standoff - 0.12) & (np.abs(cross) < align)
    approach = ~pushing & ((behind > 0.0) | (np.hypot(px - rx, py - ry) < 0.6))
    # In front of the object: swing around it on the robot's side, clear of its corners.
    side = np.where(cross >= 0.0, 1.0, -1.0)
    tx = np.where(pushing, gx, np.where(approach, px, bx - uy * side * 0.45 - ux * 0.1))
    ty = np.where(pushing, gy, np.where(approach, py, by + ux * side * 0.45 - uy * 0.1))
    return tx, ty, pushing


def _steer(rx, ry, rth, tx, ty) -> np.ndarray:
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
    tx, ty, _ = _push_targets(rx, ry, bx, by, gx, gy, standoff, align)
    return _steer(rx, ry, rth, tx, ty)


def push_action(rx: float, ry: float, rth: float, bx: float, by: float, gx: float, gy: float,
                standoff: float = 0.32, align: float = 0.12) -> np.ndarray:
    """:func:`push_actions` for one robot and object: an action of shape (2,)."""
    return push_actions(*(np.array([v], np.float64) for v in (rx, ry, rth, bx, by, gx, gy)),
                        standoff, align)[0]


def _world_rows(o: np.ndarray, k: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_world` for a batch (N, obs_dim): world points [m] of the columns k, k + 1 (k an
    int, or one column per row)."""
    rows = np.arange(len(o))
    x, y = o[rows, k], o[rows, k + 1]
    c, s = o[:, 2], o[:, 3]
    return o[:, 0] + c * x - s * y, o[:, 1] + s * x + c * y


def _state_batch(obs: np.ndarray, width: int) -> np.ndarray:
    o = np.asarray(obs, dtype=np.float64)
    if o.ndim != 2 or o.shape[1] < width:
        raise ValueError(f"obs must be a batch of state observations (N, >= {width}), got "
                         f"shape {np.shape(obs)}")
    return o


def push_box_actions(obs: np.ndarray, standoff: float = 0.32, align: float = 0.12) -> np.ndarray:
    """PushBox-v0 / WallSlide-v0: actions (N, 2) for a batch of state observations
    (N, obs_dim); ``standoff`` [m] behind the box centre, ``align`` [m] off the push line."""
    o = _state_batch(obs, 21)
    bx, by = _world_rows(o, 7)
    return push_actions(o[:, 0], o[:, 1], np.arctan2(o[:, 3], o[:, 2]), bx, by, o[:, 15],
                        o[:, 16], standoff, align)


def push_box_action(obs: np.ndarray, standoff: float = 0.32, align: float = 0.12) -> np.ndarray:
    """:func:`push_box_actions` for one observation: an action of shape (2,)."""
    return push_box_actions(np.asarray(obs)[None, :], standoff, align)[0]


def _world(obs: np.ndarray, k: int) -> tuple[float, float]:
    """World point of the robot-frame vector at obs[k], obs[k + 1], from the robot origin."""
    rx, ry, c, s = obs[0], obs[1], obs[2], obs[3]
    return rx + c * obs[k] - s * obs[k + 1], ry + s * obs[k] + c * obs[k + 1]


def push_multi_actions(obs: np.ndarray, num_objects: int = 3,
                       max_contacts: int = 4) -> np.ndarray:
    """PushMulti-v0 (diff), a batch (N, obs_dim) -> (N, 2): push each env's first box not at
    its goal to its goal (boxes in index order; it does not steer around placed boxes); an
    env whose boxes are all placed stands still."""
    base = 7 + 6 * max_contacts
    o = _state_batch(obs, base + 10 * num_objects)
    placed = np.stack([o[:, base + 10 * j + 8] >= 0.5 for j in range(num_objects)], axis=1)
    first = np.argmin(placed, axis=1)  # the first unplaced box (0 when all are placed)
    k = base + 10 * first
    bx, by = _world_rows(o, k)
    gx, gy = _world_rows(o, k + 6)
    act = push_actions(o[:, 0], o[:, 1], np.arctan2(o[:, 3], o[:, 2]), bx, by, gx, gy)
    act[placed.all(axis=1)] = 0.0
    return act


def push_multi_action(obs: np.ndarray, num_objects: int = 3,
                      max_contacts: int = 4) -> np.ndarray:
    """:func:`push_multi_actions` for one observation: an action of shape (2,)."""
    return push_multi_actions(np.asarray(obs)[None, :], num_objects, max_contacts)[0]


def _near_edge(x, y, region, margin):
    """Whether points (x, y) [m] lie outside ``region`` (x0, y0, x1, y1) [m] shrunk by
    ``margin`` [m] on every side; one bool per row."""
    x0, y0, x1, y1 = region
    return (x < x0 + margin) | (x > x1 - margin) | (y < y0 + margin) | (y > y1 - margin)


def _first_blocker(px, py, tx, ty, r_self, bodies, heavy, clear):
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


def _detour(px, py, tx, ty, r_self, bodies, heavy, margin, region, hyst=0.06):
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
    first, ux, uy, lat = _first_blocker(px, py, tx, ty, r_self, bodies, heavy, clear)
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
        cost += np.where(_near_edge(ax, ay, region, 0.3), 10.0, 0.0)
        leg1 = _first_blocker(px, py, ax, ay, r_self, bodies, heavy, clear)[0]
        leg2 = _first_blocker(ax, ay, tx, ty, r_self, bodies, heavy, clear)[0]
        cost += np.where((leg1 >= 0) & (leg1 != first), 2.0, 0.0)
        cost += np.where((leg2 >= 0) & (leg2 != first), 1.0, 0.0)
        cost += np.where(np.sign(lat) == -side, 0.0, 0.3)
        take = (first >= 0) & (cost < best)
        wx, wy = np.where(take, ax, wx), np.where(take, ay, wy)
        best = np.where(take, cost, best)
    return wx, wy


def push_clutter_straight_actions(obs: np.ndarray, max_contacts: int = 4) -> np.ndarray:
    """PushClutter-v0 (diff), a batch (N, obs_dim) -> (N, 2): push the box straight at its
    goal, blind to clutter. The baseline :func:`push_clutter_actions` is measured against
    (51 % of 1000 episodes): it stalls where a heavy body stands in the way."""
    k = 7 + 6 * max_contacts
    o = _state_batch(obs, k + 8)
    bx, by = _world_rows(o, k)
    gx, gy = _world_rows(o, k + 6)
    return push_actions(o[:, 0], o[:, 1], np.arctan2(o[:, 3], o[:, 2]), bx, by, gx, gy)


def _sweep_blocked(px, py, ux, uy, length, r_self, bodies, heavy):
    """Whether a disc of radius ``r_self`` [m] moved from p [m] along the unit vector u for
    ``length`` [m] runs into a body of ``bodies`` ((x, y, radius [m], load) arrays) with load
    > ``heavy`` whose centre lies ahead of p; one bool per row."""
    hit = np.zeros(len(px), bool)
    for cx, cy, rj, load in bodies:
        t = (cx - px) * ux + (cy - py) * uy
        lat = (cy - py) * ux - (cx - px) * uy
        hit |= (load > heavy) & (t > 0.0) & (t < length + rj + r_self) & (np.abs(lat) < r_self + rj)
    return hit


def _push_direction(rx, ry, bx, by, wx, wy, dist_goal, bodies, region, heavy_box, heavy_robot,
                    box_r, robot_r, standoff, n_dir, step, w_travel):
    """The unit direction (ux, uy) to push boxes at b [m] in, for robots at r [m] heading them
    for waypoints w [m] (``dist_goal`` [m] from their goals).

    A choice among 2 n_dir + 1 directions, within 90 degrees either side of b -> w, each
    scored (least wins):

        1 - cos(its angle off b -> w)                      turning away from the route
      + 5  if the box, moved ``step`` [m] that way, meets   a push that would stall
           a body heavier than ``heavy_box``, or ends
           within 0.2 m of the region's edge (short of
           the goal)
      + 5  if its push pose (``standoff`` [m] behind the   a pose the robot cannot take
           box) is within ``robot_r`` of the region's
           edge, or in a body heavier than ``heavy_robot``
      + w_travel * the robot's distance to that pose [m]   keeping the side it is on

    Straight at the waypoint wins where nothing is in the way. A box that the route has
    pressed against a heavy body, or into a wall, is pushed along it or away from it
    instead, from a pose the robot can reach."""
    base = np.arctan2(wy - by, wx - bx)
    length = np.minimum(step, dist_goal)
    best = np.full(len(rx), np.inf)
    out_x, out_y = np.cos(base), np.sin(base)
    for i in range(-n_dir, n_dir + 1):
        turn = i * (0.5 * math.pi) / n_dir
        ux, uy = np.cos(base + turn), np.sin(base + turn)
        ex, ey = bx + ux * length, by + uy * length
        stall = _sweep_blocked(bx, by, ux, uy, length, box_r, bodies, heavy_box)
        stall |= _near_edge(ex, ey, region, 0.2) & (dist_goal > length + 0.05)
        px, py = bx - ux * standoff, by - uy * standoff
        pose = _near_edge(px, py, region, robot_r)
        for cx, cy, rj, load in bodies:
            pose |= (load > heavy_robot) & (np.hypot(px - cx, py - cy) < robot_r + rj + 0.02)
        cost = ((1.0 - math.cos(turn)) + np.where(stall, 5.0, 0.0) + np.where(pose, 5.0, 0.0)
                + w_travel * np.hypot(px - rx, py - ry))
        take = cost < best
        best = np.where(take, cost, best)
        out_x, out_y = np.where(take, ux, out_x), np.where(take, uy, out_y)
    return out_x, out_y


def _keep_off(rx, ry, tx, ty, bodies, touching, heavy, out=0.2):
    """Where robots at r [m] should head for t [m] without driving into a body they touch
    and cannot move: t itself, or a point 0.3 m along t's direction with its component into
    each touched body heavier than ``heavy`` removed and ``out`` of the body's outward normal
    added (so the robot slides along the body and off it). ``touching``: one bool array per
    body of ``bodies``. By the traction rule a push into such a body stalls the robot where
    it stands, whatever the route beyond it."""
    dx, dy = tx - rx, ty - ry
    dist = np.hypot(dx, dy) + 1e-9
    dx, dy = dx / dist, dy / dist
    hit_any = np.zeros(len(rx), bool)
    for (cx, cy, _, load), touch in zip(bodies, touching, strict=True):
        nx, ny = rx - cx, ry - cy
        n = np.hypot(nx, ny) + 1e-9
        nx, ny = nx / n, ny / n
        into = dx * nx + dy * ny
        hit = touch & (load > heavy) & (into < 0.0)
        sx, sy = dx - into * nx + out * nx, dy - into * ny + out * ny
        s = np.hypot(sx, sy) + 1e-9
        dx, dy = np.where(hit, sx / s, dx), np.where(hit, sy / s, dy)
        hit_any |= hit
    reach = np.minimum(dist, 0.3)
    return np.where(hit_any, rx + dx * reach, tx), np.where(hit_any, ry + dy * reach, ty)


def push_clutter_actions(obs: np.ndarray, max_contacts: int = 4, k_nearest: int = 4,
                         spawn_region: tuple[float, float, float, float] | None = None,
                         heavy_box: float = 0.45, heavy_robot: float = 0.45,
                         standoff: float = 0.32, align: float = 0.08, n_dir: int = 8,
                         step: float = 0.25, w_travel: float = 0.1) -> np.ndarray:
    """PushClutter-v0 (diff), a batch (N, obs_dim) -> (N, 2): push the box to its goal, around
    the clutter it cannot push.

    Each step, from the observation alone (the k nearest clutter bodies, each with its load
    ratio mu m g / traction):
      1. the route: the box heads for its goal, or for a waypoint beside the first clutter
         body on that line heavier than ``heavy_box`` (the 0.5 kg box takes half the robot's
         traction, so box and body together stall the robot past about 0.5);
      2. the push: of the directions within 90 degrees of the route, the one that neither
         drives the box into a heavy body or a wall within ``step`` [m] nor needs a push pose
         the robot cannot take, nearest the route and, by ``w_travel`` per metre, nearest the
         robot (:func:`_push_direction`);
      3. the robot lines up ``standoff`` [m] behind the box on that direction (within
         ``align`` [m]) and pushes, as :func:`push_actions`;
      4. while not pushing, the robot itself goes around clutter heavier than
         ``heavy_robot``;
      5. pushing or not, it never drives into a clutter body heavier than ``heavy_robot``
         that it touches: it slides along it instead (:func:`_keep_off`).
    Bodies are discs of their bounding radius; ``spawn_region`` (x0, y0, x1, y1) [m], the
    task's argument, bounds waypoints and push poses. ``heavy_box`` assumes the default box
    (0.5 kg, friction 0.5); a heavier box leaves less traction for clutter.

    With the default arguments 93 % of 1000 episodes succeed (a batch, seed 123; without
    step 5 92 %, with neither 2 nor 5 87 %, and the straight push at the goal 51 %). It
    fails where clutter walls the box in, where light bodies pushed in a chain stall the
    robot, or where its own approach shoves the box into a wall or a corner.
    """
    k = 7 + 6 * max_contacts
    o = _state_batch(obs, k + 10 + 8 * k_nearest)
    region = spawn_region or (0.0, 0.0, 4.0, 4.0)
    rx, ry, rth = o[:, 0], o[:, 1], np.arctan2(o[:, 3], o[:, 2])
    bx, by = _world_rows(o, k)
    gx, gy = _world_rows(o, k + 6)
    bodies, touching = [], []
    for j in range(k_nearest):
        q = k + 10 + 8 * j
        cx, cy = _world_rows(o, q)
        half = o[:, q + 4]
        bodies.append((cx, cy, np.where(o[:, q + 5] > 0.5, half, half * math.sqrt(2.0)),
                       o[:, q + 6]))
        touching.append(o[:, q + 7] > 0.5)
    box_r, robot_r = 0.15 * math.sqrt(2.0), 0.15
    wx, wy = _detour(bx, by, gx, gy, box_r, bodies, heavy_box, 0.08, region)
    ux, uy = _push_direction(rx, ry, bx, by, wx, wy, np.hypot(gx - bx, gy - by), bodies,
                             region, heavy_box, heavy_robot, box_r, robot_r, standoff, n_dir,
                             step, w_travel)
    # Aim a point along the chosen direction, as far as the waypoint (0.3-1 m): the push line.
    reach = np.clip(np.hypot(wx - bx, wy - by), 0.3, 1.0)
    tx, ty, pushing = _push_targets(rx, ry, bx, by, bx + ux * reach, by + uy * reach, standoff,
                                    align)
    wx, wy = _detour(rx, ry, tx, ty, robot_r, bodies, heavy_robot, 0.05, region)
    wx, wy = _keep_off(rx, ry, np.where(pushing, tx, wx), np.where(pushing, ty, wy), bodies,
                       touching, heavy_robot)
    return _steer(rx, ry, rth, wx, wy)


def push_clutter_action(obs: np.ndarray, max_contacts: int = 4, k_nearest: int = 4,
                        **kwargs: Any) -> np.ndarray:
    """:func:`push_clutter_actions` for one observation: an action of shape (2,)."""
    return push_clutter_actions(np.asarray(obs)[None, :], max_contacts, k_nearest,
                                **kwargs)[0]


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


def coop_push_action(obs: np.ndarray, max_contacts: int = 4, half: float = 0.3,
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
    common = 13
    width = 22 + 6 * max_contacts
    bx, by, cb, sb = (float(v) for v in obs[0:4])
    gx, gy = float(obs[6]), float(obs[7])
    robots = []
    for k in range(2):
        q = common + k * width
        rx, ry, c, s = (float(v) for v in obs[q:q + 4])
        robots.append((rx, ry, math.atan2(s, c), obs[q + 21] > 0.5))
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
            v, w = _drive(rx, ry, rth, sx - nx * 1.0, sy - ny * 1.0, 1.0, 0.2)
        elif rdy:
            err = _wrap(math.atan2(-ny, -nx) - rth)  # wait at the spot facing the box
            v, w = 0.0, max(-1.0, min(1.0, 1.5 * err))
        else:
            # Orbit the box at a safe radius until the spot's bearing is near, then go to it.
            pr = math.atan2(ry - by, rx - bx)
            gap = _wrap(math.atan2(sy - by, sx - bx) - pr)
            if abs(gap) < 0.35:
                v, w = _drive(rx, ry, rth, sx, sy, 0.6, 0.2)
            else:
                a = pr + math.copysign(0.6, gap)
                v, w = _drive(rx, ry, rth, bx + orbit * math.cos(a), by + orbit * math.sin(a),
                              1.0, 0.2)
        out += [v, w]
    return np.array(out, np.float32)


def push_maze_action(obs: np.ndarray, max_contacts: int = 4, lead: float = 0.5) -> np.ndarray:
    """Action in [-1, 1]^2 for PushMaze-v0 (diff): :func:`push_box_action` with the goal
    replaced by the point ``lead`` [m] ahead of the box along its path direction (the goal
    itself once the path is shorter), so the box is steered through the doorways."""
    at = 29 + 6 * max_contacts  # path_distance, then path_dir (world)
    c, s = obs[2], obs[3]
    bx = obs[0] + c * obs[7] - s * obs[8]
    by = obs[1] + s * obs[7] + c * obs[8]
    o = np.array(obs, dtype=np.float64)
    if obs[at] > lead:
        o[15] = bx + lead * obs[at + 1]
        o[16] = by + lead * obs[at + 2]
    return push_box_action(o)


# --------------------------------------------------------------------------- Push-T
# PushT-v0's T in its origin frame (its scene.yaml): the bar x in [-0.3, 0.3], y in
# [0, 0.15] and the stem x in [-0.075, 0.075], y in [-0.45, 0], as (x0, y0, x1, y1) [m].
_TEE_RECTS = ((-0.3, 0.0, 0.3, 0.15), (-0.075, -0.45, 0.075, 0.0))
_TEE_CENTROID = (0.0, (0.09 * 0.075 - 0.0675 * 0.225) / 0.1575)  # [m], origin frame
_TEE_ROBOT_R = 0.1  # [m] the omni disc's radius


def _tee_contacts() -> tuple[np.ndarray, np.ndarray]:
    """Push points on the T's outline [m] and their inward unit normals, origin frame; the
    points under the bar's arms and along the stem keep the 0.1 m disc clear of the rest."""
    pts: list[tuple[float, float]] = []
    nrm: list[tuple[float, float]] = []

    def add(points, normal):
        pts.extend(points)
        nrm.extend([normal] * len(points))

    add([(x, 0.15) for x in (-0.25, -0.15, -0.05, 0.05, 0.15, 0.25)], (0.0, -1.0))
    add([(-0.3, 0.075)], (1.0, 0.0))
    add([(0.3, 0.075)], (-1.0, 0.0))
    add([(x, 0.0) for x in (-0.26, -0.19, 0.19, 0.26)], (0.0, 1.0))
    add([(-0.075, y) for y in (-0.12, -0.2, -0.28, -0.36, -0.43)], (1.0, 0.0))
    add([(0.075, y) for y in (-0.12, -0.2, -0.28, -0.36, -0.43)], (-1.0, 0.0))
    add([(x, -0.45) for x in (-0.05, 0.0, 0.05)], (0.0, 1.0))
    return np.array(pts), np.array(nrm)


_TEE_PUSH_POINTS, _TEE_PUSH_NORMALS = _tee_contacts()


def _tee_distance(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distance [m] of origin-frame points to the T (0 inside it), and the unit direction
    from the nearest point of the T to them."""
    best = np.full(np.shape(x), np.inf)
    ox, oy = np.zeros(np.shape(x)), np.zeros(np.shape(x))
    for x0, y0, x1, y1 in _TEE_RECTS:
        dx, dy = x - np.clip(x, x0, x1), y - np.clip(y, y0, y1)
        d = np.hypot(dx, dy)
        nearer = d < best
        best = np.where(nearer, d, best)
        ox, oy = np.where(nearer, dx, ox), np.where(nearer, dy, oy)
    n = np.hypot(ox, oy) + 1e-12
    return best, ox / n, oy / n


# The Push-T pusher, quasi-static: the T is slow on ground friction, so a push's effect is
# predicted from the ellipsoidal limit surface of a uniform pressure distribution: a force f
# along the inward normal d at point p moves the T with the twist (d, (p - c) x d / c2),
# c the centroid and c2 [m^2] the square of the friction's radius of gyration.
#
#   1. error twist e = (goal centroid - T centroid, w * heading error), w [m] weighing turn
#      against travel (0.3: the T's outline is that far from its centroid, so a radian of
#      turn uncovers about as much area as 0.3 m of travel);
#   2. each push point's predicted twist (d, w * m / c2) scores its cosine with e, less
#      lam [1/m] x the robot's way to its push pose: the point in use costs nothing, which
#      holds a push instead of dithering between two near-equal points;
#   3. the robot pushes along d at a speed proportional to |e| (the T stops within a step
#      when released, so a slow final push lands within millimetres), holding the contact
#      line; else it drives straight to the push pose if that path clears the T, else it
#      orbits the centroid at ro [m] toward the push pose's bearing, first backing away from
#      the T if within 3 cm of it.
def push_t_actions(obs: np.ndarray, w: float = 0.3, c2: float = 0.04, lam: float = 0.3,
                   ro: float = 0.56, gain: float = 2.5, vmin: float = 0.02,
                   vmax: float = 0.9) -> np.ndarray:
    """PushT-v0 (omni), a batch (N, obs_dim) -> (N, 2) body-frame velocities in [-1, 1] m/s:
    the quasi-static pusher sketched above, for the scene's T and 0.1 m disc (not for
    ``box_size_range``). Push speed ``gain`` [1/s] x |e| clipped to [``vmin``, ``vmax``]
    m/s. It reaches gym-pusht's 0.95 coverage in about 160 of the 300 steps."""
    o = _state_batch(obs, 21)
    rx, ry, c, s = o[:, 0], o[:, 1], o[:, 2], o[:, 3]
    ox, oy = _world_rows(o, 7)
    ct, st = c * o[:, 9] - s * o[:, 10], s * o[:, 9] + c * o[:, 10]
    gx, gy, cg, sg = o[:, 15], o[:, 16], o[:, 17], o[:, 18]

    def world(bx, by, x0, y0, co, si):
        return x0 + co * bx - si * by, y0 + si * bx + co * by

    def local(x, y):  # world points (N, K) into the T's origin frame
        dx, dy = x - ox[:, None], y - oy[:, None]
        return ct[:, None] * dx + st[:, None] * dy, -st[:, None] * dx + ct[:, None] * dy

    cx, cy = world(*_TEE_CENTROID, ox, oy, ct, st)
    ex, ey = np.subtract(world(*_TEE_CENTROID, gx, gy, cg, sg), (cx, cy))
    eth = np.arctan2(sg * ct - cg * st, cg * ct + sg * st)
    err = np.sqrt(ex * ex + ey * ey + (w * eth) ** 2) + 1e-12
    # 2. Score every push point (N, K).
    col = (slice(None), None)
    px, py = world(_TEE_PUSH_POINTS[:, 0], _TEE_PUSH_POINTS[:, 1], ox[col], oy[col], ct[col],
                   st[col])
    dx, dy = world(_TEE_PUSH_NORMALS[:, 0], _TEE_PUSH_NORMALS[:, 1], 0.0, 0.0, ct[col],
                   st[col])
    turn = w * ((px - cx[col]) * dy - (py - cy[col]) * dx) / c2
    score = (dx * ex[col] + dy * ey[col] + turn * w * eth[col]) / (
        np.sqrt(1.0 + turn * turn) * err[col])
    qx, qy = px - dx * (_TEE_ROBOT_R + 0.01), py - dy * (_TEE_ROBOT_R + 0.01)
    k = np.argmax(score - lam * np.hypot(qx - rx[col], qy - ry[col]), axis=1)
    rows = np.arange(len(o))
    px, py, dx, dy, qx, qy = (a[rows, k] for a in (px, py, dx, dy, qx, qy))
    # 3a. Push: the robot at the point, within 2.5 cm of its line.
    along = -((rx - px) * dx + (ry - py) * dy)
    lat = -(rx - px) * dy + (ry - py) * dx
    pushing = (along > _TEE_ROBOT_R - 0.03) & (along < _TEE_ROBOT_R + 0.04) & \
        (np.abs(lat) < 0.025)
    v = np.clip(gain * err, vmin, vmax)
    push = (dx * v + 3.0 * lat * dy, dy * v - 3.0 * lat * dx)
    # 3b. Straight to the push pose when the segment there keeps the disc off the T.
    t = np.linspace(0.0, 1.0, 12)
    gap, _, _ = _tee_distance(*local(rx[col] + (qx - rx)[col] * t,
                                     ry[col] + (qy - ry)[col] * t))
    clear = gap.min(axis=1) >= _TEE_ROBOT_R + 0.003
    dq = np.hypot(qx - rx, qy - ry) + 1e-12
    sp = np.minimum(1.0, 4.0 * dq) / dq
    go = ((qx - rx) * sp, (qy - ry) * sp)
    # 3c. Orbit toward the push pose's bearing, or back off the T first.
    lx, ly = local(rx[col], ry[col])
    gap, nx, ny = (a[:, 0] for a in _tee_distance(lx, ly))
    nx, ny = world(nx, ny, 0.0, 0.0, ct, st)
    ax, ay = rx - cx, ry - cy
    rho = np.hypot(ax, ay) + 1e-12
    ux, uy = ax / rho, ay / rho
    side = np.where(np.sin(np.arctan2(qy - cy, qx - cx) - np.arctan2(ay, ax)) >= 0, 1.0, -1.0)
    near = gap < _TEE_ROBOT_R + 0.03
    orbit = (np.where(near, 0.5 * nx, -0.8 * uy * side + 3.0 * (ro - rho) * ux),
             np.where(near, 0.5 * ny, 0.8 * ux * side + 3.0 * (ro - rho) * uy))
    vx = np.where(pushing, push[0], np.where(clear, go[0], orbit[0]))
    vy = np.where(pushing, push[1], np.where(clear, go[1], orbit[1]))
    n = np.maximum(np.hypot(vx, vy), 1.0)
    vx, vy = vx / n, vy / n
    return np.stack([c * vx + s * vy, -s * vx + c * vy], axis=-1).astype(np.float32)


def push_t_action(obs: np.ndarray) -> np.ndarray:
    """:func:`push_t_actions` for one observation: an action of shape (2,)."""
    return push_t_actions(np.asarray(obs)[None, :])[0]


# (task id, robot) -> (batch policy, the task arguments it reads). WallSlide-v0 shares
# PushBox-v0's observation layout and its box lies flat on the wall with the goal along it, so
# the same push-pose controller pushes the box's end face along the wall.
EXPERTS: dict[tuple[str, str], tuple[BatchPolicy, tuple[str, ...]]] = {
    ("PushBox-v0", "diff"): (push_box_actions, ()),
    ("WallSlide-v0", "diff"): (push_box_actions, ()),
    ("PushMulti-v0", "diff"): (push_multi_actions, ("num_objects", "max_contacts")),
    ("PushClutter-v0", "diff"): (push_clutter_actions, ("max_contacts", "k_nearest",
                                                          "spawn_region")),
    ("PushT-v0", "omni"): (push_t_actions, ()),
}
# Experts that know their task's default shapes by heart (the T's outline, the disc's radius):
# the arguments that would change those are refused rather than silently mis-pushed.
FIXED_SHAPES: dict[tuple[str, str], tuple[str, ...]] = {
    ("PushT-v0", "omni"): ("scene", "box_size_range"),
}


def expert(env_id: str, robot: str, env_kwargs: Mapping[str, Any] | None = None
           ) -> BatchPolicy:
    """The scripted batch policy of ``env_id`` driven by ``robot``, set for the task's
    arguments ``env_kwargs`` (it reads those that change the observation layout, e.g.
    num_objects); a ``KeyError`` naming the tasks that have one otherwise, or naming the
    arguments of :data:`FIXED_SHAPES` that would change what the expert assumes."""
    env_kwargs = env_kwargs or {}
    try:
        policy, reads = EXPERTS[(env_id, robot)]
    except KeyError:
        have = ", ".join(f"{i} ({r})" for i, r in EXPERTS)
        raise KeyError(f"no scripted expert for {env_id} with robot={robot!r}; scripted "
                       f"experts exist for: {have}. Use a trained model (.zip) instead") from None
    changed = [k for k in FIXED_SHAPES.get((env_id, robot), ()) if env_kwargs.get(k) is not None]
    if changed:
        raise KeyError(f"the scripted expert for {env_id} ({robot}) knows the default scene's "
                       f"shapes only; it cannot act with {', '.join(changed)} set")
    return partial(policy, **{k: env_kwargs[k] for k in reads if k in env_kwargs})
