"""contact2d: the contact sensor's YAML entry.

Its readings are a stage of the physics step (``push_envs/physics/sensors.py``: every touching
contact of the bodies that carry one), read through ``World.contacts`` and
``World.contact_array`` and by the tasks' robot view; it is here for its YAML entry alone.
IR-SIM's drawing keys (``force_scale``, ``marker_size``, ``linewidth``, ``alpha``, ``color``,
flat or under ``plot:``) are accepted and change nothing: ``render()`` draws every contact
with its force arrow already.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..physics.checks import keys
from .base import ALPHA
from .base import COLOUR
from .base import NAME_KEYS
from .base import SIZE
from .base import Sensor
from .base import drawing_keys
from .base import register_sensor

DRAWING = {"force_scale": SIZE, "marker_size": SIZE, "linewidth": SIZE, "alpha": ALPHA,
           "color": COLOUR}


@dataclass(frozen=True)
class ContactSpec:
    """A contact2d entry: its name and the drawing-only keys given (key, value) pairs."""

    name: str = "contact2d"
    plot: tuple = ()


@register_sensor
class Contact2D(Sensor):
    """IR-SIM's contact2d entry (a physics stage; nothing to sense here)."""

    name = "contact2d"

    @classmethod
    def parse(cls, raw: Any, where: str) -> ContactSpec:
        entry = keys(raw, (*NAME_KEYS, "plot", *DRAWING), where)
        return ContactSpec(plot=drawing_keys(entry, where, DRAWING))
