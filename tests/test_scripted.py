"""push_envs.scripted: the batch experts act per row as the one-observation controllers."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import push_envs  # noqa: F401
from push_envs import scripted as S
from push_envs.datasets import rollout

BASE = 7 + 6 * 4  # PushMulti-v0's first box block with max_contacts=4


def _multi_obs(placed: list[bool], heading: float = 0.3) -> np.ndarray:
    """A hand-made PushMulti-v0 observation (2 boxes): robot at (1, 2) with ``heading``; box j
    at robot-frame (0.5 + j, 0.2), its goal at robot-frame (1.5 + j, -0.4)."""
    o = np.zeros(BASE + 20)
    o[0], o[1], o[2], o[3] = 1.0, 2.0, math.cos(heading), math.sin(heading)
    for j, p in enumerate(placed):
        k = BASE + 10 * j
        o[k], o[k + 1] = 0.5 + j, 0.2
        o[k + 6], o[k + 7] = 1.5 + j, -0.4
        o[k + 8] = float(p)
    return o


def _push_toward(o: np.ndarray, j: int) -> np.ndarray:
    k = BASE + 10 * j
    c, s = o[2], o[3]
    bx, by = o[0] + c * o[k] - s * o[k + 1], o[1] + s * o[k] + c * o[k + 1]
    gx, gy = o[0] + c * o[k + 6] - s * o[k + 7], o[1] + s * o[k + 6] + c * o[k + 7]
    return S.push_action(o[0], o[1], math.atan2(s, c), bx, by, gx, gy)


def test_push_multi_rows_push_their_first_unplaced_box():
    rows = np.stack([_multi_obs([False, False]), _multi_obs([True, False]),
                     _multi_obs([True, True]), _multi_obs([False, True])])
    act = S.push_multi_actions(rows, num_objects=2)
    np.testing.assert_array_equal(act[0], _push_toward(rows[0], 0))
    np.testing.assert_array_equal(act[1], _push_toward(rows[1], 1))
    np.testing.assert_array_equal(act[2], [0.0, 0.0])  # all placed: stand still
    np.testing.assert_array_equal(act[3], _push_toward(rows[3], 0))
    assert not np.array_equal(act[0], act[1])
    np.testing.assert_array_equal(S.push_multi_action(rows[1], num_objects=2), act[1])


def test_batch_experts_reject_narrow_observations():
    with pytest.raises(ValueError, match=r"obs must be a batch of state observations \(N, >= 51\)"):
        S.push_multi_actions(np.zeros((3, 40)), num_objects=2)
    with pytest.raises(ValueError, match=r"\(N, >= 73\)"):  # 4 near clutter blocks
        S.push_clutter_actions(np.zeros(39))
    with pytest.raises(ValueError, match=r"\(N, >= 57\)"):  # 2 near clutter blocks
        S.push_clutter_actions(np.zeros((1, 56)), k_nearest=2)


def test_expert_reads_the_layout_arguments_and_places_both_boxes():
    venv = gym.make_vec("PushMulti-v0", num_envs=16, autoreset_mode=AutoresetMode.DISABLED,
                        num_threads=1, num_objects=2)
    policy = S.expert("PushMulti-v0", "diff", {"num_objects": 2, "robot": "diff"})
    wins = [bool(ep.infos["is_success"][-1]) for ep in rollout(venv, policy, 16, seed=5)]
    venv.close()
    assert sum(wins) >= 14, wins  # 96 % over 200 episodes (README)


def test_expert_lists_the_tasks_it_has():
    with pytest.raises(KeyError, match=r"scripted experts exist for: PushBox-v0 \(diff\), "
                                       r"WallSlide-v0 \(diff\), PushMulti-v0 \(diff\), "
                                       r"PushClutter-v0 \(diff\), PushT-v0 \(omni\)"):
        S.expert("Sweep-v0", "diff")


def _tee_obs(dx: float, robot: tuple[float, float], heading: float = 0.7) -> np.ndarray:
    """A PushT-v0 observation: the T at the goal pose (1.5, 1.6, 45 deg) shifted by ``dx`` [m]
    along world x, the robot at ``robot`` [m] with ``heading`` [rad]."""
    o = np.zeros(53)
    rx, ry = robot
    c, s = math.cos(heading), math.sin(heading)
    o[0:4] = rx, ry, c, s
    tx, ty, tt = 1.5 + dx, 1.6, math.pi / 4
    o[7] = c * (tx - rx) + s * (ty - ry)
    o[8] = -s * (tx - rx) + c * (ty - ry)
    o[9], o[10] = math.cos(tt - heading), math.sin(tt - heading)
    o[15:19] = 1.5, 1.6, math.cos(tt), math.sin(tt)
    return o


def _world_velocity(o: np.ndarray, a: np.ndarray) -> np.ndarray:
    return np.array([o[2] * a[0] - o[3] * a[1], o[3] * a[0] + o[2] * a[1]])


def test_push_t_pushes_through_its_contact_and_slows_near_the_goal():
    # The T 0.2 m short of its goal along +x at the goal's heading: the push point whose
    # twist is nearest pure +x travel is on the stem's left face, 0.12 m down; the robot
    # standing there (0.11 m out along the face's normal) pushes along that normal.
    ct = st = math.sqrt(0.5)
    nx, ny = ct, st  # inward normal (1, 0) of the stem's left face, turned by 45 deg
    px, py = 1.3 + ct * -0.075 - st * -0.12, 1.6 + st * -0.075 + ct * -0.12
    o = _tee_obs(-0.2, (px - 0.11 * nx, py - 0.11 * ny))
    v = _world_velocity(o, S.push_t_action(o))
    # The speed is gain x |error| = 2.5 / s x 0.2 m, all of it along the normal.
    assert v == pytest.approx(0.5 * np.array([nx, ny]), abs=1e-6)
    px += 0.19
    o = _tee_obs(-0.01, (px - 0.11 * nx, py - 0.11 * ny))
    v = _world_velocity(o, S.push_t_action(o))
    assert v == pytest.approx(0.025 * np.array([nx, ny]), abs=1e-6)  # 1 cm short: 2.5 cm/s


def test_push_t_expert_reaches_gym_pushts_coverage():
    venv = gym.make_vec("PushT-v0", num_envs=16, autoreset_mode=AutoresetMode.DISABLED,
                        num_threads=1, success="coverage")
    wins = [bool(ep.infos["is_success"][-1]) for ep in
            rollout(venv, S.expert("PushT-v0", "omni"), 16, seed=7)]
    venv.close()
    assert sum(wins) >= 15, wins  # 1000 / 1000 episodes at coverage >= 0.95 (README)


def test_push_t_expert_refuses_other_shapes():
    with pytest.raises(KeyError, match=r"PushT-v0 \(omni\) knows the default scene's shapes "
                                       r"only; it cannot act with box_size_range set"):
        S.expert("PushT-v0", "omni", {"box_size_range": (0.8, 1.2)})
    assert S.expert("PushT-v0", "omni", {"success": "coverage", "scene": None}) is not None


# ------------------------------------------------------------------ PushClutter's router
def _disc(x: float, y: float, r: float, load: float) -> tuple:
    return tuple(np.array([v], np.float64) for v in (x, y, r, load))


def test_detour_steps_beside_the_first_body_too_heavy_to_push():
    p, t = (np.array([0.0]), np.array([2.0])), (np.array([3.0]), np.array([2.0]))
    region = (-10.0, -10.0, 10.0, 10.0)
    # A 0.1 m disc on the line, 0.02 m below it, at load 0.8 > 0.45: the waypoint stands
    # r_self + r + margin + hyst = 0.2 + 0.1 + 0.08 + 0.06 = 0.44 m off its centre, square to
    # the path, on the side the disc is not (above it).
    heavy = [_disc(1.5, 1.98, 0.1, 0.8)]
    wx, wy = S._detour(*p, *t, 0.2, heavy, 0.45, 0.08, region)
    np.testing.assert_allclose([wx[0], wy[0]], [1.5, 1.98 + 0.44], atol=1e-12)
    # The same disc light enough to push along, or off the corridor (0.2 + 0.1 + 0.02 m
    # from the line at most), or behind the mover: the target itself.
    for body in (_disc(1.5, 1.98, 0.1, 0.3), _disc(1.5, 2.33, 0.1, 0.8),
                 _disc(-0.5, 2.0, 0.1, 0.8)):
        wx, wy = S._detour(*p, *t, 0.2, [body], 0.45, 0.08, region)
        assert (wx[0], wy[0]) == (3.0, 2.0), body
    # The first of two in the way decides, whatever their order in the list.
    two = [_disc(2.2, 2.0, 0.1, 0.8), _disc(1.0, 1.95, 0.1, 0.8)]
    wx, wy = S._detour(*p, *t, 0.2, two, 0.45, 0.08, region)
    np.testing.assert_allclose([wx[0], wy[0]], [1.0, 1.95 + 0.44], atol=1e-12)


def test_detour_takes_the_other_side_at_the_region_edge():
    # The disc is below the line, so the cheap side is above, but that waypoint would stand
    # outside the region shrunk by 0.3 m (y <= 2.1): the detour passes below it.
    p, t = (np.array([0.0]), np.array([2.0])), (np.array([3.0]), np.array([2.0]))
    wx, wy = S._detour(*p, *t, 0.2, [_disc(1.5, 1.98, 0.1, 0.8)], 0.45, 0.08,
                       (-10.0, -10.0, 10.0, 2.4))
    np.testing.assert_allclose([wx[0], wy[0]], [1.5, 1.98 - 0.44], atol=1e-12)


def _direction(box, route, robot, bodies, dist_goal=2.0, region=(0.0, 0.0, 4.0, 4.0)):
    """The push direction's angle [deg] from :func:`S._push_direction` with the expert's
    defaults (16 steps of 11.25 deg within 90 deg of the route)."""
    a = [np.array([v], np.float64) for v in (*robot, *box, *route)]
    ux, uy = S._push_direction(*a, np.array([dist_goal]), bodies, region, 0.45, 0.45,
                               0.15 * math.sqrt(2.0), 0.15, 0.32, 8, 0.25, 0.1)
    return math.degrees(math.atan2(uy[0], ux[0]))


def test_push_direction_is_the_route_where_nothing_is_in_the_way():
    assert _direction((2.0, 2.0), (3.0, 2.0), (1.68, 2.0), []) == 0.0
    # A light body ahead (load 0.3 < 0.45) is pushed along, not avoided.
    assert _direction((2.0, 2.0), (3.0, 2.0), (1.68, 2.0), [_disc(2.35, 2.0, 0.1, 0.3)]) == 0.0


def test_push_direction_slides_the_box_off_a_heavy_body_ahead():
    # A heavy disc (r 0.1 m) 0.35 m ahead of the box: a push stalls until the box's disc
    # (r 0.212 m) clears it sideways, 0.35 sin(turn) >= 0.312 m, turn >= 63 deg: the first
    # step is 67.5 deg, to the side whose push pose is nearer the robot (it stands above).
    heavy = [_disc(2.35, 2.0, 0.1, 0.8)]
    assert _direction((2.0, 2.0), (3.0, 2.0), (1.68, 2.05), heavy) == pytest.approx(-67.5)
    assert _direction((2.0, 2.0), (3.0, 2.0), (1.68, 1.95), heavy) == pytest.approx(67.5)


def test_push_direction_leaves_a_push_pose_inside_a_heavy_body():
    # The pose behind the box (1.68, 2) is inside a heavy disc: the pose must stand >= 0.27 m
    # from its centre, 0.64 sin(turn / 2) >= 0.27, turn >= 49.9 deg: 56.25 deg, pose above.
    heavy = [_disc(1.68, 2.0, 0.1, 0.8)]
    assert _direction((2.0, 2.0), (3.0, 2.0), (2.0, 2.5), heavy) == pytest.approx(-56.25)


def test_push_direction_turns_along_a_wall_unless_the_goal_is_there():
    # Box 0.3 m below the top wall, the route straight up: 0.25 m more would end within 0.2 m
    # of the wall, so the push turns along it (67.5 deg: 0.25 cos(turn) <= 0.1 m), toward the
    # robot's side; with the goal 0.2 m away the box goes straight in.
    assert _direction((2.0, 3.7), (2.0, 4.5), (1.5, 3.5), []) == pytest.approx(22.5)
    assert _direction((2.0, 3.7), (2.0, 4.5), (1.5, 3.5), [], dist_goal=0.2) == 90.0


def test_keep_off_slides_along_a_touched_heavy_body():
    r = (np.array([1.0]), np.array([1.0]))
    t = (np.array([2.0]), np.array([1.5]))
    heavy = [_disc(1.3, 1.0, 0.15, 0.8)]
    yes, no = [np.array([True])], [np.array([False])]
    # Heading (2, 1) / sqrt(5) into the disc's outward normal (-1, 0): the component into it
    # (-2 / sqrt(5)) is dropped and 0.2 of the normal added, (-0.2, 1 / sqrt(5)), normalised,
    # 0.3 m from the robot.
    dx, dy = -0.2, 1.0 / math.sqrt(5.0)
    n = math.hypot(dx, dy)
    x, y = S._keep_off(*r, *t, heavy, yes, 0.45)
    np.testing.assert_allclose([x[0], y[0]], [1.0 + 0.3 * dx / n, 1.0 + 0.3 * dy / n],
                               atol=1e-12)
    # Not touching it, a body light enough to push (0.3 <= 0.45), or heading away from it:
    # the target itself.
    for bodies, touch, target in ((heavy, no, t), ([_disc(1.3, 1.0, 0.15, 0.3)], yes, t),
                                  (heavy, yes, (np.array([0.0]), np.array([1.5])))):
        x, y = S._keep_off(*r, *target, bodies, touch, 0.45)
        assert (x[0], y[0]) == (target[0][0], target[1][0])


def test_clutter_expert_goes_around_where_the_straight_push_stalls():
    # The same 48 episodes (seed 11): the router places the box in 44 (92 % of 1000 in
    # docs/training_results.md), the straight push in 26. The route without the push
    # direction's choice (the expert before 2 Dec) placed 38.
    venv = gym.make_vec("PushClutter-v0", num_envs=48, autoreset_mode=AutoresetMode.DISABLED,
                        num_threads=1)
    wins = {}
    for name, policy in (("router", S.expert("PushClutter-v0", "diff", {})),
                         ("straight", S.push_clutter_straight_actions)):
        eps = rollout(venv, policy, 48, seed=11)
        wins[name] = sum(bool(ep.infos["is_success"][-1]) for ep in eps)
    venv.close()
    assert wins["router"] >= 42 and wins["router"] >= wins["straight"] + 12, wins
