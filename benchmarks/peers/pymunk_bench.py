"""pymunk (Chipmunk2D) on the peer scene; prints one JSON line.

    python benchmarks/peers/pymunk_bench.py --steps 200

Top-down: no gravity; ground friction as velocity damping; robots are kinematic bodies
moving at 1 m/s; one 0.1 s step per world step (pymunk's own iterations, default 10).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import pymunk

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as pc  # noqa: E402


def build():
    s = pymunk.Space()
    s.gravity = (0.0, 0.0)
    s.damping = 0.8  # velocity kept per second: stands in for ground friction
    t = 0.2
    a = pc.ARENA
    corners = [(-a, -a), (a, -a), (a, a), (-a, a)]
    for (x0, y0), (x1, y1) in zip(corners, corners[1:] + corners[:1], strict=True):
        seg = pymunk.Segment(s.static_body, (x0, y0), (x1, y1), t / 2)
        s.add(seg)
    bs = []
    for x, y in pc.boxes():
        b = pymunk.Body(pc.BOX_MASS, pymunk.moment_for_box(pc.BOX_MASS, (pc.BOX, pc.BOX)))
        b.position = (x, y)
        sh = pymunk.Poly.create_box(b, (pc.BOX, pc.BOX))
        sh.friction = 0.0
        s.add(b, sh)
        bs.append(b)
    for x, y in pc.robots():
        r = pymunk.Body(body_type=pymunk.Body.KINEMATIC)
        r.position = (x, y)
        r.velocity = (0.0, pc.ROBOT_SPEED)
        s.add(r, pymunk.Circle(r, pc.ROBOT_R))
    return s, bs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    a = ap.parse_args()
    s, bs = build()
    for _ in range(5):
        s.step(pc.DT)
    t0 = time.perf_counter()
    for _ in range(a.steps):
        s.step(pc.DT)
    el = time.perf_counter() - t0
    poses = [(b.position.x, b.position.y, b.angle) for b in bs]
    print(json.dumps({"engine": f"pymunk {pymunk.version}", "steps_per_s": a.steps / el,
                      "worst_overlap_m": pc.worst_box_overlap(poses)}))


if __name__ == "__main__":
    main()
