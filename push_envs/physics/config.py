"""YAML scene files -> checked, frozen scene specs (setup time only).

A scene is a world file in IR-SIM's format (IR-SIM 2.12's schema, whole: :mod:`.schema` lists
every key, ``docs/irsim.md`` what each does here)::

    world:    {width, height, step_time, sample_time, offset, collision_mode, control_mode,
               obstacle_map, mdownsample, gravity, friction, restitution, drive_tau, plot,
               friction_mixing, restitution_mixing, ...}
    robot:    [ {name, kinematics, shape, state, goal, behavior, number, distribution, ...} ]
    obstacle: [ ... ]                                  # the same keys as robot
    gui:      {keyboard: {...}, mouse: {...}}          # drawing and keyboard only
    custom:   {...}                                    # carried untouched, for user code

Each entry of ``robot``/``obstacle`` is a group of ``number`` objects, expanded as IR-SIM's
object factory does (:mod:`.factory`). Defaults are IR-SIM's: a body without ``state`` sits at
[1, 1, 0], without ``goal`` has the goal [1, 9, 0], without ``shape`` is a circle of radius
1 m; objects are named by IR-SIM's running id (``robot_0``, ``robot_1``, then
``obstacle_<id>`` continuing the count); an explicit ``name`` wins. Two of push_envs'
defaults differ, both kept for push_envs' own scenes and said in ``docs/irsim.md``:
``collision_mode`` is ``contact`` unless given (this engine; IR-SIM's default is ``stop``),
and a map with ``world.map_resolution`` has square cells of that size (IR-SIM stretches the
map over ``width`` x ``height``, which is what a file without ``map_resolution`` gets).

Every problem is reported as a :class:`SceneError` whose message reads
``"<source>: <key path>: <reason>"``, e.g.
``"my_scene.yaml: robot[0].shape.radius: must be > 0, got -1"``; offending values are
quoted as short excerpts, an unknown key with the nearest allowed one. Numbers are bounded
by :mod:`.limits`, and YAML files are read with bounded size, depth and alias expansion
(:mod:`.safe_yaml`). Nothing is built until the whole file checks.

A body's ``sensors:`` entries are parsed by their own sensor modules (``push_envs/sensors/``),
found by name in the sensor registry (:mod:`.sensor_registry`): this module lists no sensor.

Units: metres, seconds, kilograms, radians (kg·m² for inertia). Optional keys given an
explicit YAML ``null`` behave as if absent. Only a ``yaml.SafeLoader`` is used.
"""

from __future__ import annotations

import copy
import math
import os
import warnings
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np

from . import checks
from . import sensor_registry
from .checks import bounded as _bounded
from .checks import fail as _fail
from .checks import flag as _flag
from .checks import real as _real
from .checks import vector as _vector
from .errors import SceneError
from .errors import short_repr
from .factory import ObjectEntry
from .factory import RandomGroup
from .factory import expand_sections
from .factory import resolve_random_shape
from .lidar import LidarSpec
from .limits import MAX_COORD
from .limits import MAX_WORLD_SIZE
from .limits import MIN_INERTIA
from .limits import MIN_MASS
from .limits import MIN_STEP_TIME
from .maps import resolve_map
from .mixing import MIX_RULES
from .safe_yaml import read_scene_yaml
from .schema import ARRIVE_MODES
from .schema import BODY_KEYS
from .schema import BODY_PLOT_KEYS
from .schema import COLLISION_MODES
from .schema import CONTROL_MODES
from .schema import GUI_KEYS
from .schema import KINEMATICS_KEYS
from .schema import KINEMATICS_NAMES
from .schema import SAVED_FIGURE_KEYS
from .schema import SHAPE_KEYS
from .schema import STEP_MODES
from .schema import TOP_KEYS
from .schema import WORLD_KEYS
from .schema import WORLD_PLOT_KEYS
from .schema import check_keys
from .schema import choice
from .schema import suggestion
from .shapes import ShapeInfo
from .shapes import build_shape

__all__ = ["SceneError", "SceneWarning", "WorldSpec", "KinematicsSpec", "LidarSpec",
           "BodySpec", "SceneSpec", "RandomGroup", "load_scene"]


class SceneWarning(UserWarning):
    """A scene value IR-SIM accepts with a fallback (an unknown ``collision_mode`` runs as
    ``unobstructed``): loaded as IR-SIM loads it, and said, never silently."""


