"""The prepare stage: the first stage of a sub-step's contact solve, and the sweep order.

For one env, at the predicted poses (after free motion), ``prepare``

* computes the deepest contact of every candidate pair (``narrowphase.pair_contact``:
  bounding-circle pre-check, then SAT per piece pair) and its friction and restitution
  (mixed from the two bodies' by the world's rules, mixing.py);
* groups touching passive bodies into chains (``uf_find``; sensors.py reads the same groups
  to cap reported forces) and builds the touching contact graph (``contact_graph``);
* decides each drive -> passive pair's mode (push or stall) by the traction rule
  (``traction_modes``);
* gives every body its contact-graph level (graph distance from immovable bodies, then from
  drives; ``contact_levels``).

``sort_pairs`` then puts the pairs in the sweep order (level, then deepest first, then
contact point), so the order never depends on how the bodies were listed; ``reorder`` does
graph, levels and order again when the sweeps made contacts that change what backs what.
The module reads in that order.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import compiled
from .layout import BF_REST
from .layout import BI_KIND
from .layout import BS_DRIVE
from .layout import BS_VXF
from .layout import BS_VYF
from .layout import BS_WF
from .layout import DRIVEN
from .layout import DS_ROWS
from .layout import EP_FRICTION
from .layout import EP_MASS
from .layout import GS_QUEUE_AT
from .layout import GS_SLOTS
from .layout import GS_STAMP
from .layout import IMMOVABLE
from .layout import IS_CN
from .layout import IS_CS
from .layout import IS_GROUP
from .layout import IS_LEVEL
from .layout import IS_MASK
from .layout import IS_MOVED
from .layout import IS_UF
from .layout import IS_VIS
from .layout import MODE_PUSH
from .layout import MODE_STALL
from .layout import PASSIVE
from .layout import PFL_ACC
from .layout import PFL_CORNER
from .layout import PFL_DEPTH
from .layout import PFL_DMAX
from .layout import PFL_E
from .layout import PFL_KEY
from .layout import PFL_MU
from .layout import PFL_NX
from .layout import PFL_NY
from .layout import PFL_P1X
from .layout import PFL_P1Y
from .layout import PFL_TOUCH
from .layout import PR_FMIX
from .layout import PR_FMIXFN
from .layout import PR_RMIX
from .layout import PR_RMIXFN
from .layout import PRS_A
from .layout import PRS_B
from .layout import PRS_MODE
from .layout import PRS_SP
from .mixing import MIX_USER
from .mixing import clamped
from .mixing import mix
from .narrowphase import pair_contact

LEVEL_INF = 1 << 40  # level of a body no immovable body or drive backs
LEVEL_DRIVE = 1 << 30  # start level of a drive (below LEVEL_INF)


# --------------------------------------------------------------------------------------------
# Touching chains and the contact graph
# --------------------------------------------------------------------------------------------
@compiled
def find_root(e, x, bis, col):
    """Root of body x's set in the union-find forest held in ``bis[e, :, col]`` (each body's
    parent), halving the path on the way."""
    while bis[e, x, col] != x:
        bis[e, x, col] = bis[e, bis[e, x, col], col]
        x = bis[e, x, col]
    return x


@compiled
def uf_find(e, x, bis):
    """Root of passive body x's chain (the union-find over ``bis[e, :, IS_UF]``)."""
    return find_root(e, x, bis, IS_UF)


