"""The field of view (physics/fov.py via World.fov_detected): IR-SIM's rule on analytic cases
(the bearing, the subtended half angle, the radius), its defaults from the lidar, size
factors, and a batch equal to single worlds. tests/sensors/test_irsim.py compares with IR-SIM
2.12 itself."""

from __future__ import annotations

import math

import numpy as np
import pytest

from push_envs.physics import SceneError
from push_envs.physics import World
from push_envs.physics import load_scene
from push_envs.physics.fov import fov_of


def disc(name, x, y, r=0.5):
    return {"name": name, "shape": {"name": "circle", "radius": r}, "state": [x, y, 0.0],
            "mass": 1.0}


def world(obstacles, num_envs=1, **robot):
    me = {"name": "me", "kinematics": {"name": "diff"}, "shape": {"name": "circle",
                                                                   "radius": 0.1},
          "state": [0.0, 0.0, 0.0], **robot}
    return World.from_config({"world": {"width": 40, "height": 40, "offset": [-20, -20]},
                              "robot": [me], "obstacle": obstacles}, num_envs=num_envs)


def test_bearing_half_angle_and_radius():
    # fov 90 deg, 5 m. Discs of r = 0.5 m at 3 m: ahead, 50 deg off (its edge inside the fan:
    # 50 deg - asin(0.5 / 3) = 40.4 deg < 45 deg), 90 deg off (outside), behind.
    # Then the radius: d - r <= 5 m ahead (5.4 m away), not at 5.6 m (20 deg off).
    a50, a20 = math.radians(50), math.radians(-20)
    w = world([disc("ahead", 3, 0), disc("off50", 3 * math.cos(a50), 3 * math.sin(a50)),
               disc("side", 0, 3), disc("behind", -3, 0), disc("near_edge", 5.4, 0.0),
               disc("beyond", 5.6 * math.cos(a20), 5.6 * math.sin(a20))],
              fov=math.pi / 2, fov_radius=5.0)
    seen = dict(zip(w.names, w.fov_detected("me")[0], strict=True))
    assert seen == {"me": False, "ahead": True, "off50": True, "side": False,
                    "behind": False, "near_edge": True, "beyond": False}


def test_a_large_near_object_ahead_is_irsims_blind_spot():
    # IR-SIM compares |bearing - half angle| with fov / 2: a body straight ahead that
    # subtends more than the fan is not "seen" (asin(0.9) = 64 deg > 45 deg). Kept as IR-SIM.
    w = world([disc("big", 1.0, 0.0, 0.9), disc("small", 1.0, 0.0 + 2.0, 0.1)],
              fov=math.pi / 2, fov_radius=5.0)
    assert not w.fov_detected("me")[0, w.index("big")]
    w.set_scale("big", 0.5)  # half the size: asin(0.45) = 26.7 deg <= 45 deg
    assert w.fov_detected("me")[0, w.index("big")]


def test_defaults_come_from_the_lidar():
    lidar = {"name": "lidar2d", "angle_range": 1.0, "range_max": 4.0}
    w = world([disc("d", 3.9, 0.0, 0.2)], sensors=[lidar])
    assert w.fov("me") == (1.0, 4.0)
    # IR-SIM ignores fov_radius when fov is absent (both come from the lidar then).
    w2 = world([disc("d", 3.9, 0.0, 0.2)], sensors=[lidar], fov_radius=1.0)
    assert w2.fov("me") == (1.0, 4.0) and w2.fov_detected("me")[0, 1]
    w3 = world([disc("d", 30.0, 0.0, 0.2)], fov=0.5)  # no radius: unbounded
    assert w3.fov("me") == (0.5, math.inf) and w3.fov_detected("me")[0, 1]
    assert world([], fov=7.0).fov("me") == (2 * math.pi, math.inf)  # clipped, as ClipTo2Pi
    nothing = world([disc("d", 1.0, 0.0)])
    assert nothing.fov("me") is None
    with pytest.raises(ValueError, match="no field of view"):
        nothing.fov_detected("me")


def test_bad_fov_keys_name_the_key():
    base = {"robot": [{"name": "me", "kinematics": {"name": "diff"}}]}
    for key, value, text in (("fov", -1.0, ">= 0"), ("fov", "wide", "finite number"),
                             ("fov_radius", -2.0, ">= 0")):
        raw = {"robot": [{**base["robot"][0], key: value}]}
        with pytest.raises(SceneError, match=rf"robot\[0\]\.{key}: must be .*{text}"):
            load_scene(raw)
    assert fov_of(load_scene({"robot": [{**base["robot"][0], "fov": 1.0,
                                         "fov_radius": ".inf"}]}).bodies[0]) == (1.0, math.inf)


def test_batch_equals_single_worlds():
    E = 24
    obstacles = [disc(f"d{k}", x, y, r) for k, (x, y, r) in
                 enumerate(((2, 1, 0.3), (-1, 3, 0.6), (4, -2, 0.2), (-3, -3, 1.0)))]
    batch = world(obstacles, num_envs=E, fov=1.2, fov_radius=4.0)
    rng = np.random.default_rng(0)
    poses = np.column_stack([rng.uniform(-3, 3, E), rng.uniform(-3, 3, E),
                             rng.uniform(-4, 4, E)])
    batch.set_state("me", poses)
    got = batch.fov_detected("me")
    assert got.any() and not got.all()
    for e in (0, 9, 23):
        single = world(obstacles, fov=1.2, fov_radius=4.0)
        single.set_state("me", poses[e])
        np.testing.assert_array_equal(single.fov_detected("me")[0], got[e])
