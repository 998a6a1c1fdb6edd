"""User behaviours: IR-SIM's custom dash of usage/13custom_behavior re-written as a compiled
function, registered and run by the stage; a stateful one keeping its memory; the errors of a
bad registration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from push_envs.physics.behaviours import EGO_HIGH
from push_envs.physics.behaviours import EGO_THETA
from push_envs.physics.behaviours import EGO_THRESHOLD
from push_envs.physics.behaviours import EGO_X
from push_envs.physics.behaviours import EGO_Y
from push_envs.physics.behaviours import register_behavior
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


# ---------------------------------------------------------------- group behaviours


def _examples():
    """The docs' worked example (docs/examples/irsim_group_behaviours.py), imported as
    IR-SIM's scripts import theirs: it registers formation and swarm."""
    import sys
    from pathlib import Path

    folder = str(Path(__file__).resolve().parents[3] / "docs" / "examples")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    import irsim_group_behaviours

    return irsim_group_behaviours


def _swarm_world(bw, num_envs=1):
    _examples()
    group = {"name": "swarm", "cohesion_gain": 0.3, "goal_gain": 1.0}
    starts = [(2, 2, 0.0), (6, 3, 2.5), (4, 7, -2.0)]
    goals = [[15, 15, 0], [3, 14, 0], None]
    robots = [bw.omni(f"r{k}", x, y, th, goal=g, group=1, group_behavior=group,
                      vel_max=[2, 2], vel_min=[-2, -2])
              for k, ((x, y, th), g) in enumerate(zip(starts, goals, strict=True))]
    return bw.world(robots, num_envs=num_envs, collision_mode="stop")


def _swarm_reference(states, goals, cohesion, gain, top):
    """IR-SIM's swarm (usage/13custom_behavior/custom_group_methods.py) in numpy, its world
    velocity capped at the top speed and rotated into each member's frame."""
    c = states[:, :2].mean(axis=0)
    out = []
    for s, g in zip(states, goals, strict=True):
        v = cohesion * (c - s[:2]) + (gain * (np.asarray(g[:2]) - s[:2]) if g else 0.0)
        speed = np.hypot(*v)
        if speed > top:
            v = v / speed * top
        ct, st = np.cos(s[2]), np.sin(s[2])
        out.append([ct * v[0] + st * v[1], -st * v[0] + ct * v[1]])
    return np.array(out)


def test_group_behaviour_commands_every_member_as_irsims_function(bw):
    """A registered group behaviour gets the members' egos and goals in order; its commands,
    clipped to each member's range, drive them (stop mode: a command applies at once)."""
    w = _swarm_world(bw)
    names = ["r0", "r1", "r2"]
    goals = [[15, 15, 0], [3, 14, 0], None]
    assert w.behaviours.arrays.grp[0, 0] != 0
    for _ in range(20):
        states = np.array([w.state(n)[0] for n in names])
        w.step()
        expect = _swarm_reference(states, goals, 0.3, 1.0, np.hypot(2, 2))
        got = np.array([w.drive_state(n)[0] for n in names])
        np.testing.assert_allclose(got, np.clip(expect, -2, 2), rtol=0, atol=1e-12)
    # toward the goal, and the one without a goal toward the others
    assert np.hypot(*(w.state("r0")[0, :2] - [15, 15])) < np.hypot(13, 13)


def test_group_behaviour_batch_equals_single_worlds(bw):
    batch = _swarm_world(bw, num_envs=3)
    single = _swarm_world(bw)
    batch.set_state("r1", [5, 4, 1.0], env=2)
    other = _swarm_world(bw)
    other.set_state("r1", [5, 4, 1.0])
    for _ in range(15):
        batch.step()
        single.step()
        other.step()
    np.testing.assert_array_equal(batch.pos[0], single.pos[0])
    np.testing.assert_array_equal(batch.pos[2], other.pos[0])
    assert not np.array_equal(batch.pos[0], batch.pos[2])


def test_group_memory_per_member_and_reset(bw):
    """formation records each member's offset from the centroid on its first step, in that
    member's memory, and a reset clears it."""
    _examples()
    group = {"name": "formation"}
    robots = [bw.omni(f"f{k}", x, y, goal=[12, 12, 0], group=3, group_behavior=group,
                      vel_max=[2, 2], vel_min=[-2, -2])
              for k, (x, y) in enumerate([(1, 1), (3, 1), (2, 4)])]
    w = bw.world(robots, collision_mode="stop")
    w.step()
    mem = w.behaviours.arrays.mem[0]
    centroid = np.array([2.0, 2.0])
    for k, (x, y) in enumerate([(1, 1), (3, 1), (2, 4)]):
        i = w.index(f"f{k}")
        assert mem[i, 0] == 1.0
        np.testing.assert_allclose(mem[i, 1:3], np.array([x, y]) - centroid, atol=1e-15)
    # the group moved as one toward its goals' centroid: the shape is kept
    for _ in range(30):
        w.step()
    pos = np.array([w.state(f"f{k}")[0, :2] for k in range(3)])
    np.testing.assert_allclose(pos - pos.mean(axis=0), [[-1, -1], [1, -1], [0, 2]], atol=1e-9)
    assert np.hypot(*(pos.mean(axis=0) - 12)) < np.hypot(10, 10) - 2.0
    w.reset()
    np.testing.assert_array_equal(w.behaviours.arrays.mem[0], 0.0)


def test_group_registration_errors(bw):
    from push_envs.physics.behaviours import register_group_behavior

    ex = _examples()
    with pytest.raises(ValueError, match="IR-SIM's 'orca' already exists for 'omni'"):
        register_group_behavior("omni", "orca")(ex.swarm)
    with pytest.raises(ValueError, match="'swarm' is already registered for 'omni'"):
        register_group_behavior("omni", "swarm")(ex.swarm)
    with pytest.raises(TypeError, match="must be a function of 5 arguments"):
        register_group_behavior("omni", "five")(dash_custom)
    # a group behaviour given per object, and one on a kinematics it is not registered for
    with pytest.raises(SceneError, match=r"robot\[0\]\.behavior\.name: unknown behaviour "
                                         r"'swarm'.*registered: give it as group_behavior"):
        bw.world([bw.omni("r", 0, 0, goal=[1, 0, 0], behavior={"name": "swarm"})])
    with pytest.raises(SceneError, match=r"robot\[0\]\.group_behavior\.name: the registered "
                                         r"group behaviour 'swarm' exists for kinematics omni, "
                                         r"not diff"):
        bw.world([bw.diff("r", 0, 0, goal=[1, 0, 0], group=1,
                          group_behavior={"name": "swarm"})])
