"""dash against IR-SIM's DiffDash, OmniDash and AckerDash, and the turn ramp's law."""

from __future__ import annotations

import math

import numpy as np
import pytest

from push_envs.physics.behaviours import dash
from push_envs.physics.behaviours.layout import CTL_STEP
from push_envs.physics.jit import python_entry


def test_turn_ramp_stops_within_the_tolerance():
    """With an angular acceleration a, the rate w turned this step and braked after it
    covers the remaining angle exactly: w dt + w^2 / (2 a) = |err| - tol."""
    turn = python_entry(dash.turn_rate)
    for err, tol, wmax, acc, dt in [(1.0, 0.1, 5.0, 2.0, 0.1), (-0.5, 0.05, 3.0, 0.7, 0.05),
                                    (2.0, 0.2, 0.3, 4.0, 0.1)]:
        w = turn(err, tol, wmax, acc, dt)
        assert math.copysign(1.0, w) == math.copysign(1.0, err)
        w = abs(w)
        if w < wmax:
            assert w * dt + w * w / (2 * acc) == pytest.approx(abs(err) - tol, rel=1e-12)
        else:
            assert wmax * dt + wmax ** 2 / (2 * acc) <= abs(err) - tol
    assert turn(0.05, 0.1, 1.0, math.inf, 0.1) == 0.0
    assert turn(-1.0, 0.1, 1.0, math.inf, 0.1) == -1.0


@pytest.mark.parametrize("kin", ["diff", "omni", "acker"])
def test_dash_command_is_irsims(bw, irsim, kin):
    from irsim.lib.behavior.behavior_methods import AckerDash
    from irsim.lib.behavior.behavior_methods import DiffDash
    from irsim.lib.behavior.behavior_methods import OmniDash

    rng = np.random.default_rng({"diff": 7, "omni": 8, "acker": 9}[kin])
    for _ in range(60):
        x, y, th = rng.uniform(-3, 3), rng.uniform(-3, 3), rng.uniform(-3.5, 3.5)
        goal = [float(v) for v in rng.uniform(-4, 4, 2)] + [0.0]
        vmax = [float(rng.uniform(0.5, 2)), float(rng.uniform(0.3, 2))]
        acce = [math.inf, float(rng.choice([math.inf, rng.uniform(0.5, 5)]))]
        tol = float(rng.uniform(0.01, 0.3))
        thr = float(rng.uniform(0.05, 0.5))
        body = {"name": "r", "kinematics": {"name": kin}, "goal": goal, "goal_threshold": thr,
                "behavior": {"name": "dash", "angle_tolerance": tol}, "vel_max": vmax,
                "vel_min": [-v for v in vmax], "acce": acce,
                "shape": {"name": "circle", "radius": 0.2}, "state": [x, y, th]}
        if kin == "acker":
            body["state"].append(0.0)
        w = bw.world([body])
        w.behaviours.run(w, CTL_STEP, np.array([0]))
        state = np.c_[[x, y, w.state("r")[0, 2]]]
        mv = np.c_[vmax]
        if kin == "diff":
            ref = DiffDash(state, np.c_[goal], mv, thr, tol, acce[1], w.dt)
        elif kin == "omni":
            ref = OmniDash(state, np.c_[goal], mv, thr)
        else:
            ref = AckerDash(state, np.c_[goal], mv, thr, tol)
        # IR-SIM's get_vel_range: the limits, narrowed by acce from the velocity (here 0)
        window = np.array(acce) * w.dt
        ref = np.clip(ref[:, 0], np.maximum([-v for v in vmax], -window),
                      np.minimum(vmax, window))
        np.testing.assert_allclose(w.cmd[0, 0], ref, rtol=0, atol=1e-12)


def test_acker_dash_reaches_a_goal(bw):
    car = {"name": "car", "kinematics": {"name": "acker", "wheelbase": 1.0},
           "shape": {"name": "rectangle", "length": 1.6, "width": 0.8}, "state": [0, 0, 0, 0],
           "goal": [8, 6, 0], "goal_threshold": 0.3, "behavior": {"name": "dash"},
           "vel_max": [2, 0.6], "vel_min": [-2, -0.6]}
    w = bw.world([car])
    for _ in range(200):
        w.step()
    assert w.arrived("car")[0]
    assert np.hypot(*(w.state("car")[0, :2] - [8, 6])) < 0.3
