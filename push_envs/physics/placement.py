"""IR-SIM's ``random`` distribution, drawn per env at a reset from the env's own stream.

A group with ``distribution: {name: random, range_low, range_high, min_distance}`` places
its objects anew in every env at every reset (IR-SIM: ``ObjectFactory.generate_state_list``
with ``random_uniform``). Its states and its goals are drawn uniformly in
[range_low, range_high] (x [m], y [m], theta [rad]), the states of a group at least
``min_distance`` [m] apart, its goals likewise. Unlike IR-SIM (which keeps its last try after
1000), a state is also clear of every other body: the object's bounding circle about its
centre of mass must not overlap the pieces of the bodies that are not placed at random, nor
the bounding circles of the objects placed before it (an overlap would be pushed apart by
the contact solver, or stop both bodies at once in IR-SIM's stop mode).

Sketch, per env (``place_env``)::

    for round in 1 .. MAX_ROUNDS:                    # a dead end redraws the whole env
        for each random group g, each of its objects k:
            try MAX_TRIES states: (x, y, theta) ~ U(low, high) from rng[e]
                accept when |xy - xy_j| >= min_distance for the group's objects j < k,
                and the bounding circle clears the fixed pieces and earlier objects
            none accepted: next round
        then the group's goals: MAX_TRIES tries each, |goal - goal_j| >= min_distance
    every round failed: the env's status is the failing group + 1 (the caller raises)

The draws come from ``rng[e]`` alone, so env i of a batch seeded s draws what a single world
seeded s + i draws, and a batch stays bit-identical to single worlds. A scene whose groups
cannot be placed is refused when it compiles (``check_placement``: the draws of the first
envs, naming the file and the group), never left overlapping.

Immovable bodies are compiled into the static pieces every env shares, so a random group of
immovable bodies (no kinematics and no mass, or ``static``) is drawn once, when the scene
compiles, from the scene's seed: one layout for the batch (``docs/irsim.md``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .jit import compiled
from .narrowphase import CIRCLE
from .narrowphase import SEGMENT
from .rng import uniform

MAX_TRIES = 1000  # states (or goals) tried per object, as IR-SIM's random_uniform
MAX_ROUNDS = 16  # whole-env redraws before a reset gives up
CHECK_ENVS = 16  # envs whose draws a scene must pass when it compiles


class PlacementArrays(NamedTuple):
    """The compiled scene's random groups, and what their objects must keep clear of.

    gint:  (G, 2) int64: first row in ``gbody``, number of objects
    gflt:  (G, 7) float64: low x, y, theta; high x, y, theta; min_distance [m, rad]
    gbody: (R,) int64: body index of each placed object, group by group
    brad:  (R,) float64: bounding radius about the centre of mass [m]
    com:   (R, 2) float64: centre of mass in the body frame [m]
    fkind, fnv: (F,) int64 kind and vertex count of each fixed piece (world frame)
    fvert: (F, MAX_VERTS, 2) float64 vertices [m]; frad: (F,) radius [m]
    fbox:  (F, 4) float64 box (min x, min y, max x, max y) [m]
    """

    gint: np.ndarray
    gflt: np.ndarray
    gbody: np.ndarray
    brad: np.ndarray
    com: np.ndarray
    fkind: np.ndarray
    fnv: np.ndarray
    fvert: np.ndarray
    frad: np.ndarray
    fbox: np.ndarray


@compiled
def _segment_distance(px, py, ax, ay, bx, by):
    """Distance [m] from point p to segment ab."""
    dx, dy = bx - ax, by - ay
    ll = dx * dx + dy * dy
    t = 0.0 if ll == 0.0 else ((px - ax) * dx + (py - ay) * dy) / ll
    t = min(max(t, 0.0), 1.0)
    qx, qy = ax + t * dx - px, ay + t * dy - py
    return math.sqrt(qx * qx + qy * qy)


@compiled
def _circle_hits_piece(cx, cy, r, P, f):
    """Whether the disc (cx, cy, r) overlaps fixed piece f (touching does not count)."""
    if cx + r <= P.fbox[f, 0] or cx - r >= P.fbox[f, 2] or cy + r <= P.fbox[f, 1] \
            or cy - r >= P.fbox[f, 3]:
        return False
    v = P.fvert[f]
    n = P.fnv[f]
    if P.fkind[f] == CIRCLE:
        return math.hypot(cx - v[0, 0], cy - v[0, 1]) < r + P.frad[f]
    if P.fkind[f] == SEGMENT:
        return _segment_distance(cx, cy, v[0, 0], v[0, 1], v[1, 0], v[1, 1]) < r + P.frad[f]
    inside = True
    for i in range(n):
        j = (i + 1) % n
        # CCW polygon: the centre is inside iff it is left of every edge.
        if (v[j, 0] - v[i, 0]) * (cy - v[i, 1]) - (v[j, 1] - v[i, 1]) * (cx - v[i, 0]) < 0.0:
            inside = False
        if _segment_distance(cx, cy, v[i, 0], v[i, 1], v[j, 0], v[j, 1]) < r:
            return True
    return inside


@compiled
def _com(P, k, x, y, th):
    c, s = math.cos(th), math.sin(th)
    return x + c * P.com[k, 0] - s * P.com[k, 1], y + s * P.com[k, 0] + c * P.com[k, 1]


@compiled
def _state_ok(P, e, k, first, x, y, th, md, pose):
    """Whether object k may stand at (x, y, th) given objects first .. k-1 of its group
    (min_distance) and every object placed before it in env e (bounding circles)."""
    for j in range(first, k):
        if math.hypot(x - pose[e, j, 0], y - pose[e, j, 1]) < md:
            return False
    cx, cy = _com(P, k, x, y, th)
    r = P.brad[k]
    for j in range(k):
        jx, jy = _com(P, j, pose[e, j, 0], pose[e, j, 1], pose[e, j, 2])
        if math.hypot(cx - jx, cy - jy) < r + P.brad[j]:
            return False
    for f in range(P.fkind.shape[0]):
        if _circle_hits_piece(cx, cy, r, P, f):
            return False
    return True


@compiled
def _goal_ok(e, k, first, x, y, md, goal):
    for j in range(first, k):
        if math.hypot(x - goal[e, j, 0], y - goal[e, j, 1]) < md:
            return False
    return True


@compiled
def _draw(rng, e, P, g):
    lo, hi = P.gflt[g, 0:3], P.gflt[g, 3:6]
    return (uniform(rng, e, lo[0], hi[0]), uniform(rng, e, lo[1], hi[1]),
            uniform(rng, e, lo[2], hi[2]))


@compiled
def _round(rng, e, P, pose, goal):
    """One attempt at the whole env; returns the failing group + 1, or 0."""
    for g in range(P.gint.shape[0]):
        first, count = P.gint[g, 0], P.gint[g, 1]
        md = P.gflt[g, 6]
        for k in range(first, first + count):
            placed = False
            for _ in range(MAX_TRIES):
                x, y, th = _draw(rng, e, P, g)
                if _state_ok(P, e, k, first, x, y, th, md, pose):
                    pose[e, k, 0], pose[e, k, 1], pose[e, k, 2] = x, y, th
                    placed = True
                    break
            if not placed:
                return g + 1
        for k in range(first, first + count):
            placed = False
            for _ in range(MAX_TRIES):
                x, y, th = _draw(rng, e, P, g)
                if _goal_ok(e, k, first, x, y, md, goal):
                    goal[e, k, 0], goal[e, k, 1], goal[e, k, 2] = x, y, th
                    placed = True
                    break
            if not placed:
                return g + 1
    return 0


@compiled
def place_env(e, rng, P, pose, goal):
    """Draw env ``e``'s random groups into ``pose[e]`` / ``goal[e]`` ((R, 3) origin poses and
    goals: x [m], y [m], theta [rad]) from ``rng[e]``; returns 0, or the failing group + 1
    after MAX_ROUNDS whole-env attempts (callable from other compiled code: an env's reset)."""
    status = 0
    for _ in range(MAX_ROUNDS):
        status = _round(rng, e, P, pose, goal)
        if status == 0:
            return 0
    return status


@njit(cache=True)
def place(envs, rng, P, pose, goal, status):
    """:func:`place_env` for each env of ``envs`` (an int64 array), its status into
    ``status[e]``."""
    for i in range(envs.shape[0]):
        e = envs[i]
        status[e] = place_env(e, rng, P, pose, goal)
