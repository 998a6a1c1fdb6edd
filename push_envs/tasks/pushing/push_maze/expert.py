"""PushMaze-v1's scripted expert (diff drive): a pusher that plans on the maze's own map.

The floor plan is static (the task's map, or the user's ``scene=`` map, split into
``layouts`` tiles), so the expert loads the grid the env loads and plans on it; the episode's
layout is the tile the goal lies in (``goal_xy``), nothing else is hidden. Per step and env it
reads the robot's pose, the box's pose and the goal from the observation and plans:

1. the **box's path**: a least-cost field from the goal's cell over the cells where the box's
   bounding circle fits (as the task's geodesic field: 8-connected, no corner cutting, the
   task's ``clearance``), with each step's cost raised near walls so the path runs down the
   middle of doorways and corridors and leaves the robot room to get around the box; one
   field per goal cell (the task's goal sites), cached. The push aims ``lead`` [m] ahead
   along it;
2. the **robot's path** to its push pose behind the box (where it touches the box's face,
   from the box's heading): Dijkstra over the cells where the robot's disc fits, the box
   grown by the robot's radius an obstacle, steps near walls dearer; a robot that starts in
   an obstacle's margin may only move out of it;
3. **recovery**: when the push pose of the path's direction lies in a wall or cannot be
   reached (the box against a wall, or in a doorway with the robot on the wrong side), it
   pushes the box the way that costs least among the directions whose push pose is free and
   reachable (along the wall, or back out of the doorway), until the path's own push pose is
   free again;
4. the **push** itself counter-steers (see :func:`_act`), which keeps the box on the robot.

100 % of 500 episodes (``python -m push_envs.experts evaluate PushMaze-v1 --episodes 500
--seed 10000``), mean 112 steps of 400. The policy keeps no state between calls (one
observation gives one action), so batches, single envs and the expert tests see the same
actions. A batch's rows are planned in parallel over numba's threads (:func:`_act_batch`),
each with scratch of its own; the robot's search stops once the cells around the box that
the push poses read are settled (:func:`_dijkstra`). Both leave every action bit for bit
as the one-env, whole-grid planner's (`benchmarks/experts.py`: 63-66 us a state on one
thread, against 148-151 for the whole-grid search).
"""

from __future__ import annotations

import heapq
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba import njit
from numba import prange

from push_envs.core import ObsIndex
from push_envs.core import TaskSpec
from push_envs.physics import SceneError
from push_envs.physics import load_scene
from push_envs.physics.layout import BF_BRAD
from push_envs.physics.safe_yaml import read_scene_yaml
from push_envs.physics.scene import compile_scene
from push_envs.scripted import BatchPolicy
from push_envs.scripted import robot_pose
from push_envs.scripted import state_batch
from push_envs.scripted import world_points
from push_envs.tasks.pushing.push_maze import clearance

INF = np.inf
N_DIRS = 24  # candidate push directions of the recovery (15 degrees apart)

# The controller's parameters, one float array for numba (lengths [m]): the map's cell size;
# the robot's radius; the box's half sides and rounding (a rectangle (hx, hy, 0), any other
# shape its bounding disc (0, 0, r)); how far off the push line the robot still pushes; how
# far ahead along the box's path the push aims; how far on a recovery push is scored; the gap
# kept between the robot's planned path and the box; the recovery's cost of a push square to
# the path's direction [m] and its weight of the robot's travel; the counter-steer gain of
# the push (see _act). MazePlanner sets them.
(PRM_RES, PRM_ROBOT_R, PRM_HX, PRM_HY, PRM_RR, PRM_ALIGN, PRM_LEAD, PRM_PROBE, PRM_GAP,
 PRM_SWITCH, PRM_TRAVEL, PRM_COUNTER, N_PRM) = range(13)


# ------------------------------------------------------------------------ grid search
@njit(cache=True, inline="always")
def _free_in_reach(bad, i, j, x0, y0, res, cx, cy, reach):
    """Whether cell (i, j) is free and its centre lies within ``reach`` [m] of (cx, cy) [m]
    (grid corner (x0, y0) [m], cells ``res`` [m])."""
    return bad[i, j] <= 0.0 and math.hypot(x0 + (i + 0.5) * res - cx,
                                            y0 + (j + 0.5) * res - cy) <= reach


