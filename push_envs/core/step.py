"""The generic env step: what every task runs around its own compiled hooks.

One ``env.step(actions)`` of a batch, per block of :data:`BLOCK` envs (no reduction across
envs, so env i of a batch equals a single env bit for bit)::

    apply_actions  actions in [-1, 1] -> drive commands of the controlled robots; a row waiting
                   for a NEXT_STEP reset is frozen
    physics        the engine's compiled step (push_envs.physics.pipeline.PHYSICS), env by env
    post_envs      per env: NEXT_STEP rows: reset.  Others: count the step, then the task's hooks
                   observe(e, W, V, T)   -> the observation row, goal vectors, task scratch
                   sense                 -> lidar and pixel observations, when observed
                   evaluate(e, W, V, T)  -> (success, terminated, dense reward), info columns
                   then the generic reward (sparse: 0 on success, -1 otherwise), truncation,
                   and a SAME_STEP autoreset
    reset_env      restore the scene's bodies, then the task's spawn, observe and start hooks

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
    fns[FN_PHYSICS], fns[FN_TASK] ...                   the engine, the task's hooks and the
                                                       sensors: C functions of their own

None of these names a task: the physics, the task's hooks and the sensors are reached through
the addresses in the table ``X.fns`` (the ``FN_*`` slots). So the stages, the engine and each
sensor are typed and optimised once per machine, a task compiles only its own hooks
(:mod:`push_envs.core.codegen` wraps them), and the prange entry kernel links nothing but a
pointer call. A slot a task does not use (a sensor it does not observe) holds 0 and its code
is never compiled.

The kernels run with ``_nrt=False``: no array is allocated in a step, and without numba's
reference counting a step does not spend a third of its time in atomic increments of
counters that both ``prange`` threads share (measured with ``perf``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange, types

from ..physics.abi import AbiType, CFunction, call_void
from ..physics.arrays import load_world
from ..physics.jit import compiled
from ..physics.layout import (
    EP_FRICTION,
    EP_INERTIA,
    EP_MASS,
    EP_SCALE,
    HL_MAXPEN,
    HL_STATUS,
    HL_SWEEPS,
    IS_SLEEP,
)
from ..physics.lidar import LP_RMAX, LidarArrays, scan_sensor
from ..physics.pipeline import rolled_back
from ..physics.prefetch import prefetch_row
from ..physics.raster import RasterArrays, raster_env

# Autoreset modes (as Gymnasium's AutoresetMode).
AR_NEXT_STEP = 0
AR_SAME_STEP = 1
AR_DISABLED = 2

# V.cfg[:]
CFG_MODE = 0  # autoreset mode (AR_*)
CFG_MAX_STEPS = 1  # truncation length (0: never)
CFG_SPARSE = 2  # 1: sparse reward
CFG_LIDAR = 3  # first observation column of the lidar block, or -1 (no lidar observed)
CFG_LIDAR_SENSOR = 4  # the observed lidar's row in the LidarArrays
CFG_PIXELS = 5  # 1: rasterise the pixel observation
CFG_GOAL = 6  # first observation column of the achieved goal vector (the desired one follows)
CFG_LEN = 7

# Generic info columns; a task's own info columns follow from INFO_TASK on.
IF_SUCCESS = 0
IF_MAXPEN = 1  # deepest overlap left by the solve [m]
IF_SWEEPS = 2  # solver sweeps used
INFO_TASK = 3


class EnvArrays(NamedTuple):
    """The generic per-batch buffers of an env (``E`` envs, ``R`` controlled robots).

    robots: (R,) body indices of the robots the action drives, in action order
    act_lo, act_span: (2R,) command = lo + (a + 1) / 2 * span, a in [-1, 1]
    cfg:    (CFG_LEN,) autoreset mode, truncation length, sparse flag
    init_pos, init_ang, init_vel, init_omg, init_drv: the scene's initial body state
    base_mass [kg], base_inertia [kg m^2], base_fric: the scene's body parameters
    rng:    (E,) uint64 per-env random streams (push_envs.physics.rng)
    tstep:  (E,) steps in the current episode
    need_reset: (E,) uint8, NEXT_STEP rows to reset on the next step
    obs, final_obs: (E, n_obs) observation rows (final: before a SAME_STEP autoreset)
    rew:    (E,) reward;  term, trunc: (E,) bool episode ends
    info, final_info: (E, n_info) info columns (generic, then the task's)
    lid_*:  the fields of the World's LidarArrays (readings written by the step when a lidar
            is observed)
    ras_*:  the fields of the rasteriser's RasterArrays (push_envs.core.pixels); empty unless
            pixels are observed
    pix, final_pix: (E, H, W, 3) uint8 pixel observations (final: before a SAME_STEP reset)

    The sensor structures ride flattened (``lid_body`` is ``LidarArrays.body``): a prange
    kernel cannot take a NamedTuple nested in its argument (numba's parfor wrapper refuses
    it), so :func:`sense` rebuilds them inside the kernel (no copy: a tuple of the arrays).
    """

    robots: np.ndarray
    act_lo: np.ndarray
    act_span: np.ndarray
    cfg: np.ndarray
    init_pos: np.ndarray
    init_ang: np.ndarray
    init_vel: np.ndarray
    init_omg: np.ndarray
    init_drv: np.ndarray
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
    lid_body: np.ndarray
    lid_nbeam: np.ndarray
    lid_prm: np.ndarray
    lid_angles: np.ndarray
    lid_ranges: np.ndarray
    lid_vels: np.ndarray
    ras_geo: np.ndarray
    ras_bg: np.ndarray
    ras_kind: np.ndarray
    ras_body: np.ndarray
    ras_vstart: np.ndarray
    ras_verts: np.ndarray
    ras_rad: np.ndarray
    ras_edge_px: np.ndarray
    ras_fill: np.ndarray
    ras_edge: np.ndarray
    ras_mov: np.ndarray
    ras_heads: np.ndarray
    ras_goal: np.ndarray
    ras_gstart: np.ndarray
    ras_gbody: np.ndarray
    ras_gcols: np.ndarray
    ras_grad: np.ndarray
    ras_gcol: np.ndarray
    ras_scratch: np.ndarray
    ras_xs: np.ndarray
    ras_ov: np.ndarray
    ras_dirty: np.ndarray
    ras_ovdirty: np.ndarray
    pix: np.ndarray
    final_pix: np.ndarray


def sensor_fields(lidar: LidarArrays, raster: RasterArrays) -> dict:
    """EnvArrays' flattened sensor fields (``lid_*``, ``ras_*``) of these structures."""
    out = {f"lid_{k}": v for k, v in lidar._asdict().items()}
    out.update({f"ras_{k}": v for k, v in raster._asdict().items()})
    return out


