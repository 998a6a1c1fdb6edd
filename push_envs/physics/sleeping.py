"""Sleeping: bodies at rest leave every stage of the step, and wake as islands when reached.

The broad phase fattens every awake body's box by the env's largest travel in the sub-step,
because a correction can move a body about that far. A passive body at rest cannot move on
its own, though: it moves only when an awake body reaches it. So, as Box2D does with its
islands, a resting body is taken out of the step altogether:

* a passive body may sleep after a sub-step (``settle``) when its velocity and spin are
  exactly zero and none of its touching contacts overlaps (nothing is left to push it out);
* it falls asleep at the next sub-step's start (``doze``) if it is still at that pose and
  still at rest, and sleeping is on (``PR_SLEEP``): it leaves the awake list (the bodies every
  stage walks: sub-step count, free motion, boxes, broad phase, prepare, solver, settle) for
  the sleeper list, sorted by the lower x of its box, which is its tight shape box fattened
  only by the rest tolerance; its scratch is that of a body at rest;
* the broad phase (``broadphase.find_pairs``) looks up, for each awake box, the sleepers it
  meets (a binary search in the sleeper list) and wakes them: each gets the awake fattening
  and is looked up in turn, so the wake spreads over the whole island within reach before
  any contact is solved::

      robot ->   [s1][s2]  [s3]          s1 reached: woken; s2 touches s1: woken;
                                         s3 lies beyond the travel: sleeps on

  A step thus costs what its awake bodies cost: a sleeper is visited only when an awake box
  reaches it (and once per step, to see that nothing outside the step moved it);
* a body the wake reached stays awake for ``WAKE_HOLD`` sub-steps before it may doze again
  (``BS_HOLD``, cold row), as Box2D keeps a body awake until it has rested for a while
  (``b2_timeToSleep``). Without it, a resting box beside a pushed column is reached at every
  sub-step: it fell asleep at the start (a sorted insertion into the sleeper list, its pairs
  frozen), woke in the broad phase (its pairs thawed, the awake list sorted again) and rested
  at the end, over and over; in the 1000-box crowd that churn was most of the sleep stages'
  cost. Holding it awake costs only what a body at rest costs;
* a sleeper's touching contacts (with other sleepers and with walls) are frozen as they were
  when it fell asleep, at the end of the pair buffers (``freeze``: ``SC_FROZEN`` pairs, their
  forces zero, as a resting contact's are): the sensors report them every step, and a woken
  body's leave with it (``thaw``).

Why this is exact. Every body moves at most the env's largest travel in a sub-step (the
assumption the broad phase is built on). A body that sleeps on is farther than that from
every awake body (or the wake would have reached it) and does not move by itself, so nothing
reaches it in this sub-step: no contact of it changes, and the pairs it leaves out (with
other sleepers and with walls) are pairs whose contacts stay as they were, touching nothing
awake. The sweep order does not depend on which other pairs are listed (contacts.py), so a
rollout with sleeping is bit-identical to one without.

Sleeping is on by default in scenes of at least ``SLEEP_MIN_BODIES`` movable bodies: in a
handful of bodies there are few pairs to save, and its bookkeeping cost the 1 robot + 1 box
step 13 % (measured). ``World.sleeping`` overrides it; the results are the same either way.
``doze`` and ``wake`` are one C function, :data:`SLEEP`, that the step calls at the address
``prm[PR_SLEEPFN]`` (``pipeline.physics_for`` writes it when sleeping is on): a world with
sleeping off (every task) never compiles them.

A body's sleep is tied to its pose (``BS_SLX``..): a body moved from outside the step (a reset,
``World.set_state``, a task's spawn, a pose written into ``World.pos``) is awake from the
next step on, until it settles again. The lists are rebuilt from the bodies' flags after a
reset, when sleeping is switched, and after a rolled-back step (``SC_REBUILD``).
"""

from __future__ import annotations

import math