@njit(cache=True)
def _dijkstra(w, bad, si, sj, res, dist, parent, x0=0.0, y0=0.0, cx=0.0, cy=0.0, reach=-1.0):
    """Least-cost paths [m x weight] from cell (si, sj) over a grid, into ``dist`` (INF where
    not reached) and ``parent`` (the flat index of each cell's predecessor, -1 at the start).

    ``w`` (>= 1) scales the length of a step by the mean weight of its two cells.
    ``bad`` > 0 marks obstacle cells (0 free): a step may enter one only from a cell that is
    worse still, so a search that starts inside an obstacle's margin can only leave it and
    one that starts free never enters one. 8-connected; a diagonal step needs both cells
    beside it no worse than where it starts (no corner cutting).

    ``reach`` >= 0 [m] stops the search early, once every free cell whose centre lies within
    ``reach`` of (cx, cy) [m] (grid corner (x0, y0) [m]) is settled: then ``dist`` and
    ``parent`` are final on those cells and on every cell of their paths, and may be
    unsettled elsewhere. Why it is exact: Dijkstra settles cells in order of cost, and a
    settled cell never changes; a start in a margin (which may enter obstacle cells) or a free
    cell there that is never reached searches the whole grid, as without ``reach``."""
    nx, ny = w.shape
    dist[:, :] = INF
    parent[:, :] = -1
    dist[si, sj] = 0.0
    left = -1  # free cells within reach not yet settled (-1: no early stop)
    if reach >= 0.0 and bad[si, sj] <= 0.0:
        left = 0
        for i in range(_cell(cx - reach, x0, res, nx), _cell(cx + reach, x0, res, nx) + 1):
            for j in range(_cell(cy - reach, y0, res, ny), _cell(cy + reach, y0, res, ny) + 1):
                if _free_in_reach(bad, i, j, x0, y0, res, cx, cy, reach):
                    left += 1
    heap = [(0.0, si * ny + sj)]
    diag = res * math.sqrt(2.0)
    while len(heap) > 0:
        d, k = heapq.heappop(heap)
        i, j = k // ny, k % ny
        if d > dist[i, j]:
            continue
        if left > 0 and _free_in_reach(bad, i, j, x0, y0, res, cx, cy, reach):
            left -= 1
            if left == 0:
                break
        ba = bad[i, j]
        for di in range(-1, 2):
            for dj in range(-1, 2):
                if di == 0 and dj == 0:
                    continue
                p, q = i + di, j + dj
                if p < 0 or q < 0 or p >= nx or q >= ny:
                    continue
                bb = bad[p, q]
                if bb > 0.0 and bb >= ba:
                    continue
                if di != 0 and dj != 0 and (bad[i + di, j] > ba or bad[i, j + dj] > ba):
                    continue
                step = diag if di != 0 and dj != 0 else res
                nd = d + step * 0.5 * (w[i, j] + w[p, q])
                if nd < dist[p, q]:
                    dist[p, q] = nd
                    parent[p, q] = k
                    heapq.heappush(heap, (nd, p * ny + q))


@njit(cache=True)
def _cell(x, x0, res, n):
    """Index of the cell holding coordinate ``x`` [m] on an axis starting at ``x0`` [m],
    clipped to [0, n - 1]."""
    return min(max(int(math.floor((x - x0) / res)), 0), n - 1)


@njit(cache=True)
def _bilinear(a, x, y, x0, y0, res):
    """``a`` (values at cell centres) interpolated at (x, y) [m]; the edge value beyond the
    outer centres."""
    nx, ny = a.shape
    fx = min(max((x - x0) / res - 0.5, 0.0), nx - 1.0)
    fy = min(max((y - y0) / res - 0.5, 0.0), ny - 1.0)
    i, j = min(int(fx), nx - 2), min(int(fy), ny - 2)
    tx, ty = fx - i, fy - j
    return ((1 - tx) * (1 - ty) * a[i, j] + tx * (1 - ty) * a[i + 1, j]
            + (1 - tx) * ty * a[i, j + 1] + tx * ty * a[i + 1, j + 1])


