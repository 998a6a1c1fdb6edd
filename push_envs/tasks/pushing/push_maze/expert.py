"""PushMaze-v0's scripted expert (diff drive): PushBox's pusher aimed at a point ahead of
the box along its geodesic path, so the box is steered through the doorways (it does not plan
the robot's own way around walls)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from push_envs.core import ObsIndex, TaskSpec
from push_envs.scripted import BatchPolicy
from push_envs.tasks.pushing.push_box.expert import push_box_actions


def push_maze_actions(obs: np.ndarray, ix: ObsIndex, lead: float = 0.5) -> np.ndarray:
    """Actions (N, 2): :func:`push_box_actions` with the goal replaced by the point ``lead``
    [m] ahead of the box along its path direction (the goal itself once the path is
    shorter)."""
    src = np.asarray(obs)
    src = src[None, :] if src.ndim == 1 else src
    o = src.astype(np.float64)
    # In the observation's own dtype (float32 from the env), as the goal columns are.
    rx, ry = src[:, ix.robot_xy], src[:, ix.robot_xy + 1]
    c, s = src[:, ix.robot_heading], src[:, ix.robot_heading + 1]
    x, y = src[:, ix.object_rel], src[:, ix.object_rel + 1]
    bx, by = rx + c * x - s * y, ry + s * x + c * y
    far = src[:, ix.path_distance] > lead
    o[:, ix.goal_xy] = np.where(far, bx + lead * src[:, ix.path_dir], o[:, ix.goal_xy])
    o[:, ix.goal_xy + 1] = np.where(far, by + lead * src[:, ix.path_dir + 1],
                                    o[:, ix.goal_xy + 1])
    return push_box_actions(o, ix)


def expert(task: TaskSpec, env_kwargs: Mapping[str, Any] | None = None) -> BatchPolicy:
    """The batch policy for ``task`` (its arguments set the observation's columns)."""
    ix = ObsIndex(task.observation(), task.args)
    return lambda obs: push_maze_actions(obs, ix)
