"""Convex decomposition of simple polygons (setup time only).

A polygon is triangulated by shapely's constrained Delaunay triangulation, then neighbouring
pieces are merged (Hertel–Mehlhorn: a diagonal is dropped when the union of its two sides is
still strictly convex, here also with at most ``MAX_VERTS`` vertices).

The merge order is the one of the original greedy pass, which rescanned every pair of pieces
after each merge (about n³ in the vertex count): the merge applied next is always the first
pair ``(i, j)``, ``i < j`` in triangle order, that merges. Only pieces sharing an edge can
merge, and a merge changes only the merged piece, so a heap of the pairs that merge, refreshed
around each merged piece, finds that same pair in O(log n). The pieces (and the golden hashes
of the rollouts, which depend on them) are therefore the same as before, bit for bit.

Units: metres; vertices are (n, 2) float64 arrays, counter-clockwise.
"""

from __future__ import annotations

import heapq
import math

import numpy as np
import shapely
from shapely.geometry import Polygon

MAX_VERTS = 8
"""Largest vertex count of a polygon piece; bigger convex polygons are split."""

# Relative tolerance on the sine of the turn angle below which three consecutive vertices
# count as collinear. Relative, so that shapes in millimetres and kilometres behave alike.
COLLINEAR_SIN_TOL = 1e-9


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """z-component of the 2-D cross product, broadcasting over leading axes."""
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def signed_area(verts: np.ndarray) -> float:
    """Shoelace signed area [m²]; positive for counter-clockwise vertices."""
    return 0.5 * float(np.sum(cross(verts, np.roll(verts, -1, axis=0))))


def drop_repeated(verts: np.ndarray) -> np.ndarray:
    """Remove consecutive duplicate vertices (including last == first)."""
    nxt = np.roll(verts, -1, axis=0)
    keep = np.any(verts != nxt, axis=1)
    if not np.any(keep):
        return verts[:1]
    return verts[keep]


def _flat_turns(verts: np.ndarray) -> np.ndarray:
    """Per vertex: True where its two edges are (nearly) collinear."""
    prev = verts - np.roll(verts, 1, axis=0)
    nxt = np.roll(verts, -1, axis=0) - verts
    scale = np.linalg.norm(prev, axis=1) * np.linalg.norm(nxt, axis=1)
    return np.abs(cross(prev, nxt)) <= COLLINEAR_SIN_TOL * scale


def drop_collinear(verts: np.ndarray) -> np.ndarray:
    """Remove vertices whose two edges are (nearly) collinear, one at a time until stable.

    One at a time because dropping two neighbours at once could change the shape. After a
    removal only the two neighbours of the removed vertex can change their test, so the
    others are not recomputed (the result is that of recomputing everything each time).
    """
    if len(verts) < 3:
        return verts
    flat = _flat_turns(verts)
    if not np.any(flat):
        return verts
    keep = list(range(len(verts)))
    flags = [bool(f) for f in flat]
    while len(keep) >= 3:
        try:
            k = flags.index(True)
        except ValueError:
            break
        del keep[k]
        del flags[k]
        n = len(keep)
        if n < 3:
            break
        # Re-test the two neighbours of the removed vertex (now at k - 1 and k).
        for m in ((k - 1) % n, k % n):
            tri = verts[[keep[(m - 1) % n], keep[m], keep[(m + 1) % n]]]
            flags[m] = bool(_flat_turns(tri)[1])
    return verts[keep]


def is_strictly_convex_ccw(verts: np.ndarray) -> bool:
    """True if every turn of the closed CCW vertex loop is a strict left turn."""
    prev = verts - np.roll(verts, 1, axis=0)
    nxt = np.roll(verts, -1, axis=0) - verts
    scale = np.linalg.norm(prev, axis=1) * np.linalg.norm(nxt, axis=1)
    return bool(np.all(cross(prev, nxt) > COLLINEAR_SIN_TOL * scale))


def triangulate(verts: np.ndarray) -> list[np.ndarray]:
    """CCW triangles of a simple polygon via shapely's constrained Delaunay triangulation."""
    poly = Polygon(verts)
    tris = shapely.get_parts(shapely.constrained_delaunay_triangles(poly))
    if len(tris) == 0:
        return []
    corners = shapely.get_coordinates(shapely.get_exterior_ring(tris)).reshape(len(tris), 4, 2)
    corners = corners[:, :3]
    areas = 0.5 * np.sum(cross(corners, np.roll(corners, -1, axis=1)), axis=1)
    centres = corners.mean(axis=1)
    inside = shapely.contains_xy(poly, centres[:, 0], centres[:, 1])
    triangles = []
    # Keep only non-degenerate triangles inside the polygon (GEOS may return hull ones).
    for tri, area, keep in zip(corners, areas, inside, strict=True):
        if abs(area) > 0 and keep:
            triangles.append(tri.copy() if area > 0 else tri[::-1].copy())
    return triangles


def _keys(verts: np.ndarray) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in verts]


