"""Box2D v3 (``box2d-python`` wheel, Python 3.12) on the peer scene; prints one JSON line.

    /work/box2d-venv/bin/python benchmarks/peers/box2d_bench.py --steps 200 --sleep 0 [--cpu]

Top-down: no gravity; ground friction as linear/angular damping; robots are kinematic
bodies moving at 1 m/s; 4 sub-steps per 0.1 s step (Box2D's default).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import box2d

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as pc  # noqa: E402


def build(sleep: bool):
    w = box2d.World(gravity=(0.0, 0.0))
    w.enable_sleep = sleep
    t = 0.2
    a = pc.ARENA
    for x, y, wd, ht in ((0, a + t / 2, 2 * a + 2 * t, t), (0, -a - t / 2, 2 * a + 2 * t, t),
                         (a + t / 2, 0, t, 2 * a), (-a - t / 2, 0, t, 2 * a)):
        w.new_body().static().position(x, y).box(wd, ht).build()
    bs = []
    for x, y in pc.boxes():
        b = (w.new_body().dynamic().position(x, y).linear_damping(2.0).angular_damping(2.0)
             .box(pc.BOX, pc.BOX, density=pc.BOX_MASS / pc.BOX ** 2, friction=0.0).build())
        bs.append(b)
    for x, y in pc.robots():
        (w.new_body().kinematic().position(x, y).linear_velocity(0.0, pc.ROBOT_SPEED)
         .circle(pc.ROBOT_R).build())
    return w, bs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--sleep", type=int, default=0)
    ap.add_argument("--substeps", type=int, default=4)
    ap.add_argument("--cpu", action="store_true",
                    help="time with time.process_time (CPU time of this process)")
    a = ap.parse_args()
    clock = time.process_time if a.cpu else time.perf_counter
    w, bs = build(bool(a.sleep))
    for _ in range(5):
        w.step(pc.DT, a.substeps)
    t0 = clock()
    for _ in range(a.steps):
        w.step(pc.DT, a.substeps)
    el = clock() - t0
    poses = [(b.position[0], b.position[1], float(b.rotation)) for b in bs]
    print(json.dumps({"engine": f"Box2D v3 (sleep {'on' if a.sleep else 'off'})",
                      "steps_per_s": a.steps / el, "worst_overlap_m": pc.worst_box_overlap(poses)}))


if __name__ == "__main__":
    main()
