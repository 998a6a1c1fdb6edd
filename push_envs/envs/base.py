"""The batched task core (:class:`PushVectorEnv`) and the single env (:class:`PushEnv`).

A task is a YAML scene plus a :class:`Task` (which bodies play robot, object and wall, the
spawn region, success thresholds and reward weights). :class:`PushVectorEnv` steps a World of
``num_envs`` copies with compiled kernels for actions, observation, reward, episode end and
autoreset; :class:`PushEnv` is the same core with ``num_envs=1``, so a single env and env i of
a batch agree bit for bit.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numba
import numpy as np
import yaml
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv

from ..physics import SceneError, World, load_scene
from ..physics.layout import BF_BRAD, BI_KIND, DRIVEN
from ..physics.scene import compile_scene
from ..physics.world import PARALLEL_MIN_ENVS
from . import kernels as K
from .rng import seed_states
from .spawn import (
    TI_LEN,
    TI_MAXC,
    TI_MAXSTEPS,
    TI_OBJ,
    TI_ROBOT,
    TI_SPARSE,
    TI_TASK,
    TI_WALL,
    TP_BONUS,
    TP_FRIC_HI,
    TP_FRIC_LO,
    TP_GOAL_DMAX,
    TP_GOAL_DMIN,
    TP_GOAL_SEP,
    TP_GOAL_T,
    TP_GOAL_X,
    TP_GOAL_Y,
    TP_LEN,
    TP_MARGIN,
    TP_MASS_HI,
    TP_MASS_LO,
    TP_OBJ_HALFL,
    TP_OBJ_HALFW,
    TP_OBJ_R,
    TP_ROBOT_R,
    TP_SCALE_HI,
    TP_SCALE_LO,
    TP_SLOP,
    TP_STEP_PEN,
    TP_SUCC_ANG,
    TP_SUCC_POS,
    TP_TRACTION,
    TP_W_ANG,
    TP_W_OG,
    TP_W_RB,
    TP_WALL_Y,
    TP_X0,
    TP_X1,
    TP_Y0,
    TP_Y1,
)

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"
ROBOTS = ("diff", "omni", "acker")
OBS_MODES = ("state", "goal")
REWARD_TYPES = ("dense", "sparse")

# Drive variants the `robot` argument swaps into the scene's robot.
ROBOT_VARIANTS: dict[str, dict[str, Any]] = {
    "diff": {"kinematics": {"name": "diff"}, "vel_min": [-1.0, -2.0], "vel_max": [1.0, 2.0]},
    "omni": {"kinematics": {"name": "omni"}, "vel_min": [-1.0, -1.0], "vel_max": [1.0, 1.0]},
    "acker": {"kinematics": {"name": "acker", "wheelbase": 0.25}, "vel_min": [-1.0, -0.6],
              "vel_max": [1.0, 0.6], "shape": {"name": "rectangle", "length": 0.35, "width": 0.22}},
}

INFO_KEYS = (
    ("is_success", K.IF_SUCCESS, bool),
    ("box_to_goal", K.IF_DIST, np.float64),
    ("angle_error", K.IF_ANGLE, np.float64),
    ("reward_robot_box", K.IF_R_RB, np.float64),
    ("reward_box_goal", K.IF_R_OG, np.float64),
    ("reward_angle", K.IF_R_ANG, np.float64),
    ("reward_success", K.IF_R_BONUS, np.float64),
    ("contacts", K.IF_CONTACTS, np.int64),
    ("max_penetration", K.IF_MAXPEN, np.float64),
    ("sweeps", K.IF_SWEEPS, np.int64),
    ("touching_wall", K.IF_WALL, bool),
)


@dataclass(frozen=True)
class Task:
    """What a task asks of a scene; every distance in metres, angles in radians."""

    task_id: int
    scene: str  # YAML file in configs/
    max_episode_steps: int
    robot_body: str = "robot"
    object_body: str = "box"
    wall_body: str | None = None  # body the object must touch to succeed (WallSlide)
    region: tuple[float, float, float, float] = (0.0, 0.0, 4.0, 4.0)  # spawn area [m]
    success_distance: float = 0.1  # [m]
    success_angle: float = math.pi  # [rad]
    w_robot_object: float = 1.0  # dense reward per metre of robot -> object progress
    w_object_goal: float = 10.0  # per metre of object -> goal progress
    w_angle: float = 0.0  # per radian of heading progress
    success_bonus: float = 10.0
    step_penalty: float = 0.01
    goal_separation: float = 0.5  # least start distance object -> goal [m]
    wall_margin: float = 0.0  # object's bounding circle and random goal to region edges [m]
    goal_distance: tuple[float, float] = (1.5, 3.0)  # WallSlide: goal along the wall [m]
    wall_face_y: float = 0.0  # WallSlide: y of the wall face [m]
    fixed_goal: tuple[float, float, float] | None = None  # PushT: goal pose
    default_robot: str = "diff"


def _check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def _check_range(name: str, value: Any, low: float, strictly: bool) -> tuple[float, float] | None:
    """None, or a (lo, hi) pair of finite numbers with low < lo <= hi (or low <= lo)."""
    if value is None:
        return None
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be None or a (low, high) pair, got {value!r}") from None
    bad_low = lo <= low if strictly else lo < low
    if not (math.isfinite(lo) and math.isfinite(hi)) or bad_low or hi < lo:
        bound = ">" if strictly else ">="
        raise ValueError(f"{name} must be a finite (low, high) with {bound} {low} and "
                         f"low <= high, got {value!r}")
    return lo, hi


class PushVectorEnv(VectorEnv):
    """A batch of ``num_envs`` episodes of one pushing task, stepped by compiled kernels.

    See the task classes (e.g. :class:`~push_envs.envs.push_box.PushBoxEnv`) for the
    observation table, reward and episode end. Arguments are those of the single env, plus
    ``num_envs``, ``autoreset_mode`` and ``num_threads`` (numba threads for ``prange``).
    """

    task: ClassVar[Task]
    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "rgb_array"],
        "render_fps": 10,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(self, num_envs: int = 1, *, robot: str | None = None,
                 reward_type: str = "dense", obs_mode: str = "state",
                 scene: str | os.PathLike | None = None, max_episode_steps: int | None = None,
                 max_contacts: int = 4, box_mass_range: Sequence[float] | None = None,
                 box_friction_range: Sequence[float] | None = None,
                 box_size_range: Sequence[float] | None = None,
                 spawn_region: Sequence[float] | None = None,
                 success_distance: float | None = None,
                 wall_margin: float | None = None,
                 render_mode: str | None = None, render_envs: int = 4,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 num_threads: int | None = None) -> None:
        task = self.task
        robot = task.default_robot if robot is None else robot
        self.robot = _check_choice("robot", robot, ROBOTS)
        self.reward_type = _check_choice("reward_type", reward_type, REWARD_TYPES)
        self.obs_mode = _check_choice("obs_mode", obs_mode, OBS_MODES)
        if render_mode is not None:
            _check_choice("render_mode", render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        if isinstance(autoreset_mode, str):
            try:
                autoreset_mode = AutoresetMode(autoreset_mode)
            except ValueError:
                raise ValueError(f"autoreset_mode must be one of "
                                 f"{[m.value for m in AutoresetMode]}, got {autoreset_mode!r}"
                                 ) from None
        self.autoreset_mode = autoreset_mode
        self.metadata = dict(self.metadata, autoreset_mode=autoreset_mode)
        self._ar = {AutoresetMode.NEXT_STEP: K.AR_NEXT_STEP,
                    AutoresetMode.SAME_STEP: K.AR_SAME_STEP,
                    AutoresetMode.DISABLED: K.AR_DISABLED}[autoreset_mode]
        if isinstance(max_contacts, bool) or not isinstance(max_contacts, (int, np.integer)) \
                or max_contacts < 1:
            raise ValueError(f"max_contacts must be an integer >= 1, got {max_contacts!r}")
        if max_episode_steps is None:
            max_episode_steps = task.max_episode_steps
        if isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps,
                                                                 (int, np.integer)) \
                or max_episode_steps < 1:
            raise ValueError(f"max_episode_steps must be an integer >= 1, got "
                             f"{max_episode_steps!r}")
        self.max_episode_steps = int(max_episode_steps)
        self.max_contacts = int(max_contacts)
        mass = _check_range("box_mass_range", box_mass_range, 0.0, True)
        fric = _check_range("box_friction_range", box_friction_range, 0.0, False)
        size = _check_range("box_size_range", box_size_range, 0.0, True)
        region = task.region if spawn_region is None else tuple(float(v) for v in spawn_region)
        if len(region) != 4 or not all(map(math.isfinite, region)) or region[2] <= region[0] \
                or region[3] <= region[1]:
            raise ValueError(f"spawn_region must be finite (x0, y0, x1, y1) with x1 > x0 and "
                             f"y1 > y0, got {spawn_region!r}")
        succ = task.success_distance if success_distance is None else float(success_distance)
        if not succ > 0:
            raise ValueError(f"success_distance must be > 0, got {success_distance!r}")
        self.success_distance = succ
        margin = task.wall_margin if wall_margin is None else wall_margin
        if isinstance(margin, bool) or not isinstance(margin, (int, float, np.floating,
                                                                np.integer)) \
                or not math.isfinite(margin) or margin < 0:
            raise ValueError(f"wall_margin must be a finite number >= 0 [m], got {wall_margin!r}")
        self.wall_margin = float(margin)

        self.world = World(self._compile(scene, robot), num_envs=num_envs,
                           num_threads=num_threads)
        w = self.world
        E = w.num_envs
        self.num_envs = E
        sc = w.scene
        for role, name in (("robot", task.robot_body), ("object", task.object_body)):
            if name not in sc.index:
                raise SceneError(f"{sc.spec.source}: {role} body '{name}' is missing; the "
                                 f"{type(self).__name__} task needs it (bodies: {sc.names})")
        self.robot_index = sc.index[task.robot_body]
        self.object_index = sc.index[task.object_body]
        if sc.bint[self.robot_index, BI_KIND] != DRIVEN:
            raise SceneError(f"{sc.spec.source}: robot '{task.robot_body}' must have kinematics")
        wall = -1
        if task.wall_body is not None:
            if task.wall_body not in sc.index:
                raise SceneError(f"{sc.spec.source}: wall body '{task.wall_body}' is missing")
            wall = sc.index[task.wall_body]
        spec = sc.spec.bodies[self.robot_index]
        self._act_lo = np.array(spec.vel_min, np.float64)
        self._act_span = np.array(spec.vel_max, np.float64) - self._act_lo
        o = self.object_index
        info = sc.shapes[o]
        obj_r = float(sc.bflt[o, BF_BRAD])
        if size is not None:
            obj_r_max = obj_r * size[1]
        else:
            obj_r_max = obj_r
        x0, y0, x1, y1 = region
        robot_r = float(sc.bflt[self.robot_index, BF_BRAD])
        if 2 * (obj_r_max + self.wall_margin) > min(x1 - x0, y1 - y0) \
                or 2 * robot_r > min(x1 - x0, y1 - y0):
            raise SceneError(f"{sc.spec.source}: the spawn region {region} is too small for the "
                             f"object (bounding radius {obj_r_max:.3g} m, wall_margin "
                             f"{self.wall_margin:.3g} m) or the robot ({robot_r:.3g} m)")

        self.ti = np.zeros(TI_LEN, np.int64)
        self.ti[TI_TASK] = task.task_id
        self.ti[TI_ROBOT] = self.robot_index
        self.ti[TI_OBJ] = o
        self.ti[TI_WALL] = wall
        self.ti[TI_MAXC] = self.max_contacts
        self.ti[TI_MAXSTEPS] = self.max_episode_steps
        self.ti[TI_SPARSE] = 1 if reward_type == "sparse" else 0
        tp = np.zeros(TP_LEN)
        tp[[TP_X0, TP_Y0, TP_X1, TP_Y1]] = region
        tp[TP_SUCC_POS] = succ
        tp[TP_SUCC_ANG] = task.success_angle
        tp[TP_W_RB] = task.w_robot_object
        tp[TP_W_OG] = task.w_object_goal
        tp[TP_W_ANG] = task.w_angle
        tp[TP_BONUS] = task.success_bonus
        tp[TP_STEP_PEN] = task.step_penalty
        tp[[TP_MASS_LO, TP_MASS_HI]] = mass if mass else (0.0, 0.0)
        tp[[TP_FRIC_LO, TP_FRIC_HI]] = fric if fric else (-1.0, -1.0)
        tp[[TP_SCALE_LO, TP_SCALE_HI]] = size if size else (0.0, 0.0)
        tp[TP_GOAL_DMIN], tp[TP_GOAL_DMAX] = task.goal_distance
        tp[TP_WALL_Y] = task.wall_face_y
        tp[TP_ROBOT_R] = robot_r
        tp[TP_OBJ_R] = obj_r
        verts = np.concatenate([np.asarray(p.verts) for p in info.pieces]) - info.centroid
        tp[TP_OBJ_HALFW] = float(np.max(np.abs(verts[:, 1])))
        tp[TP_OBJ_HALFL] = float(np.max(np.abs(verts[:, 0])))
        tp[TP_TRACTION] = float(w.traction(task.robot_body)[0])
        tp[[TP_GOAL_X, TP_GOAL_Y, TP_GOAL_T]] = task.fixed_goal or (math.nan,) * 3
        tp[TP_GOAL_SEP] = task.goal_separation
        tp[TP_SLOP] = 2.0 * w.params.slop
        tp[TP_MARGIN] = self.wall_margin
        self.tp = tp
        # Scene values the spawn restores each episode.
        self._base_mass = sc.mass.copy()
        self._base_inertia = sc.inertia.copy()
        self._base_fric = sc.friction.copy()
        self._init_pos = w.pos[0].copy()
        self._init_ang = w.ang[0].copy()
        self._init_vel = w.vel[0].copy()
        self._init_omg = w.omg[0].copy()
        self._init_drv = w.drv[0].copy()

        n_obs = K.obs_size(self.max_contacts)
        self._obs = np.zeros((E, n_obs))
        self._final_obs = np.zeros((E, n_obs))
        self._info_f = np.zeros((E, K.IF_LEN))
        self._final_info = np.zeros((E, K.IF_LEN))
        self._rew = np.zeros(E)
        self._term = np.zeros(E, np.bool_)
        self._trunc = np.zeros(E, np.bool_)
        self._need_reset = np.zeros(E, np.uint8)
        self._goal = np.zeros((E, K.GOAL_LEN))
        self._prev = np.zeros((E, K.PV_LEN))
        self._tstep = np.zeros(E, np.int64)
        self._rng = seed_states(int(np.random.SeedSequence().entropy % (2**63)), E)
        self._seeded = False
        self._parallel = E >= PARALLEL_MIN_ENVS
        self._num_threads = num_threads
        self._renderer: Any = None
        self.render_envs = int(render_envs)
        self._trails: list[list[tuple[float, float]]] = [[] for _ in range(min(E, 64))]
        self.hud: list[str] = []

        self.single_observation_space = self._make_obs_space(n_obs)
        self.single_action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, E)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, E)
        w = self.world
        ka = self._kernel_args()
        self._fused_args = (self.robot_index, self._act_lo, self._act_span, self._ar,
                            *w._kernel_args, ka[0], ka[1], *ka[5:13], self._goal, self._rng,
                            self._prev, self._tstep, self._need_reset, self._obs, self._rew,
                            self._term, self._trunc, self._final_obs, self._final_info,
                            self._info_f)
        self._all_true = np.ones(E, bool)
        self._all_true.setflags(write=False)

    # ------------------------------------------------------------------ construction helpers
    def _compile(self, scene: str | os.PathLike | None, robot: str):
        """Load the task's YAML (or ``scene``), swap in the robot variant and compile it."""
        path = Path(scene) if scene is not None else CONFIG_DIR / self.task.scene
        source = str(path)
        if not path.is_file():
            raise SceneError(f"{source}: scene file not found")
        try:
            with open(path, encoding="utf-8") as fh:
                raw = yaml.safe_load(fh)
        except yaml.YAMLError as exc:
            raise SceneError(f"{source}: not valid YAML: {exc}") from None
        load_scene(source)  # full validation, with the file's own name in every error
        raw = copy.deepcopy(raw)
        robots = raw.get("robot") or []
        robots = [robots] if isinstance(robots, Mapping) else list(robots)
        for i, body in enumerate(robots):
            if isinstance(body, Mapping) and body.get("name", f"robot_{i}") == self.task.robot_body:
                variant = ROBOT_VARIANTS[robot]
                body = dict(body)
                body["kinematics"] = dict(variant["kinematics"],
                                          tau=(body.get("kinematics") or {}).get("tau"))
                if body["kinematics"]["tau"] is None:
                    del body["kinematics"]["tau"]
                for key in ("vel_min", "vel_max", "shape"):
                    if key in variant:
                        body[key] = variant[key]
                state = list(body.get("state", [0, 0, 0]))[:3]
                body["state"] = state + [0.0] * (3 - len(state)) + ([0.0] if robot == "acker"
                                                                   else [])
                robots[i] = body
        raw["robot"] = robots
        spec = load_scene(raw)
        spec = type(spec)(world=spec.world, bodies=spec.bodies, source=source,
                          base_dir=str(path.parent))
        return compile_scene(spec)

    def _make_obs_space(self, n_obs: int) -> spaces.Space:
        wspec = self.world.scene.spec.world
        reach = 2.0 * max(wspec.width, wspec.height) + abs(wspec.offset[0]) + abs(wspec.offset[1])
        lo = np.full(n_obs, -2.0 * reach)
        hi = np.full(n_obs, 2.0 * reach)
        unit = [2, 3, 9, 10, 13, 14, 17, 18]
        lo[unit], hi[unit] = -1.0, 1.0
        lo[[4, 5, 19, 20]], hi[[4, 5, 19, 20]] = -K.VEL_CLIP, K.VEL_CLIP
        lo[6], hi[6] = -K.OMEGA_CLIP, K.OMEGA_CLIP
        m = self.max_contacts
        for j in range(m):
            q = K.OBS_CONTACT + K.CONTACT_FIELDS * j
            lo[q], hi[q] = 0.0, 1.0
            lo[q + 1:q + 3], hi[q + 1:q + 3] = -1.0, 1.0
            lo[q + 3], hi[q + 3] = 0.0, K.FORCE_CLIP
        t = K.obs_tail(m)
        lo[t], hi[t] = 0.0, 1.0
        lo[t + 1:t + 3], hi[t + 1:t + 3] = -K.FORCE_CLIP, K.FORCE_CLIP
        lo[t + 3], hi[t + 3] = 0.0, 1.0
        state = spaces.Box(lo.astype(np.float32), hi.astype(np.float32), dtype=np.float32)
        if self.obs_mode == "state":
            return state
        n_goal = len(self.goal_of(np.zeros((1, 3)), np.zeros((1, 1)))[0])
        g = spaces.Box(-2.0 * reach, 2.0 * reach, (n_goal,), np.float32)
        return spaces.Dict({"observation": state, "achieved_goal": g, "desired_goal": g})

    # --------------------------------------------------------------------------- goals (HER)
    def goal_of(self, pose: np.ndarray, touching: np.ndarray) -> np.ndarray:
        """Goal vector of object poses (E, 3): [x, y] (+ [cos, sin] for PushT, + touching)."""
        from .spawn import TASK_PUSH_T, TASK_WALL_SLIDE

        if self.task.task_id == TASK_PUSH_T:
            return np.stack([pose[:, 0], pose[:, 1], np.cos(pose[:, 2]), np.sin(pose[:, 2])], 1)
        if self.task.task_id == TASK_WALL_SLIDE:
            return np.stack([pose[:, 0], pose[:, 1], touching.reshape(-1)], 1)
        return pose[:, :2].copy()

    def compute_reward(self, achieved_goal: np.ndarray, desired_goal: np.ndarray,
                       info: Any = None) -> np.ndarray:
        """Reward of (batches of) achieved vs desired goals, as HER relabelling needs.

        Sparse: 0 on success, -1 otherwise. Dense: minus the distance [m] (plus the heading
        error [rad] for PushT), plus the success bonus.
        """
        from .spawn import TASK_PUSH_T, TASK_WALL_SLIDE

        a = np.asarray(achieved_goal, dtype=np.float64)
        g = np.asarray(desired_goal, dtype=np.float64)
        d = np.linalg.norm(a[..., :2] - g[..., :2], axis=-1)
        success = d <= self.success_distance
        err = np.zeros_like(d)
        if self.task.task_id == TASK_PUSH_T:
            err = np.abs(np.arctan2(a[..., 3] * g[..., 2] - a[..., 2] * g[..., 3],
                                    a[..., 2] * g[..., 2] + a[..., 3] * g[..., 3]))
            success &= err <= self.task.success_angle
        elif self.task.task_id == TASK_WALL_SLIDE:
            success &= a[..., 2] > 0.5
        if self.reward_type == "sparse":
            return success.astype(np.float64) - 1.0
        return -d - self.task.w_angle / self.task.w_object_goal * err \
            + self.task.success_bonus * success

    # ------------------------------------------------------------------------------ kernels
    def _kernel_args(self):
        w = self.world
        sc = w.scene
        return (self.ti, self.tp, sc.bflt, sc.bint, sc.movable, self._base_mass,
                self._base_inertia, self._base_fric, self._init_pos, self._init_ang,
                self._init_vel, self._init_omg, self._init_drv, w.epar, w.pos, w.ang, w.vel,
                w.omg, w.drv, w.cmd, self._goal, self._rng, self._prev, self._tstep)

    def _reset_rows(self, mask: np.ndarray) -> None:
        w = self.world
        K.reset_envs(mask.astype(np.uint8), *self._kernel_args(), w.cti, w.ctf, w.ctn,
                     self._obs, self._info_f)
        w.steps[mask] = 0
        self._need_reset[mask] = 0
        for e in np.flatnonzero(mask[: len(self._trails)]):
            self._trails[e].clear()

    # ------------------------------------------------------------------------- gym interface
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start new episodes. ``seed`` seeds env i as a single env seeded ``seed + i``.

        ``options={"reset_mask": mask}`` resets only the masked envs (for DISABLED autoreset).
        """
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
                raise ValueError(f"seed must be an int or None, got {seed!r}")
            self._np_random, self._np_random_seed = seeding.np_random(int(seed))
            self._rng[:] = seed_states(int(seed), self.num_envs)
            self._seeded = True
        mask = np.ones(self.num_envs, bool)
        if options and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"])
            if mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask'] must be a bool array of shape "
                                 f"({self.num_envs},), got {mask!r}")
        self._reset_rows(mask)
        return self._observation(), self._info(self._info_f, mask)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """Advance every env by one step; see the class docs for autoreset."""
        a = np.asarray(actions, dtype=np.float64)
        if a.shape != (self.num_envs, 2):
            raise ValueError(f"actions must have shape ({self.num_envs}, 2), got "
                             f"{np.shape(actions)}")
        if not np.isfinite(a).all():
            raise ValueError(f"actions must be finite; got NaN or inf in {actions!r}")
        was_reset = self._need_reset.astype(bool) if self._ar == K.AR_NEXT_STEP else None
        self._advance(a)
        done = self._term | self._trunc
        info = self._info(self._info_f, None)
        obs = self._observation()
        rew = self._rew.copy()
        final_obs = None
        if self._ar == K.AR_SAME_STEP and done.any():
            final_obs = self._observation(self._final_obs)
            info["final_obs"] = final_obs
            info["_final_obs"] = done.copy()
            info["final_info"] = self._info(self._final_info, done)
            info["_final_info"] = done.copy()
        if self.obs_mode == "goal":
            rew = self._goal_rewards(obs, final_obs, done, was_reset)
        if self.render_mode is not None:
            # Rows that started a new episode inside this step get a fresh trail.
            fresh = done if self._ar == K.AR_SAME_STEP else (was_reset if was_reset is not None
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
        """Actions (already checked, float64 (E, 2)) -> physics -> observation, reward, ends."""
        w = self.world
        if self._parallel:
            if self._num_threads is not None:
                numba.set_num_threads(self._num_threads)
            K.env_step_parallel(a, *self._fused_args)
        else:
            K.env_step_serial(a, *self._fused_args)
        w.steps += w.active

    # ------------------------------------------------------------------------------ outputs
    def _goal_obs(self, state: np.ndarray) -> dict[str, np.ndarray]:
        t = K.obs_tail(self.max_contacts)
        touching = state[:, t]
        ox = state[:, 0] + state[:, 2] * state[:, 7] - state[:, 3] * state[:, 8]
        oy = state[:, 1] + state[:, 3] * state[:, 7] + state[:, 2] * state[:, 8]
        rth = np.arctan2(state[:, 3], state[:, 2])
        oth = rth + np.arctan2(state[:, 10], state[:, 9])
        pose = np.stack([ox, oy, oth], 1)
        gth = np.arctan2(state[:, 18], state[:, 17])
        gpose = np.stack([state[:, 15], state[:, 16], gth], 1)
        return {
            "observation": state.astype(np.float32),
            "achieved_goal": self.goal_of(pose, touching).astype(np.float32),
            "desired_goal": self.goal_of(gpose, np.ones(len(state))).astype(np.float32),
        }

    def _observation(self, source: np.ndarray | None = None) -> Any:
        """The batch observation from ``source`` (default: the current observation buffer)."""
        state = (self._obs if source is None else source).astype(np.float32)
        if self.obs_mode == "goal":
            return self._goal_obs(state)
        return state

    def _info(self, info_f: np.ndarray, mask: np.ndarray | None) -> dict[str, Any]:
        """Info arrays with Gymnasium's ``_key`` masks (one shared read-only mask)."""
        m = self._all_true if mask is None else mask.copy()
        data = info_f.T.copy()
        out: dict[str, Any] = {}
        for key, col, dtype in INFO_KEYS:
            out[key] = data[col] if dtype is np.float64 else data[col].astype(dtype)
            out["_" + key] = m
        return out

    def single_info(self, env: int = 0) -> dict[str, Any]:
        """Info of one env as Python scalars (the single-env fast path)."""
        row = self._info_f[env].tolist()
        return {key: (row[col] > 0.5 if dtype is bool else
                      int(row[col]) if dtype is np.int64 else row[col])
                for key, col, dtype in INFO_KEYS}

    # ------------------------------------------------------------------------------ render
    def _record_trails(self) -> None:
        if self.render_mode is None:
            return
        xy = self.world.state(self.task.robot_body)[: len(self._trails), :2]
        for e, trail in enumerate(self._trails):
            trail.append((float(xy[e, 0]), float(xy[e, 1])))
            del trail[:-400]

    def render_frame(self, env: int = 0) -> np.ndarray | None:
        """Draw env ``env`` (bodies, goal, walls, contacts with force arrows, robot trail)."""
        from .render import Goal, Renderer

        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode= to make")
            return None
        if self._renderer is None:
            self._renderer = Renderer(self.world, mode=self.render_mode,
                                      fps=self.metadata["render_fps"],
                                      title=type(self).__name__)
        g = self._goal[env]
        goals: list[Goal] = [Goal(kind="outline", body=self.task.object_body,
                                  pose=(float(g[0]), float(g[1]), float(g[2]))),
                             Goal(kind="circle", center=(float(g[0]), float(g[1])),
                                  radius=self.success_distance)]
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

    def close_extras(self, **kwargs: Any) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


