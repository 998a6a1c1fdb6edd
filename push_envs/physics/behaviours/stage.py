"""The behaviour stage: goals and behaviours turned into drive commands, before the physics.

One C function, :data:`CONTROL` (``control(which, lo, hi, W*, B*)``), over envs lo..hi-1,
each on its own (no reduction across envs: env i of a batch is env i of a single world)::

    CTL_STEP    (before the physics)
      arrivals      the arrivals of the last step, if not checked yet (goals.check_arrivals)
      snapshot      every body's pose, centroid, velocity and disc (common.snapshot);
                    this step's motion noise, drawn as the physics will draw it
                    (common.peek_noise)
      groups        each group behaviour (orca, sfm) from the snapshot, through its address
      renewal       arrived bodies that wander or loop take new goals (goals.renew_goals)
      bodies        each body's behaviour (dash, rvo, sfm, a user's), through its address,
                    writes the body's drive command; a body commanded from outside (manual)
                    keeps its command
    CTL_ARRIVE  (after the physics) the arrivals: next goals, arrive flags
    CTL_RESET   goal queues, flags, memories and start poses as at the start

This is IR-SIM's ``env.step()`` order: group actions are taken before the objects' own
pre-processing, then each object renews its goal and runs its behaviour, the physics moves
everything, and arrivals are checked last. IR-SIM steps its objects one after the other
(an object sees the new state of those stepped before it): here each body's snapshot is moved
where its command takes it once the command is written (common.advance, in the world's
collision mode), so the bodies after it read it there, as in IR-SIM.

The behaviours are C functions of their own (``dash.DASH``, ``rvo.RVO``, ...), whose
addresses the structure holds (``B.fn``, and the groups' in ``B.grp``): a world compiles the
stage and the behaviours it uses, nothing else, and the physics never sees any of it. The
arrival check after the physics is skipped for an env the physics rolled back (the retry
checks it), and a pending check (``B.pend``) is done before the next step's commands when no
one called CTL_ARRIVE (an env step may call the stage before the physics only).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import prange

from ..abi import CFunction
from ..abi import call_void
from ..abi import struct_ptr
from ..arrays import load_world
from ..jit import compiled
from ..layout import HL_STATUS
from ..pipeline import CHUNK
from ..pipeline import rolled_back
from .arrays import GR_FN
from .arrays import load_behaviour
from .common import advance
from .common import command_in_range
from .common import peek_noise
from .common import snapshot
from .ego import prepare_user
from .goals import check_arrivals
from .goals import renew_goals
from .goals import reset_goals
from .layout import BI_CODE
from .layout import CODE_RVO
from .layout import CODE_SFM
from .layout import CODE_USER
from .layout import CTL_ARRIVE
from .layout import CTL_RESET
from .layout import CTL_STEP
from .signatures import CONTROL_SIG


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def step_env(e, wp, bp, W, B):
    """CTL_STEP for env e (see the module's docstring)."""
    if B.pend[e] != 0:
        check_arrivals(e, W, B)
        B.pend[e] = 0
    snapshot(e, W, B)
    peek_noise(e, W)
    for g in range(B.grp.shape[0]):
        addr = B.grp[g, GR_FN]
        if addr != 0:
            call_void(addr, (e, np.int64(g), wp, bp))
    renew_goals(e, B)
    # the last body whose behaviour reads the others: no one reads a body advanced after it
    last = -1
    for b in range(B.bi.shape[0]):
        code = B.bi[b, BI_CODE]
        if B.fn[b] != 0 and (code == CODE_RVO or code == CODE_SFM or code == CODE_USER):
            last = b
    for b in range(B.bi.shape[0]):
        addr = B.fn[b]
        if addr != 0 and B.manual[b] == 0:
            if B.bi[b, BI_CODE] == CODE_USER:
                prepare_user(e, b, W, B)
                call_void(addr, (e, np.int64(b), wp, bp))
                command_in_range(e, b, W, B, B.uout[e, 0], B.uout[e, 1], B.uout[e, 2])
            else:
                call_void(addr, (e, np.int64(b), wp, bp))
        # the bodies after b see it where its command takes it (IR-SIM's order)
        if b < last:
            advance(e, b, W, B)
    B.pend[e] = 1


def control(which, lo, hi, wp, bp):
    """The stage :data:`CONTROL` over envs lo..hi-1 (``which``: layout.CTL_*)."""
    W = load_world(wp)
    B = load_behaviour(bp)
    for e in range(lo, hi):
        if which == CTL_RESET:
            reset_goals(e, W, B)
        elif W.active[e] == 0:
            continue
        elif which == CTL_ARRIVE:
            if B.pend[e] != 0 and W.hl[e, HL_STATUS] == 0.0:
                check_arrivals(e, W, B)
                B.pend[e] = 0
        else:
            step_env(e, wp, bp, W, B)


CONTROL = CFunction(control, CONTROL_SIG)
"""The behaviour stage as a C function ``void(int64 which, int64 lo, int64 hi,
WorldArrays* W, BehaviourArrays* B)`` (signatures.CONTROL_SIG)."""


# World's entry kernels: the stage, the physics and the arrivals in one call per chunk of
# envs. The structure of behaviours comes packed (its address, abi.AbiType.pack).
@njit(cache=True, _nrt=False)
def world_step_serial(W, physics, ctl, bp):
    """Step every active env: behaviours, physics, arrivals, one env after the other.
    Returns the number of active envs whose physics was rolled back."""
    wp = struct_ptr(W)
    n = np.int64(W.pos.shape[0])
    call_void(ctl, (np.int64(CTL_STEP), np.int64(0), n, wp, bp))
    call_void(physics, (np.int64(0), n, wp))
    call_void(ctl, (np.int64(CTL_ARRIVE), np.int64(0), n, wp, bp))
    return rolled_back(W)


@njit(cache=True, parallel=True, _nrt=False)
def world_step_parallel(W, physics, ctl, bp):
    """``world_step_serial`` with ``prange`` over chunks of envs (bit-identical)."""
    n = W.pos.shape[0]
    for i in prange((n + CHUNK - 1) // CHUNK):
        lo = np.int64(i) * CHUNK
        hi = np.int64(min(lo + CHUNK, n))
        wp = struct_ptr(W)
        call_void(ctl, (np.int64(CTL_STEP), lo, hi, wp, bp))
        call_void(physics, (lo, hi, wp))
        call_void(ctl, (np.int64(CTL_ARRIVE), lo, hi, wp, bp))
    return rolled_back(W)


@njit(cache=True, _nrt=False)
def run_control(W, ctl, which, envs, bp):
    """The stage's ``which`` (layout.CTL_*) for the envs listed in ``envs`` (int64)."""
    wp = struct_ptr(W)
    for k in range(envs.shape[0]):
        e = envs[k]
        call_void(ctl, (which, e, e + 1, wp, bp))


__all__ = ["CONTROL", "run_control", "world_step_parallel", "world_step_serial"]
