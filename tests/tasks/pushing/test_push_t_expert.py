"""PushT-v0's scripted pusher, on hand-made observations and in episodes."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import push_envs  # noqa: F401
from push_envs.core import ObsIndex
from push_envs.datasets import rollout
from push_envs.experts import expert
from push_envs.tasks.pushing.push_t import PushT

TASK = PushT(PushT.resolve_args({}))
IX = ObsIndex(TASK.observation(), TASK.args)
POLICY = expert("PushT-v0", "omni")


def _tee_obs(dx: float, robot: tuple[float, float], heading: float = 0.7) -> np.ndarray:
    """A PushT-v0 observation: the T at the goal pose (1.5, 1.6, 45 deg) shifted by ``dx`` [m]
    along world x, the robot at ``robot`` [m] with ``heading`` [rad]."""
    o = np.zeros(IX.size)
    rx, ry = robot
    c, s = math.cos(heading), math.sin(heading)
    o[IX.robot_xy:IX.robot_xy + 2] = rx, ry
    o[IX.robot_heading:IX.robot_heading + 2] = c, s
    tx, ty, tt = 1.5 + dx, 1.6, math.pi / 4
    o[IX.object_rel] = c * (tx - rx) + s * (ty - ry)
    o[IX.object_rel + 1] = -s * (tx - rx) + c * (ty - ry)
    o[IX.object_heading_rel:IX.object_heading_rel + 2] = math.cos(tt - heading), \
        math.sin(tt - heading)
    o[IX.goal_xy:IX.goal_xy + 2] = 1.5, 1.6
    o[IX.goal_heading:IX.goal_heading + 2] = math.cos(tt), math.sin(tt)
    return o


def _world_velocity(o: np.ndarray, a: np.ndarray) -> np.ndarray:
    c, s = o[IX.robot_heading], o[IX.robot_heading + 1]
    return np.array([c * a[0] - s * a[1], s * a[0] + c * a[1]])


def test_push_t_pushes_through_its_contact_and_slows_near_the_goal():
    # The T 0.2 m short of its goal along +x at the goal's heading: the push point whose
    # twist is nearest pure +x travel is on the stem's left face, 0.12 m down; the robot
    # standing there (0.11 m out along the face's normal) pushes along that normal.
    ct = st = math.sqrt(0.5)
    nx, ny = ct, st  # inward normal (1, 0) of the stem's left face, turned by 45 deg
    px, py = 1.3 + ct * -0.075 - st * -0.12, 1.6 + st * -0.075 + ct * -0.12
    o = _tee_obs(-0.2, (px - 0.11 * nx, py - 0.11 * ny))
    v = _world_velocity(o, POLICY(o[None])[0])
    # The speed is gain x |error| = 2.5 / s x 0.2 m, all of it along the normal.
    assert v == pytest.approx(0.5 * np.array([nx, ny]), abs=1e-6)
    px += 0.19
    o = _tee_obs(-0.01, (px - 0.11 * nx, py - 0.11 * ny))
    v = _world_velocity(o, POLICY(o[None])[0])
    assert v == pytest.approx(0.025 * np.array([nx, ny]), abs=1e-6)  # 1 cm short: 2.5 cm/s


def test_push_t_expert_reaches_gym_pushts_coverage():
    venv = gym.make_vec("PushT-v0", num_envs=16, autoreset_mode=AutoresetMode.DISABLED,
                        num_threads=1, success="coverage")
    wins = [bool(ep.infos["is_success"][-1]) for ep in
            rollout(venv, expert("PushT-v0", "omni"), 16, seed=7)]
    venv.close()
    assert sum(wins) >= 15, wins  # 1000 / 1000 episodes at coverage >= 0.95 (README)


def test_push_t_expert_refuses_other_shapes():
    with pytest.raises(KeyError, match=r"PushT-v0 \(omni\) knows the default scene's shapes "
                                       r"only; it cannot act with box_size_range set"):
        expert("PushT-v0", "omni", {"box_size_range": (0.8, 1.2)})
    assert expert("PushT-v0", "omni", {"success": "coverage", "scene": None}) is not None


