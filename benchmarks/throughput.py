"""Env-steps per second of the tasks, single and batched, plus the cold start.

    python benchmarks/throughput.py                 # full table (about 3-5 minutes)
    python benchmarks/throughput.py --quick         # fewer repeats and steps
    python benchmarks/throughput.py --compare       # also Gymnasium's SyncVectorEnv, for the ratio
    python benchmarks/throughput.py --cold-start    # only the import/compile timings
    python benchmarks/throughput.py --no-cold-start # only the throughput table
    python benchmarks/throughput.py --sensors       # only lidar and pixel rows, beside
                                                    # gym-pusht's pixel mode when installed
    python benchmarks/throughput.py --cpu-time      # time the steps in process CPU time
    python benchmarks/throughput.py --csv docs/data/throughput.csv  # also write the rows

``--cpu-time`` times with time.process_time instead of the wall clock. On a shared host a
wall-clock run also counts the time other processes take the core away, so for an A/B of
two checkouts (``PYTHONPATH=<checkout>``, alternating rounds, ``--threads 1``) the CPU
time's best repeat (the max column) is the steadier figure. With several numba threads it
sums their time.

Every figure is the median of ``--repeats`` timed runs (min and max beside it), measured
with time.perf_counter around ``step()`` calls on pre-generated random actions (sampling an
action space costs more than a step). Observation, reward and autoreset are included: the
batches run with the default NEXT_STEP autoreset and the single env resets itself when an
episode ends, as a training loop would.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

# The step timer: the wall clock, or the process's CPU time with --cpu-time.
_clock = time.perf_counter

TARGETS = {"vec4096": 1_000_000, "single": 50_000, "cold": 3.0}
# make_vec N=1024 targets of the many-object tasks (issue 12) [env-steps/s]
TARGETS_1024 = {"PushMulti-v0": 300_000, "PushClutter-v0": 300_000, "Sweep-v1": 100_000}


# The table's rows for --csv: one dict per printed row.
_ROWS: list[dict] = []
_RUN: dict = {}  # what every row shares (threads, clock, repeats), set by main()


def _record(task: str, env: str, num_envs: int, obs: str, steps: int,
            s: tuple[float, float, float]) -> None:
    """Keep one printed row for the CSV file (env-steps/s median, min, max)."""
    _ROWS.append({"task": task, "env": env, "num_envs": num_envs, "obs": obs,
                  "steps_per_run": steps, **_RUN, "median": round(s[0], 1),
                  "min": round(s[1], 1), "max": round(s[2], 1)})


def _write_csv(path: str) -> None:
    if not _ROWS:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", newline="") as fh:
        out = csv.DictWriter(fh, fieldnames=list(_ROWS[0]))
        out.writeheader()
        out.writerows(_ROWS)
    print(f"wrote {path}")


def _stats(values: list[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


def _time_batched(env, actions: np.ndarray, repeats: int) -> tuple[float, float, float]:
    """Env-steps/s of a batched env stepped through ``actions`` (steps, n, A), repeatedly."""
    steps, n = actions.shape[:2]
    rates = []
    for _ in range(repeats):
        t0 = _clock()
        for a in actions:
            env.step(a)
        rates.append(steps * n / (_clock() - t0))
    return _stats(rates)


def _time_single(env, actions: np.ndarray, repeats: int) -> tuple[float, float, float]:
    """Steps/s of one env stepped through ``actions`` (steps, A), resetting where an episode
    ends (as a training loop would), repeatedly."""
    rates = []
    for _ in range(repeats):
        t0 = _clock()
        for a in actions:
            _, _, term, trunc, _ = env.step(a)
            if term or trunc:
                env.reset()
        rates.append(len(actions) / (_clock() - t0))
    return _stats(rates)


def bench_single(env_id: str, steps: int, repeats: int, **kwargs) -> tuple[float, float, float]:
    import gymnasium as gym

    env = gym.make(env_id, **kwargs)
    env.reset(seed=0)
    actions = np.random.default_rng(0).uniform(
        -1, 1, (steps, *env.action_space.shape)).astype(np.float32)
    _time_single(env, actions[:200], 1)  # warm-up: compile and touch the caches
    return _time_single(env, actions, repeats)


def bench_vec(env_id: str, n: int, steps: int, repeats: int,
              num_threads: int | None, **kwargs) -> tuple[float, float, float]:
    import gymnasium as gym

    env = gym.make_vec(env_id, num_envs=n, num_threads=num_threads, **kwargs)
    env.reset(seed=0)
    actions = np.random.default_rng(0).uniform(
        -1, 1, (steps, *env.action_space.shape)).astype(np.float32)
    for a in actions[: min(steps, 20)]:
        env.step(a)
    return _time_batched(env, actions, repeats)


def bench_sync(env_id: str, n: int, steps: int, repeats: int) -> tuple[float, float, float]:
    import gymnasium as gym

    env = gym.make_vec(env_id, num_envs=n, vectorization_mode="sync")
    env.reset(seed=0)
    actions = np.random.default_rng(0).uniform(
        -1, 1, (steps, *env.action_space.shape)).astype(np.float32)
    return _time_batched(env, actions, repeats)


_COLD = ("import time; t=time.perf_counter(); import gymnasium as gym, numpy as np, push_envs; "
         "e=gym.make('PushBox-v0'); e.reset(seed=0); e.step(np.zeros(2, np.float32)); "
         "v=gym.make_vec('PushBox-v0', num_envs=32); v.reset(seed=0); "
         "v.step(np.zeros((32, 2), np.float32)); print(time.perf_counter()-t)")


def cold_start(repeats: int) -> tuple[float, list[float]]:
    """First start with an empty numba cache (compiles), then cached starts [s]."""
    cache = tempfile.mkdtemp(prefix="push_envs_cold_")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    try:
        first = float(subprocess.check_output([sys.executable, "-c", _COLD], env=env))
        cached = [float(subprocess.check_output([sys.executable, "-c", _COLD], env=env))
                  for _ in range(repeats)]
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return first, cached


def bench_gym_pusht(steps: int, repeats: int) -> tuple[float, float, float] | None:
    """gym-pusht's PushT-v0 in its pixel mode (96 x 96), or None when it is not installed."""
    try:
        import gym_pusht  # noqa: F401
        import gymnasium as gym
    except ImportError:
        return None
    env = gym.make("gym_pusht/PushT-v0", obs_type="pixels")
    env.reset(seed=0)
    actions = np.random.default_rng(0).uniform(0, 512, (steps, 2)).astype(np.float32)
    return _time_single(env, actions, repeats)


