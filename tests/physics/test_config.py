"""Tests for push_envs.physics.config: YAML scene loading, checks and defaults."""

import copy
import math

import numpy as np
import pytest

from push_envs.physics.config import BodySpec
from push_envs.physics.config import SceneError
from push_envs.physics.config import load_scene

BASE = {
    "world": {"step_time": 0.05, "friction": 0.3},
    "robot": [
        {
            "name": "pusher",
            "kinematics": {"name": "diff"},
            "shape": {"name": "circle", "radius": 0.2},
            "state": [1.0, 2.0, 0.5],
            "sensors": [{"name": "contact2d"}],
        }
    ],
    "obstacle": [
        {"name": "box", "shape": {"name": "rectangle", "length": 0.4, "width": 0.3},
         "mass": 2.0, "state": [3, 2]},
        {"shape": {"name": "circle", "radius": 0.1}},
    ],
}


def scene_with(path, value):
    """Copy of BASE with the dotted/indexed `path` (a list of keys) set to value."""
    scene = copy.deepcopy(BASE)
    node = scene
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return scene


def write_yaml(tmp_path, text, name="scene.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_defaults_and_order():
    scene = load_scene(BASE)
    assert scene.source == "<dict>" and scene.base_dir is None
    assert scene.world.step_time == 0.05 and scene.world.friction == 0.3
    assert scene.world.gravity == 9.81 and scene.world.obstacle_map is None
    # IR-SIM's running id: the unnamed third object is obstacle_2 (after robot 0, object 1).
    assert [b.name for b in scene.bodies] == ["pusher", "box", "obstacle_2"]
    assert [b.role for b in scene.bodies] == ["robot", "obstacle", "obstacle"]

    robot, box, ball = scene.bodies
    assert isinstance(robot, BodySpec)
    assert robot.mass == 1.0  # driven default
    assert robot.kinematics.name == "diff" and robot.kinematics.tau is None
    assert robot.state == (1.0, 2.0, 0.5)
    assert robot.sensors == ("contact2d",)
    assert robot.vel_min == (-1.0, -1.0) and robot.vel_max == (1.0, 1.0)
    assert robot.acce == (math.inf, math.inf)
    assert robot.friction is None and robot.inertia is None and robot.restitution is None
    assert robot.static is False and robot.color is None

    assert box.mass == 2.0 and box.state == (3.0, 2.0, 0.0)
    assert ball.mass == math.inf  # passive without mass: immovable
    assert ball.kinematics is None and ball.velocity == (0.0, 0.0) and ball.omega == 0.0
    # IR-SIM's defaults: state [1, 1, 0] and goal [1, 9, 0] (ObjectFactory), group by entry.
    assert ball.state == (1.0, 1.0, 0.0) and ball.goal == ((1.0, 9.0, 0.0),)
    assert robot.goal == ((1.0, 9.0, 0.0),) and robot.goal_threshold == 0.1
    assert robot.arrive_mode == "position" and robot.behavior is None
    assert (robot.group, box.group, ball.group) == (0, 1, 2)
    assert robot.path == "robot[0]" and ball.path == "obstacle[1]"
    assert robot.unobstructed is False and robot.fov is None and robot.state_dim == 3


def test_input_dict_not_modified():
    scene = copy.deepcopy(BASE)
    load_scene(scene)
    assert scene == BASE


def test_single_mapping_section_and_default_shape():
    scene = load_scene({"robot": {"kinematics": {"name": "omni"}},
                        "obstacle": {"shape": {"name": "circle"}}})
    robot, ball = scene.bodies
    assert robot.name == "robot_0" and ball.name == "obstacle_1"
    # IR-SIM: no shape is a circle of 1 m; a circle without a radius has 0.2 m.
    assert robot.shape == {"name": "circle", "radius": 1.0}
    assert ball.shape == {"name": "circle", "radius": 0.2}
    assert robot.group == ball.group == 0  # a single mapping is group 0 in both sections


def test_acker_defaults():
    scene = load_scene({"robot": {"kinematics": {"name": "acker"}, "state": [0, 0, 0, 0.1]}})
    (robot,) = scene.bodies
    assert robot.kinematics.wheelbase == 1.0
    assert robot.state == (0.0, 0.0, 0.0, 0.1)


def test_inf_mass_forms_and_passive_velocity():
    scene = load_scene({"obstacle": [
        {"mass": "inf"},
        {"mass": float("inf")},
        {"mass": 3, "velocity": [0.5, 0], "omega": 1.0, "acce": [".inf", 2.0]},
    ]})
    a, b, c = scene.bodies
    assert a.mass == math.inf and b.mass == math.inf
    assert c.velocity == (0.5, 0.0) and c.omega == 1.0 and c.acce == (math.inf, 2.0)


@pytest.mark.parametrize(
    "path, value, where, text",
    [
        (["obstacle", 0, "mass"], -1.0, r"obstacle\[0\]\.mass", "must be > 0"),
        (["obstacle", 0, "mass"], 0, r"obstacle\[0\]\.mass", "must be > 0"),
        (["robot", 0, "mass"], ".inf", r"robot\[0\]\.mass", "driven body needs a finite mass"),
        (["obstacle", 1, "name"], "pusher", r"obstacle\[1\]\.name", "duplicate name 'pusher'"),
        (["robot", 0, "kinematics"], {"name": "tank"}, r"robot\[0\]\.kinematics\.name",
         "choices: diff, omni, omni_angular, acker, static"),
        (["robot", 0, "shape"], {"name": "circle", "radiu": 1}, r"robot\[0\]\.shape",
         "unknown key 'radiu' (did you mean 'radius'?); allowed: center, name, radius, "
         "radius_range, random_shape, wheelbase"),
        (["obstacle", 0, "friction"], "high", r"obstacle\[0\]\.friction", "must be a finite"),
        (["obstacle", 0, "friction"], True, r"obstacle\[0\]\.friction", "must be a finite"),
        (["obstacle", 0, "friction"], float("nan"), r"obstacle\[0\]\.friction", "finite"),
        (["robot", 0, "sensors"], [{"name": "radar2d"}], r"robot\[0\]\.sensors\[0\]",
         "unknown sensor 'radar2d'"),
        (["robot", 0, "state"], [0], r"robot\[0\]\.state", "2 to 3 numbers"),
        (["robot", 0, "vel_min"], [2, 0], r"robot\[0\]\.vel_min", "<= vel_max"),
        (["robot", 0, "acce"], [0, 1], r"robot\[0\]\.acce\[0\]", "must be > 0"),
        (["robot", 0, "omega"], 1.0, r"robot\[0\]\.omega", "kinematics"),
        (["robot", 0, "goal"], [[[1, 2], [3]]], r"robot\[0\]\.goal\[0\]",
         "must be a goal pose [x, y, theta]"),
        (["robot", 0, "goal"], "home", r"robot\[0\]\.goal", "must be a goal pose"),
        (["robot", 0, "behavior"], {"speed": 1}, r"robot\[0\]\.behavior\.name",
         "must be a behaviour name"),
        (["robot", 0, "plot"], {"show_trajectroy": True}, r"robot\[0\]\.plot",
         "unknown key 'show_trajectroy' (did you mean 'show_trajectory'?)"),
        (["robot", 0, "distribution"], {"name": "uniform"}, r"robot\[0\]\.distribution\.name",
         "choices: manual, circle, random"),
        (["robot", 0, "number"], -1, r"robot\[0\]\.number", "integer in [0, 10000]"),
        (["robot", 0, "role"], "obstacle", r"robot\[0\]\.role", "the section sets the role"),
        (["robot", 0, "kinematics"], {"name": "acker", "mode": "angular"},
         r"robot\[0\]\.kinematics\.mode", "not supported here"),
        (["robot", 0, "kinematics"], {"name": "diff", "noise": True, "alpha": [0.1]},
         r"robot\[0\]\.kinematics\.alpha", "at least 4 numbers"),
        (["obstacle", 0, "restitution"], 1.5, r"obstacle\[0\]\.restitution", "<= 1"),
        (["obstacle", 0, "static"], "yes", r"obstacle\[0\]\.static", "true or false"),
        (["world", "step_time"], 0, r"world\.step_time", "must be > 0"),
        (["world", "gravty"], 9.8, r"world",
         "unknown key 'gravty' (did you mean 'gravity'?); allowed: collision_mode"),
        (["world", "sample_tme"], 0.1, r"world", "(did you mean 'sample_time'?)"),
        (["world", "control_mode"], "joystick", r"world\.control_mode",
         "choices: auto, keyboard"),
        (["world", "mdownsample"], 0, r"world\.mdownsample", "integer in [1,"),
        (["obstacle", 0, "shape"], {"name": "polygon", "vertices": [[0, 0], [1, 1], [1, 0],
                                                                    [0, 1]]},
         r"obstacle\[0\]\.shape\.vertices", "self-intersect"),
        (["obstacle", 0, "shape"], {"name": "compound", "parts": [
            {"name": "circle", "radius": 1, "pos": [0, 0, 0]}]},
         r"obstacle\[0\]\.shape\.parts\[0\]", "(did you mean 'pose'?); allowed: center, name"),
    ],
)
def test_errors_name_path_and_reason(path, value, where, text):
    with pytest.raises(SceneError, match=rf"^<dict>: {where}") as err:
        load_scene(scene_with(path, value))
    assert text in str(err.value)


def test_unknown_body_key_lists_allowed_keys(tmp_path):
    path = write_yaml(tmp_path, "obstacle:\n  - {mas: 2}\n", name="x.yaml")
    with pytest.raises(SceneError) as err:
        load_scene(path)
    message = str(err.value)
    assert message.startswith(f"{path}: obstacle[0]: unknown key 'mas' (did you mean 'mass'?); "
                              "allowed: acce, angle_range, arrive_mode, behavior, bullet, color,")
    assert "mass" in message and "x.yaml" in message


def test_unknown_top_level_key():
    with pytest.raises(SceneError, match=r"<dict>: unknown key 'robots' \(did you mean "
                                         r"'robot'\?\); allowed: custom, gui, obstacle"):
        load_scene({"robots": []})


def test_load_from_yaml_file(tmp_path):
    path = write_yaml(tmp_path, """
world:
  width: 4
  obstacle_map: [[0, 100], [100, 0]]
  map_resolution: 0.5
  offset: [-1, -1]
robot:
  - name: r
    kinematics: {name: diff, tau: 0.2}
    color: red
    sensors: [{type: contact2d}]
obstacle:
  - shape: {name: linestring, vertices: [[0, 0], [1, 0]]}
    mass: .inf
""")
    scene = load_scene(path)
    assert scene.source == str(path)
    assert scene.base_dir == str(tmp_path)
    assert scene.world.width == 4.0 and scene.world.offset == (-1.0, -1.0)
    np.testing.assert_array_equal(scene.world.obstacle_map, [[False, True], [True, False]])
    robot, wall = scene.bodies
    assert robot.kinematics.tau == 0.2 and robot.color == "red"
    assert robot.sensors == ("contact2d",)
    assert wall.mass == math.inf and wall.shape["name"] == "linestring"


def test_yaml_syntax_error_and_non_mapping(tmp_path):
    bad = write_yaml(tmp_path, "robot: [\n", name="broken.yaml")
    with pytest.raises(SceneError, match="broken.yaml: invalid YAML"):
        load_scene(bad)
    listing = write_yaml(tmp_path, "- 1\n- 2\n", name="list.yaml")
    with pytest.raises(SceneError, match="list.yaml: top level must be a mapping"):
        load_scene(listing)
    with pytest.raises(SceneError, match="missing.yaml: cannot read"):
        load_scene(tmp_path / "missing.yaml")


def test_yaml_tags_are_not_executed(tmp_path):
    path = write_yaml(tmp_path, "robot: !!python/object/apply:os.getcwd []\n")
    with pytest.raises(SceneError, match="invalid YAML"):
        load_scene(path)


def test_obstacle_map_relative_to_yaml_folder(tmp_path):
    (tmp_path / "maps").mkdir()
    path = write_yaml(tmp_path / "maps", "world: {obstacle_map: missing.png}\n")
    with pytest.raises(SceneError, match=r"world\.obstacle_map: map image not found") as err:
        load_scene(path)
    assert str(tmp_path / "maps" / "missing.png") in str(err.value)
