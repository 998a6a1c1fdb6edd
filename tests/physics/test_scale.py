"""Physics at scale (issue 10): driven rows, shared pushing, walls, buffers, honest health.

Every overlap below is measured independently of the engine (tests/physics/overlap.py: SAT
over all body pairs at the final poses), and the engine's ``max_penetration`` is checked
against it. Traction arithmetic: a drive pushes a load while sum(mu m g) of the drives
pushing it covers sum(mu m g) of the bodies the push carries (mu = 0.5, g = 9.81 m/s^2).

Units: metres, seconds, kilograms, newtons.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from overlap import worst_overlap

from push_envs.physics import SolverParams
from push_envs.physics import World
from push_envs.physics.layout import HL_NEED

G = 9.81
MU = 0.5
ANY_STEP = 1e-3  # [m] worst overlap allowed at any step
AT_REST = 1e-4  # [m] worst overlap allowed at rest


def rect(name, x, y, length=0.4, width=0.4, **kw):
    body = {"name": name, "shape": {"name": "rectangle", "length": length, "width": width},
            "state": [x, y, 0.0]}
    body.update(kw)
    return body


def disc(name, x, y, radius, **kw):
    body = {"name": name, "shape": {"name": "circle", "radius": radius}, "state": [x, y, 0.0]}
    body.update(kw)
    return body


def omni(name, x, y, radius=0.2, mass=1.0, **kw):
    body = {"name": name, "kinematics": {"name": "omni"},
            "shape": {"name": "circle", "radius": radius}, "state": [x, y, 0.0], "mass": mass}
    body.update(kw)
    return body


def walls(x0, x1, y0, y1, t=0.2):
    """Static walls around [x0, x1] x [y0, y1]."""
    cx, cy, hx, hy = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
    return [rect("wall_e", x1 + t / 2, cy, t, 2 * hy + 2 * t, static=True),
            rect("wall_w", x0 - t / 2, cy, t, 2 * hy + 2 * t, static=True),
            rect("wall_n", cx, y1 + t / 2, 2 * hx, t, static=True),
            rect("wall_s", cx, y0 - t / 2, 2 * hx, t, static=True)]


def make(robots, obstacles, params=None, **world):
    w = {"step_time": 0.1}
    w.update(world)
    return World.from_config({"world": w, "robot": robots, "obstacle": obstacles},
                             params=params)


def run_checked(w, steps, cmd):
    """Step with ``cmd``; assert no NaN and that max_penetration is the true overlap at every
    step. Returns the worst overlap of any step [m]."""
    worst = 0.0
    for _ in range(steps):
        w.step(cmd)
        assert np.all(np.isfinite(w.pos)) and np.all(np.isfinite(w.vel))
        true = worst_overlap(w)[0]
        assert w.max_penetration[0] == pytest.approx(true, abs=1e-9)
        worst = max(worst, true)
    return worst


def settle(w, steps=20):
    for _ in range(steps):
        w.step({})
    return worst_overlap(w)[0]


# ------------------------------------------------------------------------------ driven rows
def driven_row(n, mass, gap=0.05, wall=False):
    """One 1 kg omni robot (r 0.2 m) behind a row of n 0.4 m boxes set ``gap`` apart."""
    boxes = [rect(f"b{i}", 0.45 + i * (0.4 + gap), 0.0, mass=mass) for i in range(n)]
    end = 0.25 + n * (0.4 + gap) + (0.0 if wall else 10.0)
    return make([omni("r", 0.0, 0.0)], boxes + walls(-1.0, end, -2.0, 2.0))


@pytest.mark.parametrize("n", [6, 10, 20, 50])
def test_light_driven_row_converges(n):
    """0.05 kg boxes: n * 0.05 * 0.5 * 9.81 N against the robot's 4.905 N."""
    w = driven_row(n, 0.05)
    load = n * 0.05 * MU * G
    traction = 1.0 * MU * G
    worst = run_checked(w, 40, {"r": [1.0, 0.0]})
    assert worst < ANY_STEP
    assert int(w.sweeps.max()) <= 32
    if traction >= load * (1 - 1e-12):  # n <= 20: the robot pushes the row at 1 m/s
        free = make([omni("r", 0.0, 0.0)], walls(-1.0, 30.0, -2.0, 2.0))
        for _ in range(40):
            free.step({"r": [1.0, 0.0]})
        assert w.state("r")[0, 0] == pytest.approx(free.state("r")[0, 0], abs=1e-6)
        assert w.state(f"b{n - 1}")[0, 0] > 0.45 + (n - 1) * 0.45 + 1.0
    else:  # n = 50: 12.26 N > 4.905 N, the robot stalls against the row
        assert w.state("r")[0, 0] < 1.3
    assert settle(w) < AT_REST


