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

Frames. The cross products are all taken in the frame of pose 2 (the goal), so they stay
of the body's size whatever the world coordinates. Each piece keeps its edges' half-planes
(unit outward normal, offset) in the body's frame, so a clip costs two dot products per
half-plane, with no square root and no rotation of the piece being clipped against:

* A's edges (pose 1) are carried into frame 2 by the relative pose and clipped against B's
  stored half-planes;
* B's edges are carried into frame 1 by the inverse pose, clipped against A's stored
  half-planes, and the clipped ends carried back into frame 2 for the cross product.

A pair of pieces whose bounding circles are farther apart than ``_APART`` adds nothing (every
clip is empty) and is skipped whole.

Piece table (``pieces``, a flat float64 array): ``[n, piece_0, piece_1, ...]``, each piece
``PIECE_LEN`` numbers at the offsets ``PC_*``: its vertex count; its bounding circle (centre
x, y [m], radius [m]); ``MAX_V`` (x, y) vertex slots [m] in the body's origin frame,
counter-clockwise; ``MAX_V`` half-planes (unit outward normal x, y; offset [m]) where
half-plane j is the edge from vertex j - 1 to vertex j and the inside is
``normal . point <= offset``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from push_envs.physics.jit import compiled

MAX_V = 8  # vertex slots per piece (the engine's pieces have at most 8 vertices)
# Offsets inside a piece's record.
PC_NV = 0  # vertex count
PC_CX, PC_CY, PC_R = 1, 2, 3  # bounding circle: centre [m], radius [m]
PC_V = 4  # MAX_V (x, y) vertices [m]
PC_H = PC_V + 2 * MAX_V  # MAX_V (normal x, normal y, offset [m]) half-planes
PIECE_LEN = PC_H + 3 * MAX_V
# |signed distance| of both endpoints below this fraction of the scale: the edge lies on the
# half-plane's line (exact coincidence happens when the two poses are equal).
_COLLINEAR = 1e-12
# [m] shapes farther apart than their bounding circles plus this have no overlap; the margin
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
        nv = len(v)
        rec = out[1 + PIECE_LEN * i: 1 + PIECE_LEN * (i + 1)]
        rec[PC_NV] = nv
        centre = v.mean(axis=0)
        rec[PC_CX], rec[PC_CY] = centre
        rec[PC_R] = np.linalg.norm(v - centre, axis=1).max()
        rec[PC_V: PC_V + 2 * nv] = v.ravel()
        edge = v - np.roll(v, 1, axis=0)  # edge j: vertex j - 1 -> vertex j
        normal = np.stack([edge[:, 1], -edge[:, 0]], axis=1)
        normal /= np.linalg.norm(normal, axis=1, keepdims=True)
        half = np.column_stack([normal, np.einsum("ij,ij->i", normal, v)])
        rec[PC_H: PC_H + 3 * nv] = half.ravel()
    return out


def piece_vertices(tab: np.ndarray) -> list[np.ndarray]:
    """The pieces' vertices [m] in the body's frame, one (nv, 2) array per piece."""
    out = []
    for i in range(int(tab[0])):
        k = 1 + PIECE_LEN * i
        nv = int(tab[k + PC_NV])
        out.append(tab[k + PC_V: k + PC_V + 2 * nv].reshape(nv, 2).copy())
    return out


@compiled
def vertex(tab, k, j, x, y, c, s):
    """Vertex j of the piece at offset k, placed at pose (x, y, c, s); coordinates [m]."""
    lx, ly = tab[k + PC_V + 2 * j], tab[k + PC_V + 1 + 2 * j]
    return x + c * lx - s * ly, y + s * lx + c * ly


@compiled
def _clip(ax, ay, bx, by, tab, k, first, tol):
    """Parameter interval (t0, t1) of the segment a -> b (in the body's frame) inside the
    piece at offset k; t0 >= t1 when none of it is. ``first``: the segment belongs to the
    first polygon (keeps a collinear same-direction edge)."""
    nv = int(tab[k + PC_NV])
    t0, t1 = 0.0, 1.0
    dx, dy = bx - ax, by - ay
    h = k + PC_H
    for j in range(nv):
        nx, ny, off = tab[h + 3 * j], tab[h + 3 * j + 1], tab[h + 3 * j + 2]
        da = nx * ax + ny * ay - off
        db = nx * bx + ny * by - off
        if abs(da) <= tol and abs(db) <= tol:
            # On the edge's line: the edge runs along (-ny, nx).
            if first and ny * dx - nx * dy < 0.0:
                continue
            return 1.0, 0.0
        if da > 0.0 and db > 0.0:
            return 1.0, 0.0
        if da > 0.0:
            t0 = max(t0, da / (da - db))
        elif db > 0.0:
            t1 = min(t1, da / (da - db))
        if t0 >= t1:
            return 1.0, 0.0
    return t0, t1


