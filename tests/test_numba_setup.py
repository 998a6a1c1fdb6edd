"""numba set-up: source-keyed cache folder, fork-safe threading layer, thread count."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numba

from push_envs import _numba_cache

_FORK = textwrap.dedent("""
    import os, numpy as np, numba
    from push_envs.physics import World
    w = World.from_config("configs/push_box.yaml", num_envs=32)   # prange kernel
    w.cmd[:, 0] = [1.0, 0.3]
    w.step_raw()
    pid = os.fork()
    if pid == 0:
        w.step_raw()
        os._exit(0 if np.isfinite(w.pos).all() else 3)
    _, status = os.waitpid(pid, 0)
    print(numba.threading_layer(), os.waitstatus_to_exitcode(status))
""")


def test_cache_folder_is_keyed_by_the_sources():
    assert numba.config.CACHE_DIR == _numba_cache.CACHE_DIR
    assert os.path.basename(_numba_cache.CACHE_DIR).startswith(f"numba-{numba.__version__}-")


def test_forked_child_can_step_after_a_parallel_kernel_ran():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    out = subprocess.run([sys.executable, "-c", _FORK], capture_output=True, text=True,
                         env=env, cwd=os.path.dirname(os.path.dirname(__file__)), timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-2:] == ["workqueue", "0"]


def test_num_threads_setting_is_respected():
    from push_envs.physics import World

    w = World.from_config("configs/push_box.yaml", num_envs=32, num_threads=1)
    w.step_raw()
    assert numba.get_num_threads() == 1
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
