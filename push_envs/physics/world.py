"""World: the scripting API over a batch of ``num_envs`` copies of one compiled scene.

>>> from push_envs.physics import World
>>> from push_envs.tasks import spec           # PushBox-v0's scene, wherever it is installed
>>> w = World.from_config(spec("PushBox-v0").scene_path(), num_envs=1)
>>> w.step({"robot": [1.0, 0.0]})          # diff drive: [v m/s, omega rad/s]
>>> w.state("box")                         # (num_envs, 3): x [m], y [m], theta [rad]

State is struct-of-arrays with a leading env axis (``pos[E, B, 2]`` of centres of mass,
``ang[E, B]``, ``vel[E, B, 2]``, ``omg[E, B]``, drive state ``drv[E, B, 2]``); every env runs
the same compiled kernels, so env i of a batch equals a single world bit for bit.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from .arrays import WORLD_ABI
from .arrays import WorldArrays
from .arrays import aligned_zeros
from .config import load_scene
from .continuous import CCD
from .errors import short_repr
from .fastcall import entry_point
from .fov import bounding_radii
from .fov import detect_all
from .fov import fov_of
from .frames import com_offsets
from .layout import BF_NOISE
from .layout import BI_DRIVE
from .layout import BI_FLAGS
from .layout import BI_KIND
from .layout import BODY_BULLET
from .layout import BS_LEN
from .layout import CM_CONTACT
from .layout import CT_DEPTH
from .layout import CT_FN
from .layout import CT_FT
from .layout import CT_LEN
from .layout import CT_NPTS
from .layout import CT_NX
from .layout import CT_NY
from .layout import CT_P1X
from .layout import CT_P1Y
from .layout import CT_P2X
from .layout import CT_P2Y
from .layout import CT_PX
from .layout import CT_PY
from .layout import DRIVEN
from .layout import EP_FRICTION
from .layout import EP_INERTIA
from .layout import EP_LEN
from .layout import EP_MASS
from .layout import EP_SCALE
from .layout import GS_QUEUE_AT
from .layout import GS_STAMP
from .layout import HL_LEN
from .layout import HL_MAXPEN
from .layout import HL_NSUB
from .layout import HL_OVERFLOW
from .layout import HL_SLEEP
from .layout import HL_STATUS
from .layout import HL_SWEEPS
from .layout import IMMOVABLE
from .layout import IS_HIT
from .layout import IS_LEN
from .layout import IS_SLEEP
from .layout import IS_STOP
from .layout import MAX_DRIVE_SLOTS
from .layout import OUT_LEN
from .layout import PASSIVE
from .layout import PFL_LEN
from .layout import PR_CCDFN
from .layout import PR_DT
from .layout import PR_FMIX
from .layout import PR_FMIXFN
from .layout import PR_G
from .layout import PR_LEN
from .layout import PR_MAXSUB
from .layout import PR_MODE
from .layout import PR_NOISE
from .layout import PR_REST
from .layout import PR_RMIX
from .layout import PR_SLEEP
from .layout import PR_SLEEPFN
from .layout import PR_SLOP
from .layout import PR_STEPFN
from .layout import PR_SUBFRAC
from .layout import PR_SWEEPS
from .layout import PR_TOUCHFN
from .layout import PRS_LEN
from .layout import SC_REBUILD
from .layout import ST_CCD
from .layout import ST_OVERFLOW
from .layout import YW_LEN
from .layout import YW_STATE
from .layout import gsc_len
from .layout import gsc_queue
from .layout import stamp_counts
from .layout import stamp_len
from .layout import stamp_order
from .lidar import LP_OFFT
from .lidar import LP_OFFX
from .lidar import LP_OFFY
from .lidar import lidar_arrays
from .lidar import scan_env
from .lidar import scan_parallel
from .lidar import scan_serial
from .limits import MAX_COORD
from .limits import MAX_MAGNITUDE
from .limits import MAX_SCALE
from .limits import MIN_MASS
from .limits import MIN_SCALE
from .mixing import rule_code
from .narrowphase import MAX_VERTS
from .params import SolverParams
from .pipeline import physics_for
from .pipeline import step_parallel
from .pipeline import step_serial
from .placement import place
from .rng import seed_states
from .rng import seed_states_of
from .scene import CompiledScene
from .scene import compile_scene
from .sensors import contact_array
from .sleeping import SLEEP_MIN_BODIES

MAX_ENVS = 1 << 20  # a batch beyond this is a typo, not a workload: refuse before allocating
PARALLEL_MIN_ENVS = 16  # below this, the serial kernel beats prange (thread start-up)
DRIVE_NAMES = {0: None, 1: "diff", 2: "omni", 3: "acker", 4: "omni_angular"}
DRIVE_COLUMNS = {0: 2, 1: 2, 2: 2, 3: 2, 4: 3}  # command (and drive state) entries per drive


@dataclass(frozen=True, eq=False)
class ContactReport:
    """One contact of an object, seen from its own side (``World.contacts``).

    IR-SIM's ``ContactReport`` (one report per touching pair, from the owner's side), plus
    raisim's view of the pair: the contact frame (rows: two tangents, then the normal from B
    toward A), the impulse on object A in that frame (object B receives the negation),
    ``is_object_a`` and the pair object's index. Built from the contact buffers the sensors
    stage (sensors.write_contacts) fills; only touching contacts (gap <= rest tolerance).

    other:       name of the body it touches.
    point:       world-frame contact point (2,) [m], the middle of the contact patch.
    normal:      unit normal (2,) from ``other`` toward this object (the way it is pushed).
    depth:       overlap removed this step [m]; zero or negative for a resting contact.
    force:       normal contact force [N] (>= 0).
    friction:    tangential force on this object [N] along its tangent (-normal_y, normal_x).
    patch:       (n, 2) world-frame patch points [m] (2 when two edges lie flat together).
    frame:       raisim contact frame (3, 3): rows t1, t2, n with n from B toward A.
    impulse:     impulse on object A in that frame [N s] (the same in both objects' reports).
    is_object_a: whether this object is A of the pair.
    pair_index:  world index of ``other``.
    """

    other: str
    point: np.ndarray
    normal: np.ndarray
    depth: float
    force: float
    friction: float
    patch: np.ndarray
    frame: np.ndarray
    impulse: np.ndarray
    is_object_a: bool
    pair_index: int

    @property
    def own_impulse(self) -> np.ndarray:
        """Impulse on this object in the contact frame [N s] (B's is A's negated)."""
        return self.impulse if self.is_object_a else -self.impulse


def raisim_frame(normal: np.ndarray) -> np.ndarray:
    """Contact frame whose rows are t1, t2 and the normal, right-handed (t1 x t2 = n)."""
    nx, ny = float(normal[0]), float(normal[1])
    return np.array([[-ny, nx, 0.0], [0.0, 0.0, 1.0], [nx, ny, 0.0]])


def reports_for(world: World, body: int, env: int) -> list[ContactReport]:
    """Reports of body index ``body`` in ``env`` from the world's contact buffers (the last
    step's touching pairs), forces [N] and impulses [N s] over the step time."""
    names = world.scene.names
    out = []
    for c in range(int(world.ctn[env])):
        a, b, _sp = (int(v) for v in world.cti[env, c])
        if body not in (a, b):
            continue
        f = world.ctf[env, c]
        n_a = np.array([f[CT_NX], f[CT_NY]])
        is_a = body == a
        npts = int(f[CT_NPTS])
        patch = np.array([[f[CT_P1X], f[CT_P1Y]], [f[CT_P2X], f[CT_P2Y]]])[:npts]
        impulse = np.array([f[CT_FT], 0.0, f[CT_FN]]) * world.dt
        out.append(ContactReport(
            other=names[b if is_a else a],
            point=np.array([f[CT_PX], f[CT_PY]]),
            normal=n_a if is_a else -n_a,
            depth=float(f[CT_DEPTH]),
            force=float(f[CT_FN]),
            friction=float(f[CT_FT]),
            patch=patch,
            frame=raisim_frame(n_a),
            impulse=impulse,
            is_object_a=is_a,
            pair_index=b if is_a else a,
        ))
    return out


def _seed(seed: Any, what: str) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) \
            or not 0 <= seed < 2**64:
        raise ValueError(f"World: {what} must be an integer in [0, 2**64), got "
                         f"{short_repr(seed)}")
    return int(seed)


