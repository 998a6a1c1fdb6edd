"""Contact solver (contacts.py, position_solver.py, velocity_solver.py via World): pushing,
collisions, friction cone, torque, flat patches, order independence, tunnelling and
convergence, checked against analytic numbers.

Engine conventions used below: contacts between two movable bodies are frictionless; only a
passive body against an immovable one has (Coulomb) friction, with the mean coefficient.
"""

import math

import numpy as np
import pytest

from push_envs.physics import SolverParams

G = 9.81
MU_G = 0.5 * G  # 4.905 N for 1 kg at the default friction


def force_from(w, name, other):
    reps = [r for r in w.contacts(name) if r.other == other]
    assert len(reps) == 1, f"{name} should touch {other} once, got {w.contacts(name)}"
    return reps[0]


# ------------------------------------------------------------------------------ 2. push
def test_push_box_moves_at_robot_speed_with_force_mu_m_g(scn):
    w = scn.world([scn.robot("robot", -0.4, 0.0)],
                  [scn.box("box", 0.0, 0.0, mass=1.0, sensors=scn.CONTACT)])
    for _ in range(5):
        w.step({"robot": [1.0, 0.0]})
    for _ in range(10):
        w.step({"robot": [1.0, 0.0]})
        assert w.velocity("box")[0] == pytest.approx([1.0, 0.0], abs=1e-6)
        assert w.velocity("robot")[0] == pytest.approx([1.0, 0.0], abs=1e-6)
        assert w.omega("box")[0] == pytest.approx(0.0, abs=1e-9)
        rep = force_from(w, "box", "robot")
        assert rep.force == pytest.approx(MU_G, rel=0.01)
        np.testing.assert_allclose(rep.normal, [1.0, 0.0], atol=1e-9)
    assert w.state("box")[0, 1:] == pytest.approx([0.0, 0.0], abs=1e-12)


def test_push_light_box_force_is_its_own_friction_not_the_cap(scn):
    """A 0.5 kg box at constant speed needs mu m g = 2.4525 N, below the robot's 4.905 N cap:
    the reported force must come from the dynamics, not from the traction cap."""
    w = scn.world([scn.robot("robot", -0.4, 0.0)],
                  [scn.box("box", 0.0, 0.0, mass=0.5, sensors=scn.CONTACT)])
    for _ in range(8):
        w.step({"robot": [1.0, 0.0]})
    assert w.velocity("box")[0, 0] == pytest.approx(1.0, abs=1e-6)
    assert force_from(w, "box", "robot").force == pytest.approx(0.5 * MU_G, rel=0.01)
    assert w.traction("box")[0] == pytest.approx(0.5 * MU_G)


def test_heavy_box_stalls_robot_at_traction_cap(scn):
    w = scn.world([scn.robot("robot", -0.4, 0.0)],
                  [scn.box("box", 0.0, 0.0, mass=5.0, sensors=scn.CONTACT)])
    for _ in range(20):
        w.step({"robot": [1.0, 0.0]})
        assert np.all(np.abs(w.velocity("box")) < 1e-9)
        assert np.all(np.abs(w.velocity("robot")) < 1e-4)
        assert force_from(w, "box", "robot").force == pytest.approx(MU_G, rel=0.01)
    assert w.traction("robot")[0] == pytest.approx(MU_G)
    np.testing.assert_allclose(w.state("box")[0], [0.0, 0.0, 0.0], atol=1e-12)
    assert w.state("robot")[0, 0] == pytest.approx(-0.4, abs=1e-5)


def test_stronger_robot_pushes_heavy_box(scn):
    # Robot traction 0.5 * 6 * 9.81 = 29.4 N > box 24.5 N: it pushes, at full speed.
    w = scn.world([scn.robot("robot", -0.4, 0.0, mass=6.0)],
                  [scn.box("box", 0.0, 0.0, mass=5.0, sensors=scn.CONTACT)])
    scn.run(w, 10, {"robot": [1.0, 0.0]})
    assert w.velocity("box")[0, 0] == pytest.approx(1.0, abs=1e-6)
    assert force_from(w, "box", "robot").force == pytest.approx(5 * MU_G, rel=0.01)


