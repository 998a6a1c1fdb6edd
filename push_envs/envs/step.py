"""The generic env step: what every task runs around its own compiled hooks.

One ``env.step(actions)`` of a batch, per env ``e`` (the env loop outermost, no reduction
across envs, so env i of a batch equals a single env bit for bit)::

    apply_action   actions in [-1, 1] -> drive commands of the controlled robots; a row waiting
                   for a NEXT_STEP reset is frozen
    step_env       the physics (push_envs.physics.pipeline)
    post_env       NEXT_STEP rows: reset.  Others: count the step, then the task's hooks
                   observe(e, W, V, T)   -> the observation row, goal vectors, task scratch
                   evaluate(e, W, V, T)  -> (success, terminated, dense reward), info columns
                   then the generic reward (sparse: 0 on success, -1 otherwise), truncation,
                   and a SAME_STEP autoreset
    reset_env      restore the scene's bodies, then the task's spawn, observe and start hooks

``W`` is the physics' :class:`~push_envs.physics.arrays.WorldArrays`, ``V`` the generic
:class:`EnvArrays`, ``T`` the task's :class:`TaskArrays`. The hooks are plain jitted functions
of the task's module. They are handed to the helpers below as arguments (numba compiles one
specialisation per task); the entry kernels that Python calls are generated per task by
:mod:`push_envs.envs.codegen`, because a cached kernel whose own arguments include functions
misses the cache in every new process (numba issue #6972). The helpers that receive hooks are
inlined into those kernels (``inline="always"``): a hook passed to a real call travels as a
pointer to its Python dispatcher, which numba refuses to cache ("dynamic globals").

The entry kernels run with ``_nrt=False``: no array is allocated in a step, and without
numba's reference counting a step does not spend a third of its time in atomic increments of
counters that both ``prange`` threads share (measured with ``perf``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

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
from ..physics.prefetch import prefetch_row, prefetch_world
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
    rng:    (E,) uint64 per-env random streams (push_envs.envs.rng)
    tstep:  (E,) steps in the current episode
    need_reset: (E,) uint8, NEXT_STEP rows to reset on the next step
    obs, final_obs: (E, n_obs) observation rows (final: before a SAME_STEP autoreset)
    rew:    (E,) reward;  term, trunc: (E,) bool episode ends
    info, final_info: (E, n_info) info columns (generic, then the task's)
    lid_*:  the fields of the World's LidarArrays (readings written by the step when a lidar
            is observed)
    ras_*:  the fields of the rasteriser's RasterArrays (push_envs.envs.pixels); empty unless
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


@njit(cache=True, inline="always")
def prefetch_env(e, W, V, T):
    """Prefetch env e's rows of every array a step reads: the physics', the observation,
    info and reward rows, and the task's memory and goals (a hint: no value changes)."""
    prefetch_world(e, W)
    prefetch_row(V.obs, e)
    prefetch_row(V.info, e)
    prefetch_row(T.goal, e)
    prefetch_row(T.mem, e)
    prefetch_row(T.ag, e)
    prefetch_row(T.dg, e)


class TaskArrays(NamedTuple):
    """A task's own arrays; the task names their columns (see e.g. ``pushing.py``).

    ip:   (n_ip,) int64 parameters (body indices, slot counts ...)
    fp:   (n_fp,) float64 parameters (regions [m], thresholds, reward weights ...)
    goal: (E, n_goal) the episode's goal, drawn by spawn
    mem:  (E, n_mem) per-env memory and scratch (previous distances, ...)
    ag, dg: (E, n_g) achieved and desired goal vectors (goal observations, HER), copied to
          the end of the observation row after the hooks (:func:`goal_columns`)

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


@njit(cache=True)
def apply_action(e, actions, W, V):
    """Map env e's actions in [-1, 1] to drive commands, clipping them."""
    robots = V.robots
    for i in range(robots.shape[0]):
        b = robots[i]
        for j in range(2):
            k = 2 * i + j
            a = actions[e, k]
            a = -1.0 if a < -1.0 else (1.0 if a > 1.0 else a)
            W.cmd[e, b, j] = V.act_lo[k] + 0.5 * (a + 1.0) * V.act_span[k]
    W.active[e] = 0 if (V.cfg[CFG_MODE] == AR_NEXT_STEP and V.need_reset[e]) else 1


