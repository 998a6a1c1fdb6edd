"""The behaviour stage in World.step: a batch equals single worlds bit for bit, a command
overrides a behaviour, a body without one holds still, and the stage costs nothing to a
world without goals."""

from __future__ import annotations

import math

import numpy as np
import pytest

STATE = ("pos", "ang", "vel", "omg", "drv")


def _mixed(bw, num_envs):
    """A world running every built-in behaviour: rvo and dash diffs, sfm omnis, an orca
    group, an acker dash, a sfm group, a wall and a line string."""
    robots = []
    for k in range(4):
        a = 2 * math.pi * k / 4
        robots.append(bw.diff(f"rvo{k}", 5 + 3 * math.cos(a), 5 + 3 * math.sin(a), a + math.pi,
                              goal=[5 - 3 * math.cos(a), 5 - 3 * math.sin(a), 0.0],
                              behavior={"name": "rvo", "vxmax": 1.0, "vymax": 1.0,
                                        "neighbor_threshold": 5.0},
                              vel_min=[-2, -2], vel_max=[2, 2]))
    robots.append(bw.omni("sfm0", 1, 9, goal=[9, 1, 0], behavior={"name": "sfm", "vmax": 0.8}))
    robots.append(bw.omni("sfm1", 9, 9, goal=[1, 1, 0], behavior={"name": "sfm", "vmax": 0.8}))
    orca = {"name": "orca", "neighborDist": 6.0, "timeHorizon": 3.0, "safe_radius": 0.1}
    for k in range(3):
        robots.append(bw.omni(f"orca{k}", 12 + 2 * k, 2, goal=[16 - 2 * k, 8, 0], group=7,
                              group_behavior=orca))
    robots.append({"name": "car", "kinematics": {"name": "acker", "wheelbase": 0.5},
                   "shape": {"name": "rectangle", "length": 0.8, "width": 0.4},
                   "state": [2, 14, 0, 0], "goal": [[8, 16, 0], [2, 18, 0]],
                   "behavior": {"name": "dash"}, "vel_max": [1, 0.6], "vel_min": [-1, -0.6]})
    sfm_group = {"name": "sfm", "vmax": 0.7, "social_groups": [[0, 1]]}
    for k in range(2):
        robots.append(bw.diff(f"walker{k}", 14 + k, 14, 0.0, goal=[20, 18 + k, 0], group=9,
                              group_behavior=sfm_group))
    obstacles = [{"name": "wall", "shape": {"name": "rectangle", "length": 0.4, "width": 3.0},
                  "state": [11, 12, 0]},
                 {"name": "line", "shape": {"name": "linestring",
                                            "vertices": [[0, 12], [6, 12]]}, "static": True}]
    return bw.world(robots, obstacles, num_envs=num_envs)


def _perturb(world, env, rng):
    """Move every movable body a little in ``env`` (so each env of a batch differs)."""
    for name in world.names:
        i = world.index(name)
        if i not in world.scene.movable:
            continue
        s = world.state(name)[env].copy()
        s[:2] += rng.uniform(-0.2, 0.2, 2)
        world.set_state(name, s, env=env)


def test_batch_is_bit_identical_to_single_worlds(bw):
    steps = 60
    batch = _mixed(bw, 3)
    singles = [_mixed(bw, 1) for _ in range(3)]
    for e in range(3):
        _perturb(batch, e, np.random.default_rng(e))
        _perturb(singles[e], 0, np.random.default_rng(e))
        batch.behaviours.arrays.start[e] = singles[e].behaviours.arrays.start[0]
    for _ in range(steps):
        batch.step()
        for w in singles:
            w.step()
    for e, w in enumerate(singles):
        for f in STATE:
            np.testing.assert_array_equal(getattr(batch, f)[e], getattr(w, f)[0], err_msg=f)
        for name in batch.names:
            np.testing.assert_array_equal(batch.goal(name)[e], w.goal(name)[0])
            assert batch.arrived(name)[e] == w.arrived(name)[0]
    # the behaviours moved the bodies, differently per env
    assert not np.array_equal(batch.pos[0], batch.pos[1])
    assert np.hypot(*(batch.state("rvo0")[0, :2] - [5 + 3, 5])) > 1.0