# The merge test runs on small loops (two pieces of <= MAX_VERTS vertices), where numpy's
# per-call overhead dominates; these pure-Python twins of `_flat_turns`, `drop_collinear` and
# `is_strictly_convex_ccw` perform the same IEEE operations in the same order (products,
# one addition, sqrt), so they take the same decisions bit for bit.


def _turn(u: tuple, v: tuple, w: tuple) -> tuple[float, float]:
    """(cross, |v - u| * |w - v|) at vertex v of the loop ... u, v, w ..."""
    px, py = v[0] - u[0], v[1] - u[1]
    qx, qy = w[0] - v[0], w[1] - v[1]
    scale = math.sqrt(px * px + py * py) * math.sqrt(qx * qx + qy * qy)
    return px * qy - py * qx, scale


def _drop_collinear_small(pts: list[tuple]) -> list[tuple]:
    """`drop_collinear` for a short list of (x, y) tuples."""
    pts = list(pts)
    while len(pts) >= 3:
        n = len(pts)
        for k in range(n):
            c, scale = _turn(pts[k - 1], pts[k], pts[(k + 1) % n])
            if abs(c) <= COLLINEAR_SIN_TOL * scale:
                del pts[k]
                break
        else:
            break
    return pts


def _convex_small(pts: list[tuple]) -> bool:
    """`is_strictly_convex_ccw` for a short list of (x, y) tuples."""
    n = len(pts)
    for k in range(n):
        c, scale = _turn(pts[k - 1], pts[k], pts[(k + 1) % n])
        if not c > COLLINEAR_SIN_TOL * scale:
            return False
    return True


def _merge_keys(a: list[tuple], b: list[tuple]) -> list[tuple] | None:
    """`try_merge` on vertex tuples."""
    b_edges = {(b[j], b[(j + 1) % len(b)]): j for j in range(len(b))}
    for i in range(len(a)):
        p, q = a[i], a[(i + 1) % len(a)]
        # A shared edge runs p->q in a and q->p in b (both CCW).
        j = b_edges.get((q, p))
        if j is None:
            continue
        # Walk a from q round to p, then b's vertices strictly after p up to q.
        a_part = [a[(i + 1 + k) % len(a)] for k in range(len(a))]
        b_part = [b[(j + 2 + k) % len(b)] for k in range(len(b) - 2)]
        merged = _drop_collinear_small(a_part + b_part)
        if len(merged) <= MAX_VERTS and _convex_small(merged):
            return merged
        return None
    return None


def try_merge(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """Union of two CCW convex polygons sharing an edge, if it is convex and small enough."""
    merged = _merge_keys(_keys(a), _keys(b))
    return None if merged is None else np.array(merged, dtype=np.float64)


def merge_convex(pieces: list[np.ndarray]) -> list[np.ndarray]:
    """Merge neighbouring convex pieces while the union stays convex and small.

    Applies the same merges, in the same order, as repeatedly merging the first mergeable
    pair ``(i, j)`` (``i < j`` in list order, the merged piece taking i's place). Fewer pieces
    means fewer narrow-phase pairs at run time; optimality is not needed.
    """
    alive: dict[int, list[tuple]] = {i: _keys(p) for i, p in enumerate(pieces)}
    version = dict.fromkeys(alive, 0)
    owner: dict[tuple, int] = {}  # directed edge (p, q) -> piece holding it

    def edges(keys: list[tuple]) -> list[tuple]:
        return [(keys[k], keys[(k + 1) % len(keys)]) for k in range(len(keys))]

    def neighbours(i: int) -> set[int]:
        found = {owner.get((q, p), i) for p, q in edges(alive[i])}
        found.discard(i)
        return found

    heap: list[tuple[int, int, int, int]] = []

    def consider(i: int, j: int) -> None:
        lo, hi = min(i, j), max(i, j)
        if _merge_keys(alive[lo], alive[hi]) is not None:
            heapq.heappush(heap, (lo, hi, version[lo], version[hi]))

    for i, keys in alive.items():
        for edge in edges(keys):
            owner[edge] = i
    for i in list(alive):
        for j in neighbours(i):
            if j > i:
                consider(i, j)
    while heap:
        i, j, vi, vj = heapq.heappop(heap)
        if i not in alive or j not in alive or version[i] != vi or version[j] != vj:
            continue  # stale: one of the two pieces changed since this pair was tested
        merged = _merge_keys(alive[i], alive[j])
        assert merged is not None  # same pieces as when tested
        for edge in edges(alive[i]) + edges(alive[j]):
            owner.pop(edge, None)
        del alive[j]
        alive[i] = merged
        version[i] += 1
        for edge in edges(merged):
            owner[edge] = i
        for k in neighbours(i):
            consider(i, k)
    return [np.array(alive[i], dtype=np.float64) for i in sorted(alive)]


def convex_pieces(verts: np.ndarray) -> list[np.ndarray]:
    """Split a normalised simple polygon into CCW convex pieces of <= MAX_VERTS vertices."""
    if len(verts) <= MAX_VERTS and is_strictly_convex_ccw(verts):
        return [verts]
    return merge_convex(triangulate(verts))
