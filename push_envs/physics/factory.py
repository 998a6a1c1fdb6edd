"""IR-SIM's object factory: a section's entries (groups) expanded into one mapping per object
(setup time only).

Each entry of ``robot:`` / ``obstacle:`` is a group of ``number`` objects (1 by default),
expanded as IR-SIM 2.12's ``ObjectFactory.create_object`` does:

* a value that is a list holding one entry per object (a list of shapes, colours, names,
  states, goals, ...) gives object k its entry k, the last one repeating when the list is
  short (and the extra ones unused when it is long); any other value (a number, a string, a
  mapping, a list of numbers such as a state or ``vel_max``) is shared by every object.
  ``mass``, ``friction``, ``inertia`` and ``restitution`` lists of numbers are per object;
  ``sensors`` is shared when it is a list of mappings, per object when a list of lists;
* ``distribution`` places the objects: ``manual`` (the default) takes ``state`` and
  ``goal`` as above (defaults [1, 1, 0] and [1, 9, 0]); ``circle`` puts object i of n at
  angle 2 pi i / n on a circle (default: the world's centre, radius min(width, height) / 2
  - 0.5), heading theta - pi, its goal the opposite point; ``random`` draws states and goals
  uniformly in [range_low, range_high] (default: the world inset by 0.5 m, heading -pi to
  pi), at least ``min_distance`` (1 m) apart (:mod:`.placement`, per env at every reset);
* entry g of a list section is group g (obstacles continue after the robots' groups); a
  single mapping is group 0; an explicit ``group`` key wins.

Shapes with ``random_shape: true`` (IR-SIM's ``random_generate_polygon``, a circle's
``radius_range``) are drawn here, per object, from the scene's seed: static geometry is
shared by every env of a batch.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np

from . import checks
from .errors import SceneError
from .errors import short_repr
from .limits import MAX_BODIES
from .limits import MAX_COORD
from .schema import DISTRIBUTION_KEYS
from .schema import check_keys
from .schema import choice

__all__ = ["ObjectEntry", "RandomGroup", "expand_sections", "per_object", "random_polygon"]

DEFAULT_STATE = (1.0, 1.0, 0.0)  # IR-SIM's ObjectFactory: [1, 1, 0]
DEFAULT_GOAL = (1.0, 9.0, 0.0)  # ... and [1, 9, 0]
_PER_OBJECT_NUMBERS = frozenset({"mass", "friction", "inertia", "restitution"})
_MARGIN = 0.5  # [m] IR-SIM's inset of the default circle and random ranges
PALETTE_CYCLE = ("#009E73", "#0072B2", "#E69F00", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
                 "#117733")
"""IR-SIM's ``color: cycle`` colours (the Okabe-Ito palette, starting at the robot green)."""


@dataclass
class ObjectEntry:
    """One object of a group, before its values are checked.

    ``values`` are the object's own keys (lists already resolved to its entry); ``where[key]``
    is the key path an error about ``key`` names (``robot[1].shape[2]`` when the value came
    from entry 2 of a list). ``state``/``goal`` are the placement of a ``manual`` or
    ``circle`` distribution (raw values, checked later); a ``random`` one leaves them to
    :class:`RandomGroup`.
    """

    role: str
    group_path: str  # "<source>: robot[1]": the prefix of the group's error messages
    path: str  # "robot[1]" for a one-object group, "robot[1][k]" for object k (no source)
    group: int
    index: int  # object index k within the group
    number: int
    values: dict
    where: dict[str, str]
    distribution: str
    state: Any = None
    state_where: str = ""
    goal: Any = None
    goal_where: str = ""
    random_group: int = -1  # index into the scene's random groups, or -1


@dataclass
class RandomGroup:
    """A ``random`` distribution: its objects' states and goals are drawn per env at every
    reset (:mod:`.placement`), uniformly in [low, high] (x [m], y [m], theta [rad]), states
    at least ``min_distance`` [m] apart, goals likewise."""

    path: str  # "robot[1]": the key path errors name
    low: tuple[float, float, float]
    high: tuple[float, float, float]
    min_distance: float
    bodies: list[int] = field(default_factory=list)  # scene body indices, filled by config


def _is_number(value: Any) -> bool:
    # push_envs also reads an infinite limit written as a string (".inf", "inf").
    return isinstance(value, (int, float, np.integer, np.floating)) or (
        isinstance(value, str) and value.strip().lower() in ("inf", "+inf", ".inf", "+.inf"))


