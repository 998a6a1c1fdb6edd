"""The generic batched env (:class:`PushVectorEnv`) and single env (:class:`PushEnv`).

Nothing here knows a task. A task is a :class:`~push_envs.core.task.TaskSpec` (its scene,
arguments, observation layout, goal and info columns) plus the compiled hooks of its module;
:func:`task_envs` turns one into the two Gymnasium classes. :class:`PushVectorEnv` steps a
World of ``num_envs`` copies with the task's generated kernels (actions, physics, hooks,
autoreset in one call); :class:`PushEnv` is the same core with ``num_envs=1``, so a single env
and env i of a batch agree bit for bit.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import ClassVar

import gymnasium as gym
import numba
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from gymnasium.vector import VectorEnv

from ..physics import SceneError
from ..physics import World
from ..physics import load_scene
from ..physics import sensor_registry
from ..physics.arrays import WORLD_ABI
from ..physics.errors import short_repr
from ..physics.fastcall import entry_point
from ..physics.layout import BI_KIND
from ..physics.layout import DRIVEN
from ..physics.pipeline import physics_for
from ..physics.rng import seed_states
from ..physics.rng import seed_states_of
from ..physics.safe_yaml import read_scene_yaml
from ..physics.scene import compile_scene
from ..physics.world import PARALLEL_MIN_ENVS
from . import obs_layout as L
from .codegen import task_kernels
from .step import AR_DISABLED
from .step import AR_NEXT_STEP
from .step import AR_SAME_STEP
from .step import CFG_GOAL
from .step import CFG_LEN
from .step import CFG_MAX_STEPS
from .step import CFG_MODE
from .step import CFG_SPARSE
from .step import ENV_ABI
from .step import FN_LEN
from .step import FN_PHYSICS
from .step import FN_TASK
from .step import IF_MAXPEN
from .step import IF_SUCCESS
from .step import IF_SWEEPS
from .step import IN_ANG
from .step import IN_DRV0
from .step import IN_DRV1
from .step import IN_LEN
from .step import IN_OMG
from .step import IN_VX
from .step import IN_VY
from .step import IN_X
from .step import IN_Y
from .step import INFO_TASK
from .step import RESET
from .step import RETRY
from .step import ROWS_ABI
from .step import SN_ARR
from .step import SN_AT
from .step import SN_FN
from .step import SN_LEN
from .step import STEP
from .step import TASK_ABI
from .step import EnvArrays
from .step import RowsArgs
from .step import TaskArrays
from .step import run_parallel
from .step import run_serial
from .task import TaskSpec
from .task import choice
from .task import integer
from .task import number

ROBOTS = ("diff", "omni", "acker")
OBS_MODES = ("state", "goal", "pixels", "pixels+state")
PIXEL_MODES = ("pixels", "pixels+state")
REWARD_TYPES = ("dense", "sparse")
# The arguments every task takes, with their defaults as the docs print them and one line of
# meaning each (the task's own follow from its TaskSpec.arguments).
COMMON_ARG_DOCS: dict[str, tuple[str, str]] = {
    "robot": ("the task's", 'the drive: "diff", "omni" or "acker"'),
    "reward_type": ('"dense"', '"dense" (shaped, see Rewards) or "sparse" (0 on success, else '
                    '-1)'),
    "obs_mode": ('"state"', '"state", "goal" (a Dict for HER), "pixels" or "pixels+state"'),
    "scene": ("the task's", "a YAML path or a scene mapping replacing the task's scene"),
    "max_episode_steps": ("the task's", "truncation length [steps], an int >= 1"),
    "render_mode": ("None", 'None, "human" or "rgb_array"'),
    "render_envs": ("4", "envs a batch's rgb_array render() draws (vector env)"),
    "autoreset_mode": ('"NextStep"', "the vector env's autoreset: NEXT_STEP, SAME_STEP or "
                       "DISABLED"),
    "num_threads": ("None", "numba threads of a batch of >= 16 envs (None: "
                    "NUMBA_NUM_THREADS)"),
    "lidar": ("None", "a dict of lidar2d keys (number, range_max, angle_range, noise ...): "
              "each robot's lidar, observed after the state columns"),
    "pixel_size": ("96", "[px] side, or (height, width), of the pixel observation"),
    "pixel_view": ('"top"', '"top" (the whole arena) or "ego" (centred on the robot, turned '
                   "with it)"),
    "pixel_fov": ("3.0 (ego)", "[m] width of the ego view"),
}
COMMON_ARGS = tuple(COMMON_ARG_DOCS)
PIXEL_SIZE_LIMITS = (8, 1024)  # [px] per side
PIXEL_VIEWS = ("top", "ego")
PIXEL_FOV_DEFAULT = 3.0  # [m] width of the ego view
PIXEL_FOV_MAX = 1000.0  # [m]
# [m] Narrowest ego view. The goal marks are drawn as pygame draws them, by walking their
# outline (Bresenham) and their success circle (midpoint circle) pixel by pixel, including
# the pixels off the image, so a frame's work grows as (mark size / pixel_fov) x pixels: 0.44 s
# at 1e-6 m. At 1 cm a 0.1 m success circle is 10 image widths across, a few thousand steps.
PIXEL_FOV_MIN = 0.01


def _check_pixel_size(value: Any) -> tuple[int, int]:
    """``pixel_size``: an int (square) or (height, width), each in PIXEL_SIZE_LIMITS."""
    lo, hi = PIXEL_SIZE_LIMITS
    pair = (value, value) if isinstance(value, (int, np.integer)) else value
    try:
        h, w = pair
    except (TypeError, ValueError):
        h = w = None
    ok = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and lo <= v <= hi
             for v in (h, w))
    if not ok:
        raise ValueError(f"pixel_size must be an int or a (height, width) pair of ints in "
                         f"[{lo}, {hi}], got {short_repr(value)}")
    return int(h), int(w)


def _check_pixel_view(view: Any, fov: Any, obs_mode: str) -> tuple[str, float]:
    """``pixel_view`` ("top" | "ego") and ``pixel_fov`` (the ego view's width [m], None: the
    default); the ego view needs a pixel observation, and a width only means something there.
    """
    view = choice(*PIXEL_VIEWS)("pixel_view", view)
    if view == "top":
        if fov is not None:
            raise ValueError(f"pixel_fov sets the width [m] of the ego view; it needs "
                             f"pixel_view='ego', got pixel_view='top' and pixel_fov={fov!r}")
        return view, 0.0
    if obs_mode not in PIXEL_MODES:
        raise ValueError(f"pixel_view='ego' needs a pixel observation: obs_mode must be one of "
                         f"{list(PIXEL_MODES)}, got {obs_mode!r}")
    fov = PIXEL_FOV_DEFAULT if fov is None else fov
    return view, number(PIXEL_FOV_MIN, PIXEL_FOV_MAX, unit=" [m]")("pixel_fov", fov)


def _check_lidar(value: Any) -> dict | None:
    """``lidar``: None, or a mapping of lidar2d keys (IR-SIM's; see
    push_envs/sensors/lidar2d.py), checked by the lidar2d sensor's own parser."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError(f"lidar must be None or a dict of lidar2d keys (number, range_max, "
                         f"angle_range, ...), got {short_repr(value)}")
    for key in ("name", "type"):
        # The argument only ever makes a lidar2d: another sensor name would otherwise reach
        # that sensor's parser, which blames the keys of the lidar instead of the name.
        if key in value and value[key] != "lidar2d":
            raise ValueError(f"lidar: the lidar argument makes a lidar2d sensor, so its "
                             f"{key!r} must be 'lidar2d' (or left out), got "
                             f"{short_repr(value[key])}")
    raw = {"name": "lidar2d", **dict(value)}
    sensor_registry.lookup("lidar2d").parse(raw, "lidar")  # a SceneError naming the key
    return raw
