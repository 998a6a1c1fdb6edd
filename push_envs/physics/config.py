"""YAML scene files -> checked, frozen scene specs (setup time only).

A scene has three top-level sections::

    world:    {width, height, step_time, gravity, friction, restitution, drive_tau,
               obstacle_map, map_resolution, offset}
    robot:    [ {name, kinematics, shape, state, mass, ...}, ... ]   # or a single mapping
    obstacle: [ ... ]                                                  # same keys as robot

Every problem is reported as a :class:`SceneError` whose message reads
``"<source>: <key path>: <reason>"``, e.g.
``"configs/x.yaml: robot[0].shape.radius: must be > 0, got -1"``.

Units: metres, seconds, kilograms, radians (kg·m² for inertia). Optional keys given an
explicit YAML ``null`` behave as if absent. Only ``yaml.safe_load`` is used.
"""

from __future__ import annotations

import copy
import math
import numbers
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import yaml


class SceneError(ValueError):
    """Invalid scene description; the message names the source file and the key path."""


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
    sensors: tuple[str, ...]
    color: str | None


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
    "obstacle_map", "map_resolution", "offset",
)
BODY_KEYS = (
    "name", "kinematics", "shape", "state", "velocity", "omega", "mass", "friction",
    "inertia", "restitution", "static", "vel_min", "vel_max", "acce", "sensors", "color",
)
KINEMATICS_KEYS = ("name", "wheelbase", "tau")
KINEMATICS_NAMES = ("diff", "omni", "acker")
SENSOR_KEYS = ("name", "type")
SENSOR_NAMES = ("contact2d",)
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


def _fail(where: str, reason: str) -> SceneError:
    return SceneError(f"{where}: {reason}")


def _check_keys(mapping: Any, allowed: Iterable[str], where: str) -> dict:
    """Require a mapping whose keys are all in ``allowed``; return it as a dict."""
    if not isinstance(mapping, Mapping):
        raise _fail(where, f"must be a mapping, got {type(mapping).__name__}")
    allowed = sorted(allowed)
    for key in mapping:
        if key not in allowed:
            raise _fail(where, f"unknown key {key!r}; allowed: {', '.join(allowed)}")
    return dict(mapping)


def _real(value: Any, where: str, *, allow_inf: bool = False) -> float:
    """A real number (bool excluded); finite unless ``allow_inf`` (then also "inf")."""
    if allow_inf and isinstance(value, str) and value.strip().lower() in ("inf", "+inf", ".inf"):
        return math.inf
    # numbers.Real also admits numpy scalars from dict sources; bools are not numbers here.
    is_number = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if not is_number or math.isnan(value) or (math.isinf(value) and not allow_inf):
        kind = "a number" if allow_inf else "a finite number"
        raise _fail(where, f"must be {kind}, got {value!r}")
    return float(value)


def _bounded(value: Any, where: str, *, low: float, strict: bool = False,
             high: float | None = None, allow_inf: bool = False) -> float:
    """A number >= low (> low if ``strict``) and <= high when given."""
    number = _real(value, where, allow_inf=allow_inf)
    if number < low or (strict and number == low):
        raise _fail(where, f"must be {'>' if strict else '>='} {low:g}, got {value!r}")
    if high is not None and number > high:
        raise _fail(where, f"must be <= {high:g}, got {value!r}")
    return number


def _vector(value: Any, where: str, size: int, *, allow_inf: bool = False) -> tuple[float, ...]:
    """A list of exactly ``size`` numbers."""
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != size:
        raise _fail(where, f"must be a list of {size} numbers, got {value!r}")
    return tuple(_real(v, f"{where}[{k}]", allow_inf=allow_inf) for k, v in enumerate(value))


def _optional(mapping: dict, key: str) -> Any:
    """Value of an optional key; an explicit null counts as absent."""
    return mapping.get(key)


# --------------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------------