def _seeds(seed: Any, n: int) -> list[int]:
    """One seed per selected env: an int s gives s, s + 1, ...; a list gives its entries."""
    if isinstance(seed, (list, tuple, np.ndarray)):
        if len(seed) != n:
            raise ValueError(f"World.reset: {n} envs selected but {len(seed)} seeds given")
        return [_seed(x, "seed") for x in seed]
    return [_seed(seed, "seed") + k for k in range(n)]


def _holds_bool(value: Any) -> bool:
    """True if a (nested) list or tuple holds a bool anywhere."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (bool, np.bool_)):
            return True
        if isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


class World:
    """A batch of ``num_envs`` worlds of one scene, stepped together.

    Args:
        scene: a compiled scene (see :meth:`from_config`).
        num_envs: number of copies stepped together (>= 1).
        num_threads: threads for ``prange`` over envs; None keeps numba's current setting
            (``NUMBA_NUM_THREADS``). Only used when ``num_envs >= PARALLEL_MIN_ENVS``.
        seed: seed of the envs' own streams (``rng``): env i draws as a single world seeded
            ``seed + i`` (IR-SIM's random distributions at every reset, motion noise). None:
            the scene's seed (``from_config``'s).
    """

    def __init__(self, scene: CompiledScene, num_envs: int = 1,
                 num_threads: int | None = None, seed: int | None = None) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) \
                or not 1 <= num_envs <= MAX_ENVS:
            raise ValueError(f"World: num_envs must be an integer in [1, {MAX_ENVS}], got "
                             f"{short_repr(num_envs)}")
        if num_threads is not None:
            limit = numba.config.NUMBA_NUM_THREADS
            if isinstance(num_threads, bool) or not isinstance(num_threads, (int, np.integer)) \
                    or not 1 <= num_threads <= limit:
                raise ValueError(
                    f"World: num_threads must be an integer in [1, {limit}] "
                    f"(NUMBA_NUM_THREADS), got {num_threads!r}")
        self.scene = scene
        self.num_envs = int(num_envs)
        self.num_threads = None if num_threads is None else int(num_threads)
        self.params = scene.params
        p = scene.params
        E, B = self.num_envs, scene.num_bodies
        self.dt = float(scene.spec.world.step_time)
        self.gravity = float(scene.spec.world.gravity)
        self.prm = np.zeros(PR_LEN)
        self.prm[PR_DT] = self.dt
        self.prm[PR_G] = self.gravity
        self.prm[PR_SLOP] = p.slop
        self.prm[PR_REST] = p.rest_tolerance
        self.prm[PR_SWEEPS] = p.max_sweeps
        self.prm[PR_MAXSUB] = p.max_substeps
        self.prm[PR_SUBFRAC] = p.substep_fraction
        nm, ns = len(scene.movable), len(scene.sint)
        self.prm[PR_SLEEP] = 1.0 if nm >= SLEEP_MIN_BODIES else 0.0
        # The user's mixing functions, kept alive while their addresses are in prm.
        self._mixers: dict[str, Any] = {}
        self.friction_mixing = scene.spec.world.friction_mixing
        self.restitution_mixing = scene.spec.world.restitution_mixing
        # Per-body flags (BI_FLAGS: bullets) are this world's own: its setters write them.
        self.bint = scene.bint.copy()
        self.prm[PR_MODE] = float(scene.collision_mode)
        self.prm[PR_NOISE] = 1.0 if np.any(scene.bflt[:, BF_NOISE] != 0.0) else 0.0
        # Sized to the scene: per-env scratch is walked every step, so oversizing it costs
        # cache misses at large batches (a step that finds more pairs grows the buffers).
        # Never more than the pairs the broad phase can list: each two movable bodies once,
        # each movable body with each static piece once (PushBox: 9, not 24).
        max_pairs = p.max_pairs or max(1, min(6 * nm + min(ns, 4 * nm) + 8,
                                              nm * (nm - 1) // 2 + nm * ns))
        # Every touching pair is reported: the contact buffer is never smaller than the pairs'.
        max_contacts = max(p.max_contacts or 0, max_pairs)
        # Per-env body parameters (domain randomisation writes here).
        self.epar = np.zeros((E, B, EP_LEN))
        # State.
        self.pos = np.zeros((E, B, 2))
        self.ang = np.zeros((E, B))
        self.vel = np.zeros((E, B, 2))
        self.omg = np.zeros((E, B))
        self.drv = np.zeros((E, B, 2))
        self.cmd = np.zeros((E, B, 2))
        # IR-SIM's drive extras (layout.YW_*): an omni_angular drive's yaw-rate command and
        # state [rad/s], and a noisy drive's draws of the step.
        self.yaw = np.zeros((E, B, YW_LEN))
        # Each env's own stream for the world model's draws (placement.py, motion noise).
        self.rng = seed_states(scene.spec.seed if seed is None else _seed(seed, "seed"), E)
        # The random groups' latest draws (placement.py), one row per placed body.
        nr = 0 if scene.placement is None else len(scene.placement.gbody)
        self.placed_pose = np.zeros((E, nr, 3))
        self.placed_goal = np.zeros((E, nr, 3))
        self._place_status = np.zeros(E, np.int64)
        # Scratch and outputs.
        # Per-body and per-pair scratch rows are whole cache lines (layout.py): start them on one.
        self._bsc = aligned_zeros((E, 2 * B, BS_LEN))
        self._bis = aligned_zeros((E, B, IS_LEN), np.int64)
        # One row per body, and a last one for the env's widest sleeper box (sleeping.py).
        self._aabb = aligned_zeros((E, B + 1, 4))
        # Broad-phase and sleep scratch (layout.stamp_len): piece tags, query counter, the
        # sweep order (every movable body while sleeping is off), the sleep lists, counts.
        self._stamp = np.zeros((E, stamp_len(ns, nm)), np.int64)
        self._stamp[:, stamp_order(ns):stamp_order(ns) + nm] = scene.movable
        self._stamp[:, stamp_counts(ns, nm) + SC_REBUILD] = 1
        self._prs = aligned_zeros((E, max_pairs, PRS_LEN), np.int64)
        self._pfl = aligned_zeros((E, max_pairs, PFL_LEN))
        self._pord = np.zeros((E, 3, max_pairs), np.int64)  # two orders, levels
        # two pieces' world vertices, then their edge normals (narrowphase.pair_contact)
        self._vbuf = np.zeros((E, 4, MAX_VERTS, 2))
        # The narrow phase's output row, then each body's heading cache (angle, cos, sin;
        # narrowphase.heading), started with NaN angles that match no heading.
        self._cbuf = np.zeros((E, OUT_LEN + 3 * B))
        self._cbuf[:, OUT_LEN::3] = np.nan
        self.cti = np.zeros((E, max_contacts, 3), np.int64)
        self.ctf = np.zeros((E, max_contacts, CT_LEN))
        self.ctn = np.zeros(E, np.int64)
        self.health = np.zeros((E, HL_LEN))
        # Contact-graph scratch (BFS stamp, drive-slot table, BFS queue, touching pairs by body).
        kinds = scene.bint[scene.movable, BI_KIND]
        self._slots = min(MAX_DRIVE_SLOTS,
                          int(np.sum(kinds == DRIVEN)) * int(np.sum(kinds == PASSIVE)))
        self._gsc = self._new_gsc(max_pairs)
        self.steps = np.zeros(E, np.int64)
        # Envs with active == 0 are skipped by a step (e.g. rows being reset by a vector env).
        self.active = np.ones(E, np.uint8)
        # Ray-casting sensors (lidar2d, fmcw_lidar2d): readings (computed on demand) and the
        # noise streams they draw from. A body's lidar is its first (IR-SIM's ``lidar``).
        self.lidar_arrays = lidar_arrays(scene.lidars, E)
        self._lidar_slot: dict[int, int] = {}
        for k, (b, _) in enumerate(scene.lidars):
            self._lidar_slot.setdefault(b, k)
        self.lidar_rng = seed_states(0, E)
        self._fov_radii: np.ndarray | None = None  # shape radii for fov_detected, on demand
        # What the step kernels receive, bound once: every array is updated in place.
        s = scene
        self.arrays = WorldArrays(
            prm=self.prm, bint=self.bint, bflt=s.bflt, pint=s.pint, pvert=s.pvert, pflt=s.pflt,
            sint=s.sint, svert=s.svert, sflt=s.sflt, grid=s.grid, gstart=s.gstart,
            gitem=s.gitem, movable=s.movable, epar=self.epar, pos=self.pos, ang=self.ang,
            vel=self.vel, omg=self.omg, drv=self.drv, cmd=self.cmd, active=self.active,
            bsc=self._bsc, bis=self._bis, aabb=self._aabb, stamp=self._stamp, prs=self._prs,
            pfl=self._pfl, pord=self._pord, vbuf=self._vbuf, cbuf=self._cbuf, cti=self.cti,
            ctf=self.ctf, ctn=self.ctn, hl=self.health, gsc=self._gsc, rng=self.rng,
            yaw=self.yaw)
        WORLD_ABI.check(self.arrays)
        self._parallel = self.num_envs >= PARALLEL_MIN_ENVS
        self._kernel = step_parallel if self._parallel else step_serial
        # Looked up on the first step: a World inside an env is stepped by the env's kernels,
        # so it never needs its own.
        self._step_fn: Any = None
        # _physics_address: the entry point's address and the prm slots physics_for wrote
        self._entry_key: tuple[int, float, float, float] | None = None
        # Goals and behaviours (IR-SIM's): the stage is compiled for a scene with behaviours;
        # in a scene without, goals are tracked from the first call that reads them
        # (_goals_plan), so a world that never asks compiles nothing of it.
        self.behaviours: Any = None
        if any(getattr(b, k, None) is not None for b in scene.spec.bodies
               for k in ("behavior", "group_behavior")):
            from .behaviours.plan import BehaviourPlan

            self.behaviours = BehaviourPlan(scene, self.num_envs)
        self.reset()

    def _new_gsc(self, max_pairs: int) -> np.ndarray:
        """Graph scratch for ``max_pairs`` pairs per env (layout.py: GS_*)."""
        gsc = aligned_zeros((self.num_envs, gsc_len(self.scene.num_bodies, max_pairs,
                                                    self._slots)), np.int64)
        gsc[:, GS_QUEUE_AT] = gsc_queue(self._slots)
        return gsc

    def _grow_pairs(self, need: int) -> None:
        """Enlarge the pair buffers (and the contact buffers with them) to hold ``need`` pairs
        with room to spare; the arrays the kernels receive are rebound."""
        E = self.num_envs
        cap = int(need * 1.5) + 8
        self._prs = aligned_zeros((E, cap, PRS_LEN), np.int64)
        self._pfl = aligned_zeros((E, cap, PFL_LEN))
        self._pord = np.zeros((E, 3, cap), np.int64)
        # The graph scratch is rebuilt each sub-step, so a fresh array is enough, except for
        # the BFS stamp, which must keep counting up.
        gsc = self._new_gsc(cap)
        gsc[:, GS_STAMP] = self._gsc[:, GS_STAMP]
        self._gsc = gsc
        cti = np.zeros((E, cap, 3), np.int64)
        ctf = np.zeros((E, cap, CT_LEN))
        n = self.cti.shape[1]
        cti[:, :n] = self.cti
        ctf[:, :n] = self.ctf
        self.cti, self.ctf = cti, ctf
        self.arrays = self.arrays._replace(prs=self._prs, pfl=self._pfl, pord=self._pord,
                                           gsc=self._gsc, cti=cti, ctf=ctf)
        # The sleepers' frozen contacts lived at the old buffers' end: found again.
        self._stale_sleep(slice(None))

    # ------------------------------------------------------------------------------ set-up
    @classmethod
    def from_config(cls, source: str | os.PathLike | Mapping, num_envs: int = 1,
                    num_threads: int | None = None,
                    params: SolverParams | None = None, seed: int = 0) -> World:
        """Load a YAML scene (path or dict; IR-SIM's world files load as written), compile it
        and make ``num_envs`` copies.

        ``seed`` seeds what is drawn at load, once for every env (``random_shape`` shapes, a
        generator map without its own seed, random groups of immovable bodies), and the
        envs' streams: env i draws its random placements and motion noise as a single world
        seeded ``seed + i``.

        Raises:
            SceneError: an invalid scene (the message names the file and the key path).
            TypeError: ``source`` is neither a path nor a mapping.
        """
        if not isinstance(source, (str, bytes, os.PathLike, Mapping)):
            raise TypeError(f"World.from_config: a scene is a path (str or os.PathLike) to a "
                            f"YAML file or a mapping, got {type(source).__name__}")
        spec = load_scene(source, seed=_seed(seed, "seed"))
        return cls(compile_scene(spec, params), num_envs=num_envs, num_threads=num_threads)

    @property
    def names(self) -> list[str]:
        """Body names, in index order (robots, then obstacles, then ``map`` if any)."""
        return list(self.scene.names)

    @property
    def time(self) -> float:
        """Simulated time of env 0 [s] (all envs advance together unless reset apart)."""
        return float(self.steps[0] * self.dt)

    def index(self, name: str) -> int:
        """Body index of ``name``; raises KeyError listing the names."""
        try:
            return self.scene.index[name]
        except (KeyError, TypeError):  # TypeError: an unhashable name
            raise KeyError(f"World: no body named {short_repr(name)}; bodies: "
                           f"{short_repr(self.scene.names, 300)}") from None

    def _envs(self, env: int | np.ndarray | None) -> Any:
        """Index of the selected envs: all (None), one int, an int array or a bool mask."""
        if env is None:
            return slice(None)
        idx = np.asarray(env)
        if idx.dtype == bool:
            if idx.shape != (self.num_envs,):
                raise ValueError(f"World: env mask must have shape ({self.num_envs},), got "
                                 f"{idx.shape}")
            return idx
        if idx.size == 0:
            return np.zeros(0, np.int64)
        if idx.dtype.kind not in "iu" or idx.ndim > 1:
            raise IndexError(f"World: env must be an int, a 1-D int array or a bool mask of "
                             f"shape ({self.num_envs},), got {short_repr(env)}")
        if np.any(idx < 0) or np.any(idx >= self.num_envs):
            raise IndexError(f"World: env {short_repr(env)} out of range [0, {self.num_envs})")
        return idx

    def _values(self, what: str, name: str, value: Any, sel: Any, columns: int | None, *,
                low: float | None = None, high: float | None = None,
                magnitude: float = MAX_MAGNITUDE) -> np.ndarray:
        """``value`` as float64, broadcast to the selected envs (x ``columns``) and checked.

        Raises ValueError (nothing is written by the caller then) for non-numbers (bools
        and strings included), shapes that do not broadcast, NaN/inf, values outside
        [low, high] or above ``magnitude``.
        """
        where = f"World.{what}: value for {name!r}"
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError) as exc:  # ragged nesting
            raise ValueError(f"{where} is not an array of numbers: {short_repr(value)}") \
                from exc
        # Bools, strings, None and objects are refused, also inside a list (where numpy
        # would silently turn True into 1).
        if arr.dtype.kind not in "iuf" or (isinstance(value, (list, tuple))
                                           and _holds_bool(value)):
            raise ValueError(f"{where} must be numbers, got {short_repr(value)}")
        arr = arr.astype(np.float64)
        shape = self.omg[sel, 0].shape + ((columns,) if columns else ())
        if columns and (arr.ndim == 0 or arr.shape[-1] != columns):
            raise ValueError(f"{where} must have {columns} columns, got shape {arr.shape}")
        try:
            out = np.broadcast_to(arr, shape)
        except ValueError:
            raise ValueError(f"{where} has shape {arr.shape}, which does not broadcast to "
                             f"{shape} (the selected envs" + (f" x {columns}" if columns else "")
                             + ")") from None
        if not np.all(np.isfinite(out)):
            raise ValueError(f"{where} has NaN or inf: {short_repr(value)}")
        if np.any(np.abs(out) > magnitude):
            raise ValueError(f"{where} must be at most {magnitude:g} in magnitude, got "
                             f"{short_repr(value)}")
        if low is not None and np.any(out < low):
            raise ValueError(f"{where} must be >= {low:g}, got {short_repr(value)}")
        if high is not None and np.any(out > high):
            raise ValueError(f"{where} must be <= {high:g}, got {short_repr(value)}")
        return out

    def reset(self, env: int | np.ndarray | None = None, seed: Any = None) -> None:
        """Restore the scene's initial state and parameters in ``env`` (all when None).

        The bodies of IR-SIM's ``random`` distributions are drawn afresh in each reset env,
        from its own stream (``seed``: None continues the streams; an int s gives the k-th
        selected env the stream of a single world seeded s + k; a list gives one seed per
        selected env). Stop and collision flags (IR-SIM's stop mode) are cleared.

        Raises:
            RuntimeError: an env whose random groups could not be placed (naming the group);
                nothing is changed then.
        """
        s = self.scene
        sel = self._envs(env)
        envs = np.arange(self.num_envs)[sel]
        if seed is not None:
            self.rng[envs] = seed_states_of(_seeds(seed, len(envs)))
        if s.placement is not None and len(envs):
            streams = self.rng[envs].copy()
            place(envs.astype(np.int64), self.rng, s.placement, self.placed_pose,
                  self.placed_goal, self._place_status)
            bad = envs[self._place_status[envs] != 0]
            if len(bad):
                self.rng[envs] = streams
                e = int(bad[0])
                grp = s.spec.groups[int(self._place_status[e]) - 1]
                raise RuntimeError(
                    f"World.reset: env {e}: {grp.path}.distribution: no placement of the "
                    f"group's {len(grp.bodies)} objects found in {len(grp.bodies)} x "
                    "MAX_TRIES tries, MAX_ROUNDS times (placement.py); the env was not reset")
        self.epar[sel, :, EP_MASS] = s.mass
        self.epar[sel, :, EP_INERTIA] = s.inertia
        self.epar[sel, :, EP_FRICTION] = s.friction
        self.epar[sel, :, EP_SCALE] = 1.0
        self.steps[sel] = 0
        self.cmd[sel] = 0.0
        self.drv[sel] = s.drv0[:, :2]
        self.yaw[sel, :, 0] = 0.0
        self.yaw[sel, :, 1] = s.drv0[:, 2]
        for i in range(s.num_bodies):
            if s.shapes[i] is None:
                continue
            self._place(i, s.pose0[i], sel)
        if s.placement is not None:
            for k, b in enumerate(s.placement.gbody):
                self._place(int(b), self.placed_pose[sel, k], sel)
        self.vel[sel] = s.vel0
        self.omg[sel] = s.omega0
        self.ctn[sel] = 0
        self.health[sel] = 0.0
        self._bis[sel, :, IS_SLEEP] = 0
        self._stale_sleep(sel)
        if s.collision_mode != CM_CONTACT:  # IR-SIM's flags (contact-graph columns otherwise)
            self._bis[sel, :, IS_STOP] = 0
            self._bis[sel, :, IS_HIT] = 0
        if self.behaviours is not None:
            from .behaviours.layout import CTL_RESET

            self.behaviours.run(self, CTL_RESET, envs)
            self._placed_goals_to_plan(envs)

    def _placed_goals_to_plan(self, envs: np.ndarray) -> None:
        """The goals IR-SIM's random distributions drew in ``envs`` (each env its own) as the
        goal queues of the behaviours' plan, which holds the scene's goals (none for a body
        placed per env)."""
        P = self.scene.placement
        if P is None or self.behaviours is None or not len(envs):
            return
        from .behaviours.layout import GQ_DIMS
        from .behaviours.layout import GS_ARRIVED
        from .behaviours.layout import GS_COUNT
        from .behaviours.layout import GS_HEAD

        A = self.behaviours.arrays
        for k, b in enumerate(P.gbody):
            goal = self.placed_goal[envs, k]
            ok = envs[np.all(np.isfinite(goal), axis=1)]
            if not len(ok):
                continue
            A.gq[ok, b] = 0.0
            A.gq[ok, b, 0, :3] = self.placed_goal[ok, k]
            A.gq[ok, b, 0, GQ_DIMS] = 3
            A.gs[ok, b, GS_HEAD] = 0
            A.gs[ok, b, GS_COUNT] = 1
            A.gs[ok, b, GS_ARRIVED] = 0

    def _stale_sleep(self, sel: Any) -> None:
        """The sleep lists of the selected envs are rebuilt at their next step (sleeping.py),
        and the sweep order holds every movable body again."""
        ns, nm = len(self.scene.sint), len(self.scene.movable)
        self._stamp[sel, stamp_order(ns):stamp_order(ns) + nm] = self.scene.movable
        self._stamp[sel, stamp_counts(ns, nm) + SC_REBUILD] = 1

    # ------------------------------------------------------------------------------ stepping
    def step(self, commands: Mapping[str, Any] | None = None) -> None:
        """Advance every env by one ``step_time``, as IR-SIM's ``env.step()``.

        ``commands`` maps driven body names to arrays of shape (num_envs, k) or (k,): diff
        [v m/s, omega rad/s], omni [vx, vy] m/s in the body frame, acker [v m/s, steer rad]
        (k = 2), omni_angular [vx, vy m/s, omega rad/s] (k = 3). A body given a command
        follows it for this step, whatever its behaviour; the others follow their behaviour
        toward their goals (``behavior``, ``group_behavior``), and a driven body without one
        holds still. Goals are checked after the physics (:meth:`goal`, :meth:`arrived`). A
        world with IR-SIM's ``step_mode: external`` moves nothing (its states are set from
        outside): it refuses commands and only counts time.
        """
        # fill(), not [:] = : a small world's step is a few microseconds, and each slice
        # assignment costs ~0.3 us more than a fill
        self.cmd.fill(0.0)
        self.yaw[:, :, 0].fill(0.0)
        manual = self.behaviours.arrays.manual if self.behaviours is not None else None
        if manual is not None:
            manual.fill(0)
        if commands:
            for name, value in commands.items():
                i = self.index(name)
                if self.scene.bint[i, BI_KIND] != DRIVEN:
                    raise ValueError(f"World.step: body {name!r} has no drive to command")
                k = DRIVE_COLUMNS[int(self.scene.bint[i, BI_DRIVE])]
                arr = np.asarray(value, dtype=np.float64)
                if arr.shape not in ((k,), (self.num_envs, k)):
                    raise ValueError(f"World.step: command for {name!r} must have shape ({k},) "
                                     f"or ({self.num_envs}, {k}), got {arr.shape}")
                if not np.all(np.isfinite(arr)):
                    raise ValueError(f"World.step: command for {name!r} has NaN or inf: {arr}")
                self.cmd[:, i] = arr[..., :2]
                if k == 3:
                    self.yaw[:, i, 0] = arr[..., 2]
                if manual is not None:
                    manual[i] = 1
        if self.scene.spec.world.step_mode == "external":
            if manual is not None:
                manual.fill(0)
            if commands:
                raise ValueError("World.step: the world's step_mode is 'external' (IR-SIM: the "
                                 "caller sets states with set_state); it takes no commands")
            self.count_step()
            return
        try:
            self.step_raw()
        finally:
            if manual is not None:
                manual.fill(0)

    @property
    def _physics_address(self) -> int:
        """The address of the engine's entry point for this world (pipeline.physics_for: the
        contact solver, or the one with motion noise and IR-SIM's other collision modes).

        physics_for also writes into ``prm`` the addresses the step calls through. It runs
        again only when those slots no longer hold what it wrote (four reads, not its
        ~0.85 us of a small world's 4-6 us step): so an address from another process (a
        pickled world's prm) or any other garbage there is rewritten, never called; the
        ``sleeping`` setter's and :meth:`rolled_back`'s writes are taken up at the next
        step. Continuous collision compiled meanwhile by another world is not seen until a
        fast body rolls this world's step back once (the step taken again is the same)."""
        prm = self.prm
        key = self._entry_key
        if key is None or prm.item(PR_STEPFN) != key[1] or prm.item(PR_SLEEPFN) != key[2] \
                or prm.item(PR_CCDFN) != key[3] or prm.item(PR_TOUCHFN) != key[4]:
            address = int(physics_for(prm).address)
            key = self._entry_key = (address, prm.item(PR_STEPFN), prm.item(PR_SLEEPFN),
                                     prm.item(PR_CCDFN), prm.item(PR_TOUCHFN))
        return key[0]

    def __getstate__(self) -> dict[str, Any]:
        """What a pickle or a copy keeps: everything but the entry point's address, which is
        valid only in the process that took it (the copy looks it up at its first step, and
        rewrites prm's addresses then)."""
        state = self.__dict__.copy()
        state["_entry_key"] = None
        return state

    def step_raw(self) -> None:
        """Step with the commands already written in ``self.cmd`` (no checks: hot path).

        Envs whose ``active`` flag is 0 are left as they are.
        """
        if self._parallel and self.num_threads is not None:
            numba.set_num_threads(self.num_threads)
        if self.behaviours is not None:
            # the behaviour stage, the physics and the arrivals, in one call
            if self.behaviours.step(self, self._physics_address):
                self._recover(self._kernel)
            self.count_step()
            return
        if self._step_fn is None:
            self._step_fn = entry_point(self._kernel, self.arrays, self._physics_address)
        if self._step_fn(self.arrays, self._physics_address):
            self._recover(self._kernel)
        self.count_step()

    def count_step(self) -> None:
        """Count a step taken (``steps += active``), as :meth:`step_raw` does: for callers
        that step the world with kernels of their own (the env classes). For one env in Python
        ints: numpy's in-place add is ~0.7 us, a fifth of a small world's step."""
        if self.num_envs == 1:
            if self.active[0]:
                self.steps[0] += 1
        else:
            self.steps += self.active

    def _recover(self, kernel: Any) -> None:
        """Envs whose step was rolled back: grow the pair buffers and step them again (no
        contact is ever dropped)."""
        active = self.active.copy()
        retried = np.zeros(self.num_envs, bool)
        try:
            while (over := self.rolled_back(active)) is not None:
                self.active[:] = over
                retried |= over
                kernel(self.arrays, self._physics_address)
        finally:
            self.active[:] = active
        if self.behaviours is not None and retried.any():
            from .behaviours.layout import CTL_ARRIVE

            self.behaviours.run(self, CTL_ARRIVE, np.flatnonzero(retried))

    def rolled_back(self, active: np.ndarray) -> np.ndarray | None:
        """After a step taken with kernels of one's own (``arrays``, as the env classes do):
        the envs among ``active`` rolled back, ready for the caller to step them again: for a
        full pair buffer (the buffers are grown here) or for a fast body before this process
        compiled continuous collision (compiled here, its address written into ``prm``).
        None if there are none."""
        status = self.health[:, HL_STATUS].astype(np.int64) * active
        over = (status & (ST_OVERFLOW | ST_CCD)) != 0
        if not np.any(over):
            return None
        if np.any(status & ST_CCD):
            # A fast body, and continuous collision not compiled in this process yet.
            self.prm[PR_CCDFN] = float(CCD.address)
        grow = (status & ST_OVERFLOW) != 0
        if np.any(grow):
            self._grow_pairs(int(self.health[grow, HL_OVERFLOW].max()))
        return over

    # ------------------------------------------------------------------------------ poses
    def _com_offset(self, i: int, theta: np.ndarray, sel: Any) -> np.ndarray:
        return com_offsets(self.scene.bflt, i, theta, self.epar[sel, i, EP_SCALE])

    def _place(self, i: int, pose: np.ndarray, sel: Any) -> None:
        pose = np.asarray(pose, dtype=np.float64)
        theta = np.broadcast_to(pose[..., 2], self.ang[sel, i].shape)
        self.ang[sel, i] = theta
        self.pos[sel, i] = pose[..., :2] + self._com_offset(i, theta, sel)

    def state(self, name: str) -> np.ndarray:
        """Pose of the body origin per env: (num_envs, 3) x [m], y [m], theta [rad].

        Acker bodies get a fourth column, the steering angle [rad]; a body whose
        ``state_dim`` is larger gets zero columns up to it (IR-SIM's state vector).
        """
        i = self.index(name)
        theta = self.ang[:, i]
        xy = self.pos[:, i] - self._com_offset(i, theta, slice(None))
        out = np.concatenate([xy, theta[:, None]], axis=1)
        if self.scene.bint[i, BI_DRIVE] == 3:
            out = np.concatenate([out, self.drv[:, i, 1:2]], axis=1)
        dim = self.scene.spec.bodies[i].state_dim if i < len(self.scene.spec.bodies) else 3
        if out.shape[1] < dim:  # IR-SIM's state_dim: the state padded with zeros
            out = np.concatenate([out, np.zeros((self.num_envs, dim - out.shape[1]))], axis=1)
        return out

    # ------------------------------------------------------------------------------ goals
    def _goals_plan(self) -> Any:
        """The goals' and behaviours' plan, made now in a world without behaviours: its goals
        are tracked from here on (the queues from the scene, arrivals from the current
        poses), and every later step checks them."""
        if self.behaviours is None:
            from .behaviours.layout import CTL_ARRIVE
            from .behaviours.layout import CTL_RESET
            from .behaviours.plan import BehaviourPlan

            self.behaviours = BehaviourPlan(self.scene, self.num_envs)
            envs = np.arange(self.num_envs)
            self.behaviours.run(self, CTL_RESET, envs)
            self._placed_goals_to_plan(envs)
            self.behaviours.arrays.pend[:] = 1
            self.behaviours.run(self, CTL_ARRIVE, envs)
        return self.behaviours

    def goal(self, name: str) -> np.ndarray:
        """The body's current goal per env: (num_envs, 3) x [m], y [m], theta [rad] (IR-SIM's
        ``obj.goal``); NaN rows for a body without a goal, a NaN heading for a position
        goal (``[x, y]``)."""
        i = self.index(name)
        return self._goals_plan().goal(i)

    def goals(self, name: str, env: int = 0) -> np.ndarray:
        """The body's goal queue in ``env``, the current goal first: (n, 3) [m, m, rad]."""
        i = self.index(name)
        if not 0 <= env < self.num_envs:
            raise IndexError(f"World.goals: env {env} out of range [0, {self.num_envs})")
        return self._goals_plan().goals(i, env)

    def set_goal(self, name: str, goal: Any, env: int | np.ndarray | None = None) -> None:
        """Give the body a new goal, or a sequence of them (``[x, y(, theta)]`` or a list of
        those [m, m, rad]; None clears it), in ``env`` (all when None), as IR-SIM's
        ``set_goal``: the arrive flag drops. A reset restores the scene's goals."""
        i = self.index(name)
        self._goals_plan().set_goal(i, goal, self._envs(env), f"World.set_goal: {name!r}")

    def arrived(self, name: str) -> np.ndarray:
        """Whether the body has arrived at its last goal, per env: (num_envs,) bool (IR-SIM's
        ``arrive_flag``, checked after each step)."""
        i = self.index(name)
        return self._goals_plan().arrived(i)

    def done(self, mode: str = "all") -> np.ndarray:
        """IR-SIM's ``env.done()`` per env: (num_envs,) bool, whether all robots (``mode``
        "all") or any robot ("any") arrived; False in a world without robots."""
        if mode not in ("all", "any"):
            raise ValueError(f"World.done: mode must be 'all' or 'any', got {mode!r}")
        robots = [b.name for b in self.scene.spec.bodies if b.role == "robot"]
        if not robots:
            return np.zeros(self.num_envs, bool)
        flags = np.stack([self.arrived(r) for r in robots])
        return flags.all(axis=0) if mode == "all" else flags.any(axis=0)

    def seed_behaviours(self, seed: int) -> None:
        """Seed the streams wandering bodies draw their goals from: env i draws as a single
        world seeded ``seed + i`` (at the next reset, or the next arrival)."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"World.seed_behaviours: seed must be an int >= 0, got "
                             f"{short_repr(seed)}")
        self._goals_plan().seed(int(seed))

    def com(self, name: str) -> np.ndarray:
        """Centre of mass per env: (num_envs, 2) [m]."""
        return self.pos[:, self.index(name)].copy()

    def velocity(self, name: str) -> np.ndarray:
        """World-frame velocity of the centre of mass per env: (num_envs, 2) [m/s]."""
        return self.vel[:, self.index(name)].copy()

    def omega(self, name: str) -> np.ndarray:
        """Yaw rate per env: (num_envs,) [rad/s]."""
        return self.omg[:, self.index(name)].copy()

    def drive_state(self, name: str) -> np.ndarray:
        """Drive state per env (num_envs, 2), (num_envs, 3) for omni_angular: see
        kinematics.py for each model's meaning."""
        i = self.index(name)
        if DRIVE_COLUMNS[int(self.scene.bint[i, BI_DRIVE])] == 3:
            return np.concatenate([self.drv[:, i], self.yaw[:, i, YW_STATE:YW_STATE + 1]],
                                  axis=1)
        return self.drv[:, i].copy()

    def collision(self, name: str) -> np.ndarray:
        """IR-SIM's collision flag per env: (num_envs,) bool, whether ``name`` overlaps a body
        that is not unobstructed after the last step (collision modes other than contact;
        in contact mode see :meth:`in_contact`)."""
        i = self.index(name)
        if self.scene.collision_mode == CM_CONTACT:
            return np.zeros(self.num_envs, bool)
        return self._bis[:, i, IS_HIT] != 0

    def stopped(self, name: str) -> np.ndarray:
        """IR-SIM's stop flag per env: (num_envs,) bool, whether ``name`` is held by a
        collision (``collision_mode`` stop or unobstructed_obstacles): it overlapped a body
        that is not unobstructed after the last step, so it does not move in the next."""
        i = self.index(name)
        if self.scene.collision_mode == CM_CONTACT:
            return np.zeros(self.num_envs, bool)
        return self._bis[:, i, IS_STOP] != 0

    def placed_goals(self, name: str) -> np.ndarray:
        """The goal IR-SIM's ``random`` distribution drew for ``name`` at the last reset, per
        env: (num_envs, 3) x [m], y [m], theta [rad]; ValueError for a body not placed at
        random per env (its goals are ``scene.spec.bodies[i].goal``)."""
        i = self.index(name)
        P = self.scene.placement
        rows = [] if P is None else np.flatnonzero(P.gbody == i)
        if not len(rows):
            raise ValueError(f"World.placed_goals: {name!r} is not placed at random per env")
        return self.placed_goal[:, int(rows[0])].copy()

    def _movable(self, name: str, what: str) -> int:
        i = self.index(name)
        if self.scene.bint[i, BI_KIND] == IMMOVABLE:
            raise ValueError(f"World.{what}: body {name!r} is immovable (static or infinite "
                             "mass); its pose is fixed when the scene is compiled")
        return i

    def set_state(self, name: str, state: Any, env: int | np.ndarray | None = None) -> None:
        """Place the body origin at (x, y, theta) [m, m, rad] (acker: optional 4th, steer).

        ``state`` is (3,) or (4,), or one row per selected env; entries are bounded by
        MAX_COORD. Everything is checked before anything is written.
        """
        i = self._movable(name, "set_state")
        sel = self._envs(env)
        try:
            columns = np.shape(state)[-1:] if not isinstance(state, (str, bytes)) else ()
        except ValueError:  # ragged nesting
            columns = ()
        if columns not in ((3,), (4,)):
            raise ValueError(f"World.set_state: state for {name!r} must have 3 columns (x, y, "
                             f"theta) or 4 for acker (+ steer), got {short_repr(state)}")
        if columns == (4,) and self.scene.bint[i, BI_DRIVE] != 3:
            raise ValueError(f"World.set_state: only acker bodies take a steering angle; "
                             f"{name!r} is not one")
        arr = self._values("set_state", name, state, sel, columns[0], magnitude=MAX_COORD)
        self._place(i, arr[..., :3], sel)
        self._bis[sel, i, IS_SLEEP] = 0
        if columns == (4,):
            self.drv[sel, i, 1] = arr[..., 3]

    def set_velocity(self, name: str, v_xy: Any, env: int | np.ndarray | None = None) -> None:
        """Set the world-frame velocity [m/s] of a passive body (drives follow commands)."""
        i = self._movable(name, "set_velocity")
        if self.scene.bint[i, BI_KIND] != PASSIVE:
            raise ValueError(f"World.set_velocity: {name!r} is driven; command its drive "
                             "instead (or use set_drive_state)")
        sel = self._envs(env)
        self.vel[sel, i] = self._values("set_velocity", name, v_xy, sel, 2)
        self._bis[sel, i, IS_SLEEP] = 0

    def set_omega(self, name: str, omega: Any, env: int | np.ndarray | None = None) -> None:
        """Set the yaw rate [rad/s] of a movable body (a scalar or one per selected env)."""
        i = self._movable(name, "set_omega")
        sel = self._envs(env)
        self.omg[sel, i] = self._values("set_omega", name, omega, sel, None)
        self._bis[sel, i, IS_SLEEP] = 0

    def set_drive_state(self, name: str, d: Any, env: int | np.ndarray | None = None) -> None:
        """Set a driven body's drive state (2 columns, 3 for omni_angular; see kinematics.py
        for their meaning)."""
        i = self._movable(name, "set_drive_state")
        if self.scene.bint[i, BI_KIND] != DRIVEN:
            raise ValueError(f"World.set_drive_state: {name!r} has no drive")
        sel = self._envs(env)
        k = DRIVE_COLUMNS[int(self.scene.bint[i, BI_DRIVE])]
        values = self._values("set_drive_state", name, d, sel, k)
        self.drv[sel, i] = values[..., :2]
        if k == 3:
            self.yaw[sel, i, 1] = values[..., 2]

    # ------------------------------------------------------------------- domain randomisation
    def set_mass(self, name: str, mass: Any, env: int | np.ndarray | None = None) -> None:
        """Set mass [kg] (finite, in [MIN_MASS, MAX_MAGNITUDE]); the inertia scales with it."""
        i = self._movable(name, "set_mass")
        sel = self._envs(env)
        m = self._values("set_mass", name, mass, sel, None, low=MIN_MASS)
        self.epar[sel, i, EP_INERTIA] *= m / self.epar[sel, i, EP_MASS]
        self.epar[sel, i, EP_MASS] = m

    def set_friction(self, name: str, mu: Any, env: int | np.ndarray | None = None) -> None:
        """Set the ground friction coefficient (finite, >= 0)."""
        i = self.index(name)
        sel = self._envs(env)
        self.epar[sel, i, EP_FRICTION] = self._values("set_friction", name, mu, sel, None,
                                                       low=0.0)

    def set_scale(self, name: str, scale: Any, env: int | np.ndarray | None = None) -> None:
        """Scale the body's shape by a factor in [MIN_SCALE, MAX_SCALE] about its centre of
        mass; I scales by s^2. The pose of the centre of mass is kept.
        """
        i = self._movable(name, "set_scale")
        sel = self._envs(env)
        s = self._values("set_scale", name, scale, sel, None, low=MIN_SCALE, high=MAX_SCALE)
        self.epar[sel, i, EP_INERTIA] *= (s / self.epar[sel, i, EP_SCALE]) ** 2
        self.epar[sel, i, EP_SCALE] = s
        self._bis[sel, i, IS_SLEEP] = 0

    def mass(self, name: str) -> np.ndarray:
        """Mass per env [kg]."""
        return self.epar[:, self.index(name), EP_MASS].copy()

    def inertia(self, name: str) -> np.ndarray:
        """Moment of inertia about the centre of mass per env [kg m^2]."""
        return self.epar[:, self.index(name), EP_INERTIA].copy()

    def traction(self, name: str) -> np.ndarray:
        """Ground friction force mu m g per env [N] (a drive's traction, a load's resistance)."""
        i = self.index(name)
        return self.epar[:, i, EP_FRICTION] * self.epar[:, i, EP_MASS] * self.gravity

    # ------------------------------------------------------------------------------ sensors
    def contacts(self, name: str, env: int = 0) -> list[ContactReport]:
        """Touching contacts of ``name`` in ``env`` after the last step, from its own side."""
        i = self.index(name)
        if not 0 <= env < self.num_envs:
            raise IndexError(f"World.contacts: env {env} out of range [0, {self.num_envs})")
        return reports_for(self, i, env)

    def contact_array(self, name: str, max_contacts: int = 4) -> tuple[np.ndarray, np.ndarray]:
        """Fixed-size contact readings for observations.

        Returns ``(arr, count)``: ``arr`` (num_envs, max_contacts, 8) with columns
        [in_contact, normal_x, normal_y, force N, point_x m, point_y m, depth m, other index]
        in the world frame (normal toward ``name``), deepest-force first, zero-padded; and
        ``count`` (num_envs,) the number of touching contacts (may exceed max_contacts).
        """
        i = self.index(name)
        out = np.zeros((self.num_envs, max_contacts, 8))
        count = np.zeros(self.num_envs, np.int64)
        contact_array(i, self.cti, self.ctf, self.ctn, out, count)
        return out, count

    def in_contact(self, name: str) -> np.ndarray:
        """Whether ``name`` touches anything, per env: (num_envs,) bool."""
        return self.contact_array(name, 1)[1] > 0

    def net_force(self, name: str) -> np.ndarray:
        """Sum of contact forces on ``name`` per env (normal and friction): (num_envs, 2) [N]."""
        i = self.index(name)
        out = np.zeros((self.num_envs, 2))
        for e in range(self.num_envs):
            for r in reports_for(self, i, e):
                out[e] += r.force * r.normal + r.friction * np.array([-r.normal[1], r.normal[0]])
        return out

    def lidar_slot(self, body: int, sensor: str | None = None) -> int:
        """Row of body ``body``'s lidar in ``lidar_arrays`` (-1: it has none): its first
        ray-casting sensor, or the one named ``sensor`` (``"lidar2d"``, ``"fmcw_lidar2d"``)."""
        for k, (b, spec) in enumerate(self.scene.lidars):
            if b == body and (sensor is None or spec.name == sensor):
                return k
        return -1

    def _lidar_sensor(self, name: str, what: str, sensor: str | None = None) -> int:
        i = self.index(name)
        s = self.lidar_slot(i, sensor)
        if s < 0:
            with_lidar = [f"{self.scene.names[b]} ({spec.name})" for b, spec in self.scene.lidars]
            kind = "lidar2d sensor (nor fmcw_lidar2d)" if sensor is None else f"{sensor} sensor"
            raise ValueError(f"World.{what}: body {name!r} has no {kind}; bodies with one: "
                             f"{with_lidar}")
        return s

    def seed_lidar(self, seed: int) -> None:
        """Seed the lidar noise streams: env i draws as a single world seeded ``seed + i``."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"World.seed_lidar: seed must be an int >= 0, got "
                             f"{short_repr(seed)}")
        self.lidar_rng[:] = seed_states(int(seed), self.num_envs)

    def _readings(self, s: int, env: Any) -> Any:
        """Sensor s's readings in ``env`` (an int or a slice): ranges; (ranges, velocities)
        for a lidar2d with ``has_velocity``; (ranges, radial velocities) for an FMCW lidar."""
        L = self.lidar_arrays
        n = int(L.nbeam[s])
        spec = self.scene.lidars[s][1]
        ranges = L.ranges[env, s, :n].copy()
        if spec.fmcw:
            return ranges, L.radial[env, s, :n].copy()
        if spec.has_velocity:
            return ranges, L.vels[env, s, :n].copy()
        return ranges

    def lidar(self, name: str, env: int = 0, sensor: str | None = None) -> Any:
        """Scan ``name``'s lidar in ``env`` now (its first ray-casting sensor, or the one
        named ``sensor``): ranges (number,) [m]; for a lidar2d with ``has_velocity``, (ranges,
        velocities (number, 2) [m/s, world frame] of the hit bodies at the hit points); for an
        ``fmcw_lidar2d``, (ranges, radial velocities (number,) [m/s], positive away from the
        sensor). Every ray-casting sensor of ``env`` is scanned (their noise draws follow
        their order in the scene)."""
        s = self._lidar_sensor(name, "lidar", sensor)
        if isinstance(env, bool) or not isinstance(env, (int, np.integer)) \
                or not 0 <= env < self.num_envs:
            raise IndexError(f"World.lidar: env {short_repr(env)} out of range "
                             f"[0, {self.num_envs})")
        scan_env(int(env), self.arrays, self.lidar_arrays, self.lidar_rng)
        return self._readings(s, int(env))

    def lidar_array(self, name: str, sensor: str | None = None) -> Any:
        """Scan every env now: as :meth:`lidar`, with a leading env axis (ranges
        (num_envs, number) [m], ...)."""
        s = self._lidar_sensor(name, "lidar_array", sensor)
        L = self.lidar_arrays
        parallel = self.num_envs >= PARALLEL_MIN_ENVS
        if parallel and self.num_threads is not None:
            numba.set_num_threads(self.num_threads)
        (scan_parallel if parallel else scan_serial)(self.arrays, L, self.lidar_rng)
        return self._readings(s, slice(None))

    def lidar_spec(self, name: str, sensor: str | None = None) -> Any:
        """The :class:`~push_envs.physics.lidar.LidarSpec` of ``name``'s lidar (its first, or
        the one named ``sensor``)."""
        return self.scene.lidars[self._lidar_sensor(name, "lidar_spec", sensor)][1]

    def lidar_beams(self, name: str, env: int = 0,
                    sensor: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Noise-free beam geometry of ``name``'s lidar in ``env``: the sensor origin (2,) [m]
        and the world angle of every beam (number,) [rad]."""
        return self.beams(self._lidar_sensor(name, "lidar_beams", sensor), env)

    def beams(self, s: int, env: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Noise-free beam geometry of ray-casting sensor s (its row of ``lidar_arrays``) in
        ``env``: origin (2,) [m] and beam angles (number,) [rad] (world frame)."""
        L = self.lidar_arrays
        x, y, th = self.state(self.scene.names[int(L.body[s])])[env, :3]
        prm = L.prm[s]
        c, sn = np.cos(th), np.sin(th)
        origin = np.array([x + c * prm[LP_OFFX] - sn * prm[LP_OFFY],
                           y + sn * prm[LP_OFFX] + c * prm[LP_OFFY]])
        return origin, th + prm[LP_OFFT] + L.angles[s, :int(L.nbeam[s])]

    def fov(self, name: str) -> tuple[float, float] | None:
        """``name``'s field of view: (fov [rad], fov_radius [m]) with IR-SIM's defaults (its
        ``fov`` / ``fov_radius`` keys, else its lidar's angle_range and range_max), or None."""
        i = self.index(name)
        bodies = self.scene.spec.bodies  # the grid map (last) has no spec and no view
        return fov_of(bodies[i]) if i < len(bodies) else None

    @property
    def fov_radii(self) -> np.ndarray:
        """(B,) each body's minimum bounding radius [m] at size 1 (IR-SIM's ``radius``, what
        the field of view tests against)."""
        if self._fov_radii is None:
            self._fov_radii = bounding_radii(self.scene)
        return self._fov_radii

    def fov_detected(self, name: str) -> np.ndarray:
        """Which bodies ``name`` sees now, per env: (num_envs, num_bodies) bool in
        :attr:`names` order (itself never), by IR-SIM's ``get_fov_detected_objects`` (see
        physics/fov.py). ValueError when the body has no field of view."""
        view = self.fov(name)
        if view is None:
            raise ValueError(f"World.fov_detected: body {name!r} has no field of view (no "
                             f"`fov` key and no lidar to take it from)")
        out = np.zeros((self.num_envs, self.scene.num_bodies), np.uint8)
        detect_all(self.index(name), view[0], view[1], self.arrays, self.fov_radii, out)
        return out.astype(bool)

    @property
    def max_penetration(self) -> np.ndarray:
        """Deepest overlap left after the last step's solve, per env [m]."""
        return self.health[:, HL_MAXPEN].copy()

    @property
    def sweeps(self) -> np.ndarray:
        """Most Gauss-Seidel sweeps a sub-step of the last step used, per env."""
        return self.health[:, HL_SWEEPS].astype(np.int64)

    @property
    def substeps(self) -> np.ndarray:
        """Sub-steps the last step was split into, per env."""
        return self.health[:, HL_NSUB].astype(np.int64)

    @property
    def sleeping(self) -> bool:
        """Whether bodies at rest sleep (see physics/sleeping.py; by default on in scenes of
        at least SLEEP_MIN_BODIES (24) movable bodies, off in smaller ones). Sleeping is
        exact: a rollout is bit-identical with it on or off, only faster in a resting crowd.
        The ``set_state`` / ``set_velocity`` / ``set_omega`` / ``set_scale`` setters and
        ``reset`` wake the bodies they change; a pose written straight into ``pos``/``ang``
        wakes its body too (a body sleeps only at the pose it fell asleep at)."""
        return bool(self.prm[PR_SLEEP])

    @sleeping.setter
    def sleeping(self, on: bool) -> None:
        if not isinstance(on, (bool, np.bool_)):
            raise ValueError(f"World.sleeping must be True or False, got {short_repr(on)}")
        self.prm[PR_SLEEP] = 1.0 if on else 0.0
        physics_for(self.prm)  # sleeping's stages are reached by address (pipeline.step_env)
        if not on:
            self._bis[:, :, IS_SLEEP] = 0  # nobody sleeps (or skips its free motion) any more
        self._stale_sleep(slice(None))

    def _mixing(self, which: str) -> Any:
        return self._mixers.get(which)

    def _set_mixing(self, which: str, rule: Any, col: int) -> None:
        code, address = rule_code(rule, f"World.{which}")
        self.prm[col] = float(code)
        self.prm[col + PR_FMIXFN - PR_FMIX] = float(address)
        self._mixers[which] = rule

    @property
    def friction_mixing(self) -> Any:
        """How a contact's friction is made from its two bodies' coefficients: ``"mean"``
        (the default, IR-SIM's), ``"geometric"`` (Box2D's), ``"min"``, ``"max"``, or a numba
        cfunc of signature :data:`push_envs.physics.mixing.MIX_SIGNATURE` (mixing.py).
        Set from the scene's ``world.friction_mixing``; takes effect from the next step."""
        return self._mixing("friction_mixing")

    @friction_mixing.setter
    def friction_mixing(self, rule: Any) -> None:
        self._set_mixing("friction_mixing", rule, PR_FMIX)

    @property
    def restitution_mixing(self) -> Any:
        """How a contact's restitution is made from its two bodies' (the same choices as
        :attr:`friction_mixing`; Box2D's is ``"max"``). A cfunc's result is clamped to
        [0, 1]."""
        return self._mixing("restitution_mixing")

    @restitution_mixing.setter
    def restitution_mixing(self, rule: Any) -> None:
        self._set_mixing("restitution_mixing", rule, PR_RMIX)

    def set_bullet(self, name: str, on: bool = True) -> None:
        """Make ``name`` a bullet (or not), in every env: it is then swept continuously
        against every body in every sub-step and left out of the sub-step count, so a fast
        small body does not split its whole env's step (see the physics docs, 'Continuous
        collision'). The scene key is ``bullet: true``."""
        i = self._movable(name, "set_bullet")
        if not isinstance(on, (bool, np.bool_)):
            raise ValueError(f"World.set_bullet: on must be True or False, got "
                             f"{short_repr(on)}")
        if on:
            self.bint[i, BI_FLAGS] |= BODY_BULLET
        else:
            self.bint[i, BI_FLAGS] &= ~BODY_BULLET

    def is_bullet(self, name: str) -> bool:
        """Whether ``name`` is a bullet (:meth:`set_bullet`)."""
        return bool(self.bint[self.index(name), BI_FLAGS] & BODY_BULLET)

    @property
    def asleep(self) -> np.ndarray:
        """Bodies asleep in the last sub-step of the last step, per env."""
        return self.health[:, HL_SLEEP].astype(np.int64)

    def at_rest(self, name: str) -> np.ndarray:
        """Per env, whether ``name`` settled in the last step (exactly still, no overlap
        left): it sleeps from the next step on until an awake body reaches it."""
        return self._bis[:, self._movable(name, "at_rest"), IS_SLEEP] != 0

    @property
    def pair_overflow(self) -> np.ndarray:
        """Candidate pairs dropped in the last step, per env: always 0, since a step that
        finds more pairs than the buffer holds is rolled back, the buffer grown and the step
        taken again (see :attr:`pair_capacity`)."""
        return np.zeros(self.num_envs, np.int64)

    @property
    def pair_capacity(self) -> int:
        """Candidate pairs the buffers hold per env (grows on demand)."""
        return int(self._prs.shape[1])

    # ------------------------------------------------------------------------------ misc
    def state_hash(self) -> str:
        """SHA-256 over every env's poses and velocities (for golden-hash regression tests)."""
        h = hashlib.sha256()
        for a in (self.pos, self.ang, self.vel, self.omg, self.drv):
            h.update(np.ascontiguousarray(a).tobytes())
        if np.any(self.scene.bint[:, BI_DRIVE] == 4):  # omni_angular drives' yaw rate too
            h.update(np.ascontiguousarray(self.yaw[:, :, 1]).tobytes())
        return h.hexdigest()

    def kinematics(self, name: str) -> str | None:
        """Drive model of ``name``: 'diff', 'omni', 'omni_angular', 'acker' or None."""
        return DRIVE_NAMES[int(self.scene.bint[self.index(name), BI_DRIVE])]

    def __repr__(self) -> str:
        return (f"World(bodies={len(self.scene.names)}, num_envs={self.num_envs}, "
                f"dt={self.dt:g}s, source={self.scene.spec.source!r})")


__all__ = ["World", "ContactReport", "PARALLEL_MIN_ENVS"]
