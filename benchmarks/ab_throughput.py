"""Same-run A/B of env throughput between two checkouts, in CPU time, one numba thread.

    python benchmarks/ab_throughput.py --base /path/to/other/checkout            # all tasks
    python benchmarks/ab_throughput.py --base ../base --tasks PushBox-v0 --rounds 7
    python benchmarks/ab_throughput.py --base ../base --csv ab.csv
    python benchmarks/ab_throughput.py --base ../base --paired --tasks WallSlide-v0

Each round runs, for every task and form (``gym.make``: one env, ``make_vec``: N = 4096
envs), one fresh process per side, alternating which side goes first. A process steps the
env through pre-generated random actions and reports env-steps per CPU-second
(``time.process_time``, ``NUMBA_NUM_THREADS=1``). Other jobs and a process's memory layout
only ever slow a figure down, so the fair figure per side is its best round; the table gives
min / median / max per side and the ratio of the bests (this checkout over ``--base``).

``--paired`` runs the two sides' processes at once instead, each pinned to a core of its own
(the cores swapped round by round), their timed loops started together, and gives the ratio
round by round (min / median / max): on a shared 2-core machine whose speed drifts by the
minute, a slowdown then hits both sides of a round alike, and the ratio is the steadiest
figure (rates of runs taken one after the other were seen to differ 2x within one side).
``--paired --same-core`` puts both on one core, which the kernel time-slices between them:
they then share its clock and caches too. Each slice starts with caches the other side
filled, so that figure also charges a side for a larger working set, which a process alone
on its core does not pay: five tasks whose batch throughput measured 1.05-1.18x between two
checkouts run alone (the default, on a quiet machine) read 0.87-0.92x paired on one core.
Quote the form the question is about.

A task whose id one side does not register (a checkout from before or after a version bump)
runs under the id of the same name that side has. Each side keeps its kernels in a cache
folder of its own (``--cache-root``), so neither loads the other's. Warm them first
(``--warm``) or the first round includes compiling.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

_WORKER = r"""
import json, os, sys, time
import numpy as np
import gymnasium as gym
import push_envs
env_id, n, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
if env_id not in push_envs.ENV_IDS:
    # the same task under its id on this side (a checkout from before or after a bump)
    name = env_id.rsplit("-v", 1)[0]
    env_id = next((i for i in push_envs.ENV_IDS if i.rsplit("-v", 1)[0] == name), env_id)


def barrier():
    # --paired: both sides start their timed loops together (each touches a file, then
    # waits for the other's), so the two loops overlap from their first step.
    folder = os.environ.get("AB_BARRIER")
    if folder:
        open(os.path.join(folder, str(os.getpid())), "w").close()
        while len(os.listdir(folder)) < 2:
            time.sleep(0.001)


if n == 1:
    env = gym.make(env_id)
    env.reset(seed=0)
    acts = rng.uniform(-1, 1, (steps,) + env.action_space.shape).astype(np.float32)
    for a in acts[:50]:
        _, _, te, tr, _ = env.step(a)
        if te or tr:
            env.reset()
    barrier()
    t0 = time.process_time()
    for a in acts:
        _, _, te, tr, _ = env.step(a)
        if te or tr:
            env.reset()
    dt = time.process_time() - t0
    rate = steps / dt
else:
    env = gym.make_vec(env_id, num_envs=n)
    env.reset(seed=0)
    acts = rng.uniform(-1, 1, (steps,) + env.action_space.shape).astype(np.float32)
    for a in acts[:3]:
        env.step(a)
    barrier()
    t0 = time.process_time()
    for a in acts:
        env.step(a)
    dt = time.process_time() - t0
    rate = steps * n / dt
print(json.dumps({"rate": rate}))
"""


def _worker_env(side: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(side), XDG_CACHE_HOME=str(cache), NUMBA_NUM_THREADS="1",
               SDL_VIDEODRIVER="dummy")
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("NUMBA_OPT", None)
    return env


def _command(env_id: str, n: int, steps: int) -> list[str]:
    return [sys.executable, "-c", _WORKER, env_id, str(n), str(steps)]


def _rate(stdout: str) -> float:
    return json.loads(stdout.strip().splitlines()[-1])["rate"]


def run(side: Path, cache: Path, env_id: str, n: int, steps: int) -> float:
    out = subprocess.run(_command(env_id, n, steps), env=_worker_env(side, cache),
                         cwd=tempfile.gettempdir(),
                         capture_output=True, text=True, check=True)
    return _rate(out.stdout)


def run_paired(sides: dict[str, Path], caches: dict[str, Path], env_id: str, n: int,
               steps: int, swap: bool, same_core: bool = False) -> dict[str, float]:
    """Both sides at once, their timed loops started together: each pinned to a core of its
    own (swapped by ``swap``), or with ``same_core`` both on one core, which the kernel then
    shares between them. What slows the machine down then slows both alike, so their ratio
    holds where the rates of runs taken one after the other drift apart; on one core they
    also share its clock, its caches and the other core's neighbours."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2 and not same_core:
        raise SystemExit("ab_throughput: --paired needs two cores (or --same-core)")
    procs = {}
    with tempfile.TemporaryDirectory() as barrier:
        for i, k in enumerate(sides):
            core = cores[0] if same_core else cores[(i + swap) % 2]
            procs[k] = subprocess.Popen(
                _command(env_id, n, steps),
                env=dict(_worker_env(sides[k], caches[k]), AB_BARRIER=barrier),
                cwd=tempfile.gettempdir(),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                preexec_fn=lambda c=core: os.sched_setaffinity(0, {c}))
        got = {}
        for k, proc in procs.items():
            out, err = proc.communicate()
            if proc.returncode != 0:
                raise RuntimeError(f"{k} side, {env_id} (envs={n}) failed:\n{err[-2000:]}")
            got[k] = _rate(out)
    return got


