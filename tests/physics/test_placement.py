"""IR-SIM's random distribution: drawn per env, from the env's own stream, at every reset."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import shapely

from push_envs.physics import SceneError
from push_envs.physics import World
from push_envs.physics import load_scene
from push_envs.physics.scene import compile_scene

WORLD = {"width": 10, "height": 10}
WALL = {"name": "wall", "state": [5, 5, 0], "shape": {"name": "rectangle", "length": 0.4,
                                                      "width": 6}}


def crowd(number=6, min_distance=1.0, low=(1, 1, -3), high=(9, 9, 3), obstacles=(WALL,),
          **body):
    group = {"number": number, "kinematics": {"name": "diff"},
             "shape": {"name": "circle", "radius": 0.3},
             "distribution": {"name": "random", "range_low": list(low),
                              "range_high": list(high), "min_distance": min_distance}}
    group.update(body)
    return {"world": WORLD, "robot": [group], "obstacle": list(obstacles)}


def layout(w, e):
    names = [n for n in w.names if n.startswith("robot_")]
    return np.array([w.state(n)[e, :3] for n in names])


def test_env_i_of_a_batch_draws_as_a_single_world_seeded_seed_plus_i():
    batch = World.from_config(crowd(), num_envs=4, seed=10)
    for i in range(4):
        single = World.from_config(crowd(), seed=10 + i)
        assert layout(single, 0).tobytes() == layout(batch, i).tobytes()
        assert single.placed_goals("robot_0")[0].tobytes() == \
            batch.placed_goals("robot_0")[i].tobytes()
    assert len({layout(batch, i).tobytes() for i in range(4)}) == 4


def test_each_reset_draws_afresh_and_a_seed_repeats_a_draw():
    w = World.from_config(crowd(), num_envs=2, seed=3)
    first = layout(w, 0)
    w.reset()
    second = layout(w, 0)
    assert not np.array_equal(first, second)
    w.reset(seed=3)
    assert layout(w, 0).tobytes() == first.tobytes()
    w.reset(env=np.array([1]), seed=[3])  # env 1 draws as env 0 did
    assert layout(w, 1).tobytes() == first.tobytes()


def test_draws_keep_min_distance_stay_in_range_and_clear_every_body():
    w = World.from_config(crowd(number=8, min_distance=1.2), num_envs=16, seed=0)
    wall = shapely.box(4.8, 2, 5.2, 8)
    for e in range(w.num_envs):
        pts = layout(w, e)
        assert np.all(pts[:, :2] >= 1) and np.all(pts[:, :2] <= 9)
        assert np.all(np.abs(pts[:, 2]) <= 3)
        for a, b in itertools.combinations(pts, 2):
            assert math.hypot(*(a[:2] - b[:2])) >= 1.2
        for p in pts:
            assert shapely.Point(p[:2]).distance(wall) >= 0.3
        goals = np.array([w.placed_goals(f"robot_{k}")[e] for k in range(8)])
        for a, b in itertools.combinations(goals, 2):
            assert math.hypot(*(a[:2] - b[:2])) >= 1.2  # IR-SIM draws the goals apart too


def test_a_group_that_cannot_be_placed_is_refused_at_load():
    """30 robots of 0.3 m at least 1 m apart do not fit in 3 m x 3 m: refused when the scene
    compiles, naming the file and the group, never left overlapping."""
    scene = crowd(number=30, low=(0, 0, 0), high=(3, 3, 0), obstacles=())
    with pytest.raises(SceneError, match=r"^crowd\.yaml: robot\[0\]\.distribution: cannot "
                                         r"place the group's 30 objects \(drawn per env\)"):
        compile_scene(load_scene(scene, source="crowd.yaml"))


def test_immovable_random_groups_are_drawn_once_for_every_env():
    scene = {"world": WORLD, "obstacle": [{
        "number": 5, "shape": {"name": "circle", "radius": 0.4},
        "distribution": {"name": "random", "range_low": [1, 1, 0], "range_high": [9, 9, 0]}}]}
    a = World.from_config(scene, num_envs=3, seed=1)
    b = World.from_config(scene, num_envs=1, seed=2)
    assert a.scene.placement is None  # static pieces: one layout for the batch
    poses = [a.scene.pose0[i] for i in range(5)]
    assert not np.allclose(poses, [b.scene.pose0[i] for i in range(5)])  # drawn from the seed
    for i in range(5):
        assert np.all(a.state(f"obstacle_{i}") == poses[i])


def test_behaviours_head_for_the_goal_each_env_drew():
    # The behaviours' goal queues hold each env's own draw (a placed body has no scene goal),
    # after every reset, and dash takes each robot to it.
    w = World.from_config(crowd(number=3, obstacles=(), behavior={"name": "dash"}),
                          num_envs=3)
    for reset in range(2):
        if reset:
            w.reset(seed=7)
        for n in w.names:
            np.testing.assert_array_equal(w.goal(n), w.placed_goals(n))
            assert len(np.unique(w.goal(n)[:, 0])) == 3  # three envs, three draws
    for _ in range(400):
        w.step()
    for n in w.names:
        assert w.arrived(n).all(), n
        gap = np.linalg.norm(w.state(n)[:, :2] - w.placed_goals(n)[:, :2], axis=1)
        assert np.all(gap <= 0.1), (n, gap)  # IR-SIM's goal_threshold