@compiled
def contact_graph(e, npairs, prs, movable, bis, gsc, pfl):
    """CSR of the touching movable-movable pairs: the pairs of body b are
    ``gsc[e, bis[e, b, IS_CS] + i]`` for i < ``bis[e, b, IS_CN]`` (a counting sort by body),
    after the queue in gsc (layout.py)."""
    nm = movable.shape[0]
    q = gsc[e, GS_QUEUE_AT]
    for i in range(nm):
        bis[e, movable[i], IS_CN] = 0
    for k in range(npairs):
        if pfl[e, k, PFL_TOUCH] > 0.0 and prs[e, k, PRS_SP] < 0:
            bis[e, prs[e, k, PRS_A], IS_CN] += 1
            bis[e, prs[e, k, PRS_B], IS_CN] += 1
    start = q + bis.shape[1]
    for i in range(nm):
        b = movable[i]
        bis[e, b, IS_CS] = start
        gsc[e, q + b] = start  # fill cursor (the queue is free until the searches)
        start += bis[e, b, IS_CN]
    for k in range(npairs):
        if pfl[e, k, PFL_TOUCH] > 0.0 and prs[e, k, PRS_SP] < 0:
            for side in range(2):
                x = prs[e, k, PRS_A + side]
                gsc[e, gsc[e, q + x]] = k
                gsc[e, q + x] += 1


# --------------------------------------------------------------------------------------------
# The traction rule: which drive -> passive pairs push
# --------------------------------------------------------------------------------------------
_CARRY_COS = 0.05  # a contact carries a push when its normal is within ~87 deg of the push
# Drive-slot table in gsc (up to MAX_DRIVE_SLOTS touching drive -> passive pairs can share a
# load: one bit of a mask each), DS_ROWS entries per slot, so a slot's entries share a line:
_DS_PAIR = 0  # pair index of drive slot i
_DS_OPP = 1  # mask of the slots pushing slot i's load from the other side
_DS_GROUP = 2  # mask of the slots in slot i's group


# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def _ds(row, i):
    """Index in gsc[e] of entry ``row`` of drive slot i."""
    return GS_SLOTS + DS_ROWS * i + row


# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def _push_dir(e, k, prs, pos, pfl):
    """Direction [unit] in which the drive of pair k pushes its passive body b: along the
    contact normal while they touch, else along the line between their centres."""
    if pfl[e, k, PFL_TOUCH] > 0.0:
        return -pfl[e, k, PFL_NX], -pfl[e, k, PFL_NY]
    a = prs[e, k, PRS_A]
    b = prs[e, k, PRS_B]
    dx, dy = pos[e, b, 0] - pos[e, a, 0], pos[e, b, 1] - pos[e, a, 1]
    d = math.sqrt(dx * dx + dy * dy)
    if d <= 0.0:
        return 0.0, 0.0
    return dx / d, dy / d


# A drive lends its traction to a shared load only while its own motion pushes into it: the
# velocity of its contact point along the push direction must exceed this [m/s]. A robot at
# rest beside the box (or backing off) touches it but pushes nothing (DESIGN.md, many bodies).
_PUSH_SPEED = 1e-9


@compiled
def drives_into(e, k, prs, pos, bsc, pfl):
    """True when the drive of touching pair k moves its contact point into its passive body:
    the free-motion velocity [m/s] of the drive at the contact point (COM velocity plus spin
    times the lever arm) has a component > ``_PUSH_SPEED`` along the push direction -n."""
    a = prs[e, k, PRS_A]
    nx, ny = pfl[e, k, PFL_NX], pfl[e, k, PFL_NY]
    rx = pfl[e, k, PFL_P1X] - pos[e, a, 0]
    ry = pfl[e, k, PFL_P1Y] - pos[e, a, 1]
    w = bsc[e, a, BS_WF]
    vx = bsc[e, a, BS_VXF] - w * ry
    vy = bsc[e, a, BS_VYF] + w * rx
    return -(vx * nx + vy * ny) > _PUSH_SPEED


