"""WallSlide-v0's scripted expert (diff drive): reach the box's trailing end face without
touching the box on the way (over its top when the robot starts beside or ahead of it), push
that face along the wall, slowing to a stop on the goal, then press the box into the wall
from above so its contact sensor reads the touch that success needs.

PushBox-v0's push-pose controller, which this task used before (87.0 % of 500 episodes),
failed in three ways: it pushed the box through its goal at full speed, where the box's
contact sensor (which, once the box has slid, reads a touch reliably only while the box is
pressed into the wall) often read none in the two or three steps the box spent within
0.1 m, and on into the end wall, where no robot can get behind it; it swung round the box
through its end face from ahead and drove it the wrong way into the end wall; and it pushed
a box corner, turning the box on end."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from push_envs.core import ObsIndex
from push_envs.core import TaskSpec
from push_envs.scripted import BatchPolicy
from push_envs.scripted import robot_pose
from push_envs.scripted import state_batch
from push_envs.scripted import steer
from push_envs.scripted import world_points

# WallSlide-v0's scene.yaml: the box is 0.4 m along the wall and 0.3 m across, the robot a
# disc of radius 0.15 m.
_BOX_HALF_LENGTH = 0.2  # [m]
_BOX_WIDTH = 0.3  # [m]
_ROBOT_R = 0.15  # [m]


def wall_slide_actions(obs: np.ndarray, ix: ObsIndex, wall_y: float = 0.0,
                       x_range: tuple[float, float] = (0.0, 5.0),
                       sizes: tuple[float, float] = (1.0, 1.0), gap: float = 0.02,
                       clear: float = 0.1, gain: float = 2.0, vmin: float = 0.08,
                       stop: float = 0.02, settle: float = 0.04, tilt_gain: float = 1.5,
                       skew_max: float = np.radians(5.0), near: float = 1.0) -> np.ndarray:
    """Actions (N, 2) for a batch of WallSlide-v0 observations (N, obs_dim), columns named by
    ``ix``; the wall's face at y = ``wall_y`` [m], the arena's end walls at ``x_range`` [m],
    the box ``sizes[0]`` to ``sizes[1]`` times its scene size (the goal's height off the
    wall tells which).

    In the box's frame along the wall (``a`` [m] from the box centre toward the goal, ``h``
    [m] above the wall face), the robot:

    * pushes when low (within 6 cm of the push height) and just behind the box: it heads
      along the wall toward the goal at ``gain`` [1/s] x the box's way left less ``stop``
      [m], clipped to [``vmin``, 1] m/s; the push height is the box's centre, raised or
      lowered by ``tilt_gain`` [m/rad] x the box's tilt to turn it back flat (never below
      the robot's radius);
    * else, once behind the box (its disc clear of the trailing end face), goes to the
      point ``gap`` + ``clear`` [m] behind the push pose at the push height;
    * else, clear above the box, goes to the point ``clear`` behind the box at that height;
    * else (beside, on or ahead of the box, low) drives up off the wall and away from the
      box.

    Within ``settle`` [m] of the goal, or within ``near`` [m] of it with the box lifted 3 cm
    off the wall or turned more than ``skew_max`` [rad], it presses the box into the wall
    from above its middle, reached over its top: once the box has slid, its contact sensor
    reads the touch that success needs reliably only while the box is pressed, and a press
    on the top face turns the box flat.
    """
    o = state_batch(obs, ix.size)
    rx, ry, c, s = robot_pose(o, ix)
    rth = np.arctan2(s, c)
    bx, by = world_points(o, ix, ix.object_rel)
    gx, gy = o[:, ix.goal_xy], o[:, ix.goal_xy + 1]
    r = _ROBOT_R
    # The box's extent along the wall (ex) and across it (ey) [m], whatever its heading.
    bth = np.arctan2(o[:, ix.object_heading_rel + 1], o[:, ix.object_heading_rel]) + rth
    bc, bs = np.abs(np.cos(bth)), np.abs(np.sin(bth))
    # The box's size factor: its goal lies on the wall line, the box's half width off the
    # wall.
    scale = np.clip((gy - wall_y) / (0.5 * _BOX_WIDTH), sizes[0], sizes[1])
    hl, hw = _BOX_HALF_LENGTH * scale, 0.5 * _BOX_WIDTH * scale
    ex, ey = bc * hl + bs * hw, bs * hl + bc * hw
    rest = gx - bx
    sign = np.where(rest >= 0.0, 1.0, -1.0)  # the way to the goal along the wall
    rest = np.abs(rest)
    a = (rx - bx) * sign
    h = ry - wall_y
    contact = ex + r  # the robot centre's distance from the box centre, touching its end
    # The arena's end walls: the robot centre stays ``r`` [m] inside them.
    lo, hi = x_range[0] + r + 0.002, x_range[1] - r - 0.002
    room = np.where(sign > 0.0, bx - lo, hi - bx)  # room behind the box for the robot centre
    top = by + ey - wall_y + r + 0.03  # centre height at which the robot passes over the box
    over = h > top
    # The push height: the box's centre on the wall, raised or lowered to turn the box
    # back flat (a push above the centre lifts the box's trailing end), or as low as the
    # robot gets.
    tilt = (bth + 0.25 * np.pi) % (0.5 * np.pi) - 0.25 * np.pi
    ph = np.maximum(r, hw + np.clip(tilt_gain * tilt * sign, -0.7 * hw, 0.7 * hw))
    low = h < ph + 0.06
    # Behind: clear of the trailing end face, or beside it below the top (sliding down the
    # face moves the box little).
    behind = (a < -np.minimum(contact + 0.03, room - 0.003)) | ((a < -contact + 0.01) & ~over)
    # On the goal, or near it and off the wall or askew: press the box into the wall.
    skew = np.abs(tilt)
    press = (rest < settle) | (((by - ey - wall_y > 0.03) | (skew > skew_max)) & (rest < near))
    pushing = low & (a < -contact + 0.08) & (a > -(contact + clear + 0.15)) & ~press
    # Waypoints, in the box frame; rising off the wall, the robot also draws away from the
    # box, which its turn would otherwise sweep.
    rise = a + np.where(a < 0.0, -0.1, 0.1)
    ta = np.where(behind, -(contact + gap + clear), np.where(over, -(contact + clear), rise))
    th = np.where(behind, ph, np.where(over, np.maximum(h, top + 0.05), top + 0.15))
    above = np.abs(a) < 0.6 * ex
    ta = np.where(press, np.where(above | over, 0.0, rise), ta)
    th = np.where(press, np.where(above, top - 0.08, np.where(over, top, top + 0.15)), th)
    tx = np.clip(bx + sign * ta, lo, hi)
    act = steer(rx, ry, rth, tx, wall_y + th)
    # The push: head along the wall at the push height, speed by the box's way left.
    hx, hy = rx + sign * 0.5, wall_y + ph
    err = (np.arctan2(hy - ry, hx - rx) - rth + np.pi) % (2.0 * np.pi) - np.pi
    v = np.clip(gain * (rest - stop), vmin, 1.0) * np.maximum(np.cos(err), 0.0)
    w = np.clip(1.5 * err, -1.0, 1.0)
    push = np.stack([v, w], axis=-1).astype(np.float32)
    return np.where(pushing[:, None], push, act)


def expert(task: TaskSpec, env_kwargs: Mapping[str, Any] | None = None) -> BatchPolicy:
    """The batch policy for ``task`` (its arguments set the observation's columns)."""
    ix = ObsIndex(task.observation(), task.args)
    region = task.args.get("spawn_region") or task.region
    size = task.args.get("box_size_range")
    sizes = (float(size[0]), float(size[1])) if size else (1.0, 1.0)
    wall_y = float(getattr(task, "wall_face_y", 0.0))
    x_range = (float(region[0]), float(region[2]))
    return lambda obs: wall_slide_actions(obs, ix, wall_y, x_range, sizes)
