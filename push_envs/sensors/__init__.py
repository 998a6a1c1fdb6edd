"""The sensors: one module each, registered by name when imported.

    base.py          what a sensor module declares (Sensor, register_sensor)
    lidar2d.py       IR-SIM's lidar: ranges, optionally the hit points' velocities
    fmcw_lidar2d.py  IR-SIM's FMCW lidar: ranges and radial velocities
    fov.py           IR-SIM's field of view (body keys fov / fov_radius): who sees whom
    pixels.py        the pixel observation: the scene rasterised per env
    contact2d.py     the contact sensor's YAML entry (its readings are a physics stage)

Importing this package imports every module of it (``push_envs`` does, before any scene is
read), so a sensor added here is one new module: no list names it. A sensor of another
package registers when its own module is imported (docs/adding_a_sensor.md).
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import Sensor
from .base import register_sensor

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_") and _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["Sensor", "register_sensor"]