@compiled
def carried_load(e, b0, dx, dy, bit, gravity, prs, bint, epar, bis, gsc, pfl):
    """Ground friction [N] of the bodies a push along (dx, dy) on passive body b0 carries.

    Breadth-first from b0 over touching passive-passive contacts, crossing a contact only when
    its normal, oriented from the body already reached to the next, has a component
    > _CARRY_COS along the push. Contacts between bodies are frictionless, so a body that
    touches from the side carries none of the push and is not counted. Every reached body
    gets ``bit`` in ``bis[e, b, IS_MASK]`` (the drive slot's bit; 0 for none)::

        robot -> [b0][b1][b2]      carried: b0, b1, b2 (normals along the push)
                 [s0][s1][s2]      not carried: side contacts, normal across the push, and
                                   b0-s1, b1-s2 corner to corner (PFL_CORNER)
    """
    gsc[e, GS_STAMP] += 1
    stamp = gsc[e, GS_STAMP]
    q = gsc[e, GS_QUEUE_AT]
    load = 0.0
    head = 0
    tail = 1
    gsc[e, q] = b0
    bis[e, b0, IS_VIS] = stamp
    while head < tail:
        x = gsc[e, q + head]
        head += 1
        load += epar[e, x, EP_FRICTION] * epar[e, x, EP_MASS] * gravity
        bis[e, x, IS_MASK] |= bit
        for s in range(bis[e, x, IS_CS], bis[e, x, IS_CS] + bis[e, x, IS_CN]):
            j = gsc[e, s]
            a = prs[e, j, PRS_A]
            y = prs[e, j, PRS_B] if a == x else a
            if bint[y, BI_KIND] != PASSIVE or bis[e, y, IS_VIS] == stamp:
                continue
            if pfl[e, j, PFL_CORNER] > 0.0:
                continue  # corner to corner: a push slides past, along the shared line
            # The normal points from B toward A: the push crosses from x to y along -n when x
            # is A.
            sgn = -1.0 if a == x else 1.0
            if sgn * (pfl[e, j, PFL_NX] * dx + pfl[e, j, PFL_NY] * dy) > _CARRY_COS:
                bis[e, y, IS_VIS] = stamp
                gsc[e, q + tail] = y
                tail += 1
    return load


@compiled
def _slots_traction(e, mask, nd, prs, epar, gravity, gsc):
    """Summed traction mu m g [N] of the distinct drives of the slots in ``mask``."""
    total = 0.0
    for i in range(nd):
        if not (mask >> i) & 1:
            continue
        a = prs[e, gsc[e, _ds(_DS_PAIR, i)], PRS_A]
        seen = False
        for j in range(i):
            if (mask >> j) & 1 and prs[e, gsc[e, _ds(_DS_PAIR, j)], PRS_A] == a:
                seen = True
                break
        if not seen:
            total += epar[e, a, EP_FRICTION] * epar[e, a, EP_MASS] * gravity
    return total