def _list_of_numbers(value: Any) -> bool:
    # IR-SIM's is_list_of_numbers: a bool is an int there too.
    return isinstance(value, list) and all(_is_number(v) for v in value)


def per_object(value: Any, number: int, k: int, *, numbers_per_object: bool = False,
               dicts_shared: bool = False) -> tuple[Any, int | None]:
    """Object k's value of a group key (IR-SIM's ``convert_list_length``) and the list index
    it came from (None when shared)."""
    if not isinstance(value, list) or not value:
        return value, None
    if dicts_shared:
        if all(isinstance(v, Mapping) for v in value):
            return value, None
    elif not numbers_per_object and _list_of_numbers(value):
        return value, None
    i = min(k, len(value) - 1)
    return value[i], i


def _number(raw: Any, where: str) -> int:
    if raw is None:
        return 1
    if isinstance(raw, (bool, np.bool_)) or not isinstance(raw, (int, np.integer)) \
            or not 0 <= raw <= MAX_BODIES:
        raise checks.fail(where, f"must be an integer in [0, {MAX_BODIES}], got "
                                 f"{short_repr(raw)}")
    return int(raw)


def _triple(value: Any, where: str, default: tuple[float, ...]) -> tuple[float, float, float]:
    """A list of 2 or 3 numbers (x, y[, theta]); a missing theta is ``default``'s."""
    if value is None:
        return tuple(float(v) for v in default)  # type: ignore[return-value]
    if not isinstance(value, (list, tuple)) or not 2 <= len(value) <= 3:
        raise checks.fail(where, f"must be a list of 2 or 3 numbers, got {short_repr(value)}")
    out = [checks.real(v, f"{where}[{i}]", magnitude=MAX_COORD) for i, v in enumerate(value)]
    if len(out) == 2:
        out.append(default[2])
    return out[0], out[1], out[2]


def _circle_layout(dist: dict, where: str, number: int, world: Any
                   ) -> tuple[list[list[float]], list[list[float]]]:
    """States and goals of a ``circle`` distribution (IR-SIM's, bit for bit)."""
    ox, oy = world.offset
    center = _triple(dist.get("center"), f"{where}.center",
                     (ox + world.width / 2, oy + world.height / 2, 0.0))
    radius = min(world.width, world.height) / 2 - _MARGIN
    if dist.get("radius") is not None:
        radius = checks.bounded(dist["radius"], f"{where}.radius", low=0.0, magnitude=MAX_COORD)
    states, goals = [], []
    for i in range(number):
        theta = 2 * np.pi * i / number
        states.append([center[0] + radius * np.cos(theta), center[1] + radius * np.sin(theta),
                       theta - np.pi])
        goals.append([center[0] - radius * np.cos(theta), center[1] - radius * np.sin(theta),
                      theta - np.pi])
    return states, goals


def _random_group(dist: dict, where: str, path: str, world: Any) -> RandomGroup:
    ox, oy = world.offset
    low = _triple(dist.get("range_low"), f"{where}.range_low",
                  (ox + _MARGIN, oy + _MARGIN, -np.pi))
    high = _triple(dist.get("range_high"), f"{where}.range_high",
                   (ox + world.width - _MARGIN, oy + world.height - _MARGIN, np.pi))
    for axis in range(3):
        if low[axis] > high[axis]:
            raise checks.fail(f"{where}.range_low", f"must be <= range_high elementwise, got "
                                                    f"{list(low)} and {list(high)}")
    min_distance = 1.0
    if dist.get("min_distance") is not None:
        min_distance = checks.bounded(dist["min_distance"], f"{where}.min_distance", low=0.0,
                                      magnitude=MAX_COORD)
    if dist.get("non_overlapping") is not None and \
            not isinstance(dist["non_overlapping"], (bool, np.bool_)):
        raise checks.fail(f"{where}.non_overlapping", f"must be true or false, got "
                                                      f"{short_repr(dist['non_overlapping'])}")
    return RandomGroup(path=path, low=low, high=high, min_distance=min_distance)


def _distribution(raw: Any, where: str) -> dict:
    if raw is None:
        return {"name": "manual"}
    if not isinstance(raw, Mapping):
        raise checks.fail(where, f"must be a mapping, got {type(raw).__name__}")
    name = choice(raw.get("name"), tuple(DISTRIBUTION_KEYS), f"{where}.name", "distribution")
    dist = check_keys(raw, DISTRIBUTION_KEYS[name], where)
    if dist.get("3d") not in (None, False):
        raise checks.fail(f"{where}.3d", "3-D distributions are not implemented (nor in "
                                         "IR-SIM); leave it false")
    return dist