SEED_LIMIT = 2**64  # per-env streams are seeded seed + i as 64-bit integers


def is_int(value: Any) -> bool:
    """A Python or numpy integer, not a bool (True would silently mean 1)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_seed(seed: Any) -> int | None:
    """A single env's ``reset(seed=...)``: None or an int (numpy integers alike) in
    [0, 2**64), returned as a Python int (Gymnasium's seeding takes Python ints only)."""
    if seed is None:
        return None
    if not is_int(seed) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"seed must be None or an int in [0, 2**64), got {short_repr(seed)}")
    return int(seed)


ACTION_KINDS = "iuf"  # numpy dtype kinds an action may have: ints and floats


def check_action_dtype(action: np.ndarray, what: str = "action") -> None:
    """Refuse an action array that is not real numbers: a complex one would lose its imaginary
    part in the cast to float64, and bools, strings or objects are no velocity commands. One
    dtype check on the array, never a loop over its elements (this is on the step path)."""
    if action.dtype.kind not in ACTION_KINDS:
        raise ValueError(f"{what} must be real numbers (an int or float array), got dtype "
                         f"{action.dtype}")


def env_seeds(seed: Any, num_envs: int) -> list[int] | None:
    """The per-env seeds of a batch's ``reset(seed=...)``, as Gymnasium's ``VectorEnv.reset``
    takes them: None; an int ``s`` (env i gets ``s + i``, so ``s + num_envs`` must not pass
    2**64, where the streams would wrap onto env 0's); or one int per env (a list, tuple or 1-D
    integer array: env i gets ``seed[i]``), each in [0, 2**64). Numpy integers count as ints.
    """
    if seed is None:
        return None
    if is_int(seed):
        if not 0 <= seed <= SEED_LIMIT - num_envs:
            raise ValueError(f"seed must be None, an int in [0, 2**64 - num_envs] (env i is "
                             f"seeded seed + i) or a list of {num_envs} ints (env i is seeded "
                             f"seed[i]), got {short_repr(seed)}")
        return [int(seed) + i for i in range(num_envs)]
    if isinstance(seed, np.ndarray):
        ok = seed.ndim == 1 and seed.dtype.kind in "iu"
        items = seed.tolist() if ok else None
    else:
        ok = isinstance(seed, (list, tuple))
        items = list(seed) if ok else None
    if not ok or len(items) != num_envs or \
            not all(is_int(s) and 0 <= s < SEED_LIMIT for s in items):
        raise ValueError(f"seed must be None, an int (env i is seeded seed + i) or a list of "
                         f"{num_envs} ints in [0, 2**64), one per env (env i is seeded "
                         f"seed[i]), got {short_repr(seed)}")
    return [int(s) for s in items]

# Drive variants the `robot` argument swaps into the scene's robot.
ROBOT_VARIANTS: dict[str, dict[str, Any]] = {
    "diff": {"kinematics": {"name": "diff"}, "vel_min": [-1.0, -2.0], "vel_max": [1.0, 2.0]},
    "omni": {"kinematics": {"name": "omni"}, "vel_min": [-1.0, -1.0], "vel_max": [1.0, 1.0]},
    "acker": {"kinematics": {"name": "acker", "wheelbase": 0.25}, "vel_min": [-1.0, -0.6],
              "vel_max": [1.0, 0.6], "shape": {"name": "rectangle", "length": 0.35, "width": 0.22}},
}

_AR = {AutoresetMode.NEXT_STEP: AR_NEXT_STEP, AutoresetMode.SAME_STEP: AR_SAME_STEP,
       AutoresetMode.DISABLED: AR_DISABLED}


def _check_autoreset(value: Any) -> AutoresetMode:
    if isinstance(value, AutoresetMode):
        return value
    try:
        return AutoresetMode(value)
    except ValueError:
        raise ValueError(f"autoreset_mode must be one of {[m.value for m in AutoresetMode]}, "
                         f"got {value!r}") from None