# ------------------------------------------------------------------------------ 3-4. impacts
def _impact(scn, restitution, m_b, b_x=0.5, dt=0.1, steps=None):
    w = scn.world(obstacles=[scn.disc("a", 0.0, 0.0, mass=1.0, velocity=[1.0, 0.0]),
                             scn.disc("b", b_x, 0.0, mass=m_b)],
                  friction=0.0, restitution=restitution, step_time=dt)
    scn.run(w, steps or int(round(0.8 / dt)))
    return w


# b_x: where the resting disc sits. With dt 0.1 the moving disc arrives in 0.05 s sub-steps,
# so 0.5 makes the contact land exactly at gap 0 at the end of a sub-step, 0.500005 within
# the rest tolerance (a gap of 5 um), and the others mid-sub-step with some overlap.
IMPACTS = [(0.5, 0.1), (0.500005, 0.1), (0.517, 0.1), (0.53, 0.1), (0.5, 0.01), (0.517, 0.01)]


@pytest.mark.parametrize("b_x, dt", IMPACTS)
def test_inelastic_impact_common_velocity_and_momentum(scn, b_x, dt):
    w = _impact(scn, 0.0, 3.0, b_x, dt)
    va, vb = w.velocity("a")[0], w.velocity("b")[0]
    p = 1.0 * va + 3.0 * vb
    assert p == pytest.approx([1.0, 0.0], abs=1e-9)
    assert va[0] == pytest.approx(0.25, abs=1e-6)
    assert vb[0] == pytest.approx(0.25, abs=1e-6)
    assert va[1] == 0.0 and vb[1] == 0.0




@pytest.mark.parametrize("b_x, dt", IMPACTS)
def test_elastic_impact_swaps_velocities(scn, b_x, dt):
    w = _impact(scn, 1.0, 1.0, b_x, dt)
    assert w.velocity("a")[0] == pytest.approx([0.0, 0.0], abs=1e-6)
    assert w.velocity("b")[0] == pytest.approx([1.0, 0.0], abs=1e-6)


@pytest.mark.parametrize("b_x, dt", IMPACTS)
def test_elastic_impact_conserves_momentum(scn, b_x, dt):
    w = _impact(scn, 1.0, 1.0, b_x, dt)
    p = w.velocity("a")[0] + w.velocity("b")[0]
    assert p == pytest.approx([1.0, 0.0], abs=1e-9)


def test_partial_restitution_half(scn):
    # e = 0.5, equal masses: v_a = (1 - e) / 2 = 0.25, v_b = (1 + e) / 2 = 0.75.
    w = _impact(scn, 0.5, 1.0, 0.517, 0.1)
    assert w.velocity("a")[0, 0] == pytest.approx(0.25, abs=1e-6)
    assert w.velocity("b")[0, 0] == pytest.approx(0.75, abs=1e-6)


# On a rough floor (mu = 0.5) a disc launched at 2 m/s reaches a wall 0.3 m away at
# v = sqrt(v0^2 - 2 mu g gap) = 1.028 m/s, and how far it comes back depends only on its
# speed leaving the wall: (e v)^2 / (2 mu g). Sized from the speed at the start of the
# sub-step of the impact, before friction had slowed it, the bounce came back 51 % too far
# at dt = 0.1 s (0.163 m against 0.108 m at e = 1).
ROUGH_MU, ROUGH_V0, ROUGH_GAP = 0.5, 2.0, 0.3


def _slide(w, name, steps):
    """Farthest a body comes back after its nearest approach to the wall [m], along x."""
    xs = []
    for _ in range(steps):
        w.step()
        xs.append(float(w.state(name)[0, 0]))
    k = int(np.argmax(xs))
    return xs[k] - min(xs[k:])


@pytest.mark.parametrize("e", [0.3, 0.6, 1.0])
@pytest.mark.parametrize("dt", [0.1, 0.01])
def test_bounce_on_a_rough_floor_comes_back_the_laws_distance(scn, e, dt):
    w = scn.world(obstacles=[scn.disc("a", 0.0, 0.0, mass=1.0, velocity=[ROUGH_V0, 0.0]),
                             scn.wall("wall", 0.1 + ROUGH_GAP + 0.05, 0.0)],
                  friction=ROUGH_MU, restitution=e, step_time=dt)
    v_hit = math.sqrt(ROUGH_V0 ** 2 - 2 * ROUGH_MU * G * ROUGH_GAP)
    law = (e * v_hit) ** 2 / (2 * ROUGH_MU * G)
    assert _slide(w, "a", int(round(3.0 / dt))) == pytest.approx(law, rel=0.01)