@compiled
def traction_modes(e, npairs, gravity, prs, pos, bint, epar, movable, bis, gsc, pfl, bsc):
    """The traction rule: which drive -> passive pairs push (MODE_PUSH) and which stall.

    1. Each touching drive -> passive pair gets a slot i (bit 1 << i) and marks the bodies its
       push carries (``carried_load``).
    2. Drives whose carried sets share a body and push the same way (d_i . d_j > 0) form one
       group, provided each of them drives into its contact (``drives_into``: a robot at rest
       or backing off beside the load lends no traction; two slots of one drive always
       group); drives whose sets share a body from opposite sides oppose each other.
    3. A group pushes while its summed traction sum(mu m g) covers the ground friction of the
       union of its carried sets plus the traction of the drives opposing it, otherwise all
       its pairs stall::

           two 1 kg robots (4.905 N each) -> one 1.5 kg box (7.358 N):
               alone: 4.905 < 7.358 stall;  together: 9.81 >= 7.358 push

    Pairs beyond MAX_DRIVE_SLOTS, and drives not yet touching, decide alone on their own
    carried load. (The table in gsc has min(MAX_DRIVE_SLOTS, drives x passive bodies) slots,
    and each touching drive -> passive pair is a distinct pair of bodies: a scene with fewer
    possible pairs never fills it.)
    """
    nm = movable.shape[0]
    for i in range(nm):
        b = movable[i]
        bis[e, b, IS_MASK] = 0
        bis[e, b, IS_GROUP] = b
    nd = np.int64(0)  # not a literal: one signature of _slots_traction
    slots = (gsc[e, GS_QUEUE_AT] - GS_SLOTS) // DS_ROWS
    for k in range(npairs):
        a = prs[e, k, PRS_A]
        b = prs[e, k, PRS_B]
        if prs[e, k, PRS_SP] >= 0 or bint[a, BI_KIND] != DRIVEN or bint[b, BI_KIND] != PASSIVE:
            continue
        dx, dy = _push_dir(e, k, prs, pos, pfl)
        if pfl[e, k, PFL_TOUCH] > 0.0 and nd < slots:
            gsc[e, _ds(_DS_PAIR, nd)] = k
            gsc[e, _ds(_DS_OPP, nd)] = 0
            carried_load(e, b, dx, dy, 1 << nd, gravity, prs, bint, epar, bis, gsc, pfl)
            nd += 1
        else:
            load = carried_load(e, b, dx, dy, np.int64(0), gravity, prs, bint, epar, bis, gsc,
                                pfl)
            traction = epar[e, a, EP_FRICTION] * epar[e, a, EP_MASS] * gravity
            prs[e, k, PRS_MODE] = MODE_PUSH if traction >= load * (1.0 - 1e-12) else MODE_STALL
    if nd == 0:
        return
    # Shared bodies: group the drives pushing one load the same way; note the opposing ones.
    for i in range(nm):
        m = bis[e, movable[i], IS_MASK]
        if m & (m - 1) == 0:
            continue  # reached by at most one slot
        for s1 in range(nd):
            if not (m >> s1) & 1:
                continue
            k1 = gsc[e, _ds(_DS_PAIR, s1)]
            d1x, d1y = _push_dir(e, k1, prs, pos, pfl)
            for s2 in range(s1 + 1, nd):
                if not (m >> s2) & 1:
                    continue
                k2 = gsc[e, _ds(_DS_PAIR, s2)]
                d2x, d2y = _push_dir(e, k2, prs, pos, pfl)
                if d1x * d2x + d1y * d2y > 0.0:
                    a1, a2 = prs[e, k1, PRS_A], prs[e, k2, PRS_A]
                    if a1 != a2 and not (drives_into(e, k1, prs, pos, bsc, pfl)
                                         and drives_into(e, k2, prs, pos, bsc, pfl)):
                        # Side by side, but one of them is not pushing: it neither adds its
                        # traction nor resists, and each decides on its own load.
                        continue
                    r1 = find_root(e, prs[e, k1, PRS_A], bis, IS_GROUP)
                    r2 = find_root(e, prs[e, k2, PRS_A], bis, IS_GROUP)
                    if r1 < r2:
                        bis[e, r2, IS_GROUP] = r1
                    elif r2 < r1:
                        bis[e, r1, IS_GROUP] = r2
                else:
                    gsc[e, _ds(_DS_OPP, s1)] |= 1 << s2
                    gsc[e, _ds(_DS_OPP, s2)] |= 1 << s1
    for s in range(nd):
        r = find_root(e, prs[e, gsc[e, _ds(_DS_PAIR, s)], PRS_A], bis, IS_GROUP)
        g = 0
        for s2 in range(nd):
            if find_root(e, prs[e, gsc[e, _ds(_DS_PAIR, s2)], PRS_A], bis, IS_GROUP) == r:
                g |= 1 << s2
        gsc[e, _ds(_DS_GROUP, s)] = g
    for s in range(nd):
        g = gsc[e, _ds(_DS_GROUP, s)]
        opp = np.int64(0)
        for s2 in range(nd):
            if (g >> s2) & 1:
                opp |= gsc[e, _ds(_DS_OPP, s2)]
        opp &= ~g
        load = 0.0
        for i in range(nm):
            b = movable[i]
            if bis[e, b, IS_MASK] & g:
                load += epar[e, b, EP_FRICTION] * epar[e, b, EP_MASS] * gravity
        load += _slots_traction(e, opp, nd, prs, epar, gravity, gsc)
        traction = _slots_traction(e, g, nd, prs, epar, gravity, gsc)
        k = gsc[e, _ds(_DS_PAIR, s)]
        prs[e, k, PRS_MODE] = MODE_PUSH if traction >= load * (1.0 - 1e-12) else MODE_STALL


