"""Scene-building helpers for the physics tests.

Tests reach these through the ``scn`` fixture (``scn.box(...)``, ``scn.world(...)``), so no
test module has to import this conftest by name.

Units: metres, seconds, kilograms, radians. Rectangles are ``length`` along the body x axis by
``width`` along y.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest

from push_envs.physics import World

try:  # property tests (test_*_properties.py); hypothesis is in the `test` extra
    from hypothesis import HealthCheck
    from hypothesis import settings
except ImportError:  # pragma: no cover
    settings = None
if settings is not None:
    # A fixed small budget keeps the default suite fast; `slow` (the slow-marked twins, or
    # HYPOTHESIS_PROFILE=slow for every property test) searches much harder.
    settings.register_profile("fast", max_examples=50, deadline=None)
    settings.register_profile("slow", max_examples=2000, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))

G = 9.81
CONTACT = [{"name": "contact2d"}]


def box(name, x, y, theta=0.0, length=0.4, width=0.4, **kw):
    """A rectangle body; passive when given a finite ``mass``, immovable otherwise."""
    body = {"name": name, "shape": {"name": "rectangle", "length": length, "width": width},
            "state": [x, y, theta]}
    body.update(kw)
    return body


def disc(name, x, y, radius=0.1, **kw):
    body = {"name": name, "shape": {"name": "circle", "radius": radius}, "state": [x, y, 0.0]}
    body.update(kw)
    return body


def polygon(name, vertices, state=(0.0, 0.0, 0.0), **kw):
    body = {"name": name, "shape": {"name": "polygon", "vertices": [list(v) for v in vertices]},
            "state": list(state)}
    body.update(kw)
    return body


def wall(name, x, y, length=0.1, width=4.0, **kw):
    """A static rectangular wall (immovable)."""
    return box(name, x, y, length=length, width=width, static=True, **kw)


def line_wall(name, p0, p1, **kw):
    """A zero-thickness static wall (linestring)."""
    body = {"name": name, "shape": {"name": "linestring", "vertices": [list(p0), list(p1)]},
            "static": True, "state": [0.0, 0.0, 0.0]}  # vertices in the world frame
    body.update(kw)
    return body


def robot(name, x, y, theta=0.0, kin="diff", radius=0.2, sensors=True, **kw):
    """A driven circular robot (default 1 kg, |v| <= 1)."""
    kin_spec = kin if isinstance(kin, dict) else {"name": kin}
    body = {"name": name, "kinematics": kin_spec,
            "shape": {"name": "circle", "radius": radius}, "state": [x, y, theta]}
    if sensors:
        body["sensors"] = CONTACT
    body.update(kw)
    return body


def scene(robots=(), obstacles=(), **world):
    """A scene dict; ``world`` keys go to the world section (step_time defaults to 0.1)."""
    w = {"step_time": 0.1}
    w.update(world)
    return {"world": w, "robot": list(robots), "obstacle": list(obstacles)}


def world(robots=(), obstacles=(), num_envs=1, params=None, **world_keys):
    return World.from_config(scene(robots, obstacles, **world_keys), num_envs=num_envs,
                             params=params)


def run(w, steps, commands=None):
    """Step ``w`` ``steps`` times with fixed ``commands`` (a dict, a callable of the step
    index, or None); return the list of per-step ``{name: state(name).copy()}``."""
    out = []
    for i in range(steps):
        cmd = commands(i) if callable(commands) else commands
        w.step(cmd)
        out.append({n: w.state(n).copy() for n in w.names if n != "map"})
    return out


def arena_walls(half_x, half_y, thickness=0.2, prefix="wall"):
    """Four static walls enclosing [-half_x, half_x] x [-half_y, half_y]."""
    t = thickness
    return [
        wall(f"{prefix}_e", half_x + t / 2, 0.0, length=t, width=2 * half_y + 2 * t),
        wall(f"{prefix}_w", -half_x - t / 2, 0.0, length=t, width=2 * half_y + 2 * t),
        wall(f"{prefix}_n", 0.0, half_y + t / 2, length=2 * half_x, width=t),
        wall(f"{prefix}_s", 0.0, -half_y - t / 2, length=2 * half_x, width=t),
    ]


def wedge_against_wall(angle_deg, wall_x=0.5, robot_radius=0.1, **box_kw):
    """A 1 kg quadrilateral 'box' whose right face lies flat on a static wall at ``wall_x``
    and whose left face is tilted so that its inward normal makes ``angle_deg`` with the wall
    normal (+x), plus an omni robot touching that face on the line of action through the
    box's centroid (so the push carries no torque).

    Body-body contacts are frictionless, so a push on a face is transmitted along the face
    normal: the tilted face is how a push "at angle a from the wall normal" is produced.
    Returns (robots, obstacles, push_direction).
    """
    import shapely

    a = math.radians(angle_deg)
    x0, h = wall_x - 0.4, 0.2
    top_left = (x0 - 2 * h * math.tan(a), h)
    verts = [(x0, -h), (wall_x, -h), (wall_x, h), top_left]
    centroid = np.array(shapely.Polygon(verts).centroid.coords[0])
    n = np.array([math.cos(a), math.sin(a)])
    p0 = np.array([x0, -h])
    touch = centroid - (n @ (centroid - p0)) * n  # on the tilted face, on the line of action
    rc = touch - robot_radius * n
    robots = [robot("robot", float(rc[0]), float(rc[1]), kin="omni", radius=robot_radius)]
    obstacles = [
        polygon("box", verts, mass=1.0, sensors=CONTACT, **box_kw),
        wall("wall", wall_x + 0.05, 0.0, length=0.1, width=4.0),
    ]
    return robots, obstacles, n


# Captured while this module runs: every test folder's conftest is named "conftest", so
# sys.modules["conftest"] later holds whichever folder's was imported last.
_SELF = sys.modules[__name__]


@pytest.fixture
def scn():
    """This module: the scene builders above."""
    return _SELF