class PushEnv(gym.Env):
    """A single episode of a pushing task: the batched core with ``num_envs=1``.

    Truncation comes from ``max_episode_steps`` when given, otherwise from the ``TimeLimit``
    wrapper ``gym.make`` adds with the registered limit.
    """

    vector_class: ClassVar[type[PushVectorEnv]]
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human", "rgb_array"],
                                          "render_fps": 10}

    def __init__(self, *, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        self.core = self.vector_class(num_envs=1, autoreset_mode=AutoresetMode.DISABLED,
                                      max_episode_steps=max_episode_steps or 10**12, **kwargs)
        if max_episode_steps is None:
            self.core.ti[TI_MAXSTEPS] = 0
        self.render_mode = self.core.render_mode
        self.observation_space = self.core.single_observation_space
        self.action_space = self.core.single_action_space
        self.world = self.core.world
        self.robot_name = self.core.task.robot_body
        self._started = False
        if self.core.obs_mode == "goal":
            # Only goal-conditioned variants offer HER's compute_reward (SB3 treats any env
            # that has it as a goal env).
            self.compute_reward = self.core.compute_reward

    @property
    def hud(self) -> list[str]:
        return self.core.hud

    @hud.setter
    def hud(self, lines: list[str]) -> None:
        self.core.hud = list(lines)

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is None and not self.core._seeded:
            # Unseeded first reset: draw the stream's seed from gymnasium's generator.
            seed = int(self.np_random.integers(0, 2**62))
        obs, _ = self.core.reset(seed=seed)
        self._started = True
        return self._unbatch(obs), self.core.single_info(0)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before step()")
        a = np.asarray(action, dtype=np.float64)
        if a.shape != (2,):
            raise ValueError(f"action must have shape (2,), got {np.shape(action)}")
        if not (math.isfinite(a[0]) and math.isfinite(a[1])):
            raise ValueError(f"action must be finite; got NaN or inf in {action!r}")
        core = self.core
        core._advance(a.reshape(1, 2))
        rew = float(core._rew[0])
        if core.obs_mode == "goal":
            batch = core._observation()
            rew = float(core._goal_rewards(batch, None, core._term, None)[0])
            obs = self._unbatch(batch)
        else:
            obs = core._obs[0].astype(np.float32)
        if self.render_mode == "human":
            self.render()
        core._record_trails()
        return obs, rew, bool(core._term[0]), bool(core._trunc[0]), core.single_info(0)

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
