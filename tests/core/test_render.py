"""Tests of the pygame renderer (headless) and of the teleop key mapping."""

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from push_envs.core.render import Goal
from push_envs.core.render import Renderer
from push_envs.physics import World
from push_envs.play import keys_to_action

WIDTH_PX = 400


def scene() -> dict:
    """A 4 m x 3 m room: a diff robot right behind a 0.4 m box, walls along the bounds."""
    return {
        "world": {"width": 4, "height": 3},
        "robot": [{"name": "robot", "kinematics": {"name": "diff"},
                   "shape": {"name": "circle", "radius": 0.2}, "state": [1, 1.5, 0]}],
        "obstacle": [
            {"name": "box", "shape": {"name": "rectangle", "length": 0.4, "width": 0.4},
             "state": [1.4, 1.5, 0], "mass": 1.0},
            {"name": "wall", "state": [0, 0, 0], "shape": {"name": "linestring",
                                       "vertices": [[0, 0], [4, 0], [4, 3], [0, 3], [0, 0]]}},
        ],
    }


@pytest.fixture()
def world() -> World:
    return World.from_config(scene())


@pytest.fixture()
def renderer(world: World):
    r = Renderer(world, "rgb_array", width_px=WIDTH_PX)
    yield r
    r.close()


def patch(frame: np.ndarray, r: Renderer, xy, half_px: int = 4) -> np.ndarray:
    """(n, 3) int pixels of a square of side 2 half_px + 1 around world point xy [m]."""
    u, v = np.round(r.world_to_px(xy)).astype(int)
    return frame[v - half_px: v + half_px + 1, u - half_px: u + half_px + 1].reshape(-1, 3) \
        .astype(int)


def is_orange(p: np.ndarray) -> np.ndarray:
    return (p[:, 0] > 200) & (p[:, 1] > 100) & (p[:, 1] < 190) & (p[:, 2] < 90)


def is_robot(p: np.ndarray) -> np.ndarray:
    """Blue or green dominant (the robot palette)."""
    return (p[:, 2] > p[:, 0] + 60) | (p[:, 1] > p[:, 0] + 60)


def is_red(p: np.ndarray) -> np.ndarray:
    return (p[:, 0] > 170) & (p[:, 1] < 80) & (p[:, 2] < 80)


def push(world: World, dx: float) -> None:
    """Drive the robot forward until the box has moved dx [m] (bounded number of steps)."""
    x0 = world.state("box")[0, 0]
    for _ in range(100):
        world.step({"robot": [1.0, 0.0]})
        if world.state("box")[0, 0] - x0 >= dx:
            return
    raise AssertionError("the robot did not push the box")


def test_frame_shape_and_type(renderer: Renderer):
    frame = renderer.render()
    assert frame.dtype == np.uint8
    assert frame.flags["C_CONTIGUOUS"]
    h, w, c = frame.shape
    assert (w, c) == (WIDTH_PX, 3)
    # Aspect kept: the 4 x 3 m world fills the width minus the margins.
    assert h == renderer.height_px
    assert abs((h - 2 * 12) / (w - 2 * 12) - 3 / 4) < 0.01


def test_y_axis_points_up(renderer: Renderer):
    lo = renderer.world_to_px([0.0, 0.0])
    hi = renderer.world_to_px([4.0, 3.0])
    assert lo[0] < hi[0] and lo[1] > hi[1]  # x right, y up (row index down)
    assert 0 <= hi[1] and lo[1] < renderer.height_px and hi[0] < renderer.width_px


def test_bodies_have_their_colours(renderer: Renderer):
    frame = renderer.render()
    # Off the centre line: the heading lines run from each origin along +x.
    assert is_orange(patch(frame, renderer, [1.4, 1.4])).mean() > 0.8
    assert is_robot(patch(frame, renderer, [1.0, 1.4])).mean() > 0.8
    # Background far from everything is light and neutral.
    bg = patch(frame, renderer, [3.0, 0.7])
    assert np.all(bg.min(axis=1) > 200)


def test_frame_follows_state(world: World, renderer: Renderer):
    before = renderer.render()
    old = patch(before, renderer, [1.45, 1.4], 2)
    push(world, 0.5)
    after = renderer.render()
    new_x = world.state("box")[0, 0]
    assert new_x >= 1.9
    assert not np.array_equal(old, patch(after, renderer, [1.45, 1.4], 2))
    assert not is_orange(patch(after, renderer, [1.45, 1.4], 2)).any()
    assert is_orange(patch(after, renderer, [new_x, 1.4])).mean() > 0.8


def test_contact_arrow_when_pushing(world: World, renderer: Renderer):
    assert world.ctn[0] == 0
    before = renderer.render()
    push(world, 0.1)
    (c,) = world.contacts("box")
    assert c.force > 0
    after = renderer.render()
    # The arrow on the box starts at the contact point and runs along the push (+x).
    shaft = np.asarray(c.point) + 0.12 * np.asarray(c.normal)
    assert is_red(patch(after, renderer, shaft, 1)).any()
    assert is_red(patch(after, renderer, c.point, 1)).all()  # the contact dot
    assert is_red(before.reshape(-1, 3).astype(int)).sum() == 0
    assert is_red(after.reshape(-1, 3).astype(int)).sum() > 50


