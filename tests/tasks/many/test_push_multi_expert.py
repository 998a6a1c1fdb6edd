"""PushMulti-v0's scripted expert, on hand-made observations and in episodes."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

import push_envs  # noqa: F401
from push_envs.core import ObsIndex
from push_envs.datasets import rollout
from push_envs.experts import expert
from push_envs.tasks.many.push_multi import PushMulti
from push_envs.tasks.many.push_multi.expert import choose_box

TASK = PushMulti(PushMulti.resolve_args({"num_objects": 2}))
IX = ObsIndex(TASK.observation(), TASK.args)
BOX_R = 0.15 * math.sqrt(2.0)


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


def _choose(boxes, goals, placed, robot=(0.0, 0.0), engaged=None, crowd=0.9):
    """choose_box for one env: boxes, goals [(x, y) per box], placed flags."""
    bx, by = (np.array([[b[i] for b in boxes]]) for i in (0, 1))
    gx, gy = (np.array([[g[i] for g in goals]]) for i in (0, 1))
    eng = np.zeros_like(bx, bool) if engaged is None else np.array([engaged])
    return int(choose_box(np.array([robot[0]]), np.array([robot[1]]), bx, by, gx, gy,
                          np.array([placed]), eng, 0.32, BOX_R, crowd)[0])


def test_push_multi_rows_stand_still_once_all_are_placed_and_act_per_row():
    rows = np.stack([_multi_obs([False, False]), _multi_obs([True, False]),
                     _multi_obs([True, True]), _multi_obs([False, True])])
    act = expert("PushMulti-v0", "diff", {"num_objects": 2})(rows)
    assert act.shape == (4, 2) and np.all(np.abs(act) <= 1.0)
    np.testing.assert_array_equal(act[2], [0.0, 0.0])  # all placed: stand still
    # Box 1 stands 0.6 m from box 0's goal, so it goes first: as when box 0 is placed.
    np.testing.assert_array_equal(act[0], act[1])
    assert not np.array_equal(act[3], act[1])  # box 1 placed: box 0


def test_choose_box_takes_the_unplaced_box_of_least_way():
    boxes, goals = [(1.0, 1.0), (3.0, 3.0)], [(1.0, 2.0), (3.0, 2.0)]
    assert _choose(boxes, goals, [False, False]) == 0  # nearer the robot at (0, 0)
    assert _choose(boxes, goals, [True, False]) == 1
    assert _choose(boxes, goals, [False, True]) == 0
    assert _choose(boxes, goals, [True, True]) == -1
    # The box being pushed keeps a bonus of 1 m of way: not enough where the robot stands
    # beside box 0 (box 1's way is 2.3 m longer), enough beside box 1.
    assert _choose(boxes, goals, [False, False], robot=(1.0, 0.7),
                   engaged=[False, True]) == 0
    assert _choose(boxes, goals, [False, False], robot=(3.0, 3.3),
                   engaged=[False, True]) == 1


def test_choose_box_first_clears_a_box_from_beside_another_goal_or_its_way():
    # Box 1 stands 0.6 m from box 0's goal: placed first, box 0 would leave no room to
    # fetch it, so box 1 goes first though box 0 is nearer.
    assert _choose([(1.0, 1.0), (2.6, 2.0)], [(2.0, 2.0), (3.5, 3.5)], [False, False]) == 1
    # Box 1 lies on box 0's way to its goal.
    assert _choose([(1.0, 1.0), (2.0, 1.0)], [(3.0, 1.0), (2.0, 3.0)], [False, False]) == 1


def test_expert_reads_the_layout_arguments_and_places_both_boxes():
    venv = gym.make_vec("PushMulti-v0", num_envs=16, autoreset_mode=AutoresetMode.DISABLED,
                        num_threads=1, num_objects=2)
    policy = expert("PushMulti-v0", "diff", {"num_objects": 2, "robot": "diff"})
    wins = [bool(ep.infos["is_success"][-1]) for ep in rollout(venv, policy, 16, seed=5)]
    venv.close()
    assert sum(wins) >= 15, wins  # 300 of 300 episodes (num_objects=2, seed 10000)
