"""Sleeping (physics/sleeping.py): bodies at rest sleep, wake as islands when an awake body's
reach meets them, and a rollout is bit-identical with sleeping on or off.

Units: metres, seconds, kilograms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from overlap import worst_overlap

from push_envs.physics.sleeping import SLEEP_MIN_BODIES
from push_envs.physics.sleeping import WAKE_HOLD

ANY_STEP = 1e-3  # [m]


def far_boxes(scn, n=25):
    """A resting 5 x 5 block of boxes (0.2 m apart) far from the action: with them a scene
    has over 24 movable bodies, so the broad phase runs its sort-and-sweep."""
    return [scn.box(f"f{i}", -4.0 + 0.6 * (i % 5), 2.0 + 0.6 * (i // 5), mass=0.5)
            for i in range(n)]


def twins(scn, robots, obstacles):
    """The same scene twice: sleeping on and off (each the default on one side of
    SLEEP_MIN_BODIES movable bodies)."""
    on, off = scn.world(robots, obstacles), scn.world(robots, obstacles)
    assert on.sleeping == (len(on.scene.movable) >= SLEEP_MIN_BODIES)
    on.sleeping = True
    off.sleeping = False
    return on, off


def pusher(scn, x):
    return scn.robot("r", x, 0.0, kin="omni", sensors=False, mass=1.0)


def contacts(w):
    """The touching contacts of the last step as a sorted list of rows (pair, then floats)."""
    n = int(w.ctn[0])
    return sorted(tuple(w.cti[0, c]) + tuple(w.ctf[0, c]) for c in range(n))


def step_both(on, off, cmd):
    on.step(cmd)
    off.step(cmd)
    assert on.state_hash() == off.state_hash()
    assert contacts(on) == contacts(off)
    assert on.max_penetration[0] == off.max_penetration[0]
    assert int(off.asleep[0]) == 0


def test_sleeping_body_wakes_when_pushed_exactly_as_without_sleeping(scn):
    # A robot at 1 m/s reaches box b0 (1 m ahead) in its 5th step; the row b0..b2 has 0.2 m
    # gaps, so each box wakes only when the pushed one before it comes within reach.
    row = [scn.box(f"b{i}", 0.6 * i, 0.0, mass=0.05) for i in range(3)]
    on, off = twins(scn, [pusher(scn, -1.0)], row + far_boxes(scn))
    cmd = {"r": [1.0, 0.0]}
    b0 = on.index("b0")
    moved_on = moved_off = None
    asleep = []
    for k in range(40):
        x_on, x_off = on.pos[0, b0, 0], off.pos[0, b0, 0]
        step_both(on, off, cmd)
        asleep.append(int(on.asleep[0]))
        if moved_on is None and on.pos[0, b0, 0] != x_on:
            moved_on = k
        if moved_off is None and off.pos[0, b0, 0] != x_off:
            moved_off = k
    assert moved_on is not None and moved_on == moved_off
    # Everything passive sleeps after the first step until the robot comes near the row ...
    assert asleep[1] == 28
    # ... and the far block sleeps throughout, while the pushed row is awake.
    assert asleep[-1] == 25
    assert on.pos[0, on.index("b2"), 0] > 1.2 + 0.5
    assert worst_overlap(on)[0] < ANY_STEP


def test_pile_that_settles_goes_to_sleep(scn):
    # Twelve discs thrown at each other in a walled box: collisions, then ground friction
    # (mu 0.5) stops them exactly; once all are still, all sleep.
    rng = np.random.default_rng(3)
    discs = [scn.disc(f"d{i}", -0.75 + 0.5 * (i % 4), -0.5 + 0.5 * (i // 4), mass=0.2,
                  velocity=[float(v) for v in rng.uniform(-2.0, 2.0, 2)]) for i in range(12)]
    on, off = twins(scn, [], discs + scn.arena_walls(1.0, 1.0))
    asleep = []
    for _ in range(40):
        step_both(on, off, None)
        asleep.append(int(on.asleep[0]))
    assert asleep[0] == 0  # thrown: all awake
    assert asleep[-1] == 12
    assert all(on.at_rest(f"d{i}")[0] for i in range(12))
    assert np.all(on.vel == 0.0) and np.all(on.omg == 0.0)
    assert worst_overlap(on)[0] < 1e-4


def test_chain_of_sleeping_boxes_wakes_as_an_island(scn):
    # Six touching light boxes (gap 1 um, within the rest tolerance) sleep; the robot's reach
    # (its travel, 0.1 m a step) meets only b0, yet the whole chain wakes in that step,
    # and the chain moves together. A lone box farther on sleeps on.
    chain = [scn.box(f"b{i}", 0.4000001 * i, 0.0, mass=0.05) for i in range(6)]
    lone = [scn.box("lone", 6.0, 0.0, mass=0.05)]
    on, off = twins(scn, [pusher(scn, -0.75)], chain + lone + far_boxes(scn))
    cmd = {"r": [1.0, 0.0]}
    counts = []
    for _ in range(12):
        step_both(on, off, cmd)
        counts.append(int(on.asleep[0]))
    assert counts[1] == 32
    woke = next(k for k in range(1, len(counts)) if counts[k] < 32)
    assert counts[woke] == 26  # all six at once: the far block and the lone box sleep on
    assert counts[-1] == 26
    b5 = on.index("b5")
    assert on.pos[0, b5, 0] > 5 * 0.4000001 + 0.1
    assert worst_overlap(on)[0] < ANY_STEP


def test_body_moved_from_outside_is_awake(scn):
    # Two sleeping boxes; one is placed 5 cm into the other by set_state, the other grown
    # into its neighbour by set_scale. Neither may stay asleep in an overlap.
    boxes = [scn.box("a", 0.0, 0.0, mass=0.5), scn.box("b", 1.0, 0.0, mass=0.5),
             scn.box("c", 0.0, 1.0, mass=0.5), scn.box("d", 0.41, 1.0, mass=0.5)]
    on, off = twins(scn, [], boxes + scn.arena_walls(3.0, 3.0))
    for _ in range(3):
        step_both(on, off, None)
    assert int(on.asleep[0]) == 4
    for w in (on, off):
        w.set_state("b", [0.35, 0.0, 0.0])
        w.set_scale("c", 1.1)  # half-width 0.22: 3 cm into d
    assert worst_overlap(on)[0] > 0.02
    step_both(on, off, None)
    assert worst_overlap(on)[0] < ANY_STEP


def test_sleeping_flag_is_checked(scn):
    on = scn.world([], [scn.box("a", 0.0, 0.0, mass=0.5)])
    with pytest.raises(ValueError, match="sleeping"):
        on.sleeping = 1


def crowd(scn, cols=20, rows=15, robots=5):
    """``robots`` 5 kg omni robots below a cols x rows grid of 0.3 m boxes 0.25 m apart (a
    woken box's fattened reach does not span the gap, so a push wakes its column, not the
    grid), with walls; a few boxes rest against the walls and against each other."""
    boxes = [scn.box(f"b{i}_{j}", -5.2 + 0.55 * i, -1.0 + 0.55 * j, length=0.3, width=0.3,
                     mass=0.4) for i in range(cols) for j in range(rows)]
    # A touching pair and a box flat on the east wall: contacts that freeze while asleep.
    boxes += [scn.box("t0", 4.0, 7.3, mass=0.4), scn.box("t1", 4.4, 7.3, mass=0.4),
              scn.box("w0", 6.0 - 0.2, -3.0, mass=0.4)]
    bots = [scn.robot(f"r{k}", -4.65 + 2.2 * k, -1.8, kin="omni", mass=5.0, sensors=False)
            for k in range(robots)]
    return bots, boxes + scn.arena_walls(6.0, 7.5)


def test_crowd_is_the_same_with_sleeping_on_and_off(scn):
    # Robots drive up into the grid and sideways: boxes wake as the pushes reach them, whole
    # pushed columns move, the rest sleep on; every step the same bits and the same contacts.
    bots, obstacles = crowd(scn)
    on, off = twins(scn, bots, obstacles)

    def cmd(i):
        return {f"r{k}": [0.3 * math.sin(0.1 * i + k), 1.0] for k in range(5)}

    asleep = []
    for i in range(40):
        step_both(on, off, cmd(i))
        asleep.append(int(on.asleep[0]))
    nm = len(on.scene.movable)
    assert asleep[1] == nm - 5  # all but the robots, once they rested a step
    # Pushed boxes are awake, and so are their neighbours the pushes' reach woke in the
    # last WAKE_HOLD sub-steps; most of the grid sleeps.
    assert 150 < asleep[-1] < nm - 20
    # The sleepers' resting contacts are reported while they sleep.
    assert {r.other for r in on.contacts("t0")} == {"t1", "wall_n"}
    assert {r.other for r in on.contacts("w0")} == {"wall_e"}
    assert worst_overlap(on)[0] < ANY_STEP


def test_envs_of_a_batch_sleep_apart(scn):
    # Three envs, three commands (idle, pushing, pushing elsewhere): each env sleeps its own
    # bodies and equals a single world given its commands, bit for bit.
    bots, obstacles = crowd(scn, cols=10, rows=6, robots=2)
    batch = scn.world(bots, obstacles, num_envs=3)
    singles = [scn.world(bots, obstacles) for _ in range(3)]
    speeds = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]])  # per env: robot r0, r1 [m/s]
    for _i in range(40):
        cmds = [{f"r{k}": [0.0, speeds[e, k]] for k in range(2)} for e in range(3)]
        batch.step({f"r{k}": np.array([[0.0, speeds[e, k]] for e in range(3)])
                    for k in range(2)})
        for e in range(3):
            singles[e].step(cmds[e])
    for e in range(3):
        for a in ("pos", "ang", "vel", "omg", "drv"):
            assert getattr(batch, a)[e].tobytes() == getattr(singles[e], a)[0].tobytes()
        assert int(batch.asleep[e]) == int(singles[e].asleep[0])
    counts = [int(batch.asleep[e]) for e in range(3)]
    assert counts[0] > counts[2] > counts[1]  # idle env: all asleep; two pushes wake most


@pytest.mark.parametrize("how", ["set_velocity", "set_omega", "pos", "reset"])
def test_sleeper_woken_from_outside_moves_as_without_sleeping(scn, how):
    bots, obstacles = crowd(scn, cols=8, rows=4, robots=1)
    on, off = twins(scn, bots, obstacles)
    for _ in range(3):
        step_both(on, off, None)
    assert on.at_rest("b3_2")[0] and int(on.asleep[0]) == len(on.scene.movable) - 1
    for w in (on, off):
        if how == "set_velocity":
            w.set_velocity("b3_2", [0.5, 0.2])
        elif how == "set_omega":
            w.set_omega("b3_2", 3.0)
        elif how == "pos":  # written straight into the state, no setter
            w.pos[0, w.index("b3_2"), 0] += 0.05
        else:
            w.reset()
    for _ in range(10):
        step_both(on, off, None)
    assert worst_overlap(on)[0] < ANY_STEP


def test_sleepers_cost_nothing_per_step(scn):
    # 283 resting boxes and one robot driving in open space: with the sleepers out of every
    # stage, a step lists only the robot's own pairs (none), whatever the crowd.
    bots, obstacles = crowd(scn, cols=20, rows=14, robots=1)
    w = scn.world(bots, obstacles)
    for _ in range(3):
        w.step({"r0": [-1.0, 0.0]})
    assert int(w.asleep[0]) == len(w.scene.movable) - 1
    from push_envs.physics.layout import SC_AWAKE
    from push_envs.physics.layout import SC_LEN
    counts = w._stamp.shape[1] - SC_LEN
    assert w._stamp[0, counts + SC_AWAKE] == 1  # the robot alone walks the stages


def test_body_woken_by_a_passing_reach_stays_awake_for_the_hold(scn):
    # A robot drives past a resting box with 5 cm to spare (centre lines 0.45 m apart; box
    # half-width and robot radius 0.2 m): its reach (its travel in a sub-step) wakes the box,
    # which it never touches. The robot is past within about ten sub-steps; the box stays
    # awake for the wake's sub-step and WAKE_HOLD more (without the hold it fell asleep and
    # woke again at each of those ten), then sleeps for good; the rollout is the same bits
    # as without sleeping.
    side = [scn.box("side", 1.0, 0.45, mass=0.5)]
    on, off = twins(scn, [pusher(scn, -0.5)], side + far_boxes(scn))
    cmd = {"r": [1.0, 0.0]}
    awake = []  # per step (of one sub-step each): the side box awake in it
    for _ in range(60):
        step_both(on, off, cmd)
        assert int(on.substeps[0]) == 1
        awake.append(int(on.asleep[0]) == 25)  # the far block's 25 asleep, the side box not
    assert on.pos[0, on.index("side")].tolist() == [1.0, 0.45]  # never touched
    first = awake.index(True)
    span = awake[first:].index(False)
    assert first > 0
    assert span == WAKE_HOLD + 1
    assert not any(awake[first + span:])
