"""IR-SIM's collision modes and ``unobstructed`` bodies, against IR-SIM 2.12 itself.

``data/irsim_collision_modes.json`` holds six small worlds and, per step, every object's state,
stop flag and collision flag as IR-SIM 2.12 computed them (``irsim.make`` headless, the same
command to each driven object every step): stop mode against a static and a moving obstacle,
unobstructed, unobstructed_obstacles, and unobstructed objects in stop mode.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from fresh_compile import compile_alone

from push_envs.physics import World

REF = json.loads((Path(__file__).parent / "data" / "irsim_collision_modes.json").read_text())


@pytest.mark.parametrize("case", sorted(REF))
def test_modes_follow_irsim_step_by_step(case):
    ref = REF[case]
    w = World.from_config(ref["world"])
    names = w.names
    driven = names[:len(ref["actions"])]
    for k, row in enumerate(ref["traj"]):
        w.step(dict(zip(driven, ref["actions"], strict=True)))
        for name, (x, y, th, stop, hit) in zip(names, row, strict=True):
            # straight lines: push_envs' exact integral is IR-SIM's Euler step here
            np.testing.assert_allclose(w.state(name)[0, :3], (x, y, th), atol=1e-9,
                                       err_msg=f"{case} step {k} {name}")
            if w.kinematics(name):
                assert bool(w.stopped(name)[0]) == stop, (case, k, name)
                assert bool(w.collision(name)[0]) == hit, (case, k, name)


def robot(name, x, **kw):
    body = {"name": name, "kinematics": {"name": "diff"}, "state": [x, 0, 0],
            "shape": {"name": "circle", "radius": 0.2}}
    body.update(kw)
    return body


def test_outside_contact_mode_nothing_is_pushed_and_drives_take_commands_as_they_are():
    w = World.from_config({
        "world": {"collision_mode": "unobstructed", "friction": 0.05},
        "robot": [robot("r", 0.0, mass=1.0)],
        "obstacle": [{"name": "box", "state": [0.5, 0, 0], "mass": 0.1,
                      "shape": {"name": "rectangle", "length": 0.2, "width": 0.2}}]})
    w.step({"r": [1.0, 0.0]})
    # no grip cap (0.05 g caps a contact-mode drive at 0.05 m/s per step) and no contact
    assert w.drive_state("r")[0, 0] == 1.0
    for _ in range(9):
        w.step({"r": [1.0, 0.0]})
    assert w.state("r")[0, 0] == pytest.approx(1.0)
    assert w.state("box")[0].tolist() == [0.5, 0.0, 0.0]  # passed through, never pushed
    assert w.ctn[0] == 0


def test_unobstructed_body_takes_part_in_no_contact_in_contact_mode():
    w = World.from_config({
        "robot": [robot("r", 0.0)],
        "obstacle": [{"name": "ghost", "state": [0.5, 0, 0], "mass": 0.1, "unobstructed": True,
                      "shape": {"name": "rectangle", "length": 0.2, "width": 0.2}},
                     {"name": "post", "state": [1.5, 0, 0], "unobstructed": True,
                      "shape": {"name": "circle", "radius": 0.3}},
                     {"name": "wall", "state": [2.5, 0, 0],
                      "shape": {"name": "rectangle", "length": 0.2, "width": 2}}]})
    assert not np.any(w.scene.sint[:, 2] == w.index("post"))  # an unobstructed body: no piece
    for _ in range(30):
        w.step({"r": [1.0, 0.0]})
    assert w.state("ghost")[0].tolist() == [0.5, 0.0, 0.0]
    assert w.state("r")[0, 0] == pytest.approx(2.4 - 0.2, abs=1e-5)  # stopped by the wall only


def test_stop_mode_batch_is_bit_identical_to_single_worlds():
    scene = json.loads(json.dumps(REF["stop_moving_both"]["world"]))
    batch = World.from_config(scene, num_envs=3)
    single = World.from_config(scene)
    cmds = np.array([[0.5, 0.0], [1.0, 0.2], [0.2, -0.1]])
    names = batch.names
    for _ in range(30):
        batch.step({names[0]: cmds, names[1]: -cmds})
    for e in range(3):
        single.reset()
        for _ in range(30):
            single.step({names[0]: cmds[e], names[1]: -cmds[e]})
        for n in names:
            assert single.state(n)[0].tobytes() == batch.state(n)[e].tobytes()
            assert single.stopped(n)[0] == batch.stopped(n)[e]


def test_reset_clears_the_flags():
    w = World.from_config(REF["stop_static"]["world"])
    for _ in range(20):
        w.step({"robot_0": [1.0, 0.0]})
    assert w.stopped("robot_0")[0] and w.collision("robot_0")[0]
    w.reset()
    assert not w.stopped("robot_0")[0] and not w.collision("robot_0")[0]
    assert w.state("robot_0")[0].tolist() == [1.0, 1.0, 0.0]


@pytest.mark.parametrize("mode", ["stop", "unobstructed", "unobstructed_obstacles"])
def test_outside_contact_mode_a_turning_diff_drive_takes_irsims_euler_step(mode):
    # IR-SIM's diff update: x += v cos(theta) dt, y += v sin(theta) dt, theta += w dt, at the
    # heading the step starts from; the contact mode's exact arc ends elsewhere
    v, w_, dt, n = 0.8, 1.3, 0.1, 25
    scene = {"world": {"collision_mode": mode, "step_time": dt},
             "robot": [robot("r", 0.0, vel_max=[2, 2], vel_min=[-2, -2], acce=[100, 100])]}
    w = World.from_config(scene)
    x = y = th = 0.0
    for _ in range(n):
        w.step({"r": [v, w_]})
        x, y, th = x + v * np.cos(th) * dt, y + v * np.sin(th) * dt, th + w_ * dt
    np.testing.assert_allclose(w.state("r")[0, :2], (x, y), rtol=0, atol=1e-12)
    assert np.cos(w.state("r")[0, 2] - th) == pytest.approx(1.0, abs=1e-15)
    arc = World.from_config({**scene, "world": {**scene["world"], "collision_mode": "contact",
                                                "friction": 10.0}})
    for _ in range(n):
        arc.step({"r": [v, w_]})
    r = v / w_  # the exact arc's radius: the contact mode ends on the circle, not at (x, y)
    end = arc.state("r")[0]
    np.testing.assert_allclose(end[:2], (r * np.sin(w_ * dt * n), r * (1 - np.cos(w_ * dt * n))),
                               atol=1e-9)
    assert np.hypot(end[0] - x, end[1] - y) > 0.01


def test_outside_contact_mode_a_car_turns_by_the_steering_angle_it_starts_with():
    # IR-SIM's acker: theta += v tan(steer of the state) / wheelbase * dt, and the state's
    # steer then becomes the command: the first step with a new steer goes straight
    v, steer, wb, dt = 1.0, 0.4, 0.6, 0.1
    w = World.from_config({
        "world": {"collision_mode": "stop", "step_time": dt},
        "robot": [{"name": "car", "kinematics": {"name": "acker", "wheelbase": wb},
                   "state": [0, 0, 0, 0], "vel_max": [2, 1], "vel_min": [-2, -1],
                   "acce": [100, 100], "shape": {"name": "circle", "radius": 0.2}}]})
    w.step({"car": [v, steer]})
    np.testing.assert_allclose(w.state("car")[0, :3], (v * dt, 0.0, 0.0), atol=1e-15)
    w.step({"car": [v, steer]})
    turn = v * np.tan(steer) / wb * dt
    np.testing.assert_allclose(w.state("car")[0, :3], (2 * v * dt, 0.0, turn), atol=1e-15)
    w.step({"car": [v, 0.0]})  # straightened: still turns by the 0.4 of its state
    np.testing.assert_allclose(w.state("car")[0, 2], 2 * turn, atol=1e-15)
    w.step({"car": [v, 0.0]})
    np.testing.assert_allclose(w.state("car")[0, 2], 2 * turn, atol=1e-15)


def test_the_modes_step_compiles_first_at_O3_on_an_empty_cache(tmp_path):
    """The modes' step (pipeline.PHYSICS_MODES) compiled alone, first thing in a fresh
    process, at -O3, on an empty cache (fresh_compile.py): what the first step of a user's
    first stop-mode world compiles. With the narrow phase linked into its overlap loop, LLVM
    crashed here (a segmentation fault) for an AMD Zen 3 host; the modes now reach it through
    ``prm[PR_TOUCHFN]`` (collision_modes.py)."""
    out = compile_alone("push_envs.physics.pipeline:PHYSICS_MODES", tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["True"]


def test_a_stop_mode_world_reaches_the_narrow_phase_through_its_address():
    from push_envs.physics.collision_modes import TOUCH
    from push_envs.physics.layout import PR_TOUCHFN

    w = World.from_config({"world": {"collision_mode": "stop"},
                           "robot": [robot("a", 0.0), robot("b", 0.3)]})
    w.step()
    assert w.prm[PR_TOUCHFN] == float(TOUCH.address)
    assert bool(w.collision("a")[0]) and bool(w.stopped("b")[0])
    c = World.from_config({"robot": [robot("a", 0.0)]})
    c.step()
    assert c.prm[PR_TOUCHFN] == 0.0  # contact mode never compiles it