def _parse_world(raw: Any, where: str, base_dir: str | None) -> WorldSpec:
    """Check the `world` section and load its obstacle map."""
    world = _check_keys({} if raw is None else raw, WORLD_KEYS, where)
    positive = ("width", "height", "step_time", "map_resolution")
    values: dict[str, Any] = {}
    for key in positive:
        if _optional(world, key) is not None:
            values[key] = _bounded(world[key], f"{where}.{key}", low=0.0, strict=True)
    for key in ("gravity", "friction", "drive_tau"):
        if _optional(world, key) is not None:
            values[key] = _bounded(world[key], f"{where}.{key}", low=0.0)
    if _optional(world, "restitution") is not None:
        values["restitution"] = _bounded(world["restitution"], f"{where}.restitution",
                                         low=0.0, high=1.0)
    if _optional(world, "offset") is not None:
        values["offset"] = _vector(world["offset"], f"{where}.offset", 2)
    if _optional(world, "obstacle_map") is not None:
        # Imported here: shapes imports SceneError from this module.
        from push_envs.physics.shapes import load_grid

        values["obstacle_map"] = load_grid(world["obstacle_map"], f"{where}.obstacle_map",
                                           base_dir)
    return WorldSpec(**values)


def _parse_kinematics(raw: Any, where: str) -> KinematicsSpec:
    kin = _check_keys(raw, KINEMATICS_KEYS, where)
    name = kin.get("name")
    if name not in KINEMATICS_NAMES:
        raise _fail(f"{where}.name",
                    f"unknown kinematics {name!r}; choices: {', '.join(KINEMATICS_NAMES)}")
    wheelbase = None
    if _optional(kin, "wheelbase") is not None:
        wheelbase = _bounded(kin["wheelbase"], f"{where}.wheelbase", low=0.0, strict=True)
    elif name == "acker":
        wheelbase = DEFAULT_ACKER_WHEELBASE
    tau = None
    if _optional(kin, "tau") is not None:
        tau = _bounded(kin["tau"], f"{where}.tau", low=0.0)
    return KinematicsSpec(name, wheelbase, tau)


def _parse_shape(raw: Any, where: str, *, in_compound: bool = False) -> dict:
    """Key-check a shape spec (recursively for compound parts) and return a copy."""
    if not isinstance(raw, Mapping):
        raise _fail(where, f"must be a mapping, got {type(raw).__name__}")
    name = raw.get("name")
    choices = [n for n in SHAPE_KEYS if not (in_compound and n == "compound")]
    if name not in choices:
        raise _fail(f"{where}.name", f"unknown shape {name!r}; choices: {', '.join(choices)}")
    allowed = SHAPE_KEYS[name] + (("pose",) if in_compound else ())
    shape = copy.deepcopy(_check_keys(raw, allowed, where))
    for key in SHAPE_REQUIRED[name]:
        if key not in shape:
            raise _fail(where, f"missing key '{key}' for shape {name!r}")
    if name == "compound":
        parts = shape["parts"]
        if not isinstance(parts, (list, tuple)) or not parts:
            raise _fail(f"{where}.parts", "must be a non-empty list of shapes")
        shape["parts"] = [_parse_shape(p, f"{where}.parts[{k}]", in_compound=True)
                          for k, p in enumerate(parts)]
    return shape


def _parse_sensors(raw: Any, where: str) -> tuple[str, ...]:
    if not isinstance(raw, (list, tuple)):
        raise _fail(where, f"must be a list of sensor mappings, got {raw!r}")
    names: list[str] = []
    for k, item in enumerate(raw):
        item_where = f"{where}[{k}]"
        sensor = _check_keys(item, SENSOR_KEYS, item_where)
        # `type` is accepted as an alias of `name` (IR-SIM style configs use either).
        given = [sensor[key] for key in SENSOR_KEYS if key in sensor]
        if not given or (len(given) == 2 and given[0] != given[1]):
            raise _fail(item_where, "needs one sensor name (key 'name', or its alias 'type')")
        name = given[0]
        if not isinstance(name, str) or name not in SENSOR_NAMES:
            raise _fail(item_where, f"unknown sensor {name!r}; choices: {', '.join(SENSOR_NAMES)}")
        if name in names:
            raise _fail(item_where, f"duplicate sensor {name!r}")
        names.append(name)
    return tuple(names)