class PushVectorEnv(VectorEnv):
    """A batch of ``num_envs`` episodes of one pushing task, stepped by compiled kernels.

    See the task classes (e.g. :class:`~push_envs.tasks.pushing.push_box.PushBoxEnv`) for the
    observation table, reward and episode end. Arguments are those of the single env, plus
    ``num_envs``, ``autoreset_mode`` and ``num_threads`` (numba threads for ``prange``).
    """

    task_class: ClassVar[type[TaskSpec]]
    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "rgb_array"],
        "render_fps": 10,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(self, num_envs: int = 1, *, robot: str | None = None,
                 reward_type: str = "dense", obs_mode: str = "state",
                 scene: str | os.PathLike | Mapping | None = None,
                 max_episode_steps: int | None = None,
                 render_mode: str | None = None, render_envs: int = 4,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 num_threads: int | None = None, lidar: Mapping | None = None,
                 pixel_size: int | tuple[int, int] = 96, pixel_view: str = "top",
                 pixel_fov: float | None = None, **task_args: Any) -> None:
        tc = self.task_class
        self.robot = choice(*ROBOTS)("robot", tc.default_robot if robot is None else robot)
        self.reward_type = choice(*REWARD_TYPES)("reward_type", reward_type)
        self.obs_mode = choice(*OBS_MODES)("obs_mode", obs_mode)
        self._lidar_arg = _check_lidar(lidar)
        self.pixel_size = _check_pixel_size(pixel_size)
        self.pixel_view, self.pixel_fov = _check_pixel_view(pixel_view, pixel_fov,
                                                            self.obs_mode)
        if render_mode is not None:
            choice(*self.metadata["render_modes"])("render_mode", render_mode)
        self.render_mode = render_mode
        self.autoreset_mode = _check_autoreset(autoreset_mode)
        self.metadata = dict(self.metadata, autoreset_mode=self.autoreset_mode)
        limit = tc.max_episode_steps if max_episode_steps is None else max_episode_steps
        self.max_episode_steps = integer(1, 10**12)("max_episode_steps", limit)
        self.task = tc(tc.resolve_args(task_args, COMMON_ARGS))

        self.world = World(self._compile(scene), num_envs=num_envs, num_threads=num_threads)
        w = self.world
        E = w.num_envs
        self.num_envs = E
        sc = w.scene
        robot_indices = [sc.index[name] for name in tc.driven_bodies()]
        for name, i in zip(tc.driven_bodies(), robot_indices, strict=True):
            if sc.bint[i, BI_KIND] != DRIVEN:
                raise SceneError(f"{sc.spec.source}: robot '{name}' must have kinematics")
        self._check_region_inside_world()
        specs = [sc.spec.bodies[i] for i in robot_indices]
        act_lo = np.concatenate([np.array(s.vel_min, np.float64) for s in specs])
        act_span = np.concatenate([np.array(s.vel_max, np.float64) for s in specs]) - act_lo

        n_goal = len(self.task.goal_fields)
        t = self.task.build(self)
        task_layout = self.task.observation()
        self.task_arrays = TaskArrays(ip=t.ip, fp=t.fp, goal=t.goal, mem=t.mem,
                                      ag=np.zeros((E, n_goal)), dg=np.zeros((E, n_goal)),
                                      at=L.offsets(task_layout, self.task.args,
                                                   L.names(task_layout)))
        # The sensors this env observes (push_envs/sensors/, found by name in the registry):
        # every sensor each driven robot carries, robots in action order, each robot's in the
        # scene's order, then the pixel image. Each writes its fields after the task's columns
        # (a second robot's named after it: "r1_lidar") and is called through its row of
        # V.sensors; the step knows none of them.
        self.sensors: list[Any] = []
        self._layout = tuple(task_layout)
        self.sensor_fields: dict[str, tuple[str, ...]] = {}  # robot -> its sensors' fields
        starts = []  # each sensor's first column (-1: it observes no column)
        for k, (name, b) in enumerate(zip(tc.driven_bodies(), robot_indices, strict=True)):
            mine: list[str] = []
            for decl, spec in sensor_registry.attached(sc.spec.bodies[b]):
                if decl.sense is None:
                    continue
                sensor = decl(self, b, spec)
                fields = tuple(f if k == 0 else dataclasses.replace(f, name=f"{name}_{f.name}",
                                                                     doc=f"{name}: {f.doc}")
                               for f in sensor.fields())
                self.sensors.append(sensor)
                starts.append(L.size(self._layout, self.task.args) if fields else -1)
                self._layout += fields
                mine += [f.name for f in fields]
            self.sensor_fields[name] = tuple(mine)
        H, Wd = self.pixel_size
        pixels = self.obs_mode in PIXEL_MODES
        self._image = None
        if pixels:
            decl = sensor_registry.lookup("pixels")
            spec = decl.parse({"size": (H, Wd), "view": self.pixel_view, "fov": self.pixel_fov},
                              "pixels")
            self._image = decl(self, robot_indices[0], spec)
            self.sensors.append(self._image)
            starts.append(-1)
            self.raster = self._image.raster  # the rasteriser's tables (for tests, benchmarks)
        n_state = L.size(self._layout, self.task.args)
        self._n_state = n_state
        self._info_names = [("is_success", bool)] + list(tc.info_fields) + \
            [("max_penetration", float), ("sweeps", int)]
        self._info_cols = [IF_SUCCESS] + list(range(INFO_TASK, INFO_TASK + len(tc.info_fields))) \
            + [IF_MAXPEN, IF_SWEEPS]
        # (key, column, 0 float / 1 bool / 2 int), for the per-step info of a single env.
        self._info_spec = [(key, col, 1 if dtype is bool else 2 if dtype is int else 0)
                           for (key, dtype), col in zip(self._info_names, self._info_cols,
                                                        strict=True)]
        n_info = INFO_TASK + len(tc.info_fields)
        # The goal vectors ride at the end of each observation row, so a SAME_STEP final
        # observation keeps the goals of the episode that ended.
        n_row = n_state + 2 * n_goal
        cfg = np.zeros(CFG_LEN, np.int64)
        cfg[CFG_MODE] = _AR[self.autoreset_mode]
        cfg[CFG_MAX_STEPS] = self.max_episode_steps
        cfg[CFG_SPARSE] = 1 if self.reward_type == "sparse" else 0
        cfg[CFG_GOAL] = n_state
        # The observed sensors' table; their arrays' addresses are filled in by _pack().
        table = np.zeros((len(self.sensors), SN_LEN), np.int64)
        for k, (x, at) in enumerate(zip(self.sensors, starts, strict=True)):
            table[k, SN_FN] = type(x).sense.address
            table[k, SN_AT] = at
        init = np.zeros((sc.num_bodies, IN_LEN))
        init[:, [IN_X, IN_Y]] = w.pos[0]
        init[:, IN_ANG] = w.ang[0]
        init[:, [IN_VX, IN_VY]] = w.vel[0]
        init[:, IN_OMG] = w.omg[0]
        init[:, [IN_DRV0, IN_DRV1]] = w.drv[0]
        self.env_arrays = EnvArrays(
            robots=np.array(robot_indices, np.int64), act_lo=act_lo, act_span=act_span,
            cfg=cfg, init=init, base_mass=sc.mass.copy(), base_inertia=sc.inertia.copy(),
            base_fric=sc.friction.copy(),
            rng=seed_states(int(np.random.SeedSequence().entropy % (2**63)), E),
            tstep=np.zeros(E, np.int64), need_reset=np.zeros(E, np.uint8),
            obs=np.zeros((E, n_row)), final_obs=np.zeros((E, n_row)), rew=np.zeros(E),
            term=np.zeros(E, np.bool_), trunc=np.zeros(E, np.bool_), info=np.zeros((E, n_info)),
            final_info=np.zeros((E, n_info)),
            pix=np.zeros((E if pixels else 0, H, Wd, 3), np.uint8), sensors=table)
        ENV_ABI.check(self.env_arrays)
        TASK_ABI.check(self.task_arrays)
        self._kernels = task_kernels(tc)
        # The function table of the generic kernels (step.py): the engine and the task's
        # hooks (the sensors are reached through V.sensors).
        fns = np.zeros(FN_LEN, np.int64)
        fns[FN_PHYSICS] = physics_for(self.world.prm).address
        fns[FN_TASK] = self._kernels.HOOKS.address
        self._fns = fns
        # The stages' other arguments: the actions are copied in by step(), the mask by
        # reset() and the retry.
        self._rows = RowsArgs(actions=np.zeros((E, 2 * len(self.env_arrays.robots))),
                              mask=np.zeros(E, np.uint8), fns=fns)
        ROWS_ABI.check(self._rows)
        self._pack()
        self._parallel = E >= PARALLEL_MIN_ENVS
        self._run = entry_point(run_parallel if self._parallel else run_serial, 0, *self._args)
        self._run_serial = entry_point(run_serial, 0, *self._args)
        self._stages = {k: f.address for k, f in (("step", STEP), ("retry", RETRY),
                                                  ("reset", RESET))}
        self._step_stage = self._stages["step"]
        V = self.env_arrays
        self._obs, self._rew, self._term, self._trunc = V.obs, V.rew, V.term, V.trunc
        self._info_f, self._final_info, self._final_obs = V.info, V.final_info, V.final_obs
        self._need_reset, self._cfg = V.need_reset, cfg
        self._seeded = False
        self._started = False
        self._num_threads = num_threads
        self._renderer: Any = None
        self.render_envs = integer(1, 4096)("render_envs", render_envs)
        self._trails: list[list[tuple[float, float]]] = [[] for _ in range(min(E, 64))]
        self.hud: list[str] = []

        self.single_observation_space = self._make_obs_space()
        self.single_action_space = spaces.Box(-1.0, 1.0, (2 * len(V.robots),), np.float32)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, E)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, E)
        self._all_true = np.ones(E, bool)
        self._all_true.setflags(write=False)

    # ------------------------------------------------------------------ construction helpers
    def _compile(self, scene: str | os.PathLike | Mapping | None):
        """Load the task's YAML (or ``scene``: a path or a scene mapping), swap in the robot
        variant and compile it: the file is parsed once and each shape built once, and every
        error names the file (or ``<scene mapping>``) and the key."""
        tc = self.task_class
        if isinstance(scene, Mapping):
            source, base_dir = "<scene mapping>", None
            raw: Any = dict(scene)
        else:
            if scene is not None and not isinstance(scene, (str, os.PathLike)):
                raise SceneError(f"{tc.id}: scene must be a YAML path or a scene mapping, got "
                                 f"{short_repr(scene)}")
            path = Path(scene) if scene is not None else tc.scene_path()
            source, base_dir = str(path), str(path.parent)
            raw = read_scene_yaml(source)
        if not isinstance(raw, Mapping):
            raise SceneError(f"{source}: a scene is a mapping with world / robot / obstacle "
                             f"sections, got {short_repr(raw)}")
        raw = self.task.edit_scene(dict(raw), source)
        robots = raw.get("robot") or []
        robots = [robots] if isinstance(robots, Mapping) else list(robots)
        for name in tc.driven_bodies():
            robots = self._swap_robot(robots, name, source)
        raw["robot"] = robots
        return compile_scene(load_scene(raw, source=source, base_dir=base_dir))

    def _swap_robot(self, robots: list, name: str, source: str) -> list:
        """``robots`` (the scene's robot entries) with body ``name`` given the drive variant
        of the ``robot`` argument; a SceneError when the scene lacks it."""
        tc = self.task_class
        for i, body in enumerate(robots):
            if isinstance(body, Mapping) and body.get("name", f"robot_{i}") == name:
                variant = ROBOT_VARIANTS[self.robot]
                body = dict(body)
                kin = body.get("kinematics")
                tau = kin.get("tau") if isinstance(kin, Mapping) else None
                body["kinematics"] = dict(variant["kinematics"])
                if tau is not None:
                    body["kinematics"]["tau"] = tau
                for key in ("vel_min", "vel_max", "shape"):
                    if key in variant:
                        body[key] = copy.deepcopy(variant[key])
                if self._lidar_arg is not None:
                    # The `lidar` argument replaces a lidar2d the scene gives the robot.
                    sensors = body.get("sensors") or []
                    sensors = list(sensors) if isinstance(sensors, (list, tuple)) else sensors
                    if isinstance(sensors, list):
                        body["sensors"] = [x for x in sensors if not (
                            isinstance(x, Mapping) and "lidar2d" in (x.get("name"),
                                                                     x.get("type")))] + \
                            [dict(self._lidar_arg)]
                state = body.get("state", [0, 0, 0])
                state = list(state)[:3] if isinstance(state, (list, tuple)) else state
                if isinstance(state, list):
                    state = state + [0.0] * (3 - len(state)) + \
                        ([0.0] if self.robot == "acker" else [])
                body["state"] = state
                robots[i] = body
                return robots
        raise SceneError(f"{source}: robot body '{name}' is missing; the {tc.id} task drives it")

    @property
    def observation_layout(self) -> tuple:
        """The state observation's layout: the task's, then the fields of the sensors the
        robot carries (a lidar's block, ...), in order."""
        return self._layout

    def _reach(self) -> float:
        """Largest coordinate magnitude a body can have in the scene [m]."""
        wspec = self.world.scene.spec.world
        return 2.0 * max(wspec.width, wspec.height) + abs(wspec.offset[0]) + abs(wspec.offset[1])

    def _check_region_inside_world(self) -> None:
        """A spawn region outside the world's bounds would put bodies outside the walls."""
        reg = self.task.args.get("spawn_region")
        if reg is None:
            return
        wspec = self.world.scene.spec.world
        x0, y0 = wspec.offset
        x1, y1 = x0 + wspec.width, y0 + wspec.height
        if reg[0] < x0 or reg[1] < y0 or reg[2] > x1 or reg[3] > y1:
            raise ValueError(f"spawn_region {reg} must lie inside the scene's world bounds "
                             f"({x0:g}, {y0:g}, {x1:g}, {y1:g}) [m] of "
                             f"{self.world.scene.spec.source}")

    def _make_obs_space(self) -> spaces.Space:
        lo, hi = L.bounds(self._layout, self.task.args)
        # Unbounded position columns are bounded by the scene's extent.
        r = 2.0 * self._reach()
        lo[np.isinf(lo)] = -r
        hi[np.isinf(hi)] = r
        state = spaces.Box(lo, hi, dtype=np.float32)
        if self.obs_mode == "state":
            return state
        if self.obs_mode in PIXEL_MODES:
            img = spaces.Box(0, 255, (*self.pixel_size, 3), np.uint8)
            if self.obs_mode == "pixels":
                return img
            return spaces.Dict({"pixels": img, "state": state})
        g = spaces.Box(-r, r, (len(self.task.goal_fields),), np.float32)
        return spaces.Dict({"observation": state, "achieved_goal": g, "desired_goal": g})

    # --------------------------------------------------------------------------- goals (HER)
    def compute_reward(self, achieved_goal: np.ndarray, desired_goal: np.ndarray,
                       info: Any = None) -> np.ndarray:
        """Reward of (batches of) achieved vs desired goals, as HER relabelling needs.

        The success test is the task's compiled ``is_success``, the one the step judges with.
        Sparse: 0 on success, -1 otherwise; dense: the task's ``goal_reward``.
        """
        a = np.asarray(achieved_goal, dtype=np.float64)
        g = np.asarray(desired_goal, dtype=np.float64)
        n = len(self.task.goal_fields)
        if a.shape != g.shape or a.shape[-1:] != (n,):
            raise ValueError(f"achieved_goal and desired_goal must have the same shape (..., "
                             f"{n}), got {a.shape} and {g.shape}")
        shape = a.shape[:-1]
        out = np.empty(int(np.prod(shape)))
        self._kernels.goal_rewards(np.ascontiguousarray(a.reshape(-1, n)),
                                   np.ascontiguousarray(g.reshape(-1, n)), self.task_arrays.fp,
                                   self.reward_type == "sparse", out)
        return out.reshape(shape) if shape else out[0]

    # ------------------------------------------------------------------------------ kernels
    def _pack(self) -> None:
        """The kernels' arguments: the env count and the address of each structure's packed
        value (``abi.AbiType.pack``), which also keeps the arrays alive; the observed sensors'
        arrays likewise, their addresses written into ``V.sensors``."""
        self._sensor_packs = [type(x).abi.pack(x.arrays) for x in self.sensors]
        self.env_arrays.sensors[:, SN_ARR] = [p.address for p in self._sensor_packs]
        structs = (self._rows, self.world.arrays, self.env_arrays, self.task_arrays)
        self._packed = tuple(abi.pack(v) for abi, v in
                             zip((ROWS_ABI, WORLD_ABI, ENV_ABI, TASK_ABI), structs,
                                                   strict=True))
        self._args = (self._rows.actions.shape[0], *(p.address for p in self._packed))

    def _current_args(self) -> tuple[int, ...]:
        if self._packed[1].value is not self.world.arrays:
            self._pack()  # the world grew its buffers outside this env (a World.step)
        return self._args

    def _reset_rows(self, mask: np.ndarray) -> None:
        self._rows.mask[:] = mask
        self._run_serial(self._stages["reset"], *self._current_args())
        self.world.steps[mask] = 0
        self._need_reset[mask] = 0
        for e in np.flatnonzero(mask[: len(self._trails)]):
            self._trails[e].clear()
        self._check_spawns(mask, ValueError)

    def _check_spawns(self, rows: np.ndarray, error: type[Exception]) -> None:
        """Refuse the task's arguments when the spawn of an env of ``rows`` (just reset) found
        no place for a body without overlap even after the task drew it again: its episode
        must not start, so the batch needs a reset (with arguments that fit) before a step."""
        failed = self.task.spawn_failures(self.task_arrays)
        if failed is None:
            return
        bad = np.flatnonzero(failed & rows)
        if len(bad):
            self._started = False
            raise error(self.task.spawn_refusal(int(bad[0]), len(bad)))

    # ------------------------------------------------------------------------- gym interface
    def reset(self, *, seed: int | Sequence[int] | np.ndarray | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start new episodes. ``seed``: an int seeds env i as a single env seeded
        ``seed + i``; a list (tuple, 1-D int array) of ``num_envs`` ints seeds env i as a single
        env seeded ``seed[i]`` (Gymnasium's per-env form).

        ``options={"reset_mask": mask}`` resets only the masked envs (for DISABLED autoreset).
        """
        seeds = env_seeds(seed, self.num_envs)
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"options must be None or a dict, got {short_repr(options)}")
        mask = np.ones(self.num_envs, bool)
        if options and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"])
            if mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask'] must be a bool array of shape "
                                 f"({self.num_envs},), got {short_repr(options['reset_mask'])}")
        if not self._started and not mask.all():
            raise gym.error.ResetNeeded("the first reset() must reset every env (no reset_mask)")
        if seeds is not None:
            # Seeded only once every argument is accepted: a refused reset changes nothing.
            if is_int(seed):
                self._np_random, self._np_random_seed = seeding.np_random(seeds[0])
            else:
                # Gymnasium's seeding takes one int; the generator of a per-env list is drawn
                # from all of it, and -1 marks a seed that was not one int (as Gymnasium does).
                self._np_random = np.random.Generator(np.random.PCG64(seeds))
                self._np_random_seed = -1
            self.env_arrays.rng[:] = seed_states_of(seeds)
            self._seeded = True
        self._reset_rows(mask)
        self._started = True
        return self._observation(), self._info(self._info_f, mask)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """Advance every env by one step; see the class docs for autoreset."""
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before step()")
        a = np.asarray(actions)
        check_action_dtype(a, "actions")  # before the cast, which would drop an imaginary part
        shape = (self.num_envs,) + self.single_action_space.shape
        if a.shape != shape:
            raise ValueError(f"actions must have shape {shape}, got {np.shape(actions)}")
        if not np.isfinite(a).all():
            raise ValueError(f"actions must be finite; got NaN or inf in {short_repr(actions)}")
        ar = self._cfg[CFG_MODE]
        was_reset = self._need_reset.astype(bool) if ar == AR_NEXT_STEP else None
        self._advance(a)
        done = self._term | self._trunc
        # Rows that started a new episode inside this step (autoreset) spawned: check them.
        fresh = done if ar == AR_SAME_STEP else was_reset
        if fresh is not None and fresh.any():
            self._check_spawns(fresh, RuntimeError)
        info = self._info(self._info_f, None)
        obs = self._observation()
        rew = self._rew.copy()
        final_obs = None
        if ar == AR_SAME_STEP and done.any():
            final_obs = self._observation(final=True)
            info["final_obs"] = final_obs
            info["_final_obs"] = done.copy()
            info["final_info"] = self._info(self._final_info, done)
            info["_final_info"] = done.copy()
        if self.obs_mode == "goal":
            rew = self._goal_rewards(obs, final_obs, done, was_reset)
        if self.render_mode is not None:
            # Rows that started a new episode inside this step get a fresh trail.
            fresh = done if ar == AR_SAME_STEP else (was_reset if was_reset is not None
                                                     else np.zeros_like(done))
            for e in np.flatnonzero(fresh[: len(self._trails)]):
                self._trails[e].clear()
        if self.render_mode == "human":
            self.render()
        self._record_trails()
        return obs, rew, self._term.copy(), self._trunc.copy(), info

    def _goal_rewards(self, obs: dict[str, np.ndarray], final_obs: dict[str, np.ndarray] | None,
                      done: np.ndarray, was_reset: np.ndarray | None) -> np.ndarray:
        """Goal mode: the reward is exactly compute_reward of the returned goals (as HER and
        SB3's checker require), from the final observation where an episode just ended."""
        rew = self.compute_reward(obs["achieved_goal"], obs["desired_goal"], None)
        if final_obs is not None:
            rew[done] = self.compute_reward(final_obs["achieved_goal"][done],
                                            final_obs["desired_goal"][done], None)
        if was_reset is not None:
            rew[was_reset] = 0.0
        return rew

    def _advance(self, a: np.ndarray) -> None:
        """Actions (already checked, float64 (E, 2R)) -> physics -> observation, reward, ends."""
        w = self.world
        if self._parallel and self._num_threads is not None:
            numba.set_num_threads(self._num_threads)
        self._rows.actions[:] = a
        if self._run(self._step_stage, *self._current_args()):
            self._retry()
        w.count_step()

    def _retry(self) -> None:
        """Envs whose physics step was rolled back: grow the pair buffers and step them again
        (observation, reward and autoreset included), or raise when the bodies move too fast
        for the sub-step cap. Never a silent step."""
        w = self.world
        while (over := w.rolled_back(w.active)) is not None:
            self._pack()  # the world's pair buffers were grown: new arrays, the same types
            self._rows.mask[:] = over
            self._run_serial(self._stages["retry"], *self._args)

    # ------------------------------------------------------------------------------ outputs
    def _observation(self, final: bool = False) -> Any:
        """The batch observation (``final``: the final observations of a SAME_STEP step)."""
        V = self.env_arrays
        if self.obs_mode == "pixels":
            return (self._image.arrays.final if final else V.pix).copy()
        src = self._final_obs if final else self._obs
        n = self._n_state
        if self.obs_mode == "goal":
            rows = src.astype(np.float32)
            g = len(self.task.goal_fields)
            return {"observation": rows[:, :n], "achieved_goal": rows[:, n:n + g],
                    "desired_goal": rows[:, n + g:]}
        # One cast, of the state columns only (state mode used to cast the whole buffer and
        # then its state columns again: about 1-2 % of PushT-v0's batched step, both casts).
        rows = src[:, :n].astype(np.float32)
        if self.obs_mode == "pixels+state":
            return {"pixels": (self._image.arrays.final if final else V.pix).copy(),
                    "state": rows}
        return rows

    def _info(self, info_f: np.ndarray, mask: np.ndarray | None) -> dict[str, Any]:
        """Info arrays with Gymnasium's ``_key`` masks (one shared read-only mask)."""
        m = self._all_true if mask is None else mask.copy()
        data = info_f.T.copy()
        out: dict[str, Any] = {}
        for (key, dtype), col in zip(self._info_names, self._info_cols, strict=True):
            out[key] = data[col] if dtype is float else data[col].astype(dtype)
            out["_" + key] = m
        return out

    def single_info(self, env: int = 0) -> dict[str, Any]:
        """Info of one env as Python scalars (the single-env fast path)."""
        row = self._info_f[env].tolist()
        return {key: (row[col] > 0.5 if kind == 1 else int(row[col]) if kind == 2 else row[col])
                for key, col, kind in self._info_spec}

    # --------------------------------------------------------------- the single env's face
    @property
    def info_dtypes(self) -> dict[str, type]:
        """The info keys of a step and their types (bool, int or float), in order."""
        return dict(self._info_names)

    @property
    def seeded(self) -> bool:
        """Whether a reset has seeded the per-env streams."""
        return self._seeded

    def truncate_at(self, limit: int | None) -> None:
        """Truncate episodes after ``limit`` steps [steps] (an int >= 1), or, with None, never:
        for a caller that truncates itself (PushEnv under gym.make's TimeLimit)."""
        self._cfg[CFG_MAX_STEPS] = 0 if limit is None else integer(1, 10**12)(
            "max_episode_steps", limit)

    def step_one(self, action: np.ndarray) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """A batch of one's step (``num_envs == 1``), with the outputs of a single env: the
        observation of env 0, its reward, terminated, truncated and info as Python scalars.
        ``action``: a checked, finite action of shape (2R,) (ints or floats: copied into the
        float64 actions row). The steps of :meth:`_advance` for one env, without the batch's
        reshape and thread count: a single env's whole step is a few microseconds."""
        self._rows.actions[0] = action
        if self._run(self._step_stage, *self._current_args()):
            self._retry()
        self.world.count_step()
        rew = float(self._rew[0])
        if self.obs_mode == "goal":
            batch = self._observation()
            rew = float(self._goal_rewards(batch, None, self._term, None)[0])
            obs = {k: v[0] for k, v in batch.items()}
        elif self.obs_mode == "state":
            obs = self._obs[0, :self._n_state].astype(np.float32)
        else:
            batch = self._observation()
            obs = {k: v[0] for k, v in batch.items()} if isinstance(batch, dict) else batch[0]
        return obs, rew, bool(self._term[0]), bool(self._trunc[0]), self.single_info(0)

    # ------------------------------------------------------------------------------ render
    def record_trails(self) -> None:
        """Append the robots' positions to the trails render() draws (after a step)."""
        self._record_trails()

    def _record_trails(self) -> None:
        if self.render_mode is None:
            return
        xy = self.world.state(self.task_class.robot_body)[: len(self._trails), :2]
        for e, trail in enumerate(self._trails):
            trail.append((float(xy[e, 0]), float(xy[e, 1])))
            del trail[:-400]

    def render_frame(self, env: int = 0) -> np.ndarray | None:
        """Draw env ``env`` (bodies, goal, walls, contacts with force arrows, robot trail)."""
        from .render import Renderer

        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode= to make")
            return None
        if self._renderer is None:
            self._renderer = Renderer(self.world, mode=self.render_mode,
                                      fps=self.metadata["render_fps"],
                                      title=type(self).__name__)
        goals = self.task.render_goals(self, env)
        trail = np.asarray(self._trails[env]) if env < len(self._trails) and \
            self._trails[env] else None
        return self._renderer.render(env, goals=goals, trail=trail, hud=self.hud)

    def render(self) -> tuple[np.ndarray, ...] | None:
        """Frames of the first ``render_envs`` envs (rgb_array), or draw env 0 (human)."""
        if self.render_mode == "human":
            self.render_frame(0)
            return None
        if self.render_mode is None:
            return self.render_frame(0)
        return tuple(self.render_frame(e) for e in range(min(self.render_envs, self.num_envs)))

    # ------------------------------------------------------------------ copies and pickles
    # A deep copy is an independent env in the same state: its own arrays, seeds and episode
    # counters, equal to the original's, so both play the same rollouts from there, and
    # stepping one leaves the other where it was. Shared rather than copied: the compiled code
    # (the task's generated kernel module, the world's dispatcher). Rebuilt: the packed kernel
    # arguments, which hold the raw addresses of the original's arrays, and the entry points
    # looked up for them. Not carried over: an open render window.
    _COPY_SHARED = ("_kernels",)
    _COPY_REBUILT = ("_packed", "_sensor_packs", "_args", "_run", "_run_serial", "_renderer")

    def __deepcopy__(self, memo: dict[int, Any]) -> PushVectorEnv:
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        memo[id(self.world._kernel)] = self.world._kernel
        for key, value in self.__dict__.items():
            if key in self._COPY_SHARED:
                new.__dict__[key] = value
            elif key not in self._COPY_REBUILT:
                new.__dict__[key] = copy.deepcopy(value, memo)
        new.world._step_fn = None  # looked up again for the copy's own arrays
        new._renderer = None
        new._pack()
        new._run = entry_point(run_parallel if new._parallel else run_serial, 0, *new._args)
        new._run_serial = entry_point(run_serial, 0, *new._args)
        return new

    def __copy__(self) -> PushVectorEnv:
        return _shallow_copy(self)

    def __getstate__(self) -> Any:
        raise TypeError(_no_pickle(self, f"gym.make_vec({self.task_class.id!r}, num_envs=...)"))

    def close_extras(self, **kwargs: Any) -> None:
        # A constructor that refused its arguments leaves no renderer; gymnasium's __del__
        # still closes the half-built object.
        if getattr(self, "_renderer", None) is not None:
            self._renderer.close()
            self._renderer = None
        if getattr(self, "task", None) is not None:
            self.task.close()


def _shallow_copy(env: Any) -> Any:
    """copy.copy(env): a new env object sharing every array with ``env`` (what a shallow copy
    means), made directly, since pickling (copy's fallback) is refused."""
    new = type(env).__new__(type(env))
    new.__dict__.update(env.__dict__)
    return new


def _no_pickle(env: Any, make: str) -> str:
    """Why ``env`` cannot be pickled, and what to do instead."""
    return (f"cannot pickle {type(env).__name__}: it holds compiled kernels and their packed "
            f"arguments, which are bound to this process. To run it in another process, send "
            f"what makes it (its id and arguments: {make} in a function given to the worker, "
            f"as AsyncVectorEnv and SubprocVecEnv take); for an independent copy in this "
            f"process, use copy.deepcopy(env)")


class PushEnv(gym.Env):
    """A single episode of a pushing task: the batched core with ``num_envs=1``.

    Truncation comes from ``max_episode_steps`` when given (an int >= 1 [steps]), otherwise
    from the ``TimeLimit`` wrapper ``gym.make`` adds with the registered limit.
    """

    vector_class: ClassVar[type[PushVectorEnv]]
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human", "rgb_array"],
                                          "render_fps": 10}

    def __init__(self, *, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        # None: no limit of its own (the TimeLimit wrapper's); anything else is checked by the
        # core, so 0 or False is refused instead of meaning "never truncate".
        self.core = self.vector_class(num_envs=1, autoreset_mode=AutoresetMode.DISABLED,
                                      max_episode_steps=max_episode_steps, **kwargs)
        if max_episode_steps is None:
            self.core.truncate_at(None)
        self.render_mode = self.core.render_mode
        self.observation_space = self.core.single_observation_space
        self.action_space = self.core.single_action_space
        self.world = self.core.world
        self.robot_name = self.core.task_class.robot_body
        self._started = False
        if self.core.obs_mode == "goal":
            # Only goal-conditioned variants offer HER's compute_reward (SB3 treats any env
            # that has it as a goal env).
            self.compute_reward = self.core.compute_reward

    def __copy__(self) -> PushEnv:
        return _shallow_copy(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> PushEnv:
        # Its attributes copied as Python would (its core through PushVectorEnv.__deepcopy__),
        # made directly, since pickling (copy's fallback) is refused.
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            new.__dict__[key] = copy.deepcopy(value, memo)
        return new

    def __getstate__(self) -> Any:
        raise TypeError(_no_pickle(self, f"gym.make({self.core.task_class.id!r}, ...)"))

    @property
    def hud(self) -> list[str]:
        return self.core.hud

    @hud.setter
    def hud(self, lines: list[str]) -> None:
        self.core.hud = list(lines)

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        seed = check_seed(seed)  # a numpy integer becomes the Python int Gymnasium takes
        super().reset(seed=seed)
        if seed is None and not self.core.seeded:
            # Unseeded first reset: draw the stream's seed from gymnasium's generator.
            seed = int(self.np_random.integers(0, 2**62))
        obs, _ = self.core.reset(seed=seed)
        self._started = True
        return self._unbatch(obs), self.core.single_info(0)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before step()")
        a = np.asarray(action)
        check_action_dtype(a)  # before any cast, which would drop an imaginary part
        if a.shape != self.action_space.shape:
            raise ValueError(f"action must have shape {self.action_space.shape}, got "
                             f"{np.shape(action)}")
        if not all(map(math.isfinite, a.tolist())):
            raise ValueError(f"action must be finite; got NaN or inf in {short_repr(action)}")
        out = self.core.step_one(a)  # which copies the action into its float64 row
        if self.render_mode is not None:
            if self.render_mode == "human":
                self.render()
            self.core.record_trails()
        return out

    @staticmethod
    def _unbatch(obs: Any) -> Any:
        if isinstance(obs, dict):
            return {k: v[0] for k, v in obs.items()}
        return obs[0]

    def contacts(self, name: str | None = None) -> list:
        """contact2d reports of ``name`` (the robot by default) after the last step."""
        return self.world.contacts(name or self.robot_name, 0)

    def render(self) -> np.ndarray | None:
        return self.core.render_frame(0)

    def close(self) -> None:
        self.core.close()


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def arguments_section(task: type[TaskSpec]) -> str:
    """The docstring's ``## Arguments`` section: a Markdown table of every argument (the
    task's, then the env's own), read from the TaskSpec and :data:`COMMON_ARG_DOCS`."""
    rows = ["## Arguments", "", "| argument | default | meaning |", "|---|---|---|"]
    for name, a in task.arguments.items():
        rows.append(f"| ``{name}`` | ``{a.default!r}`` | {_md(a.doc)} |")
    for name, (default, doc) in COMMON_ARG_DOCS.items():
        rows.append(f"| ``{name}`` | {_md(default)} | {_md(doc)} |")
    rows.append("")
    rows.append("Randomisation draws only from the per-env streams seeded by "
                "``reset(seed=...)``.")
    return "\n    ".join(rows)


def versions_section(task: type[TaskSpec]) -> str:
    """The docstring's ``## Version History`` section, from ``TaskSpec.versions``."""
    return "\n    ".join(["## Version History", ""] + [f"* {v}" for v in task.versions])


def task_envs(task: type[TaskSpec], doc: str) -> tuple[type[PushEnv], type[PushVectorEnv]]:
    """The single-env and vector-env classes of a task, both documented with ``doc``.

    The observation table of the task's default arguments is appended to ``doc`` wherever
    it holds ``{obs_table}``.
    """
    defaults = {name: a.default for name, a in task.arguments.items()}
    lidar_note = ("\n\n    With ``lidar=dict(number=N, ...)`` (lidar2d keys) N more columns "
                  "follow the table: the robot's lidar ranges / range_max, in [0, 1], in beam "
                  "order (``env.observation_layout``; every sensor the robots carry adds its "
                  "fields so, a second robot's named after it, see docs/sensors.md). "
                  "``obs_mode='pixels'`` observes an (H, W, 3) "
                  "uint8 image instead (``pixel_size``, default 96), ``'pixels+state'`` a "
                  "Dict of ``pixels`` and ``state``: the whole arena seen from above "
                  "(``pixel_view='top'``, default), or ``pixel_view='ego'``: a view "
                  "``pixel_fov`` metres wide (default 3.0; its height in proportion to the "
                  "image's) centred on the first robot's origin and turned with it, its "
                  "heading pointing up.")
    text = doc.replace("{obs_table}", L.table(task(defaults).observation()) + lidar_note)
    text = text.replace("{id}", task.id).replace("{max_episode_steps}",
                                                 str(task.max_episode_steps))
    text = text.replace("{arguments}", arguments_section(task))
    text = text.replace("{versions}", versions_section(task))
    stem = task.id.split("-")[0]
    vec = type(f"{stem}VectorEnv", (PushVectorEnv,), {"task_class": task, "__doc__": text,
                                                       "__module__": task.__module__})
    single = type(f"{stem}Env", (PushEnv,), {"vector_class": vec, "__doc__": text,
                                             "__module__": task.__module__})
    task.env_class, task.vector_class = single, vec
    return single, vec