@njit(cache=True)
def _field_at(D, x, y, x0, y0, res):
    """Path cost of point (x, y) [m] on field ``D``: least (field + straight distance) over
    the cells within two of its own (a point off the field's cells, e.g. a box against a
    wall, reads from its nearest field cells); INF when none is reached."""
    nx, ny = D.shape
    ci, cj = _cell(x, x0, res, nx), _cell(y, y0, res, ny)
    best = INF
    for a in range(max(ci - 2, 0), min(ci + 3, nx)):
        for b in range(max(cj - 2, 0), min(cj + 3, ny)):
            if D[a, b] < INF:
                d = D[a, b] + math.hypot(x - (x0 + (a + 0.5) * res), y - (y0 + (b + 0.5) * res))
                if d < best:
                    best = d
    return best


@njit(cache=True)
def _carrot(D, x, y, gx, gy, x0, y0, res, lead):
    """The point ``lead`` [m] ahead of (x, y) [m] along field ``D``'s path (steepest
    descent from the best cell around the point), or the goal (gx, gy) once the path is
    shorter."""
    nx, ny = D.shape
    ci, cj = _cell(x, x0, res, nx), _cell(y, y0, res, ny)
    best, bi, bj = INF, -1, -1
    for a in range(max(ci - 2, 0), min(ci + 3, nx)):
        for b in range(max(cj - 2, 0), min(cj + 3, ny)):
            if D[a, b] < INF:
                d = D[a, b] + math.hypot(x - (x0 + (a + 0.5) * res), y - (y0 + (b + 0.5) * res))
                if d < best:
                    best, bi, bj = d, a, b
    if bi < 0:
        return gx, gy
    cx, cy = x0 + (bi + 0.5) * res, y0 + (bj + 0.5) * res
    walked = math.hypot(cx - x, cy - y)
    while walked < lead:
        if D[bi, bj] == 0.0:
            return gx, gy
        ni, nj, nd = bi, bj, D[bi, bj]
        for di in range(-1, 2):
            for dj in range(-1, 2):
                p, q = bi + di, bj + dj
                if 0 <= p < nx and 0 <= q < ny and D[p, q] < nd:
                    ni, nj, nd = p, q, D[p, q]
        if ni == bi and nj == bj:
            break
        walked += res * math.hypot(ni - bi, nj - bj)
        bi, bj = ni, nj
    if D[bi, bj] == 0.0:
        return gx, gy
    return x0 + (bi + 0.5) * res, y0 + (bj + 0.5) * res


@njit(cache=True)
def _steer(rx, ry, rth, tx, ty):
    """Diff-drive action (v, omega in [-1, 1]) toward (tx, ty) [m]: turn toward it, forward
    as far as facing it (as :func:`push_envs.scripted.steer`)."""
    err = (math.atan2(ty - ry, tx - rx) - rth + math.pi) % (2.0 * math.pi) - math.pi
    v = max(math.cos(err), 0.0) * min(1.0, 2.0 * math.hypot(tx - rx, ty - ry) + 0.3)
    return v, min(max(1.5 * err, -1.0), 1.0)


@njit(cache=True)
def _box_gap(prm, bth, bx, by, x, y):
    """Distance [m] from point (x, y) to the box at (bx, by) heading ``bth`` [rad]: a
    rectangle of half sides (hx, hy) rounded by radius rr (a disc: 0, 0, its radius)."""
    c, s = math.cos(bth), math.sin(bth)
    dx, dy = x - bx, y - by
    lx, ly = abs(c * dx + s * dy), abs(-s * dx + c * dy)
    return math.hypot(max(lx - prm[PRM_HX], 0.0), max(ly - prm[PRM_HY], 0.0)) - prm[PRM_RR]


@njit(cache=True)
def _standoff(prm, bth, ux, uy):
    """Distance [m] from the box's centre at which the robot touches the box (plus a hair)
    when pushing it along (ux, uy): the robot's radius plus the box's extent that way."""
    c, s = math.cos(bth), math.sin(bth)
    return (prm[PRM_ROBOT_R] + prm[PRM_HX] * abs(c * ux + s * uy)
            + prm[PRM_HY] * abs(-s * ux + c * uy) + prm[PRM_RR] + 0.02)


