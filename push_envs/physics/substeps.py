"""The first stage of a step: how many sub-steps it is split into.

A step of ``PR_DT`` seconds is split so that no body travels more than ``PR_SUBFRAC`` of its
own half-thickness per sub-step, at the speed it can reach this step (its own, or that of a
faster body that can touch it); SAT then always pushes a body back the way it came, so nothing
tunnels through a thin wall (or a grid cell), and contacts are resolved where they happen.
``count_substeps`` returns the count uncapped; the step takes at most ``PR_MAXSUB``, and
continuous collision (continuous.py) stops whatever then moves farther per sub-step than the
rule allows. Bullets (``BODY_BULLET``) are left out of the count: continuous collision alone
handles them, so one fast small body does not split its whole env's step.
``scene.check_substeps`` and ``scene.thinnest_half_allowed`` bound the same count before
anything is stepped.
"""

from __future__ import annotations

import math

from .jit import compiled
from .kinematics import DRIVE_ACKER
from .kinematics import DRIVE_OMNI
from .kinematics import DRIVE_OMNI_ANGULAR
from .kinematics import noise_bound
from .layout import BF_BRAD
from .layout import BF_HALF
from .layout import BF_NOISE
from .layout import BF_VMAX0
from .layout import BF_VMAX1
from .layout import BF_VMAX2
from .layout import BF_VMIN0
from .layout import BF_VMIN1
from .layout import BF_VMIN2
from .layout import BF_WHEELBASE
from .layout import BI_DRIVE
from .layout import BI_FLAGS
from .layout import BI_KIND
from .layout import BODY_BULLET
from .layout import BS_REACH
from .layout import DRIVEN
from .layout import EP_SCALE
from .layout import PR_DT
from .layout import PR_SUBFRAC
from .layout import YW_CMD
from .layout import YW_STATE

_MIN_HALF = 1e-6  # [m] floor on the half-thickness used to size sub-steps (no division by 0)


@compiled
def _speed(e, b, bint, bflt, epar, vel, omg, drv, cmd):
    """Bound [m/s] on how fast any point of movable body b moves this step: a driven body's
    faster of its drive state and its (clipped) command, a passive body's velocity; both
    with the spin times the bounding radius."""
    reach = bflt[b, BF_BRAD] * epar[e, b, EP_SCALE]
    if bint[b, BI_KIND] != DRIVEN:
        return math.sqrt(vel[e, b, 0] ** 2 + vel[e, b, 1] ** 2) + abs(omg[e, b]) * reach
    c0 = min(max(cmd[e, b, 0], bflt[b, BF_VMIN0]), bflt[b, BF_VMAX0])
    c1 = min(max(cmd[e, b, 1], bflt[b, BF_VMIN1]), bflt[b, BF_VMAX1])
    d0 = max(abs(drv[e, b, 0]), abs(c0))
    d1 = max(abs(drv[e, b, 1]), abs(c1))
    drive = bint[b, BI_DRIVE]
    if drive == DRIVE_OMNI:
        return math.sqrt(d0 * d0 + d1 * d1)
    if drive == DRIVE_ACKER:
        return d0 * (1.0 + reach * abs(math.tan(min(d1, 1.5))) / bflt[b, BF_WHEELBASE])
    return d0 + d1 * reach


@compiled
def _speed_irsim(e, b, bint, bflt, epar, drv, cmd, yaw, bsc):
    """:func:`_speed` of a drive _speed does not cover: an omni_angular drive (its yaw rate
    times the bounding radius on top of its translation) or one with motion noise (the step
    executes the drive plus this step's noise, kinematics.executed). Kept apart so that the
    common case stays the small function it was (LLVM inlines it into count_substeps)."""
    reach = bflt[b, BF_BRAD] * epar[e, b, EP_SCALE]
    c0 = min(max(cmd[e, b, 0], bflt[b, BF_VMIN0]), bflt[b, BF_VMAX0])
    c1 = min(max(cmd[e, b, 1], bflt[b, BF_VMIN1]), bflt[b, BF_VMAX1])
    d0 = max(abs(drv[e, b, 0]), abs(c0))
    d1 = max(abs(drv[e, b, 1]), abs(c1))
    drive = bint[b, BI_DRIVE]
    d2 = 0.0
    if drive == DRIVE_OMNI_ANGULAR:
        c2 = min(max(yaw[e, b, YW_CMD], bflt[b, BF_VMIN2]), bflt[b, BF_VMAX2])
        d2 = max(abs(yaw[e, b, YW_STATE]), abs(c2))
    n0, n1, n2 = noise_bound(e, b, drive, d0, d1, bflt, yaw)
    d0 += n0
    d1 += n1
    d2 += n2
    if drive == DRIVE_OMNI_ANGULAR or drive == DRIVE_OMNI:
        return math.sqrt(d0 * d0 + d1 * d1) + d2 * reach
    if drive == DRIVE_ACKER:
        return d0 * (1.0 + reach * abs(math.tan(min(d1, 1.5))) / bflt[b, BF_WHEELBASE])
    return d0 + d1 * reach


