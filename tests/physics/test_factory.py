"""IR-SIM's object factory: groups, their lists, names, placements and random shapes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely

from push_envs.physics import SceneError
from push_envs.physics import load_scene
from push_envs.physics.factory import PALETTE_CYCLE
from push_envs.physics.factory import random_polygon


def test_lists_give_one_entry_per_object_the_last_repeating():
    spec = load_scene({"obstacle": [{
        "number": 4, "state": [[1, 1], [2, 1], [3, 1]],
        "shape": [{"name": "circle", "radius": 0.1}, {"name": "rectangle"}],
        "color": ["red", "green"], "name": ["a", "b", "c", "d", "e"],
        "mass": [0.5, 2.0], "vel_max": [2, 3], "unobstructed": True}]})
    a, b, c, d = spec.bodies
    assert [x.name for x in spec.bodies] == ["a", "b", "c", "d"]  # the extra name unused
    assert [x.state[:2] for x in spec.bodies] == [(1, 1), (2, 1), (3, 1), (3, 1)]
    assert a.shape == {"name": "circle", "radius": 0.1}
    assert b.shape == c.shape == d.shape == {"name": "rectangle", "length": 1.0, "width": 1.0}
    assert [x.color for x in spec.bodies] == ["red", "green", "green", "green"]
    # mass (and friction, inertia, restitution): a list of numbers is one per object
    assert [x.mass for x in spec.bodies] == [0.5, 2.0, 2.0, 2.0]
    # any other list of numbers is one value shared by all (a state, a velocity limit)
    assert all(x.vel_max == (2.0, 3.0) and x.unobstructed for x in spec.bodies)
    assert all(x.group == 0 for x in spec.bodies)
    assert [x.path for x in spec.bodies] == [f"obstacle[0][{k}]" for k in range(4)]


def test_running_id_names_and_group_numbers_continue_across_sections():
    spec = load_scene({
        "robot": [{"number": 2, "state": [[1, 1], [2, 2]]},
                  {"name": "lead", "state": [5, 5]}],
        "obstacle": [{"state": [7, 7]}, {"number": 2, "state": [[8, 1], [8, 3]]}]})
    assert [b.name for b in spec.bodies] == ["robot_0", "robot_1", "lead", "obstacle_3",
                                             "obstacle_4", "obstacle_5"]
    # robot groups 0, 1; obstacle groups continue from the largest robot group
    assert [b.group for b in spec.bodies] == [0, 0, 1, 2, 3, 3]


def test_circle_distribution_is_irsims():
    spec = load_scene({"world": {"width": 10, "height": 8, "offset": [1, 2]},
                       "robot": [{"number": 4, "distribution": {"name": "circle"},
                                  "kinematics": {"name": "diff"}}]})
    # default centre (1 + 5, 2 + 4), radius min(10, 8) / 2 - 0.5 = 3.5
    for i, body in enumerate(spec.bodies):
        t = 2 * math.pi * i / 4
        assert body.state == pytest.approx((6 + 3.5 * math.cos(t), 6 + 3.5 * math.sin(t),
                                            t - math.pi), abs=1e-15)
        assert body.goal == (pytest.approx((6 - 3.5 * math.cos(t), 6 - 3.5 * math.sin(t),
                                            t - math.pi), abs=1e-15),)


def test_color_cycle_hands_out_the_palette():
    spec = load_scene({"robot": [{"number": 10, "color": "cycle",
                                  "distribution": {"name": "circle", "radius": 4}}]})
    assert [b.color for b in spec.bodies] == [PALETTE_CYCLE[k % 8] for k in range(10)]


def test_number_zero_makes_no_object():
    assert load_scene({"robot": [{"number": 0}]}).bodies == ()


def test_a_car_shape_puts_the_origin_on_its_rear_axle():
    """IR-SIM's rectangle with a wheelbase: the rear axle (the body origin) sits
    (length - wheelbase) / 2 from the rear; the acker drive takes that wheelbase."""
    (car,) = load_scene({"robot": {"kinematics": {"name": "acker"}, "state": [0, 0, 0, 0],
                                   "shape": {"name": "rectangle", "length": 4.6, "width": 1.6,
                                             "wheelbase": 3}}}).bodies
    geom = car.shape_info("car").geometry((0, 0, 0))
    np.testing.assert_allclose(geom.bounds, (-0.8, -0.8, 3.8, 0.8), atol=1e-12)
    assert car.kinematics.wheelbase == 3.0
    (own,) = load_scene({"robot": {"kinematics": {"name": "acker", "wheelbase": 2.5},
                                   "shape": {"name": "circle", "radius": 1, "wheelbase": 3}}}
                        ).bodies
    assert own.kinematics.wheelbase == 2.5  # the kinematics' own wheelbase wins
    assert own.shape["center"] == [1.5, 0.0]  # a car circle moves forward by wheelbase / 2


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_random_shapes_are_drawn_from_the_scene_seed(seed):
    scene = {"obstacle": [{"number": 5, "shape": [
        {"name": "polygon", "random_shape": True, "center_range": [0, 0, 4, 4],
         "avg_radius_range": [0.3, 1.0], "num_vertices_range": [4, 8]},
        {"name": "circle", "random_shape": True, "radius_range": [0.2, 0.5]}]}]}
    a = load_scene(scene, seed=seed)
    b = load_scene(scene, seed=seed)
    c = load_scene(scene, seed=seed + 100)
    assert [x.shape for x in a.bodies] == [x.shape for x in b.bodies]
    assert [x.shape for x in a.bodies] != [x.shape for x in c.bodies]
    poly = a.bodies[0].shape
    assert poly["name"] == "polygon" and 4 <= len(poly["vertices"]) < 8
    assert shapely.Polygon(poly["vertices"]).is_valid
    for circle in a.bodies[1:]:
        assert circle.shape["name"] == "circle" and 0.2 <= circle.shape["radius"] < 0.5


def test_random_polygon_is_star_shaped_about_its_centre():
    rng = np.random.default_rng(3)
    spec = {"center_range": [2, 2, 2, 2], "avg_radius_range": [1, 1],
            "irregularity_range": [0.5, 0.5], "spikeyness_range": [0.2, 0.2],
            "num_vertices_range": [6, 7]}
    for _ in range(20):
        v = np.array(random_polygon(spec, "w", rng))
        assert len(v) == 6
        ang = np.unwrap(np.arctan2(v[:, 1] - 2, v[:, 0] - 2))
        assert np.all(np.diff(ang) > 0) and ang[-1] - ang[0] < 2 * math.pi  # CCW, one turn
        assert np.all(np.hypot(v[:, 0] - 2, v[:, 1] - 2) <= 2.0)  # radius <= 2 avg_radius


@pytest.mark.parametrize("dist, key", [
    ({"name": "random", "range_low": [5, 0, 0], "range_high": [1, 1, 1]}, "range_low"),
    ({"name": "random", "min_distance": -1}, "min_distance"),
    ({"name": "circle", "center": [1]}, "center"),
])
def test_bad_distributions_name_the_key(dist, key):
    with pytest.raises(SceneError, match=rf"^<dict>: robot\[0\]\.distribution\.{key}"):
        load_scene({"robot": [{"number": 2, "distribution": dist}]})