@njit(cache=True)
def _reach(dist, x0, y0, res, px, py, bx, by, vx, vy, depth):
    """Least (path cost + twice the straight distance) from the robot to push pose (px, py)
    [m] over the cells within two of its own that lie behind the box at (bx, by) (at least
    ``depth`` [m] back along the push (vx, vy)), from where the robot drives straight to the
    pose; and that cell's flat index (INF, -1 when none is reached).

    Why a neighbourhood: the pose itself lies just outside the box's keep-out and, next to a
    wall, in the wall's margin; the robot reaches it from a cell beside it, often along the
    wall."""
    nx, ny = dist.shape
    ci, cj = _cell(px, x0, res, nx), _cell(py, y0, res, ny)
    best, at = INF, -1
    for a in range(max(ci - 2, 0), min(ci + 3, nx)):
        cx = x0 + (a + 0.5) * res
        for b in range(max(cj - 2, 0), min(cj + 3, ny)):
            cy = y0 + (b + 0.5) * res
            if dist[a, b] < INF and (cx - bx) * vx + (cy - by) * vy <= -depth:
                d = dist[a, b] + 2.0 * math.hypot(px - cx, py - cy)
                if d < best:
                    best, at = d, a * ny + b
    return best, at


@njit(cache=True)
def _pose_cost(prm, clr, dist, x0, y0, rx, ry, bx, by, bth, vx, vy):
    """Robot travel [m x weight] to its push pose behind the box for a push along (vx, vy):
    0 when it already stands behind the box, INF when the pose is in a wall or cannot be
    reached."""
    res, robot_r = prm[PRM_RES], prm[PRM_ROBOT_R]
    st = _standoff(prm, bth, vx, vy)
    px, py = bx - vx * st, by - vy * st
    if _bilinear(clr, px, py, x0, y0, res) < robot_r - 0.02:
        return INF
    dx, dy = rx - bx, ry - by
    behind = -(dx * vx + dy * vy)
    if st - 0.12 < behind < st + 0.25 and abs(dx * vy - dy * vx) < 0.3:
        return 0.0
    return _reach(dist, x0, y0, res, px, py, bx, by, vx, vy, st - 0.1)[0]


