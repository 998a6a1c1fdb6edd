"""The shared scene of the peer benchmarks, and an overlap measure for their final states.

10 robots (discs, r 0.2 m, driven at 1 m/s) below a 50 x 20 grid of 0.4 m boxes (0.5 kg,
0.2 m apart) in a 32 m walled arena; step 0.1 s. Plain Python + numpy only, so the peer
scripts run in any interpreter (Box2D's wheel needs Python 3.12).
"""

from __future__ import annotations

import math

import numpy as np

ARENA = 16.0  # half-size [m]
BOX = 0.4  # [m]
BOX_MASS = 0.5  # [kg]
ROBOT_R = 0.2  # [m]
ROBOT_SPEED = 1.0  # [m/s]
DT = 0.1  # [s]
COLS, ROWS, PITCH = 50, 20, 0.6


def boxes() -> list[tuple[float, float]]:
    """Centres [m] of the 1000 boxes."""
    x0 = -(COLS - 1) * PITCH / 2
    y0 = -ARENA + 2.0
    return [(x0 + i * PITCH, y0 + j * PITCH) for j in range(ROWS) for i in range(COLS)]


def robots() -> list[tuple[float, float]]:
    """Start centres [m] of the 10 robots, below the grid, driving +y."""
    return [(-13.5 + 3.0 * k, -ARENA + 0.8) for k in range(10)]


def _corners(x, y, th, h=BOX / 2):
    c, s = math.cos(th), math.sin(th)
    return np.array([(x + c * u - s * v, y + s * u + c * v)
                     for u, v in ((-h, -h), (h, -h), (h, h), (-h, h))])


def worst_box_overlap(poses: list[tuple[float, float, float]]) -> float:
    """Deepest box-box penetration [m] (SAT over the 4 face normals of both boxes)."""
    P = np.asarray(poses)
    worst = 0.0
    order = np.argsort(P[:, 0])
    reach = BOX * math.sqrt(2)
    for ii in range(len(order)):
        a = order[ii]
        for jj in range(ii + 1, len(order)):
            b = order[jj]
            if P[b, 0] - P[a, 0] > reach:
                break
            if abs(P[b, 1] - P[a, 1]) > reach:
                continue
            ca, cb = _corners(*P[a]), _corners(*P[b])
            depth = math.inf
            for th in (P[a, 2], P[b, 2]):
                for ax in ((math.cos(th), math.sin(th)), (-math.sin(th), math.cos(th))):
                    pa, pb = ca @ ax, cb @ ax
                    depth = min(depth, min(pa.max() - pb.min(), pb.max() - pa.min()))
            worst = max(worst, depth)
    return worst