ENV_ABI = AbiType(EnvArrays, {
    "robots": ("i8", 1), "act_lo": ("f8", 1), "act_span": ("f8", 1), "cfg": ("i8", 1),
    "init_pos": ("f8", 2), "init_ang": ("f8", 1), "init_vel": ("f8", 2), "init_omg": ("f8", 1),
    "init_drv": ("f8", 2), "base_mass": ("f8", 1), "base_inertia": ("f8", 1),
    "base_fric": ("f8", 1), "rng": ("u8", 1), "tstep": ("i8", 1), "need_reset": ("u1", 1),
    "obs": ("f8", 2), "final_obs": ("f8", 2), "rew": ("f8", 1), "term": ("b1", 1),
    "trunc": ("b1", 1), "info": ("f8", 2), "final_info": ("f8", 2), "lid_body": ("i8", 1),
    "lid_nbeam": ("i8", 1), "lid_prm": ("f8", 2), "lid_angles": ("f8", 2),
    "lid_ranges": ("f8", 3), "lid_vels": ("f8", 4), "ras_geo": ("f8", 1), "ras_bg": ("u1", 3),
    "ras_kind": ("i8", 1), "ras_body": ("i8", 1), "ras_vstart": ("i8", 1),
    "ras_verts": ("f8", 2), "ras_rad": ("f8", 1), "ras_edge_px": ("f8", 1),
    "ras_fill": ("i8", 2), "ras_edge": ("i8", 2), "ras_mov": ("i8", 1), "ras_heads": ("f8", 2),
    "ras_goal": ("i8", 1), "ras_gstart": ("i8", 1), "ras_gbody": ("i8", 1),
    "ras_gcols": ("i8", 2), "ras_grad": ("f8", 1), "ras_gcol": ("i8", 3),
    "ras_scratch": ("f8", 3), "ras_xs": ("f8", 2), "ras_ov": ("u1", 4), "ras_dirty": ("i8", 3),
    "ras_ovdirty": ("i8", 3), "pix": ("u1", 4), "final_pix": ("u1", 4),
})
"""The declared type of :class:`EnvArrays` (passed to hooks and sensors by pointer)."""