def test_parallel_batch_equals_serial(bw):
    """prange over chunks of envs (16 and more) steps each env as the serial kernel does."""
    big = _mixed(bw, 17)
    small = _mixed(bw, 1)
    for _ in range(25):
        big.step()
        small.step()
    for f in STATE:
        for e in (0, 16):
            np.testing.assert_array_equal(getattr(big, f)[e], getattr(small, f)[0])


def test_command_overrides_behaviour_for_that_step(bw):
    w = bw.world([bw.diff("r", 0, 0, goal=[5, 0, 0], behavior={"name": "dash"}),
                  bw.diff("idle", 0, 3)])
    w.step({"r": [0.0, 0.5]})
    # the command: no forward motion, a turn; then the behaviour drives again
    assert w.state("r")[0, 0] == 0.0
    assert w.state("r")[0, 2] == pytest.approx(0.05)
    assert w.behaviours.arrays.manual.sum() == 0  # the override lasts one step
    x = w.state("r")[0, 0]
    w.step()
    assert w.state("r")[0, 0] > x
    # a body without behaviour or command holds still
    np.testing.assert_array_equal(w.state("idle")[0], [0, 3, 0])


def test_no_behaviours_no_stage(bw):
    """A world without behaviours compiles no stage and steps as before; its goals are
    tracked from the first call that reads them."""
    w = bw.world([bw.diff("r", 0, 0, goal=[0.5, 0, 0]), bw.diff("s", 0, 2)])
    assert w.behaviours is None
    w.step({"r": [1.0, 0.0]})
    assert w.behaviours is None
    # the wheels' grip (mu g = 0.5 x 9.81 m/s^2) caps the first step's speed
    assert w.state("r")[0, 0] == pytest.approx(0.5 * 9.81 * 0.1 * 0.1)
    # a body without a goal of its own has the scene's (IR-SIM's default [1, 9, 0], or none)
    spec_goal = w.scene.spec.bodies[w.index("s")].goal
    expect = [np.nan] * 3 if spec_goal is None else list(spec_goal[0])
    np.testing.assert_array_equal(w.goal("s")[0], expect)
    assert not w.arrived("s").any()
    np.testing.assert_array_equal(w.goal("r")[0], [0.5, 0, 0])
    assert not w.arrived("r")[0]
    for _ in range(8):
        w.step({"r": [1.0, 0.0]})  # a command, no behaviour: it passes the goal
        if w.arrived("r")[0]:
            break
    assert w.arrived("r")[0]
    assert abs(w.state("r")[0, 0] - 0.5) < 0.1


def test_reset_restores_goals_and_flags(bw):
    w = bw.world([bw.diff("r", 0, 0, goal=[[1, 0], [2, 0]], behavior={"name": "dash"})],
                 num_envs=2)
    for _ in range(80):
        w.step()
    assert w.arrived("r").all()
    np.testing.assert_array_equal(w.goal("r")[:, :2], [[2, 0], [2, 0]])
    w.reset(env=1)
    assert list(w.arrived("r")) == [True, False]
    np.testing.assert_array_equal(w.goal("r")[1, :2], [1, 0])
    assert np.isnan(w.goal("r")[1, 2])  # a position goal has no heading
    np.testing.assert_array_equal(w.goals("r", env=1)[:, :2], [[1, 0], [2, 0]])


def test_deepcopy_of_the_plan_packs_its_own_arrays(bw):
    """The stage's structure is packed with its arrays' addresses: a deep copy (of a World
    copied whole) must point at its own arrays, not the original's."""
    import copy

    w = _mixed(bw, 2)
    for _ in range(3):
        w.step()
    twin = copy.deepcopy(w.behaviours)
    words = twin._packed._words
    for name in ("gq", "gs", "snap", "ovel"):
        mine, theirs = getattr(twin.arrays, name), getattr(w.behaviours.arrays, name)
        np.testing.assert_array_equal(mine, theirs)
        assert mine.ctypes.data in words and theirs.ctypes.data not in words
    assert twin.address != w.behaviours.address


def test_deepcopy_of_a_world_steps_on_its_own(bw):
    """A deep copy of a world with behaviours goes on as the original would, and moving it
    moves nothing of the original."""
    import copy

    w = _mixed(bw, 1)
    for _ in range(5):
        w.step()
    twin = copy.deepcopy(w)
    for _ in range(20):
        twin.step()
    assert w.steps[0] == 5 and twin.steps[0] == 25
    for _ in range(20):
        w.step()
    for f in STATE:
        np.testing.assert_array_equal(getattr(w, f), getattr(twin, f))
    np.testing.assert_array_equal(w.behaviours.arrays.gq, twin.behaviours.arrays.gq)