@pytest.mark.parametrize("e", [0.5, 1.0])
@pytest.mark.parametrize("dt", [0.1, 0.01])
def test_head_on_on_a_rough_floor_the_struck_disc_slides_the_laws_distance(scn, e, dt):
    # The struck disc leaves at (1 + e) / 2 of the striker's speed at the impact, then slides
    # ((1 + e) v / 2)^2 / (2 mu g).
    w = scn.world(obstacles=[scn.disc("a", 0.0, 0.0, mass=1.0, velocity=[ROUGH_V0, 0.0]),
                             scn.disc("b", 0.2 + ROUGH_GAP, 0.0, mass=1.0)],
                  friction=ROUGH_MU, restitution=e, step_time=dt)
    x0 = float(w.state("b")[0, 0])
    scn.run(w, int(round(3.0 / dt)))
    v_hit = math.sqrt(ROUGH_V0 ** 2 - 2 * ROUGH_MU * G * ROUGH_GAP)
    law = ((1 + e) / 2 * v_hit) ** 2 / (2 * ROUGH_MU * G)
    assert float(w.state("b")[0, 0]) - x0 == pytest.approx(law, rel=0.01)


# ------------------------------------------------------------------------------ 5. friction cone
LOCKED = {"inertia": 1e3}  # rotation locked: isolates the friction cone from tilting


def _cone(scn, angle, steps=20, **box_kw):
    robots, obstacles, n = scn.wedge_against_wall(angle, **box_kw)
    w = scn.world(robots, obstacles)
    b0, r0 = w.state("box")[0].copy(), w.state("robot")[0].copy()
    scn.run(w, steps, {"robot": n.tolist()})
    return w, w.state("box")[0] - b0, w.state("robot")[0] - r0


@pytest.mark.parametrize("angle", [15.0, 25.0])
def test_friction_cone_holds_inside_atan_mu_rotation_locked(scn, angle):
    """Push at angle < atan(0.5) = 26.57 deg from the wall normal: the box sticks, the robot
    stalls, and the wall friction/normal ratio equals tan(angle) (inside the cone)."""
    assert math.degrees(math.atan(0.5)) == pytest.approx(26.565, abs=1e-3)
    w, db, dr = _cone(scn, angle, **LOCKED)
    assert abs(db[1]) < 1e-3 and abs(db[0]) < 1e-3
    assert np.hypot(*dr[:2]) < 1e-3
    assert np.all(np.abs(w.velocity("robot")) < 1e-3)
    wall = force_from(w, "box", "wall")
    assert abs(wall.friction) / wall.force == pytest.approx(math.tan(math.radians(angle)),
                                                            rel=0.02)


@pytest.mark.parametrize("angle", [28.0, 45.0])
def test_friction_cone_slides_outside_atan_mu_rotation_locked(scn, angle):
    _, db, _ = _cone(scn, angle, **LOCKED)
    assert db[1] > 0.05
    assert abs(db[0]) < 1e-3  # along the wall, not into it


def test_friction_cone_slides_outside_free_box(scn):
    _, db, _ = _cone(scn, 45.0)
    assert db[1] > 0.05


def test_friction_cone_holds_inside_free_box(scn):
    w, db, dr = _cone(scn, 15.0)
    assert abs(db[1]) < 1e-3 and abs(db[0]) < 1e-3
    assert abs(db[2]) < 1e-4
    assert np.hypot(*dr[:2]) < 1e-3


def _box_on_wall(scn, offset, steps, **box_kw):
    w = scn.world([scn.robot("robot", -0.2, offset)],
                  [scn.box("box", 0.2, 0.0, mass=1.0, sensors=scn.CONTACT, **box_kw),
                   scn.wall("wall", 0.45, 0.0)])
    thetas = []
    for _ in range(steps):
        w.step({"robot": [1.0, 0.0]})
        thetas.append(w.state("box")[0, 2])
    return w, np.array(thetas)


