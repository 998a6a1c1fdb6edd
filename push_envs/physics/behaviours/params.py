"""A behaviour's YAML mapping, checked: its name, its parameters, and the keys every behaviour
takes (setup time only).

IR-SIM passes a behaviour's whole mapping to it and each behaviour reads the keys it knows, so
IR-SIM's own worlds give a behaviour keys of another (``dash`` with rvo's ``vxmax``). Such a
key is accepted here and ignored, as there; a key no behaviour knows is a typo, and a
:class:`SceneError` names it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import checks
from ..errors import short_repr

COMMON = ("name", "loop", "wander", "range_low", "range_high", "target_roles")
"""Keys every behaviour takes: what happens at the goal, and whom it reacts to."""
TARGET_ROLES = ("all", "robot", "obstacle")
DEFAULT_RANGE_LOW = (0.0, 0.0, -math.pi)  # IR-SIM's wander range [m, m, rad]
DEFAULT_RANGE_HIGH = (10.0, 10.0, math.pi)

# How each parameter is checked: (kind, low, strict low, high); kinds: "real", "int",
# "choice:<a>|<b>", "optional" (a real or null), "groups" (sfm's social_groups)
RULES: dict[str, tuple[str, float | None, bool, float | None]] = {
    "angle_tolerance": ("real", 0.0, False, None),
    "vxmax": ("real", 0.0, False, None),
    "vymax": ("real", 0.0, False, None),
    "acce": ("real", 0.0, False, None),
    "factor": ("real", None, False, None),
    "mode": ("choice:rvo|hrvo|vo", None, False, None),
    "neighbor_threshold": ("real", 0.0, False, None),
    "vmax": ("real", 0.0, False, None),
    "relaxation_time": ("real", 0.0, True, None),
    "force_factor_desired": ("real", None, False, None),
    "force_factor_social": ("real", None, False, None),
    "force_factor_obstacle": ("real", None, False, None),
    "sigma_obstacle": ("real", 0.0, True, None),
    "lambda_importance": ("real", None, False, None),
    "gamma": ("real", 0.0, True, None),
    "n_angular": ("real", None, False, None),
    "n_velocity": ("real", None, False, None),
    "safety_radius": ("real", 0.0, False, None),
    "force_factor_coherence": ("real", None, False, None),
    "force_factor_group_repulsion": ("real", None, False, None),
    "group_repulsion_threshold": ("optional", 0.0, False, None),
    "force_factor_gaze": ("real", None, False, None),
    "gaze_vision_angle": ("real", 0.0, True, 180.0),
    "social_groups": ("groups", None, False, None),
    "neighborDist": ("real", 0.0, False, None),
    "maxNeighbors": ("int", 0.0, False, None),
    "timeHorizon": ("real", 0.0, True, None),
    "timeHorizonObst": ("real", 0.0, True, None),
    "safe_radius": ("real", 0.0, False, None),
    "maxSpeed": ("optional", 0.0, False, None),
}


def check_value(key: str, value: Any, where: str) -> Any:
    """``value`` of parameter ``key`` checked by its rule (a user behaviour's own
    parameters, which have no rule, are finite numbers)."""
    kind, low, strict, high = RULES.get(key, ("real", None, False, None))
    if kind.startswith("choice:"):
        choices = kind[len("choice:"):].split("|")
        if not isinstance(value, str) or value not in choices:
            raise checks.fail(where, f"must be one of {', '.join(choices)}, got "
                                     f"{short_repr(value)}")
        return value
    if kind == "groups":
        return _social_groups(value, where)
    if kind == "optional" and value is None:
        return None
    if kind == "int":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
                or value < 0:
            raise checks.fail(where, f"must be an integer >= 0, got {short_repr(value)}")
        return int(value)
    if low is None:
        return checks.real(value, where)
    return checks.bounded(value, where, low=low, strict=strict, high=high)


def _social_groups(value: Any, where: str) -> list[list[int]]:
    if not isinstance(value, (list, tuple)):
        raise checks.fail(where, f"must be a list of lists of member indices, got "
                                 f"{short_repr(value)}")
    out = []
    for k, group in enumerate(value):
        if not isinstance(group, (list, tuple)) or not all(
                isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in group):
            raise checks.fail(f"{where}[{k}]", f"must be a list of member indices, got "
                                               f"{short_repr(group)}")
        out.append([int(i) for i in group])
    return out


def check_behaviour(raw: Any, where: str, known: Mapping[str, Any]) -> dict[str, Any]:
    """The mapping of a behaviour (``where`` names it: "<file>: robot[0].behavior"), checked
    against ``known`` (every parameter some behaviour takes: name -> default): the common
    keys typed, each known parameter by its rule; returns the checked mapping."""
    if not isinstance(raw, Mapping):
        raise checks.fail(where, f"must be a mapping with a 'name', got {short_repr(raw)}")
    out: dict[str, Any] = {}
    for key, value in raw.items():
        at = f"{where}.{key}"
        if not isinstance(key, str) or (key not in COMMON and key not in known):
            allowed = ", ".join(sorted(set(COMMON) | set(known)))
            raise checks.fail(where, f"unknown behaviour parameter {short_repr(key)}; "
                                     f"known: {allowed}")
        if key == "name":
            if not isinstance(value, str) or not value:
                raise checks.fail(at, f"must be a behaviour name, got {short_repr(value)}")
            out[key] = value
        elif key in ("loop", "wander"):
            if not isinstance(value, (bool, np.bool_)):
                raise checks.fail(at, f"must be true or false, got {short_repr(value)}")
            out[key] = bool(value)
        elif key in ("range_low", "range_high"):
            if not isinstance(value, (list, tuple)) or not 2 <= len(value) <= 3:
                raise checks.fail(at, f"must be a list of 2 or 3 numbers (x [m], y [m], "
                                      f"theta [rad]), got {short_repr(value)}")
            out[key] = tuple(checks.real(v, f"{at}[{i}]") for i, v in enumerate(value))
        elif key == "target_roles":
            if value not in TARGET_ROLES:
                raise checks.fail(at, f"must be one of {', '.join(TARGET_ROLES)}, got "
                                      f"{short_repr(value)}")
            out[key] = value
        else:
            out[key] = check_value(key, value, at)
    if "name" not in out:
        raise checks.fail(where, "needs a 'name' (the behaviour)")
    low = out.get("range_low", DEFAULT_RANGE_LOW)
    high = out.get("range_high", DEFAULT_RANGE_HIGH)
    if len(low) != len(high) or any(a > b for a, b in zip(low, high, strict=False)):
        raise checks.fail(f"{where}.range_low", f"must have range_high's length and be <= it "
                                                f"elementwise, got {low} and {high}")
    return out


def row(values: Mapping[str, Any], params: Mapping[str, Any]) -> list[float]:
    """A behaviour's parameter row: ``params`` (name -> default) in order, each the value
    given or the default; None is NaN, a choice its index, a bool 0 / 1."""
    out = []
    for key, default in params.items():
        v = values.get(key, default)
        if v is None:
            out.append(math.nan)
        elif isinstance(v, str):
            kind = RULES[key][0]
            out.append(float(kind[len("choice:"):].split("|").index(v)))
        else:
            out.append(float(v))
    return out
