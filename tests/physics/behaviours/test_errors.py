"""A behaviour, parameter or goal the world cannot run is a SceneError naming the file, the
body's key path and the reason, before anything is compiled."""

from __future__ import annotations

import pytest

from push_envs.physics.errors import SceneError


def _robot(bw, **kw):
    return bw.diff("r", 0, 0, goal=[3, 0, 0], **kw)


@pytest.mark.parametrize("body, match", [
    ({"behavior": {"name": "dashh"}},
     r"world.yaml: robot\[0\]\.behavior\.name: unknown behaviour 'dashh'; IR-SIM's: dash, rvo, "
     r"sfm"),
    ({"behavior": {"name": "dash", "vxmaxx": 1.0}},
     r"robot\[0\]\.behavior: unknown behaviour parameter 'vxmaxx'"),
    ({"behavior": {"name": "sfm", "relaxation_time": 0}},
     r"robot\[0\]\.behavior\.relaxation_time: must be > 0"),
    ({"behavior": {"name": "rvo", "mode": "orca"}},
     r"robot\[0\]\.behavior\.mode: must be one of rvo, hrvo, vo"),
    ({"behavior": {"name": "rvo", "wander": "yes"}},
     r"robot\[0\]\.behavior\.wander: must be true or false"),
    ({"behavior": {"name": "dash", "range_low": [0, 0, 0], "range_high": [1, -1, 1]}},
     r"robot\[0\]\.behavior\.range_low: must have range_high's length and be <= it"),
    ({"behavior": {"vmax": 1}}, r"robot\[0\]\.behavior: needs a 'name'"),
    ({"behavior": "dash"}, r"robot\[0\]\.behavior: must be a mapping with a 'name'"),
    ({"goal": [1], "behavior": {"name": "dash"}},
     r"robot\[0\]\.goal: must be \[x, y\] or \[x, y, theta\]"),
    ({"goal": [[1, 2], [3, "a"]], "behavior": {"name": "dash"}},
     r"robot\[0\]\.goal\[1\]\[1\]: must be a finite number"),
    ({"arrive_mode": "pose", "behavior": {"name": "dash"}},
     r"robot\[0\]\.arrive_mode: must be position or state"),
    ({"goal_threshold": -1, "behavior": {"name": "dash"}},
     r"robot\[0\]\.goal_threshold: must be >= 0"),
    ({"group_behavior": {"name": "orca", "maxNeighbors": 2.5}},
     r"robot\[0\]\.group_behavior\.maxNeighbors: must be an integer >= 0"),
    ({"group_behavior": {"name": "flock"}},
     r"robot\[0\]\.group_behavior\.name: unknown group behaviour 'flock'; IR-SIM's: orca, sfm"),
    # an unknown name is named before the parameters it would make look like typos (not
    # 'formation': tests/physics/test_irsim_worlds.py and test_user.py register IR-SIM's
    # example of that name in the process, so the case failed after them in one worker)
    ({"group_behavior": {"name": "wedge", "wedge_gain": 1.0}},
     r"robot\[0\]\.group_behavior\.name: unknown group behaviour 'wedge'"),
])
def test_bad_behaviour_or_goal(bw, body, match):
    with pytest.raises(SceneError, match=match):
        bw.world([{**_robot(bw), **body}], source="world.yaml")


def test_behaviour_missing_for_the_kinematics(bw):
    car = {"name": "car", "kinematics": {"name": "acker"}, "state": [0, 0, 0, 0],
           "shape": {"name": "rectangle", "length": 0.6, "width": 0.3}, "goal": [3, 0, 0],
           "behavior": {"name": "rvo"}}
    with pytest.raises(SceneError, match=r"w.yaml: robot\[0\]\.behavior\.name: IR-SIM's "
                                         r"behaviour 'rvo' does not exist for kinematics "
                                         r"'acker' \(only for diff, omni\)"):
        bw.world([car], source="w.yaml")
    car["behavior"] = None
    car["group"] = 1
    car["group_behavior"] = {"name": "orca"}
    with pytest.raises(SceneError, match=r"robot\[0\]\.group_behavior\.name: IR-SIM's group "
                                         r"behaviour 'orca' does not exist for kinematics "
                                         r"'acker'"):
        bw.world([car], source="w.yaml")


def test_behaviour_of_a_body_without_kinematics(bw):
    box = {"name": "box", "shape": {"name": "circle", "radius": 0.2}, "state": [1, 1, 0],
           "mass": 2.0, "goal": [3, 3, 0], "behavior": {"name": "dash"}}
    with pytest.raises(SceneError, match=r"obstacle\[0\]\.behavior\.name: IR-SIM's behaviour "
                                         r"'dash' does not exist for kinematics 'none'"):
        bw.world([], [box], source="w.yaml")


def test_static_body_ignores_its_behaviour(bw):
    """IR-SIM never steps a static object, so its behaviour never runs (its own worlds give
    static obstacles wandering behaviours)."""
    post = {"name": "post", "shape": {"name": "circle", "radius": 0.3}, "state": [5, 5, 0],
            "behavior": {"name": "dash", "wander": True}}
    w = bw.world([bw.diff("r", 0, 0)], [post])
    for _ in range(3):
        w.step()
    assert w.behaviours.arrays.fn[w.index("post")] == 0


def test_group_members_share_a_kinematics(bw):
    orca = {"name": "orca"}
    robots = [bw.diff("a", 0, 0, goal=[3, 0, 0], group=2, group_behavior=orca),
              bw.omni("b", 2, 2, goal=[3, 3, 0], group=2, group_behavior=orca)]
    with pytest.raises(SceneError, match=r"robot\[1\]\.kinematics: a group behaviour drives "
                                         r"one kinematics"):
        bw.world(robots, source="w.yaml")


def test_social_groups_are_checked(bw):
    def robots(groups):
        sfm = {"name": "sfm", "social_groups": groups}
        return [bw.diff(f"p{k}", 2 * k, 0, goal=[0, 5, 0], group=2, group_behavior=sfm)
                for k in range(3)]

    with pytest.raises(SceneError, match=r"group_behavior\.social_groups\[1\]: index 5 out of "
                                         r"range for 3 members"):
        bw.world(robots([[0, 1], [2, 5]]), source="w.yaml")
    with pytest.raises(SceneError, match=r"group_behavior\.social_groups\[1\]: member 1 is in "
                                         r"more than one social group"):
        bw.world(robots([[0, 1], [1, 2]]), source="w.yaml")
    with pytest.raises(SceneError, match=r"group_behavior\.social_groups\[0\]: must be a list "
                                         r"of member indices"):
        bw.world(robots([[0, "a"]]), source="w.yaml")