@pytest.mark.parametrize("n", [1, 2, 20])
def test_heavy_driven_row(n):
    """1 kg boxes, 4.905 N each: one box is pushed (4.905 >= 4.905), two or more stall it."""
    w = driven_row(n, 1.0, gap=0.0)  # touching: the robot meets the whole row at once
    worst = run_checked(w, 30, {"r": [1.0, 0.0]})
    assert worst < ANY_STEP
    if n == 1:
        assert w.state("b0")[0, 0] > 2.0
    else:
        assert w.state(f"b{n - 1}")[0, 0] == pytest.approx(0.45 + (n - 1) * 0.4, abs=1e-5)
        force = sum(r.force for r in w.contacts("r") if r.other == "b0")
        assert force == pytest.approx(MU * 1.0 * G, rel=1e-6)
    assert settle(w) < AT_REST


def test_light_row_pushed_into_wall_stalls_without_overlap():
    w = driven_row(10, 0.05, wall=True)
    worst = run_checked(w, 60, {"r": [1.0, 0.0]})
    assert worst < ANY_STEP
    assert settle(w) < AT_REST
    face = 0.25 + 10 * 0.45
    assert w.state("b9")[0, 0] <= face - 0.2 + 1e-5


# ------------------------------------------------------------------------------ load sharing
def two_robots(n_robots):
    """n 1 kg robots side by side behind one 1.5 kg box (0.4 x 0.8 m)."""
    robots = [omni(f"r{j}", 0.0, -0.2 + 0.4 * j) for j in range(n_robots)]
    box = rect("box", 0.45, 0.0, 0.4, 0.8, mass=1.5, sensors=[{"name": "contact2d"}])
    return make(robots, [box] + walls(-1.0, 6.0, -2.0, 2.0)), {r["name"]: [1.0, 0.0]
                                                               for r in robots}


def test_one_robot_cannot_move_the_box():
    # 1 kg * 0.5 * 9.81 = 4.905 N < 1.5 kg * 0.5 * 9.81 = 7.3575 N: it stalls.
    w, cmd = two_robots(1)
    worst = run_checked(w, 20, cmd)
    assert w.state("box")[0, 0] == pytest.approx(0.45, abs=1e-6)
    assert w.state("r0")[0, 0] < 0.05 + 1e-5  # it closed the 5 cm gap, then stalled
    assert worst < ANY_STEP


def test_two_robots_move_the_box_one_cannot():
    # Together: 2 * 4.905 = 9.81 N >= 7.3575 N: they push it at their 1 m/s.
    w, cmd = two_robots(2)
    worst = run_checked(w, 20, cmd)
    # The box moves as far as the robots do after closing the 5 cm gap.
    assert w.state("box")[0, 0] == pytest.approx(0.45 + w.state("r0")[0, 0] - 0.05, abs=2e-3)
    assert w.state("box")[0, 0] > 2.0
    assert worst < ANY_STEP
    assert settle(w) < AT_REST


def side_rows(robot_mass, rows=2, n=5, box_mass=0.2):
    """Touching rows of n boxes (frictionless side contacts), one robot behind row 0 only."""
    boxes = [rect(f"b{i}_{j}", 0.45 + 0.4 * i, 0.4 * j, mass=box_mass)
             for i in range(n) for j in range(rows)]
    return make([omni("r", 0.0, 0.0, mass=robot_mass)],
                 boxes + walls(-1.0, 8.0, -1.0, 0.4 * rows + 1.0))


def test_side_touching_row_carries_none_of_the_push():
    # Row 0: 5 * 0.2 kg = 1 kg, 4.905 N. Robot: 1.5 kg, 7.3575 N. Row 1 touches row 0 only
    # from the side (normal across the push), so it carries none of it: the robot pushes
    # (7.3575 >= 4.905) although both rows together (9.81 N) would be too much.
    w = side_rows(1.5)
    worst = run_checked(w, 10, {"r": [1.0, 0.0]})
    # Row 0 moves with the robot (after the 5 cm gap); row 1 stays where it was.
    assert w.state("b4_0")[0, 0] == pytest.approx(0.45 + 1.6 + w.state("r")[0, 0] - 0.05,
                                                  abs=1e-4)
    assert worst < ANY_STEP
    assert w.state("b4_1")[0, 0] == pytest.approx(0.45 + 1.6, abs=1e-5)


