"""The sensors' YAML entries as IR-SIM's worlds write them (lidar2d, fmcw_lidar2d, contact2d):
every key IR-SIM 2.12 reads is accepted with its meaning, drawing keys only draw, and a typo
is a SceneError naming the key; the registry is the one list of names."""

from __future__ import annotations

import math

import pytest

from push_envs.physics import SceneError
from push_envs.physics import World
from push_envs.physics import load_scene
from push_envs.physics import sensor_registry
from push_envs.physics.lidar import LidarSpec

# Sensor entries of IR-SIM's own example worlds (in its repository:
# ir-sim/usage/05lidar_world/lidar_world.yaml, ir-sim/tests/test_collision_avoidance.yaml,
# ir-sim/usage/22fmcw_lidar_world/fmcw_lidar_world.yaml, ir-sim/tests/test_all_objects.yaml).
IRSIM_ENTRIES = [
    {"name": "lidar2d", "range_min": 0, "range_max": 5, "angle_range": 3.14, "number": 200,
     "noise": False, "std": 0.2, "angle_std": 0.2, "offset": [0.1, 0.1, 0.5],
     "plot": {"alpha": 0.3}},
    {"type": "lidar2d", "range_min": 0, "range_max": 20, "angle_range": 3.14, "number": 100,
     "noise": False, "std": 1, "angle_std": 0.2, "offset": [0, 0, 0], "reso": 0.1,
     "alpha": 0.4},
    {"type": "lidar2d", "range_min": 0, "range_max": 10, "angle_range": 3.1415926, "number": 100,
     "noise": False, "has_velocity": True},
    {"type": "fmcw_lidar2d", "range_min": 0.0, "range_max": 8.0, "angle_range": 2.0944,
     "number": 121, "motion_compensate": False, "noise": False, "offset": [0.0, 0.0, 0.0],
     "plot": {"alpha": 0.8, "color": "cyan", "velocity_linewidth": 2.0, "no_hit_linewidth": 0.25,
              "no_hit_alpha": 0.01, "show_velocity_markers": True, "velocity_marker_size": 45,
              "velocity_marker_edge_color": "black", "velocity_marker_edge_width": 0.5,
              "zero_velocity_color": "cyan", "positive_velocity_color": "red",
              "negative_velocity_color": "blue", "velocity_color_max": 0.6}},
    {"type": "contact2d", "force_scale": 0.1, "plot": {"alpha": 0.5, "color": "red"}},
]


def body_with(sensor):
    return load_scene({"robot": [{"name": "r", "kinematics": {"name": "diff"},
                                  "sensors": [sensor]}]}).bodies[0]


@pytest.mark.parametrize("entry", IRSIM_ENTRIES, ids=lambda e: e.get("name", e.get("type")))
def test_irsims_entries_load(entry):
    body = body_with(entry)
    spec = body.sensor_specs[0]
    assert spec.name == entry.get("name", entry.get("type"))
    if isinstance(spec, LidarSpec):
        assert body.lidar is spec
        assert (spec.number, spec.range_max) == (entry["number"], entry["range_max"])
        assert spec.alpha == entry.get("alpha", entry.get("plot", {}).get("alpha", 0.3))


def test_reso_and_scan_time_change_nothing():
    # IR-SIM 2.12 reads `reso` nowhere: without `number` the lidar has its 100 beams.
    spec = body_with({"name": "lidar2d", "reso": 0.1, "scan_time": 0.5}).lidar
    assert spec.number == 100 and spec.reso == 0.1 and spec.scan_time == 0.5
    assert spec.beam_angles().shape == (100,)
    assert LidarSpec(number=1, angle_range=2.0).beam_angles().tolist() == [0.0]  # straight on
    # 2 pi written rounded is 2 pi (IR-SIM clips to it); a wider fan is refused.
    assert body_with({"name": "lidar2d", "angle_range": 6.2832}).lidar.angle_range == 2 * math.pi
    with pytest.raises(SceneError, match=r"angle_range: must be <= 6.28"):
        body_with({"name": "lidar2d", "angle_range": 6.3})


def test_drawing_keys_draw_and_plot_wins():
    spec = body_with({"name": "lidar2d", "alpha": 0.2, "color": "blue",
                      "plot": {"alpha": 0.6}}).lidar
    assert (spec.alpha, spec.color) == (0.6, "blue")
    assert spec.plot_value("alpha", None) == 0.6


@pytest.mark.parametrize("sensor, key, text", [
    ({"name": "lidar2d", "resolution": 0.1}, r"sensors\[0\]", "unknown key 'resolution'"),
    ({"name": "lidar2d", "plot": {"alfa": 0.3}}, r"sensors\[0\]\.plot", "unknown key 'alfa'"),
    ({"name": "lidar2d", "alpha": 1.5}, r"sensors\[0\]\.alpha", "<= 1"),
    ({"name": "lidar2d", "color": 3}, r"sensors\[0\]\.color", "colour"),
    ({"name": "lidar2d", "reso": 0}, r"sensors\[0\]\.reso", "> 0"),
    ({"name": "contact2d", "force_scale": -1}, r"sensors\[0\]\.force_scale", ">= 0"),
    ({"name": "contact2d", "range_max": 3}, r"sensors\[0\]", "unknown key 'range_max'"),
    ({"name": "fov"}, r"sensors\[0\]", "unknown sensor 'fov'"),
    ({"name": "pixels"}, r"sensors\[0\]", "unknown sensor 'pixels'"),
])
def test_bad_entries_name_the_file_key_and_reason(sensor, key, text):
    with pytest.raises(SceneError, match=rf"^<dict>: robot\[0\]\.{key}.*{text}"):
        body_with(sensor)


def test_the_registry_is_the_one_list_of_names():
    # The shipped ones (a test's own sensor may be registered too: the list is the registry).
    names = sensor_registry.scene_names()
    assert {"contact2d", "fmcw_lidar2d", "lidar2d"} <= set(names)
    assert not {"fov", "pixels"} & set(names)  # body keys / the env's: not in sensors:
    assert {d.name for d in sensor_registry.declarations()} >= {"fov", "pixels"}
    with pytest.raises(SceneError, match=f"choices: {', '.join(names)}$"):
        body_with({"name": "lidar3d"})


def test_a_world_scans_an_irsim_lidar():
    w = World.from_config({
        "world": {"width": 10, "height": 10},
        "robot": [{"name": "r", "kinematics": {"name": "diff"}, "state": [1, 1, 0],
                   "sensors": [IRSIM_ENTRIES[0]]}],
        "obstacle": [{"shape": {"name": "rectangle", "length": 1.5, "width": 1.2},
                      "state": [3, 2.5, 1]}]})
    ranges = w.lidar("r")
    assert ranges.shape == (200,) and ranges.min() < 5.0 and ranges.max() == 5.0
    origin, angles = w.lidar_beams("r")
    assert origin == pytest.approx([1.1, 1.1]) and angles[0] == pytest.approx(0.5 - 3.14 / 2)
    assert math.isclose(angles[-1] - angles[0], 3.14)
