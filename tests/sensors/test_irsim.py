"""The sensors against IR-SIM 2.12 itself, on matching scenes (skipped without irsim, as in
CI): lidar2d ranges to 1e-9 m, fmcw_lidar2d ranges and radial velocities, and the field of
view's detections (``get_fov_detected_objects``), over random poses, offsets and fans."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
import yaml

from push_envs.physics import SceneError
from push_envs.physics import World
from push_envs.physics.scene import body_geometry

irsim = pytest.importorskip("irsim")

TOL = 1e-9  # [m]

# Static obstacles whose IR-SIM geometry is exact (polygons and lines: IR-SIM's circles are
# 64-gons, ours are circles).
SHAPES = [
    {"name": "rectangle", "length": 1.5, "width": 1.2},
    {"name": "polygon", "vertices": [[0, 0], [1, 0], [1.2, 0.8], [0.3, 1.0]]},
    {"name": "rectangle", "length": 0.4, "width": 2.0},
    {"name": "polygon", "vertices": [[-0.5, -0.3], [0.6, -0.2], [0.1, 0.7]]},
]


def _irsim_env(tmp_path, robots, obstacles):
    cfg = {"world": {"height": 12, "width": 12, "step_time": 0.1, "collision_mode": "stop"},
           "robot": robots, "obstacle": obstacles}
    path = tmp_path / "world.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return irsim.make(str(path), display=False)


def _ours(robots, obstacles, movable=False):
    """The same bodies here (obstacles movable when their velocity is set)."""
    def body(b, role, k):
        out = {k2: v for k2, v in b.items() if k2 != "kinematics" or role == "robot"}
        out["name"] = f"{role}_{k}"
        if movable and role == "obstacle":
            out["mass"] = 1.0
        return out
    return World.from_config({"world": {"width": 12, "height": 12},
                              "robot": [body(b, "robot", k) for k, b in enumerate(robots)],
                              "obstacle": [body(b, "obstacle", k)
                                           for k, b in enumerate(obstacles)]})


def _drawn(rng, make):
    """``make(rng)`` -> (robots, obstacles), drawn again until the bodies do not overlap
    (this engine refuses overlapping spawns; IR-SIM does not)."""
    while True:
        robots, obstacles = make(rng)
        try:
            return robots, obstacles, _ours(robots, obstacles)
        except SceneError:
            continue


def _in_free_space(w, name, min_gap=1e-6):
    """Whether ``name``'s lidar starts outside every other body (inside one, IR-SIM casts to
    the boundary beyond, where this lidar reads range_min)."""
    origin = shapely.Point(w.lidar_beams(name)[0])
    me = w.index(name)
    return all(body_geometry(w.scene, i, w.state(n)[0, :3]).distance(origin) > min_gap
               for i, n in enumerate(w.names) if i != me)


def _scene(rng, n):
    obstacles = [{"shape": SHAPES[k % len(SHAPES)],
                  "state": [float(rng.uniform(1, 11)), float(rng.uniform(1, 11)),
                            float(rng.uniform(-3, 3))]} for k in range(n)]
    obstacles.append({"shape": {"name": "linestring", "vertices": [[11.5, 5], [4, 0.5],
                                                                   [0.5, 3]]},
                      "state": [0, 0, 0]})
    return obstacles


@pytest.mark.parametrize("seed", range(6))
def test_lidar2d_ranges_match_irsim(tmp_path, seed):
    rng = np.random.default_rng(seed)
    number = [1, 2, 50, 181][seed % 4]
    lidar = {"name": "lidar2d", "range_min": float(rng.uniform(0, 0.3)),
             "range_max": float(rng.uniform(3, 9)), "angle_range": float(rng.uniform(0.5, 6.28)),
             "number": number, "offset": [float(v) for v in rng.uniform(-0.15, 0.15, 3)]}

    def make(rng):
        robots = [{"kinematics": {"name": "diff"}, "shape": {"name": "circle", "radius": 0.2},
                   "state": [6.0, 6.0, 0.0], "sensors": [lidar]},
                  {"kinematics": {"name": "omni"},
                   "shape": {"name": "rectangle", "length": 0.5, "width": 0.3},
                   "state": [float(rng.uniform(2, 10)), float(rng.uniform(2, 10)), 0.4]}]
        return robots, _scene(rng, 5)

    robots, obstacles, w = _drawn(rng, make)
    env = _irsim_env(tmp_path, robots, obstacles)
    ref = env.robot_list[0]
    done = 0
    while done < 8:
        pose = [float(rng.uniform(1, 11)), float(rng.uniform(1, 11)), float(rng.uniform(-3, 3))]
        w.set_state("robot_0", pose)
        if not _in_free_space(w, "robot_0"):
            continue
        done += 1
        ref.set_state(pose)
        ref.lidar.step(ref.state)
        np.testing.assert_allclose(w.lidar("robot_0"), ref.lidar.range_data, rtol=0, atol=TOL)
    origin, angles = w.lidar_beams("robot_0")
    np.testing.assert_allclose(angles - pose[2] - lidar["offset"][2], ref.lidar.angle_list,
                               atol=1e-12)


@pytest.mark.parametrize("compensate", [False, True])
def test_fmcw_ranges_and_radial_velocities_match_irsim(tmp_path, compensate):
    rng = np.random.default_rng(7 if compensate else 8)
    fmcw = {"type": "fmcw_lidar2d", "range_max": 8.0, "angle_range": 2 * math.pi - 0.1,
            "number": 121, "motion_compensate": compensate, "range_min": 0.1}
    robots = [{"kinematics": {"name": "diff"}, "shape": {"name": "circle", "radius": 0.2},
               "state": [6.0, 6.0, 0.3], "sensors": [fmcw]}]
    obstacles = [{"kinematics": {"name": "omni"}, "shape": SHAPES[k % len(SHAPES)],
                  "state": [float(x), float(y), 0.0]}
                 for k, (x, y) in enumerate(((9.0, 6.5), (3.0, 5.0), (6.5, 9.5), (5.5, 2.5)))]
    env = _irsim_env(tmp_path, robots, obstacles)
    w = _ours(robots, obstacles, movable=True)
    ref = env.robot_list[0]
    for _ in range(5):
        v, om = rng.uniform(-1, 1), rng.uniform(-2, 2)
        ref.set_velocity([v, om])
        th = float(ref.state[2, 0])
        # The sensor sits at the robot's origin, its centre of mass: its turn adds nothing.
        w.vel[0, 0] = v * np.array([math.cos(th), math.sin(th)])
        w.omg[0, 0] = om
        for k, o in enumerate(env.obstacle_list):
            vel = rng.uniform(-1, 1, 2)
            o.set_velocity(list(vel))
            w.set_velocity(f"obstacle_{k}", vel)
        ref.lidar.step(ref.state)
        ranges, radial = w.lidar("robot_0")
        np.testing.assert_allclose(ranges, ref.lidar.range_data, rtol=0, atol=TOL)
        np.testing.assert_allclose(radial, ref.lidar.radial_velocity, rtol=0, atol=1e-12)
        assert np.count_nonzero(radial) >= 8  # the obstacles are seen, moving


def test_fov_detections_match_irsim(tmp_path):
    rng = np.random.default_rng(3)
    fov_keys = [{"fov": 1.57, "fov_radius": 5.0}, {"fov": 3.5, "fov_radius": 2.5},
                {"fov": 0.6, "fov_radius": 9.0}, {"fov": 6.283185307179586, "fov_radius": 4.0}]
    seen_pairs = unseen_pairs = 0
    for trial in range(12):
        def make(rng, trial=trial):
            robots = [{"kinematics": {"name": "diff"},
                       "shape": [{"name": "circle", "radius": 0.3},
                                 {"name": "rectangle", "length": 0.6, "width": 0.4}][k % 2],
                       "state": [float(rng.uniform(1, 11)), float(rng.uniform(1, 11)),
                                 float(rng.uniform(-3.2, 3.2))],
                       **fov_keys[(trial + k) % len(fov_keys)]} for k in range(3)]
            # One robot takes its view from its lidar (IR-SIM's default).
            robots.append({"kinematics": {"name": "omni"},
                           "shape": {"name": "circle", "radius": 0.2},
                           "state": [float(rng.uniform(1, 11)), float(rng.uniform(1, 11)),
                                     float(rng.uniform(-3.2, 3.2))],
                           "sensors": [{"name": "lidar2d", "range_max": 6.0,
                                        "angle_range": 2.0}]})
            return robots, _scene(rng, 6)

        robots, obstacles, w = _drawn(rng, make)
        env = _irsim_env(tmp_path, robots, obstacles)
        objects = sorted(env.objects, key=lambda o: o.id)
        assert len(objects) == len(w.names)
        for i, obj in enumerate(objects[:len(robots)]):
            seen = {objects.index(o) for o in obj.get_fov_detected_objects()}
            ours = w.fov_detected(w.names[i])[0]
            assert set(np.flatnonzero(ours)) == seen, (trial, i)
            assert w.fov(w.names[i]) == pytest.approx((obj.fov, obj.fov_radius))
            seen_pairs += len(seen)
            unseen_pairs += len(objects) - 1 - len(seen)
    assert seen_pairs > 20 and unseen_pairs > 20  # both answers are tested, many times
