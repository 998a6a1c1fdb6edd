"""push_envs.scripted: the shared controllers, on hand-made geometry."""

from __future__ import annotations

import math

import numpy as np

from push_envs import scripted as S


def _disc(x: float, y: float, r: float, load: float) -> tuple:
    return tuple(np.array([v], np.float64) for v in (x, y, r, load))


def test_detour_steps_beside_the_first_body_too_heavy_to_push():
    p, t = (np.array([0.0]), np.array([2.0])), (np.array([3.0]), np.array([2.0]))
    region = (-10.0, -10.0, 10.0, 10.0)
    # A 0.1 m disc on the line, 0.02 m below it, at load 0.8 > 0.45: the waypoint stands
    # r_self + r + margin + hyst = 0.2 + 0.1 + 0.08 + 0.06 = 0.44 m off its centre, square to
    # the path, on the side the disc is not (above it).
    heavy = [_disc(1.5, 1.98, 0.1, 0.8)]
    wx, wy = S.detour(*p, *t, 0.2, heavy, 0.45, 0.08, region)
    np.testing.assert_allclose([wx[0], wy[0]], [1.5, 1.98 + 0.44], atol=1e-12)
    # The same disc light enough to push along, or off the corridor (0.2 + 0.1 + 0.02 m
    # from the line at most), or behind the mover: the target itself.
    for body in (_disc(1.5, 1.98, 0.1, 0.3), _disc(1.5, 2.33, 0.1, 0.8),
                 _disc(-0.5, 2.0, 0.1, 0.8)):
        wx, wy = S.detour(*p, *t, 0.2, [body], 0.45, 0.08, region)
        assert (wx[0], wy[0]) == (3.0, 2.0), body
    # The first of two in the way decides, whatever their order in the list.
    two = [_disc(2.2, 2.0, 0.1, 0.8), _disc(1.0, 1.95, 0.1, 0.8)]
    wx, wy = S.detour(*p, *t, 0.2, two, 0.45, 0.08, region)
    np.testing.assert_allclose([wx[0], wy[0]], [1.0, 1.95 + 0.44], atol=1e-12)


def test_detour_takes_the_other_side_at_the_region_edge():
    # The disc is below the line, so the cheap side is above, but that waypoint would stand
    # outside the region shrunk by 0.3 m (y <= 2.1): the detour passes below it.
    p, t = (np.array([0.0]), np.array([2.0])), (np.array([3.0]), np.array([2.0]))
    wx, wy = S.detour(*p, *t, 0.2, [_disc(1.5, 1.98, 0.1, 0.8)], 0.45, 0.08,
                       (-10.0, -10.0, 10.0, 2.4))
    np.testing.assert_allclose([wx[0], wy[0]], [1.5, 1.98 - 0.44], atol=1e-12)




def test_push_action_of_one_robot_is_the_batch_row():
    rows = [np.array([v]) for v in (1.0, 2.0, 0.3, 1.5, 2.2, 3.0, 2.5)]
    np.testing.assert_array_equal(S.push_action(*(r[0] for r in rows)),
                                  S.push_actions(*rows)[0])
    # Facing the push pose straight on: full speed ahead, no turn.
    act = S.push_action(0.0, 0.0, 0.0, 1.0, 0.0, 3.0, 0.0)
    assert act[0] == np.float32(1.0) and abs(act[1]) < 1e-6
    assert math.isfinite(float(act[0]))


def test_omni_push_heads_for_the_push_pose_then_pushes_along_the_line_in_its_own_frame():
    # Box at the origin, goal 2 m along +x: the push pose is 0.32 m behind the box, (-0.32, 0).
    box = (np.zeros(3), np.zeros(3))
    goal = (np.full(3, 2.0), np.zeros(3))
    rx = np.array([-1.32, -0.32, -0.32])
    ry = np.array([0.0, 0.0, 0.05])
    th = np.array([0.0, math.pi / 2, 0.0])  # robot 1 faces +y: its frame is turned a quarter
    act = S.omni_push_actions(rx, ry, np.cos(th), np.sin(th), *box, *goal)
    # robot 0, 1 m behind the pose: full speed (min(1, 2 x 1 + 0.3)) straight at it
    np.testing.assert_allclose(act[0], [1.0, 0.0], atol=1e-6)
    # robot 1, at the pose: pushing toward the goal, +x in the world, -y in its own frame
    np.testing.assert_allclose(act[1], [0.0, -1.0], atol=1e-6)
    # robot 2, 5 cm left of the line while pushing: heading for the goal (2.32 m ahead, 5 cm
    # right) plus 2 / s x 0.05 m toward the line, at unit length: it closes the offset
    to_goal = np.array([2.32, -0.05]) / math.hypot(2.32, 0.05)
    want = to_goal + [0.0, -2.0 * 0.05]
    want /= np.linalg.norm(want)
    np.testing.assert_allclose(act[2], want, atol=1e-6)
    assert act.dtype == np.float32 and np.all(np.abs(act) <= 1.0)