from .abi import OP_SIG
from .abi import CFunction
from .arrays import cold_row
from .arrays import load_world
from .broadphase import find_pairs
from .broadphase import shape_box
from .broadphase import swept_box
from .jit import compiled
from .kinematics import keep_start
from .layout import BI_KIND
from .layout import BS_HOLD
from .layout import BS_SLSAVE
from .layout import BS_SLT
from .layout import BS_SLX
from .layout import BS_SLY
from .layout import BS_TP
from .layout import BS_VXF
from .layout import BS_VYF
from .layout import BS_WF
from .layout import BS_XP
from .layout import BS_YP
from .layout import IS_SKIP
from .layout import IS_SLEEP
from .layout import IS_SLEEP0
from .layout import PASSIVE
from .layout import PFL_ACC
from .layout import PFL_DEPTH
from .layout import PFL_DMAX
from .layout import PFL_TOUCH
from .layout import PR_REST
from .layout import PRS_A
from .layout import PRS_B
from .layout import PRS_SP
from .layout import SC_ASLEEP
from .layout import SC_AWAKE
from .layout import SC_FROZEN
from .layout import SC_LAST
from .layout import SC_LEN
from .layout import SC_REBUILD
from .narrowphase import pair_contact_at

WAKE_HOLD = 32.0  # sub-steps a body woken by an awake one's reach stays awake before it may doze
SLEEP_MIN_BODIES = 24  # movable bodies from which World turns sleeping on by default
WIDEST = 0  # column of aabb's last row (one past the bodies) holding the widest sleeper box [m]


# LLVM-inlined: a few additions, in every sleep stage (jit.py, 'Inlining')
@compiled(inline="llvm")
def regions(stamp, ns, nm):
    """Where, in a stamp row of ``ns`` static pieces and ``nm`` movable bodies, the sweep
    order, the awake list, the sleeper list and the counts (SC_*) start: the kernels' twin
    of layout.stamp_order / stamp_awake / stamp_asleep / stamp_counts."""
    return ns + 1, ns + 1 + nm, ns + 1 + 2 * nm, stamp.shape[1] - SC_LEN


@compiled
def _still(e, b, bint, pos, ang, vel, omg, bsc, bis):
    """Whether body b may sleep in this sub-step: it settled (IS_SLEEP), is passive, still at
    rest and still at the pose it settled at."""
    return bis[e, b, IS_SLEEP] != 0 and bint[b, BI_KIND] == PASSIVE \
        and vel[e, b, 0] == 0.0 and vel[e, b, 1] == 0.0 and omg[e, b] == 0.0 \
        and pos[e, b, 0] == bsc[e, b, BS_SLX] and pos[e, b, 1] == bsc[e, b, BS_SLY] \
        and ang[e, b] == bsc[e, b, BS_SLT]


@compiled
def _fall_asleep(e, b, extra, bint, pint, pvert, pflt, epar, pos, ang, vel, omg, bsc, bis, aabb,
                 stamp, at, n):
    """Body b leaves the step: its scratch becomes that of a body at rest (the free motion of
    a still body), its box its tight shape box grown by ``extra`` [m], and it joins the
    sleeper list ``stamp[e, at:at + n]`` in order of its box's lower x (then index). Returns
    the list's new length."""
    # Exactly what free motion does to a still passive body (kinematics.coast moves it by
    # +0.0 and leaves it +0.0 velocities: a -0.0 becomes +0.0), so a rollout is the same
    # bits with sleeping on or off.
    keep_start(e, b, pos, ang, vel, omg, bsc)
    pos[e, b, 0] += 0.0
    pos[e, b, 1] += 0.0
    ang[e, b] += 0.0
    bsc[e, b, BS_VXF] = 0.0
    bsc[e, b, BS_VYF] = 0.0
    bsc[e, b, BS_WF] = 0.0
    bsc[e, b, BS_XP] = pos[e, b, 0]
    bsc[e, b, BS_YP] = pos[e, b, 1]
    bsc[e, b, BS_TP] = ang[e, b]
    vel[e, b, 0] = 0.0
    vel[e, b, 1] = 0.0
    omg[e, b] = 0.0
    bis[e, b, IS_SLEEP] = 1
    bis[e, b, IS_SKIP] = 1
    shape_box(e, b, bint, pint, pvert, pflt, epar, pos, ang, extra, aabb)
    widest = aabb.shape[1] - 1
    aabb[e, widest, WIDEST] = max(aabb[e, widest, WIDEST], aabb[e, b, 2] - aabb[e, b, 0])
    key = aabb[e, b, 0]
    j = n
    while j > 0:
        prev = stamp[e, at + j - 1]
        kp = aabb[e, prev, 0]
        if kp < key or (kp == key and prev < b):
            break
        stamp[e, at + j] = prev
        j -= 1
    stamp[e, at + j] = b
    return n + 1


