"""Against IR-SIM 2.12's own example worlds, recorded (data/): the dash robots of
usage/02robot_world reach their last goal within 10 % of IR-SIM's step; in the rvo, sfm and
orca crowds every agent IR-SIM brings to its goal arrives here by IR-SIM's step x 1.2 + 10,
and no two agents overlap by more than 1 cm.

The worlds are built from what IR-SIM resolved at load (behaviours.reference), so the
comparison does not depend on either side's random draws: a wandering agent starts toward the
goal IR-SIM drew, and its later goals are its own env's draws.
"""

from __future__ import annotations

import numpy as np
import pytest

from push_envs.physics.behaviours.reference import world_from_reference
from push_envs.physics.config import KINEMATICS_NAMES

DASH = ["robot_world", "car_world", "robot_omni_world", "robot_omni_angular_world",
        "robot_polygon_world", "robot_compound_world"]


def _run(ref, steps, num_envs=1):
    """Step the world ``steps`` times: each robot's first arrival step (env 0), the deepest
    overlap between two circular robots [m], and the world."""
    w = world_from_reference(ref, num_envs=num_envs)
    robots = [o for o in ref["objects"] if o["role"] == "robot"]
    first = {o["name"]: None for o in robots}
    discs = [(w.index(o["name"]), o["shape"]["radius"]) for o in robots
             if o["shape"]["name"] == "circle"]
    idx = np.array([i for i, _ in discs], dtype=int)
    rad = np.array([r for _, r in discs])
    deepest = 0.0
    for k in range(1, steps + 1):
        w.step()
        for name, step in first.items():
            if step is None and w.arrived(name)[0]:
                first[name] = k
        if len(idx) > 1:
            p = w.pos[:, idx]
            d = np.hypot(p[:, :, None, 0] - p[:, None, :, 0], p[:, :, None, 1] - p[:, None, :, 1])
            over = rad[:, None] + rad[None, :] - d
            over[:, np.arange(len(idx)), np.arange(len(idx))] = -np.inf
            deepest = max(deepest, float(over.max()))
    return first, deepest, w


@pytest.mark.parametrize("name", DASH)
def test_dash_robot_arrives_within_ten_percent(bw, name):
    ref = bw.reference(f"usage__02robot_world__{name}")
    if any(o["kinematics"] not in (None, *KINEMATICS_NAMES) for o in ref["objects"]):
        pytest.skip("the scene parser has no omni_angular kinematics yet")
    expect = ref["first_arrival"]["robot_0"]
    first, _deepest, _w = _run(ref, int(expect * 1.2))
    assert first["robot_0"] is not None
    assert abs(first["robot_0"] - expect) <= 0.1 * expect, (first["robot_0"], expect)


def _crowd(bw, name, num_envs=1):
    ref = bw.reference(name)
    limit = {n: 1.2 * s + 10 for n, s in ref["first_arrival"].items() if s is not None}
    first, deepest, w = _run(ref, int(max(limit.values())), num_envs)
    late = {n: (ref["first_arrival"][n], first[n]) for n in limit
            if first[n] is None or first[n] > limit[n]}
    assert not late, f"later than IR-SIM x 1.2 + 10 (IR-SIM, here): {late}"
    assert deepest <= 0.01
    return w


def test_rvo_crowd(bw):
    """usage/11collision_avoidance/collision_avoidance.yaml: ten diff robots on a circle,
    rvo, each to the opposite side, looping."""
    w = _crowd(bw, "usage__11collision_avoidance__collision_avoidance", num_envs=2)
    np.testing.assert_array_equal(w.pos[0], w.pos[1])  # one world, twice


def test_sfm_head_on(bw):
    """usage/23sfm_world/sfm_head_on.yaml: two pedestrians meet in a corridor."""
    _crowd(bw, "usage__23sfm_world__sfm_head_on")


def test_orca_diff_crowd(bw):
    """usage/19orca_world/orca_diff_world.yaml: twenty diff robots, group orca, wandering."""
    _crowd(bw, "usage__19orca_world__orca_diff_world")


def test_orca_crowd_starts_as_irsim(bw):
    """usage/19orca_world/orca_behavior_world.yaml, 200 omni robots on a circle: the first
    steps agree with IR-SIM's (RVO2 in float32) to a millimetre; later, the crowd's ties and
    roundings make the paths part. IR-SIM outside its contact mode applies a command at once;
    here the wheels' grip caps the acceleration at friction x g, so the comparison is made
    with a grip well above what the drives ask (friction 100)."""
    ref = bw.reference("usage__19orca_world__orca_behavior_world")
    w = world_from_reference(ref, friction=100.0)
    for k in range(1, 28):
        w.step()
        if str(k) in ref["traj"]:
            for name, state in ref["traj"][str(k)].items():
                np.testing.assert_allclose(w.state(name)[0, :2], state[:2], rtol=0, atol=1e-3)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "1 agent of the 182 IR-SIM brings home is late: robot_135 arrives at step 2309, IR-SIM's "
    "at 1823 (limit 2197), held in the crowd at the centre for ~800 steps; the other 181 "
    "arrive in time (median 0.93 of IR-SIM's step). IR-SIM runs this world in its default "
    "collision_mode, stop, which push_envs' parser does not take yet"))
def test_orca_crowd_arrivals(bw):
    """The 200-agent orca world to the end (about 2,300 steps)."""
    _crowd(bw, "usage__19orca_world__orca_behavior_world")
