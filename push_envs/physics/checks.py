"""Checks shared by the scene parser, the shape builder and the sensors' parsers.

Each check returns a Python float or raises :class:`SceneError` with the message
``"<where>: <reason>, got <excerpt>"``; ``where`` is the full location prefix
``"<source>: <key path>"``. Bools are not numbers here (YAML ``yes`` is a bool).
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

import numpy as np

from .errors import SceneError
from .errors import short_repr
from .limits import MAX_MAGNITUDE
from .limits import MAX_SIZE
from .limits import MIN_SIZE

_INF_WORDS = ("inf", "+inf", ".inf", "+.inf")


def fail(where: str, reason: str) -> SceneError:
    """The SceneError for ``where`` (the message is ``"<where>: <reason>"``)."""
    return SceneError(f"{where}: {reason}")


def is_real(value: Any) -> bool:
    """True for int/float values (numpy scalars included), False for bools."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def real(value: Any, where: str, *, allow_inf: bool = False,
         magnitude: float = MAX_MAGNITUDE, unit: str = "") -> float:
    """A real number with ``|value| <= magnitude``; +inf (also the strings "inf", ".inf")
    only when ``allow_inf``. ``unit`` (e.g. " m") is appended to the limit in messages."""
    if allow_inf and isinstance(value, str) and value.strip().lower() in _INF_WORDS:
        return math.inf
    kind = "a number" if allow_inf else "a finite number"
    if not is_real(value):
        raise fail(where, f"must be {kind}, got {short_repr(value)}")
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float is also too large for a scene
        reason = (f"must be at most {magnitude:g}{unit} in magnitude"
                  if math.isfinite(magnitude) else "is too large for a float")
        raise fail(where, f"{reason}, got {short_repr(value)}") from None
    if math.isnan(number) or (math.isinf(number) and not (allow_inf and number > 0)):
        raise fail(where, f"must be {kind}, got {short_repr(value)}")
    if math.isfinite(number) and abs(number) > magnitude:
        raise fail(where, f"must be at most {magnitude:g}{unit} in magnitude, got "
                          f"{short_repr(value)}")
    return number


def bounded(value: Any, where: str, *, low: float, strict: bool = False,
            high: float | None = None, allow_inf: bool = False,
            magnitude: float = MAX_MAGNITUDE, unit: str = "") -> float:
    """A number >= low (> low if ``strict``), <= high when given, within ``magnitude``."""
    number = real(value, where, allow_inf=allow_inf, magnitude=magnitude, unit=unit)
    if number < low or (strict and number == low):
        raise fail(where, f"must be {'>' if strict else '>='} {low:g}, got {short_repr(value)}")
    if high is not None and number > high:
        raise fail(where, f"must be <= {high:g}, got {short_repr(value)}")
    return number


def size(value: Any, where: str, *, minimum: float = MIN_SIZE,
         maximum: float = MAX_SIZE) -> float:
    """A length [m] > 0 within [minimum, maximum] (the limits are named in the message)."""
    number = bounded(value, where, low=0.0, strict=True, magnitude=maximum, unit=" m")
    if number < minimum:
        raise fail(where, f"must be at least {minimum:g} m (the minimum size), got "
                          f"{short_repr(value)}")
    return number


def suggestion(key: Any, allowed: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the allowed key nearest to ``key``, or ``""``."""
    if not isinstance(key, str):
        return ""
    near = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.6)
    return f" (did you mean {near[0]!r}?)" if near else ""


def keys(mapping: Any, allowed: Iterable[str], where: str) -> dict:
    """Require a mapping whose keys are all in ``allowed``; return it as a (shallow) dict.

    An unknown key is a SceneError naming it, the nearest allowed key and the whole list.
    """
    if not isinstance(mapping, Mapping):
        raise fail(where, f"must be a mapping, got {type(mapping).__name__}")
    allowed = sorted(allowed)
    for key in mapping:
        if not isinstance(key, str) or key not in allowed:
            raise fail(where, f"unknown key {short_repr(key)}{suggestion(key, allowed)}; "
                              f"allowed: {', '.join(allowed)}")
    return dict(mapping)


def vector(value: Any, where: str, size: int, *, allow_inf: bool = False,
           magnitude: float | None = None) -> tuple[float, ...]:
    """A list of exactly ``size`` numbers (each within ``magnitude`` [m] when given)."""
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != size:
        raise fail(where, f"must be a list of {size} numbers, got {short_repr(value)}")
    bounds = {} if magnitude is None else {"magnitude": magnitude, "unit": " m"}
    return tuple(real(v, f"{where}[{k}]", allow_inf=allow_inf, **bounds)
                 for k, v in enumerate(value))


def flag(value: Any, where: str) -> bool:
    """A YAML true / false (numpy bools too)."""
    if not isinstance(value, (bool, np.bool_)):
        raise fail(where, f"must be true or false, got {short_repr(value)}")
    return bool(value)
