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