def registered_ids(side: Path) -> list[str]:
    """The task ids registered by the checkout ``side`` (its ``push_envs.ENV_IDS``)."""
    env = dict(os.environ, PYTHONPATH=str(side), SDL_VIDEODRIVER="dummy")
    out = subprocess.run([sys.executable, "-c", "import push_envs; print(*push_envs.ENV_IDS)"],
                         env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True,
                         check=True)
    return out.stdout.split()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, type=Path, help="the other checkout")
    ap.add_argument("--tasks", nargs="+", default=None,
                    help="task ids (default: every task this checkout registers)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--num-envs", type=int, default=4096)
    ap.add_argument("--single-steps", type=int, default=20_000)
    ap.add_argument("--batch-steps", type=int, default=30)
    ap.add_argument("--cache-root", type=Path, default=Path(tempfile.gettempdir()) / "ab-cache")
    ap.add_argument("--warm", action="store_true", help="one untimed run per side and form")
    ap.add_argument("--paired", action="store_true",
                    help="run both sides at once, each pinned to a core (cores swapped round by "
                         "round), and give the ratio round by round (min / median / max)")
    ap.add_argument("--same-core", action="store_true",
                    help="with --paired: both sides on one core, time-sliced by the kernel")
    ap.add_argument("--csv", type=Path, default=None)
    args = ap.parse_args()
    sides = {"this": HERE, "base": args.base.resolve()}
    args.tasks = args.tasks or registered_ids(HERE)
    caches = {k: args.cache_root / k for k in sides}
    forms = [(1, args.single_steps), (args.num_envs, args.batch_steps)]
    if args.warm:
        for t in args.tasks:
            for n, _ in forms:
                for k in sides:
                    run(sides[k], caches[k], t, n, 2)
    rows = []
    how = ("paired rounds (both sides at once, " + ("sharing one core)" if args.same_core
                                                      else "a core each)") if args.paired
           else "alternating rounds")
    if args.same_core and not args.paired:
        raise SystemExit("ab_throughput: --same-core goes with --paired")
    print(f"# A/B: this = {HERE}, base = {sides['base']}; CPU time, 1 numba thread, "
          f"{args.rounds} {how}; best / median / min env-steps per CPU-s")
    last = "this / base by round, min / median / max" if args.paired else "ratio of bests"
    print("| task | envs | this best | this median | this min | base best | base median | "
          f"base min | {last} |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for t in args.tasks:
        for n, steps in forms:
            got: dict[str, list[float]] = {k: [] for k in sides}
            for r in range(args.rounds):
                if args.paired:
                    pair = run_paired(sides, caches, t, n, steps, swap=r % 2 == 1,
                                      same_core=args.same_core)
                    for k in sides:
                        got[k].append(pair[k])
                    continue
                order = ("this", "base") if r % 2 == 0 else ("base", "this")
                for k in order:
                    got[k].append(run(sides[k], caches[k], t, n, steps))
            a, b = got["this"], got["base"]
            if args.paired:
                by_round = sorted(x / y for x, y in zip(a, b, strict=True))
                ratio = statistics.median(by_round)
                last = f"{by_round[0]:.3f} / {ratio:.3f} / {by_round[-1]:.3f}"
            else:
                ratio = max(a) / max(b)
                last = f"{ratio:.3f}"
            rows.append({"task": t, "envs": n, "this": a, "base": b, "ratio": ratio})
            print(f"| {t} | {n} | {max(a):,.0f} | {statistics.median(a):,.0f} | {min(a):,.0f} | "
                  f"{max(b):,.0f} | {statistics.median(b):,.0f} | {min(b):,.0f} | "
                  f"{last} |", flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["task", "envs", "side", "round", "env_steps_per_cpu_s"])
            for row in rows:
                for side in ("this", "base"):
                    for i, v in enumerate(row[side]):
                        w.writerow([row["task"], row["envs"], side, i, f"{v:.1f}"])


if __name__ == "__main__":
    main()
