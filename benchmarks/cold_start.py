"""Cold and cached start of every registered task, each step in a fresh process.

    python benchmarks/cold_start.py                     # every task, a new empty cache
    python benchmarks/cold_start.py --tasks PushBox-v0 WallSlide-v0
    python benchmarks/cold_start.py --csv docs/data/cold_start.csv --cached-runs 7

What a new user pays. The script makes an empty cache folder of its own (``XDG_CACHE_HOME``
pointed at a new temporary folder, ``NUMBA_CACHE_DIR`` removed) and then, task after task
in registry order, runs three kinds of fresh process against it:

1. ``cold make``: ``import push_envs``, ``gym.make(id)``, ``reset``, one ``step``. The first
   task pays for the engine and the generic kernels too; every later one finds them cached
   and compiles only its own hooks.
2. ``cold make_vec``: then ``gym.make_vec(id, num_envs=4096)``, ``reset``, one ``step``
   (the parallel kernel, compiled once for all tasks, is paid by the first task).
3. ``cached``: then, ``--cached-runs`` times, the single-env start again (import, make,
   reset, step) with everything cached: the start every later process pays. Each is
   followed by a ``floor`` process that only starts Python and imports numpy, gymnasium and
   numba (what any process using push_envs pays before push_envs' own code runs), so the
   table can give push_envs' own share, ``cached - floor``, from runs taken side by side.

Each row gives CPU seconds (the child's user + system time, from ``os.wait4``) and wall
seconds. For the cold rows the child also reports the seconds numba spent under its compiler
lock (typing, lowering and LLVM together) and under the LLVM lock alone
(``numba.core.event``), so one can tell numba's own passes from LLVM's. For the cached row
the table gives min / median / max over the runs.

Nothing else should run while this measures: the figures are CPU seconds of one process,
but a busy machine still stretches them (cache misses, frequency).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from numba.core import event
timers = {k: event.TimingListener() for k in ("numba:compiler_lock", "numba:llvm_lock")}
for k, t in timers.items():
    event.register(k, t)
import numpy as np
import gymnasium as gym
import push_envs
env_id, n = sys.argv[1], int(sys.argv[2])
if n == 0:
    env = gym.make(env_id)
    env.reset(seed=0)
    env.step(env.action_space.sample())
else:
    env = gym.make_vec(env_id, num_envs=n)
    env.reset(seed=0)
    env.step(env.action_space.sample())
env.close()
out = {k: (t.duration if t.done else 0.0) for k, t in timers.items()}
out["inner_wall"] = time.perf_counter() - t0
print("COLD_START_RESULT " + json.dumps(out))
"""


_FLOOR = "import numpy, gymnasium, numba\nprint('COLD_START_RESULT {}')"


def _run(env_id: str, num_envs: int, env: dict[str, str],
         code: str = _CHILD) -> dict[str, float]:
    """One fresh process; returns its cpu [s], wall [s] and numba lock seconds."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-W", "ignore", "-c", code, env_id,
                             str(num_envs)], env=env, cwd=tempfile.gettempdir(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{env_id} (num_envs={num_envs}) failed:\n{err[-3000:]}")
    line = next(s for s in out.splitlines() if s.startswith("COLD_START_RESULT "))
    figures = json.loads(line.split(" ", 1)[1])
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall,
            "compiler_lock": figures.get("numba:compiler_lock", 0.0),
            "llvm_lock": figures.get("numba:llvm_lock", 0.0)}


def _registered() -> list[str]:
    sys.path.insert(0, str(ROOT))
    import push_envs

    return list(push_envs.ENV_IDS)


def main(argv: list[str] | None = None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", nargs="+", default=None, help="ids (default: every registered)")
    p.add_argument("--num-envs", type=int, default=4096, help="batch of the make_vec row")
    p.add_argument("--cached-runs", type=int, default=5, help="cached starts per task")
    p.add_argument("--csv", type=Path, default=None, help="also write the rows here")
    p.add_argument("--keep-cache", action="store_true", help="do not delete the cache folder")
    args = p.parse_args(argv)
    tasks = args.tasks or _registered()

    folder = Path(tempfile.mkdtemp(prefix="push_envs-cold-start-"))
    # A user's Python writes bytecode (pip compiles it at install): PYTHONDONTWRITEBYTECODE,
    # set on some CI machines, would add compiling every module's source to every start.
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "PUSH_ENVS_NUMBA_CACHE", "NUMBA_OPT",
                        "PYTHONDONTWRITEBYTECODE")}
    env["XDG_CACHE_HOME"] = str(folder)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    env.setdefault("SDL_VIDEODRIVER", "dummy")
    rows = []
    print(f"# {platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"empty cache {folder}", flush=True)
    head = (f"{'task':<16} {'cold make CPU s':>15} {'wall s':>7} {'(numba / LLVM s)':>17}   "
            f"{'make_vec CPU s':>14} {'wall s':>7}   {'cached wall s min/med/max':>26}   "
            f"{'floor s med':>11} {'own s med':>9}")
    print(head)
    print("-" * len(head), flush=True)
    try:
        for env_id in tasks:
            single = _run(env_id, 0, env)
            batch = _run(env_id, args.num_envs, env)
            cached, floor = [], []
            for _ in range(args.cached_runs):
                cached.append(_run(env_id, 0, env))
                floor.append(_run(env_id, 0, env, _FLOOR))
            walls = [c["wall"] for c in cached]
            own = [c["wall"] - f["wall"] for c, f in zip(cached, floor, strict=True)]
            row = {"task": env_id, "cold_make_cpu_s": single["cpu"],
                   "cold_make_wall_s": single["wall"],
                   "cold_make_compiler_lock_s": single["compiler_lock"],
                   "cold_make_llvm_lock_s": single["llvm_lock"],
                   "cold_make_vec_cpu_s": batch["cpu"], "cold_make_vec_wall_s": batch["wall"],
                   "num_envs": args.num_envs,
                   "cached_wall_min_s": min(walls), "cached_wall_median_s":
                       statistics.median(walls), "cached_wall_max_s": max(walls),
                   "cached_cpu_median_s": statistics.median(c["cpu"] for c in cached),
                   "cached_runs": len(cached),
                   "floor_wall_median_s": statistics.median(f["wall"] for f in floor),
                   "own_wall_median_s": statistics.median(own)}
            rows.append(row)
            lock = f"({single['compiler_lock']:.1f} / {single['llvm_lock']:.1f})"
            print(f"{env_id:<16} {single['cpu']:>15.1f} {single['wall']:>7.1f} {lock:>17}   "
                  f"{batch['cpu']:>14.1f} {batch['wall']:>7.1f}   "
                  f"{min(walls):>8.2f} / {statistics.median(walls):.2f} / {max(walls):.2f}   "
                  f"{row['floor_wall_median_s']:>11.2f} {row['own_wall_median_s']:>9.2f}",
                  flush=True)
    finally:
        if not args.keep_cache:
            shutil.rmtree(folder, ignore_errors=True)
    if args.csv is not None and rows:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return rows


if __name__ == "__main__":
    main()
