"""A user behaviour's arguments, filled from the snapshot, and its commands written back.

Per object (:func:`prepare_user`): the body's ego row, its goal, the others it reacts to and
their segments, in the stage's scratch rows of env e (user.py lists the columns). Per group
(:func:`group_arguments`, :func:`group_commands`): one ego row, goal and memory row per
member, in the group's member order, and each member's command clipped to its range as
IR-SIM's ``gen_behavior_vel`` clips a group's velocities.
"""

from __future__ import annotations

from ..jit import compiled
from ..layout import PR_DT
from .arrays import GR_COUNT
from .arrays import GR_START
from .common import command_in_range
from .common import desired_omni
from .common import targets
from .common import vel_range
from .layout import BF_ACCE
from .layout import BF_RADIUS
from .layout import BF_THRESH
from .layout import BF_VMAX
from .layout import BF_VMIN
from .layout import BI_KIN
from .layout import BI_NSEG
from .layout import BI_SEG0
from .layout import EGO_ACCE
from .layout import EGO_DESX
from .layout import EGO_DESY
from .layout import EGO_DT
from .layout import EGO_HIGH
from .layout import EGO_KIN
from .layout import EGO_LOW
from .layout import EGO_NOTHERS
from .layout import EGO_NSEGS
from .layout import EGO_RADIUS
from .layout import EGO_THETA
from .layout import EGO_THRESHOLD
from .layout import EGO_V0
from .layout import EGO_VMAX
from .layout import EGO_VMIN
from .layout import EGO_VX
from .layout import EGO_VY
from .layout import EGO_X
from .layout import EGO_Y
from .layout import GQ_DIMS
from .layout import GQ_T
from .layout import GQ_X
from .layout import GQ_Y
from .layout import GS_COUNT
from .layout import GS_HEAD
from .layout import MEM_LEN
from .layout import SN_CX
from .layout import SN_CY
from .layout import SN_R
from .layout import SN_T
from .layout import SN_V0
from .layout import SN_VX
from .layout import SN_VY
from .layout import SN_X
from .layout import SN_Y


@compiled
def fill_ego(e, b, W, B, ego, goal):
    """Body b's ego row (``ego``, EGO_LEN floats) and current goal (``goal``: x [m], y [m],
    theta [rad], dims; zero without one) in env e, from the snapshot."""
    snap, bi, bf = B.snap, B.bi, B.bf
    dt = W.prm[PR_DT]
    ego[EGO_X] = snap[e, b, SN_X]
    ego[EGO_Y] = snap[e, b, SN_Y]
    ego[EGO_THETA] = snap[e, b, SN_T]
    ego[EGO_VX] = snap[e, b, SN_VX]
    ego[EGO_VY] = snap[e, b, SN_VY]
    ego[EGO_RADIUS] = bf[b, BF_RADIUS]
    for k in range(3):
        ego[EGO_V0 + k] = snap[e, b, SN_V0 + k]
        ego[EGO_VMIN + k] = bf[b, BF_VMIN + k]
        ego[EGO_VMAX + k] = bf[b, BF_VMAX + k]
        ego[EGO_ACCE + k] = bf[b, BF_ACCE + k]
        lo, hi = vel_range(e, b, k, snap, bf, dt)
        ego[EGO_LOW + k] = lo
        ego[EGO_HIGH + k] = hi
    ego[EGO_THRESHOLD] = bf[b, BF_THRESH]
    ego[EGO_DT] = dt
    dx, dy = desired_omni(e, b, snap, bi, bf, B.gq, B.gs)
    ego[EGO_DESX] = dx
    ego[EGO_DESY] = dy
    ego[EGO_KIN] = bi[b, BI_KIN]
    ego[EGO_NOTHERS] = 0
    ego[EGO_NSEGS] = 0
    if B.gs[e, b, GS_COUNT] > 0:
        h = B.gs[e, b, GS_HEAD]
        goal[0] = B.gq[e, b, h, GQ_X]
        goal[1] = B.gq[e, b, h, GQ_Y]
        goal[2] = B.gq[e, b, h, GQ_T]
        goal[3] = B.gq[e, b, h, GQ_DIMS]
    else:
        for k in range(4):
            goal[k] = 0.0


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def prepare_user(e, b, W, B):
    """A user behaviour's arguments for body b in env e: its ego row, goal, the others it
    reacts to and their segments (user.py); the command row zeroed."""
    snap, bi = B.snap, B.bi
    fill_ego(e, b, W, B, B.ego[e], B.ugoal[e])
    for k in range(3):
        B.uout[e, k] = 0.0
    n = 0
    m = 0
    for o in range(bi.shape[0]):
        if o == b or not targets(bi, b, o):
            continue
        if bi[o, BI_NSEG] > 0:
            for j in range(bi[o, BI_SEG0], bi[o, BI_SEG0] + bi[o, BI_NSEG]):
                for c in range(4):
                    B.usegs[e, m, c] = B.segw[e, j, c]
                m += 1
        else:
            B.others[e, n, 0] = snap[e, o, SN_CX]
            B.others[e, n, 1] = snap[e, o, SN_CY]
            B.others[e, n, 2] = snap[e, o, SN_VX]
            B.others[e, n, 3] = snap[e, o, SN_VY]
            B.others[e, n, 4] = snap[e, o, SN_R]
            n += 1
    B.ego[e, EGO_NOTHERS] = n
    B.ego[e, EGO_NSEGS] = m


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def group_arguments(e, g, W, B):
    """A user group behaviour's arguments for group g in env e: each member's ego row, goal
    and memory (``B.gego``, ``B.ggoal``, ``B.gumem``, rows in member order), the command rows
    zeroed. Returns the number of members."""
    s = B.grp[g, GR_START]
    n = B.grp[g, GR_COUNT]
    for k in range(n):
        b = B.gmem[s + k]
        fill_ego(e, b, W, B, B.gego[e, k], B.ggoal[e, k])
        for j in range(MEM_LEN):
            B.gumem[e, k, j] = B.mem[e, b, j]
        for j in range(3):
            B.gout[e, k, j] = 0.0
    return n


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def group_commands(e, g, W, B):
    """Group g's commands in env e written: each member's memory kept, and its command
    (``B.gout``) clipped to its range, unless it is commanded from outside."""
    s = B.grp[g, GR_START]
    for k in range(B.grp[g, GR_COUNT]):
        b = B.gmem[s + k]
        for j in range(MEM_LEN):
            B.mem[e, b, j] = B.gumem[e, k, j]
        if B.manual[b] == 0:
            command_in_range(e, b, W, B, B.gout[e, k, 0], B.gout[e, k, 1], B.gout[e, k, 2])
