"""Field of view (IR-SIM's ``fov`` / ``fov_radius``): which objects an object sees.

IR-SIM's ``ObjectBase.fov_detect_object`` decides, for an observer at origin (x, y) with
heading theta and another object whose origin lies at distance d and bearing phi (both from
the objects' states) and whose shape's minimum bounding radius is r::

    diff   = | wrap(wrap(phi) - theta) |          the bearing off the heading, in [0, pi]
    offset = asin(min(r / d, 1))                  half the angle the object subtends
             (pi / 2 when d = 0)
    seen   = | diff - offset | <= fov / 2   and   d - r <= fov_radius

(``wrap`` is IR-SIM's WrapToPi, ``(a + pi) mod 2 pi - pi``.) This module computes exactly that,
compiled, per env; ``get_fov_detected_objects`` is every other object seen. The test compares
against IR-SIM 2.12 itself (``tests/physics/test_fov.py``).

An object's ``fov`` [rad] and ``fov_radius`` [m] are body keys; when ``fov`` is absent, IR-SIM
takes both from the body's lidar (its ``angle_range`` and ``range_max``; a given
``fov_radius`` is then ignored, as there), and a body with neither has no field of view. A
``fov`` without ``fov_radius`` has no radius in IR-SIM (its detection then fails); here the
view is unbounded. Sizes scale with a body's size factor. The grid map counts as one object
(the minimum bounding radius of its cells, at the map's origin), as IR-SIM's map object.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import shapely
from numba import njit

from .frames import origin_pose
from .jit import compiled
from .layout import EP_SCALE
from .layout import PI_BODY
from .layout import PI_NV

_TWO_PI = 2.0 * math.pi


def fov_of(body: Any) -> tuple[float, float] | None:
    """The (fov [rad], fov_radius [m]) of a :class:`~push_envs.physics.config.BodySpec`, with
    IR-SIM's defaults, or None when the body has no field of view."""
    if body.fov is None:
        lidar = body.lidar
        if lidar is None:
            return None
        return min(max(float(lidar.angle_range), 0.0), _TWO_PI), float(lidar.range_max)
    radius = math.inf if body.fov_radius is None else float(body.fov_radius)
    return float(body.fov), radius


def bounding_radii(scene: Any) -> np.ndarray:
    """(B,) minimum bounding radius [m] of each body's shape (IR-SIM's ``radius``: the
    smallest circle holding the shape, shapely's ``minimum_bounding_radius``), at size 1."""
    out = np.zeros(scene.num_bodies)
    for i in range(scene.num_bodies):
        info = scene.shapes[i]
        if info is None:  # the grid map: its cells
            cells = [shapely.Polygon(scene.svert[j, :scene.sint[j, PI_NV]])
                     for j in range(len(scene.sint)) if scene.sint[j, PI_BODY] == i]
            geom = shapely.MultiPolygon(cells) if cells else None
        elif len(info.pieces) == 1 and info.pieces[0].kind == "circle":
            out[i] = info.pieces[0].radius  # exact (a buffer's polygon is a hair inside)
            continue
        else:
            geom = shapely.union_all([shapely.MultiPoint(np.asarray(o)) for o in info.outlines])
        out[i] = 0.0 if geom is None or geom.is_empty else \
            float(shapely.minimum_bounding_radius(geom))
    return out


@compiled
def wrap_to_pi(a):
    """IR-SIM's WrapToPi: a [rad] in [-pi, pi) (Python's modulo, the divisor's sign)."""
    r = (a + math.pi) % _TWO_PI
    if r < 0.0:  # (numba's float modulo follows Python's; kept explicit)
        r += _TWO_PI
    return r - math.pi


@compiled
def sees(e, b, j, fov, radius, W, rad):
    """Whether body b (fov [rad], radius [m]) sees body j (minimum bounding radius rad[j]
    [m] at size 1) in env e, by IR-SIM's rule (module doc)."""
    x, y, th, _c, _s = origin_pose(e, b, W.pos, W.ang, W.bflt, W.epar)
    px, py, _t, _c2, _s2 = origin_pose(e, j, W.pos, W.ang, W.bflt, W.epar)
    r = rad[j] * W.epar[e, j, EP_SCALE]
    dx, dy = px - x, py - y
    diff = abs(wrap_to_pi(wrap_to_pi(math.atan2(dy, dx)) - th))
    d = math.hypot(dx, dy)
    if d == 0.0:
        offset = math.pi / 2.0
    else:
        offset = wrap_to_pi(math.asin(min(r / d, 1.0)))
    return abs(diff - offset) <= fov / 2.0 and d - r <= radius


@compiled
def detect(e, b, fov, radius, W, rad, out):
    """out[j] = 1 for every other body j that body b sees in env e, else 0 (uint8)."""
    for j in range(out.shape[0]):
        out[j] = 1 if j != b and sees(e, b, j, fov, radius, W, rad) else 0


@njit(cache=True)
def detect_all(b, fov, radius, W, rad, out):
    """:func:`detect` in every env: out (E, B) uint8 (``World.fov_detected``)."""
    for e in range(out.shape[0]):
        detect(e, b, fov, radius, W, rad, out[e])


__all__ = ["bounding_radii", "detect", "detect_all", "fov_of", "sees", "wrap_to_pi"]
