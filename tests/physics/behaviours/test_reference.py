"""Against IR-SIM 2.12's own example worlds, recorded (data/): the dash robots of
usage/02robot_world reach their last goal within 10 % of IR-SIM's step; in the rvo, sfm and
orca crowds every agent IR-SIM brings to its goal arrives here too, by IR-SIM's step x 1.2 +
10, and no two agents overlap by more than 1 cm.

In IR-SIM's own collision modes (stop, unobstructed: the recordings' modes) a drive moves by
IR-SIM's update, an Euler step (kinematics.irsim_step), so a world follows IR-SIM step by
step (data/*.steps.json: IR-SIM's states every 10 or 25 steps, recorded as it is by the
coordination folder's record_arcs.py --plain):

* the ten diff robots of collision_avoidance.yaml (rvo) and the acker of car_world.yaml agree
  with IR-SIM to the recording's rounding (1e-7 m) at every recorded step, arrive on IR-SIM's
  steps, and halt where IR-SIM's do (two robots touch at step 810 of the rvo crowd);
* the 24 pedestrians of sfm_world.yaml (sfm) agree to 1e-5 m for 1,000 steps and arrive on
  IR-SIM's steps. (With the exact arc instead, as the contact mode integrates, four of them
  came home later than IR-SIM's step x 1.2 + 10: a crowd forks at every near-tie, and the arc
  moves a turning pedestrian a few millimetres a step from IR-SIM's Euler point.)
* orca is RVO2's arithmetic in float32, as IR-SIM's pyrvo computes it, with RVO2's k-d tree
  deciding the order of neighbours at equal distances (velocities to the bit,
  test_orca.py): the 200 agents of orca_behavior_world.yaml, a circle full of such ties,
  follow IR-SIM to its recording's rounding for 400 steps (bit for bit for 703, measured
  beside IR-SIM) and every one arrives by IR-SIM's step x 1.2 + 10. orca_diff_world.yaml's
  agents wander, each drawing its goals after the first from its own env's stream: 18 of
  its 20 arrive by that bound, the other two by 1.6 x;
* a wandering agent's goals after its first are its own env's draws.

The worlds are built from what IR-SIM resolved at load (behaviours.reference), so the
comparison does not depend on either side's random draws: a wandering agent starts toward the
goal IR-SIM drew.
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


WANDER_SHARE = 0.85
"""Share of a wandering crowd's agents that arrive by IR-SIM's step x 1.2 + 10, the rest by
twice IR-SIM's step + 10 (their goals after the first are their own env's draws)."""


def _crowd(bw, name, num_envs=1, share=1.0):
    """Every agent IR-SIM brings home arrives here (``share`` of them by IR-SIM's step x 1.2
    + 10: all but where agents wander), and no two discs overlap by more than 1 cm."""
    ref = bw.reference(name)
    expect = {n: s for n, s in ref["first_arrival"].items() if s is not None}
    first, deepest, w = _run(ref, int(2 * max(expect.values()) + 10), num_envs)
    never = {n: s for n, s in expect.items() if first[n] is None}
    assert not never, f"IR-SIM brings these home (at these steps), here they never arrive: {never}"
    late = {n: (s, first[n]) for n, s in expect.items() if first[n] > 1.2 * s + 10}
    assert len(late) <= (1 - share) * len(expect), \
        f"later than IR-SIM's step x 1.2 + 10 (IR-SIM, here): {late}"
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


def test_sfm_crowd(bw):
    """usage/23sfm_world/sfm_world.yaml: 24 pedestrians cross a "+" of two corridors,
    looping."""
    _crowd(bw, "usage__23sfm_world__sfm_world")


def _step_by_step(bw, name, tol, **world_kw):
    """The recorded world ``name`` step by step against IR-SIM as it is (data/<name>.steps.json):
    every recorded state within ``tol`` [m, rad], and every object's first arrival on
    IR-SIM's step."""
    ref = bw.reference(name)
    steps = bw.reference(f"{name}.steps")
    w = world_from_reference(ref, **world_kw)
    first = {n: None for n in steps["first_arrival"]}
    for k in range(1, steps["steps"] + 1):
        w.step()
        for n, step in first.items():
            if step is None and w.arrived(n)[0]:
                first[n] = k
        for n, state in steps["traj"].get(str(k), {}).items():
            here = w.state(n)[0]
            np.testing.assert_allclose(here[:2], state[:2], rtol=0, atol=tol,
                                       err_msg=f"{n} after step {k}")
            turn = (here[2] - state[2] + np.pi) % (2 * np.pi) - np.pi
            assert abs(turn) <= tol, (n, k, here[2], state[2])
    assert first == steps["first_arrival"]
    return first, w


def test_sfm_crowd_step_by_step(bw):
    """sfm_world.yaml for 1,000 steps against IR-SIM: the same paths, and each of the 24
    pedestrians home on IR-SIM's step."""
    first, _w = _step_by_step(bw, "usage__23sfm_world__sfm_world", 1e-5)
    assert sum(s is not None for s in first.values()) == 24


def test_rvo_crowd_step_by_step(bw):
    """collision_avoidance.yaml against IR-SIM for 1,000 steps, in IR-SIM's stop mode: the
    same paths to the recording's rounding (robot_3 and robot_4 halted where they touch at
    step 810, as there), every robot home on IR-SIM's step."""
    _first, w = _step_by_step(bw, "usage__11collision_avoidance__collision_avoidance", 2e-7)
    assert w.stopped("robot_3")[0] and w.stopped("robot_4")[0]
    assert sum(w.stopped(f"robot_{k}")[0] for k in range(10)) == 2


def test_car_step_by_step(bw):
    """car_world.yaml's acker against IR-SIM: IR-SIM turns the car by the steering angle of
    its state before the step, and so does the drive here; the same path to the recording's
    rounding, home on IR-SIM's step."""
    _step_by_step(bw, "usage__02robot_world__car_world", 2e-7)


def test_orca_diff_crowd(bw):
    """usage/19orca_world/orca_diff_world.yaml: twenty diff robots, group orca, wandering."""
    _crowd(bw, "usage__19orca_world__orca_diff_world", share=WANDER_SHARE)


def test_orca_crowd_starts_as_irsim(bw):
    """usage/19orca_world/orca_behavior_world.yaml, 200 omni robots on a circle: through
    the agents' first meeting (step 27) the paths agree with IR-SIM's to its recording's
    rounding (float64 orca parted by 4e-5 m there: RVO2 computes in float32)."""
    ref = bw.reference("usage__19orca_world__orca_behavior_world")
    w = world_from_reference(ref)
    for k in range(1, 28):
        w.step()
        if str(k) in ref["traj"]:
            for name, state in ref["traj"][str(k)].items():
                np.testing.assert_allclose(w.state(name)[0, :2], state[:2], rtol=0, atol=1e-6)


def test_orca_crowd_step_by_step(bw):
    """orca_behavior_world.yaml's 200 agents against IR-SIM for 400 steps: the same paths to
    the recording's rounding (the circle's neighbours tie in distance: RVO2's k-d tree
    orders them), and every arrival within them on IR-SIM's step."""
    _step_by_step(bw, "usage__19orca_world__orca_behavior_world", 2e-7)


@pytest.mark.slow
def test_orca_crowd_arrivals(bw):
    """The 200-agent orca world to the end (about 3,700 steps): every agent IR-SIM brings home
    arrives by its step x 1.2 + 10."""
    _crowd(bw, "usage__19orca_world__orca_behavior_world")
