"""Compile every task's kernels ahead of time: for container images and CI caches.

    python -m push_envs.warmup                 # every registered task
    python -m push_envs.warmup PushBox-v0 --jobs 2

The engine and the generic step are compiled once, by the first task, alone; the other
tasks (each compiling only its own hooks) then run in parallel processes. Each process makes
the task as ``gym.make`` and as a batch of 16 (the ``prange`` kernel), resets and steps both.
This only moves the wait: a later process loads everything from the cache.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import gymnasium as gym
import numpy as np


def exercise(env_id: str, num_envs: int = 16) -> None:
    """Make ``env_id`` as ``gym.make`` and as a batch of ``num_envs`` (16 or more: the
    ``prange`` kernel), reset and step both: compiles (or loads) every kernel the task runs."""
    env = gym.make(env_id)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    venv = gym.make_vec(env_id, num_envs=num_envs)
    venv.reset(seed=0)
    venv.step(np.zeros(venv.action_space.shape, np.float32))


_CHILD = "import sys; from push_envs.warmup import exercise; exercise(sys.argv[1])"


def warm(env_id: str) -> float:
    """Compile (or load) ``env_id``'s kernels in a fresh process; returns its wall time [s].
    An id that is not a push_envs task raises KeyError naming the registered tasks (before
    any process starts); a process that fails raises RuntimeError with its error output."""
    from .tasks import spec

    spec(env_id)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD, env_id], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"warm-up of {env_id} failed:\n{proc.stderr[-3000:]}")
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    import push_envs
    from push_envs.tasks import spec

    ap = argparse.ArgumentParser(prog="python -m push_envs.warmup", description=__doc__)
    ap.add_argument("ids", nargs="*", default=list(push_envs.ENV_IDS))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="parallel processes after the first task")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error(f"--jobs must be >= 1, got {args.jobs}")
    for env_id in args.ids:  # every id checked before the first compile
        try:
            spec(env_id)
        except KeyError as exc:
            ap.exit(2, f"{ap.prog}: {exc.args[0]}\n")
    first = args.ids[0]
    rest = [i for i in dict.fromkeys(args.ids[1:]) if i != first]  # each id once
    try:
        print(f"{first}: {warm(first):.1f} s (the engine and the generic step)", flush=True)
        with ThreadPoolExecutor(args.jobs) as pool:
            for env_id, dt in zip(rest, pool.map(warm, rest), strict=True):
                print(f"{env_id}: {dt:.1f} s", flush=True)
    except RuntimeError as exc:
        # the child's own traceback is the useful part; none of this process's
        ap.exit(1, f"{ap.prog}: {exc}\n")


if __name__ == "__main__":
    main()
