"""Area overlap of a body's convex pieces at two poses, in compiled code (Push-T coverage).

gym-pusht judges Push-T by coverage: the area of the T at its pose intersected with the T at
the goal pose, as a share of the goal's area. The T is stored as convex pieces with disjoint
interiors, so the overlap is the sum over piece pairs of convex-convex intersection areas.

Intersection area without a clip buffer (the step kernels run without numba's allocator):
by Green's theorem the area of a polygon is half the sum of ``cross(p, q)`` over its directed
boundary edges ``p -> q``, taken counter-clockwise. The boundary of ``A ∩ B`` (both convex,
counter-clockwise) is made of the parts of A's edges that lie inside B and the parts of B's
edges that lie inside A, each keeping its direction::

    area(A ∩ B) = 1/2 [ sum over edges of A of cross(clip(edge, B))
                      + sum over edges of B of cross(clip(edge, A)) ]

where ``clip(edge, P)`` is the edge's sub-segment inside P (Cyrus-Beck: the segment's
parameter interval cut by each half-plane of P). An edge of A lying on an edge of B would be
counted from both sides, so collinear edges are settled once: A's copy counts when the two
run the same way (interiors on the same side, the edge bounds the intersection), B's copy
never does; edges running opposite ways bound a zero-area overlap and neither counts.
Coordinates are taken relative to a reference point near both polygons so the cross
products do not lose digits to a large offset.

Piece table (``pieces``, a flat float64 array): ``[n, nv_0, x, y, x, y, ... (MAX_V pairs),
nv_1, ...]``: each piece's vertex count, then ``MAX_V`` (x, y) slots [m] in the body's origin
frame, counter-clockwise.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

MAX_V = 8  # vertex slots per piece (the engine's pieces have at most 8 vertices)
PIECE_LEN = 1 + 2 * MAX_V
# |signed distance| of both endpoints below this fraction of the scale: the edge lies on the
# half-plane's line (exact coincidence happens when the two poses are equal).
_COLLINEAR = 1e-12
# [m] origins farther apart than twice the body's reach plus this have no overlap; the margin
# keeps the clipping's rounding (~1e-16 m) far from deciding it.
_APART = 1e-6


def piece_table(pieces: list[np.ndarray]) -> np.ndarray:
    """Flat table of convex pieces (each an (nv, 2) array of vertices [m], any winding)."""
    out = np.zeros(1 + PIECE_LEN * len(pieces))
    out[0] = len(pieces)
    for i, v in enumerate(pieces):
        v = np.asarray(v, float)
        if not 3 <= len(v) <= MAX_V:
            raise ValueError(f"coverage: a piece has {len(v)} vertices; 3 to {MAX_V} allowed")
        x, y = v[:, 0], v[:, 1]
        if np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y) < 0.0:
            v = v[::-1]  # counter-clockwise
        k = 1 + PIECE_LEN * i
        out[k] = len(v)
        out[k + 1: k + 1 + 2 * len(v)] = v.ravel()
    return out


@njit(cache=True, inline="always")
def vertex(tab, k, j, x, y, c, s):
    """Vertex j of the piece at offset k, placed at pose (x, y, c, s); coordinates [m]."""
    lx, ly = tab[k + 1 + 2 * j], tab[k + 2 + 2 * j]
    return x + c * lx - s * ly, y + s * lx + c * ly


@njit(cache=True)
def _clipped_cross(ax, ay, bx, by, tab, k, x, y, c, s, first, scale):
    """cross(p, q) of the part p -> q of segment a -> b inside the piece at offset k placed
    at (x, y, c, s); 0 when none of it is inside. ``first``: the segment belongs to the
    first polygon (keeps a collinear same-direction edge)."""
    nv = int(tab[k])
    t0, t1 = 0.0, 1.0
    dx, dy = bx - ax, by - ay
    px, py = vertex(tab, k, nv - 1, x, y, c, s)
    for j in range(nv):
        qx, qy = vertex(tab, k, j, x, y, c, s)
        ex, ey = qx - px, qy - py
        # Outward normal of a counter-clockwise edge: (ey, -ex); inside is <= 0.
        inv = 1.0 / math.sqrt(ex * ex + ey * ey)
        da = (ey * (ax - px) - ex * (ay - py)) * inv
        db = (ey * (bx - px) - ex * (by - py)) * inv
        px, py = qx, qy
        tol = _COLLINEAR * scale
        if abs(da) <= tol and abs(db) <= tol:
            if first and dx * ex + dy * ey > 0.0:
                continue
            return 0.0
        if da > 0.0 and db > 0.0:
            return 0.0
        if da > 0.0:
            t0 = max(t0, da / (da - db))
        elif db > 0.0:
            t1 = min(t1, da / (da - db))
        if t0 >= t1:
            return 0.0
    p0x, p0y = ax + t0 * dx, ay + t0 * dy
    p1x, p1y = ax + t1 * dx, ay + t1 * dy
    return p0x * p1y - p1x * p0y


@njit(cache=True)
def _boundary_part(tab, ka, xa, ya, ca, sa, kb, xb, yb, cb, sb, first, scale):
    """Sum of cross products of piece A's edges clipped to piece B (A at offset ka, B at kb,
    each at its pose relative to the reference point)."""
    nv = int(tab[ka])
    total = 0.0
    px, py = vertex(tab, ka, nv - 1, xa, ya, ca, sa)
    for j in range(nv):
        qx, qy = vertex(tab, ka, j, xa, ya, ca, sa)
        total += _clipped_cross(px, py, qx, qy, tab, kb, xb, yb, cb, sb, first, scale)
        px, py = qx, qy
    return total


@njit(cache=True)
def reach(tab):
    """Largest distance [m] of a vertex of the pieces from the body's origin."""
    far = 0.0
    k = 1
    for _ in range(int(tab[0])):
        for j in range(int(tab[k])):
            far = max(far, tab[k + 1 + 2 * j] ** 2 + tab[k + 2 + 2 * j] ** 2)
        k += PIECE_LEN
    return math.sqrt(far)