LIDAR_32 = {"number": 32, "range_max": 3.0, "angle_range": 2 * np.pi}


def sensor_rows(args) -> None:
    """Lidar (N = 4096, 32 beams) and pixel (N = 1024, 96 x 96) rows, and gym-pusht's pixels."""
    print("| task | env | env-steps/s (median) | min | max |")
    print("|---|---|---|---|---|")
    rows = [("PushBox-v0", 4096, "state (no sensor)", {}),
            ("PushBox-v0", 4096, "lidar 32 beams", {"lidar": LIDAR_32}),
            ("PushBox-v0", 1024, "obs_mode pixels 96x96", {"obs_mode": "pixels"}),
            ("PushT-v0", 1024, "obs_mode pixels 96x96", {"obs_mode": "pixels"}),
            ("PushBox-v0", 1024, "pixels+state, lidar 32", {"obs_mode": "pixels+state",
                                                             "lidar": LIDAR_32})]
    for task, n, what, kw in rows:
        r = bench_vec(task, n, args.steps, args.repeats, args.threads, **kw)
        print(f"| {task} | make_vec N={n}, {what} | {_fmt(r)} |", flush=True)
        _record(task, "make_vec", n, what, args.steps, r)
    single = bench_single("PushT-v0", args.single_steps, args.repeats, obs_mode="pixels")
    print(f"| PushT-v0 | gym.make, obs_mode pixels 96x96 | {_fmt(single)} |", flush=True)
    _record("PushT-v0", "gym.make", 1, "obs_mode pixels 96x96", args.single_steps, single)
    ref = bench_gym_pusht(max(200, args.single_steps // 20), args.repeats)
    if ref is None:
        print("| gym-pusht | not installed | | | |")
    else:
        print(f"| gym-pusht PushT-v0 | gym.make, obs_type pixels 96x96 | {_fmt(ref)} |",
              flush=True)
        _record("gym-pusht PushT-v0", "gym.make", 1, "obs_type pixels 96x96",
                max(200, args.single_steps // 20), ref)


def _fmt(s: tuple[float, float, float]) -> str:
    med, lo, hi = s
    return f"{med:,.0f} | {lo:,.0f} | {hi:,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=100, help="batched steps per timed run")
    ap.add_argument("--single-steps", type=int, default=10_000)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024, 4096])
    ap.add_argument("--tasks", nargs="+", default=None,
                    help="task ids (default: every registered task)")
    ap.add_argument("--threads", type=int, default=None, help="numba threads (default: all)")
    ap.add_argument("--quick", action="store_true", help="2 repeats, fewer steps")
    ap.add_argument("--compare", action="store_true", help="add SyncVectorEnv over single envs")
    ap.add_argument("--cold-start", action="store_true", help="only measure the cold start")
    ap.add_argument("--sensors", action="store_true", help="only the lidar and pixel rows")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time steps in process CPU time (time.process_time), not wall clock")
    ap.add_argument("--no-cold-start", action="store_true",
                    help="skip the cold start (it compiles everything once: ~2.5 min)")
    ap.add_argument("--csv", default=None,
                    help="also write the table's rows (env-steps/s) to this CSV file")
    args = ap.parse_args()
    if args.quick:
        args.repeats, args.steps, args.single_steps = 2, 30, 3000
    if args.cpu_time:
        global _clock
        _clock = time.process_time
    import numba

    import push_envs

    args.tasks = args.tasks or list(push_envs.ENV_IDS)

    _RUN.update(numba_threads=args.threads or numba.get_num_threads(),
                clock="cpu" if args.cpu_time else "wall", actions="random, pre-generated",
                repeats=args.repeats)
    print(f"# push_envs throughput ({os.cpu_count()} cores, numba threads "
          f"{args.threads or numba.get_num_threads()}, {args.repeats} repeats, "
          f"{'CPU time' if args.cpu_time else 'wall clock'})\n")
    if args.sensors:
        sensor_rows(args)
        if args.csv:
            _write_csv(args.csv)
        return
    if not args.cold_start:
        print("| task | env | env-steps/s (median) | min | max |")
        print("|---|---|---|---|---|")
        for task in args.tasks:
            single = bench_single(task, args.single_steps, args.repeats)
            print(f"| {task} | gym.make (1 env) | {_fmt(single)} |", flush=True)
            _record(task, "gym.make", 1, "state", args.single_steps, single)
            for n in args.sizes:
                steps = max(args.steps, 2000 // n) if n < 64 else args.steps
                r = bench_vec(task, n, steps, args.repeats, args.threads)
                print(f"| {task} | make_vec N={n} | {_fmt(r)} |", flush=True)
                _record(task, "make_vec", n, "state", steps, r)
                if args.compare and n in (1, 64):
                    s = bench_sync(task, n, max(20, 2000 // n), args.repeats)
                    print(f"| {task} | SyncVectorEnv N={n} | {_fmt(s)} | (ratio native/sync "
                          f"{r[0] / s[0]:.1f}x) |", flush=True)
                    _record(task, "SyncVectorEnv", n, "state", max(20, 2000 // n), s)
        if args.csv:
            _write_csv(args.csv)
        print(f"\ntargets: PushBox-v0 make_vec N=4096 >= {TARGETS['vec4096']:,}; "
              f"gym.make >= {TARGETS['single']:,}; make_vec N=1024: "
              + ", ".join(f"{k} >= {v:,}" for k, v in TARGETS_1024.items()))
    if args.no_cold_start:
        return
    first, cached = cold_start(max(3, args.repeats if not args.quick else 3))
    med, lo, hi = _stats(cached)
    print("\ncold start (import + make + first step of a single env and a 32-env batch):")
    print(f"  empty numba cache (compiles): {first:.1f} s")
    print(f"  cached: median {med:.2f} s (min {lo:.2f}, max {hi:.2f}); target <= "
          f"{TARGETS['cold']:.0f} s")


if __name__ == "__main__":
    main()
