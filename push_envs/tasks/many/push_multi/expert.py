"""PushMulti-v0's scripted expert (diff drive): push each env's first box not at its goal
to its goal, boxes in index order (it does not steer around placed boxes); an env whose boxes
are all placed stands still."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from push_envs.core import ObsIndex, TaskSpec
from push_envs.scripted import BatchPolicy, push_actions, robot_pose, state_batch, world_points


def push_multi_actions(obs: np.ndarray, ix: ObsIndex, num_objects: int) -> np.ndarray:
    """Actions (N, 2) for a batch of PushMulti-v0 observations (N, obs_dim), columns named by
    ``ix``, ``num_objects`` boxes."""
    o = state_batch(obs, ix.size)
    placed = np.stack([o[:, ix.slot("box_at_goal", j)] >= 0.5 for j in range(num_objects)],
                      axis=1)
    first = np.argmin(placed, axis=1)  # the first unplaced box (0 when all are placed)
    bx, by = world_points(o, ix, ix.slot("box_rel", first))
    gx, gy = world_points(o, ix, ix.slot("goal_from_robot", first))
    rx, ry, c, s = robot_pose(o, ix)
    act = push_actions(rx, ry, np.arctan2(s, c), bx, by, gx, gy)
    act[placed.all(axis=1)] = 0.0
    return act


def expert(task: TaskSpec, env_kwargs: Mapping[str, Any] | None = None) -> BatchPolicy:
    """The batch policy for ``task`` (its arguments set the observation's columns)."""
    ix = ObsIndex(task.observation(), task.args)
    n = task.args["num_objects"]
    return lambda obs: push_multi_actions(obs, ix, n)
