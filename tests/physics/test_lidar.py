"""lidar2d (lidar.py via World): analytic ranges to 1e-9 m on every shape kind, IR-SIM's
conventions (beam spread, range_min / range_max, offset, velocities), noise determinism and
batch == single; configuration errors name the key."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely

from push_envs.physics import SceneError
from push_envs.physics import World
from push_envs.physics.config import LidarSpec
from push_envs.physics.config import load_scene

TOL = 1e-9


def lidar(**kw):
    return {"name": "lidar2d", **kw}


def scene(obstacles, *, robot_state=(0.0, 0.0, 0.0), sensor=None, world=None, robots=()):
    robot = {"name": "robot", "kinematics": {"name": "diff"},
             "shape": {"name": "circle", "radius": 0.1}, "state": list(robot_state),
             "sensors": [sensor if sensor is not None else lidar(number=1, angle_range=0.0)]}
    return {"world": {"width": 10, "height": 10, "offset": [-5, -5], **(world or {})},
            "robot": [robot, *robots], "obstacle": list(obstacles)}


def make(obstacles, num_envs=1, **kw):
    return World.from_config(scene(obstacles, **kw), num_envs=num_envs)


def wall(name, x, y, length, width, theta=0.0):
    return {"name": name, "shape": {"name": "rectangle", "length": length, "width": width},
            "state": [x, y, theta], "static": True}


def aim(w, theta, x=0.0, y=0.0):
    w.set_state("robot", [x, y, theta])


# ----------------------------------------------------------------------------- config
def test_defaults_are_irsims():
    spec = LidarSpec()
    assert (spec.range_min, spec.range_max, spec.angle_range, spec.number) == \
        (0.0, 10.0, math.pi, 100)
    # IR-SIM 2.12's Lidar2D: angle_std 0 (the beams keep their directions unless asked).
    assert (spec.noise, spec.std, spec.angle_std, spec.offset, spec.has_velocity) == \
        (False, 0.2, 0.0, (0.0, 0.0, 0.0), False)
    w = make([], sensor=lidar())
    assert w.lidar_spec("robot") == LidarSpec()
    origin, angles = w.lidar_beams("robot")
    np.testing.assert_array_equal(angles, np.linspace(-math.pi / 2, math.pi / 2, 100))
    # Nothing to hit: every beam reads range_max.
    np.testing.assert_array_equal(w.lidar("robot"), np.full(100, 10.0))


def test_contact2d_and_lidar2d_together():
    spec = load_scene(scene([], sensor=None))
    assert spec.bodies[0].sensors == ("lidar2d",)
    raw = scene([])
    raw["robot"][0]["sensors"] = [{"type": "contact2d"}, lidar(number=8, range_max=3.0)]
    body = load_scene(raw).bodies[0]
    assert body.sensors == ("contact2d", "lidar2d")
    assert body.lidar == LidarSpec(number=8, range_max=3.0)


@pytest.mark.parametrize("extra, key, text", [
    ({"range_maxx": 3}, r"sensors\[0\]", "unknown key 'range_maxx'"),
    ({"number": 0}, r"sensors\[0\]\.number", "integer in"),
    ({"number": 2.5}, r"sensors\[0\]\.number", "integer in"),
    ({"range_max": -1}, r"sensors\[0\]\.range_max", "must be > 0"),
    ({"range_min": 5, "range_max": 4}, r"sensors\[0\]\.range_min", "< range_max"),
    ({"noise": "yes"}, r"sensors\[0\]\.noise", "true or false"),
    ({"has_velocity": 1}, r"sensors\[0\]\.has_velocity", "true or false"),
    ({"std": -0.1}, r"sensors\[0\]\.std", ">= 0"),
    ({"offset": [0, 0]}, r"sensors\[0\]\.offset", "list of 3 numbers"),
    ({"angle_range": 7.0}, r"sensors\[0\]\.angle_range", "<= 6.28"),
])
def test_bad_lidar_keys_name_the_key(extra, key, text):
    with pytest.raises(SceneError, match=rf"robot\[0\]\.{key}.*{text}"):
        load_scene(scene([], sensor=lidar(**extra)))


def test_unknown_body_or_sensorless_body():
    w = make([{"name": "b", "shape": {"name": "circle", "radius": 0.2}, "state": [2, 0, 0],
               "mass": 1.0}])
    with pytest.raises(ValueError, match="no lidar2d sensor"):
        w.lidar("b")
    with pytest.raises(KeyError):
        w.lidar("nobody")
    with pytest.raises(IndexError):
        w.lidar("robot", env=3)


# ------------------------------------------------------------------- analytic ranges
def test_wall_at_known_distance():
    # Near face of the wall at x = 2; beams at -45, 0, +45 degrees.
    w = make([wall("w", 2.05, 0.0, 0.1, 20.0)],
             sensor=lidar(number=3, angle_range=math.pi / 2))
    r = w.lidar("robot")
    np.testing.assert_allclose(r, [2.0 * math.sqrt(2.0), 2.0, 2.0 * math.sqrt(2.0)],
                               rtol=0, atol=TOL)
    # The robot moved and turned: the range follows.
    aim(w, math.radians(10.0), x=-1.0, y=0.5)
    r = w.lidar("robot")
    for a, got in zip(math.radians(10.0) + np.linspace(-math.pi / 4, math.pi / 4, 3), r,
                      strict=True):
        assert abs(got - 3.0 / math.cos(a)) < TOL


@pytest.mark.parametrize("theta", [0.0, 0.05, -0.1, 0.16])
def test_disc(theta):
    cx, cy, rad = 3.0, 0.2, 0.5
    w = make([{"name": "d", "shape": {"name": "circle", "radius": rad}, "state": [cx, cy, 1.0],
               "mass": 2.0}])
    aim(w, theta)
    d = np.array([math.cos(theta), math.sin(theta)])
    along = d @ [cx, cy]
    perp2 = cx * cx + cy * cy - along * along
    expect = along - math.sqrt(rad * rad - perp2)
    assert abs(w.lidar("robot")[0] - expect) < TOL


def test_box_at_an_angle():
    # A 0.4 m square turned 45 degrees about (2, 0): its nearest corner is at x = 2 - 0.2 sqrt2.
    w = make([{"name": "b", "shape": {"name": "rectangle", "length": 0.4, "width": 0.4},
               "state": [2.0, 0.0, math.pi / 4], "mass": 1.0}])
    assert abs(w.lidar("robot")[0] - (2.0 - 0.2 * math.sqrt(2.0))) < TOL
    # A beam up by angle a meets the lower-left face x - y = 2 - 0.2 sqrt2 (45-degree face).
    a = 0.05
    aim(w, a)
    c0 = 2.0 - 0.2 * math.sqrt(2.0)
    expect = c0 / (math.cos(a) - math.sin(a))
    assert abs(w.lidar("robot")[0] - expect) < TOL


def test_grid_cell_corner():
    # A single occupied cell [1.0, 1.1] x [1.0, 1.1] (map corner at the world offset). Beams
    # a hair either side of its corner (1, 1) enter by its left and its bottom face: both
    # read the corner's distance sqrt 2 (no gap at the corner).
    occ = np.zeros((100, 100), bool)
    occ[60, 60] = True
    w = make([], world={"obstacle_map": (occ * 100).tolist(), "map_resolution": 0.1})
    for eps in (1e-12, -1e-12):
        aim(w, math.pi / 4 + eps)
        assert abs(w.lidar("robot")[0] - math.sqrt(2.0)) < TOL
    # Further above the corner: the cell's left face x = 1; below it: its bottom face y = 1.
    a = math.pi / 4 + 0.01
    aim(w, a)
    assert abs(w.lidar("robot")[0] - 1.0 / math.cos(a)) < TOL
    a = math.pi / 4 - 0.01
    aim(w, a)
    assert abs(w.lidar("robot")[0] - 1.0 / math.sin(a)) < TOL


def test_segment_and_static_circle():
    obs = [{"name": "line", "shape": {"name": "linestring", "vertices": [[1.5, -1], [1.5, 1]]},
            "static": True, "state": [0, 0, 0]},
           {"name": "post", "shape": {"name": "circle", "radius": 0.25}, "state": [0, -2, 0],
            "static": True}]
    w = make(obs)
    assert abs(w.lidar("robot")[0] - 1.5) < TOL
    aim(w, -math.pi / 2)
    assert abs(w.lidar("robot")[0] - 1.75) < TOL
    aim(w, math.pi)
    assert w.lidar("robot")[0] == 10.0  # a miss reads range_max


def test_other_robot_is_seen_and_own_body_is_not():
    other = {"name": "other", "kinematics": {"name": "omni"},
             "shape": {"name": "circle", "radius": 0.2}, "state": [0.0, 1.0, 0.0]}
    w = make([], robots=[other])
    aim(w, math.pi / 2)
    assert abs(w.lidar("robot")[0] - 0.8) < TOL  # not 0 (its own disc), not the far side
    aim(w, -math.pi / 2)
    assert w.lidar("robot")[0] == 10.0


def test_range_min_and_range_max_clip():
    w = make([wall("w", 0.35, 0.0, 0.1, 2.0)], sensor=lidar(number=1, angle_range=0.0,
                                                            range_min=0.5, range_max=2.0))
    assert w.lidar("robot")[0] == 0.5  # a 0.3 m return is nearer than range_min
    aim(w, math.pi)
    assert w.lidar("robot")[0] == 2.0


def test_offset_moves_and_turns_the_sensor():
    # Sensor 0.1 m ahead of the origin, turned +90 degrees: the robot at heading 0 looks up.
    w = make([wall("w", 0.0, 1.55, 4.0, 0.1)],
             sensor=lidar(number=1, angle_range=0.0, offset=[0.1, 0.0, math.pi / 2]))
    assert abs(w.lidar("robot")[0] - 1.5) < TOL
    origin, angles = w.lidar_beams("robot")
    np.testing.assert_allclose(origin, [0.1, 0.0], atol=1e-15)
    np.testing.assert_allclose(angles, [math.pi / 2], atol=1e-15)


def test_scaled_and_turned_movable_polygon():
    tri = {"name": "t", "shape": {"name": "polygon", "vertices": [[0, 0], [0.4, 0], [0, 0.4]]},
           "state": [2.0, -0.1, 0.0], "mass": 1.0}
    w = make([tri])
    w.set_scale("t", 1.5)
    # The vertical face x = const of the scaled triangle: its COM stays, the face moves.
    com = w.com("t")[0]
    face_x = com[0] - 1.5 * (0.4 / 3.0)
    assert abs(w.lidar("robot")[0] - face_x) < TOL


def test_velocity_at_the_hit_point():
    w = make([{"name": "d", "shape": {"name": "circle", "radius": 0.5}, "state": [3, 0, 0],
               "mass": 1.0}], sensor=lidar(number=1, angle_range=0.0, has_velocity=True))
    w.set_velocity("d", [0.3, -0.2])
    w.set_omega("d", 2.0)
    r, v = w.lidar("robot")
    assert abs(r[0] - 2.5) < TOL
    # Hit point (2.5, 0) is r = (-0.5, 0) from the centre: v + w x r = (0.3, -0.2 - 1.0).
    np.testing.assert_allclose(v[0], [0.3, -1.2], atol=1e-12)
    aim(w, math.pi)
    r, v = w.lidar("robot")
    assert r[0] == 10.0 and np.all(v[0] == 0.0)


# --------------------------------------------------------- against a shapely reference
def _reference(w, origin, angles, rmax):
    """Nearest boundary crossing of each beam with the polygonal scene (shapely, exact for
    polygons and lines)."""
    from push_envs.physics.scene import body_geometry

    sc = w.scene
    geoms = [body_geometry(sc, i, w.state(n)[0, :3]) for i, n in enumerate(sc.names)
             if n != "robot"]
    world = shapely.union_all([g.boundary if g.area > 0 else g for g in geoms])
    out = []
    for a in angles:
        end = origin + rmax * np.array([math.cos(a), math.sin(a)])
        hit = shapely.LineString([origin, end]).intersection(world)
        if hit.is_empty:
            out.append(rmax)
            continue
        pts = shapely.get_coordinates(hit)
        out.append(float(np.min(np.hypot(*(pts - origin).T))))
    return np.array(out)


def test_random_map_matches_shapely_walk_through_the_grid():
    rng = np.random.default_rng(3)
    occ = rng.random((60, 60)) < 0.08
    for i0, i1, j0, j1 in ((27, 33, 27, 33), (12, 23, 34, 45), (33, 48, 8, 26), (33, 47, 34, 48)):
        occ[i0:i1, j0:j1] = False  # room for the robot, the box, the T and the line
    obs = [{"name": "box", "shape": {"name": "rectangle", "length": 0.5, "width": 0.2},
            "state": [-1.3, 0.9, 0.4], "mass": 1.0},
           {"name": "tee", "shape": {"name": "polygon", "vertices":
                                     [[-0.3, 0], [-0.075, 0], [-0.075, -0.45], [0.075, -0.45],
                                      [0.075, 0], [0.3, 0], [0.3, 0.15], [-0.3, 0.15]]},
            "state": [1.0, -1.2, -0.7], "mass": 1.0},
           {"name": "line", "shape": {"name": "linestring", "vertices":
                                      [[0.5, 1.4], [1.2, 0.6], [1.4, 1.6]]}, "static": True,
            "state": [0, 0, 0]}]
    w = make(obs, sensor=lidar(number=181, angle_range=2 * math.pi, range_max=4.0),
             world={"obstacle_map": (occ * 100).tolist(), "map_resolution": 0.1,
                    "offset": [-3, -3], "width": 6, "height": 6},
             robot_state=(0.013, 0.0271, 0.3))  # off the grid lines: no grazing beams
    assert len(w.scene.sint) > 32  # the grid walk, not the brute-force loop
    origin, angles = w.lidar_beams("robot")
    got = w.lidar("robot")
    np.testing.assert_allclose(got, _reference(w, origin, angles, 4.0), rtol=0, atol=1e-9)


# ------------------------------------------------------------- noise and batches
def _noisy_world(num_envs):
    return make([wall("w", 2.05, 0.0, 0.1, 20.0),
                 {"name": "d", "shape": {"name": "circle", "radius": 0.3},
                  "state": [-1.5, 0.0, 0.0], "mass": 1.0}],
                num_envs=num_envs,
                sensor=lidar(number=32, angle_range=2 * math.pi, noise=True, std=0.05,
                             angle_std=0.01, range_max=3.0))


def test_noise_is_seeded_per_env_and_batch_equals_single():
    batch = _noisy_world(20)  # >= 16 envs: the prange kernel
    batch.seed_lidar(11)
    scans = [batch.lidar_array("robot") for _ in range(3)]
    for i in (0, 7, 19):
        single = _noisy_world(1)
        single.seed_lidar(11 + i)
        for k in range(3):
            np.testing.assert_array_equal(single.lidar("robot"), scans[k][i])
    # Different envs draw different noise; repeated scans draw fresh noise.
    assert not np.array_equal(scans[0][0], scans[0][1])
    assert not np.array_equal(scans[0][0], scans[1][0])
    clean = make([wall("w", 2.05, 0.0, 0.1, 20.0)], sensor=lidar(number=1, angle_range=0.0,
                                                                 noise=True, std=0.05,
                                                                 angle_std=0.0))
    clean.seed_lidar(0)
    errs = np.array([clean.lidar("robot")[0] - 2.0 for _ in range(2000)])
    assert abs(errs.mean()) < 0.005 and abs(errs.std() - 0.05) < 0.005


def test_noise_free_batch_equals_single_bitwise():
    E = 24
    batch = make([wall("w", 2.05, 0.0, 0.1, 20.0)], num_envs=E,
                 sensor=lidar(number=16, angle_range=2 * math.pi, range_max=5.0))
    rng = np.random.default_rng(0)
    poses = np.column_stack([rng.uniform(-1, 1, E), rng.uniform(-1, 1, E),
                             rng.uniform(-3, 3, E)])
    batch.set_state("robot", poses)
    scans = batch.lidar_array("robot")
    assert scans.shape == (E, 16)
    for i in (0, 5, 23):
        single = make([wall("w", 2.05, 0.0, 0.1, 20.0)],
                      sensor=lidar(number=16, angle_range=2 * math.pi, range_max=5.0))
        single.set_state("robot", poses[i])
        np.testing.assert_array_equal(single.lidar("robot"), scans[i])


# ---------------------------------------------------------------------- fmcw_lidar2d
def fmcw(**kw):
    return {"name": "fmcw_lidar2d", "number": 1, "angle_range": 0.0, **kw}


def test_fmcw_radial_velocity_relative_to_the_moving_sensor():
    disc = {"name": "d", "shape": {"name": "circle", "radius": 0.5}, "state": [3, 0, 0],
            "mass": 1.0}
    w = make([disc], sensor=fmcw())
    w.set_velocity("d", [0.5, 0.7])  # receding at 0.5 m/s along the beam (+x)
    w.vel[0, 0] = [0.2, -0.4]  # the robot follows at 0.2 m/s
    r, v = w.lidar("robot")
    assert abs(r[0] - 2.5) < TOL
    assert abs(v[0] - 0.3) < 1e-12  # positive: away from the sensor, IR-SIM's sign
    w.set_omega("d", 2.0)  # the hit point (2.5, 0) moves w x (-0.5, 0) = (0, -1): across
    assert abs(w.lidar("robot")[1][0] - 0.3) < 1e-12
    aim(w, math.pi)  # nothing behind: range_max, velocity 0
    r, v = w.lidar("robot")
    assert r[0] == 10.0 and v[0] == 0.0


def test_fmcw_motion_compensation_and_the_blind_zone():
    disc = {"name": "d", "shape": {"name": "circle", "radius": 0.5}, "state": [3, 0, 0],
            "mass": 1.0}
    w = make([disc], sensor=fmcw(motion_compensate=True))
    w.set_velocity("d", [-0.6, 0.0])
    w.vel[0, 0] = [0.2, 0.0]
    assert abs(w.lidar("robot")[1][0] + 0.6) < 1e-12  # the target's own, approaching
    blind = make([disc], sensor=fmcw(range_min=2.8))
    blind.set_velocity("d", [-0.6, 0.0])
    r, v = blind.lidar("robot")
    assert r[0] == 2.8 and v[0] == 0.0  # blocked without a measurement, as IR-SIM


def test_fmcw_and_lidar2d_on_one_body():
    raw = scene([wall("w", 2.05, 0.0, 0.1, 20.0)])
    raw["robot"][0]["sensors"] = [lidar(number=3, angle_range=1.0),
                                  fmcw(number=5, angle_range=2.0, range_max=4.0)]
    w = World.from_config(raw)
    assert w.lidar_spec("robot").name == "lidar2d"  # the first, as IR-SIM's `lidar`
    assert len(w.lidar("robot")) == 3
    ranges, radial = w.lidar("robot", sensor="fmcw_lidar2d")
    assert ranges.shape == radial.shape == (5,) and abs(ranges[2] - 2.0) < TOL
    assert w.lidar_spec("robot", sensor="fmcw_lidar2d").fmcw
    with pytest.raises(ValueError, match="no radar sensor"):
        w.lidar("robot", sensor="radar")


def test_fmcw_noise_is_seeded_per_env():
    disc = {"name": "d", "shape": {"name": "circle", "radius": 0.5}, "state": [3, 0, 0],
            "mass": 1.0}
    sensor = fmcw(number=9, angle_range=0.3, noise=True, std=0.01, velocity_noise_std=0.05)

    def noisy(n):
        w = make([disc], num_envs=n, sensor=sensor)
        w.set_velocity("d", np.tile([0.4, 0.0], (n, 1)))
        return w

    batch = noisy(20)
    batch.seed_lidar(5)
    ranges, radial = batch.lidar_array("robot")
    single = noisy(1)
    single.seed_lidar(5 + 13)
    r, v = single.lidar("robot")
    np.testing.assert_array_equal(r, ranges[13])
    np.testing.assert_array_equal(v, radial[13])
    assert 0.0 < np.std(radial[:, 4] - 0.4) < 0.2  # velocity noise drawn, deviation ~0.05


@pytest.mark.parametrize("extra, key, text", [
    ({"has_velocity": True}, r"sensors\[0\]\.has_velocity", "lidar2d's"),
    ({"motion_compensate": 1}, r"sensors\[0\]\.motion_compensate", "true or false"),
    ({"velocity_noise_std": -1}, r"sensors\[0\]\.velocity_noise_std", ">= 0"),
    ({"plot": {"velocity_colour": "red"}}, r"sensors\[0\]\.plot", "unknown key"),
])
def test_bad_fmcw_keys_name_the_key(extra, key, text):
    with pytest.raises(SceneError, match=rf"robot\[0\]\.{key}.*{text}"):
        load_scene(scene([], sensor=fmcw(**extra)))