# --------------------------------------------------------------------------------------------
# Specs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class WorldSpec:
    """World-wide settings.

    ``width``/``height`` [m] only bound drawing, the map and the default distributions; they
    are NOT walls. ``obstacle_map`` is a bool occupancy grid ``occ[i, j]`` (i along x) whose
    cell (i, j) covers ``map_cell`` = (cell_x, cell_y) metres from ``offset`` [m]: square cells
    of ``map_resolution`` when the file gives it, else IR-SIM's stretch over the world
    (``width / nx``, ``height / ny``). ``eq=False`` because the grid is a numpy array
    (instances compare by identity).

    ``collision_mode``: ``contact`` (this engine, the default), ``stop`` (a body that overlaps
    another that is not ``unobstructed`` stops for the rest of the episode), ``unobstructed``
    (bodies pass through each other), ``unobstructed_obstacles`` (only robots stop). In the
    three IR-SIM modes nothing pushes anything.
    ``sample_time`` [s] is the render interval (IR-SIM draws every sample_time / step_time
    steps); ``control_mode``, ``fog_map``, ``plot`` and ``status`` only change IR-SIM's
    drawing and keyboard (carried, see docs/irsim.md). ``step_mode`` ``external``: the world
    does not move bodies, the caller sets their states.
    """

    width: float = 10.0
    height: float = 10.0
    step_time: float = 0.1  # [s]
    gravity: float = 9.81  # [m/s^2], scales ground (Coulomb) friction
    friction: float = 0.5  # default ground friction coefficient
    restitution: float = 0.0  # default restitution, in [0, 1]
    drive_tau: float = 0.0  # [s] default first-order lag of driven bodies
    obstacle_map: np.ndarray | None = None
    map_resolution: float = 0.1  # [m] cell along x (square cells: see map_cell)
    offset: tuple[float, float] = (0.0, 0.0)  # [m]
    obstacle_map_source: str | None = None  # the map's PNG path as given, for messages
    map_cell: tuple[float, float] | None = None  # [m] (x, y); None: (map_resolution,) * 2
    name: str | None = None
    sample_time: float | None = None  # [s]; None: step_time
    collision_mode: str = "contact"
    control_mode: str = "auto"
    step_mode: str = "internal"
    mdownsample: int = 1
    fog_map: bool = False
    fog_map_resolution: float | None = None
    plot: dict = field(default_factory=dict)
    status: str | None = None
    friction_mixing: str = "mean"  # how a contact's friction is made from two (mixing.py)
    restitution_mixing: str = "mean"  # and its restitution

    @property
    def cell(self) -> tuple[float, float]:
        """(x, y) size of a map cell [m]."""
        if self.map_cell is not None:
            return self.map_cell
        return (self.map_resolution, self.map_resolution)

    @property
    def render_interval(self) -> float:
        """Seconds of simulated time between two drawn frames (``sample_time``)."""
        return self.step_time if self.sample_time is None else self.sample_time


@dataclass(frozen=True)
class KinematicsSpec:
    """Drive model of a body: ``"diff"``, ``"omni"``, ``"omni_angular"`` or ``"acker"``.

    ``wheelbase`` [m] is only meaningful for ``acker``: the kinematics' ``wheelbase``, else the
    shape's (IR-SIM's car shapes), else 1.0; ``tau`` [s] is the drive lag, None meaning the
    world's ``drive_tau``. ``noise``: the executed velocity is the drive's plus a normal
    draw each step (IR-SIM's motion noise, from the env's own stream), of standard deviation
    sqrt(alpha0 v^2 + alpha1 w^2) on the linear and sqrt(alpha2 v^2 + alpha3 w^2) on the
    angular part (diff, acker), sqrt(alpha_k) on each part (omni, omni_angular).
    """

    name: str
    wheelbase: float | None = None
    tau: float | None = None
    noise: bool = False
    alpha: tuple[float, ...] = ()
    mode: str = "steer"


@dataclass(frozen=True)
class BodySpec:
    """One robot or obstacle, with defaults already applied.

    ``mass`` [kg] is 1.0 for driven bodies and inf (immovable) for passive ones when not
    given. ``friction``, ``inertia`` [kg·m²] and ``restitution`` stay None when not given
    (None = world default / computed from the shape). ``state`` is (x [m], y [m], theta [rad],
    ...) of ``state_dim`` entries (acker: the fourth is the steering angle [rad]);
    ``velocity`` [m/s] (world frame) and ``omega`` [rad/s] are initial velocities of passive
    bodies, ``drive`` the initial drive state of a driven one (IR-SIM's ``velocity``).
    ``vel_min``/``vel_max`` bound the drive command and ``acce`` its rate of change (per
    second): 2 entries, 3 for ``omni_angular``.

    IR-SIM's world model (read by the behaviours; see docs/irsim.md):
    ``goal``: the goal poses (x [m], y [m], theta [rad]) in order, or None; ``goal_threshold``
    [m]; ``arrive_mode`` ``"position"`` or ``"state"``; ``behavior``: a plain dict with a
    string ``name`` and its parameters (the group's ``group_behavior`` when the object has
    none), or None; ``group`` and ``group_behavior``; ``unobstructed``: the body takes part
    in no collision (nothing hits it; an immovable one has no pieces at all); ``fov`` [rad] /
    ``fov_radius`` [m]: its field of view as given, or None (IR-SIM's defaults from the
    lidar are applied by physics/fov.py);
    ``state_dim``, ``vel_dim``; ``path``: the key path of the body in its file (``robot[2]``,
    or ``robot[2][k]`` for object k of a group), for error messages. ``random_group``: the
    index of the random distribution that places it per env (SceneSpec.groups), or -1.
    """

    name: str
    role: str
    kinematics: KinematicsSpec | None
    shape: dict
    state: tuple[float, ...]
    velocity: tuple[float, float]
    omega: float
    mass: float
    friction: float | None
    inertia: float | None
    restitution: float | None
    static: bool
    vel_min: tuple[float, ...]
    vel_max: tuple[float, ...]
    acce: tuple[float, ...]
    sensors: tuple[str, ...]  # sensor names, in order ("contact2d", "lidar2d", ...)
    color: str | None
    # (shape dict, its compiled ShapeInfo) as built by load_scene, so that compile_scene
    # does not build the shape again; ignored if `shape` is replaced by another dict.
    built_shape: tuple[dict, ShapeInfo] | None = field(default=None, compare=False,
                                                       repr=False)
    # The body's first ray-casting sensor (lidar2d or fmcw_lidar2d), as IR-SIM's ``lidar``.
    lidar: LidarSpec | None = None
    # The parsed spec of each entry of ``sensors`` (their sensor modules' specs), in order.
    sensor_specs: tuple[Any, ...] = ()
    goal: tuple[tuple[float, float, float], ...] | None = None
    goal_threshold: float = 0.1
    arrive_mode: str = "position"
    behavior: dict | None = None
    group: int = 0
    group_behavior: dict | None = None
    unobstructed: bool = False
    fov: float | None = None
    fov_radius: float | None = None
    state_dim: int = 3
    path: str = ""
    vel_dim: int = 2
    drive: tuple[float, ...] = ()
    angle_range: tuple[float, float] = (-math.pi, math.pi)
    description: str | None = None
    plot: dict = field(default_factory=dict, compare=False)
    group_name: str | None = None
    random_group: int = -1
    bullet: bool = False  # swept continuously every sub-step, out of the sub-step count

    def shape_info(self, where: str) -> ShapeInfo:
        """The compiled shape (built once by load_scene; rebuilt only if ``shape`` changed)."""
        if self.built_shape is not None and self.built_shape[0] is self.shape:
            return self.built_shape[1]
        return build_shape(self.shape, where)


