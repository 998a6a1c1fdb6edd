"""PushMulti-v0's scripted expert, on hand-made observations and in episodes."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

import push_envs  # noqa: F401
from push_envs import scripted as S
from push_envs.core import ObsIndex
from push_envs.datasets import rollout
from push_envs.experts import expert
from push_envs.tasks.many.push_multi import PushMulti

TASK = PushMulti(PushMulti.resolve_args({"num_objects": 2}))
IX = ObsIndex(TASK.observation(), TASK.args)


def _multi_obs(placed: list[bool], heading: float = 0.3) -> np.ndarray:
    """A hand-made PushMulti-v0 observation (2 boxes): robot at (1, 2) with ``heading``; box j
    at robot-frame (0.5 + j, 0.2), its goal at robot-frame (1.5 + j, -0.4)."""
    o = np.zeros(IX.size)
    o[IX.robot_xy:IX.robot_xy + 2] = 1.0, 2.0
    o[IX.robot_heading:IX.robot_heading + 2] = math.cos(heading), math.sin(heading)
    for j, p in enumerate(placed):
        o[IX.slot("box_rel", j) + np.arange(2)] = 0.5 + j, 0.2
        o[IX.slot("goal_from_robot", j) + np.arange(2)] = 1.5 + j, -0.4
        o[IX.slot("box_at_goal", j)] = float(p)
    return o


def _push_toward(o: np.ndarray, j: int) -> np.ndarray:
    c, s = o[IX.robot_heading], o[IX.robot_heading + 1]
    rx, ry = o[IX.robot_xy], o[IX.robot_xy + 1]
    k, q = IX.slot("box_rel", j), IX.slot("goal_from_robot", j)
    bx, by = rx + c * o[k] - s * o[k + 1], ry + s * o[k] + c * o[k + 1]
    gx, gy = rx + c * o[q] - s * o[q + 1], ry + s * o[q] + c * o[q + 1]
    return S.push_action(rx, ry, math.atan2(s, c), bx, by, gx, gy)


def test_push_multi_rows_push_their_first_unplaced_box():
    rows = np.stack([_multi_obs([False, False]), _multi_obs([True, False]),
                     _multi_obs([True, True]), _multi_obs([False, True])])
    act = expert("PushMulti-v0", "diff", {"num_objects": 2})(rows)
    np.testing.assert_array_equal(act[0], _push_toward(rows[0], 0))
    np.testing.assert_array_equal(act[1], _push_toward(rows[1], 1))
    np.testing.assert_array_equal(act[2], [0.0, 0.0])  # all placed: stand still
    np.testing.assert_array_equal(act[3], _push_toward(rows[3], 0))
    assert not np.array_equal(act[0], act[1])


def test_expert_reads_the_layout_arguments_and_places_both_boxes():
    venv = gym.make_vec("PushMulti-v0", num_envs=16, autoreset_mode=AutoresetMode.DISABLED,
                        num_threads=1, num_objects=2)
    policy = expert("PushMulti-v0", "diff", {"num_objects": 2, "robot": "diff"})
    wins = [bool(ep.infos["is_success"][-1]) for ep in rollout(venv, policy, 16, seed=5)]
    venv.close()
    assert sum(wins) >= 14, wins  # 96 % over 200 episodes