@njit(cache=True)
def overlap_area(tab, x1, y1, t1c, t1s, x2, y2, t2c, t2s):
    """Area [m^2] of (the pieces at pose 1) ∩ (the pieces at pose 2). A pose is the origin
    (x [m], y [m]) and the cosine and sine of the heading."""
    n = int(tab[0])
    # Relative to pose 2's origin: the cross products then stay of the body's size.
    rx, ry = x1 - x2, y1 - y2
    if rx * rx + ry * ry > (2.0 * reach(tab) + _APART) ** 2:
        # Every piece of one pose lies farther than the body's reach from every piece of the
        # other: each clipped edge below would be empty and add exactly 0.0, so the sum is
        # 0.0 (the answer is the same, without the ~100 edge clippings of a T).
        return 0.0
    scale = 1.0 + abs(rx) + abs(ry)
    area = 0.0
    for i in range(n):
        ki = 1 + PIECE_LEN * i
        for j in range(n):
            kj = 1 + PIECE_LEN * j
            area += _boundary_part(tab, ki, rx, ry, t1c, t1s, kj, 0.0, 0.0, t2c, t2s, True,
                                   scale)
            area += _boundary_part(tab, kj, 0.0, 0.0, t2c, t2s, ki, rx, ry, t1c, t1s, False,
                                   scale)
    return max(0.5 * area, 0.0)


@njit(cache=True)
def table_area(tab):
    """Area [m^2] of the pieces (shoelace per piece; the pieces do not overlap)."""
    n = int(tab[0])
    area = 0.0
    for i in range(n):
        k = 1 + PIECE_LEN * i
        nv = int(tab[k])
        for j in range(nv):
            jn = (j + 1) % nv
            area += tab[k + 1 + 2 * j] * tab[k + 2 + 2 * jn] - tab[k + 1 + 2 * jn] * \
                tab[k + 2 + 2 * j]
    return 0.5 * area


@njit(cache=True)
def coverage(tab, area, x1, y1, c1, s1, x2, y2, c2, s2):
    """Share of the goal (pose 2) covered by the body (pose 1), in [0, 1]; ``area`` is the
    body's area [m^2] (``table_area``)."""
    return min(overlap_area(tab, x1, y1, c1, s1, x2, y2, c2, s2) / area, 1.0)