def _parse_state(raw: Any, where: str, kinematics: KinematicsSpec | None) -> tuple[float, ...]:
    """(x, y, theta) padded with zeros; a 4th entry (steer) only for acker bodies."""
    size = 4 if kinematics is not None and kinematics.name == "acker" else 3
    if raw is None:
        return (0.0,) * size
    if not isinstance(raw, (list, tuple, np.ndarray)) or not 2 <= len(raw) <= size:
        raise _fail(where, f"must be a list of 2 to {size} numbers, got {raw!r}")
    values = tuple(_real(v, f"{where}[{k}]") for k, v in enumerate(raw))
    return values + (0.0,) * (size - len(values))


def _parse_mass(raw: Any, where: str, driven: bool, static: bool) -> float:
    if raw is None:
        return 1.0 if driven else math.inf
    mass = _bounded(raw, where, low=0.0, strict=True, allow_inf=True)
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


def _parse_body(raw: Any, where: str, role: str, index: int) -> BodySpec:
    """Check one robot/obstacle mapping and apply defaults."""
    from push_envs.physics.shapes import build_shape

    body = _check_keys(raw, BODY_KEYS, where)
    name = body.get("name")
    if name is None:
        name = f"{role}_{index}"
    elif not isinstance(name, str) or not name:
        raise _fail(f"{where}.name", f"must be a non-empty string, got {name!r}")
    kinematics = None
    if _optional(body, "kinematics") is not None:
        kinematics = _parse_kinematics(body["kinematics"], f"{where}.kinematics")
    static = body.get("static", False)
    if static is None:
        static = False
    if not isinstance(static, bool):
        raise _fail(f"{where}.static", f"must be true or false, got {static!r}")
    raw_shape = body.get("shape")
    shape = _parse_shape(DEFAULT_SHAPE if raw_shape is None else raw_shape, f"{where}.shape")
    # Compile once now so that bad geometry is reported at load time, with its key path.
    build_shape(shape, f"{where}.shape")
    color = body.get("color")
    if color is not None and not isinstance(color, str):
        raise _fail(f"{where}.color", f"must be a string, got {color!r}")
    sensors = ()
    if _optional(body, "sensors") is not None:
        sensors = _parse_sensors(body["sensors"], f"{where}.sensors")
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
        inertia=_optional_number(body, "inertia", where, low=0.0, strict=True),
        restitution=_optional_number(body, "restitution", where, low=0.0, high=1.0),
        static=static,
        sensors=sensors,
        color=color,
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
    bodies: list[BodySpec] = []
    first_use: dict[str, str] = {}
    for role in ("robot", "obstacle"):
        for index, raw in enumerate(_section_items(top.get(role), f"{source}: {role}")):
            path = f"{role}[{index}]"
            body = _parse_body(raw, f"{source}: {path}", role, index)
            if body.name in first_use:
                raise _fail(f"{source}: {path}.name",
                            f"duplicate name {body.name!r} (also used by {first_use[body.name]})")
            first_use[body.name] = path
            bodies.append(body)
    return tuple(bodies)


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def _read_yaml(path: str) -> Any:
    """safe_load a YAML file, turning I/O and syntax problems into SceneError."""
    try:
        with open(path, encoding="utf-8") as handle:
            return yaml.safe_load(handle)
    except OSError as exc:
        raise SceneError(f"{path}: cannot read scene file: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise SceneError(f"{path}: invalid YAML: {exc}") from exc


def load_scene(source: str | os.PathLike | dict) -> SceneSpec:
    """Load and check a scene from a YAML file path or an already parsed mapping.

    Relative paths inside the scene (the obstacle map image) are resolved against the YAML
    file's folder; for dicts against the current directory. The input dict is not modified.

    Raises:
        SceneError: any problem, with message ``"<source>: <key path>: <reason>"``.
    """
    if isinstance(source, Mapping):
        name, base_dir, top = "<dict>", None, copy.deepcopy(dict(source))
    else:
        name = os.fspath(source)
        base_dir = os.path.dirname(os.path.abspath(name))
        top = _read_yaml(name)
    if not isinstance(top, Mapping):
        raise SceneError(f"{name}: top level must be a mapping, got {type(top).__name__}")
    top = _check_keys(top, TOP_KEYS, name)
    world = _parse_world(top.get("world"), f"{name}: world", base_dir)
    return SceneSpec(world=world, bodies=_parse_bodies(top, name), source=name, base_dir=base_dir)
