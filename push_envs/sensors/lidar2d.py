"""lidar2d: IR-SIM's planar lidar, as one sensor module.

The YAML entry takes every key IR-SIM 2.12's ``Lidar2D`` reads (defaults as there)::

    sensors:
      - {name: lidar2d, range_min: 0, range_max: 10, angle_range: 3.1416, number: 100,
         noise: false, std: 0.2, angle_std: 0, offset: [0, 0, 0], has_velocity: false,
         scan_time: 0.1, reso: 0.1, alpha: 0.3, color: red, plot: {alpha: 0.3, color: red}}

``scan_time`` and ``reso`` are accepted and change nothing (push_envs scans at every step;
IR-SIM 2.12 reads ``reso`` nowhere, so where ``number`` is absent the lidar has IR-SIM's 100
beams whatever ``reso`` says). ``alpha`` and ``color`` (flat or under ``plot:``) only draw:
they set the beams' opacity and colour in ``render()``. The ray casting itself is the
engine's (``push_envs/physics/lidar.py``), shared with ``World.lidar``.

Observed (the env's ``lidar=dict(...)`` argument, or a lidar2d the robot declares), it writes
``number`` columns after the task's: each range divided by ``range_max`` (in [0, 1]), in beam
order, its noise drawn from the env's own stream.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.obs_layout import Field
from ..physics.abi import CFunction
from ..physics.checks import bounded
from ..physics.checks import fail
from ..physics.checks import flag
from ..physics.checks import keys
from ..physics.checks import size
from ..physics.checks import vector
from ..physics.errors import short_repr
from ..physics.lidar import LIDAR_FIELDS
from ..physics.lidar import LP_FMCW
from ..physics.lidar import LP_RMAX
from ..physics.lidar import LidarArrays
from ..physics.lidar import LidarSpec
from ..physics.lidar import scan_sensor
from ..physics.limits import MAX_COORD
from .base import ALPHA
from .base import COLOUR
from .base import NAME_KEYS
from .base import SENSE_OBSERVE
from .base import SENSE_SIG
from .base import Sensor
from .base import drawing_keys
from .base import load_env
from .base import load_world
from .base import register_sensor
from .base import structure

MAX_LIDAR_BEAMS = 4096
ANGLE_SLACK = 1e-3  # [rad] an angle_range this far above 2 pi is 2 pi written rounded
# IR-SIM's Lidar2D keys beside the name (the drawing ones are DRAWING's).
LIDAR_KEYS = ("range_min", "range_max", "angle_range", "number", "noise", "std", "angle_std",
              "offset", "has_velocity", "scan_time", "reso")
DRAWING = {"alpha": ALPHA, "color": COLOUR}
BEAM = (230, 60, 60)  # default beam colour (R, G, B)
HIT = (200, 30, 30)  # a return's dot


def parse_lidar(raw: Any, where: str, *, name: str = "lidar2d", extra: tuple = (),
                drawing: dict | None = None) -> dict[str, Any]:
    """The checked values of a ray-casting sensor's entry (a LidarSpec's keyword arguments):
    lidar2d's keys, plus ``extra`` keys the caller checks itself (their raw values are
    returned under their names); ``drawing``: the drawing-only keys (default lidar2d's)."""
    drawing = DRAWING if drawing is None else drawing
    entry = keys(raw, (*NAME_KEYS, *LIDAR_KEYS, *extra, "plot", *drawing), where)
    values: dict[str, Any] = {"name": name}

    def given(key: str) -> bool:
        return entry.get(key) is not None  # an explicit null counts as absent

    for key in ("range_min", "std", "angle_std"):
        if given(key):
            values[key] = bounded(entry[key], f"{where}.{key}", low=0.0, magnitude=MAX_COORD)
    if given("range_max"):
        values["range_max"] = size(entry["range_max"], f"{where}.range_max")
    if given("angle_range"):
        # A full circle written rounded (6.2832) is a full circle, as IR-SIM's ClipTo2Pi takes
        # it; a wider fan is a mistake.
        values["angle_range"] = min(bounded(entry["angle_range"], f"{where}.angle_range",
                                            low=0.0, high=2.0 * math.pi + ANGLE_SLACK),
                                    2.0 * math.pi)
    for key in ("scan_time", "reso"):
        if given(key):
            values[key] = bounded(entry[key], f"{where}.{key}", low=0.0, strict=True)
    if given("number"):
        n = entry["number"]
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) \
                or not 1 <= n <= MAX_LIDAR_BEAMS:
            raise fail(f"{where}.number", f"must be an integer in [1, {MAX_LIDAR_BEAMS}], "
                                          f"got {short_repr(n)}")
        values["number"] = int(n)
    for key in ("noise", "has_velocity"):
        if given(key):
            values[key] = flag(entry[key], f"{where}.{key}")
    if given("offset"):
        values["offset"] = vector(entry["offset"], f"{where}.offset", 3, magnitude=MAX_COORD)
    plot = drawing_keys(entry, where, drawing)
    pairs = dict(plot)
    if "alpha" in pairs:
        values["alpha"] = pairs["alpha"]
    if "color" in pairs:
        values["color"] = pairs["color"]
    values["plot"] = plot
    for key in extra:
        if given(key):
            values[key] = entry[key]
    rmin = values.get("range_min", LidarSpec.range_min)
    rmax = values.get("range_max", LidarSpec.range_max)
    if rmin >= rmax:
        raise fail(f"{where}.range_min", f"must be < range_max ({rmax:g} m), got {rmin:g}")
    return values


