"""IR-SIM's collision modes other than ``contact``: a step in which nothing pushes anything.

``world.collision_mode`` (IR-SIM's ``ObjectBase.check_status``):

* ``contact``: this engine's contact solver (pipeline.py); the default here.
* ``stop`` (IR-SIM's default): bodies move by their drives (passive ones coast) through each
  other; after the move, a body that overlaps (or touches) another body that is not
  ``unobstructed`` is stopped: it does not move in the next step. The flag is taken again
  after every step, so a body held while another passed through it moves on once that one
  has left (IR-SIM's ``stop_flag``); two bodies stuck in each other stay stopped.
* ``unobstructed_obstacles``: as ``stop``, but only robots stop; obstacles never do.
* ``unobstructed`` (and IR-SIM's ``reactive``): nothing stops.

In every mode a body with ``unobstructed: true`` blocks nobody: it takes no part in the
contact solver (the broad phase skips it; an immovable one has no static pieces at all), and
in the modes above it stops nobody, though it stops itself when it runs into a body that is
not unobstructed, as in IR-SIM. ``bis[e, b, IS_HIT]`` is IR-SIM's collision flag (the body
overlaps such a body after the step), ``IS_STOP`` its stop flag (columns of the contact graph,
which these modes do not build).

The step (``kinematic_step``), per env::

    free motion   every body that has not stopped: drive (no lag, no grip cap: IR-SIM's drives
                  take their commands as they are outside the contact mode) or coast
    overlaps      for each movable body a: its tight box; the movable bodies and the static
                  pieces (through the broad phase's static grid) whose boxes meet it; each of
                  those that is not unobstructed, tested with the narrow phase at zero gap
                  (pair_contact on a scratch pair row): touching counts, as shapely's
                  ``intersects`` does in IR-SIM
    flags         IS_HIT = any overlap; IS_STOP = IS_HIT where the mode stops that body

The narrow phase is reached through a function pointer (``TOUCH``, at ``prm[PR_TOUCHFN]``,
which pipeline.physics_for writes), not linked into ``kinematic_step``: with the narrow phase
linked into the overlap loop, LLVM 22 (llvmlite 0.50) crashed (a segmentation fault in its
code generation, at -O3) compiling the step for an AMD Zen 3 host (``znver3``), on the first
step of any world in these modes on an empty cache. The narrow phase compiled on its own, and
the loop around an indirect call, compile there.
"""

from __future__ import annotations

import numpy as np

from .abi import OP_SIG
from .abi import CFunction
from .abi import call_i8
from .arrays import load_world
from .broadphase import grid_cells
from .broadphase import shape_box
from .jit import compiled
from .kinematics import free_motion
from .layout import BF_UNOBS
from .layout import BI_ROLE
from .layout import CM_CONTACT
from .layout import CM_STOP
from .layout import CM_UNOBSTRUCTED_OBSTACLES
from .layout import HL_MAXPEN
from .layout import HL_NEED
from .layout import HL_NSUB
from .layout import HL_OVERFLOW
from .layout import HL_SLEEP
from .layout import HL_STATUS
from .layout import HL_SWEEPS
from .layout import IS_HIT
from .layout import IS_STOP
from .layout import PF_MAXX
from .layout import PF_MAXY
from .layout import PF_MINX
from .layout import PF_MINY
from .layout import PI_BODY
from .layout import PR_DT
from .layout import PR_G
from .layout import PR_MODE
from .layout import PR_TOUCHFN
from .layout import PRS_A
from .layout import PRS_B
from .layout import PRS_MODE
from .layout import PRS_SP
from .layout import ROLE_ROBOT
from .narrowphase import pair_contact_call

_TOUCH = 0.0  # [m] gap that still counts as a collision: touching, as shapely's intersects


@compiled
def _touching(e, W):
    """Whether the pair in row 0 of ``W.prs[e]`` meets at zero gap (the narrow phase)."""
    return pair_contact_call(e, 0, W.prs, W.pos, W.ang, W.epar, W.bint, W.pint, W.pvert,
                             W.pflt, W.sint, W.svert, W.sflt, _TOUCH, W.vbuf, W.cbuf, W.pfl)


def touch_op(code, e, x, wp):
    """The body of :data:`TOUCH`: 1 when the pair in row 0 of ``prs[e]`` of the worlds at
    ``wp`` meets at zero gap, else 0 (``code`` and ``x`` unused: OP_SIG's shape)."""
    return 1 if _touching(e, load_world(wp)) else 0


TOUCH = CFunction(touch_op, OP_SIG)
"""The narrow phase's zero-gap test as a C function (OP_SIG), called at ``prm[PR_TOUCHFN]``."""


