"""Physics step throughput: world steps/s and env-steps/s, worst overlap and sweeps.

    python benchmarks/physics.py               # full table
    python benchmarks/physics.py --quick       # fewer steps/repeats, smaller batches
    python benchmarks/physics.py --repeats 7 --steps 500
    python benchmarks/physics.py --only grid --peers   # + Box2D v3 and pymunk, same scene

The "grid" scene is the peer scene of ``benchmarks/peers/common.py`` (10 robots under a
50 x 20 grid of 0.4 m boxes in a 32 m arena); ``--peers`` runs Box2D v3 (through
``--box2d-python``, an interpreter with the ``box2d-python`` wheel, Python 3.12) and pymunk
(if importable) on it as subprocesses, in the same run, and adds their rows. Reference
engines are never imported by push_envs.

Each scene is a walled arena sized to its body count, with robots (diff drive, circles) on
fixed pre-generated commands that drive them into the boxes. The first step (which includes
numba compilation when the cache is cold) is timed separately; then each repeat times
``--steps`` calls of ``World.step_raw`` (commands written into ``World.cmd`` beforehand, the
hot path RL wrappers use) with ``time.perf_counter`` (``--cpu``: ``time.process_time``), and the
table reports the median, min and max over repeats, the worst overlap and most sweeps of any
step, and the mean number of bodies asleep per env and step (``--no-sleep`` turns sleeping
off). Commands cycle through a fixed table, identical in every repeat.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time

import numba
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from push_envs.physics import World  # noqa: E402

TARGETS = {("1 robot + 1 box", 1): 100_000.0, ("10 robots + 1000 boxes", 1): 200.0,
           ("10 robots + 1000 boxes, grid (peer scene)", 1): 1_300.0}


def _walls(half_x: float, half_y: float, t: float = 0.2) -> list[dict]:
    def wall(name, x, y, length, width):
        return {"name": name, "shape": {"name": "rectangle", "length": length, "width": width},
                "state": [x, y, 0.0], "static": True}

    return [wall("wall_e", half_x + t / 2, 0.0, t, 2 * half_y + 2 * t),
            wall("wall_w", -half_x - t / 2, 0.0, t, 2 * half_y + 2 * t),
            wall("wall_n", 0.0, half_y + t / 2, 2 * half_x, t),
            wall("wall_s", 0.0, -half_y - t / 2, 2 * half_x, t)]


def make_scene(n_robots: int, n_boxes: int, seed: int = 0) -> dict:
    """Robots in a row at the bottom of an arena, boxes on a jittered grid above them."""
    rng = np.random.default_rng(seed)
    spacing = 0.6
    cols = max(int(math.ceil(math.sqrt(n_boxes))), n_robots, 1)
    rows = int(math.ceil(n_boxes / cols))
    half_x = cols * spacing / 2 + 0.4
    half_y = (rows + 2) * spacing / 2 + 0.4
    robots = []
    for r in range(n_robots):
        x = -half_x + 0.4 + (r + 0.5) * (2 * half_x - 0.8) / n_robots
        robots.append({"name": f"robot{r}", "kinematics": {"name": "diff"},
                       "shape": {"name": "circle", "radius": 0.15},
                       "state": [x, -half_y + 0.4 + 0.2, math.pi / 2], "mass": 2.0})
    boxes = []
    for k in range(n_boxes):
        i, j = k % cols, k // cols
        x = -half_x + 0.4 + spacing * (i + 0.5) + rng.uniform(-0.05, 0.05)
        y = -half_y + 0.4 + spacing * (j + 2.0) + rng.uniform(-0.05, 0.05)
        boxes.append({"name": f"box{k}",
                      "shape": {"name": "rectangle", "length": 0.3, "width": 0.3},
                      "state": [x, y, float(rng.uniform(-0.5, 0.5))],
                      "mass": float(rng.uniform(0.3, 1.0))})
    return {"world": {"step_time": 0.1}, "robot": robots,
            "obstacle": boxes + _walls(half_x, half_y)}


def grid_scene() -> dict:
    """The peer scene (benchmarks/peers/common.py) for this engine: omni robots of 20 kg
    (98.1 N of traction, above a 20-box column's 49 N), so they push like the peers'
    kinematic robots."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
    import common as pc

    robots = [{"name": f"robot{k}", "kinematics": {"name": "omni"}, "mass": 20.0,
               "shape": {"name": "circle", "radius": pc.ROBOT_R}, "state": [x, y, 0.0]}
              for k, (x, y) in enumerate(pc.robots())]
    boxes = [{"name": f"box{k}", "shape": {"name": "rectangle", "length": pc.BOX,
                                          "width": pc.BOX},
              "state": [x, y, 0.0], "mass": pc.BOX_MASS} for k, (x, y) in enumerate(pc.boxes())]
    return {"world": {"step_time": pc.DT}, "robot": robots,
            "obstacle": boxes + _walls(pc.ARENA, pc.ARENA)}


def command_table(w: World, length: int = 64, seed: int = 1) -> np.ndarray:
    """(length, E, B, 2) commands: forward at 0.5-1 m/s with slowly varying turn rates."""
    rng = np.random.default_rng(seed)
    E, B = w.num_envs, len(w.names)
    table = np.zeros((length, E, B, 2))
    driven = [w.index(n) for n in w.names if w.kinematics(n) is not None]
    t = np.arange(length)[:, None]
    for b in driven:
        v = rng.uniform(0.5, 1.0, size=(1, E))
        phase = rng.uniform(0, 2 * math.pi, size=(1, E))
        table[:, :, b, 0] = v
        table[:, :, b, 1] = 0.6 * np.sin(0.1 * t + phase)
    return table


def bench(n_robots: int, n_boxes: int, num_envs: int, steps: int, repeats: int,
          grid: bool = False, sleeping: bool = True, clock=time.perf_counter) -> dict:
    t0 = time.perf_counter()
    w = World.from_config(grid_scene() if grid else make_scene(n_robots, n_boxes),
                          num_envs=num_envs)
    w.sleeping = sleeping
    build = time.perf_counter() - t0
    table = command_table(w)
    if grid:
        table[:] = 0.0
        table[:, :, [w.index(f"robot{k}") for k in range(n_robots)], 1] = 1.0  # +y, 1 m/s
    t0 = time.perf_counter()
    w.cmd[:] = table[0]
    w.step_raw()
    first = time.perf_counter() - t0
    # Warm-up run (caches, thread pool).
    for i in range(min(steps, 20 if num_envs < 64 else 2)):
        w.cmd[:] = table[i % len(table)]
        w.step_raw()
    times = []
    worst = 0.0
    most = 0
    asleep = 0
    for _ in range(repeats):
        w.reset()
        t0 = clock()
        for i in range(steps):
            w.cmd[:] = table[i % len(table)]
            w.step_raw()
        times.append(clock() - t0)
    # One more, untimed run for the health figures: max_penetration is the overlap at the
    # final poses (checked against an independent SAT in tests/physics/test_scale.py), so
    # its largest value is the worst overlap of any step; reading it in the timed loop
    # would cost a few us per step.
    w.reset()
    for i in range(steps):
        w.cmd[:] = table[i % len(table)]
        w.step_raw()
        worst = max(worst, float(w.max_penetration.max()))
        most = max(most, int(w.sweeps.max()))
        asleep += int(w.asleep.sum())
    rates = sorted(steps / t for t in times)
    return {"build": build, "first": first, "median": statistics.median(rates),
            "min": rates[0], "max": rates[-1], "maxpen": worst, "sweeps": most,
            "asleep": asleep / (steps * num_envs)}


def peer_rows(steps: int, repeats: int, box2d_python: str) -> list[tuple[str, list[float], float]]:
    """(engine, steps/s per round, worst overlap [m]) of the peers, run as subprocesses."""
    import json
    import subprocess

    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers")
    runs = []
    if box2d_python:
        runs += [[box2d_python, os.path.join(here, "box2d_bench.py"), "--sleep", str(sl)]
                 for sl in (0, 1)]
    runs.append([sys.executable, os.path.join(here, "pymunk_bench.py")])
    out = []
    for cmd in runs:
        rates, worst, name = [], 0.0, cmd[1]
        for _ in range(repeats):
            p = subprocess.run(cmd + ["--steps", str(steps)], capture_output=True, text=True)
            if p.returncode != 0:
                print(f"# {os.path.basename(cmd[1])}: not run ({p.stderr.strip()[-200:]})")
                break
            r = json.loads(p.stdout.strip().splitlines()[-1])
            rates.append(r["steps_per_s"])
            worst = max(worst, r["worst_overlap_m"])
            name = r["engine"]
        if rates:
            out.append((name, sorted(rates), worst))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=None,
                    help="steps per repeat (default: scaled per scene so a repeat takes ~1 s)")
    ap.add_argument("--quick", action="store_true",
                    help="3 repeats, few steps, 1024 instead of 4096 envs")
    ap.add_argument("--only", default="",
                    help="run only scenes whose label contains this text (e.g. '50 boxes')")
    ap.add_argument("--peers", action="store_true",
                    help="also run Box2D v3 and pymunk on the grid scene (subprocesses)")
    ap.add_argument("--box2d-python", default="/work/box2d-venv/bin/python",
                    help="interpreter with the box2d-python wheel (Python 3.12)")
    ap.add_argument("--no-sleep", action="store_true",
                    help="World.sleeping = False (every body awake every sub-step)")
    ap.add_argument("--cpu", action="store_true",
                    help="time with time.process_time (CPU time of this process: steadier "
                         "than wall-clock on a shared machine; single-threaded runs only)")
    args = ap.parse_args(argv)
    clock = time.process_time if args.cpu else time.perf_counter
    repeats = 3 if args.quick else args.repeats
    big = 1024 if args.quick else 4096
    cases = [
        ("1 robot + 1 box", 1, 1, [1, big], 20_000),
        ("5 robots + 10 boxes", 5, 10, [1, big], 5_000),
        ("10 robots + 50 boxes", 10, 50, [1, big], 1_000),
        ("10 robots + 1000 boxes", 10, 1000, [1, 16], 100),
        ("10 robots + 1000 boxes, grid (peer scene)", 10, 1000, [1], 200),
    ]
    print(f"# Physics benchmark ({platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, numba {numba.__version__}, "
          f"NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS})\n")
    print(f"# clock: {'CPU time' if args.cpu else 'wall-clock'}; sleeping "
          f"{'off' if args.no_sleep else 'on'}\n")
    print("| scene | envs | build s | first step s | world steps/s (median [min, max]) "
          "| env-steps/s | target | max pen. m | sweeps | asleep (mean) |")
    print("|---|---:|---:|---:|---|---:|---|---:|---:|---:|")
    for label, nr, nb, env_counts, base_steps in cases:
        if args.only not in label:
            continue
        for num_envs in env_counts:
            # Batches get fewer steps so that one repeat stays around a few seconds.
            steps = args.steps or max(3, int(base_steps / max(1, num_envs // 16)))
            if args.quick:
                steps = max(3, steps // 10)
            r = bench(nr, nb, num_envs, steps, repeats, grid="grid" in label,
                      sleeping=not args.no_sleep, clock=clock)
            target = TARGETS.get((label, num_envs))
            if target is None:
                tgt = ""
            else:
                ok = "PASS" if r["median"] >= target else "MISS"
                tgt = f">= {target:,.0f} ({ok})"
            print(f"| {label} | {num_envs} | {r['build']:.2f} | {r['first']:.3f} | "
                  f"{r['median']:,.0f} [{r['min']:,.0f}, {r['max']:,.0f}] | "
                  f"{r['median'] * num_envs:,.0f} | {tgt} | {r['maxpen']:.1e} | "
                  f"{r['sweeps']} | {r['asleep']:.0f} |", flush=True)
    if args.peers:
        steps = args.steps or (20 if args.quick else 200)
        for name, rates, worst in peer_rows(steps, repeats, args.box2d_python):
            med = statistics.median(rates)
            print(f"| {name}: grid (peer scene) | 1 | | | {med:,.0f} [{rates[0]:,.0f}, "
                  f"{rates[-1]:,.0f}] | {med:,.0f} | | {worst:.1e} | | |", flush=True)


if __name__ == "__main__":
    main()
