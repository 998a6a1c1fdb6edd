"""IR-SIM's world schema: what is accepted, what it means, and what is refused (and how)."""

from __future__ import annotations

import math
import warnings

import pytest

from push_envs.physics import SceneError
from push_envs.physics import World
from push_envs.physics import load_scene
from push_envs.physics.config import SceneWarning
from push_envs.physics.fov import fov_of
from push_envs.physics.schema import suggestion


def robot(**kw):
    body = {"kinematics": {"name": "diff"}, "shape": {"name": "circle", "radius": 0.2},
            "state": [1, 1, 0]}
    body.update(kw)
    return body


def test_every_world_key_of_irsim_is_accepted_and_carried():
    spec = load_scene({
        "world": {"name": "w", "height": 8, "width": 12, "step_time": 0.05, "sample_time": 0.2,
                  "offset": [1, 2], "step_mode": "internal", "control_mode": "keyboard",
                  "collision_mode": "stop", "gravity": 9.8, "friction": 0.4,
                  "restitution": 0.1, "drive_tau": 0.0, "obstacle_map": None,
                  "mdownsample": 2, "fog_map": True, "fog_map_resolution": 0.2,
                  "plot": {"viewpoint": "robot_0", "no_axis": True, "show_title": False,
                           "saved_figure": {"dpi": 200, "bbox_inches": "tight"}},
                  "status": "Running"},
        "gui": {"keyboard": {"backend": "mpl", "key_lv_max": 2.0, "key_ang_max": 1.5},
                "mouse": {"zoom_factor": 1.2}},
        "custom": {"anything": [1, {"a": "b"}]},
        "robot": [robot()],
    })
    w = spec.world
    assert (w.width, w.height, w.step_time, w.offset) == (12.0, 8.0, 0.05, (1.0, 2.0))
    assert w.sample_time == 0.2 and w.render_interval == 0.2
    assert (w.collision_mode, w.control_mode, w.step_mode) == ("stop", "keyboard", "internal")
    assert w.fog_map is True and w.fog_map_resolution == 0.2 and w.mdownsample == 2
    assert w.plot["viewpoint"] == "robot_0" and w.plot["saved_figure"]["dpi"] == 200
    assert spec.gui["keyboard"]["backend"] == "mpl" and spec.gui["mouse"]["zoom_factor"] == 1.2
    assert spec.custom == {"anything": [1, {"a": "b"}]}


def test_every_body_key_of_irsim_is_accepted_with_its_meaning():
    (body,) = load_scene({"robot": [{
        "name": "r", "role": "robot", "kinematics": {"name": "diff", "noise": True,
                                                     "alpha": [0.1, 0, 0, 0.2], "tau": 0.1},
        "shape": {"name": "circle", "radius": 0.3}, "state": [2, 3, 0.5],
        "velocity": [0.5, 0.1], "goal": [[[4, 4, 0], [6, 6, 1]]], "color": "royalblue",
        "static": False, "mass": 2.0, "friction": 0.3, "vel_min": [-1, -2], "vel_max": [1, 2],
        "acce": [2, ".inf"], "angle_range": [-3, 3], "behavior": {"name": "dash", "wander": True},
        "group_behavior": {"name": "orca"}, "goal_threshold": 0.3, "arrive_mode": "state",
        "description": "diff_robot0.png", "group": 5, "group_name": "team", "state_dim": 3,
        "vel_dim": 2, "unobstructed": True, "fov": 1.5, "fov_radius": 4.0,
        "plot": {"show_trajectory": True, "traj_color": "g"}, "number": 1,
        "distribution": {"name": "manual"}}]}).bodies
    assert body.goal == ((4.0, 4.0, 0.0), (6.0, 6.0, 1.0)) and body.goal_threshold == 0.3
    assert body.arrive_mode == "state" and body.group == 5 and body.group_name == "team"
    assert body.behavior == {"name": "dash", "wander": True}
    assert body.group_behavior == {"name": "orca"}
    assert body.unobstructed is True and body.fov == 1.5 and body.fov_radius == 4.0
    assert body.kinematics.noise and body.kinematics.alpha == (0.1, 0.0, 0.0, 0.2)
    assert body.drive == (0.5, 0.1)  # IR-SIM's velocity of a driven body: its command frame
    assert body.acce == (2.0, math.inf) and body.angle_range == (-3.0, 3.0)
    assert body.plot == {"show_trajectory": True, "traj_color": "g"}
    assert body.description == "diff_robot0.png" and body.path == "robot[0]"


def test_a_list_of_goals_is_one_goal_per_object_as_in_irsim():
    """IR-SIM's factory reads a list of poses as one pose per object of the group (the last
    repeating); a sequence of goals for one object is a list of such lists."""
    one, = load_scene({"robot": robot(goal=[[4, 4, 0], [6, 6, 1]])}).bodies
    seq, = load_scene({"robot": robot(goal=[[[4, 4, 0], [6, 6, 1]]])}).bodies
    assert one.goal == ((4.0, 4.0, 0.0),)
    assert seq.goal == ((4.0, 4.0, 0.0), (6.0, 6.0, 1.0))
    a, b, c = load_scene({"robot": robot(number=3, state=[[1, 1], [2, 2], [3, 3]],
                                         goal=[[4, 4, 0], [6, 6, 1]])}).bodies
    assert (a.goal, b.goal, c.goal) == (((4, 4, 0),), ((6, 6, 1),), ((6, 6, 1),))


