"""YAML scene files -> checked, frozen scene specs (setup time only).

A scene has three top-level sections::

    world:    {width, height, step_time, gravity, friction, restitution, drive_tau,
               obstacle_map, map_resolution, offset, friction_mixing, restitution_mixing}
    robot:    [ {name, kinematics, shape, state, mass, ...}, ... ]   # or a single mapping
    obstacle: [ ... ]                                                  # same keys as robot

Every problem is reported as a :class:`SceneError` whose message reads
``"<source>: <key path>: <reason>"``, e.g.
``"my_scene.yaml: robot[0].shape.radius: must be > 0, got -1"``; offending values are
quoted as short excerpts. Numbers are bounded by :mod:`.limits`, and YAML files are read
with bounded size, depth and alias expansion (:mod:`.safe_yaml`).

A body's ``sensors:`` entries are parsed by their own sensor modules (``push_envs/sensors/``),
found by name in the sensor registry (:mod:`.sensor_registry`): this module lists no sensor.

Units: metres, seconds, kilograms, radians (kg·m² for inertia). Optional keys given an
explicit YAML ``null`` behave as if absent. Only a ``yaml.SafeLoader`` is used.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import checks, sensor_registry
from .checks import bounded as _bounded
from .checks import fail as _fail
from .checks import flag as _flag
from .checks import keys as _check_keys
from .checks import real as _real
from .checks import vector as _vector
from .errors import SceneError, short_repr
from .grid import load_grid
from .lidar import LidarSpec
from .limits import (
    MAX_BODIES,
    MAX_COORD,
    MAX_WORLD_SIZE,
    MIN_INERTIA,
    MIN_MASS,
    MIN_STEP_TIME,
)
from .mixing import MIX_RULES
from .safe_yaml import read_scene_yaml
from .shapes import ShapeInfo, build_shape

__all__ = ["SceneError", "WorldSpec", "KinematicsSpec", "LidarSpec", "BodySpec", "SceneSpec",
           "load_scene"]


# --------------------------------------------------------------------------------------------
# Specs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class WorldSpec:
    """World-wide settings.

    ``width``/``height`` [m] only bound drawing and the map; they are NOT walls.
    ``obstacle_map`` is a bool occupancy grid ``occ[i, j]`` (i along x) with cells of
    ``map_resolution`` metres, whose corner (0, 0) sits at ``offset`` [m].
    ``eq=False`` because the grid is a numpy array (instances compare by identity).
    """

    width: float = 10.0
    height: float = 10.0
    step_time: float = 0.1  # [s]
    gravity: float = 9.81  # [m/s^2], scales ground (Coulomb) friction
    friction: float = 0.5  # default ground friction coefficient
    restitution: float = 0.0  # default restitution, in [0, 1]
    drive_tau: float = 0.0  # [s] default first-order lag of driven bodies
    obstacle_map: np.ndarray | None = None
    map_resolution: float = 0.1  # [m]
    offset: tuple[float, float] = (0.0, 0.0)  # [m]
    obstacle_map_source: str | None = None  # the map's PNG path as given, for messages
    friction_mixing: str = "mean"  # how a contact's friction is made from two (mixing.py)
    restitution_mixing: str = "mean"  # and its restitution


@dataclass(frozen=True)
class KinematicsSpec:
    """Drive model of a body: ``"diff"``, ``"omni"`` or ``"acker"``.

    ``wheelbase`` [m] is only meaningful for ``acker`` (defaults to 1.0 there when absent);
    ``tau`` [s] is the drive lag, None meaning the world's ``drive_tau``.
    """

    name: str
    wheelbase: float | None = None
    tau: float | None = None


@dataclass(frozen=True)
class BodySpec:
    """One robot or obstacle, with defaults already applied.

    ``mass`` [kg] is 1.0 for driven bodies and inf (immovable) for passive ones when not
    given. ``friction``, ``inertia`` [kg·m²] and ``restitution`` stay None when not given
    (None = world default / computed from the shape). ``state`` is (x [m], y [m], theta [rad])
    or (x, y, theta, steer [rad]) for ``acker``; ``velocity`` [m/s] (world frame) and
    ``omega`` [rad/s] are initial velocities of passive bodies. ``vel_min``/``vel_max``
    bound the drive command and ``acce`` its rate of change (per second).
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
    vel_min: tuple[float, float]
    vel_max: tuple[float, float]
    acce: tuple[float, float]
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
    # Field of view [rad] and its radius [m] (IR-SIM's ``fov`` / ``fov_radius``), as given
    # (None: not given; IR-SIM's defaults from the lidar are applied by physics/fov.py).
    fov: float | None = None
    fov_radius: float | None = None
    bullet: bool = False  # swept continuously every sub-step, out of the sub-step count

    def shape_info(self, where: str) -> ShapeInfo:
        """The compiled shape (built once by load_scene; rebuilt only if ``shape`` changed)."""
        if self.built_shape is not None and self.built_shape[0] is self.shape:
            return self.built_shape[1]
        return build_shape(self.shape, where)


