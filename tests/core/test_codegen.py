"""A task's hooks as C functions; the generic kernels and the engine compiled once for all."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from push_envs import _numba_cache
from push_envs.core import codegen, step
from push_envs.physics.pipeline import PHYSICS

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import gymnasium as gym, numpy as np, push_envs
from push_envs.core import step
env = gym.make_vec("PushBox-v0", num_envs=2)
env.reset(seed=0)
env.step(np.zeros((2, 2)))
k = env.unwrapped._kernels
print(sum(step.run_serial.stats.cache_hits.values()),
      sum(step.run_serial.stats.cache_misses.values()),
      k.HOOKS._compiled.cache_hits, k.__file__)
"""


def test_a_second_process_loads_the_kernels_and_hooks_from_the_cache():
    runs = [subprocess.run([sys.executable, "-W", "ignore", "-c", _PROBE], capture_output=True,
                           text=True, cwd=ROOT, timeout=900) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    hits, misses, hook_hits, path = runs[1].stdout.split()
    assert (int(hits), int(misses), int(hook_hits)) == (1, 0, 1)
    text = Path(path).read_text()
    assert "from push_envs.tasks.pushing.push_box import observe as _observe" in text
    assert "def hooks_c(which, e, wp, vp, tp):" in text


def test_a_task_module_without_its_hooks_is_named(monkeypatch):
    mod = types.ModuleType("half_task")
    mod.spawn = mod.observe = lambda *a: None
    monkeypatch.setitem(sys.modules, "half_task", mod)
    with pytest.raises(TypeError, match=r"half_task.*\['evaluate', 'start', 'is_success', "
                                        r"'goal_reward'\]"):
        codegen.task_kernels("half_task")


def test_every_task_shares_one_compiled_step_kernel():
    # The generic kernels take the hooks as addresses, so two tasks, one env and a batch all
    # run one compiled overload of each: a task compiles only its hooks.
    envs = [gym.make("PushBox-v0"), gym.make("WallSlide-v0"),
            gym.make_vec("PushBox-v0", num_envs=3), gym.make_vec("WallSlide-v0", num_envs=16)]
    for env in envs:
        env.reset(seed=0)
        env.step(env.action_space.sample())
    for kernel in (step.run_serial, step.run_parallel, step.post_envs, step.reset_env,
                   step.apply_actions):
        # In this process: at most one overload (a callee loaded with its caller from the
        # cache has none). In the cache: exactly one compiled signature, not a second copy
        # for a literal, a strided view or a uint64 index.
        assert len(kernel.overloads) <= 1, kernel
        name = kernel.py_func.__name__
        found = list((Path(_numba_cache.CACHE_DIR) / "push_envs.core.step").glob(
            f"step.{name}-*.nbc"))
        assert len(found) == 1, (name, found)
    fns = [e.unwrapped.core._fns if hasattr(e.unwrapped, "core") else e.unwrapped._fns
           for e in envs]
    assert fns[0][step.FN_PHYSICS] == fns[1][step.FN_PHYSICS] == PHYSICS.address
    assert fns[0][step.FN_TASK] != fns[1][step.FN_TASK]  # each task its own hooks
    assert fns[0][step.FN_TASK] == fns[2][step.FN_TASK]  # one task, one set


def test_a_sensor_is_compiled_only_for_an_env_that_observes_it():
    env = gym.make("PushBox-v0")
    env.reset(seed=0)
    fns = env.unwrapped.core._fns
    assert fns[step.FN_LIDAR] == 0 and fns[step.FN_PIXELS] == 0
    lidar = gym.make("PushBox-v0", lidar=dict(number=8))
    lidar.reset(seed=0)
    assert lidar.unwrapped.core._fns[step.FN_LIDAR] == step.LIDAR_SENSE.address != 0


def test_a_structure_of_another_type_is_refused_before_its_pointer_is_taken():
    env = gym.make_vec("PushBox-v0", num_envs=2)
    T = env.unwrapped.task_arrays
    with pytest.raises(TypeError, match="TaskArrays.mem"):
        step.TASK_ABI.check(T._replace(mem=T.mem.astype(np.float32)))
    with pytest.raises(TypeError, match="TaskArrays.goal"):
        step.TASK_ABI.check(T._replace(goal=np.zeros((4, 2))[::2]))  # strided, not C
    step.TASK_ABI.check(T)