def test_diff_robot_pushing_box_into_wall_stalls_with_force_capped(scn):
    w, thetas = _box_on_wall(scn, 0.0, 20)
    assert np.all(np.abs(thetas) < 1e-9)
    assert np.all(np.abs(w.velocity("robot")) < 1e-4)
    assert np.all(np.abs(w.velocity("box")) < 1e-4)
    assert w.state("box")[0, 0] == pytest.approx(0.2, abs=1e-5)
    assert force_from(w, "box", "robot").force == pytest.approx(MU_G, rel=0.01)
    assert force_from(w, "robot", "box").force == pytest.approx(MU_G, rel=0.01)


def test_stalled_box_against_wall_is_in_force_balance(scn):
    w, _ = _box_on_wall(scn, 0.0, 20)
    wall = force_from(w, "box", "wall")
    assert wall.force <= MU_G + w.traction("box")[0] + 0.05
    assert np.hypot(*w.net_force("box")[0]) <= w.traction("box")[0] * 1.01


# ------------------------------------------------------------------------------ 6. torque
def test_off_centre_push_turns_box_then_spin_brakes_to_zero(scn):
    w = scn.world([scn.robot("robot", -0.45, 0.1)], [scn.box("box", 0.0, 0.0, mass=1.0)])
    scn.run(w, 6, {"robot": [1.0, 0.0]})
    theta_push = w.state("box")[0, 2]
    # The push at +y off the centre line along +x turns the box clockwise.
    assert theta_push < -0.2
    scn.run(w, 20)  # robot commanded to stop
    assert w.omega("box")[0] == 0.0
    assert np.all(w.velocity("box") == 0.0)
    assert w.state("box")[0, 2] < theta_push  # it kept turning while coasting
    final = w.state("box")[0].copy()
    scn.run(w, 10)
    np.testing.assert_array_equal(w.state("box")[0], final)


def test_centre_push_does_not_turn(scn):
    w = scn.world([scn.robot("robot", -0.45, 0.0)], [scn.box("box", 0.0, 0.0, mass=1.0)])
    scn.run(w, 15, {"robot": [1.0, 0.0]})
    assert w.state("box")[0, 2] == 0.0 and w.omega("box")[0] == 0.0


# ------------------------------------------------------------------------------ 7. flat patch
def test_central_push_into_wall_two_point_patch(scn):
    w, thetas = _box_on_wall(scn, 0.0, 10)
    wall = force_from(w, "box", "wall")
    assert wall.patch.shape == (2, 2)
    np.testing.assert_allclose(wall.patch[:, 0], [0.4, 0.4], atol=1e-5)
    np.testing.assert_allclose(sorted(wall.patch[:, 1]), [-0.2, 0.2], atol=1e-9)
    assert np.all(np.abs(thetas) < 1e-9)


def test_off_centre_push_into_wall_keeps_box_flat(scn):
    # 1e-6 rad: a flat face on a flat wall has no physical reason to tilt at all; 1e-6 only
    # allows for round-off of the 2x2 block solve.
    w, thetas = _box_on_wall(scn, 0.1, 20)
    assert np.all(np.abs(thetas) < 1e-6)
    wall = force_from(w, "box", "wall")
    assert wall.patch.shape == (2, 2)


# ------------------------------------------------------------------------------ 8b. order
def _squeeze(scn, swap):
    robots = [scn.robot("r1", -0.45, 0.0, 0.0), scn.robot("r2", 0.45, 0.0, math.pi)]
    if swap:
        robots = robots[::-1]
    w = scn.world(robots, [scn.box("box", 0.0, 0.0, mass=1.0)])
    traj = scn.run(w, 25, {"r1": [0.5, 0.0], "r2": [0.5, 0.0]})
    return w, traj


def test_symmetric_squeeze_keeps_box_centred_in_any_order(scn):
    w0, t0 = _squeeze(scn, False)
    w1, t1 = _squeeze(scn, True)
    assert np.all(w0.state("box")[0] == 0.0)
    assert np.all(np.abs(w0.velocity("r1")) < 1e-4)  # both stall: 4.905 N each way
    assert w0.state("r1")[0, 0] == pytest.approx(-0.4, abs=1e-5)
    assert w0.state("r2")[0, 0] == pytest.approx(0.4, abs=1e-5)
    for a, b in zip(t0, t1, strict=True):
        for name in a:
            np.testing.assert_array_equal(a[name], b[name])