@compiled
def _sort_out(e, b, extra, W, asleep, nsl):
    """Body b falls asleep if it may (``_still``: into the sleeper list at ``asleep``, of
    ``nsl`` bodies), or is marked awake. Returns (the sleeper list's length, whether b stays
    awake)."""
    r = cold_row(W.bsc, b)
    hold = W.bsc[e, r, BS_HOLD]
    if hold > 0.0:
        W.bsc[e, r, BS_HOLD] = hold - 1.0
    elif _still(e, b, W.bint, W.pos, W.ang, W.vel, W.omg, W.bsc, W.bis):
        return _fall_asleep(e, b, extra, W.bint, W.pint, W.pvert, W.pflt, W.epar, W.pos, W.ang,
                            W.vel, W.omg, W.bsc, W.bis, W.aabb, W.stamp, asleep, nsl), False
    W.bis[e, b, IS_SLEEP] = 0
    W.bis[e, b, IS_SKIP] = 0
    return nsl, True


# Reached through SLEEP (a C function, at the end of this module), not linked into step_env:
# only a world with sleeping on compiles it. It takes the world by pointer (two words), not W
# by value (~300).
@compiled
def doze(e, first, extra, wp):
    """At a sub-step's start (before free motion): the awake bodies that settled and are
    still at rest fall asleep (``_fall_asleep``). Returns the number of awake bodies (the
    first entries of the awake list and of the sweep order, ``stamp``; ``ns`` static
    pieces).

    The touching pairs of the bodies that fall asleep freeze (``freeze``). In the step's
    ``first`` sub-step, the sleepers are checked as well: one that was moved, set moving or
    reset from outside the step (its IS_SLEEP cleared, its pose or velocity changed) wakes,
    and its frozen pairs thaw. ``IS_SLEEP0`` keeps each body's flag at the step's start (a
    rolled-back step restores it). When the lists are stale (``SC_REBUILD``) they are built
    anew from the bodies' flags, and the sleepers' touching pairs found again
    (``refreeze``); returns minus their candidates when the pair buffers cannot hold them
    (the step is then rolled back, and World grows the buffers).
    """
    W = load_world(wp)
    movable, bint, pos, ang, vel, omg = W.movable, W.bint, W.pos, W.ang, W.vel, W.omg
    bsc, bis, aabb, stamp = W.bsc, W.bis, W.aabb, W.stamp
    ns = W.sint.shape[0]
    order, awake, asleep, counts = regions(stamp, ns, movable.shape[0])
    na = stamp[e, counts + SC_AWAKE]
    nsl = stamp[e, counts + SC_ASLEEP]
    widest = aabb.shape[1] - 1
    if first and stamp[e, counts + SC_REBUILD] != 0:
        aabb[e, widest, WIDEST] = 0.0
        na = 0
        nsl = 0
        for i in range(movable.shape[0]):
            b = movable[i]
            bis[e, b, IS_SLEEP0] = bis[e, b, IS_SLEEP]
            nsl, up = _sort_out(e, b, extra, W, asleep, nsl)
            if up:
                stamp[e, awake + na] = b
                stamp[e, order + na] = b
                na += 1
        stamp[e, counts + SC_ASLEEP] = nsl
        nf = refreeze(e, nsl, wp)
        if nf < 0:
            return nf
        stamp[e, counts + SC_FROZEN] = nf
        stamp[e, counts + SC_REBUILD] = 0
    else:
        nf = stamp[e, counts + SC_FROZEN]
        if first:
            # Sleepers moved or woken from outside the step rejoin the awake list.
            kept = 0
            woke = False
            for j in range(nsl):
                b = stamp[e, asleep + j]
                if _still(e, b, bint, pos, ang, vel, omg, bsc, bis):
                    bis[e, b, IS_SLEEP0] = bis[e, b, IS_SLEEP]
                    stamp[e, asleep + kept] = b
                    kept += 1
                else:  # (its IS_SLEEP0 is set with the awake list's, below)
                    bis[e, b, IS_SLEEP] = 0
                    stamp[e, awake + na] = b
                    stamp[e, order + na] = b
                    na += 1
                    woke = True
            nsl = kept
            if woke:
                sort_awake(e, awake, na, stamp)
                widen(e, asleep, nsl, aabb, stamp)
                nf = thaw(e, nf, W.prs, W.pfl, bis)
        # The awake bodies that settled fall asleep; the rest stay, in their order.
        kept = 0
        for j in range(na):
            b = stamp[e, awake + j]
            if first:
                bis[e, b, IS_SLEEP0] = bis[e, b, IS_SLEEP]
            nsl, up = _sort_out(e, b, extra, W, asleep, nsl)
            if up:
                stamp[e, awake + kept] = b
                kept += 1
        if kept < na:
            keep(e, order, na, False, bis, stamp)
            nf = freeze(e, stamp[e, counts + SC_LAST], nf, W.prs, W.pfl, bis)
        na = kept
        stamp[e, counts + SC_FROZEN] = nf
    stamp[e, counts + SC_AWAKE] = na
    stamp[e, counts + SC_ASLEEP] = nsl
    stamp[e, counts + SC_LAST] = 0  # (the candidates are read: none to freeze again)
    return na


