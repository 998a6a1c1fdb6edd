"""rvo against IR-SIM's reciprocal velocity obstacles: the candidate grid is numpy's arange
value for value, and the chosen command is IR-SIM's, bit for bit, in every mode, with line
segments, and when every candidate is blocked (the penalty)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from push_envs.physics.behaviours import rvo
from push_envs.physics.behaviours.layout import CTL_STEP
from push_envs.physics.behaviours.layout import SN_R
from push_envs.physics.jit import python_entry


def test_candidate_axis_is_numpy_arange():
    axis = python_entry(rvo.axis)
    value = python_entry(rvo.value)
    rng = np.random.default_rng(0)
    for _ in range(2000):
        cur, vmax, acce = rng.uniform(-2, 2), rng.uniform(0.1, 2), rng.uniform(0.01, 2)
        first, second, delta, n = axis(cur, vmax, acce)
        low, high = max(cur - acce, -vmax), min(cur + acce, vmax)
        ref = np.arange(low, high, 0.05) if high > low else np.array([np.clip(cur, -vmax, vmax)])
        ours = np.array([value(first, second, delta, i) for i in range(n)])
        np.testing.assert_array_equal(ours, ref)


def _grid(value, first, second, delta, n):
    return np.array([value(first, second, delta, i) for i in range(n)])


def test_covered_rings_hold_only_blocked_candidates():
    """The rings the walk skips (rvo._covered_rings) hold no candidate that the exact test
    leaves free, also where an edge runs through candidates (apex on the grid, edges along
    its axes), and they reach well past the centre where the cone is wide."""
    covered = python_entry(rvo._covered_rings)
    inside = python_entry(rvo._inside)
    axis = python_entry(rvo.axis)
    value = python_entry(rvo.value)
    rng = np.random.default_rng(3)
    skipped = 0
    for trial in range(600):
        (fx, sx, dx_, nx), (fy, sy, dy_, ny) = (axis(rng.uniform(-1, 1), 1.0, rng.uniform(0.1, 1))
                                                for _ in range(2))
        gx, gy = _grid(value, fx, sx, dx_, nx), _grid(value, fy, sy, dy_, ny)
        i0, j0 = int(rng.integers(nx)), int(rng.integers(ny))
        if trial % 3 == 0:  # apex on a candidate, edges along the axes or diagonal
            ax, ay = gx[int(rng.integers(nx))], gy[int(rng.integers(ny))]
            mid = rng.integers(8) * math.pi / 4
            half = math.pi / 4 if trial % 2 else math.pi / 2
        else:
            ax, ay = rng.uniform(-1.5, 1.5, 2)
            mid = rng.uniform(-math.pi, math.pi)
            half = rng.uniform(0.05, math.pi / 2)
        lines = np.zeros((1, 1, 6))
        lines[0, 0] = [ax, ay, math.cos(mid + half), math.sin(mid + half),
                       math.cos(mid - half), math.sin(mid - half)]
        reach = max(i0, nx - 1 - i0, j0, ny - 1 - j0)
        k = covered(lines, 0, fx, sx, dx_, nx, fy, sy, dy_, ny, i0, j0, reach)
        assert -1 <= k <= reach
        # the exact test (rvo._inside's arithmetic, elementwise) over the skipped square
        vx, vy = np.meshgrid(gx[max(i0 - k, 0):i0 + k + 1], gy[max(j0 - k, 0):j0 + k + 1])
        px, py = vx - ax, vy - ay
        lx, ly, rx, ry = lines[0, 0, 2:]
        held = (lx * py - px * ly <= 0.0) & (rx * py - px * ry >= 0.0)
        assert held.all(), (trial, k)
        if k >= 0:
            assert inside(lines, 0, 0, gx[i0], gy[j0])
        skipped += max(k, 0)
    assert skipped > 600  # it skips rings, not only the centre


def _world(bw, kin, n, beh, rng, segment):
    make = bw.diff if kin == "diff" else bw.omni
    robots = []
    for i in range(n):
        x, y = rng.uniform(-3, 3, 2)
        robots.append(make(f"r{i}", float(x), float(y), float(rng.uniform(-3, 3)),
                           radius=float(rng.uniform(0.1, 0.4)), vel_min=[-3, -3],
                           vel_max=[3, 3], behavior=dict(beh),
                           goal=[float(v) for v in rng.uniform(-5, 5, 2)] + [0.0]))
    obstacles = []
    if segment:
        pts = rng.uniform(-4, 4, (3, 2)).round(3).tolist()
        # at the origin, so its vertices are the segments' world coordinates that IR-SIM's
        # function is given below (without a state a body stands at IR-SIM's default [1, 1, 0])
        obstacles.append({"name": "line", "shape": {"name": "linestring", "vertices": pts},
                          "static": True, "state": [0.0, 0.0, 0.0]})
    return bw.world(robots, obstacles)


def _irsim_command(w, kin, beh, n, segment):
    """IR-SIM's command for body r0 of ``w``, from the same states."""
    from irsim.lib.behavior.behavior_methods import DiffRVO
    from irsim.lib.behavior.behavior_methods import OmniRVO
    from irsim.util.util import vel_world2omni

    snap = []
    for o in range(n):
        x, y, th = w.state(f"r{o}")[0, :3]
        d0, d1 = w.drv[0, w.index(f"r{o}")]
        c, s = math.cos(th), math.sin(th)
        v = (c * d0 - s * d1, s * d0 + c * d1) if kin == "omni" else (c * d0, s * d0)
        snap.append([x, y, v[0], v[1], w.behaviours.arrays.bf[o, 3] + 0.1])
    x, y, th = w.state("r0")[0, :3]
    gx, gy = w.goal("r0")[0, :2]
    d = math.hypot(gx - x, gy - y)
    b = math.atan2(gy - y, gx - x)
    des = (3.0 * math.cos(b), 3.0 * math.sin(b)) if d > 0.1 else (0.0, 0.0)
    state = [x, y, snap[0][2], snap[0][3], snap[0][4], des[0], des[1], th]
    segs = []
    if segment:
        v = w.scene.spec.bodies[n].shape["vertices"]
        segs = [[*v[k], *v[k + 1]] for k in range(len(v) - 1)]
    args = (state, snap[1:], beh["vxmax"], beh["vymax"], beh["acce"], beh["factor"],
            beh["mode"], beh["neighbor_threshold"])
    if kin == "diff":
        return DiffRVO(*args, line_segments=segs)[:, 0]
    return vel_world2omni(th, OmniRVO(*args, line_segments=segs))[:, 0]