@compiled
def _count(speed, dt, frac, half):
    """Sub-steps [-] that keep a body at ``speed`` [m/s] within ``frac`` of ``half`` [m] per
    sub-step (uncapped; 1 << 30 for a speed past any count)."""
    r = speed * dt / (frac * half) if speed > 0.0 else 0.0
    if not r < 1e9:
        return 1 << 30
    return int(math.ceil(r)) if r > 1.0 else 1


# Sub-step count: no body may travel more than PR_SUBFRAC of its half-thickness per sub-step,
# so SAT always pushes it back the way it came. A body moves at its own speed, or, when pushed,
# at its pusher's: a 1 m/s robot pushing 1 cm discs into a wall must not move more than a
# disc's half-thickness per sub-step either, or SAT pushes the disc out through the far side
# of the wall. So each body b gets a reachable speed p_b, and the count is the largest
# ceil(p_b dt / (PR_SUBFRAC half_b)):
#
#   p_b = own speed of b                                      (every body)
#   p_c = max(p_c, p_b)  while the bounding circles of b and c are within (p_b + p_c) dt
#                        of each other (they can meet this step), until nothing changes
#
# The relaxation spreads a pusher's speed along any chain of bodies it can reach: each link's
# gap is at most the whole travel, so the set it marks holds every body that can be touched,
# directly or through others (a superset: the real chain spends its travel once). A thin body
# out of every fast body's reach keeps its own speed, and a fast robot far from it is not held
# to its thickness. The pairwise relaxation costs O(M^2) per pass over M movable bodies, so
# past _REACH_BODIES bodies (crowds) every body takes the fastest speed (the plain bound).
_REACH_BODIES = 24


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def count_substeps(e, prm, bint, bflt, movable, aw, epar, pos, vel, omg, drv, cmd, yaw, bsc):
    """Sub-steps [-] env ``e``'s step needs so that no body travels more than PR_SUBFRAC of
    its half-thickness per sub-step, moving at the speed it can reach (see the sketch above),
    bullets left out. Returns the count uncapped; the caller takes at most PR_MAXSUB. Keeps
    each awake body's (``aw``: every movable body, or with sleeping on the awake ones; a
    sleeper has no speed) reachable speed [m/s] in its hot ``BS_REACH`` column."""
    dt = prm[PR_DT]
    frac = prm[PR_SUBFRAC]
    nm = movable.shape[0]
    if nm <= _REACH_BODIES:
        aw = movable  # the relaxation below reads every body's speed
    fastest = 0.0
    thinnest = math.inf
    for i in range(aw.shape[0]):
        b = aw[i]
        if bint[b, BI_FLAGS] & BODY_BULLET:
            bsc[e, b, BS_REACH] = 0.0  # a bullet neither sets the count nor is held to it
            continue
        p = _speed(e, b, bint, bflt, epar, vel, omg, drv, cmd)
        if bflt[b, BF_NOISE] != 0.0 or bint[b, BI_DRIVE] == DRIVE_OMNI_ANGULAR:
            p = _speed_irsim(e, b, bint, bflt, epar, drv, cmd, yaw, bsc)
        # The hot row: free motion reads this body's line right after, so the write costs no
        # extra memory traffic (the cold rows did: a miss per body on every step of a batch).
        bsc[e, b, BS_REACH] = p
        fastest = max(fastest, p)
    for i in range(nm):  # sleepers too: the count must not depend on who sleeps
        b = movable[i]
        if not bint[b, BI_FLAGS] & BODY_BULLET:
            thinnest = min(thinnest, max(bflt[b, BF_HALF] * epar[e, b, EP_SCALE], _MIN_HALF))
    plain = _count(fastest, dt, frac, thinnest)
    if plain <= 1 or nm > _REACH_BODIES:
        return plain
    # A body no faster than `slow` needs one sub-step even at the thinnest body's half, so it
    # cannot raise any count: only the faster ones spread their speed.
    slow = frac * thinnest / dt
    for _ in range(nm):
        changed = False
        for i in range(nm):
            b = movable[i]
            pb = bsc[e, b, BS_REACH]
            if pb <= slow:
                continue
            rb = bflt[b, BF_BRAD] * epar[e, b, EP_SCALE]
            for j in range(nm):
                c = movable[j]
                pc = bsc[e, c, BS_REACH]
                if pc >= pb or bint[c, BI_FLAGS] & BODY_BULLET:
                    continue
                near = rb + bflt[c, BF_BRAD] * epar[e, c, EP_SCALE] + (pb + pc) * dt
                dx = pos[e, b, 0] - pos[e, c, 0]
                dy = pos[e, b, 1] - pos[e, c, 1]
                if dx * dx + dy * dy <= near * near:
                    bsc[e, c, BS_REACH] = pb
                    changed = True
        if not changed:
            break
    need = 1
    for i in range(nm):
        b = movable[i]
        if bint[b, BI_FLAGS] & BODY_BULLET:
            continue
        half = max(bflt[b, BF_HALF] * epar[e, b, EP_SCALE], _MIN_HALF)
        need = max(need, _count(bsc[e, b, BS_REACH], dt, frac, half))
    return need