@compiled
def keep(e, at, n, asleep, bis, stamp):
    """Keep, in order, the bodies of the list ``stamp[e, at:at + n]`` that are asleep (or,
    with ``asleep`` False, awake); returns the list's new length."""
    kept = 0
    for j in range(n):
        b = stamp[e, at + j]
        if (bis[e, b, IS_SLEEP] != 0) == asleep:
            stamp[e, at + kept] = b
            kept += 1
    return kept


# A call taking the world by pointer, as doze.
@compiled
def wake(e, fat, wp):
    """The wake stage (after the awake boxes, before the broad phase): every sleeper whose
    box an awake box meets wakes, its box grown to the awake fattening ``fat`` [m], and is
    looked up in turn, so whole islands within reach wake at once. Returns the number of
    awake bodies.

    The sleepers are sorted by the lower x of their boxes: those an awake box [x0, x1] may
    meet have a lower x in [x0 - widest, x1] (a binary search, then a scan), ``widest``
    [m] bounding a sleeper box's width (aabb's last row). The woken bodies' frozen pairs
    thaw (``thaw``): the broad phase lists them again.
    """
    W = load_world(wp)
    bflt, epar, bsc, bis, aabb, stamp = W.bflt, W.epar, W.bsc, W.bis, W.aabb, W.stamp
    order, awake, asleep, counts = regions(stamp, W.sint.shape[0], W.movable.shape[0])
    na = stamp[e, counts + SC_AWAKE]
    nsl = stamp[e, counts + SC_ASLEEP]
    if nsl == 0:
        return na
    widest = aabb[e, aabb.shape[1] - 1, WIDEST]
    woke = False
    j = 0
    while j < na:  # the woken join the list, and are looked up in their turn
        a = stamp[e, awake + j]
        j += 1
        ax0, ay0, ax1, ay1 = aabb[e, a, 0], aabb[e, a, 1], aabb[e, a, 2], aabb[e, a, 3]
        lo, hi = 0, nsl
        while lo < hi:
            mid = (lo + hi) // 2
            if aabb[e, stamp[e, asleep + mid], 0] < ax0 - widest:
                lo = mid + 1
            else:
                hi = mid
        for m in range(lo, nsl):
            s = stamp[e, asleep + m]
            if aabb[e, s, 0] > ax1:
                break
            if bis[e, s, IS_SLEEP] != 0 and aabb[e, s, 2] >= ax0 and aabb[e, s, 1] <= ay1 \
                    and aabb[e, s, 3] >= ay0:
                bis[e, s, IS_SLEEP] = 0
                bsc[e, cold_row(bsc, s), BS_HOLD] = WAKE_HOLD
                swept_box(e, s, bflt, epar, bsc, fat, aabb)
                stamp[e, awake + na] = s
                stamp[e, order + na] = s
                na += 1
                woke = True
    if woke:
        stamp[e, counts + SC_ASLEEP] = keep(e, asleep, nsl, True, bis, stamp)
        sort_awake(e, awake, na, stamp)
        stamp[e, counts + SC_AWAKE] = na
        stamp[e, counts + SC_FROZEN] = thaw(e, stamp[e, counts + SC_FROZEN], W.prs, W.pfl,
                                            bis)
    return na


