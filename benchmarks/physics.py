"""Physics step throughput: world steps/s and env-steps/s for four scenes.

    python benchmarks/physics.py               # full table
    python benchmarks/physics.py --quick       # fewer steps/repeats, smaller batches
    python benchmarks/physics.py --repeats 7 --steps 500

Each scene is a walled arena sized to its body count, with robots (diff drive, circles) on
fixed pre-generated commands that drive them into the boxes. The first step (which includes
numba compilation when the cache is cold) is timed separately; then each repeat times
``--steps`` calls of ``World.step_raw`` (commands written into ``World.cmd`` beforehand, the
hot path RL wrappers use) with ``time.perf_counter``, and the table reports the median, min and
max over repeats. Commands cycle through a fixed table, identical in every repeat.
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

TARGETS = {("1 robot + 1 box", 1): 100_000.0, ("10 robots + 1000 boxes", 1): 200.0}


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


def bench(n_robots: int, n_boxes: int, num_envs: int, steps: int, repeats: int) -> dict:
    t0 = time.perf_counter()
    w = World.from_config(make_scene(n_robots, n_boxes), num_envs=num_envs)
    build = time.perf_counter() - t0
    table = command_table(w)
    t0 = time.perf_counter()
    w.cmd[:] = table[0]
    w.step_raw()
    first = time.perf_counter() - t0
    # Warm-up run (caches, thread pool).
    for i in range(min(steps, 20 if num_envs < 64 else 2)):
        w.cmd[:] = table[i % len(table)]
        w.step_raw()
    times = []
    for _ in range(repeats):
        w.reset()
        t0 = time.perf_counter()
        for i in range(steps):
            w.cmd[:] = table[i % len(table)]
            w.step_raw()
        times.append(time.perf_counter() - t0)
    rates = sorted(steps / t for t in times)
    return {"build": build, "first": first, "median": statistics.median(rates),
            "min": rates[0], "max": rates[-1], "maxpen": float(w.max_penetration.max()),
            "sweeps": int(w.sweeps.max())}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=None,
                    help="steps per repeat (default: scaled per scene so a repeat takes ~1 s)")
    ap.add_argument("--quick", action="store_true",
                    help="3 repeats, few steps, 1024 instead of 4096 envs")
    ap.add_argument("--only", default="",
                    help="run only scenes whose label contains this text (e.g. '50 boxes')")
    args = ap.parse_args(argv)
    repeats = 3 if args.quick else args.repeats
    big = 1024 if args.quick else 4096
    cases = [
        ("1 robot + 1 box", 1, 1, [1, big], 20_000),
        ("5 robots + 10 boxes", 5, 10, [1, big], 5_000),
        ("10 robots + 50 boxes", 10, 50, [1, big], 1_000),
        ("10 robots + 1000 boxes", 10, 1000, [1, 16], 100),
    ]
    print(f"# Physics benchmark ({platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, numba {numba.__version__}, "
          f"NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS})\n")
    print("| scene | envs | build s | first step s | world steps/s (median [min, max]) "
          "| env-steps/s | target | max pen. m | sweeps |")
    print("|---|---:|---:|---:|---|---:|---|---:|---:|")
    for label, nr, nb, env_counts, base_steps in cases:
        if args.only not in label:
            continue
        for num_envs in env_counts:
            # Batches get fewer steps so that one repeat stays around a few seconds.
            steps = args.steps or max(3, int(base_steps / max(1, num_envs // 16)))
            if args.quick:
                steps = max(3, steps // 10)
            r = bench(nr, nb, num_envs, steps, repeats)
            target = TARGETS.get((label, num_envs))
            if target is None:
                tgt = ""
            else:
                ok = "PASS" if r["median"] >= target else "MISS"
                tgt = f">= {target:,.0f} ({ok})"
            print(f"| {label} | {num_envs} | {r['build']:.2f} | {r['first']:.3f} | "
                  f"{r['median']:,.0f} [{r['min']:,.0f}, {r['max']:,.0f}] | "
                  f"{r['median'] * num_envs:,.0f} | {tgt} | {r['maxpen']:.1e} | "
                  f"{r['sweeps']} |", flush=True)


if __name__ == "__main__":
    main()
