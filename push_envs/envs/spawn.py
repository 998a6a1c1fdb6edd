"""Episode starts, drawn inside compiled kernels from each env's own random stream.

A spawn restores every body to the scene's initial state, applies the domain randomisation
(mass, ground friction and size of the pushed object), then places the goal, the object and
the robot for the task. Placements use bounding circles and rejection sampling, so nothing
starts overlapping whatever the drawn size; every draw comes from the env's stream, so the
same seed gives the same episode in a batch or alone.
"""

from __future__ import annotations

import math

from numba import njit

from ..physics.layout import (
    BF_COMX,
    BF_COMY,
    EP_FRICTION,
    EP_INERTIA,
    EP_MASS,
    EP_SCALE,
)
from .rng import uniform

# Task ids.
TASK_PUSH_BOX = 0
TASK_WALL_SLIDE = 1
TASK_PUSH_T = 2

# ti[:] integer task parameters
TI_TASK = 0
TI_ROBOT = 1  # body index of the robot
TI_OBJ = 2  # body index of the pushed object
TI_WALL = 3  # body index of the wall the object must touch (WallSlide), else -1
TI_MAXC = 4  # contact slots in the observation
TI_MAXSTEPS = 5  # truncation length (0: never)
TI_SPARSE = 6  # 1: sparse reward
TI_LEN = 7

# tp[:] float task parameters
TP_X0 = 0  # spawn region [m] (inside the arena walls)
TP_Y0 = 1
TP_X1 = 2
TP_Y1 = 3
TP_SUCC_POS = 4  # success distance [m]
TP_SUCC_ANG = 5  # success angle [rad] (PushT)
TP_W_RB = 6  # reward weight of robot -> object progress [1/m]
TP_W_OG = 7  # reward weight of object -> goal progress [1/m]
TP_W_ANG = 8  # reward weight of angle progress [1/rad]
TP_BONUS = 9  # success bonus
TP_STEP_PEN = 10  # per-step penalty
TP_MASS_LO = 11  # object mass range [kg]; hi <= 0 keeps the scene's
TP_MASS_HI = 12
TP_FRIC_LO = 13  # object ground friction range; hi < 0 keeps the scene's
TP_FRIC_HI = 14
TP_SCALE_LO = 15  # object size factor range; hi <= 0 keeps 1
TP_SCALE_HI = 16
TP_GOAL_DMIN = 17  # WallSlide: goal distance along the wall [m]
TP_GOAL_DMAX = 18
TP_WALL_Y = 19  # WallSlide: y of the wall's face [m]
TP_ROBOT_R = 20  # robot bounding radius [m]
TP_OBJ_R = 21  # object bounding radius about its COM at scale 1 [m]
TP_OBJ_HALFW = 22  # WallSlide: object half-width across the wall at scale 1 [m]
TP_OBJ_HALFL = 23  # WallSlide: object half-length along the wall at scale 1 [m]
TP_TRACTION = 24  # force normaliser for observations [N]
TP_GOAL_X = 25  # fixed goal pose (PushT); NaN: random
TP_GOAL_Y = 26
TP_GOAL_T = 27
TP_GOAL_SEP = 28  # least distance between object start and goal [m]
TP_SLOP = 29  # gap left at spawn between the object and the wall [m]
TP_MARGIN = 30  # clearance of the object and a random goal from the region edges [m]
TP_LEN = 31

_TRIES = 64


@njit(cache=True)
def _com(bflt, b, x, y, th, s):
    """Centre of mass [m] of body b whose origin is at (x, y, th) with size factor s."""
    lx, ly = bflt[b, BF_COMX] * s, bflt[b, BF_COMY] * s
    c, sn = math.cos(th), math.sin(th)
    return x + c * lx - sn * ly, y + sn * lx + c * ly


@njit(cache=True)
def _place(e, b, x, y, th, bflt, epar, pos, ang):
    cx, cy = _com(bflt, b, x, y, th, epar[e, b, EP_SCALE])
    pos[e, b, 0] = cx
    pos[e, b, 1] = cy
    ang[e, b] = th


@njit(cache=True)
def _randomise(e, o, tp, base_mass, base_inertia, base_fric, epar, rng):
    """Domain randomisation of the object's mass, friction and size; returns the size factor."""
    m = base_mass[o]
    if tp[TP_MASS_HI] > 0.0:
        m = uniform(rng, e, tp[TP_MASS_LO], tp[TP_MASS_HI])
    mu = base_fric[o]
    if tp[TP_FRIC_HI] >= 0.0:
        mu = uniform(rng, e, tp[TP_FRIC_LO], tp[TP_FRIC_HI])
    s = 1.0
    if tp[TP_SCALE_HI] > 0.0:
        s = uniform(rng, e, tp[TP_SCALE_LO], tp[TP_SCALE_HI])
    epar[e, o, EP_MASS] = m
    epar[e, o, EP_INERTIA] = base_inertia[o] * (m / base_mass[o]) * s * s
    epar[e, o, EP_FRICTION] = mu
    epar[e, o, EP_SCALE] = s
    return s