def _drives(bw, mode):
    """A dash body of every drive the physics moves its own way (a noisy diff, an
    omni_angular, an acker, an omni), far apart, and an rvo robot after them that reads
    them (so the stage advances each)."""
    dash = {"name": "dash"}
    robots = [
        bw.diff("noisy", 0, 0, 0.3, goal=[8, 3, 0], behavior=dash,
                kinematics={"name": "diff", "noise": True, "alpha": [0.05, 0.02, 0.05, 0.02]}),
        bw.diff("spin", 0, 6, 0.0, goal=[8, 9, 1.0], behavior=dash,
                kinematics={"name": "omni_angular"}, vel_max=[1, 1, 1], vel_min=[-1, -1, -1]),
        {"name": "car", "kinematics": {"name": "acker", "wheelbase": 0.5},
         "shape": {"name": "rectangle", "length": 0.8, "width": 0.4},
         "state": [0, 12, 0, 0], "goal": [8, 14, 0], "behavior": dash,
         "vel_max": [1, 0.6], "vel_min": [-1, -0.6]},
        bw.omni("glide", 0, 18, goal=[8, 18, 0], behavior=dash),
        bw.diff("reader", 20, 20, goal=[30, 20, 0],
                behavior={"name": "rvo", "neighbor_threshold": 50.0}),
    ]
    return bw.world(robots, collision_mode=mode)


@pytest.mark.parametrize("mode", ["contact", "stop", "unobstructed"])
def test_advance_puts_each_body_where_the_physics_does(bw, mode):
    """The snapshot the later bodies read (common.advance) is the pose the physics gives each
    body, in every collision mode: the contact mode's lag and grip, the others' command as
    it is, omni_angular's yaw rate, and this step's motion noise (drawn before the stage)."""
    from push_envs.physics.behaviours.layout import SN_T
    from push_envs.physics.behaviours.layout import SN_X
    from push_envs.physics.behaviours.layout import SN_Y

    w = _drives(bw, mode)
    snap = w.behaviours.arrays.snap
    moved = 0.0
    for _ in range(30):
        start = w.state("noisy")[0].copy()
        w.step()
        for name in ("noisy", "spin", "car", "glide"):
            i = w.index(name)
            here = w.state(name)[0]
            np.testing.assert_allclose(snap[0, i, [SN_X, SN_Y, SN_T]], here[:3], rtol=0,
                                       atol=1e-12, err_msg=name)
        moved += float(np.hypot(*(w.state("noisy")[0, :2] - start[:2])))
    assert moved > 0.5


def test_a_stopped_body_stays_and_reads_no_velocity(bw):
    """IR-SIM's stop mode: a robot that ran into a wall holds, and the bodies after it read it
    at rest from its turn on (its drive velocity zero in the advanced snapshot)."""
    from push_envs.physics.behaviours.layout import SN_V0
    from push_envs.physics.behaviours.layout import SN_VX
    from push_envs.physics.behaviours.layout import SN_VY

    w = bw.world([bw.omni("r", 0, 0, goal=[5, 0, 0], behavior={"name": "dash"}),
                  bw.diff("reader", 20, 20, goal=[30, 20, 0],
                          behavior={"name": "rvo", "neighbor_threshold": 50.0})],
                 [{"name": "wall", "shape": {"name": "rectangle", "length": 0.2,
                                             "width": 2.0}, "state": [1.5, 0, 0],
                   "static": True}], collision_mode="stop")
    i = w.index("r")
    for _ in range(40):
        w.step()
        if w.stopped("r")[0]:
            break
    assert w.stopped("r")[0]
    held = w.state("r")[0].copy()
    assert w.behaviours.arrays.snap[0, i, SN_VX] > 0.5  # it moved in the step it hit
    for _ in range(3):
        w.step()
        snap = w.behaviours.arrays.snap[0, i]
        np.testing.assert_array_equal(snap[[SN_VX, SN_VY, SN_V0, SN_V0 + 1]], 0.0)
        np.testing.assert_array_equal(w.state("r")[0], held)