@njit(cache=True)
def _act(D, clr, wall, rw, x0, y0, prm, rx, ry, rth, bx, by, bth, gx, gy, dist, parent, bad,
         chain):
    """One env's action (v, omega) and mode (0 push, 1 final approach, 2 planned path, 3 no
    path) on its layout's tile: ``D`` the box's path field to the goal, ``clr`` each cell's
    clearance [m] from the walls, ``wall`` how deep each cell lies in the walls' margin for the
    robot [m], ``rw`` the robot's step weights, tile corner (x0, y0) [m];
    robot at (rx, ry) [m] heading ``rth`` [rad], box at (bx, by) [m] heading ``bth`` [rad],
    goal (gx, gy) [m]. ``dist``, ``parent``, ``bad`` are scratch arrays of the tile's shape,
    ``chain`` one of its size (int)."""
    res, robot_r, align, lead = prm[PRM_RES], prm[PRM_ROBOT_R], prm[PRM_ALIGN], prm[PRM_LEAD]
    nx, ny = D.shape

    # The robot's obstacles: walls closer than its radius (and a hair), `wall` (the tile's
    # own), and the box grown by its radius and a gap; `bad` is how deep a cell lies in them.
    # The box's term is 0 beyond its bounding disc grown by the robot's radius and the gap
    # (a point's distance to the box is at least its distance to the centre less the box's
    # circumradius), so only the window around the box adds to the walls' term.
    gap = prm[PRM_GAP]
    bad[:, :] = wall
    outer = math.hypot(prm[PRM_HX], prm[PRM_HY]) + prm[PRM_RR]  # the box's circumradius
    grow = outer + robot_r + gap + res
    for i in range(_cell(bx - grow, x0, res, nx), _cell(bx + grow, x0, res, nx) + 1):
        cx = x0 + (i + 0.5) * res
        for j in range(_cell(by - grow, y0, res, ny), _cell(by + grow, y0, res, ny) + 1):
            cy = y0 + (j + 0.5) * res
            bad[i, j] = wall[i, j] + max(robot_r + gap - _box_gap(prm, bth, bx, by, cx, cy),
                                         0.0)
    # The search may stop once the cells every push pose reads are settled: a pose lies at
    # most `outer` + robot_r + 0.02 from the box's centre (_standoff, by Cauchy-Schwarz), and
    # _reach reads the cells within two of the pose's own, whose centres lie within
    # 2.5 sqrt(2) cells of it.
    si, sj = _cell(rx, x0, res, nx), _cell(ry, y0, res, ny)
    _dijkstra(rw, bad, si, sj, res, dist, parent, x0, y0, bx, by,
              outer + robot_r + 0.02 + 3.6 * res)

    # The path's push direction, then whether its push pose is free and reachable.
    tx, ty = _carrot(D, bx, by, gx, gy, x0, y0, res, lead)
    ux, uy = tx - bx, ty - by
    n = math.hypot(ux, uy)
    if n < 1e-9:
        return 0.0, 0.0, 0
    ux, uy = ux / n, uy / n
    if _pose_cost(prm, clr, dist, x0, y0, rx, ry, bx, by, bth, ux, uy) == INF:
        # Recovery: the direction of least (box path cost after a short push + robot travel)
        # among those whose push pose is free and reachable.
        here = _field_at(D, bx, by, x0, y0, res)
        best = INF
        vx0, vy0 = ux, uy
        for k in range(N_DIRS):
            a = 2.0 * math.pi * k / N_DIRS
            vx, vy = math.cos(a), math.sin(a)
            c = _pose_cost(prm, clr, dist, x0, y0, rx, ry, bx, by, bth, vx, vy)
            if c == INF:
                continue
            # Scored where the push takes the box, which must be a cell the box fits in.
            qx, qy = bx + prm[PRM_PROBE] * vx, by + prm[PRM_PROBE] * vy
            if D[_cell(qx, x0, res, nx), _cell(qy, y0, res, ny)] == INF:
                continue
            f = _field_at(D, qx, qy, x0, y0, res)
            # Stay near the path's own direction: the choice must not flicker.
            score = f - here + prm[PRM_TRAVEL] * c + prm[PRM_SWITCH] * (1.0 - (vx * ux + vy * uy))
            if score < best:
                best, vx0, vy0 = score, vx, vy
        if best < INF:
            ux, uy = vx0, vy0
            tx, ty = bx + ux * lead, by + uy * lead

    st = _standoff(prm, bth, ux, uy)
    dx, dy = rx - bx, ry - by
    behind = -(dx * ux + dy * uy)
    cross = dx * uy - dy * ux
    # Pushing: in contact behind the box (not merely somewhere behind it, e.g. past a wall).
    # Counter-steer: when the box must turn (its way to the target `da` [rad] off the line
    # from the robot through it), the robot heads `counter` x da to the other side of that
    # line; it slides along the box's back face to push off-centre on the side away from the
    # turn, which turns the box toward the target and brings the robot back behind it on the
    # new line (steering at the target instead pushes on the wrong side, so the box drifts
    # off the robot and the push breaks off more often).
    if st - 0.12 < behind < st + 0.12 and abs(cross) < align:
        a0 = math.atan2(by - ry, bx - rx)
        da = (math.atan2(ty - by, tx - bx) - a0 + math.pi) % (2.0 * math.pi) - math.pi
        a = a0 - prm[PRM_COUNTER] * da
        v, om = _steer(rx, ry, rth, rx + math.cos(a), ry + math.sin(a))
        return v, om, 0
    px, py = bx - ux * st, by - uy * st
    near = math.hypot(rx - px, ry - py)
    if near < 0.15 or (behind > st - 0.1 and near < 0.32):
        v, om = _steer(rx, ry, rth, px, py)
        return v, om, 1
    cost, k = _reach(dist, x0, y0, res, px, py, bx, by, ux, uy, st - 0.1)
    if k < 0:
        v, om = _steer(rx, ry, rth, px, py)
        return v, om, 3
    # The path to the cell by the push pose, end first (parent links); aim at its first cell
    # 0.3 m or more along it from the robot, or at the pose itself when it is shorter.
    m = 0
    while k >= 0:
        chain[m] = k
        m += 1
        k = parent[k // ny, k % ny]
    wx, wy = px, py
    walked = 0.0
    for q in range(m - 2, -1, -1):
        i, j = chain[q] // ny, chain[q] % ny
        walked += res * math.hypot(i - chain[q + 1] // ny, j - chain[q + 1] % ny)
        if walked >= 0.3:
            wx, wy = x0 + (i + 0.5) * res, y0 + (j + 0.5) * res
            break
    v, om = _steer(rx, ry, rth, wx, wy)
    return v, om, 2


@njit(cache=True, parallel=True)
def _act_batch(fields, fidx, clr, wall, rw, tidx, corner, prm, pose, out):
    """Every row's action (v, omega) into ``out`` (N, 2), as :func:`_act`, the rows split
    over numba's threads: row e plans on field ``fields[fidx[e]]`` and tile ``tidx[e]`` of
    the stacked tile tables ``clr``, ``wall``, ``rw`` (corner ``corner[tidx[e]]`` [m]);
    ``pose`` (N, 8) holds rx, ry, rth, bx, by, bth, gx, gy [m, rad]. Each row has scratch of
    its own, so the rows are independent and the actions do not depend on the threads."""
    nx, ny = clr.shape[1], clr.shape[2]
    for e in prange(len(pose)):
        dist, bad = np.empty((nx, ny)), np.empty((nx, ny))
        parent, chain = np.empty((nx, ny), np.int64), np.empty(nx * ny, np.int64)
        t = tidx[e]
        v, om, _ = _act(fields[fidx[e]], clr[t], wall[t], rw[t], corner[t, 0], corner[t, 1],
                        prm, pose[e, 0], pose[e, 1], pose[e, 2], pose[e, 3], pose[e, 4],
                        pose[e, 5], pose[e, 6], pose[e, 7], dist, parent, bad, chain)
        out[e, 0], out[e, 1] = v, om


# ---------------------------------------------------------------------- the planner
def scene_map(task: TaskSpec, env_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The grid map (occ[i, j], i along x), its resolution and offset [m], the tiles (columns,
    rows), the robot's radius [m] and the box's footprint (half sides and rounding [m], see
    PRM_HX) of the scene the env compiles: the task's own, or ``env_kwargs["scene"]`` (a YAML
    path or a scene mapping), loaded as the env loads it."""
    scene = (env_kwargs or {}).get("scene")
    if isinstance(scene, Mapping):
        raw, source, base = dict(scene), "<scene mapping>", None
    else:
        path = Path(scene) if scene is not None else task.scene_path()
        raw, source, base = read_scene_yaml(str(path)), str(path), str(path.parent)
    raw = task.edit_scene(dict(raw), source)
    spec = load_scene(raw, source=source, base_dir=base)
    sc = compile_scene(spec)
    wspec = spec.world
    if wspec.obstacle_map is None:
        raise SceneError(f"{source}: world.obstacle_map is missing; PushMaze-v1's expert plans "
                         f"on the grid map")
    layouts = task.args["layouts"]
    if layouts is None:  # as PushMaze._tiles: the task's split for its own map only
        own = not isinstance(scene, Mapping) and (
            scene is None or os.path.abspath(scene) == os.path.abspath(task.scene_path()))
        layouts = task.layouts if own else (1, 1)
    size = task.args["box_size_range"]
    grow = size[1] if size else 1.0  # the largest box an episode may draw
    o, r = sc.index[task.object_body], sc.index[task.robot_body]
    shape = next(b.shape for b in spec.bodies if b.name == task.object_body)
    if shape.get("name") == "rectangle":
        box = (0.5 * shape["length"] * grow, 0.5 * shape["width"] * grow, 0.0)
    else:
        box = (0.0, 0.0, float(sc.bflt[o, BF_BRAD]) * grow)
    return {"occ": np.asarray(wspec.obstacle_map, bool), "res": float(wspec.map_resolution),
            "offset": tuple(map(float, wspec.offset)), "layouts": tuple(layouts),
            "robot_r": float(sc.bflt[r, BF_BRAD]), "box": box,
            "box_r": float(sc.bflt[o, BF_BRAD]) * grow}


class MazePlanner:
    """The map's tables for :func:`_act`, per tile (C-contiguous, so the kernels compile for
    one array layout): each cell's clearance [m] from the walls, how deep it lies in the
    walls' margin for the robot [m], the robot's and the box's step weights; and the box's
    path field per goal cell (computed on first use and kept: goals lie on the task's goal
    sites, a bounded set). ``threads``: numba threads of :meth:`act_batch` (default all).

    ``box`` is the box's footprint (hx, hy, rr) [m] and ``box_r`` its bounding radius [m]
    (the box's path keeps its centre on cells at least that far from walls)."""

    def __init__(self, occ: np.ndarray, res: float, offset: tuple, layouts: tuple,
                 robot_r: float, box: tuple, box_r: float, threads: int | None = None) -> None:
        self.occ, self.res, self.offset = occ, res, offset
        nx, ny = occ.shape
        self.tnx, self.tny = nx // layouts[0], ny // layouts[1]
        reach = int(math.ceil(1.0 / res)) + 1  # clearance beyond 1 m changes no weight
        # Why the weights: a box path along a wall leaves the robot no room to get behind the
        # box, a robot path along one scrapes it; the middle of a 0.8 m doorway still costs
        # only about twice a free step.
        wide = 0.6  # [m] the box's path is free of extra cost this far from walls
        # Per tile: the box's tables (its step weights and obstacle cells, for its path
        # fields) by the tile's first cell; the robot's (clearance, margin, step weights) and
        # the tile's corner [m] stacked, row _tile_of[i0, j0], as _act and _act_batch read them.
        self._box_tables: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._tile_of: dict[tuple[int, int], int] = {}
        clr, walls, rws, corner = [], [], [], []
        for i0 in range(0, nx, self.tnx):
            for j0 in range(0, ny, self.tny):
                clear = np.zeros((self.tnx, self.tny))
                clearance(occ, i0, j0, self.tnx, self.tny, reach, res, clear)
                f = np.clip((wide - clear) / max(wide - box_r, 1e-6), 0.0, None)
                box_w = 1.0 + 4.0 * f ** 2
                box_bad = (clear < box_r).astype(np.float64)
                f = np.clip((robot_r + 0.15 - clear) / 0.15, 0.0, None)
                self._box_tables[i0, j0] = (box_w, box_bad)
                self._tile_of[i0, j0] = len(clr)
                clr.append(clear)
                walls.append(np.maximum(robot_r + 0.01 - clear, 0.0))  # the robot's margin [m]
                rws.append(1.0 + 3.0 * f ** 2)
                corner.append((offset[0] + i0 * res, offset[1] + j0 * res))
        self._clr, self._wall, self._rw = (np.ascontiguousarray(np.stack(t))
                                           for t in (clr, walls, rws))
        self._corner = np.array(corner)
        self.prm = np.zeros(N_PRM)
        self.prm[[PRM_RES, PRM_ROBOT_R, PRM_HX, PRM_HY, PRM_RR]] = res, robot_r, *box
        self.prm[PRM_ALIGN] = 0.12  # off the push line that still pushes
        self.prm[PRM_LEAD] = 0.6  # the push aims this far ahead along the path (0.9 cuts
        # the serpentine's corners into its walls)
        self.prm[PRM_PROBE] = 0.3  # a recovery push is scored this far on
        self.prm[PRM_GAP] = 0.03  # kept between the robot's planned path and the box
        self.prm[PRM_SWITCH] = 0.3  # cost of a recovery push square to the path
        self.prm[PRM_TRAVEL] = 0.1  # weight of the robot's travel in a recovery's cost
        self.prm[PRM_COUNTER] = 3.5  # counter-steer gain while pushing (see _act)
        # the box's path fields in the order they were first asked for (_field_of: goal
        # cell -> its row)
        self._field_of: dict[int, int] = {}
        self._stack = np.zeros((0, self.tnx, self.tny))
        # numba threads of act_batch (all of numba's by default: an expert labels a batch
        # while nothing else runs); the caller's own count is put back after each call
        self.threads = numba.config.NUMBA_NUM_THREADS if threads is None else int(threads)
        shape = (self.tnx, self.tny)
        self._scratch = (np.zeros(shape), np.zeros(shape, np.int64), np.zeros(shape),
                         np.zeros(self.tnx * self.tny, np.int64))

    def tile(self, x: float, y: float) -> tuple[int, int, int, int]:
        """The cell (i, j) holding point (x, y) [m] (clipped to the map) and the first cell
        (i0, j0) of its tile."""
        nx, ny = self.occ.shape
        i = min(max(int(math.floor((x - self.offset[0]) / self.res)), 0), nx - 1)
        j = min(max(int(math.floor((y - self.offset[1]) / self.res)), 0), ny - 1)
        return i, j, i - i % self.tnx, j - j % self.tny

    def _field_index(self, gx: float, gy: float) -> int:
        """The row of ``_stack`` holding the box's path field to the goal (gx, gy) [m],
        computed on first use."""
        gi, gj, i0, j0 = self.tile(gx, gy)
        key = gi * self.occ.shape[1] + gj
        if key not in self._field_of:
            box_w, box_bad = self._box_tables[i0, j0]
            bad = box_bad.copy()
            bad[gi - i0, gj - j0] = 0.0  # the goal's cell itself (sites are box cells)
            D = np.zeros((self.tnx, self.tny))
            parent = np.zeros((self.tnx, self.tny), np.int64)
            _dijkstra(box_w, bad, gi - i0, gj - j0, self.res, D, parent)
            self._field_of[key] = len(self._stack)
            self._stack = np.concatenate([self._stack, D[None]])
        return self._field_of[key]

    def field(self, gx: float, gy: float) -> np.ndarray:
        """The box's path field (tile shape) to the goal (gx, gy) [m]."""
        k = self._field_index(gx, gy)  # first: it may replace _stack
        return self._stack[k]

    def act_batch(self, pose: np.ndarray) -> np.ndarray:
        """Actions (N, 2) (v, omega) for the rows of ``pose`` (N, 8): rx, ry, rth, bx, by,
        bth, gx, gy [m, rad], each planned on its goal's tile (as :meth:`act`, bit for bit),
        over ``threads`` numba threads."""
        pose = np.ascontiguousarray(pose, np.float64)
        # the goals are few (the task's goal sites): look each one's field and tile up once
        goals, row = np.unique(pose[:, 6:8], axis=0, return_inverse=True)
        fidx = np.empty(len(goals), np.int64)
        tidx = np.empty(len(goals), np.int64)
        for k, (gx, gy) in enumerate(goals):
            _, _, i0, j0 = self.tile(gx, gy)
            fidx[k], tidx[k] = self._field_index(gx, gy), self._tile_of[i0, j0]
        row = row.reshape(-1)
        fidx, tidx = fidx[row], tidx[row]
        out = np.zeros((len(pose), 2))
        before = numba.get_num_threads()
        numba.set_num_threads(max(1, min(self.threads, numba.config.NUMBA_NUM_THREADS)))
        try:
            _act_batch(self._stack, fidx, self._clr, self._wall, self._rw, tidx, self._corner,
                       self.prm, pose, out)
        finally:
            numba.set_num_threads(before)
        return out

    def act(self, rx: float, ry: float, rth: float, bx: float, by: float, bth: float,
            gx: float, gy: float) -> tuple[float, float, int]:
        """One env's (v, omega, mode) (see :func:`_act`) on the goal's tile; poses [m, rad]."""
        D = self.field(gx, gy)
        _, _, i0, j0 = self.tile(gx, gy)
        t = self._tile_of[i0, j0]
        return _act(D, self._clr[t], self._wall[t], self._rw[t], self._corner[t, 0],
                    self._corner[t, 1], self.prm, rx, ry, rth, bx, by, bth, gx, gy,
                    *self._scratch)


def push_maze_actions(obs: np.ndarray, ix: ObsIndex, plan: MazePlanner) -> np.ndarray:
    """Actions (N, 2) in [-1, 1] for a batch of state observations (N, obs_dim) (columns
    named by ``ix``), planned on ``plan``'s map."""
    o = state_batch(obs, ix.size)
    rx, ry, c, s = robot_pose(o, ix)
    th = np.arctan2(s, c)
    bth = th + np.arctan2(o[:, ix.object_heading_rel + 1], o[:, ix.object_heading_rel])
    bx, by = world_points(o, ix, ix.object_rel)
    gx, gy = o[:, ix.goal_xy], o[:, ix.goal_xy + 1]
    pose = np.stack([rx, ry, th, bx, by, bth, gx, gy], axis=1)
    return plan.act_batch(pose).astype(np.float32)


def expert(task: TaskSpec, env_kwargs: Mapping[str, Any] | None = None) -> BatchPolicy:
    """The batch policy for ``task`` (its arguments set the observation's columns; the scene
    in ``env_kwargs``, if any, sets the map it plans on)."""
    ix = ObsIndex(task.observation(), task.args)
    plan = MazePlanner(**scene_map(task, env_kwargs))
    return lambda obs: push_maze_actions(obs, ix, plan)