def block_scene(robot_mass, n=10, wall_x=None):
    """10 x 10 touching 0.1 kg boxes, one robot behind each row (rows of 1 kg, 4.905 N)."""
    boxes = [rect(f"b{i}_{j}", 0.45 + 0.4 * i, 0.4 * j, mass=0.1)
             for i in range(n) for j in range(n)]
    robots = [omni(f"r{j}", 0.0, 0.4 * j, mass=robot_mass) for j in range(n)]
    end = wall_x if wall_x is not None else 30.0
    return make(robots, boxes + walls(-1.0, end, -1.0, 0.4 * n + 1.0)), {
        f"r{j}": [1.0, 0.0] for j in range(n)}


@pytest.mark.parametrize("robot_mass", [1.0, 2.0, 10.0])
def test_block_rows_all_move(robot_mass):
    # Each row: 10 * 0.1 * 0.5 * 9.81 = 4.905 N <= robot mu m g (4.905, 9.81, 49.05 N).
    w, cmd = block_scene(robot_mass)
    for _ in range(5):
        w.step(cmd)
    fronts = np.array([w.state(f"b9_{j}")[0, 0] for j in range(10)])
    assert np.all(fronts > 0.45 + 3.6 + 0.3)  # every row moved (robots: 0.44 m in 5 steps)


def test_block_pushed_into_wall_without_overlap():
    w, cmd = block_scene(2.0, wall_x=7.0)
    worst = run_checked(w, 60, cmd)
    assert worst < ANY_STEP
    assert settle(w) < AT_REST


# ------------------------------------------------------------------------------ never silent
def inside(w, name, x0, x1, y0, y1):
    """Whether body ``name``'s centre of mass lies within [x0, x1] x [y0, y1] [m]."""
    x, y = w.com(name)[0]
    return x0 <= x <= x1 and y0 <= y <= y1


def test_a_step_too_long_for_the_substep_cap_is_taken():
    # Once refused: a 10 s step needs 56 sub-steps of a 0.2 m robot at 1.41 m/s... and more
    # when it meets the walls. Past the cap, continuous collision keeps it inside.
    w = make([omni("r", 0.0, 0.0)], walls(-1.0, 1.0, -1.0, 1.0), step_time=10.0)
    for _ in range(3):
        w.step({"r": [1.0, 1.0]})
        assert inside(w, "r", -0.8 - 1e-5, 0.8 + 1e-5, -0.8 - 1e-5, 0.8 + 1e-5)
    assert int(w.substeps[0]) == 64
    assert w.state("r")[0, 0] > 0.7  # it went as far as the walls let it


def test_tiny_discs_pushed_past_the_cap_stay_inside():
    # 0.1 mm discs pushed at up to 1.41 m/s: 1572 sub-steps by the rule (refused once); at
    # the cap of 64, each pushed disc moves 2.2 mm per sub-step, 22 radii.
    discs = [disc(f"d{i}", 0.21 + 0.0002 * i + 0.0001, 0.0, 1e-4, mass=0.001) for i in range(3)]
    w = make([omni("r", 0.0, 0.0)], discs + walls(-1.0, 1.0, -1.0, 1.0))
    worst = run_checked(w, 20, {"r": [1.0, 0.0]})
    assert int(w.health[0, HL_NEED]) > 64 and int(w.substeps[0]) == 64
    for i in range(3):
        assert inside(w, f"d{i}", -1.0 + 1e-4 - 1e-5, 1.0 - 1e-4 + 1e-5, -1.0, 1.0)
    assert worst < ANY_STEP


def test_row_of_small_light_discs_pushed_into_a_wall_stays_inside():
    # 1 cm, 1 g discs: the sub-steps follow the thinnest body (1 * 0.1 / (0.9 * 0.01) -> 12).
    discs = [disc(f"d{i}", 0.3 + 0.03 * i, 0.0, 0.01, mass=0.001) for i in range(10)]
    w = make([omni("r", 0.0, 0.0)], discs + walls(-1.0, 1.0, -1.0, 1.0))
    worst = run_checked(w, 20, {"r": [1.0, 0.0]})
    assert int(w.substeps[0]) == 12 or int(w.substeps[0]) == 1
    xs = np.array([w.state(f"d{i}")[0, 0] for i in range(10)])
    assert np.all(xs <= 1.0 - 0.01 + 1e-5)
    assert w.state("r")[0, 0] <= 1.0 - 0.2 - 10 * 0.02 + 1e-3
    assert worst < ANY_STEP


