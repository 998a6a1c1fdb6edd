"""The 1000-box crowd against Box2D v3, and the cost of a step against the share at rest.

    python benchmarks/crowd.py --box2d-python /work/box2d-venv/bin/python     # the match
    python benchmarks/crowd.py --rounds 7 --steps 200 --csv crowd.csv
    python benchmarks/crowd.py --at-rest --csv docs/data/physics/sleeping_cost.csv

**The match.** The crowd is the peer scene (benchmarks/peers/common.py): 10 robots driving at
1 m/s into a 50 x 20 grid of 0.4 m boxes in a 32 m arena, 0.1 s steps; most boxes rest far
from the robots. Each round runs, in fresh processes and in alternating order, push_envs
(``World.step_raw``, one env, sleeping on) and Box2D v3 (``box2d-python``, an interpreter
given by ``--box2d-python``, Python 3.12) with its sleeping on and off, each timing
``--steps`` steps after 5 untimed ones, in CPU seconds of its own process
(``time.process_time``: steadier than wall-clock on a shared machine; both are
single-threaded). The table gives world steps per CPU-second, min / median / max over the
rounds, the ratio of push_envs' median to each Box2D row's median, and the deepest box-box
overlap of the final poses (common.worst_box_overlap, the same measure for both engines).

**At rest.** ``--at-rest`` times one push_envs step of 1000 boxes of which a fraction rests
and the rest spin in place on a frictionless floor (awake, touching nothing), with sleeping
on and off (alternating rounds), for fractions 0 to 1, and writes the CSV
docs/_scripts/sleeping_cost.py draws (microseconds per step, min / median / max over
``--rounds``).

Box2D is never imported by push_envs: it runs as a subprocess of another interpreter.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEERS = os.path.join(HERE, "peers")

_PUSH_ENVS = r"""
import json, os, sys, time
sys.path[:0] = [sys.argv[1], os.path.join(sys.argv[1], "benchmarks"),
                os.path.join(sys.argv[1], "benchmarks", "peers")]
import numpy as np
import common as pc
import physics as pb
from push_envs.physics import World
steps = int(sys.argv[2])
w = World.from_config(pb.grid_scene(), num_envs=1)
assert w.sleeping
robots = [w.index(f"robot{k}") for k in range(10)]
cmd = np.zeros_like(w.cmd)
cmd[0, robots, 1] = 1.0
for _ in range(5):
    w.cmd[:] = cmd
    w.step_raw()
t0 = time.process_time()
for _ in range(steps):
    w.cmd[:] = cmd
    w.step_raw()
cpu = time.process_time() - t0
poses = [tuple(w.state(f"box{k}")[0]) for k in range(1000)]
print(json.dumps({"engine": "push_envs (sleep on)", "steps_per_s": steps / cpu,
                  "worst_overlap_m": pc.worst_box_overlap(poses),
                  "asleep": int(w.asleep[0])}))