# --------------------------------------------------------------------------------------------
# Contact-graph levels
# --------------------------------------------------------------------------------------------
@compiled
def contact_levels(e, npairs, prs, bint, movable, bis, gsc, pfl):
    """Contact-graph level of each body: hops over touching contacts from the bodies touching
    an immovable one (level 1), then, for bodies no immovable body backs, from the drives
    (LEVEL_DRIVE + hops). Bodies reached by neither keep LEVEL_INF.

    Only touching contacts count: a candidate pair that merely lies within the broad phase's
    margin is no path for a push, and counting it put the far end of a pushed row on the
    robot's level, so the sweep met the links out of order and converged one link per sweep.
    Breadth-first search gives exact hop counts, independent of the order pairs are listed in.
    """
    nm = movable.shape[0]
    q = gsc[e, GS_QUEUE_AT]
    for i in range(nm):
        b = movable[i]
        bis[e, b, IS_LEVEL] = LEVEL_DRIVE if bint[b, BI_KIND] == DRIVEN else LEVEL_INF
    tail = 0
    for k in range(npairs):
        if prs[e, k, PRS_SP] >= 0 and pfl[e, k, PFL_TOUCH] > 0.0:
            a = prs[e, k, PRS_A]
            if bis[e, a, IS_LEVEL] != 1:
                bis[e, a, IS_LEVEL] = 1
                gsc[e, q + tail] = a
                tail += 1
    for phase in range(2):
        if phase == 1:
            for i in range(nm):
                b = movable[i]
                if bint[b, BI_KIND] == DRIVEN and bis[e, b, IS_LEVEL] == LEVEL_DRIVE:
                    gsc[e, q + tail] = b
                    tail += 1
        head = 0
        while head < tail:
            x = gsc[e, q + head]
            head += 1
            lx = bis[e, x, IS_LEVEL]
            for s in range(bis[e, x, IS_CS], bis[e, x, IS_CS] + bis[e, x, IS_CN]):
                j = gsc[e, s]
                a = prs[e, j, PRS_A]
                y = prs[e, j, PRS_B] if a == x else a
                if bis[e, y, IS_LEVEL] > lx + 1:
                    bis[e, y, IS_LEVEL] = lx + 1
                    gsc[e, q + tail] = y
                    tail += 1
        tail = 0


