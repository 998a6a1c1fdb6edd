"""The sensors a body may carry, by name: the one list of them.

The engine knows no sensor by name. Each sensor is one module of ``push_envs/sensors/``
(or of any package) whose declaration registers itself here when the module is imported
(``push_envs`` imports its own sensors on import, so they are here before any scene is
read). Everything that needs a sensor finds it here, by the name a scene gives it:

* ``physics/config.py`` parses a body's ``sensors:`` entries with the declaration's
  ``parse`` (a YAML name no sensor declares is refused, listing the names that are);
* the env builds the sensors its robot carries from their declarations, and calls their
  compiled sense functions through pointers;
* ``render()`` asks each sensor to draw itself.

A declaration (``push_envs.sensors.base.Sensor`` gives the whole protocol and its defaults)
is an object with

* ``name``: the YAML sensor name, the registry's key;
* ``parse(raw, where) -> spec``: the checked, frozen spec of a YAML entry (its ``name``
  attribute is the sensor's name), or None when the sensor is not declared in scenes;
* ``from_body(body) -> spec | None``: a spec the body carries through keys of its own (the
  field of view's ``fov``), else None.

This module only holds the table: it imports nothing above the engine.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

_SENSORS: dict[str, Any] = {}


def register(sensor: Any) -> Any:
    """Register the sensor declaration ``sensor`` under ``sensor.name``; returns it (so it
    serves as a class decorator). Registering another declaration under a taken name is a
    ValueError (the same one again, as a re-import does, is not)."""
    name = getattr(sensor, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"a sensor declaration needs a non-empty string `name`, got "
                         f"{name!r} on {sensor!r}")
    held = _SENSORS.get(name)
    if held is not None and _key(held) != _key(sensor):
        raise ValueError(f"sensor name {name!r} is taken by {_key(held)}; {_key(sensor)} "
                         f"must use another name")
    _SENSORS[name] = sensor
    return sensor


def _key(sensor: Any) -> str:
    return f"{getattr(sensor, '__module__', '?')}.{getattr(sensor, '__qualname__', sensor)}"


def lookup(name: str) -> Any:
    """The declaration registered as ``name``, or None."""
    return _SENSORS.get(name) if isinstance(name, str) else None


def scene_names() -> tuple[str, ...]:
    """The names a scene's ``sensors:`` entries may use (sorted)."""
    return tuple(sorted(n for n, s in _SENSORS.items() if getattr(s, "in_scenes", True)))


def declarations() -> Iterator[Any]:
    """Every registered declaration, in registration order."""
    return iter(tuple(_SENSORS.values()))


def attached(body: Any) -> list[tuple[Any, Any]]:
    """The sensors ``body`` (a :class:`~push_envs.physics.config.BodySpec`) carries, as
    (declaration, spec) pairs: its ``sensors:`` entries in order, then those its own keys
    declare (``from_body``)."""
    out = [(_SENSORS[s.name], s) for s in body.sensor_specs]
    for sensor in declarations():
        spec = sensor.from_body(body)
        if spec is not None:
            out.append((sensor, spec))
    return out


__all__ = ["attached", "declarations", "lookup", "register", "scene_names"]