@dataclass(frozen=True)
class SceneSpec:
    """A whole scene: world settings and bodies (robots first, then obstacles, in IR-SIM's
    creation order), the random distributions that place bodies per env (``groups``), the
    ``gui`` and ``custom`` sections as given, and the seed of the draws made at load."""

    world: WorldSpec
    bodies: tuple[BodySpec, ...]
    source: str
    base_dir: str | None
    groups: tuple[RandomGroup, ...] = ()
    gui: dict = field(default_factory=dict, compare=False)
    custom: dict = field(default_factory=dict, compare=False)
    seed: int = 0


# --------------------------------------------------------------------------------------------
# Allowed keys (kept in schema.py so that the error messages and the checks cannot drift)
# --------------------------------------------------------------------------------------------

SENSOR_KEYS = ("name", "type")  # the sensor's name; its other keys are its module's
SHAPE_REQUIRED = {
    "polygon": ("vertices",),
    "linestring": ("vertices",),
    "compound": ("parts",),
}
DEFAULT_SHAPE = {"name": "circle", "radius": 1.0}  # IR-SIM: no shape -> a circle of 1 m
SHAPE_DEFAULTS = {"circle": {"radius": 0.2}, "rectangle": {"length": 1.0, "width": 1.0},
                  "polygon": {"vertices": [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]]}}
"""IR-SIM's geometry handlers' defaults for a key a shape leaves out."""
DEFAULT_ACKER_WHEELBASE = 1.0  # [m]
STATE_DIMS = {"diff": 3, "omni": 3, "omni_angular": 3, "acker": 4, None: 3}
ACTION_DIMS = {"diff": 2, "omni": 2, "omni_angular": 3, "acker": 2, None: 2}
DEFAULT_ALPHA = {"diff": (0.03, 0.0, 0.0, 0.03), "acker": (0.03, 0.0, 0.0, 0.03),
                 "omni": (0.03, 0.03), "omni_angular": (0.03, 0.03, 0.03)}
MAX_STATE_DIM = 16


# --------------------------------------------------------------------------------------------
# Value checkers. `where` is the full location prefix "<source>: <key path>".
# --------------------------------------------------------------------------------------------

_check_keys = check_keys
_choice = choice


def _at_least(value: float, raw: Any, where: str, minimum: float, what: str) -> float:
    """``value`` if it is >= minimum (or infinite), else the error naming the minimum."""
    if math.isfinite(value) and value < minimum:
        raise _fail(where, f"must be at least {minimum:g} {what}, got {short_repr(raw)}")
    return value


def _optional(mapping: dict, key: str) -> Any:
    """Value of an optional key; an explicit null counts as absent."""
    return mapping.get(key)


