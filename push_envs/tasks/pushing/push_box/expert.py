"""PushBox-v0's scripted experts (diff and omni drives): go behind the box on its line to
the goal and push it there."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from push_envs.core import ObsIndex
from push_envs.core import TaskSpec
from push_envs.scripted import BatchPolicy
from push_envs.scripted import omni_push_actions
from push_envs.scripted import push_actions
from push_envs.scripted import robot_pose
from push_envs.scripted import state_batch
from push_envs.scripted import world_points


def push_box_actions(obs: np.ndarray, ix: ObsIndex, standoff: float = 0.32,
                     align: float = 0.12) -> np.ndarray:
    """Actions (N, 2) for a batch of state observations (N, obs_dim) of the single-object
    layout (columns named by ``ix``): ``standoff`` [m] behind the box centre, within
    ``align`` [m] of the push line."""
    o = state_batch(obs, ix.size)
    rx, ry, c, s = robot_pose(o, ix)
    bx, by = world_points(o, ix, ix.object_rel)
    return push_actions(rx, ry, np.arctan2(s, c), bx, by, o[:, ix.goal_xy],
                        o[:, ix.goal_xy + 1], standoff, align)


def push_box_omni_actions(obs: np.ndarray, ix: ObsIndex, standoff: float = 0.32,
                          align: float = 0.12) -> np.ndarray:
    """:func:`push_box_actions` for the omni drive: body-frame velocities (N, 2) [m/s]."""
    o = state_batch(obs, ix.size)
    rx, ry, c, s = robot_pose(o, ix)
    bx, by = world_points(o, ix, ix.object_rel)
    return omni_push_actions(rx, ry, c, s, bx, by, o[:, ix.goal_xy], o[:, ix.goal_xy + 1],
                             standoff, align)


def expert(task: TaskSpec, env_kwargs: Mapping[str, Any] | None = None) -> BatchPolicy:
    """The diff drive's batch policy for ``task`` (its arguments set the observation's
    columns)."""
    ix = ObsIndex(task.observation(), task.args)
    return lambda obs: push_box_actions(obs, ix)


def omni_expert(task: TaskSpec, env_kwargs: Mapping[str, Any] | None = None) -> BatchPolicy:
    """The omni drive's batch policy for ``task``."""
    ix = ObsIndex(task.observation(), task.args)
    return lambda obs: push_box_omni_actions(obs, ix)


@functools.cache
def _default() -> BatchPolicy:
    from push_envs.tasks.pushing.push_box import PushBox

    return expert(PushBox(PushBox.resolve_args({})))


def push_box_action(obs: np.ndarray) -> np.ndarray:
    """One observation's action (2,), for PushBox-v0 with its default arguments."""
    return _default()(np.asarray(obs)[None, :])[0]