@dataclass(frozen=True)
class SceneSpec:
    """A whole scene: world settings and bodies (robots first, then obstacles, YAML order)."""

    world: WorldSpec
    bodies: tuple[BodySpec, ...]
    source: str
    base_dir: str | None


# --------------------------------------------------------------------------------------------
# Allowed keys (kept here so the error messages and the checks cannot drift apart)
# --------------------------------------------------------------------------------------------

TOP_KEYS = ("world", "robot", "obstacle")
WORLD_KEYS = (
    "width", "height", "step_time", "gravity", "friction", "restitution", "drive_tau",
    "obstacle_map", "map_resolution", "offset", "friction_mixing", "restitution_mixing",
)
BODY_KEYS = (
    "name", "kinematics", "shape", "state", "velocity", "omega", "mass", "friction",
    "inertia", "restitution", "static", "vel_min", "vel_max", "acce", "sensors", "color",
    "fov", "fov_radius", "bullet",
)
KINEMATICS_KEYS = ("name", "wheelbase", "tau")
KINEMATICS_NAMES = ("diff", "omni", "acker")
SENSOR_KEYS = ("name", "type")  # the sensor's name; its other keys are its module's
SHAPE_KEYS = {
    "circle": ("name", "radius", "center"),
    "rectangle": ("name", "length", "width"),
    "polygon": ("name", "vertices"),
    "linestring": ("name", "vertices"),
    "compound": ("name", "parts"),
}
SHAPE_REQUIRED = {
    "circle": ("radius",),
    "rectangle": ("length", "width"),
    "polygon": ("vertices",),
    "linestring": ("vertices",),
    "compound": ("parts",),
}
DEFAULT_SHAPE = {"name": "circle", "radius": 0.2}
DEFAULT_ACKER_WHEELBASE = 1.0  # [m]


# --------------------------------------------------------------------------------------------
# Value checkers. `where` is the full location prefix "<source>: <key path>".
# --------------------------------------------------------------------------------------------


def _at_least(value: float, raw: Any, where: str, minimum: float, what: str) -> float:
    """``value`` if it is >= minimum (or infinite), else the error naming the minimum."""
    if math.isfinite(value) and value < minimum:
        raise _fail(where, f"must be at least {minimum:g} {what}, got {short_repr(raw)}")
    return value


def _optional(mapping: dict, key: str) -> Any:
    """Value of an optional key; an explicit null counts as absent."""
    return mapping.get(key)


# --------------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------------


def _parse_world(raw: Any, where: str, base_dir: str | None) -> WorldSpec:
    """Check the `world` section and load its obstacle map."""
    world = _check_keys({} if raw is None else raw, WORLD_KEYS, where)
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
    for key in ("gravity", "friction", "drive_tau"):
        if _optional(world, key) is not None:
            values[key] = _bounded(world[key], f"{where}.{key}", low=0.0)
    if _optional(world, "restitution") is not None:
        values["restitution"] = _bounded(world["restitution"], f"{where}.restitution",
                                         low=0.0, high=1.0)
    for key in ("friction_mixing", "restitution_mixing"):
        if _optional(world, key) is not None:
            values[key] = _choice(world[key], MIX_RULES, f"{where}.{key}", "mixing rule")
    if _optional(world, "offset") is not None:
        values["offset"] = _vector(world["offset"], f"{where}.offset", 2, magnitude=MAX_COORD)
    if _optional(world, "obstacle_map") is not None:
        values["obstacle_map"] = load_grid(world["obstacle_map"], f"{where}.obstacle_map",
                                           base_dir)
        if isinstance(world["obstacle_map"], (str, os.PathLike)):
            values["obstacle_map_source"] = os.fspath(world["obstacle_map"])
    return WorldSpec(**values)


