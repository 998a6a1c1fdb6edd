"""docs/adding_a_task.md builds a working task from its one code block."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import push_envs

DOC = Path(__file__).resolve().parents[2] / "docs" / "adding_a_task.md"


@pytest.fixture(scope="module")
def push_corner(tmp_path_factory):
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S).group(1)
    folder = tmp_path_factory.mktemp("task")
    (folder / "push_corner.py").write_text(code)
    sys.path.insert(0, str(folder))
    try:
        import push_corner

        yield push_corner
    finally:
        # Leave no trace for later tests in this process: the task's registration (its
        # id would otherwise be listed in every "registered tasks" message) and its module.
        sys.path.remove(str(folder))
        push_envs.TASK_MODULES.pop("PushCorner-v0", None)
        gym.registry.pop("PushCorner-v0", None)
        sys.modules.pop("push_corner", None)


def test_the_documented_task_registers_and_passes_the_checker(push_corner):
    env = gym.make("PushCorner-v0")
    check_env(env.unwrapped, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape
    assert "| 21 + 6M |" in push_corner.PushCornerEnv.__doc__


def test_its_goals_are_corners_and_batches_match_single_envs(push_corner):
    # 15 envs: the serial kernel (the batch tests of the shipped tasks run the prange one;
    # compiling it for this task too cost the suite a minute of CPU).
    n = 15
    venv = gym.make_vec("PushCorner-v0", num_envs=n)
    venv.reset(seed=1)
    goal = venv.task_arrays.goal[:, :2]
    # Four corners of the 4 m region, inset by the box's bounding radius + 0.3 m margin.
    inset = 0.15 * np.sqrt(2) + 0.3
    for v in (goal[:, 0], goal[:, 1]):
        assert np.all(np.isclose(v, inset) | np.isclose(v, 4.0 - inset))
    assert len({tuple(g) for g in np.round(goal, 6)}) == 4
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (30, n, 2))
    batch = [venv.step(a)[0][3].copy() for a in actions]
    single = gym.make("PushCorner-v0", max_episode_steps=200)
    single.reset(seed=4)
    one = [single.step(a[3])[0] for a in actions]
    assert np.array_equal(np.array(batch), np.array(one))
