"""Goals: the queue of each body, its arrival, and what IR-SIM does then.

A body's goals are a queue of poses (x [m], y [m], and theta [rad] when given). IR-SIM's rules,
kept in order:

* arrival (``check_arrive_status``, after the physics): the body has arrived at its current
  goal when its distance to it is below ``goal_threshold`` [m] (``arrive_mode: position``),
  or when sqrt(distance^2 + heading error^2) is (``state``, for a goal with a heading). At a
  goal with more to follow, the next one is taken; at the last, the arrive flag is raised
  and the goal stays: the behaviours stop there by themselves;
* renewal (``pre_process``, before the behaviours of the next step): an arrived body that
  ``wander``s draws a new goal, uniform in [range_low, range_high] from its env's stream;
  one that ``loop``s starts its queue again (a single goal: back and forth between the goal
  and the pose it started from). Either clears the flag.

Immovable bodies keep their goals as given: IR-SIM never steps them, so never renews them.
"""

from __future__ import annotations

import math

from ..frames import origin_pose
from ..jit import compiled
from ..rng import uniform
from .arrays import GR_COUNT
from .arrays import GR_START
from .common import wrap_to_pi
from .layout import BF_HIGH
from .layout import BF_LOW
from .layout import BF_THRESH
from .layout import BI_DIMS
from .layout import BI_LOOP
from .layout import BI_MOVES
from .layout import BI_NGOAL
from .layout import BI_STATE_MODE
from .layout import BI_WANDER
from .layout import GQ_DIMS
from .layout import GQ_LEN
from .layout import GQ_T
from .layout import GQ_X
from .layout import GQ_Y
from .layout import GS_ARRIVED
from .layout import GS_COUNT
from .layout import GS_HEAD
from .layout import MEM_LEN


@compiled
def arrived_at(x, y, th, gx, gy, gt, dims, threshold, state_mode):
    """IR-SIM's check_arrive: whether the pose (x, y [m], th [rad]) is at the goal."""
    dx = x - gx
    dy = y - gy
    if state_mode and dims >= 3:
        dt = wrap_to_pi(th - gt)
        return math.sqrt(dx * dx + dy * dy + dt * dt) < threshold
    return math.sqrt(dx * dx + dy * dy) < threshold


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def check_arrivals(e, W, B):
    """Arrivals of every body with a goal in env e, at its current pose: the next goal of a
    sequence, or the arrive flag at the last."""
    bi, gs, gq = B.bi, B.gs, B.gq
    for b in range(bi.shape[0]):
        n = gs[e, b, GS_COUNT]
        if n <= 0:
            gs[e, b, GS_ARRIVED] = 0
            continue
        h = gs[e, b, GS_HEAD]
        x, y, th, _c, _s = origin_pose(e, b, W.pos, W.ang, W.bflt, W.epar)
        if arrived_at(x, y, th, gq[e, b, h, GQ_X], gq[e, b, h, GQ_Y], gq[e, b, h, GQ_T],
                      gq[e, b, h, GQ_DIMS], B.bf[b, BF_THRESH], bi[b, BI_STATE_MODE] != 0):
            if n == 1:
                gs[e, b, GS_ARRIVED] = 1
            else:
                gs[e, b, GS_HEAD] = h + 1
                gs[e, b, GS_COUNT] = n - 1
                gs[e, b, GS_ARRIVED] = 0
        else:
            gs[e, b, GS_ARRIVED] = 0


@compiled
def _draw_goal(e, b, B):
    """A wander goal for body b: uniform in [range_low, range_high] from env e's stream, as
    the only goal of its queue."""
    dims = B.bi[b, BI_DIMS]
    for k in range(3):
        v = 0.0
        if k < dims:
            v = uniform(B.rng, e, B.bf[b, BF_LOW + k], B.bf[b, BF_HIGH + k])
        B.gq[e, b, 0, GQ_X + k] = v
    B.gq[e, b, 0, GQ_DIMS] = dims
    B.gs[e, b, GS_HEAD] = 0
    B.gs[e, b, GS_COUNT] = 1


@compiled
def _initial_queue(e, b, B):
    n = B.bi[b, BI_NGOAL]
    for q in range(n):
        for k in range(GQ_LEN):
            B.gq[e, b, q, k] = B.ginit[b, q, k]
    B.gs[e, b, GS_HEAD] = 0
    B.gs[e, b, GS_COUNT] = n


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def renew_goals(e, B):
    """IR-SIM's pre_process for every movable body of env e: an arrived body that wanders
    draws a new goal, one that loops starts its queue again; either clears the flag."""
    bi, gs, gq = B.bi, B.gs, B.gq
    for b in range(bi.shape[0]):
        if bi[b, BI_MOVES] == 0 or gs[e, b, GS_ARRIVED] == 0:
            continue
        if bi[b, BI_WANDER] != 0:
            _draw_goal(e, b, B)
            gs[e, b, GS_ARRIVED] = 0
        elif bi[b, BI_LOOP] != 0 and bi[b, BI_NGOAL] > 0:
            if bi[b, BI_NGOAL] > 1:
                _initial_queue(e, b, B)
            else:
                # One goal: to the goal, then back to the start. In position mode both keep
                # only (x, y), as IR-SIM's loop does; in state mode both keep the heading.
                keep = 3 if bi[b, BI_STATE_MODE] != 0 else 2
                for k in range(3):
                    gq[e, b, 0, k] = B.ginit[b, 0, k]
                    gq[e, b, 1, k] = B.start[e, b, k]
                gq[e, b, 0, GQ_DIMS] = min(keep, B.ginit[b, 0, GQ_DIMS])
                gq[e, b, 1, GQ_DIMS] = keep
                gs[e, b, GS_HEAD] = 0
                gs[e, b, GS_COUNT] = 2
            gs[e, b, GS_ARRIVED] = 0


@compiled
def reset_goals(e, W, B):
    """Env e as at the start: each body's queue from the scene (a wandering body draws its
    goal), flags down, orca velocities and user memories zero, orca's k-d tree order the
    members' own, start poses taken now."""
    bi = B.bi
    for b in range(bi.shape[0]):
        x, y, th, _c, _s = origin_pose(e, b, W.pos, W.ang, W.bflt, W.epar)
        B.start[e, b, 0] = x
        B.start[e, b, 1] = y
        B.start[e, b, 2] = th
        if bi[b, BI_WANDER] != 0 and bi[b, BI_MOVES] != 0:
            _draw_goal(e, b, B)
        else:
            _initial_queue(e, b, B)
        B.gs[e, b, GS_ARRIVED] = 0
        B.ovel[e, b, 0] = 0.0
        B.ovel[e, b, 1] = 0.0
        for k in range(MEM_LEN):
            B.mem[e, b, k] = 0.0
    for g in range(B.grp.shape[0]):
        # orca's k-d tree order starts again as the members' own (RVO2's agent list)
        for p in range(B.grp[g, GR_COUNT]):
            B.korder[e, B.grp[g, GR_START] + p] = p
    B.pend[e] = 0