def _choice(value: Any, choices: Iterable[str], where: str, what: str) -> str:
    """A string among ``choices`` (checked as a string first: a numpy array compared with
    ``in`` would raise instead of failing)."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise _fail(where, f"unknown {what} {short_repr(value)}; choices: {', '.join(choices)}")
    return value


def _parse_kinematics(raw: Any, where: str) -> KinematicsSpec:
    kin = _check_keys(raw, KINEMATICS_KEYS, where)
    name = _choice(kin.get("name"), KINEMATICS_NAMES, f"{where}.name", "kinematics")
    wheelbase = None
    if _optional(kin, "wheelbase") is not None:
        wheelbase = checks.size(kin["wheelbase"], f"{where}.wheelbase")
    elif name == "acker":
        wheelbase = DEFAULT_ACKER_WHEELBASE
    tau = None
    if _optional(kin, "tau") is not None:
        tau = _bounded(kin["tau"], f"{where}.tau", low=0.0)
    return KinematicsSpec(name, wheelbase, tau)


def _parse_shape(raw: Any, where: str, *, in_compound: bool = False) -> dict:
    """Key-check a shape spec (recursively for compound parts) and return a shallow copy
    (build_shape checks the values; the caller deep-copies once the shape is built)."""
    if not isinstance(raw, Mapping):
        raise _fail(where, f"must be a mapping, got {type(raw).__name__}")
    choices = [n for n in SHAPE_KEYS if not (in_compound and n == "compound")]
    name = _choice(raw.get("name"), choices, f"{where}.name", "shape")
    allowed = SHAPE_KEYS[name] + (("pose",) if in_compound else ())
    shape = _check_keys(raw, allowed, where)
    for key in SHAPE_REQUIRED[name]:
        if key not in shape:
            raise _fail(where, f"missing key '{key}' for shape '{name}'")
    if name == "compound":
        parts = shape["parts"]
        if not isinstance(parts, (list, tuple)) or not parts:
            raise _fail(f"{where}.parts", "must be a non-empty list of shapes")
        shape["parts"] = [_parse_shape(p, f"{where}.parts[{k}]", in_compound=True)
                          for k, p in enumerate(parts)]
    return shape


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


def _parse_fov(body: dict, where: str) -> dict[str, float | None]:
    """``fov`` [rad] (clipped to [0, 2 pi] as IR-SIM's ClipTo2Pi) and ``fov_radius`` [m]."""
    out: dict[str, float | None] = {"fov": None, "fov_radius": None}
    if _optional(body, "fov") is not None:
        out["fov"] = min(_bounded(body["fov"], f"{where}.fov", low=0.0), 2.0 * math.pi)
    if _optional(body, "fov_radius") is not None:
        out["fov_radius"] = _bounded(body["fov_radius"], f"{where}.fov_radius", low=0.0,
                                     allow_inf=True)
    return out


def _parse_state(raw: Any, where: str, kinematics: KinematicsSpec | None) -> tuple[float, ...]:
    """(x, y, theta) padded with zeros; a 4th entry (steer) only for acker bodies.

    Every entry is bounded by MAX_COORD (metres for x, y; radians for the angles).
    """
    size = 4 if kinematics is not None and kinematics.name == "acker" else 3
    if raw is None:
        return (0.0,) * size
    if not isinstance(raw, (list, tuple, np.ndarray)) or not 2 <= len(raw) <= size:
        raise _fail(where, f"must be a list of 2 to {size} numbers, got {short_repr(raw)}")
    values = tuple(_real(v, f"{where}[{k}]", magnitude=MAX_COORD) for k, v in enumerate(raw))
    return values + (0.0,) * (size - len(values))


def _parse_mass(raw: Any, where: str, driven: bool, static: bool) -> float:
    if raw is None:
        return 1.0 if driven else math.inf
    mass = _bounded(raw, where, low=0.0, strict=True, allow_inf=True)
    mass = _at_least(mass, raw, where, MIN_MASS, "kg")
    # A static body never moves, so its mass is irrelevant even if it has kinematics.
    if driven and not static and math.isinf(mass):
        raise _fail(where, "a driven body needs a finite mass")
    return mass


def _parse_velocity(body: dict, where: str, driven: bool) -> tuple[tuple[float, float], float]:
    """Initial world-frame velocity [m/s] and spin [rad/s] of a passive body."""
    velocity = (0.0, 0.0)
    if _optional(body, "velocity") is not None:
        velocity = _vector(body["velocity"], f"{where}.velocity", 2)
    omega = 0.0
    if _optional(body, "omega") is not None:
        omega = _real(body["omega"], f"{where}.omega")
    # Driven bodies get their velocity from the drive; an initial one would be ambiguous.
    if driven and any(velocity):
        raise _fail(f"{where}.velocity", "not allowed on a body with kinematics")
    if driven and omega:
        raise _fail(f"{where}.omega", "not allowed on a body with kinematics")
    return velocity, omega


def _parse_limits(body: dict, where: str) -> dict[str, tuple[float, float]]:
    """vel_min <= vel_max (elementwise) and acce > 0 (inf allowed)."""
    vel_min = (-1.0, -1.0)
    vel_max = (1.0, 1.0)
    acce = (math.inf, math.inf)
    if _optional(body, "vel_min") is not None:
        vel_min = _vector(body["vel_min"], f"{where}.vel_min", 2)
    if _optional(body, "vel_max") is not None:
        vel_max = _vector(body["vel_max"], f"{where}.vel_max", 2)
    if _optional(body, "acce") is not None:
        acce = _vector(body["acce"], f"{where}.acce", 2, allow_inf=True)
        for k, a in enumerate(acce):
            if a <= 0:
                raise _fail(f"{where}.acce[{k}]", f"must be > 0, got {a:g}")
    if any(lo > hi for lo, hi in zip(vel_min, vel_max, strict=True)):
        raise _fail(f"{where}.vel_min", f"must be <= vel_max elementwise, got {vel_min} "
                                        f"and {vel_max}")
    return {"vel_min": vel_min, "vel_max": vel_max, "acce": acce}


def _optional_number(body: dict, key: str, where: str, **bounds: Any) -> float | None:
    if _optional(body, key) is None:
        return None
    return _bounded(body[key], f"{where}.{key}", **bounds)


def _parse_inertia(body: dict, where: str) -> float | None:
    inertia = _optional_number(body, "inertia", where, low=0.0, strict=True)
    if inertia is None:
        return None
    return _at_least(inertia, body["inertia"], f"{where}.inertia", MIN_INERTIA, "kg m^2")


def _optional_flag(body: dict, key: str, where: str) -> bool:
    """An optional true/false key of a body (null or absent: false)."""
    value = body.get(key)
    return False if value is None else _flag(value, f"{where}.{key}")


def _parse_body(raw: Any, where: str, role: str, index: int) -> BodySpec:
    """Check one robot/obstacle mapping, apply defaults and build its shape once."""
    body = _check_keys(raw, BODY_KEYS, where)
    name = body.get("name")
    if name is None:
        name = f"{role}_{index}"
    elif not isinstance(name, str) or not name:
        raise _fail(f"{where}.name", f"must be a non-empty string, got {short_repr(name)}")
    kinematics = None
    if _optional(body, "kinematics") is not None:
        kinematics = _parse_kinematics(body["kinematics"], f"{where}.kinematics")
    static = _optional_flag(body, "static", where)
    bullet = _optional_flag(body, "bullet", where)
    raw_shape = body.get("shape")
    shape = _parse_shape(DEFAULT_SHAPE if raw_shape is None else raw_shape, f"{where}.shape")
    # Built now so that bad geometry is reported at load time, with its key path; the
    # result is kept in the spec for compile_scene. The copy is deep (the spec must not
    # share lists with the caller's dict) and bounded: build_shape checked the sizes.
    info = build_shape(shape, f"{where}.shape")
    shape = copy.deepcopy(shape)
    color = body.get("color")
    if color is not None and not isinstance(color, str):
        raise _fail(f"{where}.color", f"must be a string, got {short_repr(color)}")
    sensors: tuple[str, ...] = ()
    sensor_specs: tuple[Any, ...] = ()
    if _optional(body, "sensors") is not None:
        sensors, sensor_specs = _parse_sensors(body["sensors"], f"{where}.sensors")
    lidar = next((s for s in sensor_specs if isinstance(s, LidarSpec)), None)
    driven = kinematics is not None
    velocity, omega = _parse_velocity(body, where, driven)
    return BodySpec(
        name=name,
        role=role,
        kinematics=kinematics,
        shape=shape,
        state=_parse_state(body.get("state"), f"{where}.state", kinematics),
        velocity=velocity,
        omega=omega,
        mass=_parse_mass(body.get("mass"), f"{where}.mass", driven, static),
        friction=_optional_number(body, "friction", where, low=0.0),
        inertia=_parse_inertia(body, where),
        restitution=_optional_number(body, "restitution", where, low=0.0, high=1.0),
        static=static,
        sensors=sensors,
        color=color,
        built_shape=(shape, info),
        lidar=lidar,
        sensor_specs=sensor_specs,
        **_parse_fov(body, where),
        bullet=bullet,
        **_parse_limits(body, where),
    )


def _section_items(raw: Any, where: str) -> list:
    """A section may be a list of mappings, a single mapping, or empty."""
    if raw is None:
        return []
    if isinstance(raw, Mapping):
        return [raw]
    if isinstance(raw, (list, tuple)):
        return list(raw)
    raise _fail(where, f"must be a list of mappings or a mapping, got {type(raw).__name__}")


def _parse_bodies(top: dict, source: str) -> tuple[BodySpec, ...]:
    """Robots first, then obstacles, each in YAML order; names must be unique."""
    sections = {role: _section_items(top.get(role), f"{source}: {role}")
                for role in ("robot", "obstacle")}
    count = sum(len(items) for items in sections.values())
    if count > MAX_BODIES:
        raise SceneError(f"{source}: {count} robots and obstacles, more than the limit of "
                         f"{MAX_BODIES} (MAX_BODIES)")
    bodies: list[BodySpec] = []
    first_use: dict[str, str] = {}
    for role, items in sections.items():
        for index, raw in enumerate(items):
            path = f"{role}[{index}]"
            body = _parse_body(raw, f"{source}: {path}", role, index)
            if body.name in first_use:
                raise _fail(f"{source}: {path}.name",
                            f"duplicate name {short_repr(body.name)} (also used by "
                            f"{first_use[body.name]})")
            first_use[body.name] = path
            bodies.append(body)
    return tuple(bodies)


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def load_scene(scene: str | os.PathLike | Mapping, /, *, source: str | None = None,
               base_dir: str | os.PathLike | None = None) -> SceneSpec:
    """Load and check a scene from a YAML file path or an already parsed mapping.

    Args:
        scene: path of a YAML file, or a parsed scene mapping (not modified).
        source: name used in error messages and stored in the spec; defaults to the path,
            or ``"<dict>"`` for a mapping. Give the original file's name when validating a
            dict parsed (and perhaps edited) from that file.
        base_dir: folder against which relative paths in the scene (the obstacle map image)
            are resolved; defaults to the YAML file's folder, or the current directory for
            a mapping.

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
    top = _check_keys(top, TOP_KEYS, name)
    world = _parse_world(top.get("world"), f"{name}: world", base_dir)
    return SceneSpec(world=world, bodies=_parse_bodies(top, name), source=name, base_dir=base_dir)