def _permuted(scn, order):
    robots = {"r1": scn.robot("r1", -1.0, 0.3, 0.0), "r2": scn.robot("r2", 1.2, -0.5, math.pi)}
    boxes = {"a": scn.box("a", 0.0, 0.2, mass=1.0),
             "b": scn.box("b", 0.5, -0.5, 0.3, mass=2.0),
             "c": scn.box("c", -0.3, -0.4, length=0.3, width=0.2, mass=0.5)}
    w = scn.world([robots[n] for n in order[0]], [boxes[n] for n in order[1]])
    return scn.run(w, 60, lambda i: {"r1": [0.8, 0.3 * math.sin(0.2 * i)], "r2": [0.7, -0.2]})


def test_permutation_before_shared_contact_is_identical(scn):
    t0 = _permuted(scn, (("r1", "r2"), ("a", "b", "c")))[:15]
    t1 = _permuted(scn, (("r2", "r1"), ("c", "a", "b")))[:15]
    for a, b in zip(t0, t1, strict=True):
        for name in a:
            np.testing.assert_array_equal(a[name], b[name])


def test_permutation_gives_identical_trajectories(scn):
    t0 = _permuted(scn, (("r1", "r2"), ("a", "b", "c")))
    t1 = _permuted(scn, (("r2", "r1"), ("c", "a", "b")))
    for k, (a, b) in enumerate(zip(t0, t1, strict=True)):
        for name in a:
            assert np.max(np.abs(a[name] - b[name])) <= 1e-12, f"step {k}, body {name}"


# ------------------------------------------------------------------------------ 8c. tunnelling
WALLS = {
    "box": lambda scn: scn.wall("wall", 1.05, 0.0, length=0.1, width=2.0),
    "line": lambda scn: scn.line_wall("wall", (1.0, -1.0), (1.0, 1.0)),
}
BODIES = {
    "box": lambda scn: scn.box("b", 0.0, 0.0, length=0.2, width=0.2, mass=1.0,
                               velocity=[6.0, 0.0]),
    "disc": lambda scn: scn.disc("b", 0.0, 0.0, radius=0.05, mass=1.0, velocity=[6.0, 0.0]),
}
HALF = {"box": 0.1, "disc": 0.05}


@pytest.mark.parametrize("body", sorted(BODIES))
@pytest.mark.parametrize("wall_kind", sorted(WALLS))
@pytest.mark.parametrize("friction", [0.0, 0.5])
def test_no_tunnelling_through_thin_walls(scn, body, wall_kind, friction):
    w = scn.world(obstacles=[BODIES[body](scn), WALLS[wall_kind](scn)], friction=friction)
    limit = 1.0 - HALF[body]  # centre of the body when touching the wall's near face
    xs = [s["b"][0, 0] for s in scn.run(w, 20)]
    assert max(xs) <= limit + 1e-5
    assert xs[-1] == pytest.approx(limit, abs=1e-5)  # it reached the wall (and stopped)
    assert w.velocity("b")[0, 0] <= 1e-4


@pytest.mark.parametrize("body", sorted(BODIES))
def test_no_tunnelling_through_one_cell_grid_wall(scn, body):
    occ = np.zeros((30, 20), bool)
    occ[10, :] = True  # one 0.1 m cell thick, x in [1.0, 1.1]
    spec = BODIES[body](scn)
    spec["state"] = [0.3, 1.0, 0.0]
    w = scn.world(obstacles=[spec], friction=0.0, obstacle_map=occ.tolist(),
                  map_resolution=0.1)
    assert w.names == ["b", "map"]
    xs = [s["b"][0, 0] for s in scn.run(w, 20)]
    assert max(xs) <= 1.0 - HALF[body] + 1e-5
    assert xs[-1] == pytest.approx(1.0 - HALF[body], abs=1e-5)


def test_fast_robot_does_not_tunnel(scn):
    w = scn.world([scn.robot("robot", 0.0, 0.0, radius=0.05, vel_max=[8.0, 1.0],
                             friction=50.0)],
                  [scn.line_wall("wall", (1.0, -1.0), (1.0, 1.0))])
    xs = [s["robot"][0, 0] for s in scn.run(w, 20, {"robot": [8.0, 0.0]})]
    assert max(xs) <= 0.95 + 1e-5
    assert w.substeps[0] > 1