def _group_entries(raw: Mapping, role: str, key_path: str, group_path: str, group: int,
                   world: Any, random_groups: list[RandomGroup]) -> list[ObjectEntry]:
    """The objects of one group entry."""
    number = _number(raw.get("number"), f"{group_path}.number")
    dist = _distribution(raw.get("distribution"), f"{group_path}.distribution")
    name = dist["name"]
    states = goals = None
    rg = -1
    if name == "circle" and number:
        states, goals = _circle_layout(dist, f"{group_path}.distribution", number, world)
    elif name == "random" and number:
        random_groups.append(_random_group(dist, f"{group_path}.distribution", group_path,
                                           world))
        rg = len(random_groups) - 1
    shared = {k: v for k, v in raw.items() if k not in ("number", "distribution")}
    if "group" in shared and shared["group"] is not None:
        group = shared["group"]
    entries = []
    for k in range(number):
        values: dict = {}
        where: dict[str, str] = {}
        for key, value in shared.items():
            if key in ("state", "goal", "group"):
                continue
            if key == "sensors":
                item, i = per_object(value, number, k, dicts_shared=True)
            else:
                item, i = per_object(value, number, k,
                                     numbers_per_object=key in _PER_OBJECT_NUMBERS)
            values[key] = item
            where[key] = f"{group_path}.{key}" + ("" if i is None else f"[{i}]")
        if values.get("color") == "cycle":
            values["color"] = PALETTE_CYCLE[k % len(PALETTE_CYCLE)]
        entry = ObjectEntry(role=role, group_path=group_path,
                            path=key_path if number == 1 else f"{key_path}[{k}]",
                            group=group, index=k, number=number, values=values, where=where,
                            distribution=name, random_group=rg)
        if name == "manual":
            for key, default in (("state", DEFAULT_STATE), ("goal", DEFAULT_GOAL)):
                raw_value = shared.get(key)
                if raw_value is None:
                    item, w = list(default), f"{group_path}.{key}"
                else:
                    item, i = per_object(raw_value, number, k)
                    w = f"{group_path}.{key}" + ("" if i is None else f"[{i}]")
                setattr(entry, key, item)
                setattr(entry, f"{key}_where", w)
        elif name == "circle":
            entry.state, entry.state_where = states[k], f"{group_path}.distribution"
            entry.goal, entry.goal_where = goals[k], f"{group_path}.distribution"
        entries.append(entry)
    return entries


def _items(raw: Any, where: str) -> tuple[list, bool]:
    """(entries, whether the section was a list); a section may also be one mapping."""
    if raw is None:
        return [], True
    if isinstance(raw, Mapping):
        return [raw], False
    if isinstance(raw, (list, tuple)):
        return list(raw), True
    raise checks.fail(where, f"must be a list of mappings or a mapping, got "
                             f"{type(raw).__name__}")


def expand_sections(top: Mapping, source: str, world: Any
                    ) -> tuple[list[ObjectEntry], list[RandomGroup]]:
    """Every object of the ``robot`` then ``obstacle`` sections, in IR-SIM's creation order
    (which is also its running id), and the scene's random distributions."""
    entries: list[ObjectEntry] = []
    random_groups: list[RandomGroup] = []
    start = 0
    for role in ("robot", "obstacle"):
        items, is_list = _items(top.get(role), f"{source}: {role}")
        section: list[ObjectEntry] = []
        for g, raw in enumerate(items):
            path = f"{source}: {role}[{g}]"
            if not isinstance(raw, Mapping):
                raise checks.fail(path, f"must be a mapping, got {type(raw).__name__}")
            group = start + g if is_list else 0
            section += _group_entries(raw, role, f"{role}[{g}]", path, group, world,
                                      random_groups)
            if len(entries) + len(section) > MAX_BODIES:
                raise SceneError(f"{source}: more than {MAX_BODIES} robots and obstacles, the "
                                 "limit (MAX_BODIES)")
        groups = [e.group for e in section if isinstance(e.group, (int, np.integer))]
        if role == "robot":
            start = max(groups, default=-1) + 1
        entries += section
    return entries, random_groups


