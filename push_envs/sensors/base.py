"""What a sensor module declares, and the registry it joins.

A sensor is one module: one class derived from :class:`Sensor`, decorated with
:func:`register_sensor`. Nothing outside the module names the sensor; the scene parser, the
env, the step and the renderer find it through the registry
(``push_envs/physics/sensor_registry.py``) by its YAML name. The class declares:

==============  ==========================================================================
``name``        its YAML name (``sensors: [{name: lidar2d, ...}]``), the registry's key
``parse``       its YAML entry -> a frozen spec (IR-SIM's keys); a bad key or value is a
                SceneError naming the file, the key and the reason
``from_body``   a spec a body carries through keys of its own (the field of view's ``fov``)
``abi``         its arrays: an :class:`~push_envs.physics.abi.AbiType` structure
``sense``       its compiled sense function: a :class:`~push_envs.physics.abi.CFunction` of
                :data:`SENSE_SIG`, which the step calls through its address
``__init__``    its arrays for one env (``self.arrays``, of type ``abi``), made at set-up
``fields``      its observation fields (:class:`~push_envs.core.obs_layout.Field`), appended
                to the env's layout; the sense function writes them from column ``at``
``draw``        how ``render()`` draws it
==============  ==========================================================================

How the env uses it: for the robot it observes, every sensor the body carries (its
``sensors:`` entries, then :meth:`Sensor.from_body`) whose class has a ``sense`` is built
(``cls(env, body, spec)``); its fields follow the task's layout; its arrays are packed once
(``abi.pack``) and the env's ``V.sensors`` gets a row (sense address, packed address, first
column). The step then calls ``sense(SENSE_OBSERVE, e, at, W*, S, V*, T*)`` after the task's
``observe`` in every step and reset, and ``sense(SENSE_FINAL, ...)`` before a SAME_STEP
autoreset, so a sensor keeps what its final observation needs (the pixel sensor its final
frame) without the step knowing. docs/adding_a_sensor.md builds one.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import ClassVar
from typing import NamedTuple

import numpy as np

from ..core.obs_layout import Field
from ..core.step import SENSE_FINAL
from ..core.step import SENSE_OBSERVE
from ..core.step import SENSE_SIG
from ..core.step import load_env
from ..core.step import load_task
from ..physics.abi import AbiType
from ..physics.abi import CFunction
from ..physics.arrays import load_world
from ..physics.checks import bounded
from ..physics.checks import fail
from ..physics.checks import flag
from ..physics.checks import keys
from ..physics.errors import short_repr
from ..physics.sensor_registry import register

NAME_KEYS = ("name", "type")  # a sensor entry's name, and its alias (IR-SIM reads either)


@dataclass(frozen=True)
class SensorSpec:
    """The spec of a sensor whose YAML entry holds only its name."""

    name: str


def structure(name: str, fields: Mapping[str, tuple[str, int]], doc: str) -> AbiType:
    """A sensor's arrays: a NamedTuple class ``name`` of the arrays ``fields`` (name ->
    (dtype code, ndim), in order) and its AbiType (``.cls`` the class, ``.loader`` what its
    sense function loads them with). ``doc``: the class's docstring (units of each field)."""
    cls = NamedTuple(name, [(f, np.ndarray) for f in fields])
    cls.__doc__ = doc
    cls.__module__ = sys._getframe(1).f_globals.get("__name__", __name__)
    return AbiType(cls, fields)


# Kinds of drawing-only values (IR-SIM's matplotlib keys): how each is checked.
ALPHA, SIZE, COLOUR, FLAG = "alpha", "size", "colour", "flag"