def test_group_behavior_is_the_fallback_of_an_empty_behavior():
    a, b = load_scene({"robot": [{"number": 2, "kinematics": {"name": "omni"},
                                  "state": [[1, 1, 0], [3, 1, 0]],
                                  "behavior": [{}, {"name": "dash"}],
                                  "group_behavior": {"name": "orca", "neighborDist": 3}}]}).bodies
    assert a.behavior == {"name": "orca", "neighborDist": 3}
    assert b.behavior == {"name": "dash"}
    assert a.group_behavior == b.group_behavior == {"name": "orca", "neighborDist": 3}


def test_lidar_gives_the_default_field_of_view():
    (body,) = load_scene({"robot": robot(sensors=[{"name": "lidar2d", "angle_range": 3.0,
                                                  "range_max": 6.0}])}).bodies
    # The spec keeps fov as given; the field of view's default is the lidar's (fov.py).
    assert (body.fov, body.fov_radius) == (None, None)
    assert fov_of(body) == (3.0, 6.0)


def test_irsim_nesting_and_sections_of_another_simulator():
    spec = load_scene({"irsim": {"robot": robot()}, "gazebo": {"whatever": 1}})
    assert [b.name for b in spec.bodies] == ["robot_0"]


@pytest.mark.parametrize("mode, runs", [("reactive", "unobstructed"),
                                        ("unobstructed2", "unobstructed")])
def test_collision_mode_fallbacks_are_irsims_and_said(mode, runs):
    """IR-SIM runs ``reactive`` and an unknown mode as unobstructed (logging a warning for the
    unknown one); so does push_envs, with a SceneWarning naming the key and the nearest mode."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = load_scene({"world": {"collision_mode": mode}}, source="w.yaml")
    assert spec.world.collision_mode == runs
    if mode == "reactive":
        assert not caught
    else:
        (w,) = caught
        assert issubclass(w.category, SceneWarning)
        assert str(w.message).startswith("w.yaml: world.collision_mode: unknown collision mode "
                                         "'unobstructed2' (did you mean 'unobstructed'?)")


def test_a_state_longer_than_state_dim_is_cut_with_a_warning():
    with pytest.warns(SceneWarning, match=r"robot\[0\]\.state: 4 entries"):
        (body,) = load_scene({"robot": robot(state=[5, 5, 0, 0])}).bodies
    assert body.state == (5.0, 5.0, 0.0)


def test_state_dim_pads_the_state_and_the_world_reports_it():
    w = World.from_config({"robot": [robot(state_dim=5, state=[1, 2, 0.5])]})
    assert w.scene.spec.bodies[0].state == (1.0, 2.0, 0.5, 0.0, 0.0)
    assert w.state("robot_0").tolist() == [[1.0, 2.0, 0.5, 0.0, 0.0]]


@pytest.mark.parametrize("section, key, where, near", [
    ("world", {"sampl_time": 0.1}, "world", "sample_time"),
    ("world", {"obstacle_map": {"name": "perlin", "resolution": 0.5, "fil": 0.3}},
     "world.obstacle_map", "fill"),
    ("world", {"plot": {"viewpont": "r"}}, "world.plot", "viewpoint"),
    ("gui", {"keyboard": {"key_lv_mx": 1}}, "gui.keyboard", "key_lv_max"),
    ("robot", {"distribution": {"name": "random", "range_lo": [0, 0, 0]}},
     r"robot\[0\].distribution", "range_low"),
    ("robot", {"kinematics": {"name": "diff", "nois": True}}, r"robot\[0\].kinematics", "noise"),
    ("robot", {"shape": {"name": "rectangle", "lenght": 1}}, r"robot\[0\].shape", "length"),
    ("robot", {"goal_treshold": 0.2}, r"robot\[0\]", "goal_threshold"),
])
def test_a_typo_is_refused_naming_file_key_and_nearest_key(section, key, where, near):
    scene = {"robot": [robot()]}
    if section == "robot":
        scene["robot"][0].update(key)
    else:
        scene[section] = key
    with pytest.raises(SceneError, match=rf"^x\.yaml: {where}: unknown key .* \(did you mean "
                                         rf"'{near}'\?\); allowed: "):
        load_scene(scene, source="x.yaml")


def test_suggestion_is_empty_for_nothing_near():
    assert suggestion("zzzzzz", ["world", "robot"]) == ""
    assert suggestion(3, ["world"]) == ""


def test_uniform_distribution_and_3d_are_refused_as_in_irsim():
    with pytest.raises(SceneError, match=r"distribution\.name: unknown distribution 'uniform'"):
        load_scene({"robot": robot(distribution={"name": "uniform"})})
    with pytest.raises(SceneError, match=r"distribution\.3d: 3-D distributions are not"):
        load_scene({"robot": robot(distribution={"name": "manual", "3d": True})})


def test_step_mode_external_moves_nothing_and_takes_no_command():
    w = World.from_config({"world": {"step_mode": "external"},
                           "robot": [robot(velocity=[0.5, 0.0])]})
    w.step()
    assert w.state("robot_0").tolist() == [[1.0, 1.0, 0.0]] and w.time == pytest.approx(0.1)
    with pytest.raises(ValueError, match="step_mode is 'external'"):
        w.step({"robot_0": [1.0, 0.0]})


def test_velocity_of_a_driven_body_is_its_initial_drive_state():
    """IR-SIM's ``velocity`` of a driven object is its command-frame velocity: here the drive
    state a reset starts from (what a lag then moves from)."""
    w = World.from_config({"robot": [robot(velocity=[0.5, 0.2],
                                           kinematics={"name": "diff", "tau": 1.0})]})
    assert w.drive_state("robot_0").tolist() == [[0.5, 0.2]]
    w.step({"robot_0": [0.5, 0.2]})
    assert w.drive_state("robot_0").tolist() == [[0.5, 0.2]]  # already at the command