@compiled
def _pair_area(tab, ka, kb, c, s, tx, ty, tol):
    """Twice the area of (piece A at pose 1) ∩ (piece B at pose 2), A at offset ka and B at
    kb; (c, s, tx, ty) carries frame 1 into frame 2: p2 = R p1 + t."""
    total = 0.0
    # A's edges, carried into frame 2, clipped to B.
    nv = int(tab[ka + PC_NV])
    px, py = vertex(tab, ka, nv - 1, tx, ty, c, s)
    for j in range(nv):
        qx, qy = vertex(tab, ka, j, tx, ty, c, s)
        t0, t1 = _clip(px, py, qx, qy, tab, kb, np.bool_(True), tol)
        if t0 < t1:
            dx, dy = qx - px, qy - py
            total += (px + t0 * dx) * (py + t1 * dy) - (px + t1 * dx) * (py + t0 * dy)
        px, py = qx, qy
    # B's edges, carried into frame 1 (p1 = R^T (p2 - t)), clipped to A, back in frame 2.
    nv = int(tab[kb + PC_NV])
    lx, ly = tab[kb + PC_V + 2 * (nv - 1)], tab[kb + PC_V + 2 * nv - 1]
    for j in range(nv):
        mx, my = tab[kb + PC_V + 2 * j], tab[kb + PC_V + 2 * j + 1]
        ux, uy = lx - tx, ly - ty
        vx, vy = mx - tx, my - ty
        t0, t1 = _clip(c * ux + s * uy, -s * ux + c * uy, c * vx + s * vy, -s * vx + c * vy,
                       tab, ka, np.bool_(False), tol)
        if t0 < t1:
            dx, dy = mx - lx, my - ly
            total += (lx + t0 * dx) * (ly + t1 * dy) - (lx + t1 * dx) * (ly + t0 * dy)
        lx, ly = mx, my
    return total


@njit(cache=True)
def overlap_area(tab, x1, y1, t1c, t1s, x2, y2, t2c, t2s):
    """Area [m^2] of (the pieces at pose 1) ∩ (the pieces at pose 2). A pose is the origin
    (x [m], y [m]) and the cosine and sine of the heading."""
    n = int(tab[0])
    # Pose 1 in frame 2: rotation by the heading difference, then the shift R2^T (p1 - p2).
    c = t2c * t1c + t2s * t1s
    s = t2c * t1s - t2s * t1c
    dx, dy = x1 - x2, y1 - y2
    tx, ty = t2c * dx + t2s * dy, -t2s * dx + t2c * dy
    tol = _COLLINEAR * (1.0 + abs(tx) + abs(ty))
    area = 0.0
    for i in range(n):
        ki = 1 + PIECE_LEN * i
        # Piece i's bounding circle in frame 2.
        cx, cy = tab[ki + PC_CX], tab[ki + PC_CY]
        ix, iy = c * cx - s * cy + tx, s * cx + c * cy + ty
        for j in range(n):
            kj = 1 + PIECE_LEN * j
            gx, gy = ix - tab[kj + PC_CX], iy - tab[kj + PC_CY]
            if gx * gx + gy * gy > (tab[ki + PC_R] + tab[kj + PC_R] + _APART) ** 2:
                continue
            area += _pair_area(tab, ki, kj, c, s, tx, ty, tol)
    return max(0.5 * area, 0.0)


@njit(cache=True)
def table_area(tab):
    """Area [m^2] of the pieces (shoelace per piece; the pieces do not overlap)."""
    n = int(tab[0])
    area = 0.0
    for i in range(n):
        k = 1 + PIECE_LEN * i + PC_V
        nv = int(tab[k - PC_V + PC_NV])
        for j in range(nv):
            jn = (j + 1) % nv
            area += tab[k + 2 * j] * tab[k + 1 + 2 * jn] - tab[k + 2 * jn] * tab[k + 1 + 2 * j]
    return 0.5 * area


@njit(cache=True)
def coverage(tab, area, x1, y1, c1, s1, x2, y2, c2, s2):
    """Share of the goal (pose 2) covered by the body (pose 1), in [0, 1]; ``area`` is the
    body's area [m^2] (``table_area``)."""
    return min(overlap_area(tab, x1, y1, c1, s1, x2, y2, c2, s2) / area, 1.0)