@compiled
def sort_awake(e, at, n, stamp):
    """Sort ``stamp[e, at:at + n]`` by body index (insertion sort: it is sorted but for a few
    bodies just added at its end)."""
    for i in range(1, n):
        cur = stamp[e, at + i]
        j = i - 1
        while j >= 0 and stamp[e, at + j] > cur:
            stamp[e, at + j + 1] = stamp[e, at + j]
            j -= 1
        stamp[e, at + j + 1] = cur


@compiled
def widen(e, at, n, aabb, stamp):
    """The widest box [m] of the sleepers ``stamp[e, at:at + n]``, into aabb's last row (the
    broad phase looks sleepers up from a lower x that far back)."""
    w = 0.0
    for j in range(n):
        b = stamp[e, at + j]
        w = max(w, aabb[e, b, 2] - aabb[e, b, 0])
    aabb[e, aabb.shape[1] - 1, WIDEST] = w


# --------------------------------------------------------------------------------------------
# Frozen contacts: the sleepers' touching pairs, at the end of the pair buffers
# --------------------------------------------------------------------------------------------
@compiled
def _freeze_pair(e, k, to, prs, pfl):
    """Copy pair k's rows to slot ``to`` as a frozen contact: its contact as last evaluated,
    touching, nothing resolved (what a resting contact's rows hold after a sub-step)."""
    for c in range(prs.shape[2]):
        prs[e, to, c] = prs[e, k, c]
    for c in range(PFL_ACC):
        pfl[e, to, c] = pfl[e, k, c]
    pfl[e, to, PFL_TOUCH] = 1.0
    pfl[e, to, PFL_DMAX] = -math.inf
    for c in range(PFL_ACC, pfl.shape[2]):
        pfl[e, to, c] = 0.0


@compiled
def _asleep_or_static(e, k, prs, bis):
    """Whether both sides of pair k sleep (a static piece always does)."""
    return bis[e, prs[e, k, PRS_A], IS_SLEEP] != 0 and (
        prs[e, k, PRS_SP] >= 0 or bis[e, prs[e, k, PRS_B], IS_SLEEP] != 0)


@compiled
def freeze(e, n, nf, prs, pfl, bis):
    """Freeze the touching pairs among the first ``n`` of the pair buffers (the last
    sub-step's candidates) whose bodies all sleep now, below the ``nf`` frozen already (the
    frozen pairs grow down from the buffers' end). Returns the new count.

    Walked from the top down, a copy never lands on a candidate not yet read: the slot it
    fills lies above the one read (both fall by one per frozen pair, the read one by one per
    pair)."""
    cap = prs.shape[1]
    for k in range(n - 1, -1, -1):
        if pfl[e, k, PFL_TOUCH] > 0.0 and _asleep_or_static(e, k, prs, bis):
            nf += 1
            _freeze_pair(e, k, cap - nf, prs, pfl)
    return nf


@compiled
def thaw(e, nf, prs, pfl, bis):
    """Drop the frozen pairs of bodies now awake (their pairs are listed again); returns the
    new count."""
    cap = prs.shape[1]
    kept = 0
    for j in range(nf):
        k = cap - 1 - j
        if _asleep_or_static(e, k, prs, bis):
            kept += 1
            if cap - kept != k:
                _freeze_pair(e, k, cap - kept, prs, pfl)
    return kept