# --------------------------------------------------------------------------------------------
# The prepare stage
# --------------------------------------------------------------------------------------------
# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def prepare(e, npairs, prs, pos, ang, epar, bint, bflt, pint, pvert, pflt, sint, svert, sflt,
            tol, gravity, movable, bsc, bis, vbuf, cbuf, pfl, gsc, prm, frozen):
    """Contacts at the predicted poses, pair modes, friction/restitution and body levels.

    Friction and restitution come from the world's mixing rules (``prm[PR_FMIX]``..,
    mixing.py). Also builds the touching contact graph of the bodies ``movable`` (the awake
    ones) for the traction rule and the levels. Returns the number of touching pairs, the
    ``frozen`` ones of the sleepers (sleeping.py) counted in: the step then runs as it would
    with them listed.
    """
    nm = movable.shape[0]
    touching = 0
    frule, ffn = int(prm[PR_FMIX]), int(prm[PR_FMIXFN])
    rrule, rfn = int(prm[PR_RMIX]), int(prm[PR_RMIXFN])
    for k in range(npairs):
        a = prs[e, k, PRS_A]
        b = prs[e, k, PRS_B]
        sp = prs[e, k, PRS_SP]
        ka = bint[a, BI_KIND]
        kb = IMMOVABLE if sp >= 0 else bint[b, BI_KIND]
        if ka == PASSIVE and kb == DRIVEN:
            # Keep the drive on side a: the mode rules below read it there.
            prs[e, k, PRS_A] = b
            prs[e, k, PRS_B] = a
            a, b, ka, kb = b, a, kb, ka
        pfl[e, k, PFL_DMAX] = -np.inf
        mu = 0.0
        if ka == PASSIVE and kb == IMMOVABLE:
            mu = mix(frule, ffn, epar[e, a, EP_FRICTION], a, epar[e, b, EP_FRICTION], b)
            if frule == MIX_USER:
                mu = clamped(mu, np.inf)
        pfl[e, k, PFL_MU] = mu
        rest = 0.0
        if ka == PASSIVE or kb == PASSIVE:
            rest = mix(rrule, rfn, bflt[a, BF_REST], a, bflt[b, BF_REST], b)
            if rrule == MIX_USER:
                rest = clamped(rest, 1.0)
        pfl[e, k, PFL_E] = rest
        if pair_contact(e, k, prs, pos, ang, epar, bint, pint, pvert, pflt, sint, svert, sflt,
                        tol, vbuf, cbuf, pfl):
            touching += 1
            pfl[e, k, PFL_TOUCH] = 1.0
            pfl[e, k, PFL_KEY] = pfl[e, k, PFL_DEPTH]
        else:
            pfl[e, k, PFL_TOUCH] = 0.0
            pfl[e, k, PFL_KEY] = -np.inf
    if touching + frozen == 0:
        # What follows (accumulators, union-find, graph, modes, levels) is read only when
        # something touches: a contact-free sub-step leaves that scratch alone.
        return 0
    for i in range(nm):
        b = movable[i]
        bis[e, b, IS_UF] = b
        # Every pair was evaluated above at these poses: none is stale. The sweeps (and any
        # re-ordered sweeps after them) then track moves in IS_MOVED.
        bis[e, b, IS_MOVED] = 0
        bsc[e, b, BS_DRIVE] = 0.0
    for k in range(npairs):
        for j in range(PFL_ACC, pfl.shape[2]):
            pfl[e, k, j] = 0.0
        # Touching passive bodies form chains (united in buffer order).
        if pfl[e, k, PFL_TOUCH] > 0.0 and prs[e, k, PRS_SP] < 0:
            a = prs[e, k, PRS_A]
            b = prs[e, k, PRS_B]
            if bint[a, BI_KIND] == PASSIVE and bint[b, BI_KIND] == PASSIVE:
                ra, rb = uf_find(e, a, bis), uf_find(e, b, bis)
                if ra != rb:
                    if ra < rb:
                        bis[e, rb, IS_UF] = ra
                    else:
                        bis[e, ra, IS_UF] = rb
    contact_graph(e, npairs, prs, movable, bis, gsc, pfl)
    # Traction of the drives touching each passive chain [N] (caps the reported forces).
    for k in range(npairs):
        a = prs[e, k, PRS_A]
        b = prs[e, k, PRS_B]
        if pfl[e, k, PFL_TOUCH] > 0.0 and prs[e, k, PRS_SP] < 0 and bint[a, BI_KIND] == DRIVEN \
                and bint[b, BI_KIND] == PASSIVE:
            bsc[e, uf_find(e, b, bis), BS_DRIVE] += \
                epar[e, a, EP_FRICTION] * epar[e, a, EP_MASS] * gravity
    traction_modes(e, npairs, gravity, prs, pos, bint, epar, movable, bis, gsc, pfl, bsc)
    contact_levels(e, npairs, prs, bint, movable, bis, gsc, pfl)
    return touching + frozen


# --------------------------------------------------------------------------------------------
# The sweep order
# --------------------------------------------------------------------------------------------
# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def _pair_level(e, k, prs, bis):
    if prs[e, k, PRS_SP] >= 0:
        return 0
    return min(bis[e, prs[e, k, PRS_A], IS_LEVEL], bis[e, prs[e, k, PRS_B], IS_LEVEL])


