"""Sweep-v1's scripted sweeper (diff drive): plough rows of pucks into the goal circle with
the robot's flat front face, one straight pass at a time.

A pass is a start pose (the robot's centre S [m], heading u) and a push length L [m]: the
robot drives to S, turns onto u on the spot and drives L straight ahead; every puck within
``capture`` (0.18 m) of the line ahead rides on the 0.4 m face (body contacts are
frictionless, so a puck on a face moving straight ahead stays where it touched it, and
pucks in a row push each other along). Each time a pass ends, the robot backs off a step
and chooses the next among:

* goal passes: along each of 72 directions, at offsets across the goal centre (every
  0.1 m, up to 0.2 m either side for the 0.5 m circle), from 0.3 m behind each of the 4
  farthest pucks of the swath, until the face leaves its pucks about ``goal_radius - 0.1``
  from the centre;
* release passes, for pucks within 0.58 m of a wall: the robot needs 0.25 m (its
  half-diagonal) between its centre and a wall to turn on the spot, and 0.3 m behind a puck
  to turn without touching it, so no pose behind such a puck pushes it away from the wall.
  These run along the wall either way, slanted 0.25-1.1 rad away from it, and leave the
  puck 0.62 m off it.

Each candidate is scored by the value it gains per step it takes. Value: each puck costs 0
well inside the circle, 1 outside, up to 3.5 by a wall or in a corner; the pucks in the
candidate's swath are slid to the end of its push (pucks inside carried out count against
it). Steps: the travel to S (a grid Dijkstra kept off the walls, the pucks outside and, the
more so near the rim, the pucks inside), the turns (onto the way to S, front or back
first, and onto u) and the push. Where no start has room to turn on the spot, starts with
room for the robot's box only (0.23 m behind the puck) are tried; where none is left, the
robot pushes the nearest puck outside at the centre for a while (:meth:`_Sweeper.free`).
The robot drives to S front or back first, whichever turns less: after a pass into the
circle it mostly backs out toward the next start. A robot that stalls (a wall, a jam of
pucks) backs off and chooses again, leaving that start alone for a while.

500 episodes (``python -m push_envs.experts evaluate Sweep-v1 --episodes 500 --seed
10000``): 98.6 % have 18 of the 20 pucks inside within the 500 steps (Wilson 97.1-99.3 %,
mean 328 steps); given 700 steps every one does. The failures are slow episodes, their last
pucks by the walls.

:func:`markov_expert` is the same sweeper without a memory, the teacher of the learned
baseline: a clone sees only the observation, and the planner's mode and pass are not in it.
It chooses afresh every step, the pass straight ahead of the robot included
(:class:`_Markov`); 184 of 200 episodes (92 %, seed 10000), about 3.5 ms per env-step.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

from push_envs.core import ObsIndex
from push_envs.core import TaskSpec
from push_envs.scripted import BatchPolicy
from push_envs.scripted import push_actions
from push_envs.scripted import state_batch
from push_envs.scripted import wrap_angle

HALF_LEN, HALF_WID = 0.15, 0.2  # [m] half the robot's 0.3 m x 0.4 m box (scene.yaml)
PUCK_R = 0.05  # [m] (scene.yaml)
TURN_R = 0.25  # [m] the robot's half-diagonal: what sweeps past when it turns on the spot
CELL = 0.05  # [m] side of the travel planner's grid cells
WALL_KEEP = 0.17  # [m] least distance of the robot's centre from a wall on its way
RELEASED = 0.62  # [m] from its wall, where a release pass leaves a puck
HARD = 0.58  # [m] pucks nearer a wall have no pose behind them that pushes them off it
JUMP = 0.3  # [m] a robot or puck moving farther in one step: its env started a new episode

PLAN, GOTO, ALIGN, PUSH, BACK, FREE = range(6)


@njit(cache=True)
def _travel_field(cost, si, sj, cell):
    """Dijkstra over the 8-connected grid ``cost`` (per-metre multipliers >= 1, inf where the
    robot's centre may not go) from cell (si, sj): the cost [m] to every cell and each
    cell's predecessor (flat index, -1 at the start and where unreached)."""
    h, w = cost.shape
    dist = np.full((h, w), np.inf)
    prev = np.full((h, w), -1, np.int64)
    dist[si, sj] = 0.0
    heap = [(0.0, si * w + sj)]
    di = (-1, -1, -1, 0, 0, 1, 1, 1)
    dj = (-1, 0, 1, -1, 1, -1, 0, 1)
    while heap:
        d, k = heapq.heappop(heap)
        i, j = k // w, k % w
        if d > dist[i, j]:
            continue
        for m in range(8):
            a, b = i + di[m], j + dj[m]
            if a < 0 or a >= h or b < 0 or b >= w or not np.isfinite(cost[a, b]):
                continue
            step = cell * (1.4142135623730951 if di[m] != 0 and dj[m] != 0 else 1.0)
            nd = d + step * 0.5 * (cost[i, j] + cost[a, b])
            if nd < dist[a, b]:
                dist[a, b] = nd
                prev[a, b] = k
                heapq.heappush(heap, (nd, a * w + b))
    return dist, prev


def _ang(a, b):
    """Absolute angle between headings a and b [rad] (arrays broadcast)."""
    return np.abs((np.asarray(b) - a + np.pi) % (2.0 * np.pi) - np.pi)


def _drive(r: np.ndarray, th: float, q: np.ndarray, reverse: bool, speed: float) -> np.ndarray:
    """Diff-drive action (v, omega in [-1, 1]) from (r [m], th [rad]) toward point q [m],
    front or back first: turn toward it, driving only while nearly facing it."""
    head = th + (math.pi if reverse else 0.0)
    err = wrap_angle(math.atan2(q[1] - r[1], q[0] - r[0]) - head)
    v = max(math.cos(err), 0.0) ** 2 * speed if abs(err) <= 0.7 else 0.0
    return np.array([-v if reverse else v, np.clip(err / 0.25, -1.0, 1.0)], np.float32)


class _Setup:
    """The arena, the planner's grid and the sweeper's settings (shared by every row)."""

    def __init__(self, walls: tuple[float, float, float, float], goal_r: float) -> None:
        self.walls = walls  # [m] the arena's inner faces, x0, y0, x1, y1
        self.goal_r = goal_r
        x0, y0, x1, y1 = walls
        self.nx = int(round((x1 - x0) / CELL))
        self.ny = int(round((y1 - y0) / CELL))
        self.cx, self.cy = np.meshgrid(x0 + CELL * (np.arange(self.nx) + 0.5),
                                       y0 + CELL * (np.arange(self.ny) + 0.5))
        self.wall_d = np.minimum(np.minimum(self.cx - x0, x1 - self.cx),
                                 np.minimum(self.cy - y0, y1 - self.cy))
        self.wall_cells = int(math.ceil(WALL_KEEP / CELL))
        self.angles = np.linspace(-math.pi, math.pi, 72, endpoint=False)
        self.dirs = np.stack([np.cos(self.angles), np.sin(self.angles)], 1)
        # [m] of a goal pass across the centre: up to goal_r - 0.3 (0.2 m for the 0.5 m
        # circle), so that its swath (``capture`` either side) ends 0.12 m inside the rim.
        reach = min(0.2, max(goal_r - 0.3, 0.0))
        self.offsets = tuple(c for c in (-0.2, -0.1, 0.0, 0.1, 0.2) if abs(c) <= reach + 1e-9)
        # [m] half-width of the swath the face carries: within the face's 0.2 m, with room
        # for the robot's tracking error (0.21 m measured slower).
        self.capture = 0.18
        self.standoff = 0.3  # [m] start behind the farthest puck: TURN_R + PUCK_R
        self.standoff_tight = 0.23  # [m] the same where there is no room to turn
        # [m] from the goal centre, where a goal pass leaves the pucks on its face: deeper
        # costs time, shallower leaves them where the next pass may knock them out.
        self.deposit = max(goal_r - 0.1, 0.0)
        self.slants = (0.25, 0.5, 0.8, 1.1)  # [rad] of the release passes off the wall
        self.lanes = np.array([-0.16, -0.08, 0.0, 0.08, 0.16])  # [m] puck across the face
        # Travel cost per metre, added near a puck outside (a knock moves it, maybe to a
        # wall; 2 measured slower), near a puck inside (the more the nearer the rim, where a
        # knock puts it out) and near a wall (too near to turn on the spot).
        self.w_knock, self.w_pile, self.w_wall = 5.0, 8.0, 1.5
        self.overhead = 6.0  # [steps] a pass takes beyond its travel, turns and push
        self.v_step = 0.1  # [m] per step at full speed (1 m/s, 0.1 s steps)
        self.w_step = 0.2  # [rad] per step at full turn (2 rad/s)


class _Sweeper:
    """One env's sweeper: the pass it is on and how far along it is."""

    def __init__(self, p: _Setup) -> None:
        self.p = p
        self.mode = PLAN
        self.timer = 0  # steps in the current mode (or since the pass was chosen)
        self.t = 0  # steps since the episode started
        self.path = np.zeros((0, 2))  # [m] waypoints to the start
        self.reverse = False  # driving to the start back first
        self.start = np.zeros(2)  # [m] the pass's start S
        self.u = np.zeros(2)  # its push direction
        self.length = 0.0  # [m] its push length
        self.hist: list[tuple[float, float, float]] = []  # the last 10 poses
        self.bans: list[tuple[float, float, int]] = []  # starts that failed: x, y, until
        self.escape = 0  # steps left of backing off after a stall
        self.escape_v = 0.0
        self.last_v = 0.0  # the last speed command: a stall backs off against it

    # ------------------------------------------------------------------ planning
    def value(self, q: np.ndarray, g: np.ndarray) -> np.ndarray:
        """What pucks at q (..., 2) [m] still cost: 0 within ``goal_r - 0.05`` of the centre,
        0.2 on the circle's last 5 cm, 1 outside; plus, outside, up to 1 within ``HARD`` of
        a wall, 0.5 more hard by it (< 0.4 m) and up to 1 within ``HARD`` of a second wall
        (a corner)."""
        p = self.p
        x0, y0, x1, y1 = p.walls
        wx = np.minimum(q[..., 0] - x0, x1 - q[..., 0])
        wy = np.minimum(q[..., 1] - y0, y1 - q[..., 1])
        w, w2 = np.minimum(wx, wy), np.maximum(wx, wy)
        d = np.hypot(q[..., 0] - g[0], q[..., 1] - g[1])
        v = 1.0 + np.clip((HARD - w) / 0.15, 0.0, 1.0) + np.clip((0.4 - w) / 0.3, 0.0, 0.5) \
            + np.clip((HARD - w2) / 0.15, 0.0, 1.0)
        return np.where(d <= p.goal_r - 0.05, 0.0, np.where(d <= p.goal_r, 0.2, v))

    def fits(self, x: Any, y: Any, ux: Any, uy: Any) -> Any:
        """Whether the robot's box, centred at (x, y) [m] and heading along (ux, uy), lies
        inside the walls with 2 cm to spare (arrays broadcast)."""
        x0, y0, x1, y1 = self.p.walls
        ext_x = HALF_LEN * np.abs(ux) + HALF_WID * np.abs(uy) + 0.02
        ext_y = HALF_LEN * np.abs(uy) + HALF_WID * np.abs(ux) + 0.02
        return (x - ext_x > x0) & (x + ext_x < x1) & (y - ext_y > y0) & (y + ext_y < y1)

    def gain(self, pucks: np.ndarray, g: np.ndarray, carried: np.ndarray, slide: np.ndarray,
             u: np.ndarray) -> np.ndarray:
        """Value gained by passes along directions u (..., 2) that slide the pucks (n, 2) [m]
        they carry (``carried``, (..., n)) by ``slide`` [m] (:meth:`value`); pucks inside
        that a pass carries out of the circle count against it."""
        after = pucks + np.where(carried, slide, 0.0)[..., None] * u[..., None, :]
        return (self.value(pucks, g) - self.value(after, g)).sum(-1)

    def cost_map(self, pucks: np.ndarray, inside: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Travel cost per metre of the robot's centre in each grid cell (inf: too near a
        wall for its box)."""
        p = self.p
        m = np.where(p.wall_d < WALL_KEEP, np.inf, 1.0)
        m[(p.wall_d >= WALL_KEEP) & (p.wall_d < TURN_R + 0.01)] += p.w_wall
        for (qx, qy), ins in zip(pucks, inside, strict=True):
            # Within 0.28 m of a puck the robot's box (0.15-0.25 m from its centre to its
            # edge) is about to touch it.
            near = (p.cx - qx) ** 2 + (p.cy - qy) ** 2 < 0.28 ** 2
            if ins:
                rim = math.hypot(qx - g[0], qy - g[1]) / p.goal_r
                m[near] += p.w_pile * min(1.0, max(0.25, rim))
            else:
                m[near] += p.w_knock
        return m

    def goal_passes(self, g: np.ndarray, out: np.ndarray, standoff: float) -> list[np.ndarray]:
        """Straight passes into the circle (rows of start x, y [m], direction x, y, push
        length [m]): along each direction, at each offset across the goal centre, from
        ``standoff`` behind each of the 4 farthest pucks outside in the swath."""
        p = self.p
        ux, uy = p.dirs[:, 0], p.dirs[:, 1]
        dx, dy = out[:, 0] - g[0], out[:, 1] - g[1]
        t = ux[:, None] * dx + uy[:, None] * dy  # (A, k) along the push, from the centre
        lat = -uy[:, None] * dx + ux[:, None] * dy  # (A, k) across it
        parts = []
        for c in p.offsets:
            # The face stops where the pucks on it lie about ``deposit`` from the centre.
            face_end = -PUCK_R - math.sqrt(max(p.deposit ** 2 - (abs(c) + 0.1) ** 2, 0.0))
            swath = (np.abs(lat - c) < p.capture) & (t < face_end)
            ts = np.sort(np.where(swath, t, np.inf), axis=1)  # farthest first
            for rank in range(min(4, len(out))):
                ok = np.isfinite(ts[:, rank])
                if not ok.any():
                    break
                t_s = ts[ok, rank] - standoff
                vx, vy = ux[ok], uy[ok]
                parts.append(np.stack([g[0] + vx * t_s - vy * c, g[1] + vy * t_s + vx * c,
                                       vx, vy, face_end - HALF_LEN - t_s], 1))
        return parts

    def release_passes(self, out: np.ndarray, standoff: float) -> list[np.ndarray]:
        """Passes (rows as :meth:`goal_passes`) along a wall either way, slanted away from
        it, that leave a puck within ``HARD`` of it ``RELEASED`` off it, the puck at each of
        ``lanes`` across the face."""
        p = self.p
        x0, y0, x1, y1 = p.walls
        parts = []
        walls = ((out[:, 0] - x0, (1.0, 0.0)), (x1 - out[:, 0], (-1.0, 0.0)),
                 (out[:, 1] - y0, (0.0, 1.0)), (y1 - out[:, 1], (0.0, -1.0)))
        lam = p.lanes
        one = np.ones_like(lam)
        for w, (nx, ny) in walls:  # distance to the wall, its inward normal
            for j in np.nonzero(w < HARD)[0]:
                for sgn in (-1.0, 1.0):
                    tx, ty = -ny * sgn, nx * sgn
                    for alpha in p.slants:
                        ca, sa = math.cos(alpha), math.sin(alpha)
                        vx, vy = ca * tx + sa * nx, ca * ty + sa * ny
                        length = standoff - HALF_LEN - PUCK_R + (RELEASED - w[j]) / sa
                        sx = out[j, 0] - standoff * vx + lam * vy
                        sy = out[j, 1] - standoff * vy - lam * vx
                        parts.append(np.stack([sx, sy, vx * one, vy * one, length * one], 1))
        return parts

    def plan(self, r: np.ndarray, th: float, g: np.ndarray, pucks: np.ndarray,
             inside: np.ndarray) -> bool:
        """Choose the next pass (the most value per step) and the path to its start; where
        no start has room to turn on the spot, one with room for the robot's box."""
        return self._plan(r, th, g, pucks, inside, False) or \
            self._plan(r, th, g, pucks, inside, True)

    def _plan(self, r: np.ndarray, th: float, g: np.ndarray, pucks: np.ndarray,
              inside: np.ndarray, tight: bool) -> bool:
        p = self.p
        out = pucks[~inside]
        if len(out) == 0:
            return False
        standoff = p.standoff_tight if tight else p.standoff
        parts = self.goal_passes(g, out, standoff) + self.release_passes(out, standoff)
        if not parts:
            return False
        sx, sy, ux, uy, length = np.concatenate(parts).T
        x0, y0, x1, y1 = p.walls
        # The robot's box inside the walls at the start and at the end (the push between is
        # straight); at the start, room to turn on the spot too, unless ``tight``.
        ex, ey = sx + ux * length, sy + uy * length
        ok = self.fits(ex, ey, ux, uy) & self.fits(sx, sy, ux, uy)
        ok &= length > 0.0
        if not tight:
            ok &= np.minimum(np.minimum(sx - x0, x1 - sx), np.minimum(sy - y0, y1 - sy)) \
                >= TURN_R
        for bx, by, until in self.bans:
            if until > self.t:
                ok &= np.hypot(sx - bx, sy - by) > 0.15
        sx, sy, ux, uy, length = (v[ok] for v in (sx, sy, ux, uy, length))
        if len(sx) == 0:
            return False
        # Every puck in the start's frame (a ahead, b across): those in the swath ahead end
        # on the face (or ahead of it, where they lie beyond) when the push ends.
        rel_x, rel_y = pucks[:, 0] - sx[:, None], pucks[:, 1] - sy[:, None]
        a = ux[:, None] * rel_x + uy[:, None] * rel_y
        b = -uy[:, None] * rel_x + ux[:, None] * rel_y
        reach = (length + HALF_LEN + PUCK_R)[:, None]
        carried = (np.abs(b) < p.capture) & (a > HALF_LEN) & (a < reach)
        # Nothing else within reach of the robot turning at the start or, if ``tight``,
        # under its box there.
        if tight:
            ok = ~((np.abs(a) < HALF_LEN + PUCK_R + 0.01)
                   & (np.abs(b) < HALF_WID + PUCK_R + 0.01)).any(1)
        else:
            ok = ~((np.hypot(a, b) < TURN_R + PUCK_R) & ~(carried & (a > 0.27))).any(1)
        value = self.gain(pucks, g, carried, reach - a, np.stack([ux, uy], 1))
        ok &= value > 0.3
        if not ok.any():
            return False
        cost = self.cost_map(pucks, inside, g)
        si, sj = self.cell_of(r)
        cost[si, sj] = 1.0  # the robot may leave the cell it is in, however near a wall
        dist, prev = _travel_field(cost, si, sj, CELL)
        ci, cj = self.cells_of(sx, sy)
        travel = dist[ci, cj] + np.hypot(sx - p.cx[ci, cj], sy - p.cy[ci, cj])
        # Turning: toward the start (front or back first), then onto the push direction.
        d_ang = np.arctan2(sy - r[1], sx - r[0])
        u_ang = np.arctan2(uy, ux)
        fwd = _ang(th, d_ang) + _ang(d_ang, u_ang)
        rev = _ang(th + math.pi, d_ang) + _ang(d_ang + math.pi, u_ang)
        near = np.hypot(sx - r[0], sy - r[1]) < 0.15
        turn = np.where(near, _ang(th, u_ang), np.minimum(fwd, rev))
        steps = travel / p.v_step + turn / p.w_step + length / p.v_step + p.overhead
        score = np.where(ok & np.isfinite(travel), value / steps, -np.inf)
        k = int(np.argmax(score))
        if not np.isfinite(score[k]):
            return False
        self.score = float(score[k])
        self.start = np.array([sx[k], sy[k]])
        self.u = np.array([ux[k], uy[k]])
        self.length = float(length[k])
        # The path: the predecessors back from the start's cell, then the start itself.
        ci, cj = self.cell_of(self.start)
        cells = []
        q = ci * p.nx + cj
        while q >= 0 and len(cells) < p.nx * p.ny:
            cells.append(q)
            q = prev[q // p.nx, q % p.nx]
        cells = cells[::-1][1:]
        self.path = np.vstack([np.stack([p.cx.flat[cells], p.cy.flat[cells]], 1),
                               self.start[None]])
        # Front or back first: whichever turns less onto the first leg and off the last.
        d0 = self.path[min(len(self.path) - 1, 5)] - r
        d1 = self.start - self.path[max(0, len(self.path) - 6)]
        a0, a1 = math.atan2(d0[1], d0[0]), math.atan2(d1[1], d1[0])
        ua = math.atan2(self.u[1], self.u[0])
        self.reverse = bool(_ang(th + math.pi, a0) + _ang(a1 + math.pi, ua)
                            < _ang(th, a0) + _ang(a1, ua))
        self.mode = GOTO
        self.timer = 0
        return True

    def cell_of(self, q: np.ndarray) -> tuple[int, int]:
        """The grid cell (row, column) of point q [m]."""
        p = self.p
        i = int(np.clip((q[1] - p.walls[1]) // CELL, 0, p.ny - 1))
        j = int(np.clip((q[0] - p.walls[0]) // CELL, 0, p.nx - 1))
        return i, j

    def cells_of(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Grid cells of points (x, y) [m]; a start hard by a wall, in a cell the robot may
        not cross, gets the nearest cell inward that it may."""
        p = self.p
        i = np.clip(((y - p.walls[1]) // CELL).astype(int), p.wall_cells, p.ny - 1 - p.wall_cells)
        j = np.clip(((x - p.walls[0]) // CELL).astype(int), p.wall_cells, p.nx - 1 - p.wall_cells)
        return i, j

    # ------------------------------------------------------------------ acting
    def act(self, r: np.ndarray, th: float, g: np.ndarray, pucks: np.ndarray,
            inside: np.ndarray) -> np.ndarray:
        """The action (v, omega in [-1, 1]) at robot position r [m], heading th [rad], goal
        centre g [m], pucks (n, 2) [m] and their inside flags."""
        self.timer += 1
        self.t += 1
        self.hist = [*self.hist[-9:], (r[0], r[1], th)]
        if self.escape > 0:
            self.escape -= 1
            return np.array([self.escape_v, 0.0], np.float32)
        if self.mode in (GOTO, ALIGN, PUSH) and len(self.hist) == 10 and self.timer > 10:
            x0, y0, a0 = self.hist[0]
            if math.hypot(r[0] - x0, r[1] - y0) + 0.2 * abs(wrap_angle(th - a0)) < 0.04:
                # Stalled against a wall or a jam of pucks: back off the way it came for 3
                # steps, choose again, and leave this start alone for 80 steps.
                if self.mode != PUSH:
                    self.bans.append((self.start[0], self.start[1], self.t + 80))
                self.escape = 3
                self.escape_v = -0.6 if self.last_v >= 0 else 0.6
                self.mode = PLAN
                self.hist = []
                return np.zeros(2, np.float32)
        a = self._act(r, th, g, pucks, inside)
        self.last_v = float(a[0])
        return a

    def _act(self, r: np.ndarray, th: float, g: np.ndarray, pucks: np.ndarray,
             inside: np.ndarray) -> np.ndarray:
        for _ in range(3):  # a mode that is done hands over to the next in the same step
            if self.mode == PLAN and not self.plan(r, th, g, pucks, inside):
                self.mode, self.timer = FREE, 0
            if self.mode == FREE:
                a = self.free(r, th, g, pucks, inside)
            elif self.mode == GOTO:
                a = self.goto(r, th)
            elif self.mode == ALIGN:
                a = self.align(r, th)
            elif self.mode == PUSH:
                a = self.push(r, th)
            else:  # BACK: one step back off the pucks just left, then choose again
                a = np.array([-1.0, 0.0], np.float32) if self.timer <= 0 else None
                if a is None:
                    self.mode = PLAN
            if a is not None:
                return a
        return np.zeros(2, np.float32)

    def free(self, r: np.ndarray, th: float, g: np.ndarray, pucks: np.ndarray,
             inside: np.ndarray) -> np.ndarray | None:
        """No pass to choose (every start blocked, or every puck inside): push the puck
        outside nearest the robot at the goal centre for 10 steps, then choose again."""
        out = pucks[~inside]
        if self.timer > 10 or len(out) == 0:
            self.mode = PLAN
            return np.zeros(2, np.float32)
        q = out[int(np.argmin(np.hypot(out[:, 0] - r[0], out[:, 1] - r[1])))]
        one = [np.array([v], np.float64) for v in (*r, th, *q, *g)]
        return push_actions(*one, standoff=HALF_LEN + PUCK_R + 0.04, align=0.1)[0]

    def goto(self, r: np.ndarray, th: float) -> np.ndarray | None:
        """Follow the path to the start, 0.25 m ahead, front or back first."""
        if self.timer > 150:
            self.mode = PLAN
            return None
        d = np.hypot(self.path[:, 0] - r[0], self.path[:, 1] - r[1])
        self.path = self.path[int(np.argmin(d)):]
        d_start = math.hypot(self.start[0] - r[0], self.start[1] - r[1])
        if d_start < 0.04:
            self.mode, self.timer = ALIGN, 0
            return None
        ahead = np.nonzero(np.hypot(self.path[:, 0] - r[0], self.path[:, 1] - r[1]) > 0.25)[0]
        q = self.path[ahead[0]] if len(ahead) else self.path[-1]
        return _drive(r, th, q, self.reverse, min(1.0, 5.0 * d_start + 0.1))

    def on_line(self, r: np.ndarray, th: float) -> tuple[float, float, float]:
        """The robot against the pass: heading error onto its direction [rad], the start
        ahead along it [m] and the robot's offset across it [m]."""
        ux, uy = self.u
        err = wrap_angle(math.atan2(uy, ux) - th)
        along = (self.start[0] - r[0]) * ux + (self.start[1] - r[1]) * uy
        lat = -(r[0] - self.start[0]) * uy + (r[1] - self.start[1]) * ux
        return err, along, lat

    @staticmethod
    def turn_at_start(err: float, along: float) -> np.ndarray:
        """Turn onto the push direction (heading error ``err`` [rad]), holding the place
        along it (the start ``along`` [m] ahead) once within 0.3 rad."""
        v = float(np.clip(2.0 * along, -0.3, 0.3)) if abs(err) < 0.3 else 0.0
        return np.array([v, np.clip(err / 0.2, -1.0, 1.0)], np.float32)

    def align(self, r: np.ndarray, th: float) -> np.ndarray | None:
        """Turn onto the push direction at the start, holding the place along it."""
        err, along, lat = self.on_line(r, th)
        if (abs(err) < 0.05 and abs(lat) < 0.05) or (self.timer > 30 and abs(err) < 0.15):
            self.mode, self.timer = PUSH, 0
            return None
        if abs(lat) > 0.08 or abs(along) > 0.12:
            # Off the line (a diff drive cannot step sideways): drive to the start again.
            self.path = self.start[None].copy()
            self.reverse = along < 0
            self.mode = GOTO
            return None
        return self.turn_at_start(err, along)

    def push(self, r: np.ndarray, th: float) -> np.ndarray | None:
        """Drive the push length along the line, steering for a point 0.4 m ahead on it."""
        done = float((r - self.start) @ self.u)
        if done >= self.length or self.timer > 80:
            self.mode, self.timer = BACK, 0
            return None
        q = self.start + (done + 0.4) * self.u
        # Full speed until 0.1 m short of the end: the robot stops within a step.
        return _drive(r, th, q, False, float(np.clip((self.length - done) / 0.1, 0.2, 1.0)))


class _Markov(_Sweeper):
    """The sweeper as a function of the observation alone, for a clone to learn: every step
    it chooses afresh among the passes :meth:`_Sweeper.plan` weighs and the pass straight
    ahead of the robot as it stands (:meth:`ahead`), then takes that pass's next action.

    The planner's passes start behind their pucks, so once the robot is lined up and moving
    they are behind it; what keeps it on a pass is the pass ahead, which needs no travel or
    turn and is credited ``overhead`` steps less. Without a memory there is no stall escape
    and no ban on starts that failed (:meth:`_Sweeper.act`): :class:`SweepPolicy` makes a
    fresh one for every row at every call, so its step counters stay at 0."""

    def ahead(self, r: np.ndarray, th: float, g: np.ndarray, pucks: np.ndarray,
              inside: np.ndarray) -> tuple[float, float]:
        """The pass along the robot's heading from where it stands: (score, push length [m]),
        score -inf where it gains nothing. Its length ends the pucks on its swath either
        ``deposit`` from the goal centre (the line crosses the circle) or ``RELEASED`` off
        the wall nearest its lead puck (the line leaves that wall at 0.2 rad or more)."""
        p = self.p
        u = np.array([math.cos(th), math.sin(th)])
        rel = pucks - r
        a = rel @ u
        b = rel[:, 1] * u[0] - rel[:, 0] * u[1]
        # 3 cm wider than the planner's swath: the robot lines up within 5 cm of a start,
        # and a puck the pass meant to carry must not drop out of it on the way.
        swath = (np.abs(b) < p.capture + 0.03) & (a > HALF_LEN - 0.02)
        if not swath.any():
            return -np.inf, 0.0
        lengths = []
        ga = float((g - r) @ u)
        gc = float((g[1] - r[1]) * u[0] - (g[0] - r[0]) * u[1])
        if abs(gc) + 0.1 < p.deposit:
            lengths.append(ga - PUCK_R - math.sqrt(p.deposit ** 2 - (abs(gc) + 0.1) ** 2)
                           - HALF_LEN)
        lead = int(np.nonzero(swath)[0][np.argmin(a[swath])])
        x0, y0, x1, y1 = p.walls
        q = pucks[lead]
        for w, n in ((q[0] - x0, (1.0, 0.0)), (x1 - q[0], (-1.0, 0.0)),
                     (q[1] - y0, (0.0, 1.0)), (y1 - q[1], (0.0, -1.0))):
            sa = u[0] * n[0] + u[1] * n[1]
            if w < HARD and sa > 0.2:
                lengths.append(a[lead] - HALF_LEN - PUCK_R + (RELEASED - w) / sa)
        best, best_len = -np.inf, 0.0
        for length in lengths:
            e = r + u * length
            if length <= 0.02 or not self.fits(e[0], e[1], u[0], u[1]):
                continue
            reach = length + HALF_LEN + PUCK_R
            carried = swath & (a < reach)
            value = float(self.gain(pucks, g, carried, reach - a, u))
            score = value / (length / p.v_step) if value > 0.3 else -np.inf
            if score > best:
                best, best_len = score, length
        return best, best_len

    def act(self, r: np.ndarray, th: float, g: np.ndarray, pucks: np.ndarray,
            inside: np.ndarray) -> np.ndarray:
        score, length = self.ahead(r, th, g, pucks, inside)
        if not self.plan(r, th, g, pucks, inside):
            self.score = -np.inf
        if np.isfinite(score) and score >= self.score:
            return np.array([float(np.clip(length / 0.1, 0.2, 1.0)), 0.0], np.float32)
        if not np.isfinite(self.score):
            a = self.free(r, th, g, pucks, inside)
            return a if a is not None else np.zeros(2, np.float32)
        d = math.hypot(*(self.start - r))
        err, along, lat = self.on_line(r, th)
        if d < 0.08 and abs(lat) < 0.035:
            # At the start: turn onto the pass, holding the place along it.
            a = self.turn_at_start(err, along)
            if abs(err) < 0.05:
                a[0] = 0.3  # lined up, but the pass ahead does not see it yet: go
            return a
        if d < 0.08:
            # Beside the start (a diff drive cannot step sideways): drive onto it, front or
            # back first, whichever turns less.
            rev = _ang(th + math.pi, math.atan2(self.start[1] - r[1], self.start[0] - r[0])) \
                < math.pi / 2
            return _drive(r, th, self.start, bool(rev), min(1.0, 5.0 * d + 0.1))
        return self.goto(r, th)


class SweepPolicy:
    """The batch policy (observations (N, obs_dim) -> actions (N, 2) in [-1, 1]): one
    :class:`_Sweeper` per row, started afresh when the row's robot or a puck jumps farther
    than a step moves it (its env began a new episode) or the batch size changes; with
    ``markov``, a fresh :class:`_Markov` per row at every call."""

    def __init__(self, ix: ObsIndex, num_pucks: int, walls: tuple[float, float, float, float],
                 goal_r: float, markov: bool = False) -> None:
        self.ix = ix
        self.markov = markov
        self.n = num_pucks
        self.setup = _Setup(walls, goal_r)
        self.rows: list[_Sweeper] = []
        self.prev: np.ndarray | None = None

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        ix = self.ix
        o = state_batch(obs, ix.size)
        rx, ry = o[:, ix.robot_xy], o[:, ix.robot_xy + 1]
        c, s = o[:, ix.robot_heading], o[:, ix.robot_heading + 1]
        th = np.arctan2(s, c)
        g = o[:, ix.goal_xy:ix.goal_xy + 2]
        k = ix.slot("puck_rel", np.arange(self.n))
        px, py = o[:, k], o[:, k + 1]  # robot frame
        wx = rx[:, None] + c[:, None] * px - s[:, None] * py
        wy = ry[:, None] + s[:, None] * px + c[:, None] * py
        pucks = np.stack([wx, wy], -1)
        inside = o[:, ix.slot("puck_inside", np.arange(self.n))] > 0.5
        if self.markov:
            self.rows = [_Markov(self.setup) for _ in range(len(o))]
        else:
            state = np.concatenate([rx[:, None], ry[:, None], wx, wy], 1)
            if len(self.rows) != len(o):
                self.rows = [_Sweeper(self.setup) for _ in range(len(o))]
            elif self.prev is not None:
                for e in np.nonzero(np.abs(state - self.prev).max(1) > JUMP)[0]:
                    self.rows[e] = _Sweeper(self.setup)
            self.prev = state
        out = np.zeros((len(o), 2), np.float32)
        for e, row in enumerate(self.rows):
            out[e] = row.act(np.array([rx[e], ry[e]]), float(th[e]), g[e], pucks[e], inside[e])
        return out


def expert(task: TaskSpec, env_kwargs: Mapping[str, Any] | None = None,
           markov: bool = False) -> BatchPolicy:
    """The sweeper for ``task`` (its ``num_pucks`` and ``goal_radius``; the walls are the
    task's arena, whatever the spawn region): a stateful batch policy, one planner per row
    of the batch it is called with (:class:`SweepPolicy`); with ``markov`` the one without
    memory (:func:`markov_expert`)."""
    ix = ObsIndex(task.observation(), task.args)
    return SweepPolicy(ix, task.args["num_pucks"], type(task).region, task.args["goal_radius"],
                       markov)


def markov_expert(task: TaskSpec, env_kwargs: Mapping[str, Any] | None = None) -> BatchPolicy:
    """The sweeper without memory (:class:`_Markov`): its action is a function of the
    observation, so a clone can learn it."""
    return expert(task, env_kwargs, markov=True)