@pytest.mark.parametrize("kin", ["diff", "omni"])
def test_rvo_command_is_irsims(bw, irsim, kin):
    rng = np.random.default_rng(1 if kin == "diff" else 2)
    trials = 0
    for trial in range(120):
        mode = ("rvo", "hrvo", "vo")[trial % 3]
        beh = {"name": "rvo", "vxmax": float(rng.uniform(0.5, 2)),
               "vymax": float(rng.uniform(0.5, 2)), "acce": float(rng.uniform(0.2, 1.5)),
               "factor": float(rng.uniform(0.5, 3)), "mode": mode,
               "neighbor_threshold": float(rng.uniform(1, 6))}
        n = int(rng.integers(1, 8))
        segment = trial % 4 == 0
        try:
            w = _world(bw, kin, n, beh, rng, segment)
        except ValueError:  # a spawn overlap: draw again
            continue
        w.drv[0, :n] = rng.uniform(-1, 1, (n, 2))
        w.behaviours.run(w, CTL_STEP, np.array([0]))
        np.testing.assert_array_equal(w.cmd[0, 0], _irsim_command(w, kin, beh, n, segment))
        trials += 1
    assert trials > 80


def test_blocked_everywhere_takes_irsims_penalty(bw, irsim):
    """Neighbours all around: no candidate is free, and the least penalty wins."""
    beh = {"name": "rvo", "vxmax": 1.0, "vymax": 1.0, "acce": 1.0, "factor": 2.0,
           "mode": "rvo", "neighbor_threshold": 5.0}
    robots = [bw.omni("r0", 0, 0, behavior=beh, goal=[4, 0.3, 0], vel_min=[-3, -3],
                      vel_max=[3, 3])]
    for k in range(8):
        a = 2 * math.pi * k / 8
        robots.append(bw.omni(f"r{k + 1}", 0.55 * math.cos(a), 0.55 * math.sin(a),
                              radius=0.15, vel_min=[-3, -3], vel_max=[3, 3]))
    w = bw.world(robots)
    w.behaviours.run(w, CTL_STEP, np.array([0]))
    ours = w.cmd[0, 0].copy()
    np.testing.assert_array_equal(ours, _irsim_command(w, "omni", beh, 9, False))
    # every candidate blocked: IR-SIM's vel_select fell back to its penalty
    from irsim.lib.algorithm.rvo import reciprocal_vel_obs

    snap = w.behaviours.arrays.snap[0]
    state = [0.0, 0.0, 0.0, 0.0, snap[0, SN_R], 3.0, 0.0, 0.0]
    nb = [[snap[o, 3], snap[o, 4], 0.0, 0.0, snap[o, SN_R]] for o in range(1, 9)]
    outside, _inside = reciprocal_vel_obs(state, nb, 1.0, 1.0, 1.0, 2.0).vel_candidate(
        reciprocal_vel_obs(state, nb, 1.0, 1.0, 1.0, 2.0).config_rvo())
    assert outside == []


def test_lone_diff_robot_turns_to_a_goal_behind_it(bw):
    """IR-SIM's DiffRVO: alone, with the goal behind, turn in place (0.2 s to close the
    heading error, at most 1.5 rad/s) instead of freezing."""
    w = bw.world([bw.diff("r", 0, 0, 0.0, behavior={"name": "rvo"}, goal=[-3, 0, 0],
                          vel_min=[-2, -2], vel_max=[2, 2])])
    w.behaviours.run(w, CTL_STEP, np.array([0]))
    v, omega = w.cmd[0, 0]
    assert v == 0.0
    assert abs(omega) == 1.5
