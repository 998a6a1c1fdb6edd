"""The ego-centric pixel view (``pixel_view="ego"``): bodies and walls land where the robot
frame puts them, for two headings; a batch equals single envs bit for bit; check_env; bad
arguments. One env configuration (PushBox-v0, 64 x 96 pixels, 2 m wide) for the file, whose
kernels are the ones the top-down pixel tests compile."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import push_envs  # noqa: F401
from push_envs.core import render as RD
from push_envs.physics.raster import dirty_all
from push_envs.physics.raster import raster_serial
from push_envs.tasks.pushing.family import GOAL

ID = "PushBox-v0"
H, W = 64, 96
FOV = 2.0  # [m]
S = W / FOV  # [px/m]
KW = dict(obs_mode="pixels", pixel_view="ego", pixel_fov=FOV, pixel_size=(H, W))


def _frame(env) -> np.ndarray:
    """Env 0 of ``env`` drawn from scratch at its current state."""
    core = env.unwrapped.core
    out = np.zeros((1, H, W, 3), np.uint8)
    raster_serial(core.world.arrays, core.raster._replace(dirty=dirty_all(1, H, W)),
                  core.task_arrays.goal, out)
    return out[0]


def _place(env, robot, box, goal) -> None:
    """Robot and box origin poses (x [m], y [m], theta [rad]); the goal's (x, y) [m]."""
    core = env.unwrapped.core
    core.world.set_state("robot", robot, 0)
    core.world.set_state("box", box, 0)
    core.task_arrays.goal[0, GOAL.x], core.task_arrays.goal[0, GOAL.y] = goal


def _is(img, rgb) -> np.ndarray:
    return (img == np.array(rgb, np.uint8)).all(axis=2)


def _centres_in(lo_c, hi_c, lo_r, hi_r) -> np.ndarray:
    """Pixels whose centres lie in the pixel rectangle [lo_c, hi_c] x [lo_r, hi_r]."""
    r, c = np.mgrid[0:H, 0:W] + 0.5
    return (c >= lo_c) & (c <= hi_c) & (r >= lo_r) & (r <= hi_r)


@pytest.fixture(scope="module")
def env():
    e = gym.make(ID, **KW)
    e.reset(seed=0)
    yield e
    e.close()