def _integer(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or not low <= value <= high:
        raise _fail(where, f"must be an integer in [{low}, {high}], got {short_repr(value)}")
    return int(value)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _fail(where, f"must be a string, got {short_repr(value)}")
    return value


def _plain(value: Any, where: str) -> Any:
    """A deep copy of a YAML value made of mappings (string keys), lists and scalars."""
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _fail(where, f"keys must be strings, got {short_repr(k)}")
            out[k] = _plain(v, f"{where}.{k}")
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if value is None or isinstance(value, (str, bool, int, float, np.integer, np.floating,
                                           np.bool_)):
        return value
    raise _fail(where, f"must be a YAML value (mapping, list, number, string), got "
                       f"{type(value).__name__}")


def _options(raw: Any, allowed: tuple[str, ...], where: str) -> dict:
    """A presentation mapping (plot, gui): its keys checked, its values carried as given."""
    if raw is None:
        return {}
    return _plain(check_keys(raw, allowed, where), where)


# --------------------------------------------------------------------------------------------
# World
# --------------------------------------------------------------------------------------------


def _collision_mode(value: Any, where: str) -> str:
    """IR-SIM's mode; ``reactive`` runs as ``unobstructed`` (IR-SIM's own alias). An unknown
    name is IR-SIM's fallback too (it logs a warning and runs ``unobstructed``): loaded so, with
    a SceneWarning naming the file, the key and the nearest mode."""
    if not isinstance(value, str):
        raise _fail(where, f"must be one of {', '.join(COLLISION_MODES)}, got "
                           f"{short_repr(value)}")
    if value == "reactive":
        return "unobstructed"
    if value not in COLLISION_MODES:
        warnings.warn(f"{where}: unknown collision mode {short_repr(value)}"
                      f"{suggestion(value, COLLISION_MODES)}; runs as 'unobstructed', as in "
                      f"IR-SIM (choices: {', '.join(COLLISION_MODES)})", SceneWarning,
                      stacklevel=4)
        return "unobstructed"
    return value


def _parse_world(raw: Any, where: str, base_dir: str | None, seed: int) -> WorldSpec:
    """Check the `world` section and load its obstacle map."""
    world = check_keys({} if raw is None else raw, WORLD_KEYS, where)
    values: dict[str, Any] = {}
    for key in ("width", "height"):
        if _optional(world, key) is not None:
            values[key] = checks.size(world[key], f"{where}.{key}", maximum=MAX_WORLD_SIZE)
    if _optional(world, "map_resolution") is not None:
        values["map_resolution"] = checks.size(world["map_resolution"],
                                               f"{where}.map_resolution")
    if _optional(world, "step_time") is not None:
        step = _bounded(world["step_time"], f"{where}.step_time", low=0.0, strict=True)
        values["step_time"] = _at_least(step, world["step_time"], f"{where}.step_time",
                                        MIN_STEP_TIME, "s")
    if _optional(world, "sample_time") is not None:
        values["sample_time"] = _bounded(world["sample_time"], f"{where}.sample_time", low=0.0,
                                         strict=True)
    if _optional(world, "gravity") is not None:
        values["gravity"] = _bounded(world["gravity"], f"{where}.gravity", low=0.0)
    for key in ("friction", "drive_tau"):
        if _optional(world, key) is not None:
            values[key] = _bounded(world[key], f"{where}.{key}", low=0.0)
    if _optional(world, "restitution") is not None:
        values["restitution"] = _bounded(world["restitution"], f"{where}.restitution",
                                         low=0.0, high=1.0)
    for key in ("friction_mixing", "restitution_mixing"):
        if _optional(world, key) is not None:
            values[key] = choice(world[key], MIX_RULES, f"{where}.{key}", "mixing rule")
    if _optional(world, "offset") is not None:
        values["offset"] = _vector(world["offset"], f"{where}.offset", 2, magnitude=MAX_COORD)
    if _optional(world, "name") is not None:
        values["name"] = _text(world["name"], f"{where}.name")
    if _optional(world, "status") is not None:
        values["status"] = str(_plain(world["status"], f"{where}.status"))
    if _optional(world, "collision_mode") is not None:
        values["collision_mode"] = _collision_mode(world["collision_mode"],
                                                   f"{where}.collision_mode")
    if _optional(world, "control_mode") is not None:
        values["control_mode"] = choice(world["control_mode"], CONTROL_MODES,
                                        f"{where}.control_mode", "control mode")
    if _optional(world, "step_mode") is not None:
        values["step_mode"] = choice(world["step_mode"], STEP_MODES, f"{where}.step_mode",
                                     "step mode")
    if _optional(world, "fog_map") is not None:
        values["fog_map"] = _flag(world["fog_map"], f"{where}.fog_map")
    if _optional(world, "fog_map_resolution") is not None:
        values["fog_map_resolution"] = checks.size(world["fog_map_resolution"],
                                                   f"{where}.fog_map_resolution")
    plot = _options(_optional(world, "plot"), WORLD_PLOT_KEYS, f"{where}.plot")
    if isinstance(plot.get("saved_figure"), Mapping):
        check_keys(plot["saved_figure"], SAVED_FIGURE_KEYS, f"{where}.plot.saved_figure")
    values["plot"] = plot
    if _optional(world, "mdownsample") is not None:
        values["mdownsample"] = _integer(world["mdownsample"], f"{where}.mdownsample", 1,
                                         1 << 20)
    if _optional(world, "obstacle_map") is not None:
        defaults = WorldSpec()
        m = resolve_map(world["obstacle_map"], f"{where}.obstacle_map", base_dir,
                        width=values.get("width", defaults.width),
                        height=values.get("height", defaults.height),
                        mdownsample=values.get("mdownsample"),
                        map_resolution=values.get("map_resolution"), scene_seed=seed)
        values["obstacle_map"] = m.occ
        values["map_cell"] = m.cell
        values["map_resolution"] = m.cell[0]
        values["obstacle_map_source"] = m.source
    return WorldSpec(**values)


def _parse_gui(raw: Any, where: str) -> dict:
    gui = check_keys({} if raw is None else raw, tuple(GUI_KEYS), where)
    return {key: _options(value, GUI_KEYS[key], f"{where}.{key}") for key, value in gui.items()}


# --------------------------------------------------------------------------------------------
# Bodies
# --------------------------------------------------------------------------------------------


def _parse_kinematics(raw: Any, where: str, shape_wheelbase: float | None
                      ) -> KinematicsSpec | None:
    """The drive, or None for a body without one (no name, or IR-SIM's ``static``)."""
    kin = check_keys(raw, KINEMATICS_KEYS, where)
    if kin.get("name") is None:
        # IR-SIM's factory: kinematics without a name make an object that never drives.
        return None
    name = choice(kin.get("name"), KINEMATICS_NAMES, f"{where}.name", "kinematics")
    if name == "static":
        return None
    wheelbase = None
    if _optional(kin, "wheelbase") is not None:
        wheelbase = checks.size(kin["wheelbase"], f"{where}.wheelbase")
    elif name == "acker":
        wheelbase = shape_wheelbase if shape_wheelbase is not None else DEFAULT_ACKER_WHEELBASE
    tau = None
    if _optional(kin, "tau") is not None:
        tau = _bounded(kin["tau"], f"{where}.tau", low=0.0)
    mode = "steer"
    if _optional(kin, "mode") is not None:
        mode = choice(kin["mode"], ("steer", "angular"), f"{where}.mode", "acker mode")
        if name != "acker":
            raise _fail(f"{where}.mode", f"only acker kinematics take a mode, not {name!r}")
        if mode == "angular":
            raise _fail(f"{where}.mode", "'angular' (the command is the steering rate) is not "
                                         "supported here; use 'steer' (the command is the "
                                         "steering angle)")
    noise = False
    if _optional(kin, "noise") is not None:
        noise = _flag(kin["noise"], f"{where}.noise")
    alpha = DEFAULT_ALPHA[name]
    if _optional(kin, "alpha") is not None:
        raw_alpha = kin["alpha"]
        need = len(DEFAULT_ALPHA[name])
        if not isinstance(raw_alpha, (list, tuple)) or len(raw_alpha) < need:
            raise _fail(f"{where}.alpha", f"must be a list of at least {need} numbers >= 0 "
                                          f"for {name}, got {short_repr(raw_alpha)}")
        alpha = tuple(_bounded(v, f"{where}.alpha[{i}]", low=0.0)
                      for i, v in enumerate(raw_alpha))[:need]
    return KinematicsSpec(name, wheelbase, tau, noise, tuple(alpha), mode)


def _parse_shape(raw: Any, where: str, *, in_compound: bool = False) -> dict:
    """Key-check a shape spec (recursively for compound parts), fill in IR-SIM's defaults and
    return a shallow copy (build_shape checks the values; the caller deep-copies once the
    shape is built)."""
    if not isinstance(raw, Mapping):
        raise _fail(where, f"must be a mapping, got {type(raw).__name__}")
    choices = [n for n in SHAPE_KEYS if not (in_compound and n == "compound")]
    name = choice(raw.get("name"), choices, f"{where}.name", "shape")
    allowed = SHAPE_KEYS[name] + (("pose",) if in_compound else ())
    shape = check_keys(raw, allowed, where)
    for key, value in SHAPE_DEFAULTS.get(name, {}).items():
        if shape.get(key) is None and not shape.get("random_shape"):
            shape[key] = copy.deepcopy(value)
    for key in SHAPE_REQUIRED.get(name, ()):
        if shape.get(key) is None and not shape.get("random_shape"):
            raise _fail(where, f"missing key '{key}' for shape '{name}'")
    if shape.get("random_shape") is not None:
        _flag(shape["random_shape"], f"{where}.random_shape")
    if shape.get("is_convex") is not None:
        _flag(shape["is_convex"], f"{where}.is_convex")
    if name == "compound":
        parts = shape["parts"]
        if not isinstance(parts, (list, tuple)) or not parts:
            raise _fail(f"{where}.parts", "must be a non-empty list of shapes")
        shape["parts"] = [_parse_shape(p, f"{where}.parts[{k}]", in_compound=True)
                          for k, p in enumerate(parts)]
    return shape


def _shape_spec(raw: Any, where: str, rng: np.random.Generator) -> tuple[dict, float | None]:
    """The concrete shape dict build_shape takes, and the shape's ``wheelbase`` [m] (None).

    A ``wheelbase`` (IR-SIM's car shapes) puts the body origin on the rear axle: the rectangle
    or circle is shifted forward by wheelbase / 2 in the body frame. ``random_shape`` draws
    from ``rng`` (the scene's seed).
    """
    shape = _parse_shape(DEFAULT_SHAPE if raw is None else raw, where)
    wheelbase = None
    if shape.get("wheelbase") is not None:
        wheelbase = checks.size(shape["wheelbase"], f"{where}.wheelbase")
    if shape["name"] == "compound":
        parts = [resolve_random_shape(p, f"{where}.parts[{k}]", rng)
                 for k, p in enumerate(shape["parts"])]
        return {"name": "compound", "parts": parts}, None
    out = resolve_random_shape(shape, where, rng)
    out.pop("wheelbase", None)
    if wheelbase is not None:
        if out["name"] == "circle":
            cx, cy = out.get("center", [0.0, 0.0]) if isinstance(out.get("center"),
                                                                 (list, tuple)) else (0.0, 0.0)
            out["center"] = [_real(cx, f"{where}.center[0]", magnitude=MAX_COORD)
                             + wheelbase / 2, _real(cy, f"{where}.center[1]",
                                                    magnitude=MAX_COORD)]
        elif out["name"] == "rectangle":
            out["center"] = [wheelbase / 2, 0.0]
    return out, wheelbase


def _parse_sensors(raw: Any, where: str) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """Sensor names in order, and each entry parsed by its sensor's declaration (the sensor
    registry: ``physics/sensor_registry.py``)."""
    if not isinstance(raw, (list, tuple)):
        raise _fail(where, f"must be a list of sensor mappings, got {short_repr(raw)}")
    names: list[str] = []
    specs: list[Any] = []
    known = sensor_registry.scene_names()
    for k, item in enumerate(raw):
        item_where = f"{where}[{k}]"
        if not isinstance(item, Mapping):
            raise _fail(item_where, f"must be a mapping, got {type(item).__name__}")
        # `type` is accepted as an alias of `name` (IR-SIM style configs use either).
        given = [_choice(item[key], known, item_where, "sensor")
                 for key in SENSOR_KEYS if key in item]
        if not given or (len(given) == 2 and given[0] != given[1]):
            raise _fail(item_where, "needs one sensor name (key 'name', or its alias 'type')")
        name = given[0]
        if name in names:
            raise _fail(item_where, f"duplicate sensor '{name}'")
        names.append(name)
        specs.append(sensor_registry.lookup(name).parse(item, item_where))
    return tuple(names), tuple(specs)


def _parse_state(raw: Any, where: str, state_dim: int) -> tuple[float, ...]:
    """(x, y, theta, ...) of ``state_dim`` entries, padded with zeros (IR-SIM's fit_length).

    Every entry is bounded by MAX_COORD (metres for x, y; radians for the angles). A state
    longer than ``state_dim`` is cut to it, as IR-SIM does, with a SceneWarning (IR-SIM logs
    one too): ``[5, 5, 0, 0]`` for a diff robot is its pose.
    """
    if not isinstance(raw, (list, tuple, np.ndarray)) or not 2 <= len(raw) <= MAX_STATE_DIM:
        raise _fail(where, f"must be a list of 2 to {state_dim} numbers, got {short_repr(raw)}")
    values = tuple(_real(v, f"{where}[{k}]", magnitude=MAX_COORD) for k, v in enumerate(raw))
    if len(values) > state_dim:
        warnings.warn(f"{where}: {len(values)} entries, more than the state's {state_dim} "
                      f"(state_dim); the last {len(values) - state_dim} are dropped, as in "
                      "IR-SIM", SceneWarning, stacklevel=6)
        return values[:state_dim]
    return values + (0.0,) * (state_dim - len(values))


def _pose(value: Any, where: str) -> tuple[float, float, float] | None:
    if not isinstance(value, (list, tuple, np.ndarray)) or not 2 <= len(value) <= 4 \
            or not all(checks.is_real(v) for v in value):
        return None
    x, y, *rest = (_real(v, f"{where}[{k}]", magnitude=MAX_COORD) for k, v in enumerate(value))
    return (x, y, rest[0] if rest else 0.0)


def _parse_goal(raw: Any, where: str) -> tuple[tuple[float, float, float], ...] | None:
    """One goal pose [x, y(, theta)] or a list of them (visited in order); a 4th entry (an
    acker's steering angle) is accepted and not used."""
    if raw is None:
        return None
    one = _pose(raw, where)
    if one is not None:
        return (one,)
    if isinstance(raw, (list, tuple)) and raw:
        poses = tuple(_pose(g, f"{where}[{k}]") for k, g in enumerate(raw))
        if all(p is not None for p in poses):
            return poses  # type: ignore[return-value]
    raise _fail(where, f"must be a goal pose [x, y, theta] (2 to 4 numbers) or a list of "
                       f"them, got {short_repr(raw)}")


def _parse_mass(raw: Any, where: str, driven: bool, static: bool) -> float:
    if raw is None:
        return 1.0 if driven and not static else math.inf
    mass = _bounded(raw, where, low=0.0, strict=True, allow_inf=True)
    mass = _at_least(mass, raw, where, MIN_MASS, "kg")
    # A static body never moves, so its mass is irrelevant even if it has kinematics.
    if driven and not static and math.isinf(mass):
        raise _fail(where, "a driven body needs a finite mass")
    return mass


def _parse_velocity(body: dict, where: dict, kin: KinematicsSpec | None
                    ) -> tuple[tuple[float, float], float, tuple[float, ...]]:
    """Initial world-frame velocity [m/s] and spin [rad/s] of a passive body (IR-SIM's
    ``velocity`` [vx, vy(, omega)] or push_envs' ``omega``), or a driven body's initial
    drive state (``velocity`` in its command frame: diff [v, omega], omni [vx, vy] ...)."""
    velocity = (0.0, 0.0)
    omega = 0.0
    drive: tuple[float, ...] = ()
    raw = _optional(body, "velocity")
    if kin is not None:
        dim = ACTION_DIMS[kin.name]
        if raw is not None:
            drive = _vector(raw, where["velocity"], dim)
        if _optional(body, "omega") is not None:
            raise _fail(where["omega"], "not allowed on a body with kinematics")
        return velocity, omega, drive
    if raw is not None:
        if not isinstance(raw, (list, tuple, np.ndarray)) or len(raw) not in (2, 3):
            raise _fail(where["velocity"], f"must be a list of 2 or 3 numbers [vx, vy(, "
                                           f"omega)], got {short_repr(raw)}")
        values = tuple(_real(v, f"{where['velocity']}[{k}]") for k, v in enumerate(raw))
        velocity = (values[0], values[1])
        omega = values[2] if len(values) == 3 else 0.0
    if _optional(body, "omega") is not None:
        omega = _real(body["omega"], where["omega"])
    return velocity, omega, drive


def _parse_limits(body: dict, where: dict, dim: int, passive: bool
                  ) -> dict[str, tuple[float, ...]]:
    """vel_min <= vel_max (elementwise) and acce > 0 (inf allowed); ``dim`` entries each
    (a passive body, which has no drive, may give 2 or 3 as IR-SIM's passive model)."""
    vel_min = (-1.0,) * dim
    vel_max = (1.0,) * dim
    acce = (math.inf,) * dim

    def vec(key: str, **kw: Any) -> tuple[float, ...]:
        value = body[key]
        sizes = (2, 3) if passive else (dim,)
        n = len(value) if isinstance(value, (list, tuple, np.ndarray)) and \
            len(value) in sizes else dim
        return _vector(value, where[key], n, **kw)[:dim]

    if _optional(body, "vel_min") is not None:
        vel_min = vec("vel_min")
    if _optional(body, "vel_max") is not None:
        vel_max = vec("vel_max")
    if _optional(body, "acce") is not None:
        acce = vec("acce", allow_inf=True)
        for k, a in enumerate(acce):
            if a <= 0:
                raise _fail(f"{where['acce']}[{k}]", f"must be > 0, got {a:g}")
    vel_min = vel_min + (-1.0,) * (dim - len(vel_min))
    vel_max = vel_max + (1.0,) * (dim - len(vel_max))
    acce = acce + (math.inf,) * (dim - len(acce))
    if any(lo > hi for lo, hi in zip(vel_min, vel_max, strict=True)):
        raise _fail(where["vel_min"], f"must be <= vel_max elementwise, got {vel_min} "
                                      f"and {vel_max}")
    return {"vel_min": vel_min, "vel_max": vel_max, "acce": acce}


def _parsed(body: dict, where: dict, key: str, parse: Callable[[Any, str], Any],
            default: Any = None) -> Any:
    """``parse(value, where)`` of the optional key ``key``, or ``default`` when it is absent
    (or null)."""
    value = _optional(body, key)
    return default if value is None else parse(value, where[key])


def _optional_number(body: dict, key: str, where: dict, **bounds: Any) -> float | None:
    if _optional(body, key) is None:
        return None
    return _bounded(body[key], where[key], **bounds)


def _parse_inertia(body: dict, where: dict) -> float | None:
    inertia = _optional_number(body, "inertia", where, low=0.0, strict=True)
    if inertia is None:
        return None
    return _at_least(inertia, body["inertia"], where["inertia"], MIN_INERTIA, "kg m^2")


def _behavior(raw: Any, where: str) -> dict | None:
    """A behaviour as a plain dict with a string ``name`` (a bare name is ``{name: <it>}``),
    or None when absent or empty. Its name and parameters are checked by the behaviours."""
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, Mapping):
        raise _fail(where, f"must be a mapping with a 'name' (or a name), got "
                           f"{short_repr(raw)}")
    if not raw:
        return None
    if not isinstance(raw.get("name"), str) or not raw["name"]:
        raise _fail(f"{where}.name", f"must be a behaviour name (a string), got "
                                     f"{short_repr(raw.get('name'))}")
    return _plain(raw, where)