"""


def _run(cmd: list[str]) -> dict:
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])}...: {out.stderr.strip()[-400:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def match(rounds: int, steps: int, box2d_python: str, csv_path: str | None) -> None:
    runs = {"push_envs": [sys.executable, "-c", _PUSH_ENVS, ROOT, str(steps)]}
    if box2d_python:
        for sleep in (1, 0):
            runs[f"box2d{sleep}"] = [box2d_python, os.path.join(PEERS, "box2d_bench.py"),
                                     "--steps", str(steps), "--sleep", str(sleep), "--cpu"]
    got: dict[str, list[dict]] = {k: [] for k in runs}
    for r in range(rounds):
        keys = list(runs) if r % 2 == 0 else list(reversed(runs))
        for k in keys:
            try:
                got[k].append(_run(runs[k]))
            except RuntimeError as exc:
                print(f"# {k}: not run ({exc})", flush=True)
                runs.pop(k)
                break
    print(f"# The 1000-box crowd: {rounds} alternating rounds of {steps} steps, world steps "
          f"per CPU-second ({platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs)\n")
    print("| engine | steps/s min | median | max | push_envs / this (medians) | "
          "worst overlap [m] |")
    print("|---|---:|---:|---:|---:|---:|")
    ours = statistics.median(x["steps_per_s"] for x in got["push_envs"])
    for xs in got.values():
        if not xs:
            continue
        rates = sorted(x["steps_per_s"] for x in xs)
        med = statistics.median(rates)
        worst = max(x["worst_overlap_m"] for x in xs)
        print(f"| {xs[0]['engine']} | {rates[0]:,.0f} | {med:,.0f} | {rates[-1]:,.0f} | "
              f"{ours / med:.2f} | {worst:.1e} |", flush=True)
    if csv_path:
        with open(csv_path, "w", newline="") as fh:
            wr = csv.writer(fh)
            wr.writerow(["engine", "round", "steps_per_cpu_s", "worst_overlap_m"])
            for xs in got.values():
                for i, x in enumerate(xs):
                    wr.writerow([x["engine"], i, f"{x['steps_per_s']:.1f}",
                                 f"{x['worst_overlap_m']:.3g}"])


# ------------------------------------------------------------------------------ at rest
def rest_scene(n: int, at_rest: float) -> dict:
    """n 0.3 m boxes on a 0.6 m grid, frictionless floor; the first round(at_rest * n) rest,
    the others spin in place at 1 rad/s (awake for ever, touching nothing)."""
    cols = int(math.ceil(math.sqrt(n)))
    resting = int(round(at_rest * n))
    boxes = [{"name": f"b{k}", "mass": 0.5, "state": [0.6 * (k % cols), 0.6 * (k // cols), 0.0],
              "shape": {"name": "rectangle", "length": 0.3, "width": 0.3},
              "omega": 0.0 if k < resting else 1.0} for k in range(n)]
    return {"world": {"step_time": 0.1, "friction": 0.0}, "obstacle": boxes}


def at_rest_sweep(rounds: int, steps: int, csv_path: str | None, n: int = 1000) -> None:
    sys.path.insert(0, ROOT)
    from push_envs.physics import World

    fractions = [0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0]
    rows = []
    print(f"# {n} boxes, a fraction at rest, the rest spinning in place: microseconds per "
          f"world step (CPU), min / median / max of {rounds} rounds of {steps} steps\n")
    print("| at rest | sleeping | us/step min | median | max | asleep |")
    print("|---:|---|---:|---:|---:|---:|")
    for f in fractions:
        worlds = {}
        for sleeping in (True, False):
            worlds[sleeping] = World.from_config(rest_scene(n, f))
            worlds[sleeping].sleeping = sleeping
            for _ in range(3):
                worlds[sleeping].step_raw()
        times: dict[bool, list[float]] = {True: [], False: []}
        for r in range(rounds):  # the two alternate, so a busy moment costs both alike
            for sleeping in ((True, False) if r % 2 == 0 else (False, True)):
                w = worlds[sleeping]
                t0 = time.process_time()
                for _ in range(steps):
                    w.step_raw()
                times[sleeping].append(1e6 * (time.process_time() - t0) / steps)
        for sleeping in (True, False):
            ts = sorted(times[sleeping])
            asleep = int(worlds[sleeping].asleep[0])
            rows.append((f, sleeping, ts[0], statistics.median(ts), ts[-1], asleep))
            print(f"| {f:.2f} | {'on' if sleeping else 'off'} | {ts[0]:.1f} | "
                  f"{statistics.median(ts):.1f} | {ts[-1]:.1f} | {asleep} |", flush=True)
    if csv_path:
        with open(csv_path, "w", newline="") as fh:
            wr = csv.writer(fh)
            wr.writerow(["at_rest", "sleeping", "us_per_step_min", "us_per_step_median",
                         "us_per_step_max", "asleep"])
            for f, sl, lo, med, hi, asleep in rows:
                wr.writerow([f, int(sl), f"{lo:.2f}", f"{med:.2f}", f"{hi:.2f}", asleep])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--box2d-python", default="/work/box2d-venv/bin/python",
                    help="an interpreter with the box2d-python wheel (Python 3.12); '' skips")
    ap.add_argument("--at-rest", action="store_true",
                    help="the cost of a step against the share of bodies at rest instead")
    ap.add_argument("--csv", default=None)
    args = ap.parse_args(argv)
    if args.at_rest:
        at_rest_sweep(args.rounds, args.steps, args.csv)
    else:
        match(args.rounds, args.steps, args.box2d_python, args.csv)


if __name__ == "__main__":
    main()