@njit(cache=True)
def spawn(e, ti, tp, bflt, movable, base_mass, base_inertia, base_fric, init_pos, init_ang,
          init_vel, init_omg, init_drv, epar, pos, ang, vel, omg, drv, cmd, goal, rng):
    """Start a new episode in env ``e``: restore, randomise, place goal, object and robot."""
    for i in range(movable.shape[0]):
        b = movable[i]
        epar[e, b, EP_MASS] = base_mass[b]
        epar[e, b, EP_INERTIA] = base_inertia[b]
        epar[e, b, EP_FRICTION] = base_fric[b]
        epar[e, b, EP_SCALE] = 1.0
        pos[e, b, 0] = init_pos[b, 0]
        pos[e, b, 1] = init_pos[b, 1]
        ang[e, b] = init_ang[b]
        vel[e, b, 0] = init_vel[b, 0]
        vel[e, b, 1] = init_vel[b, 1]
        omg[e, b] = init_omg[b]
        drv[e, b, 0] = init_drv[b, 0]
        drv[e, b, 1] = init_drv[b, 1]
        cmd[e, b, 0] = 0.0
        cmd[e, b, 1] = 0.0
    task = ti[TI_TASK]
    r = ti[TI_ROBOT]
    o = ti[TI_OBJ]
    s = _randomise(e, o, tp, base_mass, base_inertia, base_fric, epar, rng)
    x0, y0, x1, y1 = tp[TP_X0], tp[TP_Y0], tp[TP_X1], tp[TP_Y1]
    rr = tp[TP_ROBOT_R]
    ro = tp[TP_OBJ_R] * s
    if task == TASK_WALL_SLIDE:
        hl = tp[TP_OBJ_HALFL] * s
        oy = tp[TP_WALL_Y] + tp[TP_OBJ_HALFW] * s + tp[TP_SLOP]
        ox = gx = 0.5 * (x0 + x1)
        # Off the end walls by the margin: flush against one, the box could only be pushed
        # on its long face, straight into the wall (body contacts are frictionless).
        m = tp[TP_MARGIN]
        for _ in range(_TRIES):
            ox = uniform(rng, e, x0 + hl + m, x1 - hl - m)
            d = uniform(rng, e, tp[TP_GOAL_DMIN], tp[TP_GOAL_DMAX])
            right_ok = ox + d <= x1 - hl
            left_ok = ox - d >= x0 + hl
            if right_ok and left_ok:
                gx = ox + d if uniform(rng, e, 0.0, 1.0) < 0.5 else ox - d
                break
            if right_ok or left_ok:
                gx = ox + d if right_ok else ox - d
                break
        goal[e, 0] = gx
        goal[e, 1] = oy
        goal[e, 2] = 0.0
        _place(e, o, ox, oy, 0.0, bflt, epar, pos, ang)
        ocx, ocy = pos[e, o, 0], pos[e, o, 1]
    else:
        # The margin keeps the push pose behind the object reachable in every direction.
        rm = ro + tp[TP_MARGIN]
        if task == TASK_PUSH_T and not math.isnan(tp[TP_GOAL_X]):
            goal[e, 0] = tp[TP_GOAL_X]
            goal[e, 1] = tp[TP_GOAL_Y]
            goal[e, 2] = tp[TP_GOAL_T]
        else:
            goal[e, 0] = uniform(rng, e, x0 + rm, x1 - rm)
            goal[e, 1] = uniform(rng, e, y0 + rm, y1 - rm)
            goal[e, 2] = uniform(rng, e, -math.pi, math.pi) if task == TASK_PUSH_T else 0.0
        ocx = ocy = 0.0
        for _ in range(_TRIES):
            ocx = uniform(rng, e, x0 + rm, x1 - rm)
            ocy = uniform(rng, e, y0 + rm, y1 - rm)
            dgx, dgy = ocx - goal[e, 0], ocy - goal[e, 1]
            if dgx * dgx + dgy * dgy >= tp[TP_GOAL_SEP] ** 2:
                break
        th = uniform(rng, e, -math.pi, math.pi)
        # The sampled point is the centre of mass; the origin follows from the COM offset.
        pos[e, o, 0] = ocx
        pos[e, o, 1] = ocy
        ang[e, o] = th
    # Robot: anywhere in the region, clear of the object by a margin.
    gap = rr + ro + 0.05
    rx = ry = 0.0
    for _ in range(_TRIES):
        rx = uniform(rng, e, x0 + rr, x1 - rr)
        ry = uniform(rng, e, y0 + rr, y1 - rr)
        dx, dy = rx - ocx, ry - ocy
        if dx * dx + dy * dy >= gap * gap:
            break
    rth = uniform(rng, e, -math.pi, math.pi)
    _place(e, r, rx, ry, rth, bflt, epar, pos, ang)