def drawing_keys(raw: Mapping, where: str, table: Mapping[str, str]) -> tuple:
    """The drawing-only keys of a sensor entry, checked: each key of ``table`` (key -> kind:
    ALPHA in [0, 1], SIZE >= 0, COLOUR a string, FLAG true / false) may be given flat in
    ``raw`` or in its ``plot:`` mapping (IR-SIM's preferred place, which wins, as there).
    Returns the given ones as sorted (key, value) pairs; an unknown ``plot`` key is an error
    naming it."""
    given: dict[str, Any] = {}
    plot = raw.get("plot")
    sources = [(raw, where)]
    if plot is not None:
        sources.append((keys(plot, table, f"{where}.plot"), f"{where}.plot"))
    for source, at in sources:
        for key, kind in table.items():
            value = source.get(key)
            if value is None:
                continue
            here = f"{at}.{key}"
            if kind == ALPHA:
                value = bounded(value, here, low=0.0, high=1.0)
            elif kind == SIZE:
                value = bounded(value, here, low=0.0)
            elif kind == FLAG:
                value = flag(value, here)
            elif not isinstance(value, str):
                raise fail(here, f"must be a colour name or '#rrggbb', got {short_repr(value)}")
            given[key] = value
    return tuple(sorted(given.items()))


def register_sensor(cls: type[Sensor]) -> type[Sensor]:
    """Class decorator: register the sensor declaration ``cls`` under ``cls.name``."""
    if not (isinstance(cls, type) and issubclass(cls, Sensor)):
        raise TypeError(f"register_sensor: {cls!r} is not a Sensor subclass")
    if cls.sense is not None and not isinstance(cls.sense, CFunction):
        raise TypeError(f"{cls.__name__}.sense must be a CFunction of SENSE_SIG")
    if cls.sense is not None and (cls.abi is None or cls.sense.signature != SENSE_SIG):
        raise TypeError(f"{cls.__name__}: a sense function takes SENSE_SIG and its arrays "
                        f"need an `abi` (AbiType)")
    return register(cls)


class Sensor:
    """A sensor's declaration (see the module doc); subclass it in the sensor's module.

    Class attributes:

    name:      the YAML name, the registry's key
    in_scenes: whether a scene may declare it in a body's ``sensors:`` (the pixel
               observation is made by the env's ``obs_mode``, not by a scene)
    abi:       the AbiType of ``self.arrays`` (None: nothing to observe)
    sense:     the compiled sense function (a CFunction of SENSE_SIG), or None when the
               sensor is read elsewhere (contact2d is a stage of the physics)
    """

    name: ClassVar[str]
    in_scenes: ClassVar[bool] = True
    abi: ClassVar[AbiType | None] = None
    sense: ClassVar[CFunction | None] = None

    # ---------------------------------------------------------------------- declaration
    @classmethod
    def parse(cls, raw: Any, where: str) -> Any:
        """The checked, frozen spec of a YAML entry ``raw`` found at ``where`` (``"<file>:
        robot[0].sensors[1]"``); its ``name`` attribute is the sensor's name. This default
        accepts the name alone."""
        keys(raw, NAME_KEYS, where)
        return SensorSpec(cls.name)

    @classmethod
    def from_body(cls, body: Any) -> Any:
        """A spec the body (:class:`~push_envs.physics.config.BodySpec`) carries through keys
        of its own, or None (the default: a sensor is declared in ``sensors:``)."""
        return None

    @classmethod
    def draw(cls, renderer: Any, env: int, body: int, spec: Any) -> None:
        """Draw the sensor of body ``body`` (spec ``spec``) in env ``env`` of the renderer's
        world (a :class:`~push_envs.core.render.Renderer`: its ``world``, ``world_to_px``,
        ``pg`` (pygame), ``canvas`` and ``overlay`` surfaces). Default: nothing."""

    # ----------------------------------------------------------------- one env's sensor
    def __init__(self, env: Any, body: int, spec: Any) -> None:
        """The sensor of body index ``body`` with spec ``spec``, observed by ``env`` (a
        :class:`~push_envs.core.env.PushVectorEnv`: its ``world``, ``num_envs``, ``task``
        and ``task_arrays`` are made); subclasses build ``self.arrays`` here."""
        self.env = env
        self.body = body
        self.spec = spec
        self.arrays: Any = None

    def fields(self) -> tuple[Field, ...]:
        """The observation fields this sensor writes (from column ``at`` on, in order)."""
        return ()


__all__ = ["ALPHA", "COLOUR", "FLAG", "NAME_KEYS", "SENSE_FINAL", "SENSE_OBSERVE", "SENSE_SIG",
           "SIZE", "Sensor", "SensorSpec", "drawing_keys", "load_env", "load_task",
           "load_world", "register_sensor", "structure"]
