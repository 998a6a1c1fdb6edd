"""One world step, as named stages, and the conductor that runs them (``step_env``).

The stages in the order a step runs them, each in the module named after it (the order
Box2D's ``b2World_Step`` and ``solver.c`` follow; read the modules in this order)::

    1. sub-steps     substeps.py         split the step so no body travels more than a fraction
                                         of its half-thickness per sub-step, at the speed it
                                         can reach (SAT then never lets it tunnel), up to a cap
       per sub-step:
    2. sleep         sleeping.py         doze: bodies at rest sleep on while left alone
    3. free motion   kinematics.py       commands -> drive state (limits, lag, acceleration,
                                         grip); driven bodies follow their drive, passive
                                         bodies coast
    4. broad phase   broadphase.py       boxes; candidate pairs within the sub-step's travel
                                         (waking the sleepers an awake body reaches)
       continuous    continuous.py       a body that moved farther than the sub-step rule
                                         allows (past the cap, or a bullet) is swept against
                                         its pairs and stopped at its time of impact
    5. prepare       contacts.py         narrow phase of every pair (narrowphase.py's
                                         pair_contact), chains, contact graph, traction modes,
                                         levels; then the sweep order
    6. position      position_solver.py  Gauss-Seidel sweeps; contacts.reorder re-orders them
                                         when the sweeps make contacts that change the levels
       continuous    continuous.py       the same for what the corrections moved too far
                                         (then the sweeps again)
    7. refresh       narrowphase.py      the pairs of bodies the sweeps moved, at their final
                                         poses (refresh_moved)
    8. velocity      velocity_solver.py  velocities from the displacement, restitution, friction;
                                         the energy guard (contacts add no kinetic energy)
    9. settle        sleeping.py         which bodies came to rest (may sleep next sub-step)
       after the last sub-step:
    10. sensors      sensors.py          touching contacts into the contact buffers

Before the step, a world with motion noise draws the step's noise (kinematics.py's
``draw_noise``); a world in one of IR-SIM's other collision modes (``stop``,
``unobstructed``, ``unobstructed_obstacles``) takes ``collision_modes.kinematic_step``
instead of stages 1-10: its drives move, nothing pushes, overlaps stop bodies
(``_step_mode`` picks, around ``step_env``). Such a world steps through an entry point of
its own, :data:`PHYSICS_MODES` (``physics_for`` picks): a world without them (every task)
never compiles them.

A step that finds more candidate pairs than its buffer holds is rolled back to its start
(``_save``/``_restore`` here, and the sleep state in sleeping.py) and flagged in
``hl[e, HL_STATUS]``.

``step_serial`` runs envs one after the other; ``step_parallel`` runs them with ``prange``.
Both call the same ``step_env`` with the env loop outermost and no reduction across envs, so
env i of a batch is bit-identical to a single world given the same inputs. Both entry kernels
are compiled without numba's reference counting (``_nrt=False``; see push_envs/core/step.py
for the measurement): the arrays are only borrowed, and a count per argument per call was a large
share of a step.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import prange

from .abi import ENV_SIG
from .abi import ROWS_SIG
from .abi import CFunction
from .abi import call_i8
from .abi import call_void
from .abi import struct_ptr
from .arrays import cold_row
from .arrays import load_world
from .broadphase import body_boxes
from .broadphase import find_pairs
from .collision_modes import TOUCH
from .collision_modes import kinematic_step
from .contacts import prepare
from .contacts import reorder
from .contacts import sort_pairs
from .continuous import CCD
from .continuous import OP_ASLEEP
from .continuous import OP_FREE
from .continuous import OP_PAIRS
from .continuous import any_fast
from .jit import compiled
from .kinematics import DRIVE_OMNI_ANGULAR
from .kinematics import draw_noise
from .kinematics import free_motion
from .layout import BI_DRIVE
from .layout import BI_KIND
from .layout import BS_D0
from .layout import BS_D1
from .layout import BS_D2
from .layout import BS_SAVE
from .layout import BS_SLT
from .layout import BS_SLX
from .layout import BS_SLY
from .layout import BS_T0
from .layout import BS_VX0
from .layout import BS_VY0
from .layout import BS_W0
from .layout import BS_X0
from .layout import BS_Y0
from .layout import DRIVEN
from .layout import HL_NEED
from .layout import HL_NSUB
from .layout import HL_OVERFLOW
from .layout import HL_SLEEP
from .layout import HL_STATUS
from .layout import HL_SWEEPS
from .layout import IS_SKIP
from .layout import MODE_PUSH
from .layout import MODE_STALL
from .layout import PR_CCDFN
from .layout import PR_DT
from .layout import PR_G
from .layout import PR_MAXSUB
from .layout import PR_MODE
from .layout import PR_NOISE
from .layout import PR_REST
from .layout import PR_SLEEP
from .layout import PR_SLEEPFN
from .layout import PR_SLOP
from .layout import PR_STEPFN
from .layout import PR_SWEEPS
from .layout import PR_TOUCHFN
from .layout import PRS_MODE
from .layout import SC_FROZEN
from .layout import SC_LAST
from .layout import SC_LEN
from .layout import ST_CCD
from .layout import ST_OVERFLOW
from .layout import YW_SAVE
from .layout import YW_STATE
from .narrowphase import refresh_moved
from .position_solver import sweeps
from .prefetch import prefetch_world
from .sensors import write_contacts
from .sleeping import OP_DOZE
from .sleeping import OP_DOZE_FIRST
from .sleeping import OP_WAKE
from .sleeping import SLEEP
from .sleeping import regions
from .sleeping import restore_sleep
from .sleeping import save_sleep
from .sleeping import settle
from .substeps import count_substeps
from .velocity_solver import energy_guard
from .velocity_solver import velocity_pass

_RELEVELS = 2  # times a sub-step may re-order its sweeps for contacts made while sweeping
# The phases of a sub-step's sweep schedule (step_env)
_SWEEP, _STALLED, _PLAIN, _AFTER_TOI = 0, 1, 2, 3


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def _save(e, movable, bint, pos, ang, vel, omg, drv, yaw, bsc):
    """Keep env e's state at the step's start in the cold rows of ``bsc``, so a step of
    several sub-steps can be rolled back (a step of one is restored from its hot rows)."""
    for i in range(movable.shape[0]):
        b = movable[i]
        r = cold_row(bsc, b)
        bsc[e, r, BS_SAVE + 0] = pos[e, b, 0]
        bsc[e, r, BS_SAVE + 1] = pos[e, b, 1]
        bsc[e, r, BS_SAVE + 2] = ang[e, b]
        bsc[e, r, BS_SAVE + 3] = vel[e, b, 0]
        bsc[e, r, BS_SAVE + 4] = vel[e, b, 1]
        bsc[e, r, BS_SAVE + 5] = omg[e, b]
        bsc[e, r, BS_SAVE + 6] = drv[e, b, 0]
        bsc[e, r, BS_SAVE + 7] = drv[e, b, 1]
        if bint[b, BI_DRIVE] == DRIVE_OMNI_ANGULAR:
            yaw[e, b, YW_SAVE] = yaw[e, b, YW_STATE]


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def _restore(e, saved, sleep_on, bint, movable, pos, ang, vel, omg, drv, yaw, bsc, bis):
    """Roll env e back to the step's start: from the cold rows when ``saved`` (``_save``),
    else, in the step's first sub-step, from what free motion kept of it in the hot rows.

    Free motion copies the pose and velocity it starts from to BS_X0..BS_W0 and a drive's
    state to BS_D0, BS_D1. It leaves the bodies asleep at the sub-step's start (IS_SKIP)
    untouched, but the solve may move one the wake reached: it goes back to the pose it fell
    asleep at (BS_SLX.., which its pose equals, but for the sign of a zero that falling
    asleep made +0.0, as ``+ 0.0`` does here), at rest.
    """
    for i in range(movable.shape[0]):
        b = movable[i]
        if saved:
            r = cold_row(bsc, b)
            pos[e, b, 0] = bsc[e, r, BS_SAVE + 0]
            pos[e, b, 1] = bsc[e, r, BS_SAVE + 1]
            ang[e, b] = bsc[e, r, BS_SAVE + 2]
            vel[e, b, 0] = bsc[e, r, BS_SAVE + 3]
            vel[e, b, 1] = bsc[e, r, BS_SAVE + 4]
            omg[e, b] = bsc[e, r, BS_SAVE + 5]
            drv[e, b, 0] = bsc[e, r, BS_SAVE + 6]
            drv[e, b, 1] = bsc[e, r, BS_SAVE + 7]
            if bint[b, BI_DRIVE] == DRIVE_OMNI_ANGULAR:
                yaw[e, b, YW_STATE] = yaw[e, b, YW_SAVE]
            continue
        if sleep_on and bis[e, b, IS_SKIP] != 0:
            pos[e, b, 0] = bsc[e, b, BS_SLX] + 0.0
            pos[e, b, 1] = bsc[e, b, BS_SLY] + 0.0
            ang[e, b] = bsc[e, b, BS_SLT] + 0.0
            vel[e, b, 0] = 0.0
            vel[e, b, 1] = 0.0
            omg[e, b] = 0.0
            continue
        pos[e, b, 0] = bsc[e, b, BS_X0]
        pos[e, b, 1] = bsc[e, b, BS_Y0]
        ang[e, b] = bsc[e, b, BS_T0]
        vel[e, b, 0] = bsc[e, b, BS_VX0]
        vel[e, b, 1] = bsc[e, b, BS_VY0]
        omg[e, b] = bsc[e, b, BS_W0]
        if bint[b, BI_KIND] == DRIVEN:
            drv[e, b, 0] = bsc[e, b, BS_D0]
            drv[e, b, 1] = bsc[e, b, BS_D1]
            if bint[b, BI_DRIVE] == DRIVE_OMNI_ANGULAR:
                yaw[e, b, YW_STATE] = bsc[e, b, BS_D2]


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def _roll_back(e, saved, sleep_on, status, bint, movable, pos, ang, vel, omg, drv, yaw, bsc,
               bis, stamp, nst, hl):
    """Roll env e back to the step's start (``_restore``, and sleeping's state) and say why
    in ``hl[e, HL_STATUS]`` (``status``: ST_OVERFLOW, ST_CCD): World then steps it again.
    Valid anywhere in a sub-step: what the stages change besides the state restored here is
    scratch that a step writes before it reads (pairs, contacts, sweep order)."""
    _restore(e, saved, sleep_on, bint, movable, pos, ang, vel, omg, drv, yaw, bsc, bis)
    if sleep_on:
        restore_sleep(e, saved, movable, bsc, bis, stamp, nst)
    hl[e, HL_STATUS] = status


# Without reference counting, as its callers: it reads ~40 arrays of W per env, and an
# atomic count up and down for each was ~a quarter of a PushBox step (profiled).
#
# A C function (STEP, below) that the entry points call through its address, not a callee
# they link: numba optimises and compiles a callee's code again inside every library that
# links it, and step_env's code (with its inlined stages, ~25 k LLVM instructions) was thus
# paid twice at a fresh machine's first gym.make (PushBox-v0: 11-21 % fewer CPU-seconds
# through this pointer and sleeping's, in paired runs). Not IR-inlined into them either:
# inlined, Sweep-v1 at 4096 envs stepped ~5 % slower (paired pinned runs).
def step_env(e, wp):
    """The body of :data:`STEP`: advance env ``e`` of the worlds at ``wp`` (a
    :class:`WorldArrays` by pointer, ``abi.py``: a call costs two words, not W's ~300
    flattened) by ``W.prm[PR_DT]`` s.

    Never silent: when the pair buffer is too small for some sub-step (``ST_OVERFLOW``, with
    the pairs needed in ``hl[e, HL_OVERFLOW]``), the env is rolled back to the step's start
    and ``hl[e, HL_STATUS]`` says why; World grows the buffers and steps the env again.
    Callers stepping envs themselves must check HL_STATUS. The sub-steps the bodies' speeds
    call for are in ``hl[e, HL_NEED]`` (past PR_MAXSUB the step takes PR_MAXSUB, and
    continuous collision does the rest).
    """
    W = load_world(wp)
    prm, bint, bflt, movable, epar = W.prm, W.bint, W.bflt, W.movable, W.epar
    pos, ang, vel, omg, drv, cmd = W.pos, W.ang, W.vel, W.omg, W.drv, W.cmd
    pint, pvert, pflt, sint, svert, sflt = W.pint, W.pvert, W.pflt, W.sint, W.svert, W.sflt
    bsc, bis, prs, pfl, vbuf, cbuf = W.bsc, W.bis, W.prs, W.pfl, W.vbuf, W.cbuf
    gravity = prm[PR_G]
    slop = prm[PR_SLOP]
    tol = prm[PR_REST]
    W.hl[e, HL_STATUS] = 0.0
    W.hl[e, HL_OVERFLOW] = 0.0
    # Sleeping's stages are a C function of their own (sleeping.SLEEP), reached by address;
    # without one (prm not written by physics_for) the step runs as with sleeping off rather
    # than call address 0
    sleep_fn = int(prm[PR_SLEEPFN])
    # Continuous collision too (continuous.CCD), compiled on demand: 0 until a fast body
    # first rolls a step back (ST_CCD).
    ccd_fn = int(prm[PR_CCDFN])
    sleep_on = prm[PR_SLEEP] != 0.0 and sleep_fn != 0
    extra = tol + 2.0 * slop
    nst = sint.shape[0]
    nm = movable.shape[0]
    order_at, awake_at = regions(W.stamp, nst, nm)[:2]
    na = nm
    counts = W.stamp.shape[1] - SC_LEN
    if sleep_on:
        # Sleepers leave the step here (sleeping.py): every stage below walks the awake list.
        na = call_i8(sleep_fn, (OP_DOZE_FIRST, e, extra, wp))
        if na < 0:
            # Rebuilding the frozen contacts needs larger pair buffers.
            restore_sleep(e, False, movable, bsc, bis, W.stamp, nst)
            W.hl[e, HL_OVERFLOW] = -na
            W.hl[e, HL_STATUS] = ST_OVERFLOW
            return
    aw = W.stamp[e, awake_at:awake_at + na] if sleep_on else movable
    contact = prm[PR_MODE] == 0.0  # True here; a variable, not a literal: one signature
    need = count_substeps(e, prm, bint, bflt, movable, aw, epar, pos, vel, omg, drv, cmd, W.yaw,
                          bsc)
    W.hl[e, HL_NEED] = need
    # Past the cap the sub-steps stop growing: continuous collision keeps what moves farther
    # than the sub-step rule allows from passing through anything (continuous.py).
    nsub = min(need, int(prm[PR_MAXSUB]))
    dts = prm[PR_DT] / nsub
    cap = prs.shape[1]
    max_sweeps = int(prm[PR_SWEEPS])
    most = 0
    npairs = np.int64(0)  # not a literal: one signature of write_contacts
    nf = W.stamp[e, counts + SC_FROZEN] if sleep_on else 0
    # A step of one sub-step (most steps) can be rolled back from the hot rows alone.
    saved = nsub > 1
    if saved:
        _save(e, movable, bint, pos, ang, vel, omg, drv, W.yaw, bsc)
        if sleep_on:
            save_sleep(e, movable, bsc)
    for sub in range(nsub):
        if sleep_on and sub > 0:
            na = call_i8(sleep_fn, (OP_DOZE, e, extra, wp))
            aw = W.stamp[e, awake_at:awake_at + na]
        free_motion(e, dts, gravity, contact, bint, bflt, aw, epar, pos, ang, vel, omg, drv, cmd,
                    W.yaw, bsc, bis, W.cbuf)
        travel = body_boxes(e, aw, bflt, epar, bsc, extra, W.aabb)
        nf = 0  # frozen pairs (the sleepers' contacts) at the buffers' end
        if sleep_on:
            # The awake boxes wake the sleepers they reach, and those, the next ones.
            na = call_i8(sleep_fn, (OP_WAKE, e, travel + extra, wp))
            aw = W.stamp[e, awake_at:awake_at + na]
            nf = W.stamp[e, counts + SC_FROZEN]
        found = find_pairs(e, aw, order_at, cap - nf, bint, W.aabb, sint, sflt, W.grid,
                           W.gstart, W.gitem, W.stamp, prs)
        if found > cap - nf:
            # Dropping pairs would drop contacts: roll back and let World grow the buffers.
            _roll_back(e, saved, sleep_on, ST_OVERFLOW, bint, movable, pos, ang, vel, omg, drv,
                       W.yaw, bsc, bis, W.stamp, nst, W.hl)
            W.hl[e, HL_OVERFLOW] = found + nf
            return
        npairs = found
        if sleep_on:
            W.stamp[e, counts + SC_LAST] = found
        ccd_op = npairs * OP_PAIRS + (OP_ASLEEP if sleep_on else 0)
        if any_fast(e, sleep_on, prm, aw, pos, ang, bflt, epar, bsc, bis):
            if ccd_fn == 0:  # not compiled yet in this process: World compiles it
                _roll_back(e, saved, sleep_on, ST_CCD, bint, movable, pos, ang, vel, omg, drv,
                           W.yaw, bsc, bis, W.stamp, nst, W.hl)
                return
            call_i8(ccd_fn, (ccd_op + OP_FREE, e, 0.0, wp))
        touching = prepare(e, npairs, prs, pos, ang, epar, bint, bflt, pint, pvert, pflt, sint,
                           svert, sflt, tol, gravity, aw, bsc, bis, vbuf, cbuf, pfl,
                           W.gsc, prm, nf)
        if touching == 0:
            # Nothing touches after free motion, so no correction can start: the free motion
            # stands (positions and velocities are already written).
            if sleep_on:
                settle(e, npairs, prs, pfl, bint, aw, pos, ang, vel, omg, bsc, bis)
            continue
        order = W.pord[e, sort_pairs(e, npairs, prs, bis, pfl, W.pord)]
        # The sweep schedule, one call site of the (inlined) sweeps: each copy of their code
        # was LLVM's work at every cold start, and code the hot loop jumps over.
        #
        #   SWEEP      blocked sweeps, then up to _RELEVELS times: re-order (contacts made
        #              while sweeping change the levels: a pushed row reaching a wall) and
        #              sweep on, so the wall's block runs back to the drive instead of
        #              jamming the row between them
        #   STALLED    still moving at the cap: the drives have jammed their loads (a pile
        #              wedged in a corner); a jam is a load no traction moves, so the drives
        #              yield, as a stall does, and the passive bodies settle among themselves
        #   PLAIN      still at the cap: blocked chains that meet from both sides (one backed
        #              by a wall, one by a drive) hand the overlap back and forth at every
        #              sweep; plain Gauss-Seidel, nobody blocked, 4x the sweeps, spreads it out
        #   AFTER_TOI  a correction carried a body through another (a robot pushing a 1 mm
        #              disc into a wall moves it as far as itself): it was put back at its
        #              time of impact, where what pushed it may now overlap it; sweep once more
        ns = 0
        phase = _SWEEP
        relevels = 0
        cap_now = max_sweeps
        blocked = True
        while True:
            last = sweeps(e, npairs, order, cap_now, prs, pos, ang, epar, bint, pint, pvert,
                          pflt, sint, svert, sflt, tol, slop, bsc, bis, aw, vbuf, cbuf, pfl,
                          blocked)
            ns += last
            if phase == _SWEEP and relevels < _RELEVELS:
                row = reorder(e, npairs, prs, bint, aw, bis, W.gsc, pfl, W.pord)
                if row >= 0:
                    relevels += 1
                    order = W.pord[e, row]
                    continue
                relevels = _RELEVELS  # the levels hold: no more re-ordering
            if phase == _SWEEP and last >= max_sweeps:
                for k in range(npairs):
                    if prs[e, k, PRS_MODE] == MODE_PUSH:
                        prs[e, k, PRS_MODE] = MODE_STALL
                phase = _STALLED
                continue
            if phase == _STALLED and last >= max_sweeps:
                phase = _PLAIN
                cap_now = 4 * max_sweeps
                blocked = False
                continue
            if phase == _AFTER_TOI:  # (reached through CCD alone: ccd_fn is set)
                call_i8(ccd_fn, (ccd_op, e, 0.0, wp))
                break
            if any_fast(e, sleep_on, prm, aw, pos, ang, bflt, epar, bsc, bis):
                if ccd_fn == 0:
                    _roll_back(e, saved, sleep_on, ST_CCD, bint, movable, pos, ang, vel, omg,
                               drv, W.yaw, bsc, bis, W.stamp, nst, W.hl)
                    return
                if call_i8(ccd_fn, (ccd_op, e, 0.0, wp)) > 0:
                    phase = _AFTER_TOI
                    cap_now = max_sweeps
                    blocked = True
                    continue
            break
        if ns > most:
            most = ns
        refresh_moved(e, npairs, prs, tol, bis, pfl, wp)
        velocity_pass(e, npairs, order, dts, prs, pos, ang, vel, omg, epar, bint, bflt, aw,
                      bsc, bis, pfl)
        energy_guard(e, sleep_on, npairs, prs, pfl, bint, epar, aw, vel, omg, bsc, bis)
        if sleep_on:
            settle(e, npairs, prs, pfl, bint, aw, pos, ang, vel, omg, bsc, bis)
    write_contacts(e, npairs, nf, dts, gravity, prs, bint, epar, bsc, bis, pfl, W.cti, W.ctf,
                   W.ctn, W.hl)
    W.hl[e, HL_SWEEPS] = most
    W.hl[e, HL_NSUB] = nsub
    W.hl[e, HL_SLEEP] = nm - na


# LLVM-inlined into physics_modes_rows (jit.py, 'Inlining')
@compiled(inline="llvm")
def _step_mode(e, wp):
    """Env ``e``'s step in the world's collision mode: the contact solver (``step_env``) or
    IR-SIM's stop / unobstructed modes (collision_modes.py), after drawing the step's motion
    noise when some drive has any; a rolled-back step puts the env's stream back, so the step
    taken again draws the same noise."""
    W = load_world(wp)
    prm = W.prm
    noisy = prm[PR_NOISE] != 0.0
    stream = W.rng[0]
    if noisy:
        stream = W.rng[e]
        draw_noise(e, W.bint, W.bflt, W.movable, W.yaw, W.rng)
    if prm[PR_MODE] != 0.0:
        kinematic_step(e, wp)
        return
    call_void(int(prm[PR_STEPFN]), (e, wp))
    if noisy and W.hl[e, HL_STATUS] != 0.0:
        W.rng[e] = stream


def physics_rows(lo, hi, wp):
    """Step envs ``lo .. hi-1`` of the worlds at ``wp`` (a :class:`WorldArrays` by pointer,
    ``abi.py``) whose ``active`` flag is set, with the contact solver (``step_env``); over
    several envs, each prefetches the next env's rows.

    The body of the engine's compiled entry point, :data:`PHYSICS`: every kernel that steps
    physics (World's, every task's) calls it through its address, so the step is typed,
    optimised and cached once per machine, not once per caller.
    """
    W = load_world(wp)
    step = int(W.prm[PR_STEPFN])
    if hi - lo == 1:
        # One env per call (an env stage's loop, which prefetches env e + 1 itself): the
        # prefetch's set-up, per array, would be paid per env here, not once per loop;
        # profiled at ~100 ns of a 1.2 us PushBox env-step.
        if W.active[lo]:
            call_void(step, (lo, wp))
        return
    n = W.pos.shape[0]
    for e in range(lo, hi):
        if e + 1 < n:
            prefetch_world(e + 1, W)  # arrives while env e steps (prefetch.py)
        if W.active[e]:
            call_void(step, (e, wp))


def physics_modes_rows(lo, hi, wp):
    """:func:`physics_rows` for a world with motion noise or in one of IR-SIM's other
    collision modes (``_step_mode``), without the prefetch (such worlds are small): the body
    of :data:`PHYSICS_MODES`."""
    W = load_world(wp)
    for e in range(lo, hi):
        if W.active[e]:
            _step_mode(e, wp)


STEP = CFunction(step_env, ENV_SIG)
"""step_env as a C function ``void(int64 e, WorldArrays* W)``: the entry points call it at the
address ``prm[PR_STEPFN]``, which :func:`physics_for` writes (a world's parameters are reached
through it before any step)."""

PHYSICS = CFunction(physics_rows, ROWS_SIG)
"""The physics step as a C function ``void(int64 lo, int64 hi, WorldArrays* W)``."""

PHYSICS_MODES = CFunction(physics_modes_rows, ROWS_SIG)
"""The same with motion noise and IR-SIM's collision modes. A separate entry point, compiled
on first use, because a world without them (every task) need not compile them: the modes'
kinematic step and the noise were several CPU-seconds of a fresh machine's first
``gym.make``, their code re-optimised in every library that links it."""


def physics_for(prm: np.ndarray) -> CFunction:
    """The entry point a world with parameters ``prm`` (``WorldArrays.prm``) steps through:
    :data:`PHYSICS_MODES` when it has motion noise or another collision mode than contact,
    else :data:`PHYSICS`.

    It also writes the addresses the step calls through into ``prm`` (``PR_STEPFN``;
    ``PR_SLEEPFN`` when sleeping is on; ``PR_TOUCHFN`` in IR-SIM's other collision modes),
    compiling what they point at if needed: an entry
    point's address must come from here, and again in each process (an address is only
    valid in the process that took it). A World calls this again whenever those slots of its
    prm no longer hold what this wrote (World._physics_address); an env, when it builds its
    kernels' table."""
    prm[PR_STEPFN] = float(STEP.address)
    if prm[PR_SLEEP] != 0.0:
        prm[PR_SLEEPFN] = float(SLEEP.address)
    # Once compiled in this process, for every world (the step's result is the same through
    # it as through a roll-back and a second try).
    prm[PR_CCDFN] = float(CCD.address) if CCD.ready else 0.0
    if prm[PR_MODE] != 0.0:
        prm[PR_TOUCHFN] = float(TOUCH.address)
    if prm[PR_MODE] != 0.0 or prm[PR_NOISE] != 0.0:
        return PHYSICS_MODES
    return PHYSICS


