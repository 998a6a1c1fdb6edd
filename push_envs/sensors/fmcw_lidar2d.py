"""fmcw_lidar2d: IR-SIM's FMCW lidar: each beam's range and radial (Doppler) velocity.

The YAML entry takes lidar2d's keys (but not ``has_velocity``, which IR-SIM's FMCW lidar sets
itself and refuses) and IR-SIM 2.12's ``FMCWLidar2D`` keys::

    sensors:
      - {type: fmcw_lidar2d, range_max: 8.0, angle_range: 2.0944, number: 121,
         motion_compensate: false, velocity_noise_std: 0.0, noise: false,
         plot: {velocity_color_max: 0.6, positive_velocity_color: red, ...}}

``motion_compensate``: false, the velocity relative to the sensor; true, the target's own
(the sensor's motion removed). ``velocity_noise_std`` [m/s]: a normal draw added to each valid
return's velocity, from the env's own stream. The radial velocity is the hit point's velocity
minus the sensor origin's, projected on the beam's direction: positive when the target
moves away, IR-SIM's sign (``push_envs/physics/lidar.py`` gives the whole rule: lost returns,
the blind zone, the order of the noise draws). The drawing keys (``velocity_color``,
``velocity_color_max``, the zero / positive / negative / no-hit colours, ``no_hit_alpha``,
line widths and marker sizes, flat or under ``plot:``) only draw; ``render()`` colours the
beams by velocity with the colour keys, as IR-SIM's plot does.

Observed, it writes ``number`` columns of ranges / range_max, then ``number`` columns of
radial velocities [m/s] (0 for a beam without a valid return).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.obs_layout import Field
from ..physics.checks import bounded
from ..physics.checks import fail
from ..physics.checks import flag
from ..physics.lidar import LidarSpec
from .base import ALPHA
from .base import COLOUR
from .base import FLAG
from .base import SIZE
from .base import register_sensor
from .lidar2d import Lidar2D
from .lidar2d import beams
from .lidar2d import draw_beams
from .lidar2d import parse_lidar
from .lidar2d import slot_of

FMCW_KEYS = ("motion_compensate", "velocity_noise_std")
DRAWING = {"alpha": ALPHA, "color": COLOUR, "velocity_color": FLAG,
           "velocity_color_max": SIZE, "velocity_linewidth": SIZE, "no_hit_linewidth": SIZE,
           "no_hit_alpha": ALPHA, "show_velocity_markers": FLAG, "velocity_marker_size": SIZE,
           "velocity_marker_edge_color": COLOUR, "velocity_marker_edge_width": SIZE,
           "zero_velocity_color": COLOUR, "positive_velocity_color": COLOUR,
           "negative_velocity_color": COLOUR, "no_hit_color": COLOUR}
# IR-SIM's palette: zero, positive (away), negative (closer), no hit.
ZERO, AWAY, CLOSER, NO_HIT = (86, 180, 233), (204, 51, 17), (0, 114, 178), (211, 211, 211)


@register_sensor
class FmcwLidar2D(Lidar2D):
    """IR-SIM's fmcw_lidar2d (see the module doc); scanned and observed as a lidar2d, with
    the radial velocities after the ranges."""

    name = "fmcw_lidar2d"

    @classmethod
    def parse(cls, raw: Any, where: str) -> LidarSpec:
        if isinstance(raw, Mapping) and raw.get("has_velocity") is not None:
            raise fail(f"{where}.has_velocity", "is lidar2d's: an fmcw_lidar2d reports radial "
                                                "velocities itself (IR-SIM refuses the key too)")
        values = parse_lidar(raw, where, name=cls.name, extra=FMCW_KEYS, drawing=DRAWING)
        if "motion_compensate" in values:
            values["motion_compensate"] = flag(values["motion_compensate"],
                                               f"{where}.motion_compensate")
        if "velocity_noise_std" in values:
            values["velocity_noise_std"] = bounded(values["velocity_noise_std"],
                                                   f"{where}.velocity_noise_std", low=0.0)
        return LidarSpec(fmcw=True, **values)

    def fields(self) -> tuple[Field, ...]:
        spec = self.spec
        ranges, radial = self.reader(0), self.reader(1)
        n = spec.number
        return (Field("fmcw_range", n,
                      f"fmcw_lidar2d ranges / range_max ({n} beams from -angle_range/2 to "
                      f"+angle_range/2 about the heading, range_max {spec.range_max:g} m)",
                      "-", 0.0, 1.0, lambda ctx: ranges(ctx) / spec.range_max),
                Field("fmcw_radial_velocity", n,
                      "each beam's radial velocity, the hit point's relative to the sensor "
                      "(motion_compensate: its own) along the beam, positive away; 0 without "
                      "a valid return", "m/s", -np.inf, np.inf, radial))

    @classmethod
    def draw(cls, renderer: Any, env: int, body: int, spec: LidarSpec) -> None:
        """The beams coloured by radial velocity (IR-SIM's plot: the zero colour blended
        toward the positive or negative one up to ``velocity_color_max``), returns opaque,
        misses faint."""
        w = renderer.world
        s = slot_of(w, body, spec)
        origin, angles, r = beams(w, s, env)
        v = w.lidar_arrays.radial[env, s, :len(angles)]
        where = f"{w.names[body]}.{spec.name}"

        def colour(key: str, default: tuple) -> np.ndarray:
            return np.array(renderer.colour(spec.plot_value(key, None), default, where), float)

        if not spec.plot_value("velocity_color", True):
            base = renderer.colour(spec.color, ZERO, where)
            draw_beams(renderer, origin, angles, r,
                       [(*base, int(round(255 * spec.alpha)))] * len(angles))
            return
        zero, away = colour("zero_velocity_color", ZERO), colour("positive_velocity_color", AWAY)
        closer, miss = colour("negative_velocity_color", CLOSER), colour("no_hit_color", NO_HIT)
        vmax = max(float(spec.plot_value("velocity_color_max", 2.0)), 1e-6)
        miss_a = int(round(255 * spec.plot_value("no_hit_alpha", 0.03)))
        rmin, rmax = spec.range_min, spec.range_max
        colours = []
        for rk, vk in zip(r, v, strict=True):
            if not rmin < rk < rmax:
                colours.append((*miss.astype(int), miss_a))
                continue
            k = min(abs(float(vk)) / vmax, 1.0)
            c = (1.0 - k) * zero + k * (away if vk >= 0 else closer)
            colours.append((*np.round(c).astype(int), 255))
        draw_beams(renderer, origin, angles, r, colours)


__all__ = ["FmcwLidar2D"]