@compiled
def _meets(e, a, b, sp, W, wp):
    """Whether movable body a meets body b (sp = -1) or static piece sp of body b."""
    W.prs[e, 0, PRS_A] = a
    W.prs[e, 0, PRS_B] = b
    W.prs[e, 0, PRS_SP] = sp
    W.prs[e, 0, PRS_MODE] = 0
    return call_i8(int(W.prm[PR_TOUCHFN]), (np.int64(0), e, 0.0, wp)) != 0


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def _hits_movable(e, a, W, wp):
    """Whether movable body a overlaps another movable body that is not unobstructed."""
    box = W.aabb
    for j in range(W.movable.shape[0]):
        b = W.movable[j]
        if b == a or W.bflt[b, BF_UNOBS] != 0.0:
            continue
        if box[e, b, 0] > box[e, a, 2] or box[e, a, 0] > box[e, b, 2] or \
                box[e, b, 1] > box[e, a, 3] or box[e, a, 1] > box[e, b, 3]:
            continue
        if _meets(e, a, b, -1, W, wp):
            return True
    return False


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def _hits_static(e, a, W, wp):
    """Whether movable body a overlaps a static piece (the cells of the static grid its box
    covers; a piece spanning several cells is tested once, stamped as the broad phase does)."""
    ns = W.sint.shape[0]
    if ns == 0:
        return False
    ny = int(W.grid[4])
    box = W.aabb
    W.stamp[e, ns] += 1
    tag = W.stamp[e, ns]
    i0, j0, i1, j1 = grid_cells(W.grid, box[e, a, 0], box[e, a, 1], box[e, a, 2], box[e, a, 3])
    for ci in range(i0, i1 + 1):
        for cj in range(j0, j1 + 1):
            c = ci * ny + cj
            for q in range(W.gstart[c], W.gstart[c + 1]):
                sp = W.gitem[q]
                if W.stamp[e, sp] == tag:
                    continue
                W.stamp[e, sp] = tag
                if W.sflt[sp, PF_MAXX] < box[e, a, 0] or W.sflt[sp, PF_MINX] > box[e, a, 2] or \
                        W.sflt[sp, PF_MAXY] < box[e, a, 1] or W.sflt[sp, PF_MINY] > box[e, a, 3]:
                    continue
                if _meets(e, a, W.sint[sp, PI_BODY], sp, W, wp):
                    return True
    return False


@compiled
def kinematic_step(e, wp):
    """Advance env ``e`` of the worlds at ``wp`` (a :class:`WorldArrays` by pointer, as
    pipeline.step_env takes them) by ``W.prm[PR_DT]`` in IR-SIM's stop / unobstructed modes
    (see the module doc): free motion of the bodies that have not stopped, then the collision
    and stop flags. No contact is resolved or reported."""
    W = load_world(wp)
    prm, bis = W.prm, W.bis
    mode = int(prm[PR_MODE])
    # Variables, not literals (False, False): a literal argument is a second signature of
    # free_motion, compiled again (tests/test_numba_cache.py).
    contact = mode == CM_CONTACT
    free_motion(e, prm[PR_DT], prm[PR_G], contact, W.bint, W.bflt, W.movable, W.epar, W.pos,
                W.ang, W.vel, W.omg, W.drv, W.cmd, W.yaw, W.bsc, bis, W.cbuf)
    for i in range(W.movable.shape[0]):
        b = W.movable[i]
        if bis[e, b, IS_STOP] != 0:
            W.vel[e, b, 0] = 0.0
            W.vel[e, b, 1] = 0.0
            W.omg[e, b] = 0.0
            W.drv[e, b, 0] = 0.0
            W.drv[e, b, 1] = 0.0
            W.yaw[e, b, 1] = 0.0
        shape_box(e, b, W.bint, W.pint, W.pvert, W.pflt, W.epar, W.pos, W.ang, 0.0, W.aabb)
    for i in range(W.movable.shape[0]):
        a = W.movable[i]
        hit = _hits_movable(e, a, W, wp) or _hits_static(e, a, W, wp)
        bis[e, a, IS_HIT] = 1 if hit else 0
        stops = mode == CM_STOP or (mode == CM_UNOBSTRUCTED_OBSTACLES
                                    and W.bint[a, BI_ROLE] == ROLE_ROBOT)
        bis[e, a, IS_STOP] = 1 if hit and stops else 0
    W.ctn[e] = 0
    W.hl[e, HL_STATUS] = 0.0  # never rolled back: nothing to grow, no sub-steps
    W.hl[e, HL_OVERFLOW] = 0.0
    W.hl[e, HL_MAXPEN] = 0.0
    W.hl[e, HL_SWEEPS] = 0.0
    W.hl[e, HL_NSUB] = 1.0
    W.hl[e, HL_NEED] = 1.0
    W.hl[e, HL_SLEEP] = 0.0
