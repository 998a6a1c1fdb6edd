"""The generic env step: what every task runs around its own compiled hooks.

One ``env.step(actions)`` of a batch, per block of :data:`BLOCK` envs (no reduction across
envs, so env i of a batch equals a single env bit for bit)::

    apply_actions  actions in [-1, 1] -> drive commands of the controlled robots; a row waiting
                   for a NEXT_STEP reset is frozen
    physics        the engine's compiled step (push_envs.physics.pipeline.PHYSICS), env by env
    post_envs      per env: NEXT_STEP rows: reset.  Others: count the step, then the task's hooks
                   observe(e, W, V, T)   -> the observation row, goal vectors, task scratch
                   sense                 -> every observed sensor, in order (V.sensors)
                   evaluate(e, W, V, T)  -> (success, terminated, dense reward), info columns
                   then the generic reward (sparse: 0 on success, -1 otherwise), truncation,
                   and a SAME_STEP autoreset (the sensors keep what they must first)
    reset_env      restore the scene's bodies, then the task's spawn, observe, the sensors and
                   the start hook

``W`` is the physics' :class:`~push_envs.physics.arrays.WorldArrays`, ``V`` the generic
:class:`EnvArrays`, ``T`` the task's :class:`TaskArrays`, ``X`` the step's
:class:`RowsArgs` (actions, mask, function table).

Compiled once for every task, and called through function pointers
(``push_envs/physics/abi.py``)::

    run_serial / run_parallel (stage, n, X*, W*, V*, T*)   tiny @njit entry kernels: call
        |                                              the stage per chunk; the structures
        |                                              are packed by Python once
        v                                              (AbiType.pack), not unboxed per call
    STEP / RETRY / RESET (lo, hi, X*, W*, V*, T*)      C functions, compiled once per machine
        |   apply_actions, post_envs, reset_env ...    (typed here, once)
        v
    fns[FN_PHYSICS], fns[FN_TASK], V.sensors[k, SN_FN]  the engine, the task's hooks and the
                                                       sensors: C functions of their own

None of these names a task or a sensor: the physics and the task's hooks are reached through
the addresses in the table ``X.fns`` (the ``FN_*`` slots), and each observed sensor through
its row of ``V.sensors`` (its sense function's address, its packed arrays' address, its first
observation column). So the stages, the engine and each sensor are typed and optimised once
per machine, a task compiles only its own hooks (:mod:`push_envs.core.codegen` wraps them),
and the prange entry kernel links nothing but a pointer call. A sensor nobody observes is
never compiled; this module holds none of a sensor's arrays (a sensor is one module of
``push_envs/sensors/``: its arrays are its own structure, passed to it by address).

The kernels run with ``_nrt=False``: no array is allocated in a step, and without numba's
reference counting a step does not spend a third of its time in atomic increments of
counters that both ``prange`` threads share (measured with ``perf``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba import prange
from numba import types

from ..physics.abi import AbiType
from ..physics.abi import CFunction
from ..physics.abi import call_void
from ..physics.arrays import load_world
from ..physics.jit import compiled
from ..physics.layout import EP_FRICTION
from ..physics.layout import EP_INERTIA
from ..physics.layout import EP_MASS
from ..physics.layout import EP_SCALE
from ..physics.layout import HL_MAXPEN
from ..physics.layout import HL_STATUS
from ..physics.layout import HL_SWEEPS
from ..physics.layout import IS_SLEEP
from ..physics.pipeline import rolled_back
from ..physics.prefetch import prefetch_row

# Autoreset modes (as Gymnasium's AutoresetMode).
AR_NEXT_STEP = 0
AR_SAME_STEP = 1
AR_DISABLED = 2

# V.cfg[:]
CFG_MODE = 0  # autoreset mode (AR_*)
CFG_MAX_STEPS = 1  # truncation length (0: never)
CFG_SPARSE = 2  # 1: sparse reward
CFG_GOAL = 3  # first observation column of the achieved goal vector (the desired one follows)
CFG_LEN = 4

# V.init[b, :]: the scene's initial state of body b (what a reset restores)
IN_X, IN_Y = 0, 1  # centre of mass [m]
IN_ANG = 2  # heading [rad]
IN_VX, IN_VY = 3, 4  # velocity [m/s]
IN_OMG = 5  # yaw rate [rad/s]
IN_DRV0, IN_DRV1 = 6, 7  # drive state
IN_LEN = 8

# V.sensors[k, :]: the k-th observed sensor (push_envs/sensors/)
SN_FN = 0  # address of its compiled sense function (SENSE_SIG)
SN_ARR = 1  # address of its packed arrays (its module's AbiType)
SN_AT = 2  # first observation column it writes (-1: none)
SN_LEN = 3

# Generic info columns; a task's own info columns follow from INFO_TASK on.
IF_SUCCESS = 0
IF_MAXPEN = 1  # deepest overlap left by the solve [m]
IF_SWEEPS = 2  # solver sweeps used
INFO_TASK = 3


class EnvArrays(NamedTuple):
    """The generic per-batch buffers of an env (``E`` envs, ``R`` controlled robots, ``B``
    bodies, ``S`` observed sensors).

    robots: (R,) body indices of the robots the action drives, in action order
    act_lo, act_span: (2R,) command = lo + (a + 1) / 2 * span, a in [-1, 1]
    cfg:    (CFG_LEN,) autoreset mode, truncation length, sparse flag, goal columns
    init:   (B, IN_LEN) the scene's initial body state (IN_* columns)
    base_mass [kg], base_inertia [kg m^2], base_fric: (B,) the scene's body parameters
    rng:    (E,) uint64 per-env random streams (push_envs.physics.rng)
    tstep:  (E,) steps in the current episode
    need_reset: (E,) uint8, NEXT_STEP rows to reset on the next step
    obs, final_obs: (E, n_obs) observation rows (final: before a SAME_STEP autoreset)
    rew:    (E,) reward;  term, trunc: (E,) bool episode ends
    info, final_info: (E, n_info) info columns (generic, then the task's)
    pix:    (E, H, W, 3) uint8 image observations (empty unless the env observes an image;
            the sensor that draws it keeps its own final frames)
    sensors: (S, SN_LEN) int64 the observed sensors, called in order (SN_* columns)
    """

    robots: np.ndarray
    act_lo: np.ndarray
    act_span: np.ndarray
    cfg: np.ndarray
    init: np.ndarray
    base_mass: np.ndarray
    base_inertia: np.ndarray
    base_fric: np.ndarray
    rng: np.ndarray
    tstep: np.ndarray
    need_reset: np.ndarray
    obs: np.ndarray
    final_obs: np.ndarray
    rew: np.ndarray
    term: np.ndarray
    trunc: np.ndarray
    info: np.ndarray
    final_info: np.ndarray
    pix: np.ndarray
    sensors: np.ndarray


ENV_ABI = AbiType(EnvArrays, {
    "robots": ("i8", 1), "act_lo": ("f8", 1), "act_span": ("f8", 1), "cfg": ("i8", 1),
    "init": ("f8", 2), "base_mass": ("f8", 1), "base_inertia": ("f8", 1),
    "base_fric": ("f8", 1), "rng": ("u8", 1), "tstep": ("i8", 1), "need_reset": ("u1", 1),
    "obs": ("f8", 2), "final_obs": ("f8", 2), "rew": ("f8", 1), "term": ("b1", 1),
    "trunc": ("b1", 1), "info": ("f8", 2), "final_info": ("f8", 2), "pix": ("u1", 4),
    "sensors": ("i8", 2),
})
"""The declared type of :class:`EnvArrays` (passed to hooks and sensors by pointer)."""

SENSE_SIG = types.void(types.int64, types.int64, types.int64, types.voidptr, types.int64,
                       types.voidptr, types.voidptr)
"""``sense(which, e, at, W*, S, V*, T*)``: a sensor's compiled sense function, as a C function
(abi.py): ``which`` one of the ``SENSE_*`` codes, ``e`` the env, ``at`` its first observation
column (-1: none), ``S`` the address of its packed arrays (an integer: its module's loader
takes it), ``W``, ``V``, ``T`` the world's, the env's and the task's structures."""

SENSE_OBSERVE = 0  # after the task's observe: read the sensor, write its observation
SENSE_FINAL = 1  # before a SAME_STEP autoreset: keep what the final observation needs

TASK_SIG = types.void(types.int64, types.int64, types.voidptr, types.voidptr, types.voidptr)
"""``hooks(which, e, W*, V*, T*)``: a task's hooks as one C function, ``which`` one of the
``HOOK_*`` codes (one C function per task, not four: each is a cache entry a start loads)."""

HOOK_SPAWN = 0
HOOK_OBSERVE = 1
HOOK_EVALUATE = 2  # writes success into info[e, IF_SUCCESS], terminated, the dense reward
HOOK_START = 3

# Slots of the function table ``fns`` (int64 addresses) every kernel below receives.
FN_PHYSICS = 0  # push_envs.physics.pipeline.PHYSICS: rows(lo, hi, W*)
FN_TASK = 1  # the task's hooks (TASK_SIG): spawn, observe, evaluate, start
FN_LEN = 2


@compiled(inline="always")  # a call would pass V and T flattened, per env (prefetch.py)
def prefetch_env(e, V, T):
    """Prefetch env e's observation, info and reward rows and the task's memory and goals (a
    hint: no value changes); the physics prefetches its own rows."""
    prefetch_row(V.obs, e)
    prefetch_row(V.info, e)
    prefetch_row(T.goal, e)
    prefetch_row(T.mem, e)
    prefetch_row(T.ag, e)
    prefetch_row(T.dg, e)


class TaskArrays(NamedTuple):
    """A task's own arrays; the task names their columns (see e.g.
    ``push_envs/tasks/pushing/family.py``).

    ip:   (n_ip,) int64 parameters (body indices, slot counts ...)
    fp:   (n_fp,) float64 parameters (regions [m], thresholds, reward weights ...)
    goal: (E, n_goal) the episode's goal, drawn by spawn
    mem:  (E, n_mem) per-env memory and scratch (previous distances, ...)
    ag, dg: (E, n_g) achieved and desired goal vectors (goal observations, HER), copied to
          the end of the observation row after the hooks (:func:`goal_columns`)
    at:   (n_names,) int64 the observation's columns by name: ``at[OBS.robot_xy]`` is that
          field's first column, for the task's layout and arguments (filled by the env from
          the layout, :func:`push_envs.core.obs_layout.offsets`; the task leaves it empty)

    ``ag`` and ``dg`` are arrays of their own, not views of the observation rows: a view of
    one row is C-contiguous and a view of several is not, so numba typed them differently for
    one env and for a batch and compiled every entry kernel twice.
    """

    ip: np.ndarray
    fp: np.ndarray
    goal: np.ndarray
    mem: np.ndarray
    ag: np.ndarray
    dg: np.ndarray
    at: np.ndarray = np.zeros(0, np.int64)


TASK_ABI = AbiType(TaskArrays, {"ip": ("i8", 1), "fp": ("f8", 1), "goal": ("f8", 2),
                                "mem": ("f8", 2), "ag": ("f8", 2), "dg": ("f8", 2),
                                "at": ("i8", 1)})
"""The declared type of :class:`TaskArrays` (passed to hooks and sensors by pointer)."""

load_env = ENV_ABI.loader
load_task = TASK_ABI.loader


@compiled(_nrt=False)
def apply_actions(lo, hi, actions, wp, vp):
    """Map envs lo..hi-1's actions in [-1, 1] to drive commands, clipping them (``W`` and
    ``V`` by pointer, as for :func:`post_envs`; loaded once for the block)."""
    W = load_world(wp)
    V = load_env(vp)
    robots = V.robots
    waits = V.cfg[CFG_MODE] == AR_NEXT_STEP
    for e in range(lo, hi):
        for i in range(robots.shape[0]):
            b = robots[i]
            for j in range(2):
                k = 2 * i + j
                a = actions[e, k]
                a = -1.0 if a < -1.0 else (1.0 if a > 1.0 else a)
                W.cmd[e, b, j] = V.act_lo[k] + 0.5 * (a + 1.0) * V.act_span[k]
        W.active[e] = 0 if (waits and V.need_reset[e]) else 1


@compiled(_nrt=False)
def restore_bodies(e, W, V):
    """Put every movable body of env e back to the scene's initial state and parameters,
    awake."""
    movable = W.movable
    for i in range(movable.shape[0]):
        b = movable[i]
        W.epar[e, b, EP_MASS] = V.base_mass[b]
        W.epar[e, b, EP_INERTIA] = V.base_inertia[b]
        W.epar[e, b, EP_FRICTION] = V.base_fric[b]
        W.epar[e, b, EP_SCALE] = 1.0
        init = V.init[b]
        W.pos[e, b, 0] = init[IN_X]
        W.pos[e, b, 1] = init[IN_Y]
        W.ang[e, b] = init[IN_ANG]
        W.vel[e, b, 0] = init[IN_VX]
        W.vel[e, b, 1] = init[IN_VY]
        W.omg[e, b] = init[IN_OMG]
        W.drv[e, b, 0] = init[IN_DRV0]
        W.drv[e, b, 1] = init[IN_DRV1]
        W.cmd[e, b, 0] = 0.0
        W.cmd[e, b, 1] = 0.0
        # Awake: a spawn may change a body's size, mass or friction without moving it, and a
        # sleeping body's box is not recomputed (physics/sleeping.py).
        W.bis[e, b, IS_SLEEP] = 0


@compiled(_nrt=False)
def goal_columns(e, V, T):
    """Env e's achieved and desired goal vectors into the end of its observation row."""
    at = V.cfg[CFG_GOAL]
    g = T.ag.shape[1]
    for j in range(g):
        V.obs[e, at + j] = T.ag[e, j]
        V.obs[e, at + g + j] = T.dg[e, j]


class RowsArgs(NamedTuple):
    """What the batched stages below take beside W, V and T.

    actions: (E, 2R) float64 actions of the step (copied in by the env)
    mask:    (E,) uint8, the envs a reset or a retry acts on
    fns:     (FN_LEN,) int64 addresses: the function table (the ``FN_*`` slots)
    """

    actions: np.ndarray
    mask: np.ndarray
    fns: np.ndarray


ROWS_ABI = AbiType(RowsArgs, {"actions": ("f8", 2), "mask": ("u1", 1), "fns": ("i8", 1)})
"""The declared type of :class:`RowsArgs` (passed to the stages by pointer)."""

load_rows = ROWS_ABI.loader

STAGE_SIG = types.void(types.int64, types.int64, types.voidptr, types.voidptr, types.voidptr,
                       types.voidptr)
"""``stage(lo, hi, X*, W*, V*, T*)``: a batched stage over envs lo..hi-1 (abi.py)."""


@compiled(_nrt=False)
def sense(which, e, wp, vp, tp):
    """Call every sensor env e observes (``V.sensors``, in order) with ``which`` (a
    ``SENSE_*`` code): each is a call through its row's address, none when it observes none."""
    S = load_env(vp).sensors
    for k in range(S.shape[0]):
        call_void(S[k, SN_FN], (which, e, S[k, SN_AT], wp, S[k, SN_ARR], vp, tp))


# reset_env and post_envs take the structures by pointer, so a call costs five words, not the
# ~850 of W, V and T flattened: they are typed once each, not once per stage that calls them.
@compiled(_nrt=False)
def reset_env(e, xp, wp, vp, tp):
    """A new episode in env e: restore, spawn, observe; ``start`` fills the first info."""
    W = load_world(wp)
    V = load_env(vp)
    T = load_task(tp)
    fns = load_rows(xp).fns
    restore_bodies(e, W, V)
    call_void(fns[FN_TASK], (np.int64(HOOK_SPAWN), e, wp, vp, tp))
    W.ctn[e] = 0
    V.tstep[e] = 0
    call_void(fns[FN_TASK], (np.int64(HOOK_OBSERVE), e, wp, vp, tp))
    sense(np.int64(SENSE_OBSERVE), e, wp, vp, tp)
    for j in range(V.info.shape[1]):
        V.info[e, j] = 0.0
    call_void(fns[FN_TASK], (np.int64(HOOK_START), e, wp, vp, tp))
    goal_columns(e, V, T)


@compiled(_nrt=False)
def post_envs(lo, hi, xp, wp, vp, tp):
    """Observation, reward, episode end and autoreset of envs lo..hi-1 after their physics
    step; an env whose physics was rolled back (``hl[e, HL_STATUS]`` != 0) is skipped (the
    env grows the buffers and retries it, :data:`RETRY`). The structures are loaded once
    for the block (:data:`BLOCK`)."""
    W = load_world(wp)
    V = load_env(vp)
    T = load_task(tp)
    fns = load_rows(xp).fns
    mode = V.cfg[CFG_MODE]
    for e in range(lo, hi):
        if W.active[e] and W.hl[e, HL_STATUS] != 0.0:
            continue
        if mode == AR_NEXT_STEP and V.need_reset[e]:
            reset_env(e, xp, wp, vp, tp)
            V.need_reset[e] = 0
            V.rew[e] = 0.0
            V.term[e] = False
            V.trunc[e] = False
            continue
        V.tstep[e] += 1
        call_void(fns[FN_TASK], (np.int64(HOOK_OBSERVE), e, wp, vp, tp))
        sense(np.int64(SENSE_OBSERVE), e, wp, vp, tp)
        # evaluate writes success (info[e, IF_SUCCESS]), terminated (term[e]) and the dense
        # reward (rew[e])
        call_void(fns[FN_TASK], (np.int64(HOOK_EVALUATE), e, wp, vp, tp))
        success = V.info[e, IF_SUCCESS] != 0.0
        terminated = V.term[e]
        goal_columns(e, V, T)
        V.info[e, IF_MAXPEN] = W.hl[e, HL_MAXPEN]
        V.info[e, IF_SWEEPS] = W.hl[e, HL_SWEEPS]
        if V.cfg[CFG_SPARSE]:
            V.rew[e] = 0.0 if success else -1.0
        limit = V.cfg[CFG_MAX_STEPS]
        V.trunc[e] = (not terminated) and limit > 0 and V.tstep[e] >= limit
        if V.term[e] or V.trunc[e]:
            if mode == AR_NEXT_STEP:
                V.need_reset[e] = 1
            elif mode == AR_SAME_STEP:
                for j in range(V.obs.shape[1]):
                    V.final_obs[e, j] = V.obs[e, j]
                for j in range(V.info.shape[1]):
                    V.final_info[e, j] = V.info[e, j]
                sense(np.int64(SENSE_FINAL), e, wp, vp, tp)
                reset_env(e, xp, wp, vp, tp)


BLOCK = 8
"""Envs per block of the step stage. Each call into a kernel loads its structures from their
packed addresses, so the stage calls each kernel once per block, not once per env. Paired
runs at N = 4096 against one call per env: WallSlide-v0 +10-20 %, PushBox-v0 +1-7 %; 32
measured the same as 8. A block's rows stay in cache between its physics and its post-step,
and the physics still prefetches the next env's rows (without, PushBox-v0 lost 8-26 %)."""


def step_stage(lo, hi, xp, wp, vp, tp):
    """The stage :data:`STEP`: step envs lo..hi-1 (actions, physics, hooks, autoreset). An
    env whose physics was rolled back (``hl[e, HL_STATUS]`` != 0) skips its post-step: the
    env grows the buffers and retries it (:data:`RETRY`)."""
    X = load_rows(xp)
    V = load_env(vp)
    T = load_task(tp)
    actions = X.actions
    physics = X.fns[FN_PHYSICS]
    for b0 in range(lo, hi, BLOCK):
        b1 = min(b0 + BLOCK, hi)
        apply_actions(b0, b1, actions, wp, vp)
        for e in range(b0, b1):
            # the block's env rows arrive while its physics steps (physics/prefetch.py)
            prefetch_env(e, V, T)
        call_void(physics, (b0, b1, wp))
        post_envs(b0, b1, xp, wp, vp, tp)


def retry_stage(lo, hi, xp, wp, vp, tp):
    """The stage :data:`RETRY`: physics and post-step again for the envs of ``X.mask`` in
    lo..hi-1 (rolled back, buffers grown)."""
    X = load_rows(xp)
    for e in range(lo, hi):
        if X.mask[e]:
            call_void(X.fns[FN_PHYSICS], (e, e + 1, wp))
            post_envs(e, e + 1, xp, wp, vp, tp)


def reset_stage(lo, hi, xp, wp, vp, tp):
    """The stage :data:`RESET`: new episodes in the envs of ``X.mask`` in lo..hi-1."""
    X = load_rows(xp)
    for e in range(lo, hi):
        if X.mask[e]:
            reset_env(e, xp, wp, vp, tp)


STEP = CFunction(step_stage, STAGE_SIG)
RETRY = CFunction(retry_stage, STAGE_SIG)
RESET = CFunction(reset_stage, STAGE_SIG)

CHUNK = 32  # envs per call of a stage from the prange loop: the structures are stored once
# per chunk, and a chunk is small enough to balance the two threads


# The entry kernels take each structure as the address of its packed value
# (AbiType.pack): six integers per call, where the structures themselves were ~100 arrays
# for numba to unbox per call.
@njit(cache=True, _nrt=False)
def run_serial(stage, n, xp, wp, vp, tp):
    """Run the stage at address ``stage`` (:data:`STEP`, :data:`RETRY`, :data:`RESET`) over
    envs 0..n-1, one after the other (fastest below PARALLEL_MIN_ENVS envs), with the
    structures packed at ``xp``, ``wp``, ``vp``, ``tp``. Returns how many active envs were
    rolled back (Python grows the buffers and retries them)."""
    call_void(stage, (np.int64(0), n, xp, wp, vp, tp))
    return rolled_back(load_world(wp))


@njit(cache=True, parallel=True, _nrt=False)
def run_parallel(stage, n, xp, wp, vp, tp):
    """``prange`` over chunks of CHUNK envs (bit-identical to serial: no reduction)."""
    for i in prange((n + CHUNK - 1) // CHUNK):
        # numba types a prange index as uint64: int64 keeps one signature of the call
        lo = np.int64(i) * CHUNK
        call_void(stage, (lo, min(lo + CHUNK, n), xp, wp, vp, tp))
    return rolled_back(load_world(wp))


# IR-inlined into each task's generated goal_rewards kernel (core/codegen.py), for the cache's
# sake, not for speed (HER's compute_reward, not the step): it takes the task's is_success and
# goal_reward as arguments, so a copy of its own per task would be cached under this module
# with a stamp that cannot see the task's code (push_envs/_numba_cache.py stamps what a
# function names, not what it is passed). Inlined, it is part of the task's kernel, whose
# stamp names both.
@compiled(inline="always")
def goal_rewards(ag, dg, fp, sparse, out, is_success, goal_reward):
    """HER's ``compute_reward`` over rows of achieved / desired goal vectors.

    The success test is the task's ``is_success``, the same function the step judges with;
    dense rewards come from the task's ``goal_reward``.
    """
    for i in range(ag.shape[0]):
        success = is_success(ag[i], dg[i], fp)
        if sparse:
            out[i] = 0.0 if success else -1.0
        else:
            out[i] = goal_reward(ag[i], dg[i], fp, success)