@pytest.mark.parametrize("theta", [0.4, 2.5])
def test_body_lands_at_its_robot_frame_offset(env, theta):
    """A box 0.45 m ahead of the robot and 0.3 m to its left, turned with it, covers the
    pixels of its square about column W/2 - 0.3 S, row H/2 - 0.45 S (to within its 2 px edge
    band), whatever the heading; the robot's disc sits at the centre, its heading line up."""
    c, s = math.cos(theta), math.sin(theta)
    rx, ry = 2.0, 2.0
    fwd, left = 0.45, 0.3
    bx, by = rx + c * fwd - s * left, ry + s * fwd + c * left
    # The goal behind the robot, out of the box's way.
    _place(env, [rx, ry, theta], [bx, by, theta], (rx - 0.8 * c, ry - 0.8 * s))
    img = _frame(env)
    box = _is(img, RD.PASSIVE_FILL) | _is(img, RD.darker(RD.PASSIVE_FILL))
    col, row = W / 2 - left * S, H / 2 - fwd * S  # the box centre [px]: 33.6, 10.4
    half = 0.15 * S  # 7.2 px
    inner = _centres_in(col - half, col + half, row - half, row + half)
    outer = _centres_in(col - half - 2, col + half + 2, row - half - 2, row + half + 2)
    assert box[inner].all(), np.argwhere(inner & ~box)
    assert not box[~outer].any(), np.argwhere(box & ~outer)
    robot = RD.ROBOT_FILLS[0]
    r, cc = np.mgrid[0:H, 0:W] + 0.5
    d = np.hypot(cc - W / 2, r - H / 2)
    disc = _is(img, robot) | _is(img, RD.darker(robot))
    assert disc[d <= 0.15 * S - 1].all() and not disc[d > 0.15 * S + 2].any()
    # The heading line (the edge colour) runs up from the centre, not down.
    assert _is(img, RD.darker(robot))[H // 2 - 6:H // 2 - 2, W // 2].all()
    assert _is(img, robot)[H // 2 + 3:H // 2 + 6, W // 2].all()


@pytest.mark.parametrize("robot", [(2.0, 0.5, -math.pi / 2), (0.5, 2.0, math.pi)])
def test_wall_ahead(env, robot):
    """Facing the bottom wall (y in [-0.1, 0] m) or the left one (x in [-0.1, 0] m) from
    0.5 m: the wall's band spans rows H/2 - 0.6 S .. H/2 - 0.5 S (8.0 .. 3.2) across the
    view, the floor is clear below it."""
    x, y, th = robot
    _place(env, robot, [x - 0.6 * math.cos(th), y - 0.6 * math.sin(th), 0.0],
            (x - 0.8 * math.cos(th), y - 0.8 * math.sin(th)))
    img = _frame(env)
    wall = _is(img, RD.IMMOVABLE_FILL) | _is(img, RD.darker(RD.IMMOVABLE_FILL))
    face = H / 2 - 0.5 * S
    back = H / 2 - 0.6 * S
    cols = slice(8, W - 8)  # the walls' ends are beyond the view
    assert wall[_centres_in(8, W - 8, back, face)].all()
    rows = np.arange(H) + 0.5
    assert not wall[(rows > face + 2) & (rows < H / 2 - 8), cols].any()
    assert not wall[rows < back - 2, cols].any()
    floor = _is(img, RD.BACKGROUND)
    assert floor[(rows > face + 2) & (rows < H / 2 - 8), cols].all()


def test_batch_equals_single_and_redraw():
    """Env i of a batch (prange kernel) is bitwise the single env seeded seed + i; every
    frame equals one drawn from scratch (the background is restored where the last frame
    drew, as top-down)."""
    n = 20
    venv = gym.make_vec(ID, num_envs=n, **KW)
    obs, _ = venv.reset(seed=7)
    idx = (0, 11)
    singles = [gym.make(ID, **KW) for _ in idx]
    for s_env, i in zip(singles, idx, strict=True):
        np.testing.assert_array_equal(s_env.reset(seed=7 + i)[0], obs[i])
    rng = np.random.default_rng(2)
    R = venv.raster
    for t in range(20):
        a = rng.uniform(-1, 1, venv.action_space.shape).astype(np.float32)
        a[:, 0] = 1.0
        obs, *_ = venv.step(a)
        for s_env, i in zip(singles, idx, strict=True):
            np.testing.assert_array_equal(s_env.step(a[i])[0], obs[i], err_msg=f"step {t}")
        fresh = np.zeros_like(obs)
        raster_serial(venv.world.arrays, R._replace(dirty=dirty_all(n, H, W)),
                      venv.task_arrays.goal, fresh)
        np.testing.assert_array_equal(obs, fresh, err_msg=f"step {t}")
    # The view turns with the robot: the frames are not those of the top-down view.
    top = gym.make_vec(ID, num_envs=2, obs_mode="pixels", pixel_size=(H, W))
    assert not np.array_equal(top.reset(seed=7)[0], venv.reset(seed=7)[0][:2])


@pytest.mark.parametrize("obs_mode", ["pixels", "pixels+state"])
def test_check_env(obs_mode):
    env = gym.make(ID, **dict(KW, obs_mode=obs_mode))
    obs, _ = env.reset(seed=0)
    img = obs if obs_mode == "pixels" else obs["pixels"]
    assert img.shape == (H, W, 3) and img.dtype == np.uint8
    check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("kwargs, match", [
    (dict(pixel_view="side"), r"pixel_view must be one of \['top', 'ego'\]"),
    (dict(pixel_view="ego", pixel_fov=0.0), r"pixel_fov must be a finite number >= 0.01"),
    (dict(pixel_view="ego", pixel_fov=1e-9), r"pixel_fov must be a finite number >= 0.01"),
    (dict(pixel_view="ego", pixel_fov=float("nan")), r"pixel_fov must be a finite number"),
    (dict(pixel_view="ego", pixel_fov="2"), r"pixel_fov must be a finite number"),
    (dict(pixel_view="top", pixel_fov=2.0), r"pixel_fov .* needs pixel_view='ego'"),
    (dict(pixel_view="ego", obs_mode="state"), r"pixel_view='ego' needs a pixel observation"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make(ID, **dict(dict(obs_mode="pixels"), **kwargs))


def test_narrowest_field_of_view_renders_in_bounded_time():
    # Before, a frame cost 0.44 s at pixel_fov=1e-6 and reset() at 1e-9 ran for minutes: the
    # goal's success circle and outline were walked pixel by pixel at (size / fov) pixels.
    # Below PIXEL_FOV_MIN the view is refused (test_bad_arguments); at it, a frame's walk is
    # a few thousand pixels (0.1 m circle at 96 px per 0.01 m: r = 960 px).
    import time

    from push_envs.core.env import PIXEL_FOV_MIN

    env = gym.make(ID, **dict(KW, pixel_fov=PIXEL_FOV_MIN))
    env.reset(seed=0)  # compiles (shared with this file's other envs)
    # Put the goal under the robot, so its circle and outline fill the view.
    _place(env, [1.0, 1.0, 0.3], [2.5, 2.5, 0.0], [1.0, 1.0])
    t = time.perf_counter()
    for _ in range(20):
        img = _frame(env)
    per_frame = (time.perf_counter() - t) / 20
    assert per_frame < 0.05, per_frame  # generous: measured well under 1 ms
    assert img.shape == (H, W, 3)
    env.close()