LIDAR_ABI = structure("LidarSensorArrays", {"sel": ("i8", 1), **LIDAR_FIELDS}, """The observed
lidar: ``sel`` (1,) its row of the World's LidarArrays, then those arrays (the readings it
writes are the World's, so ``render()`` and ``World`` see them).""")
LidarSensorArrays = LIDAR_ABI.cls
load_lidar = LIDAR_ABI.loader


def lidar_sense(which, e, at, wp, sp, vp, tp):
    """Scan the lidar in env e (noise from env e's stream) and write its ranges / range_max
    from column ``at``; an FMCW lidar's radial velocities [m/s] follow them."""
    if which != SENSE_OBSERVE:
        return
    W = load_world(wp)
    V = load_env(vp)
    S = load_lidar(sp)
    L = LidarArrays(S.body, S.nbeam, S.prm, S.angles, S.ranges, S.vels, S.radial)
    s = S.sel[0]
    scan_sensor(e, s, W, L, V.rng)
    n = L.nbeam[s]
    inv = 1.0 / L.prm[s, LP_RMAX]
    for k in range(n):
        V.obs[e, at + k] = L.ranges[e, s, k] * inv
    if L.prm[s, LP_FMCW] != 0.0:
        for k in range(n):
            V.obs[e, at + n + k] = L.radial[e, s, k]


LIDAR_SENSE = CFunction(lidar_sense, SENSE_SIG)


@register_sensor
class Lidar2D(Sensor):
    """IR-SIM's lidar2d (see the module doc)."""

    name = "lidar2d"
    abi = LIDAR_ABI
    sense = LIDAR_SENSE

    @classmethod
    def parse(cls, raw: Any, where: str) -> LidarSpec:
        return LidarSpec(**parse_lidar(raw, where))

    def __init__(self, env: Any, body: int, spec: LidarSpec) -> None:
        super().__init__(env, body, spec)
        w = env.world
        self.slot = slot_of(w, body, spec)
        self.arrays = LidarSensorArrays(np.array([self.slot], np.int64),
                                        *w.lidar_arrays)

    def reader(self, column: int) -> Any:
        """``expect(ctx)``: this lidar's readings scanned now (column 0 the ranges, 1 the
        second part: velocities), for the observation test."""
        name, sensor = self.env.world.scene.names[self.body], self.spec.name

        def expect(ctx: Any) -> np.ndarray:
            got = ctx.world.lidar_array(name, sensor)
            return got[column] if isinstance(got, tuple) else got
        return expect

    def fields(self) -> tuple[Field, ...]:
        spec = self.spec
        ranges = self.reader(0)
        return (Field("lidar", spec.number,
                      f"lidar2d ranges / range_max ({spec.number} beams from -angle_range/2 to "
                      f"+angle_range/2 about the heading, range_max {spec.range_max:g} m)",
                      "-", 0.0, 1.0, lambda ctx: ranges(ctx) / spec.range_max),)

    @classmethod
    def draw(cls, renderer: Any, env: int, body: int, spec: LidarSpec) -> None:
        """The beams (translucent, ``color`` / ``alpha``) to the latest readings, and a dot at
        each return."""
        w = renderer.world
        s = slot_of(w, body, spec)
        origin, angles, r = beams(w, s, env)
        colour = renderer.colour(spec.color, BEAM, f"{w.names[body]}.{spec.name}")
        draw_beams(renderer, origin, angles, r, [(*colour, int(round(255 * spec.alpha)))] *
                   len(angles))
        rmax = float(w.lidar_arrays.prm[s, LP_RMAX])
        ends = origin + r[:, None] * np.stack([np.cos(angles), np.sin(angles)], 1)
        for p in renderer.world_to_px(ends[r < rmax]):
            renderer.pg.draw.circle(renderer.canvas, HIT, p, 2)


def slot_of(world: Any, body: int, spec: LidarSpec) -> int:
    """The row of body ``body``'s sensor ``spec`` in the World's LidarArrays."""
    rows = [k for k, (b, s) in enumerate(world.scene.lidars) if b == body and s is spec] or \
        [k for k, (b, s) in enumerate(world.scene.lidars) if b == body and s == spec]
    if not rows:
        raise ValueError(f"{spec.name} of body {world.scene.names[body]!r} is not among the "
                         f"world's ray-casting sensors")
    return rows[0]


def beams(world: Any, s: int, env: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sensor s's origin (2,) [m], beam angles (n,) [rad] and latest ranges (n,) [m]."""
    origin, angles = world.beams(s, env)
    return origin, angles, world.lidar_arrays.ranges[env, s, :len(angles)]


def draw_beams(renderer: Any, origin: np.ndarray, angles: np.ndarray, ranges: np.ndarray,
               colours: list) -> None:
    """Each beam from ``origin`` to its range, in its (R, G, B, A) colour, on the overlay."""
    pg = renderer.pg
    overlay = renderer.overlay
    overlay.fill((0, 0, 0, 0))
    ends = origin + ranges[:, None] * np.stack([np.cos(angles), np.sin(angles)], 1)
    o = renderer.world_to_px(origin)
    for p, c in zip(renderer.world_to_px(ends), colours, strict=True):
        pg.draw.line(overlay, c, o, p)
    renderer.canvas.blit(overlay, (0, 0))


__all__ = ["LIDAR_ABI", "LIDAR_SENSE", "Lidar2D", "LidarSensorArrays", "MAX_LIDAR_BEAMS",
           "beams", "draw_beams", "parse_lidar", "slot_of"]
