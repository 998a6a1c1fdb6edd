"""contact2d readings (sensors.py via World): sides, raisim frame, impulses, touching-only,
fixed-size arrays."""

import numpy as np
import pytest

MU_G = 0.5 * 9.81


def pushing(scn, steps=6, num_envs=1):
    w = scn.world([scn.robot("robot", -0.4, 0.0)],
                  [scn.box("box", 0.0, 0.0, mass=1.0, sensors=scn.CONTACT)], num_envs=num_envs)
    for _ in range(steps):
        w.step({"robot": [1.0, 0.0]})
    return w


def only(reports):
    assert len(reports) == 1, reports
    return reports[0]


def test_normal_points_from_other_toward_owner(scn):
    w = pushing(scn)
    on_box = only(w.contacts("box"))
    on_robot = only(w.contacts("robot"))
    assert on_box.other == "robot" and on_robot.other == "box"
    np.testing.assert_allclose(on_box.normal, [1.0, 0.0], atol=1e-12)  # pushed toward +x
    np.testing.assert_allclose(on_robot.normal, [-1.0, 0.0], atol=1e-12)
    assert on_box.pair_index == w.names.index("robot")
    assert on_robot.pair_index == w.names.index("box")
    # The contact point lies on the box's left face, between the two bodies.
    box_left = w.state("box")[0, 0] - 0.2
    assert on_box.point[0] == pytest.approx(box_left, abs=0.05)
    assert on_box.point[1] == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_array_equal(on_box.point, on_robot.point)


def test_b_report_is_a_report_negated_and_frame_is_shared(scn):
    w = pushing(scn)
    on_box = only(w.contacts("box"))
    on_robot = only(w.contacts("robot"))
    assert on_box.is_object_a != on_robot.is_object_a
    a, b = (on_box, on_robot) if on_box.is_object_a else (on_robot, on_box)
    np.testing.assert_array_equal(a.frame, b.frame)
    np.testing.assert_array_equal(a.impulse, b.impulse)
    np.testing.assert_array_equal(b.own_impulse, -a.own_impulse)
    np.testing.assert_array_equal(a.own_impulse, a.impulse)
    # Frame normal (third row) points from B toward A, i.e. it is A's own normal.
    np.testing.assert_allclose(a.frame[2, :2], a.normal, atol=1e-15)
    np.testing.assert_allclose(b.frame[2, :2], -b.normal, atol=1e-15)
    # Each side's friction is along its own tangent (-n_y, n_x), which flips with the normal,
    # so equal and opposite forces have equal scalars.
    assert a.force == b.force and a.friction == b.friction


def test_raisim_frame_is_right_handed_rotation(scn):
    w = scn.world(obstacles=[scn.disc("d", 0.0, 0.0, mass=1.0, velocity=[0.6, 0.8],
                                      sensors=scn.CONTACT, friction=0.0),
                             scn.disc("e", 0.15, 0.2, mass=1.0, sensors=scn.CONTACT)],
                  friction=0.0)
    w.step()
    rep = only(w.contacts("d"))
    f = rep.frame
    np.testing.assert_allclose(f @ f.T, np.eye(3), atol=1e-14)
    assert np.linalg.det(f) == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_allclose(np.cross(f[0], f[1]), f[2], atol=1e-14)
    n_a = rep.normal if rep.is_object_a else -rep.normal
    np.testing.assert_allclose(f[2], [n_a[0], n_a[1], 0.0], atol=1e-15)
    np.testing.assert_allclose(np.abs(f[2, :2]), [0.6, 0.8], atol=1e-9)


def test_impulse_normal_component_is_force_times_dt(scn):
    w = pushing(scn)
    for rep in w.contacts("box") + w.contacts("robot"):
        assert rep.impulse[2] == pytest.approx(rep.force * w.dt, rel=1e-12)
        assert rep.impulse[0] == pytest.approx(rep.friction * w.dt, rel=1e-12, abs=1e-15)
        assert rep.impulse[1] == 0.0
        assert rep.force == pytest.approx(MU_G, rel=0.01)


