"""User behaviours: IR-SIM's custom dash of usage/13custom_behavior re-written as a compiled
function, registered and run by the stage; a stateful one keeping its memory; the errors of a
bad registration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from push_envs.physics.behaviours import (
    EGO_HIGH,
    EGO_THETA,
    EGO_THRESHOLD,
    EGO_X,
    EGO_Y,
    register_behavior,
)
from push_envs.physics.behaviours.layout import CTL_STEP
from push_envs.physics.errors import SceneError


@register_behavior("diff", "dash_custom_test", params={"angle_tolerance": 0.1})
@njit(cache=True)
def dash_custom(ego, goal, others, segments, params, memory, out):
    """IR-SIM's DiffDash2 (usage/13custom_behavior/custom_behavior_methods.py): full speed
    along the bearing's cosine, a full-rate turn outside the angle tolerance."""
    if goal[3] == 0.0:
        return
    dx = goal[0] - ego[EGO_X]
    dy = goal[1] - ego[EGO_Y]
    if math.hypot(dx, dy) < ego[EGO_THRESHOLD]:
        return
    err = math.atan2(dy, dx) - ego[EGO_THETA]
    err = (err + math.pi) % (2.0 * math.pi) - math.pi
    out[0] = ego[EGO_HIGH] * math.cos(err)
    if abs(err) >= params[0]:
        out[1] = ego[EGO_HIGH + 1] * (1.0 if err > 0.0 else -1.0)


@register_behavior(("diff", "omni"), "smooth_test", params={"smoothing": 0.3})
@njit(cache=True)
def smooth(ego, goal, others, segments, params, memory, out):
    """IR-SIM's SmoothDashBehavior's memory: an exponential average of a constant target
    (1, 0), kept across steps in ``memory``."""
    a = params[0]
    for k in range(2):
        memory[k] = a * memory[k] + (1.0 - a) * (1.0 if k == 0 else 0.0)
        out[k] = memory[k]


def _reference(state, goal, high, tol, threshold):
    """DiffDash2 in numpy, from IR-SIM's file."""
    dx, dy = goal[0] - state[0], goal[1] - state[1]
    if np.hypot(dx, dy) < threshold:
        return np.zeros(2)
    err = (np.arctan2(dy, dx) - state[2] + np.pi) % (2 * np.pi) - np.pi
    ang = 0.0 if abs(err) < tol else high[1] * np.sign(err)
    return np.array([high[0] * np.cos(err), ang])


def test_custom_dash_reaches_its_goal_as_irsims_function(bw):
    beh = {"name": "dash_custom_test", "angle_tolerance": 0.2}
    w = bw.world([bw.diff("r", 0, 0, 1.0, goal=[4, 3, 0], behavior=beh, goal_threshold=0.2,
                          vel_max=[1.0, 1.5], vel_min=[-1.0, -1.5])], collision_mode="stop")
    assert w.behaviours.arrays.fn[0] != 0
    for _ in range(80):
        state = w.state("r")[0].copy()
        w.step()
        expect = _reference(state, [4, 3], [1.0, 1.5], 0.2, 0.2)
        np.testing.assert_allclose(w.drive_state("r")[0], expect, rtol=0, atol=1e-12)
        if w.arrived("r")[0]:
            break
    assert w.arrived("r")[0]


def test_memory_persists_and_resets(bw):
    w = bw.world([bw.omni("r", 0, 0, goal=[9, 0, 0], behavior={"name": "smooth_test"})],
                 collision_mode="stop")
    expect = 0.0
    for _ in range(4):
        w.step()
        expect = 0.3 * expect + 0.7
        assert w.drive_state("r")[0, 0] == pytest.approx(expect, abs=1e-15)
    w.reset()
    np.testing.assert_array_equal(w.behaviours.arrays.mem[0, 0], 0.0)
    w.step()
    assert w.drive_state("r")[0, 0] == pytest.approx(0.7, abs=1e-15)


def test_behaviour_defined_in_a_function_compiles_uncached(bw):
    @register_behavior("omni", "local_test")
    @njit
    def forward(ego, goal, others, segments, params, memory, out):
        out[0] = 0.5

    w = bw.world([bw.omni("r", 0, 0, goal=[9, 0, 0], behavior={"name": "local_test"})],
                 collision_mode="stop")
    w.behaviours.run(w, CTL_STEP, np.array([0]))
    np.testing.assert_array_equal(w.cmd[0, 0], [0.5, 0.0])


def test_registration_errors(bw):
    with pytest.raises(ValueError, match="IR-SIM's 'dash' already exists for 'diff'"):
        register_behavior("diff", "dash")(dash_custom)
    with pytest.raises(ValueError, match="already registered for 'diff'"):
        register_behavior("diff", "dash_custom_test")(dash_custom)
    with pytest.raises(ValueError, match="unknown kinematics 'tank'"):
        register_behavior("tank", "x")
    with pytest.raises(TypeError, match="must be a function of 7 arguments"):
        register_behavior("diff", "two_args")(lambda ego, out: None)
    # a registered name, on another kinematics
    with pytest.raises(SceneError, match=r"robot\[0\]\.behavior\.name: the registered "
                                         r"behaviour 'dash_custom_test' exists for kinematics "
                                         r"diff, not omni"):
        bw.world([bw.omni("r", 0, 0, goal=[1, 0, 0],
                          behavior={"name": "dash_custom_test"})])
    # its parameters join the known ones; a typo is still refused
    with pytest.raises(SceneError, match=r"unknown behaviour parameter 'smoothin'"):
        bw.world([bw.omni("r", 0, 0, goal=[1, 0, 0],
                          behavior={"name": "smooth_test", "smoothin": 0.5})])