class _Where(dict):
    """Key path of each of an object's keys (``robot[1].shape[2]``), the group's by default."""

    def __init__(self, entry: ObjectEntry) -> None:
        super().__init__(entry.where)
        self.base = entry.group_path

    def __missing__(self, key: str) -> str:
        return f"{self.base}.{key}"


def _parse_body(entry: ObjectEntry, name: str, rng: np.random.Generator,
                groups: list[RandomGroup]) -> BodySpec:
    """Check one object of a group, apply IR-SIM's defaults and build its shape once."""
    body = check_keys(entry.values, BODY_KEYS, entry.group_path)
    where = _Where(entry)
    if _optional(body, "role") is not None and body["role"] != entry.role:
        raise _fail(where["role"], f"is {entry.role!r} in the {entry.role} section, got "
                                   f"{short_repr(body['role'])} (the section sets the role)")
    if body.get("name") is not None:
        name = body["name"]
        if not isinstance(name, str) or not name:
            raise _fail(where["name"], f"must be a non-empty string, got {short_repr(name)}")
    shape, shape_wheelbase = _shape_spec(body.get("shape"), where["shape"], rng)
    kinematics = None
    if _optional(body, "kinematics") is not None:
        kinematics = _parse_kinematics(body["kinematics"], where["kinematics"], shape_wheelbase)
    kin_name = kinematics.name if kinematics is not None else None
    static = body.get("static", False)
    if static is None:
        static = False
    if not isinstance(static, bool):
        raise _fail(where["static"], f"must be true or false, got {short_repr(static)}")
    raw_kin = body.get("kinematics")
    if isinstance(raw_kin, Mapping) and raw_kin.get("name") == "static":
        static = True  # IR-SIM's static kinematics: an object that never moves
    # Built now so that bad geometry is reported at load time, with its key path; the
    # result is kept in the spec for compile_scene. The copy is deep (the spec must not
    # share lists with the caller's dict) and bounded: build_shape checked the sizes.
    info = build_shape(shape, where["shape"])
    shape = copy.deepcopy(shape)
    color = body.get("color")
    if color is not None and not isinstance(color, str):
        raise _fail(where["color"], f"must be a string, got {short_repr(color)}")
    sensors: tuple[str, ...] = ()
    sensor_specs: tuple[Any, ...] = ()
    if _optional(body, "sensors") is not None:
        sensors, sensor_specs = _parse_sensors(body["sensors"], where["sensors"])
    lidar = next((x for x in sensor_specs if isinstance(x, LidarSpec)), None)
    state_dim = STATE_DIMS[kin_name]
    if _optional(body, "state_dim") is not None:
        state_dim = _integer(body["state_dim"], where["state_dim"], STATE_DIMS[kin_name],
                             MAX_STATE_DIM)
    action_dim = ACTION_DIMS[kin_name]
    vel_dim = action_dim if kinematics is not None else 3
    if _optional(body, "vel_dim") is not None:
        vel_dim = _integer(body["vel_dim"], where["vel_dim"], vel_dim, vel_dim)
    if entry.random_group >= 0:
        # Drawn per env at every reset (placement.py); this placeholder is replaced when the
        # scene compiles, before any check reads it.
        state = (0.0,) * state_dim
        goal = None
    else:
        state = _parse_state(entry.state, entry.state_where, state_dim)
        goal = _parse_goal(entry.goal, entry.goal_where)
    velocity, omega, drive = _parse_velocity(body, where, kinematics)
    goal_threshold = 0.1
    if _optional(body, "goal_threshold") is not None:
        goal_threshold = _bounded(body["goal_threshold"], where["goal_threshold"], low=0.0,
                                  strict=True, magnitude=MAX_COORD)
    arrive_mode = "position"
    if _optional(body, "arrive_mode") is not None:
        arrive_mode = choice(body["arrive_mode"], ARRIVE_MODES, where["arrive_mode"],
                             "arrive mode")
    group = entry.group
    if _optional(body, "group") is not None or not isinstance(group, (int, np.integer)):
        group = _integer(group, f"{entry.group_path}.group", 0, 1 << 30)
    group_behavior = _behavior(body.get("group_behavior"), where["group_behavior"])
    behavior = _behavior(body.get("behavior"), where["behavior"])
    if behavior is None and group_behavior is not None:
        behavior = copy.deepcopy(group_behavior)
    unobstructed = _parsed(body, where, "unobstructed", _flag, False)
    bullet = _parsed(body, where, "bullet", _flag, False)
    # As given (the sensors' fov.py applies IR-SIM's defaults from the lidar).
    fov = fov_radius = None
    if _optional(body, "fov") is not None:
        fov = min(_bounded(body["fov"], where["fov"], low=0.0), 2.0 * math.pi)
    if _optional(body, "fov_radius") is not None:
        fov_radius = _bounded(body["fov_radius"], where["fov_radius"], low=0.0, allow_inf=True)
    angle_range = (-math.pi, math.pi)
    if _optional(body, "angle_range") is not None:
        angle_range = _vector(body["angle_range"], where["angle_range"], 2)  # type: ignore
        if angle_range[0] >= angle_range[1]:
            raise _fail(where["angle_range"], f"must be [min, max] with min < max, got "
                                              f"{list(angle_range)}")
    description = _parsed(body, where, "description", _text)
    group_name = _parsed(body, where, "group_name", _text)
    mass = _parse_mass(body.get("mass"), where["mass"], kinematics is not None, static)
    return BodySpec(
        name=name,
        role=entry.role,
        kinematics=kinematics,
        shape=shape,
        state=state,
        velocity=velocity,
        omega=omega,
        mass=mass,
        friction=_optional_number(body, "friction", where, low=0.0),
        inertia=_parse_inertia(body, where),
        restitution=_optional_number(body, "restitution", where, low=0.0, high=1.0),
        static=static,
        sensors=sensors,
        color=color,
        built_shape=(shape, info),
        lidar=lidar,
        sensor_specs=sensor_specs,
        goal=goal,
        goal_threshold=goal_threshold,
        arrive_mode=arrive_mode,
        behavior=behavior,
        group=group,
        group_behavior=group_behavior,
        unobstructed=unobstructed,
        bullet=bullet,
        fov=fov,
        fov_radius=fov_radius,
        state_dim=state_dim,
        path=entry.path,
        vel_dim=vel_dim,
        drive=drive,
        angle_range=angle_range,
        description=description,
        plot=_options(_optional(body, "plot"), BODY_PLOT_KEYS, where["plot"]),
        group_name=group_name,
        random_group=entry.random_group,
        **_parse_limits(body, where, action_dim if kinematics is not None else 2,
                        passive=kinematics is None),
    )


