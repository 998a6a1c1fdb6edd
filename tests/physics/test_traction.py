"""The traction rule (contacts.traction_modes): drives that push one load add their traction,
and only while their own drive pushes into it (DESIGN.md, "Many bodies").

Scene: two 1 kg omni robots (r = 0.15 m) side by side, touching the -x face of a 0.6 m,
1.5 kg box. One robot's traction mu m g = 0.5 * 1 * 9.81 = 4.905 N is less than the box's
ground friction 0.5 * 1.5 * 9.81 = 7.358 N, two robots' 9.81 N more.
"""

from __future__ import annotations

import pytest

MU, G = 0.5, 9.81
TRACTION = MU * 1.0 * G  # one robot [N]
LOAD = MU * 1.5 * G  # the box [N]
V = 0.5  # [m/s] robot a's command
X0 = -0.45  # robots' start x [m]: touching the box face at x = -0.3


def _world(scn, with_b=True):
    robots = [scn.robot("a", X0, -0.15, kin="omni", radius=0.15, mass=1.0)]
    if with_b:
        robots.append(scn.robot("b", X0, 0.15, kin="omni", radius=0.15, mass=1.0))
    box = scn.box("box", 0.0, 0.0, length=0.6, width=0.6, mass=1.5, sensors=scn.CONTACT)
    return scn.world(robots, [box])


def _drive(w, seconds, va, vb=None):
    cmd = {"a": [va, 0.0]}
    if vb is not None:
        cmd["b"] = [vb, 0.0]
    for _ in range(int(round(seconds / w.dt))):
        w.step(cmd)


def test_scene_needs_two_robots():
    assert TRACTION < LOAD <= 2 * TRACTION


def test_idle_robot_beside_the_box_lends_no_traction(scn):
    # Before the fix the idle robot's traction was added: the box moved 5 cm (and turned
    # 0.11 rad) with robot a before the pair lost contact and stalled.
    w = _world(scn)
    _drive(w, 2.0, V, 0.0)
    box = w.state("box")[0]
    assert abs(box[0]) < 1e-6 and abs(box[1]) < 1e-6 and abs(box[2]) < 1e-6
    # Robot a stalls against the face it touches; b has not moved.
    assert w.state("a")[0, 0] == pytest.approx(X0, abs=1e-5)
    assert w.state("b")[0, :2] == pytest.approx([X0, 0.15], abs=1e-9)
    assert abs(w.velocity("box")[0, 0]) < 1e-9


def test_robot_backing_off_lends_no_traction(scn):
    w = _world(scn)
    _drive(w, 2.0, V, -V)
    assert abs(w.state("box")[0, 0]) < 1e-6
    assert w.state("a")[0, 0] == pytest.approx(X0, abs=1e-5)
    # b drives off at 0.5 m/s (its acceleration limit costs about 1 mm in the first step).
    assert w.state("b")[0, 0] == pytest.approx(X0 - V * 2.0, abs=2e-3)


def test_box_stays_put_without_the_second_robot(scn):
    w = _world(scn, with_b=False)
    _drive(w, 2.0, V)
    assert abs(w.state("box")[0, 0]) < 1e-6
    assert w.state("a")[0, 0] == pytest.approx(X0, abs=1e-5)


def test_both_robots_driving_move_the_box_at_their_speed(scn):
    # v t = 1.5 m in 3 s. Tolerance 5 mm: the robots start touching, and the first sub-steps
    # spend a rest tolerance and slop (1e-5 m, 1e-6 m) closing the contact; the measured lag
    # is about 1 mm, the rest a margin for the box's wobble between the two pushes.
    w = _world(scn)
    _drive(w, 3.0, V, V)
    box = w.state("box")[0]
    assert box[0] == pytest.approx(V * 3.0, abs=5e-3)
    assert abs(box[1]) < 0.05 and abs(box[2]) < 0.05
    assert w.state("a")[0, 0] == pytest.approx(X0 + V * 3.0, abs=5e-3)


def test_idle_robot_that_starts_driving_joins_the_push(scn):
    # 1 s with b idle: nothing moves; then 2 s with both at 0.5 m/s: the box travels 1 m.
    w = _world(scn)
    _drive(w, 1.0, V, 0.0)
    assert abs(w.state("box")[0, 0]) < 1e-6
    _drive(w, 2.0, V, V)
    assert w.state("box")[0, 0] == pytest.approx(V * 2.0, abs=5e-3)