@njit(cache=True)
def rolled_back(W):
    """Active envs whose physics step was rolled back (``hl[e, HL_STATUS]`` != 0), counted
    after a ``prange`` loop (an integer count, no float reduction across envs)."""
    bad = 0
    for e in range(W.pos.shape[0]):
        if W.active[e] and W.hl[e, HL_STATUS] != 0.0:
            bad += 1
    return bad


@njit(cache=True)
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


# goal_columns and sense run on every env-step: inlined, as a call would pass every array of
# W, V and T (see pushing.py).
@njit(cache=True, inline="always")
def goal_columns(e, V, T):
    """Env e's achieved and desired goal vectors into the end of its observation row."""
    at = V.cfg[CFG_GOAL]
    g = T.ag.shape[1]
    for j in range(g):
        V.obs[e, at + j] = T.ag[e, j]
        V.obs[e, at + g + j] = T.dg[e, j]


@njit(cache=True, inline="always")
def sense(e, W, V, T):
    """The generic sensor observations of env e, after the task's ``observe``: the robot's
    lidar ranges / range_max into its block of the observation row (noise from env e's
    stream), and the pixel observation. Both are skipped unless the env observes them."""
    at = V.cfg[CFG_LIDAR]
    if at >= 0:
        s = V.cfg[CFG_LIDAR_SENSOR]
        L = LidarArrays(V.lid_body, V.lid_nbeam, V.lid_prm, V.lid_angles, V.lid_ranges,
                        V.lid_vels)
        scan_sensor(e, s, W, L, V.rng)
        inv = 1.0 / L.prm[s, LP_RMAX]
        for k in range(L.nbeam[s]):
            V.obs[e, at + k] = L.ranges[e, s, k] * inv
    if V.cfg[CFG_PIXELS]:
        R = RasterArrays(V.ras_geo, V.ras_bg, V.ras_kind, V.ras_body, V.ras_vstart,
                         V.ras_verts, V.ras_rad, V.ras_edge_px, V.ras_fill, V.ras_edge,
                         V.ras_mov, V.ras_heads, V.ras_goal, V.ras_gstart, V.ras_gbody,
                         V.ras_gcols, V.ras_grad, V.ras_gcol, V.ras_scratch, V.ras_xs,
                         V.ras_ov, V.ras_dirty, V.ras_ovdirty)
        raster_env(e, W, R, T.goal[e], V.pix[e])


@njit(cache=True, inline="always")
def reset_env(e, W, V, T, spawn, observe, start):
    """A new episode in env e: restore, spawn, observe; ``start`` fills the first info."""
    restore_bodies(e, W, V)
    spawn(e, W, V, T)
    W.ctn[e] = 0
    V.tstep[e] = 0
    observe(e, W, V, T)
    sense(e, W, V, T)
    for j in range(V.info.shape[1]):
        V.info[e, j] = 0.0
    start(e, W, V, T)
    goal_columns(e, V, T)


@njit(cache=True, inline="always")
def post_env(e, W, V, T, spawn, observe, evaluate, start):
    """Observation, reward, episode end and autoreset of env e after its physics step."""
    mode = V.cfg[CFG_MODE]
    if mode == AR_NEXT_STEP and V.need_reset[e]:
        reset_env(e, W, V, T, spawn, observe, start)
        V.need_reset[e] = 0
        V.rew[e] = 0.0
        V.term[e] = False
        V.trunc[e] = False
        return
    V.tstep[e] += 1
    observe(e, W, V, T)
    sense(e, W, V, T)
    success, terminated, dense = evaluate(e, W, V, T)
    goal_columns(e, V, T)
    V.info[e, IF_SUCCESS] = 1.0 if success else 0.0
    V.info[e, IF_MAXPEN] = W.hl[e, HL_MAXPEN]
    V.info[e, IF_SWEEPS] = W.hl[e, HL_SWEEPS]
    if V.cfg[CFG_SPARSE]:
        V.rew[e] = 0.0 if success else -1.0
    else:
        V.rew[e] = dense
    limit = V.cfg[CFG_MAX_STEPS]
    V.term[e] = terminated
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
            reset_env(e, W, V, T, spawn, observe, start)


@njit(cache=True, inline="always")
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