def _parse_bodies(top: dict, source: str, world: WorldSpec, rng: np.random.Generator
                  ) -> tuple[tuple[BodySpec, ...], tuple[RandomGroup, ...]]:
    """Robots first, then obstacles, each group in YAML order, named by IR-SIM's running id
    unless named; names must be unique."""
    entries, groups = expand_sections(top, source, world)
    bodies: list[BodySpec] = []
    first_use: dict[str, str] = {}
    for index, entry in enumerate(entries):
        body = _parse_body(entry, f"{entry.role}_{index}", rng, groups)
        if body.name in first_use:
            where = entry.where.get("name", f"{entry.group_path}.name")
            raise _fail(where, f"duplicate name {short_repr(body.name)} (also used by "
                               f"{first_use[body.name]})")
        first_use[body.name] = entry.path
        if entry.random_group >= 0:
            groups[entry.random_group].bodies.append(index)
        bodies.append(body)
    return tuple(bodies), tuple(groups)


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def _seed(seed: Any) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) \
            or not 0 <= seed < 2**64:
        raise ValueError(f"load_scene: seed must be an integer in [0, 2**64), got "
                         f"{short_repr(seed)}")
    return int(seed)


def load_scene(scene: str | os.PathLike | Mapping, /, *, source: str | None = None,
               base_dir: str | os.PathLike | None = None, seed: int = 0) -> SceneSpec:
    """Load and check a scene from a YAML file path or an already parsed mapping.

    Args:
        scene: path of a YAML file, or a parsed scene mapping (not modified).
        source: name used in error messages and stored in the spec; defaults to the path,
            or ``"<dict>"`` for a mapping. Give the original file's name when validating a
            dict parsed (and perhaps edited) from that file.
        base_dir: folder against which relative paths in the scene (the obstacle map image)
            are resolved; defaults to the YAML file's folder, or the current directory for
            a mapping.
        seed: seed of the draws made at load, shared by every env: ``random_shape`` shapes
            and a generator map without its own ``seed``.

    Raises:
        SceneError: any problem, with message ``"<source>: <key path>: <reason>"``.
        TypeError: ``scene`` is neither a path nor a mapping.
    """
    if source is not None and not isinstance(source, str):
        raise TypeError(f"load_scene: source must be a string, got {type(source).__name__}")
    if base_dir is not None:
        if not isinstance(base_dir, (str, os.PathLike)):
            raise TypeError(f"load_scene: base_dir must be a path, got "
                            f"{type(base_dir).__name__}")
        base_dir = os.fspath(base_dir)
    seed = _seed(seed)
    if isinstance(scene, Mapping):
        name = "<dict>" if source is None else source
        top: Any = scene
    elif isinstance(scene, (str, bytes, os.PathLike)):
        path = os.fsdecode(scene)
        name = path if source is None else source
        if base_dir is None:
            base_dir = os.path.dirname(os.path.abspath(path))
        top = read_scene_yaml(path)
    else:
        raise TypeError(f"load_scene: a scene is a path (str or os.PathLike) or a mapping, "
                        f"got {type(scene).__name__}")
    if not isinstance(top, Mapping):
        raise SceneError(f"{name}: top level must be a mapping, got {type(top).__name__}")
    if isinstance(top.get("irsim"), Mapping):
        # IR-SIM: a file shared with another simulator nests its blocks under `irsim`; the
        # other keys belong to that simulator.
        top = top["irsim"]
    top = check_keys(top, TOP_KEYS, name)
    world = _parse_world(top.get("world"), f"{name}: world", base_dir, seed)
    gui = _parse_gui(top.get("gui"), f"{name}: gui")
    custom = _plain(top.get("custom") or {}, f"{name}: custom")
    if not isinstance(custom, dict):
        raise _fail(f"{name}: custom", f"must be a mapping, got {short_repr(custom)}")
    rng = np.random.default_rng([seed, 0x73686170])  # random_shape draws
    bodies, groups = _parse_bodies(top, name, world, rng)
    return SceneSpec(world=world, bodies=bodies, source=name, base_dir=base_dir,
                     groups=groups, gui=gui, custom=custom, seed=seed)