# --------------------------------------------------------------------------------------------
# Random shapes (IR-SIM's lib/algorithm/generation.py)
# --------------------------------------------------------------------------------------------
# Sketch: n vertices (n uniform in num_vertices_range, high end excluded) go round a centre
# (uniform in center_range = [x0, y0, x1, y1]); the angle steps are uniform in
# 2 pi / n +- irregularity * 2 pi / n, rescaled to sum to 2 pi; each vertex's radius is
# normal(avg_radius, spikeyness * avg_radius), clipped to [0, 2 avg_radius], avg_radius,
# irregularity and spikeyness themselves uniform in their ranges. The polygon is star-shaped
# about its centre, its vertices in angular (CCW) order.


def _range(spec: Mapping, key: str, where: str, default: tuple[float, float],
           low: float | None = None, high: float | None = None) -> tuple[float, float]:
    value = spec.get(key)
    if value is None:
        return default
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise checks.fail(f"{where}.{key}", f"must be a list of 2 numbers [low, high], got "
                                            f"{short_repr(value)}")
    lo, hi = (checks.real(v, f"{where}.{key}[{i}]", magnitude=MAX_COORD)
              for i, v in enumerate(value))
    if lo > hi or (low is not None and lo < low) or (high is not None and hi > high):
        bounds = f" within [{low:g}, {high:g}]" if low is not None and high is not None else ""
        raise checks.fail(f"{where}.{key}", f"must be [low, high] with low <= high{bounds}, "
                                            f"got {short_repr(value)}")
    return lo, hi


def random_polygon(spec: Mapping, where: str, rng: np.random.Generator) -> list[list[float]]:
    """Vertices [m] (body frame) of one random polygon of a ``random_shape`` spec."""
    cr = spec.get("center_range")
    if cr is None:
        cr = [0.0, 0.0, 0.0, 0.0]
    if not isinstance(cr, (list, tuple)) or len(cr) != 4:
        raise checks.fail(f"{where}.center_range", f"must be a list of 4 numbers [x0, y0, x1, "
                                                   f"y1], got {short_repr(cr)}")
    cr = [checks.real(v, f"{where}.center_range[{i}]", magnitude=MAX_COORD)
          for i, v in enumerate(cr)]
    avg = _range(spec, "avg_radius_range", where, (0.1, 1.0), low=0.0, high=MAX_COORD)
    irr = _range(spec, "irregularity_range", where, (0.0, 1.0), low=0.0, high=1.0)
    spike_default = (0.0, 0.0) if spec.get("is_convex") is True else (0.0, 1.0)
    spike = _range(spec, "spikeyness_range", where, spike_default, low=0.0, high=1.0)
    nv = _range(spec, "num_vertices_range", where, (4, 10), low=3, high=1000)
    if nv[0] != int(nv[0]) or nv[1] != int(nv[1]) or nv[1] <= nv[0]:
        raise checks.fail(f"{where}.num_vertices_range", f"must be two integers [low, high) "
                                                         f"with low >= 3 and high > low, got "
                                                         f"{short_repr(spec.get('num_vertices_range'))}")
    cx, cy = rng.uniform(cr[0:2], cr[2:4])
    radius = rng.uniform(*avg)
    irregularity = rng.uniform(*irr) * 2 * math.pi
    spikeyness = rng.uniform(*spike) * radius
    n = int(rng.integers(int(nv[0]), int(nv[1])))
    irregularity /= n
    steps = rng.uniform(2 * math.pi / n - irregularity, 2 * math.pi / n + irregularity, n)
    steps *= 2 * math.pi / steps.sum()
    angle = rng.uniform(0, 2 * math.pi)
    points = []
    for i in range(n):
        r = min(max(rng.normal(radius, spikeyness), 0.0), 2 * radius)
        points.append([cx + r * math.cos(angle), cy + r * math.sin(angle)])
        angle += steps[i]
    return points


def resolve_random_shape(shape: dict, where: str, rng: np.random.Generator) -> dict:
    """A concrete copy of a shape spec with ``random_shape: true``: a circle's radius drawn
    from ``radius_range`` (default [0.1, 1]), a polygon's or line string's vertices from
    :func:`random_polygon`. The random keys are dropped from the copy."""
    out = {k: copy.deepcopy(v) for k, v in shape.items()
           if k not in ("random_shape", "radius_range", "is_convex", "center_range",
                        "avg_radius_range", "irregularity_range", "spikeyness_range",
                        "num_vertices_range")}
    if not shape.get("random_shape"):
        return out
    if shape["name"] == "circle":
        lo, hi = _range(shape, "radius_range", where, (0.1, 1.0), low=0.0, high=MAX_COORD)
        out["radius"] = float(rng.uniform(lo, hi))
    else:
        out["vertices"] = random_polygon(shape, where, rng)
    return out