def test_goal_disc_and_outline(renderer: Renderer):
    plain = renderer.render()
    frame = renderer.render(goals=[Goal("circle", center=(3.0, 2.2), radius=0.25),
                                   Goal("outline", body="box", pose=(2.5, 0.8, 0.3))])
    for xy in ([3.0, 2.2], [2.5, 0.8]):
        p = patch(frame, renderer, xy)
        assert np.all(p[:, 1] > p[:, 0] + 20) and np.all(p[:, 1] > p[:, 2] + 20)  # greenish
        assert not np.array_equal(p, patch(plain, renderer, xy))
    # Goals are drawn beneath the bodies: a goal under the box leaves it orange.
    under = renderer.render(goals=[Goal("circle", center=(1.4, 1.5), radius=0.3)])
    assert is_orange(patch(under, renderer, [1.4, 1.4])).mean() > 0.8
    with pytest.raises(KeyError):
        renderer.render(goals=[Goal("outline", body="nope")])
    with pytest.raises(ValueError):
        Goal("square")


def test_trail_and_hud(renderer: Renderer):
    plain = renderer.render()
    trail = np.array([[0.5, 0.5], [2.5, 0.5], [3.5, 2.5]])
    frame = renderer.render(trail=trail, hud=["reward +0.10", "return 1.00"])
    p = patch(frame, renderer, [1.5, 0.5], 1)
    assert not np.array_equal(p, patch(plain, renderer, [1.5, 0.5], 1))
    corner = (slice(0, 30), slice(0, 90))
    assert not np.array_equal(frame[corner], plain[corner])


def test_colour_override_and_scale():
    cfg = scene()
    cfg["obstacle"][0]["color"] = "#800080"
    world = World.from_config(cfg)
    world.set_scale("box", 1.5)  # 0.6 m box about the same centre
    r = Renderer(world, width_px=WIDTH_PX)
    frame = r.render()
    p = patch(frame, r, [1.4, 1.62], 2)  # outside the unscaled box, inside the scaled one
    assert np.all(np.abs(p - [128, 0, 128]).max(axis=1) < 60)


def test_render_is_fast(renderer: Renderer, world: World):
    import time

    push(world, 0.1)
    renderer.render(hud=["x"])
    t = time.process_time()  # CPU time: other processes on the machine do not count
    for _ in range(20):
        renderer.render(goals=[Goal("circle", center=(3, 2))], trail=np.zeros((50, 2)),
                        hud=["x"])
    assert (time.process_time() - t) / 20 < 0.02  # loose bound (~1.5 ms measured)


def test_bad_arguments(world: World):
    with pytest.raises(ValueError):
        Renderer(world, "ansi")
    r = Renderer(world)
    with pytest.raises(IndexError):
        r.render(env=1)
    r.close()
    r.close()
    with pytest.raises(RuntimeError):
        r.render()


def test_pygame_imported_lazily():
    code = textwrap.dedent("""
        import sys
        import push_envs.core.render as render
        from push_envs.physics import World
        assert "pygame" not in sys.modules, "pygame imported with the module"
        w = World.from_config({"world": {"width": 2, "height": 2},
                               "robot": [{"name": "r", "kinematics": {"name": "diff"},
                                          "state": [1, 1, 0]}]})
        assert "pygame" not in sys.modules
        render.Renderer(w).render()
        assert "pygame" in sys.modules
    """)
    env = dict(os.environ, SDL_VIDEODRIVER="dummy")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize(("pressed", "expected"), [
    ({}, [0, 0]),
    ({"up": True}, [1, 0]),
    ({"down": True}, [-1, 0]),
    ({"left": True}, [0, 1]),
    ({"right": True}, [0, -1]),
    ({"up": True, "left": True}, [1, 1]),
    ({"down": True, "right": True}, [-1, -1]),
    ({"up": True, "down": True, "left": True, "right": False}, [0, 1]),
])
def test_keys_to_action(pressed, expected):
    a = keys_to_action(pressed)
    assert a.shape == (2,) and a.dtype == np.float32
    np.testing.assert_array_equal(a, expected)


def test_irsim_world_colours_trajectory_and_render_rate():
    """An IR-SIM world draws as IR-SIM's options say: its one-letter matplotlib colours, the
    trajectory of a body with ``plot.show_trajectory`` (robot_world.yaml: 'g', a dash robot),
    and one frame per ``sample_time``."""
    import warnings
    from pathlib import Path

    path = Path(__file__).parents[1] / "physics" / "data" / "irsim_worlds" / "robot_world.yaml"
    w = World.from_config(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 'g' is a colour, not a warning
        r = Renderer(w, mode="rgb_array", width_px=200)
    assert r.fps == 10  # sample_time 0.1 s
    green = np.array([0, 128, 0])
    frames = []
    for _ in range(15):
        w.step({"robot_0": [1.0, 0.0]})
        frames.append(r.render())
    # the path behind the robot (from x = 1.1 to 2.5 m) is drawn in the robot's green
    row = r.world_to_px([1.6, 1.0]).round().astype(int)
    assert np.all(frames[-1][row[1], row[0]] == green)
    assert not np.all(frames[0][row[1], row[0]] == green)
    r.close()
