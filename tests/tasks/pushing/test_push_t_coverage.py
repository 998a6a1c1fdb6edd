"""PushT-v0's coverage success (gym-pusht's test): the compiled overlap against shapely and
analytic areas, and the env's info, success and compute_reward."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from shapely import affinity
from shapely.geometry import Polygon

import push_envs  # noqa: F401
from push_envs.physics.layout import BF_COMX
from push_envs.physics.layout import BF_COMY
from push_envs.tasks.pushing import push_t
from push_envs.tasks.pushing.push_t.coverage import coverage
from push_envs.tasks.pushing.push_t.coverage import overlap_area
from push_envs.tasks.pushing.push_t.coverage import piece_table
from push_envs.tasks.pushing.push_t.coverage import piece_vertices
from push_envs.tasks.pushing.push_t.coverage import table_area

# The T of PushT-v0's scene.yaml in its origin frame: bar 0.6 x 0.15 over a 0.15 x 0.45 stem.
T_OUTLINE = [(-0.3, 0.0), (-0.075, 0.0), (-0.075, -0.45), (0.075, -0.45), (0.075, 0.0),
             (0.3, 0.0), (0.3, 0.15), (-0.3, 0.15)]
T_AREA = 0.6 * 0.15 + 0.15 * 0.45  # [m^2]


@pytest.fixture(scope="module")
def env():
    e = gym.make("PushT-v0", success="coverage", reward_type="sparse")
    yield e.unwrapped
    e.close()


@pytest.fixture(scope="module")
def table(env):
    return piece_table(env.core.task.object_pieces(env.core))


def _placed(x, y, t):
    return affinity.translate(affinity.rotate(Polygon(T_OUTLINE), t, origin=(0, 0),
                                              use_radians=True), x, y)


def _cov(tab, x1, y1, t1, x2, y2, t2):
    return coverage(tab, table_area(tab), x1, y1, math.cos(t1), math.sin(t1), x2, y2,
                    math.cos(t2), math.sin(t2))


def test_pieces_are_the_scene_t(table):
    assert table_area(table) == pytest.approx(T_AREA, abs=1e-15)
    assert table[0] == 2  # bar and stem


def test_coverage_matches_shapely_on_random_poses(table):
    rng = np.random.default_rng(7)
    worst = 0.0
    for i in range(2000):
        x1, y1 = rng.uniform(0.0, 3.0, 2)
        t1 = rng.uniform(-math.pi, math.pi)
        if i % 2:  # near the goal, where coverage decides success
            x2, y2 = x1 + rng.normal(0, 0.08), y1 + rng.normal(0, 0.08)
            t2 = t1 + rng.normal(0, 0.4)
        else:
            x2, y2 = x1 + rng.uniform(-0.8, 0.8), y1 + rng.uniform(-0.8, 0.8)
            t2 = rng.uniform(-math.pi, math.pi)
        ref = _placed(x1, y1, t1).intersection(_placed(x2, y2, t2)).area / T_AREA
        worst = max(worst, abs(_cov(table, x1, y1, t1, x2, y2, t2) - ref))
    assert worst < 1e-9


@pytest.mark.parametrize(("pose", "expected"), [
    ((0.0, 0.0, 0.0), 1.0),                                  # on the goal
    ((0.1, 0.0, 0.0), (0.5 * 0.15 + 0.05 * 0.45) / T_AREA),  # slid 0.1 m along the bar
    ((0.0, 0.0, math.pi), 2 * 0.15 * 0.15 / T_AREA),         # half a turn: bar over stem
    ((0.0, 0.2, 0.0), (0.15 * 0.15 + 0.15 * 0.25) / T_AREA),  # stem up through the bar
    ((2.0, 0.0, 0.0), 0.0),                                  # apart
])
def test_coverage_analytic(table, pose, expected):
    """Exact coincidences (shared edges, half turns) are where clipping double-counts."""
    for gx, gy, gt in [(1.5, 1.6, math.pi / 4), (0.0, 0.0, 0.0), (2.9, 0.3, -2.0)]:
        c, s = math.cos(gt), math.sin(gt)
        dx, dy, dt = pose
        x, y = gx + c * dx - s * dy, gy + s * dx + c * dy
        assert _cov(table, x, y, gt + dt, gx, gy, gt) == pytest.approx(expected, abs=1e-12)


def test_overlap_is_symmetric(table):
    rng = np.random.default_rng(3)
    for _ in range(200):
        p, q = rng.uniform(0, 1, 3), rng.uniform(0, 1, 3)
        a = overlap_area(table, p[0], p[1], math.cos(p[2]), math.sin(p[2]),
                         q[0], q[1], math.cos(q[2]), math.sin(q[2]))
        b = overlap_area(table, q[0], q[1], math.cos(q[2]), math.sin(q[2]),
                         p[0], p[1], math.cos(p[2]), math.sin(p[2]))
        assert a == pytest.approx(b, abs=1e-13)


def test_info_coverage_follows_the_world(env, table):
    _, info = env.reset(seed=1)
    rng = np.random.default_rng(1)
    goal = env.core.task_arrays.goal[0]
    for step in range(60):
        if step:
            _, _, _, _, info = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
        x, y, t = env.world.state("tee")[0, :3]
        expected = _cov(table, x, y, t, goal[0], goal[1], goal[2])
        assert info["coverage"] == pytest.approx(expected, abs=1e-12)


def test_batch_coverage_is_computed_afresh_or_reused_bit_for_bit(table):
    """The step reuses the last coverage while the T's and the goal's poses are bitwise the
    same (push_t.step_coverage): every step's value must equal a fresh computation from the
    poses, through resets (every 25 steps), pushes and rest."""
    venv = gym.make_vec("PushT-v0", num_envs=32, max_episode_steps=25)
    _, info = venv.reset(seed=4)
    rng = np.random.default_rng(4)
    ta = venv.task_arrays
    reused = fresh = 0
    prev = ta.ag.copy()
    for step in range(80):
        if step:
            # Half the envs push hard, half stand still: both paths are taken.
            act = rng.uniform(-1, 1, (32, 2)).astype(np.float32)
            act[16:] = 0.0
            _, _, _, _, info = venv.step(act)
        for e in range(32):
            ag, dg = ta.ag[e], ta.dg[e]
            expected = coverage(table, table_area(table), *ag, *dg)
            assert info["coverage"][e] == expected  # bit for bit
        same = (ta.ag == prev).all(1)
        reused += int(same.sum())
        fresh += int((~same).sum())
        prev = ta.ag.copy()
    venv.close()
    assert reused > 1000 and fresh >= 50  # both paths, many times


def test_coverage_success_and_compute_reward(env):
    env.reset(seed=2)
    goal = env.core.task_arrays.goal[0]
    # Put the T 5 mm beside its goal and let it rest: covered share 1 - 5 mm x 0.75 m / area.
    c, s = math.cos(goal[2]), math.sin(goal[2])
    env.world.set_state("tee", [goal[0] + 0.005 * c, goal[1] + 0.005 * s, goal[2]], env=0)
    env.world.set_state("robot", [0.3, 0.3, 0.0], env=0)
    _, _, terminated, _, info = env.step(np.zeros(2, np.float32))
    assert info["coverage"] == pytest.approx(1 - 0.005 * (0.15 + 0.45) / T_AREA, abs=1e-9)
    assert terminated and info["is_success"]
    ag = np.array([[goal[0], goal[1], c, s], [goal[0] + 0.05 * c, goal[1] + 0.05 * s, c, s]])
    dg = np.array([[goal[0], goal[1], c, s]] * 2)
    # 5 cm along the bar covers 1 - 0.05 x 0.6 / area = 0.81 < 0.95: fails.
    np.testing.assert_array_equal(env.core.compute_reward(ag, dg, None), [0.0, -1.0])


def test_pose_success_reports_coverage_too():
    e = gym.make("PushT-v0")
    _, info = e.reset(seed=0)
    assert 0.0 <= info["coverage"] < 1.0
    assert e.unwrapped.core.task.args["success"] == "pose"
    e.close()


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"success": "iou"}, r"success must be one of \['pose', 'coverage'\]"),
    ({"coverage_threshold": 1.5}, "coverage_threshold"),
    ({"shaping": "iou"}, r"shaping must be one of \['progress', 'keypoints'\]"),
    ({"w_coverage": -1.0}, "w_coverage"),
    ({"success": "coverage", "box_size_range": (0.9, 1.1)}, "box_size_range"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make("PushT-v0", **kwargs)


def _keypoints(tab, x, y, t):
    """The piece-table vertices placed at (x, y, t), as an (n, 2) array [m]."""
    v = np.concatenate(piece_vertices(tab))
    c, s = math.cos(t), math.sin(t)
    return np.stack([x + c * v[:, 0] - s * v[:, 1], y + s * v[:, 0] + c * v[:, 1]], axis=1)


def _kp(tab, p, g):
    return float(np.mean(np.linalg.norm(_keypoints(tab, *p) - _keypoints(tab, *g), axis=1)))


def test_keypoint_distance_is_the_shift_and_the_chord(table):
    # A pure shift moves every vertex by the shift; a turn by phi about the origin moves a
    # vertex at radius r by the chord 2 r sin(phi / 2).
    fp = np.zeros(push_t.FP_PIECES + len(table))
    fp[push_t.FP_PIECES:] = table
    g = np.array([1.5, 1.6, math.cos(0.7), math.sin(0.7)])
    a = np.array([1.5 + 0.03, 1.6 - 0.04, g[2], g[3]])
    assert push_t.keypoint_distance(a, g, fp) == pytest.approx(0.05, abs=1e-12)
    phi = 0.3
    a = np.array([1.5, 1.6, math.cos(0.7 + phi), math.sin(0.7 + phi)])
    radii = np.linalg.norm(_keypoints(table, 0.0, 0.0, 0.0), axis=1)
    assert push_t.keypoint_distance(a, g, fp) == pytest.approx(
        float(np.mean(2 * radii * math.sin(phi / 2))), abs=1e-12)


def test_keypoint_shaping_pays_keypoint_and_coverage_progress(table):
    e = gym.make("PushT-v0", success="coverage", shaping="keypoints", w_coverage=5.0)
    u = e.unwrapped
    _, info0 = e.reset(seed=4)
    goal = u.core.task_arrays.goal[0, :3].copy()
    fp = u.core.task_arrays.fp
    p0 = u.world.state("tee")[0, :3].copy()
    robot = u.world.state("robot")[0, :2].copy()
    # Teleport the T 3 cm and 4 degrees off its goal, then step without moving the robot.
    p1 = goal + np.array([0.03, 0.0, math.radians(4.0)])
    u.world.set_state("tee", p1, env=0)
    _, reward, terminated, _, info = e.step(np.zeros(2, np.float32))
    p1 = u.world.state("tee")[0, :3]
    reach = fp[push_t.FP.robot_r] + fp[push_t.FP.obj_r]

    sc = u.world.scene
    com = sc.bflt[sc.index["tee"], [BF_COMX, BF_COMY]]  # [m], in the T's origin frame

    def gap(p):  # robot to the T's centre of mass, less the two radii
        c, s = math.cos(p[2]), math.sin(p[2])
        centre = p[:2] + np.array([c * com[0] - s * com[1], s * com[0] + c * com[1]])
        return max(float(np.hypot(*(robot - centre))) - reach, 0.0)

    cov0, cov1 = info0["coverage"], info["coverage"]
    assert cov1 == pytest.approx(_cov(table, *p1, *goal), abs=1e-12)
    assert info["reward_box_goal"] == pytest.approx(
        10.0 * (_kp(table, p0, goal) - _kp(table, p1, goal)), abs=1e-9)
    assert info["reward_angle"] == pytest.approx(5.0 * (cov1 - cov0), abs=1e-9)
    assert info["reward_robot_box"] == pytest.approx(gap(p0) - gap(p1), abs=1e-9)
    assert not terminated and cov1 < 0.95
    assert reward == pytest.approx(info["reward_robot_box"] + info["reward_box_goal"]
                                   + info["reward_angle"] - 0.01, abs=1e-9)
    # The pose errors stay in info whatever the shaping.
    assert info["box_to_goal"] == pytest.approx(float(np.hypot(*(p1[:2] - goal[:2]))), abs=1e-9)
    e.close()