# LLVM-inlined into the merge sort: a call per comparison (three arrays flattened each time)
# was most of the sort's cost.
@compiled(inline="llvm")
def _before(e, k1, k2, prs, pord, pfl):
    """Sweep order: lower level (``pord[e, 2]``: each pair's ``_pair_level``), then deeper,
    then by contact point x, y, then by the pair's bodies (and static piece).

    Pairs not touching at the start (key -inf) have no contact point (their rows hold
    whatever an earlier evaluation left), so they go by their bodies alone. The order thus
    depends only on the pairs themselves, never on their slots in the buffer or on which
    other, non-touching pairs the broad phase listed (what makes sleeping exact).
    """
    l1 = pord[e, 2, k1]
    l2 = pord[e, 2, k2]
    if l1 != l2:
        return l1 < l2
    d1, d2 = pfl[e, k1, PFL_KEY], pfl[e, k2, PFL_KEY]
    if d1 != d2:
        return d1 > d2
    if d1 > -np.inf:
        x1, x2 = pfl[e, k1, PFL_P1X], pfl[e, k2, PFL_P1X]
        if x1 != x2:
            return x1 < x2
        y1, y2 = pfl[e, k1, PFL_P1Y], pfl[e, k2, PFL_P1Y]
        if y1 != y2:
            return y1 < y2
    for c in (PRS_A, PRS_B, PRS_SP):
        if prs[e, k1, c] != prs[e, k2, c]:
            return prs[e, k1, c] < prs[e, k2, c]
    return k1 < k2


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def sort_pairs(e, npairs, prs, bis, pfl, pord):
    """Stable bottom-up merge sort of pair indices by ``_before``; returns the row of
    ``pord[e]`` holding the order (a row index, not a view: the entry kernels run without
    numba's reference counting, which returning a view would need). Row 2 of ``pord[e]``
    holds each pair's level while it sorts (read once per pair, not per comparison)."""
    s, d = 0, 1
    for i in range(npairs):
        pord[e, s, i] = i
        pord[e, 2, i] = _pair_level(e, i, prs, bis)
    width = 1
    while width < npairs:
        for lo in range(0, npairs, 2 * width):
            mid = min(lo + width, npairs)
            hi = min(lo + 2 * width, npairs)
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                if _before(e, pord[e, s, j], pord[e, s, i], prs, pord, pfl):
                    pord[e, d, o] = pord[e, s, j]
                    j += 1
                else:
                    pord[e, d, o] = pord[e, s, i]
                    i += 1
                o += 1
            while i < mid:
                pord[e, d, o] = pord[e, s, i]
                i += 1
                o += 1
            while j < hi:
                pord[e, d, o] = pord[e, s, j]
                j += 1
                o += 1
        s, d = d, s
        width *= 2
    return s


# --------------------------------------------------------------------------------------------
# Re-ordering for contacts made while sweeping
# --------------------------------------------------------------------------------------------
@compiled
def new_contacts(e, npairs, prs, bint, pfl):
    """Pairs that touch now but did not when the order was made get their sort key. Returns
    how many of them are not a drive meeting a body: those change what backs what (a row
    reaching a wall mid-solve is then re-levelled from the wall; discs landing on a pile,
    from the pile's floor). A drive catching up with the box it pushes changes nothing the
    order needs, and re-ordering for it would cost a sort in most steps of a pushing task."""
    n = 0
    for k in range(npairs):
        if pfl[e, k, PFL_TOUCH] > 0.0 and pfl[e, k, PFL_KEY] == -np.inf:
            pfl[e, k, PFL_KEY] = pfl[e, k, PFL_DEPTH]
            if bint[prs[e, k, PRS_A], BI_KIND] != DRIVEN and (
                    prs[e, k, PRS_SP] >= 0 or bint[prs[e, k, PRS_B], BI_KIND] != DRIVEN):
                n += 1
    return n


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def reorder(e, npairs, prs, bint, movable, bis, gsc, pfl, pord):
    """After sweeps that made contacts which change what backs what (``new_contacts``): the
    contact graph, the levels and the sweep order again. Returns the row of ``pord[e]``
    holding the new order (``sort_pairs``), or -1 when no such contact was made and the
    order stands."""
    if new_contacts(e, npairs, prs, bint, pfl) == 0:
        return -1
    contact_graph(e, npairs, prs, movable, bis, gsc, pfl)
    contact_levels(e, npairs, prs, bint, movable, bis, gsc, pfl)
    return sort_pairs(e, npairs, prs, bis, pfl, pord)