# ------------------------------------------------------------------------------ 8d. convergence
def _chain(scn, params=None, v=0.3, steps=30):
    boxes = [scn.box(f"b{i}", 0.2 + 0.4 * i, 0.0, mass=1.0) for i in range(5)]
    # 6 kg robot: traction 29.4 N > the chain's 24.5 N, so it pushes the whole chain.
    w = scn.world([scn.robot("robot", -0.2, 0.0, mass=6.0)], boxes, params=params)
    worst_engine = worst_pair = 0.0
    for _ in range(steps):
        w.step({"robot": [v, 0.0]})
        xs = np.array([w.state(f"b{i}")[0, 0] for i in range(5)])
        gaps = np.diff(xs) - 0.4
        robot_gap = xs[0] - 0.2 - (w.state("robot")[0, 0] + 0.2)
        worst_pair = max(worst_pair, -gaps.min(), -robot_gap)
        worst_engine = max(worst_engine, w.max_penetration[0])
    return w, worst_engine, worst_pair


def test_pushed_chain_overlap_below_0p1mm(scn):
    _, worst_engine, worst_pair = _chain(scn)
    assert worst_engine < 1e-4
    assert worst_pair < 1e-4


def test_pushed_chain_converges_with_more_sweeps(scn):
    _, worst_engine, worst_pair = _chain(scn, SolverParams(max_sweeps=256))
    assert worst_engine < 1e-4 and worst_pair < 1e-4


def test_pushed_chain_advances_at_robot_speed(scn):
    w, _, _ = _chain(scn)
    x0 = np.array([w.state(f"b{i}")[0, 0] for i in range(5)])
    w.step({"robot": [0.3, 0.0]})
    x1 = np.array([w.state(f"b{i}")[0, 0] for i in range(5)])
    np.testing.assert_allclose((x1 - x0) / 0.1, 0.3, atol=1e-6)


def test_pushed_chain_reported_velocity_equals_motion(scn):
    w, _, _ = _chain(scn)
    for i in range(5):
        assert w.velocity(f"b{i}")[0, 0] == pytest.approx(0.3, abs=1e-6)


# ------------------------------------------------------------------------------ corners
def _corner(scn, robots):
    """A 0.3 m box in the corner of an east wall (face x = 0.15) and a north wall (face
    y = 0.15), touching both."""
    obstacles = [scn.box("box", 0.0, 0.0, mass=1.0, length=0.3, width=0.3),
                 scn.wall("we", 0.2, 0.0, length=0.1, width=2.0),
                 scn.wall("wn", -0.5, 0.2, length=1.3, width=0.1)]
    return scn.world(robots, obstacles)


def test_robot_grazing_a_wall_pushing_box_into_corner_stalls(scn):
    # The robot (r 0.15 at y 0) also touches the north wall, tangentially.
    w = _corner(scn, [scn.robot("ra", -0.3, 0.0, 0.0, radius=0.15)])
    for _ in range(20):
        w.step({"ra": [1.0, 0.0]})
        assert w.max_penetration[0] < 1e-4
        assert np.hypot(*w.state("box")[0, :2]) < 1e-4
        assert w.state("ra")[0, 0] == pytest.approx(-0.3, abs=1e-4)


def test_two_robots_pushing_box_into_corner_stall(scn):
    w = _corner(scn, [scn.robot("ra", -0.3, 0.0, 0.0, radius=0.15),
                      scn.robot("rb", 0.0, -0.3, math.pi / 2, radius=0.15)])
    for _ in range(20):
        w.step({"ra": [1.0, 0.0], "rb": [1.0, 0.0]})
        assert w.max_penetration[0] < 1e-4
    assert np.hypot(*w.state("box")[0, :2]) < 1e-4


def test_robot_clear_of_walls_pushing_box_into_corner_stalls(scn):
    # Same corner, but the robot is 1 cm below the north wall's face: it stalls cleanly.
    w = _corner(scn, [scn.robot("ra", -0.3, -0.01, 0.0, radius=0.15)])
    for _ in range(20):
        w.step({"ra": [1.0, 0.0]})
        assert w.max_penetration[0] < 1e-4
    assert np.hypot(*w.state("box")[0, :2]) < 1e-4
    assert w.state("ra")[0, 0] == pytest.approx(-0.3, abs=1e-4)
