"""Per-task entry kernels: generated once, loaded from numba's cache by later processes."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

from push_envs.envs import codegen

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import gymnasium as gym, numpy as np, push_envs
env = gym.make_vec("PushBox-v0", num_envs=2)
env.reset(seed=0)
env.step(np.zeros((2, 2)))
k = env.unwrapped._kernels
print(sum(k.step_serial.stats.cache_hits.values()), sum(k.step_serial.stats.cache_misses.values()),
      k.__file__)
"""


def test_a_second_process_loads_the_task_kernels_from_the_cache():
    runs = [subprocess.run([sys.executable, "-W", "ignore", "-c", _PROBE], capture_output=True,
                           text=True, cwd=ROOT, timeout=900) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    hits, misses, path = runs[1].stdout.split()
    assert (int(hits), int(misses)) == (1, 0)
    text = Path(path).read_text()
    assert "from push_envs.envs.push_box import spawn, start, is_success, goal_reward" in text
    assert "from push_envs.envs.push_box import evaluate as _evaluate, observe as _observe" \
        in text
    assert "Task source hash:" in text


def test_a_task_module_without_its_hooks_is_named(monkeypatch):
    mod = types.ModuleType("half_task")
    mod.spawn = mod.observe = lambda *a: None
    monkeypatch.setitem(sys.modules, "half_task", mod)
    with pytest.raises(TypeError, match=r"half_task.*\['evaluate', 'start', 'is_success', "
                                        r"'goal_reward'\]"):
        codegen.task_kernels("half_task")


def test_one_env_and_a_batch_share_one_compiled_kernel():
    # Every argument of the entry kernels must type the same for one env and for a batch:
    # a C-contiguous view for E = 1 and a strided one for E > 1 once made numba compile each
    # task's kernels twice per process (about a third of a fresh checkout's compile time).
    import gymnasium as gym
    import numpy as np

    single = gym.make("PushBox-v0")
    single.reset(seed=0)
    single.step(np.zeros(2, np.float32))
    batch = gym.make_vec("PushBox-v0", num_envs=3)
    batch.reset(seed=0)
    batch.step(np.zeros((3, 2), np.float32))
    k = batch.unwrapped._kernels
    assert single.unwrapped.core._kernels is k
    for name in ("step_serial", "reset_rows"):
        assert len(getattr(k, name).overloads) == 1, name


def test_the_per_step_hooks_are_inlined_into_chunks_of_rows():
    # observe and evaluate are compiled into step_rows (a call per env would pass every array
    # of W, V and T); the task module's own hooks stay plain jitted functions.
    from push_envs.envs import push_box

    k = codegen.task_kernels("push_envs.envs.push_box")
    assert k.observe.py_func is push_box.observe.py_func
    assert k.evaluate.py_func is push_box.evaluate.py_func
    assert k.observe.targetoptions.get("inline") == "always"
    assert k.evaluate.targetoptions.get("inline") == "always"
    assert push_box.observe.targetoptions.get("inline", "never") == "never"
    assert k.CHUNK == 32


def test_step_rows_compiles_once_for_one_env_and_for_prange_batches():
    # step_serial once passed a literal 0 as lo, which numba types Literal[int](0): step_rows
    # (the whole physics step inlined) then compiled a second time for the prange kernel's
    # int64 (49 -> 94 CPU-s for a fresh batch of 16). One cached overload means one compile.
    import gymnasium as gym
    import numpy as np

    from push_envs import _numba_cache

    for n in (1, 16):  # 16: the prange kernel (PARALLEL_MIN_ENVS)
        env = gym.make_vec("PushBox-v0", num_envs=n)
        env.reset(seed=0)
        env.step(np.zeros((n, 2), np.float32))
    found = list(Path(_numba_cache.CACHE_DIR).glob(
        "push_envs_tasks*/push_envs_envs_push_box.step_rows-*.nbc"))
    assert len(found) == 1, found