@pytest.mark.parametrize("layout, expected", [
    # robot r = 0.2 m at 1 m/s: its own bound is ceil(0.1 / (0.9 * 0.2)) = 1 sub-step
    ("far", 1),       # the 1 cm disc is 1.5 m away: out of reach this step
    ("near", 12),     # 5 cm gap < 0.1 m of travel: ceil(0.1 / (0.9 * 0.01)) = 12
    ("chain", 12),    # the disc is 0.5 m from the robot's rim, but a box between them is
                      # within reach and can reach it: the box passes the robot's speed on
])
def test_substeps_follow_the_speed_a_thin_body_can_reach(layout, expected):
    bodies = {
        "far": [disc("d", 1.7 + 0.01, 0.0, 0.01, mass=0.01)],
        "near": [disc("d", 0.2 + 0.05 + 0.01, 0.0, 0.01, mass=0.01)],
        "chain": [rect("b", 0.2 + 0.05 + 0.2, 0.0, mass=0.2),
                  disc("d", 0.65 + 0.05 + 0.01, 0.0, 0.01, mass=0.01)],
    }[layout]
    w = make([omni("r", 0.0, 0.0)], bodies + walls(-2.0, 2.0, -1.0, 1.0))
    w.step({"r": [1.0, 0.0]})
    assert int(w.substeps[0]) == expected


def test_a_reachable_thin_body_still_counts_when_the_step_starts_apart():
    # A 1 cm disc 9 cm ahead of a 1 m/s robot: the robot reaches it within the step, so the
    # step is split as for the disc (12), and the pushed disc stops at the wall 0.1 m on.
    w = make([omni("r", 0.0, 0.0)], [disc("d", 0.2 + 0.09 + 0.01, 0.0, 0.01, mass=0.01)]
             + walls(-1.0, 0.41, -1.0, 1.0, t=0.02))
    worst = run_checked(w, 10, {"r": [1.0, 0.0]})
    assert int(w.substeps[0]) == 12
    assert w.state("d")[0, 0] <= 0.41 - 0.01 + 1e-5
    assert worst < ANY_STEP


def test_runtime_speed_beyond_the_substep_cap_is_stepped_inside_the_walls():
    # Once a RuntimeError: 1000 m/s would need 2223 sub-steps of a 0.1 m box.
    w = make([], [rect("b", 0.0, 0.0, 0.1, 0.1, mass=1.0)] + walls(-1.0, 1.0, -1.0, 1.0),
             friction=0.0)
    w.set_velocity("b", [1000.0, 0.0])
    for k in range(5):
        w.step()
        if k == 0:
            assert int(w.health[0, HL_NEED]) == 2223
        assert inside(w, "b", -0.95 - 1e-5, 0.95 + 1e-5, -1.0, 1.0)
    assert w.com("b")[0, 0] > 0.9  # it reached the wall


