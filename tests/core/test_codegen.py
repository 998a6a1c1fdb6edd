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
from push_envs.core import codegen
from push_envs.core import compiled
from push_envs.core import step
from push_envs.core.task import TaskSpec
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


def _half_task(monkeypatch):
    """A task module whose TaskSpec declares two of its hooks (and one function it leaves
    undeclared, as a module-level name codegen must not pick up)."""
    mod = types.ModuleType("half_task")
    monkeypatch.setitem(sys.modules, "half_task", mod)

    class Half(TaskSpec):
        pass

    Half.__module__, Half.__qualname__ = "half_task", "Half"
    for name in ("spawn", "observe", "evaluate"):
        fn = compiled(types.FunctionType((lambda e, W, V, T: None).__code__, {}, name))
        fn.py_func.__module__ = "half_task"
        setattr(mod, name, fn)
    Half.hook(mod.spawn, mod.observe)
    return Half, mod


def test_a_task_without_its_hooks_is_named(monkeypatch):
    half, mod = _half_task(monkeypatch)
    # `evaluate` is a function of the module, but not declared: it is not a hook.
    with pytest.raises(TypeError, match=r"half_task.Half declares no hooks \['evaluate', "
                                        r"'start', 'is_success', 'goal_reward'\]"):
        codegen.task_kernels(half)
    with pytest.raises(ValueError, match="'spawning' is not a hook"):
        half.hook(mod.spawn, name="spawning")
    with pytest.raises(TypeError, match="not a compiled function"):
        half.hook(lambda e, W, V, T: None)


def test_hooks_are_declared_and_inherited():
    from push_envs.tasks.pushing import family
    from push_envs.tasks.pushing.push_box import PushBox
    from push_envs.tasks.pushing.push_t import PushT

    box = PushBox.declared_hooks()
    assert box["start"] is family.start and box["goal_reward"] is family.goal_reward
    assert box["is_success"] is family.is_success
    assert codegen.hook_sources(PushBox)["spawn"] == ("push_envs.tasks.pushing.push_box",
                                                      "spawn")
    # PushT declares its own start and goal_reward over the family's.
    assert codegen.hook_sources(PushT)["goal_reward"] == ("push_envs.tasks.pushing.push_t",
                                                          "goal_reward")
    assert family.SingleObjectTask.declared_hooks().keys() == {"start", "is_success",
                                                                "goal_reward"}


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


def test_a_sensor_is_called_only_by_an_env_that_observes_it():
    from push_envs.sensors.lidar2d import LIDAR_SENSE

    env = gym.make("PushBox-v0")
    env.reset(seed=0)
    assert env.unwrapped.core.env_arrays.sensors.shape == (0, step.SN_LEN)
    lidar = gym.make("PushBox-v0", lidar=dict(number=8))
    lidar.reset(seed=0)
    core = lidar.unwrapped.core
    (row,) = core.env_arrays.sensors
    assert row[step.SN_FN] == LIDAR_SENSE.address != 0
    assert row[step.SN_ARR] == core._sensor_packs[0].address
    assert row[step.SN_AT] == env.observation_space.shape[0]  # after the task's columns


def test_a_structure_of_another_type_is_refused_before_its_pointer_is_taken():
    env = gym.make_vec("PushBox-v0", num_envs=2)
    T = env.unwrapped.task_arrays
    with pytest.raises(TypeError, match="TaskArrays.mem"):
        step.TASK_ABI.check(T._replace(mem=T.mem.astype(np.float32)))
    with pytest.raises(TypeError, match="TaskArrays.goal"):
        step.TASK_ABI.check(T._replace(goal=np.zeros((4, 2))[::2]))  # strided, not C
    step.TASK_ABI.check(T)