@compiled
def refreeze(e, nsl, wp):
    """Find the touching pairs among the ``nsl`` sleepers and with the static pieces anew (the
    broad phase over the sleeper list, which is sorted as its sweep order wants, then the
    narrow phase) and freeze them; returns their number, or minus the candidates found when
    the buffers cannot hold them. Takes the world by pointer, as :func:`doze`."""
    W = load_world(wp)
    movable, stamp, prs, pfl = W.movable, W.stamp, W.prs, W.pfl
    ns = W.sint.shape[0]
    asleep = regions(stamp, ns, movable.shape[0])[2]
    cap = prs.shape[1]
    n = find_pairs(e, stamp[e, asleep:asleep + nsl], asleep, cap, W.bint, W.aabb, W.sint,
                   W.sflt, W.grid, W.gstart, W.gitem, stamp, prs)
    if n > cap:
        return -n
    tol = W.prm[PR_REST]
    for k in range(n):
        pfl[e, k, PFL_TOUCH] = 1.0 if pair_contact_at(e, k, tol, wp) else 0.0
    return freeze(e, n, 0, prs, pfl, W.bis)


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def settle(e, npairs, prs, pfl, bint, aw, pos, ang, vel, omg, bsc, bis):
    """At the end of a sub-step: mark the awake bodies ``aw`` that may sleep in the next one.

    A passive body may sleep when its velocity and spin are exactly zero and none of its
    touching contacts overlaps (an overlap left would be pushed apart next sub-step). Its pose
    is kept: it sleeps only while it stays there.
    """
    for i in range(aw.shape[0]):
        b = aw[i]
        rest = bint[b, BI_KIND] == PASSIVE and vel[e, b, 0] == 0.0 and vel[e, b, 1] == 0.0 \
            and omg[e, b] == 0.0
        bis[e, b, IS_SLEEP] = 1 if rest else 0
    for k in range(npairs):
        if pfl[e, k, PFL_TOUCH] > 0.0 and pfl[e, k, PFL_DEPTH] > 0.0:
            bis[e, prs[e, k, PRS_A], IS_SLEEP] = 0
            if prs[e, k, PRS_SP] < 0:
                bis[e, prs[e, k, PRS_B], IS_SLEEP] = 0
    for i in range(aw.shape[0]):
        b = aw[i]
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
def restore_sleep(e, saved, movable, bsc, bis, stamp, ns):
    """The sleep state at the step's start (``doze`` kept it in IS_SLEEP0), and the sleep
    poses when ``saved`` (``save_sleep``); the lists are rebuilt from it at the next step
    (``SC_REBUILD``: the aborted sub-steps may have moved bodies between them and grown
    woken boxes)."""
    for i in range(movable.shape[0]):
        b = movable[i]
        bis[e, b, IS_SLEEP] = min(bis[e, b, IS_SLEEP0], 1)
        if saved:
            r = cold_row(bsc, b)
            for j in range(3):
                bsc[e, b, BS_SLX + j] = bsc[e, r, BS_SLSAVE + j]
    stamp[e, regions(stamp, ns, movable.shape[0])[3] + SC_REBUILD] = 1


OP_DOZE_FIRST = 0  # doze at a step's first sub-step
OP_DOZE = 1  # doze at a later sub-step
OP_WAKE = 2  # wake what the awake boxes, fattened by x [m], reach


def sleep_op(op, e, x, wp):
    """One sleeping stage of env ``e`` of the worlds at ``wp``: ``doze`` (``OP_DOZE_FIRST``,
    ``OP_DOZE``; x the rest tolerance and twice the slop [m]) or ``wake`` (``OP_WAKE``; x the
    fattening [m]). Returns what the stage returns (the awake bodies, or minus the pairs the
    buffers lack)."""
    if op == OP_WAKE:
        return wake(e, x, wp)
    return doze(e, op == OP_DOZE_FIRST, x, wp)


SLEEP = CFunction(sleep_op, OP_SIG)
"""The sleeping stages as one C function ``int64(int64 op, int64 e, float64 x, WorldArrays*)``.
``step_env`` calls it through its address (``prm[PR_SLEEPFN]``), so a world with sleeping off
(every task) never compiles sleeping, and a world with it on compiles it once, not again
inside the step's own code (several CPU-seconds of a fresh machine's first step)."""