def pile(num):
    return [disc(f"d{i}", -0.9 + 0.2 * (i % 10), -0.9 + 0.2 * (i // 10), 0.09, mass=0.1)
            for i in range(num)]


def test_pair_buffer_grows_instead_of_dropping_contacts():
    obstacles = pile(30) + walls(-1.0, 1.0, -1.0, 1.0)
    robots = [omni("r", 0.7, 0.7, radius=0.15)]
    small = make(robots, obstacles, params=SolverParams(max_pairs=4))
    big = make(robots, obstacles)
    cmd = {"r": [-1.0, -1.0]}
    for _ in range(20):
        small.step(cmd)
        big.step(cmd)
        assert small.state_hash() == big.state_hash()
    assert small.pair_capacity > 4
    assert int(small.pair_overflow[0]) == 0


def test_pile_pushed_into_a_corner():
    # 30 discs (0.1 kg, 1.47 N each; 44.1 N in all) pushed towards the corner by a 10 kg
    # robot (49.05 N >= 44.1 N if it carried them all).
    w = make([omni("r", 0.7, 0.7, radius=0.15, mass=10.0)],
             pile(30) + walls(-1.0, 1.0, -1.0, 1.0))
    worst = run_checked(w, 40, {"r": [-0.7, -0.7]})
    assert worst < ANY_STEP
    assert settle(w) < AT_REST
    for i in range(30):
        x, y = w.state(f"d{i}")[0, :2]
        assert -1.0 + 0.09 - 1e-5 <= x <= 1.0 - 0.09 + 1e-5
        assert -1.0 + 0.09 - 1e-5 <= y <= 1.0 - 0.09 + 1e-5


def test_discs_poured_into_a_funnel():
    seg = {"name": "funnel", "shape": {"name": "linestring",
                                       "vertices": [[-2.0, 2.0], [-0.15, 0.0], [-0.15, -1.0]]},
           "static": True, "state": [0.0, 0.0, 0.0]}
    seg2 = {"name": "funnel2", "shape": {"name": "linestring",
                                         "vertices": [[2.0, 2.0], [0.15, 0.0], [0.15, -1.0]]},
            "static": True, "state": [0.0, 0.0, 0.0]}
    discs = [disc(f"d{i}", -1.2 + 0.24 * (i % 10), 2.2 + 0.24 * (i // 10), 0.1, mass=0.1,
                  velocity=[0.0, -1.0]) for i in range(100)]
    w = make([], discs + [seg, seg2], friction=0.0)
    worst = run_checked(w, 30, None)
    assert worst < ANY_STEP
    assert not math.isnan(float(w.pos.sum()))


# ------------------------------------------------------------------------------ the block at rest
def block_into_wall(box_mass, wall_gap, gap, sides, s=0.3, robot_r=0.15):
    """A 10 x 10 block of touching s = 0.3 m boxes, ten 10 kg omni robots (one per row, 49 N
    of traction each against a row's 10 * 0.5 * 9.81 * box_mass N) ``gap`` behind it, and a
    wall ``wall_gap`` beyond it. ``sides``: "open" (the far wall alone), "box" (an arena
    1 m wider than the block) or "tight" (side walls 1 mm from the block)."""
    boxes = [rect(f"b{i}_{j}", robot_r + gap + s / 2 + s * i, s * j, s, s, mass=box_mass)
             for i in range(10) for j in range(10)]
    robots = [omni(f"r{j}", 0.0, s * j, radius=robot_r, mass=10.0) for j in range(10)]
    end = robot_r + gap + 10 * s + wall_gap
    ws = walls(-1.0, end, -1.0, 10 * s + 1.0)
    if sides == "open":
        ws = [x for x in ws if x["name"] == "wall_e"]
    elif sides == "tight":
        for x in ws:
            if x["name"] == "wall_n":
                x["state"][1] = 9.5 * s + 0.1 + 1e-3
            elif x["name"] == "wall_s":
                x["state"][1] = -s / 2 - 0.1 - 1e-3
    return make(robots, boxes + ws), {f"r{j}": [1.0, 0.0] for j in range(10)}


@pytest.mark.parametrize("box_mass, wall_gap, gap, sides", [
    # The case: 1.24 mm left at rest since the traction rule change (a jam the
    # shock propagation passed back and forth between a wall-backed and a drive-backed chain).
    (0.5, 0.5, 0.05, "box"),
    (0.1, 0.5, 0.05, "box"),
    (0.3, 1.0, 0.05, "tight"),
    (0.1, 0.0, 0.0, "open"),
])
def test_block_pushed_into_a_wall_for_40_steps_rests_without_overlap(box_mass, wall_gap, gap,
                                                                   sides):
    w, cmd = block_into_wall(box_mass, wall_gap, gap, sides)
    for _ in range(40):
        w.step(cmd)
        assert np.all(np.isfinite(w.pos))
    assert settle(w) <= AT_REST
    assert w.max_penetration[0] == pytest.approx(worst_overlap(w)[0], abs=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("box_mass", [0.05, 0.1, 0.3, 1.0])
@pytest.mark.parametrize("wall_gap", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("gap", [0.0, 0.05])
@pytest.mark.parametrize("sides", ["open", "box", "tight"])
def test_block_variants_rest_without_overlap(box_mass, wall_gap, gap, sides):
    w, cmd = block_into_wall(box_mass, wall_gap, gap, sides)
    for _ in range(40):
        w.step(cmd)
    assert settle(w) <= AT_REST