CHUNK = 32  # envs per call of the physics from a prange loop: the structure is stored once
# per chunk, and a chunk is small enough to balance the two threads


@compiled
def rolled_back(W):
    """Active envs whose physics step was rolled back (``hl[e, HL_STATUS]`` != 0), counted
    after a ``prange`` loop (an integer count, no float reduction across envs)."""
    bad = 0
    for e in range(W.pos.shape[0]):
        if W.active[e] and W.hl[e, HL_STATUS] != 0.0:
            bad += 1
    return bad


@njit(cache=True, _nrt=False)
def step_serial(W, physics):
    """Step every env whose ``W.active`` flag is set, one after the other (fastest for a few),
    through the compiled step at address ``physics`` (:data:`PHYSICS`).

    Returns the number of active envs whose step was rolled back (``hl[e, HL_STATUS]`` != 0).
    """
    call_void(physics, (np.int64(0), np.int64(W.pos.shape[0]), struct_ptr(W)))
    return rolled_back(W)


@njit(cache=True, parallel=True, _nrt=False)
def step_parallel(W, physics):
    """Step the active envs with ``prange`` over chunks of envs (no reductions: bit-identical
    to serial). Returns the number of active envs whose step was rolled back."""
    n = W.pos.shape[0]
    for i in prange((n + CHUNK - 1) // CHUNK):
        # numba types a prange index as uint64: int64 keeps one signature of the call
        lo = np.int64(i) * CHUNK
        call_void(physics, (lo, min(lo + CHUNK, n), struct_ptr(W)))
    return rolled_back(W)