SENSOR_SIG = types.void(types.int64, types.voidptr, types.voidptr, types.voidptr)
"""``sensor(e, W*, V*, T*)``: a sensor, as a C function (abi.py)."""

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
FN_LIDAR = 2  # LIDAR_SENSE when a lidar is observed, else 0 (SENSOR_SIG)
FN_PIXELS = 3  # PIXEL_SENSE when pixels are observed, else 0 (SENSOR_SIG)
FN_LEN = 4


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
        W.pos[e, b, 0] = V.init_pos[b, 0]
        W.pos[e, b, 1] = V.init_pos[b, 1]
        W.ang[e, b] = V.init_ang[b]
        W.vel[e, b, 0] = V.init_vel[b, 0]
        W.vel[e, b, 1] = V.init_vel[b, 1]
        W.omg[e, b] = V.init_omg[b]
        W.drv[e, b, 0] = V.init_drv[b, 0]
        W.drv[e, b, 1] = V.init_drv[b, 1]
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


def lidar_sense(e, wp, vp, tp):
    """The sensor slot FN_LIDAR: the robot's lidar ranges / range_max into its block of env
    e's observation row (noise from env e's stream)."""
    W = load_world(wp)
    V = load_env(vp)
    at = V.cfg[CFG_LIDAR]
    s = V.cfg[CFG_LIDAR_SENSOR]
    L = LidarArrays(V.lid_body, V.lid_nbeam, V.lid_prm, V.lid_angles, V.lid_ranges, V.lid_vels)
    scan_sensor(e, s, W, L, V.rng)
    inv = 1.0 / L.prm[s, LP_RMAX]
    for k in range(L.nbeam[s]):
        V.obs[e, at + k] = L.ranges[e, s, k] * inv


def pixel_sense(e, wp, vp, tp):
    """The sensor slot FN_PIXELS: env e's pixel observation."""
    W = load_world(wp)
    V = load_env(vp)
    T = load_task(tp)
    R = RasterArrays(V.ras_geo, V.ras_bg, V.ras_kind, V.ras_body, V.ras_vstart, V.ras_verts,
                     V.ras_rad, V.ras_edge_px, V.ras_fill, V.ras_edge, V.ras_mov, V.ras_heads,
                     V.ras_goal, V.ras_gstart, V.ras_gbody, V.ras_gcols, V.ras_grad, V.ras_gcol,
                     V.ras_scratch, V.ras_xs, V.ras_ov, V.ras_dirty, V.ras_ovdirty)
    raster_env(e, W, R, T.goal[e], V.pix[e])


LIDAR_SENSE = CFunction(lidar_sense, SENSOR_SIG)
PIXEL_SENSE = CFunction(pixel_sense, SENSOR_SIG)


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
def sense(e, fns, wp, vp, tp):
    """The generic sensor observations of env e, after the task's ``observe``: each is a
    call only when the env observes it."""
    V = load_env(vp)
    if V.cfg[CFG_LIDAR] >= 0:
        call_void(fns[FN_LIDAR], (e, wp, vp, tp))
    if V.cfg[CFG_PIXELS]:
        call_void(fns[FN_PIXELS], (e, wp, vp, tp))


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
    sense(e, fns, wp, vp, tp)
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
        sense(e, fns, wp, vp, tp)
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
                if V.cfg[CFG_PIXELS]:
                    src, dst = V.pix[e], V.final_pix[e]
                    for r in range(src.shape[0]):
                        for c in range(src.shape[1]):
                            for ch in range(3):
                                dst[r, c, ch] = src[r, c, ch]
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
