"""A step rolled back for a full pair buffer leaves the state exactly as it was.

The engine restores a step of one sub-step from what free motion copied into the hot scratch
rows, and a step of several from the state saved in the cold rows (layout.py). Each test
hands the step kernel a pair buffer too small for the scene, so the step must roll back, and
compares the state afterwards with the state before, bit for bit; the world then steps on
and must stay bit-identical to a twin that never rolled back.
"""

from __future__ import annotations

import numpy as np

from push_envs.physics.layout import HL_NEED
from push_envs.physics.layout import HL_STATUS
from push_envs.physics.layout import IS_SLEEP
from push_envs.physics.layout import PRS_LEN
from push_envs.physics.layout import ST_OVERFLOW
from push_envs.physics.pipeline import PHYSICS
from push_envs.physics.pipeline import step_serial

STATE = ("pos", "ang", "vel", "omg", "drv")


def _rolled_back_twins(build, warm_cmd, cmd, warm):
    """Two worlds from ``build`` stepped ``warm`` times with ``warm_cmd``; the first then takes
    a step with ``cmd`` and a 1-pair buffer, which must leave its state (and which bodies may
    sleep) exactly as before. Both then step 10 times with ``cmd`` and must agree bit for bit.
    Returns the sub-steps the rolled-back step needed."""
    a, b = build(), build()
    for _ in range(warm):
        a.step(warm_cmd)
        b.step(warm_cmd)
    assert a.state_hash() == b.state_hash()
    before = {k: getattr(a, k).copy() for k in STATE}
    resting = a._bis[:, :, IS_SLEEP] != 0
    a.cmd[:] = 0.0
    a.cmd[:, a.index("r")] = cmd["r"]
    tiny = a.arrays._replace(prs=np.zeros((a.num_envs, 1, PRS_LEN), np.int64))
    assert step_serial(tiny, PHYSICS.address) == 1
    assert a.health[0, HL_STATUS] == ST_OVERFLOW
    for k in STATE:
        assert getattr(a, k).tobytes() == before[k].tobytes(), k
    assert np.array_equal(a._bis[:, :, IS_SLEEP] != 0, resting)
    for _ in range(10):
        a.step(cmd)
        b.step(cmd)
        assert a.state_hash() == b.state_hash()
    return int(a.health[0, HL_NEED])


def _robot_among_discs(scn, speed):
    # A diff-drive robot (free motion changes its drive state) touching three discs, so the
    # broad phase finds more pairs than a 1-pair buffer holds.
    def build():
        discs = [scn.disc(f"d{i}", x, y, radius=0.1, mass=0.2)
                 for i, (x, y) in enumerate([(0.3, 0.0), (0.0, 0.3), (0.0, -0.3)])]
        return scn.world(
            [scn.robot("r", 0.0, 0.0, vel_min=[-speed, -2.0], vel_max=[speed, 2.0])],
            discs + scn.arena_walls(2.0, 2.0))
    return build


def test_rollback_of_a_one_substep_step_restores_the_state_exactly(scn):
    build = _robot_among_discs(scn, 1.0)
    assert not build().sleeping
    cmd = {"r": [0.4, 0.5]}
    # 0.4 * 0.1 + 0.5 * 0.1 * 0.2 [m] < 0.9 * 0.1: one sub-step
    assert _rolled_back_twins(build, cmd, cmd, warm=2) == 1


def test_rollback_of_a_many_substep_step_restores_the_state_exactly(scn):
    # 3 m/s beside 10 cm discs: 3 * 0.1 / (0.9 * 0.1) -> 4 sub-steps.
    cmd = {"r": [3.0, 0.5]}
    assert _rolled_back_twins(_robot_among_discs(scn, 3.0), cmd, cmd, warm=1) > 1


def test_rollback_among_sleeping_bodies_restores_the_state_and_who_sleeps(scn):
    # 30 discs (sleeping is on from 24 movable bodies) settle below a resting omni robot,
    # which then drives down into them at 0.6 m/s (one sub-step: 0.06 m < 0.9 * 0.08 m).
    def build():
        discs = [scn.disc(f"d{i}", -0.8 + 0.17 * (i % 10), -0.8 + 0.17 * (i // 10),
                          radius=0.08, mass=0.1) for i in range(30)]
        return scn.world([scn.robot("r", 0.0, -0.15, kin="omni")],
                         discs + scn.arena_walls(1.0, 1.0))
    w = build()
    assert w.sleeping
    for _ in range(5):
        w.step({"r": [0.0, 0.0]})
    assert w.asleep[0] == 30
    assert _rolled_back_twins(build, {"r": [0.0, 0.0]}, {"r": [0.0, -0.6]}, warm=5) == 1