def test_wall_friction_report(scn):
    # A box sliding along a wall face while pressed into it: friction opposes the sliding.
    # (45 deg wedge, rotation locked: see test_solver's friction-cone tests.)
    robots, obstacles, n = scn.wedge_against_wall(45.0, inertia=1e3)
    w = scn.world(robots, obstacles)
    y0 = w.state("box")[0, 1]
    for _ in range(5):
        w.step({"robot": n.tolist()})
    assert w.state("box")[0, 1] - y0 > 0.05  # sliding up along the wall
    rep = only([r for r in w.contacts("box") if r.other == "wall"])
    np.testing.assert_allclose(rep.normal, [-1.0, 0.0], atol=1e-9)
    tangent = np.array([-rep.normal[1], rep.normal[0]])  # (0, -1)
    assert rep.friction > 0.0  # along the tangent (0, -1): against the +y slide
    assert rep.friction * (w.velocity("box")[0] @ tangent) <= 0.0
    # Sliding: kinetic friction is at the cone's edge, mu = 0.5.
    assert rep.friction == pytest.approx(0.5 * rep.force, rel=0.01)
    # The wall's own report: the reaction, with the same scalars along its own tangent.
    other = only([r for r in w.contacts("wall") if r.other == "box"])
    np.testing.assert_allclose(other.normal, -rep.normal)
    assert other.force == rep.force and other.friction == rep.friction


def test_only_touching_contacts_are_reported(scn):
    # A box resting 1 mm from a wall and a disc 1 mm from the box: no reports at all.
    w = scn.world(obstacles=[scn.box("box", 0.0, 0.0, mass=1.0, sensors=scn.CONTACT),
                             scn.wall("wall", 0.251, 0.0),
                             scn.disc("disc", -0.301, 0.0, mass=1.0, sensors=scn.CONTACT)])
    for _ in range(3):
        w.step()
        assert w.contacts("box") == [] and w.contacts("disc") == []
        assert not w.in_contact("box")[0]
        assert w.contact_array("box")[1][0] == 0
    assert w.ctn[0] == 0


def test_resting_exact_touch_is_reported_with_zero_force(scn):
    w = scn.world(obstacles=[scn.box("box", 0.0, 0.0, mass=1.0, sensors=scn.CONTACT),
                             scn.wall("wall", 0.25, 0.0)])
    w.step()
    rep = only(w.contacts("box"))
    assert rep.other == "wall" and rep.depth <= 0.0
    assert rep.force == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(rep.normal, [-1.0, 0.0], atol=1e-15)
    assert rep.patch.shape == (2, 2)


def test_contact_array_shape_count_and_order(scn):
    # Box held between a pushing robot (4.905 N) and a resting neighbour, 3 envs.
    w = scn.world([scn.robot("robot", -0.4, 0.0)],
                  [scn.box("box", 0.0, 0.0, mass=1.0, sensors=scn.CONTACT),
                   scn.box("far", 3.0, 3.0, mass=1.0)], num_envs=3)
    w.set_state("robot", [-2.0, 0.0, 0.0], env=2)  # env 2: not touching
    for _ in range(4):
        w.step({"robot": [1.0, 0.0]})
    arr, count = w.contact_array("box", max_contacts=3)
    assert arr.shape == (3, 3, 8) and count.shape == (3,)
    np.testing.assert_array_equal(count, [1, 1, 0])
    for e in (0, 1):
        row = arr[e, 0]
        assert row[0] == 1.0
        np.testing.assert_allclose(row[1:3], [1.0, 0.0], atol=1e-12)
        assert row[3] == pytest.approx(MU_G, rel=0.01)
        assert row[7] == w.names.index("robot")
        np.testing.assert_array_equal(arr[e, 1:], 0.0)
    np.testing.assert_array_equal(arr[2], 0.0)
    np.testing.assert_array_equal(w.in_contact("box"), [True, True, False])
    rep = only(w.contacts("box", env=0))
    np.testing.assert_allclose(arr[0, 0, 4:6], rep.point)
    assert arr[0, 0, 6] == rep.depth


def test_contact_array_keeps_largest_forces(scn):
    # A box wedged by two pushing robots against a wall: 3 contacts, array of 2 keeps the two
    # largest-force ones and count says 3.
    w = scn.world([scn.robot("r1", -0.4, 0.1), scn.robot("r2", -0.25, -0.15, radius=0.05)],
                  [scn.box("box", 0.0, 0.0, mass=1.0, sensors=scn.CONTACT),
                   scn.wall("wall", 0.25, 0.0)])
    for _ in range(5):
        w.step({"r1": [1.0, 0.0], "r2": [1.0, 0.0]})
    reps = w.contacts("box")
    arr, count = w.contact_array("box", max_contacts=2)
    assert count[0] == len(reps)
    forces = sorted((r.force for r in reps), reverse=True)
    np.testing.assert_allclose(arr[0, :, 3], forces[:2])


def test_net_force_on_pushed_box(scn):
    w = pushing(scn)
    np.testing.assert_allclose(w.net_force("box")[0], [MU_G, 0.0], rtol=0.01, atol=1e-9)
    np.testing.assert_allclose(w.net_force("robot")[0], [-MU_G, 0.0], rtol=0.01, atol=1e-9)
