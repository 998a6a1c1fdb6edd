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
