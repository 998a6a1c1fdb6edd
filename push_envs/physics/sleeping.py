"""Sleeping: bodies at rest stop widening the broad phase, and wake as islands when reached.

The broad phase fattens every awake body's box by the env's largest travel in the sub-step,
because a correction can move a body about that far. In a crowd that turns every resting
neighbour within two travels into a candidate pair, and each one goes through the narrow
phase, the sort and the sweeps every sub-step. A passive body at rest cannot move on its own,
though: it moves only when an awake body reaches it. So, as Box2D does with its islands:

* a passive body falls asleep at the end of a sub-step (``settle``) when its velocity and spin
  are exactly zero and none of its touching contacts overlaps (nothing is left to push it out);
* it sleeps on in the next sub-step (``doze``) while it is still at that pose, still at rest,
  and sleeping is on (``PR_SLEEP``); its box is then fattened only by the rest tolerance;
* the broad phase (``broadphase.find_pairs``) wakes every sleeping body whose box an awake
  body's box reaches and gives it the awake fattening, which may reach further sleepers; it
  sweeps again until nobody wakes, so the wake spreads over the whole island of bodies within
  reach before any contact is solved::

      robot ->   [s1][s2]  [s3]          s1 reached: woken; s2 touches s1: woken;
                                         s3 lies beyond the travel: sleeps on

Why this is exact. Every body moves at most the env's largest travel in a sub-step (the
assumption the broad phase is built on). A body that sleeps on is farther than that from
every awake body (or the wake would have reached it) and does not move by itself, so nothing
reaches it in this sub-step: no contact of it changes, and the pairs the smaller boxes drop
are pairs that never touch. The sweep order does not depend on which non-touching pairs are
listed (contacts.py), so a rollout with sleeping is bit-identical to one without.

Sleeping is on by default in scenes of at least ``SLEEP_MIN_BODIES`` movable bodies: in a
handful of bodies there are few pairs to save, and its bookkeeping cost the 1 robot + 1 box
step 13 % (measured). ``World.sleeping`` overrides it; the results are the same either way.

A body's sleep is tied to its pose (``BS_SLX``..): a body moved from outside the step (a reset,
``World.set_state``, a task's spawn) is awake until it settles again.
"""

from __future__ import annotations

from .arrays import cold_row
from .jit import compiled
from .layout import (
    BI_KIND,
    BS_SLSAVE,
    BS_SLT,
    BS_SLX,
    BS_SLY,
    IS_SKIP,
    IS_SLEEP,
    IS_SLEEP0,
    PASSIVE,
    PFL_DEPTH,
    PFL_TOUCH,
    PRS_A,
    PRS_B,
    PRS_SP,
)

SLEEP_MIN_BODIES = 24  # movable bodies from which World turns sleeping on by default


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def doze(e, first, movable, bint, pos, ang, vel, omg, bsc, bis):
    """Decide, before free motion, which bodies sleep in this sub-step (``bis[e, b, IS_SLEEP]``).

    A body sleeps on when it settled at the end of the last sub-step, is still at the pose it
    settled at and still has no velocity or spin. ``IS_SLEEP`` becomes 2 when it also slept
    through the whole last sub-step: its free motion (none) and its box are then those of the
    last sub-step, still in ``bsc`` and ``aabb``, and are not recomputed (``IS_SKIP`` keeps
    that, for a rollback); 1 when it sleeps from now on, 0 when awake. In the step's
    ``first`` sub-step the value it replaces is kept in ``IS_SLEEP0`` (a rolled-back step
    restores it). Returns the number of sleeping bodies.
    """
    n = 0
    for i in range(movable.shape[0]):
        b = movable[i]
        if first:
            bis[e, b, IS_SLEEP0] = bis[e, b, IS_SLEEP]
        s = 0
        if bis[e, b, IS_SLEEP] != 0 and bint[b, BI_KIND] == PASSIVE \
                and vel[e, b, 0] == 0.0 and vel[e, b, 1] == 0.0 and omg[e, b] == 0.0 \
                and pos[e, b, 0] == bsc[e, b, BS_SLX] and pos[e, b, 1] == bsc[e, b, BS_SLY] \
                and ang[e, b] == bsc[e, b, BS_SLT]:
            s = bis[e, b, IS_SLEEP]
            n += 1
        bis[e, b, IS_SLEEP] = s
        bis[e, b, IS_SKIP] = 1 if s == 2 else 0
    return n


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def settle(e, npairs, prs, pfl, bint, movable, pos, ang, vel, omg, bsc, bis):
    """At the end of a sub-step: mark the bodies that may sleep in the next one.

    A passive body may sleep when its velocity and spin are exactly zero and none of its
    touching contacts overlaps (an overlap left would be pushed apart next sub-step). Its pose
    is kept: it sleeps only while it stays there. A body that slept through this sub-step gets
    2 (see ``doze``), one that just came to rest 1.
    """
    for i in range(movable.shape[0]):
        b = movable[i]
        rest = bint[b, BI_KIND] == PASSIVE and vel[e, b, 0] == 0.0 and vel[e, b, 1] == 0.0 \
            and omg[e, b] == 0.0
        bis[e, b, IS_SLEEP] = (2 if bis[e, b, IS_SLEEP] != 0 else 1) if rest else 0
    for k in range(npairs):
        if pfl[e, k, PFL_TOUCH] > 0.0 and pfl[e, k, PFL_DEPTH] > 0.0:
            bis[e, prs[e, k, PRS_A], IS_SLEEP] = 0
            if prs[e, k, PRS_SP] < 0:
                bis[e, prs[e, k, PRS_B], IS_SLEEP] = 0
    for i in range(movable.shape[0]):
        b = movable[i]
        if bis[e, b, IS_SLEEP] != 0:
            bsc[e, b, BS_SLX] = pos[e, b, 0]
            bsc[e, b, BS_SLY] = pos[e, b, 1]
            bsc[e, b, BS_SLT] = ang[e, b]


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def save_sleep(e, movable, bsc):
    """Keep the sleep poses at the step's start in the cold rows of ``bsc`` (a rolled-back
    step of several sub-steps restores them; in the first sub-step they are not yet
    rewritten)."""
    for i in range(movable.shape[0]):
        b = movable[i]
        r = cold_row(bsc, b)
        for j in range(3):
            bsc[e, r, BS_SLSAVE + j] = bsc[e, b, BS_SLX + j]


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def restore_sleep(e, saved, movable, bsc, bis):
    """The sleep state at the step's start (``doze`` kept it in IS_SLEEP0), and the sleep
    poses when ``saved`` (``save_sleep``)."""
    for i in range(movable.shape[0]):
        b = movable[i]
        # The aborted sub-steps may have rewritten its box: recompute it (same values).
        bis[e, b, IS_SLEEP] = min(bis[e, b, IS_SLEEP0], 1)
        if saved:
            r = cold_row(bsc, b)
            for j in range(3):
                bsc[e, b, BS_SLX + j] = bsc[e, r, BS_SLSAVE + j]
