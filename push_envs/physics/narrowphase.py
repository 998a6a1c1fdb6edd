"""Narrow phase: separating-axis contact between convex pieces, with a two-point patch.

Two levels, in this order in the module:

* piece against piece (``collide`` and its three cases): the geometry below;
* a candidate pair of bodies (``pair_contact``): every piece pair of the two bodies whose
  bounding circles come within the tolerance, the deepest contact kept in the pair's row of
  ``pfl``; a contact with a static piece that meets others is checked against their union
  (``smooth``, joints.py). The prepare stage (contacts.py) and the sweeps
  (position_solver.py) run it on every pair they visit; ``refresh_moved``, a stage of its
  own after the sweeps, on the pairs of bodies the last sweep moved.

Every piece is one of three kinds, held as world-frame vertices in a small scratch array:

* ``CIRCLE``: ``verts[0]`` is the centre, ``radius`` > 0 (exact, not a polygon);
* ``POLYGON``: ``n`` CCW vertices of a convex polygon;
* ``SEGMENT``: 2 vertices; treated as a two-sided 2-gon whose two "edges" have opposite normals.

A contact is written into ``out`` (a float64 array of length ``OUT_LEN``), in the column
layout of the pair rows (``layout.PFL_*``), so the solver copies it as it is::

    PFL_NX, PFL_NY              unit normal from piece b toward piece a
    PFL_DEPTH                   depth [m]: overlap along the normal, > 0 overlapping, <= 0 a gap
    PFL_NPTS                    number of patch points (1 or 2)
    PFL_P1X, PFL_P1Y, PFL_P1D   point 1: x, y [m] (midway through the overlap), its depth [m]
    PFL_P2X, PFL_P2Y, PFL_P2D   point 2: x, y [m], depth [m] (a copy of point 1 when npts == 1)
    PFL_CORNER                  1 when two polygons meet corner to corner (ambiguous normal)

A gap up to ``tol`` [m] still counts as a (resting) contact with negative depth.

Polygon–polygon (the patch follows Coal's ContactPatchSolver, reduced to 2D)::

    1. SAT: for each edge i of A, the separation s_i = min over B's vertices of n_i.(v - a_i);
       the edge with the largest s_i is A's best axis. The same for B against A. Each
       piece's edge normals are computed once (``edge_normals``, into scratch the caller
       gives) and read again in step 3.
    2. If either best separation exceeds tol the pieces are apart: no contact.
    3. The piece with the larger separation gives the reference face (A wins near-ties so the
       choice is stable); the incident edge is the edge of the other piece whose normal is
       most anti-parallel to the reference normal.
    4. The support sets of the two pieces along the normal are the reference face and the
       incident edge. Their intersection on the separating line (the contact patch) is the
       incident edge clipped to the reference face's side planes: a segment, i.e. up to two
       points. Each kept point carries its own depth, so a box lying flat on a wall gets two
       points and is held without a spurious torque.

   Sketch (A's reference face on top of A, normal n out of A; B's incident edge dipped in)::

                          ^ n
            side plane    :                    :  side plane
          ================v1===================v2=======   reference face (A lies below)
            w1 o----------x--------------------x------o w2 incident edge of B, inside A
                          c1                   c2
          patch = [c1, c2], the incident edge clipped to the slab between the side planes;
          depth_i = -n.(c_i - v1) > 0 while overlapping.

   Each patch point is reported midway between c_i and its projection on the face, so both
   bodies' corrections act at the same point.
"""

from __future__ import annotations

import math

import numpy as np

from .arrays import load_world
from .frames import heading
from .jit import compiled
from .layout import BI_PCOUNT
from .layout import BI_PSTART
from .layout import EP_SCALE
from .layout import IS_MOVED
from .layout import JK_CLOSED
from .layout import JK_PLAIN
from .layout import JK_SECTORS
from .layout import JOINT_VERTS
from .layout import JV_KIND
from .layout import JV_NSEC
from .layout import JV_STRIDE
from .layout import JV_WIDTH
from .layout import OUT_LEN
from .layout import PF_BCX
from .layout import PF_BCY
from .layout import PF_BRAD
from .layout import PF_MAXX
from .layout import PF_MAXY
from .layout import PF_MINX
from .layout import PF_MINY
from .layout import PF_RAD
from .layout import PFL_CORNER
from .layout import PFL_DEPTH
from .layout import PFL_NPTS
from .layout import PFL_NX
from .layout import PFL_NY
from .layout import PFL_P1D
from .layout import PFL_P1X
from .layout import PFL_P1Y
from .layout import PFL_P2D
from .layout import PFL_P2X
from .layout import PFL_P2Y
from .layout import PFL_TOUCH
from .layout import PI_KIND
from .layout import PI_NV
from .layout import PRS_A
from .layout import PRS_B
from .layout import PRS_SP
from .layout import PS_DIRTY
from .layout import PS_INNER
from .layout import PS_JOINT
from .layout import PS_JVERTS
from .layout import PS_NRM
from .layout import PS_SMOOTH

__all__ = ["CIRCLE", "POLYGON", "SEGMENT", "MAX_VERTS", "OUT_LEN", "collide",
           "collide_polygons", "collide_circle_polygon", "collide_circles", "pair_contact",
           "pair_contact_at", "pair_contact_call", "refresh_moved", "edge_normal",
           "edge_normals", "max_separation", "piece_circle", "place", "circle_face", "heading"]

CIRCLE = 0
POLYGON = 1
SEGMENT = 2
MAX_VERTS = 8
# Relative preference for piece a's reference face, so that near-equal separations do not
# flip the reference face between sweeps (which would make the patch jitter).
_REF_TOL = 1e-9


# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def edge_normal(v, n, i):
    j = i + 1 if i + 1 < n else 0
    ex = v[j, 0] - v[i, 0]
    ey = v[j, 1] - v[i, 1]
    inv = 1.0 / math.sqrt(ex * ex + ey * ey)
    return ey * inv, -ex * inv


# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def edge_normals(v, n, nrm):
    """The outward unit normal of each edge i of the n-gon (or segment) ``v`` into ``nrm[i]``
    (:func:`edge_normal`'s values): computed once per piece and collision, where the SAT and
    the incident-edge search each read them."""
    for i in range(n):
        nrm[i, 0], nrm[i, 1] = edge_normal(v, n, i)


@compiled
def max_separation(va, na, nrm, vb, nb):
    """Best SAT axis among the edges of a (their normals ``nrm``, :func:`edge_normals`)
    against the vertices of b.

    Returns (separation [m], edge, cross [m]): ``cross`` is the runner-up separation when its
    edge is not parallel to the best one (else -inf). Two non-parallel axes both at about
    zero separation mean the pieces meet corner to corner (two boxes diagonal in a grid),
    where the chosen normal is one of two equally good ones.
    """
    best = -np.inf
    best_i = 0
    bx = by = 0.0
    second = -np.inf
    sx = sy = 0.0
    for i in range(na):
        nx, ny = nrm[i, 0], nrm[i, 1]
        s = np.inf
        for k in range(nb):
            d = nx * (vb[k, 0] - va[i, 0]) + ny * (vb[k, 1] - va[i, 1])
            if d < s:
                s = d
        if s > best:
            second, sx, sy = best, bx, by
            best = s
            best_i = i
            bx, by = nx, ny
        elif s > second:
            second, sx, sy = s, nx, ny
    cross = second if abs(bx * sx + by * sy) < 0.999 else -np.inf
    return best, best_i, cross


@compiled
def collide_polygons(va, na, vb, nb, tol, out, nrm):
    """Polygon/segment against polygon/segment. Returns True on contact (see module doc).
    ``nrm`` (2, MAX_VERTS, 2) is scratch for the two pieces' edge normals."""
    edge_normals(va, na, nrm[0])
    sa, ia, ca = max_separation(va, na, nrm[0], vb, nb)
    if sa > tol:
        return False
    edge_normals(vb, nb, nrm[1])
    sb, ib, cb = max_separation(vb, nb, nrm[1], va, na)
    if sb > tol:
        return False
    if sb > sa + _REF_TOL:
        ref, nref, iref, inc, ninc, flip = vb, nb, ib, va, na, True
        rn, kn = nrm[1], nrm[0]
    else:
        ref, nref, iref, inc, ninc, flip = va, na, ia, vb, nb, False
        rn, kn = nrm[0], nrm[1]
    rnx, rny = rn[iref, 0], rn[iref, 1]
    # Incident edge: the other piece's edge most anti-parallel to the reference normal.
    best = np.inf
    jinc = 0
    for k in range(ninc):
        d = kn[k, 0] * rnx + kn[k, 1] * rny
        if d < best:
            best = d
            jinc = k
    j2 = jinc + 1 if jinc + 1 < ninc else 0
    w1x, w1y = inc[jinc, 0], inc[jinc, 1]
    w2x, w2y = inc[j2, 0], inc[j2, 1]
    i2 = iref + 1 if iref + 1 < nref else 0
    v1x, v1y = ref[iref, 0], ref[iref, 1]
    v2x, v2y = ref[i2, 0], ref[i2, 1]
    tx, ty = v2x - v1x, v2y - v1y
    tl = math.sqrt(tx * tx + ty * ty)
    tx /= tl
    ty /= tl
    # Clip the incident edge to the slab tx*(p - v1) in [0, tl].
    u1 = tx * (w1x - v1x) + ty * (w1y - v1y)
    u2 = tx * (w2x - v1x) + ty * (w2y - v1y)
    lo = min(u1, u2)
    hi = max(u1, u2)
    if hi < 0.0 or lo > tl or u1 == u2:
        # Degenerate (incident edge seen end-on or outside the face): use the nearer end.
        c1x, c1y, c2x, c2y = w1x, w1y, w2x, w2y
        s1 = rnx * (c1x - v1x) + rny * (c1y - v1y)
        s2 = rnx * (c2x - v1x) + rny * (c2y - v1y)
        if s2 < s1:
            c1x, c1y, s1 = c2x, c2y, s2
        npts = 1
        c2x, c2y, s2 = c1x, c1y, s1
    else:
        a = max(lo, 0.0)
        b = min(hi, tl)
        # Parameterise the incident edge by u and take the points at u = a and u = b.
        fa = (a - u1) / (u2 - u1)
        fb = (b - u1) / (u2 - u1)
        c1x = w1x + fa * (w2x - w1x)
        c1y = w1y + fa * (w2y - w1y)
        c2x = w1x + fb * (w2x - w1x)
        c2y = w1y + fb * (w2y - w1y)
        s1 = rnx * (c1x - v1x) + rny * (c1y - v1y)
        s2 = rnx * (c2x - v1x) + rny * (c2y - v1y)
        npts = 2
        if b - a <= 1e-12:
            npts = 1
    # Keep points within the tolerance; order them deepest first.
    k1 = s1 <= tol
    k2 = s2 <= tol and npts == 2
    if not k1 and not k2:
        return False
    if not k1:
        c1x, c1y, s1 = c2x, c2y, s2
        k2 = False
    elif k2 and s2 < s1:
        c1x, c1y, s1, c2x, c2y, s2 = c2x, c2y, s2, c1x, c1y, s1
    if flip:
        out[PFL_NX] = rnx
        out[PFL_NY] = rny
    else:
        out[PFL_NX] = -rnx
        out[PFL_NY] = -rny
    out[PFL_DEPTH] = -s1
    out[PFL_NPTS] = 2.0 if k2 else 1.0
    # Corner to corner: a second, non-parallel axis also at (about) zero separation.
    out[PFL_CORNER] = 1.0 if max(ca, cb) >= -tol else 0.0
    # Midway between the incident point and its projection on the reference face.
    out[PFL_P1X] = c1x - 0.5 * s1 * rnx
    out[PFL_P1Y] = c1y - 0.5 * s1 * rny
    out[PFL_P1D] = -s1
    if k2:
        out[PFL_P2X] = c2x - 0.5 * s2 * rnx
        out[PFL_P2Y] = c2y - 0.5 * s2 * rny
        out[PFL_P2D] = -s2
    else:
        out[PFL_P2X] = out[PFL_P1X]
        out[PFL_P2Y] = out[PFL_P1Y]
        out[PFL_P2D] = out[PFL_P1D]
    return True


@compiled
def circle_face(cx, cy, vb, nb):
    """The face of polygon/segment b that the point (cx, cy) lies farthest out of: (its
    separation [m], its index); the separation is <= 0 when the point is inside."""
    sep = -np.inf
    idx = 0
    for i in range(nb):
        nx, ny = edge_normal(vb, nb, i)
        s = nx * (cx - vb[i, 0]) + ny * (cy - vb[i, 1])
        if s > sep:
            sep = s
            idx = i
    return sep, idx


@compiled
def collide_circle_polygon(cx, cy, r, vb, nb, tol, out):
    """Circle a against polygon/segment b; the normal points from b toward the circle."""
    sep, idx = circle_face(cx, cy, vb, nb)
    if sep > r + tol:
        return False
    nx, ny = edge_normal(vb, nb, idx)
    if sep <= 0.0:
        # Centre inside (or on) the polygon: push out through the best face.
        dist = sep
        qx, qy = cx - sep * nx, cy - sep * ny
    else:
        j = idx + 1 if idx + 1 < nb else 0
        v1x, v1y, v2x, v2y = vb[idx, 0], vb[idx, 1], vb[j, 0], vb[j, 1]
        e1 = (cx - v1x) * (v2x - v1x) + (cy - v1y) * (v2y - v1y)
        e2 = (cx - v2x) * (v1x - v2x) + (cy - v2y) * (v1y - v2y)
        if e1 <= 0.0 or e2 <= 0.0:
            # Vertex region: the normal runs from the nearest vertex to the centre.
            qx, qy = (v1x, v1y) if e1 <= 0.0 else (v2x, v2y)
            dx, dy = cx - qx, cy - qy
            dist = math.sqrt(dx * dx + dy * dy)
            if dist > r + tol:
                return False
            if dist > 1e-12:
                nx, ny = dx / dist, dy / dist
        else:
            dist = sep
            qx, qy = cx - sep * nx, cy - sep * ny
    depth = r - dist
    # Midway between the polygon's surface point and the circle's deepest point.
    _one_point(out, nx, ny, depth, 0.5 * (qx + cx - nx * r), 0.5 * (qy + cy - ny * r))
    return True


@compiled(inline="llvm")
def _one_point(out, nx, ny, depth, px, py):
    """Write a one-point manifold into ``out``: normal (nx, ny) from b to a, penetration
    ``depth`` [m] and the contact point (px, py) [m] (also its second slot)."""
    out[PFL_NX] = nx
    out[PFL_NY] = ny
    out[PFL_DEPTH] = depth
    out[PFL_NPTS] = 1.0
    out[PFL_CORNER] = 0.0
    out[PFL_P1X] = px
    out[PFL_P1Y] = py
    out[PFL_P1D] = depth
    out[PFL_P2X] = px
    out[PFL_P2Y] = py
    out[PFL_P2D] = depth


@compiled
def collide_circles(ax, ay, ra, bx, by, rb, tol, out):
    """Circle a against circle b."""
    dx, dy = ax - bx, ay - by
    d = math.sqrt(dx * dx + dy * dy)
    depth = ra + rb - d
    if depth < -tol:
        return False
    if d > 1e-12:
        nx, ny = dx / d, dy / d
    else:
        nx, ny = 1.0, 0.0
    # Midway between the two deepest points.
    _one_point(out, nx, ny, depth, 0.5 * ((ax - nx * ra) + (bx + nx * rb)),
               0.5 * ((ay - ny * ra) + (by + ny * rb)))
    return True


@compiled
def collide(ka, va, na, ra, kb, vb, nb, rb, tol, out, nrm):
    """Dispatch on the two piece kinds. ``v*`` are world-frame vertex arrays, ``n*`` counts;
    ``nrm`` (2, MAX_VERTS, 2) is scratch for two polygons' edge normals."""
    if ka == CIRCLE:
        if kb == CIRCLE:
            return collide_circles(va[0, 0], va[0, 1], ra, vb[0, 0], vb[0, 1], rb, tol, out)
        return collide_circle_polygon(va[0, 0], va[0, 1], ra, vb, nb, tol, out)
    if kb == CIRCLE:
        hit = collide_circle_polygon(vb[0, 0], vb[0, 1], rb, va, na, tol, out)
        if hit:
            out[PFL_NX] = -out[PFL_NX]
            out[PFL_NY] = -out[PFL_NY]
        return hit
    return collide_polygons(va, na, vb, nb, tol, out, nrm)


# --------------------------------------------------------------------------------------------
# Smooth static boundaries: a contact with a static piece that its union with the others
# does not allow is taken along the piece's best outer face (joints.py)
# --------------------------------------------------------------------------------------------
_PARALLEL = 1.0 - 1e-9  # a contact normal this aligned with a face normal is that face's
_LEAVES = 1e-9  # m . r above this enters a sector's ray


# A call, not inlined into pair_contact (which the prepare stage and the sweeps inline): only
# contacts with static pieces that meet others reach it. Inlined or not, PushMulti-v0's single
# env measured 0.92-0.95 of the engine before the joints (paired A/B), though none of its
# contacts passes this test: the cost is the narrow phase's code, not this work
@compiled
def _suspect(out, vb, nb, sflt, q):
    """Whether contact ``out`` with static piece q (world vertices vb, count nb) may break its
    union's rules (joints.py): it runs along a face marked dirty, or it is a vertex contact at
    a vertex where another piece meets it."""
    mx, my = out[PFL_NX], out[PFL_NY]
    for i in range(nb):
        if mx * sflt[q, PS_NRM + 2 * i] + my * sflt[q, PS_NRM + 2 * i + 1] >= _PARALLEL:
            return (int(sflt[q, PS_DIRTY]) >> i) & 1 != 0
    return _contact_vertex(out, vb, nb, int(sflt[q, PS_JVERTS])) >= 0


# LLVM-inlined: read by _suspect and smooth
@compiled(inline="llvm")
def _contact_vertex(out, vb, nb, mask):
    """The vertex of vb among those of bitmask ``mask`` that contact ``out``'s deepest point
    comes from (the point lies half its depth from it, along the normal), or -1: then the
    contact's point lies inside an edge of b, clipped by the other piece's face."""
    px, py = out[PFL_P1X], out[PFL_P1Y]
    reach = 0.5 * abs(out[PFL_DEPTH]) * (1.0 + 1e-9) + 1e-12
    for i in range(nb):
        if (mask >> i) & 1 and (vb[i, 0] - px) ** 2 + (vb[i, 1] - py) ** 2 <= reach * reach:
            return i
    return -1


@compiled
def _vertex_allows(row, i, mx, my, ux, uy):
    """Whether static vertex i (its piece's float row ``row``) allows a contact normal
    (mx, my) (from the piece toward the body) for a body whose core lies in direction
    (ux, uy) from it (joints.py)."""
    if i >= JOINT_VERTS:
        return True
    at = PS_JOINT + JV_STRIDE * i
    kind = row[at + JV_KIND]
    if kind == JK_PLAIN:
        return True
    if kind == JK_CLOSED:
        return False
    for k in range(int(row[at + JV_NSEC])):
        c = at + 2 + JV_WIDTH * k
        rax, ray, rbx, rby = row[c], row[c + 1], row[c + 2], row[c + 3]
        wide = row[c + 4] != 0.0
        # the body's sector: ccw from ray a to ray b (wide: more than half the turn)
        after_a = rax * uy - ray * ux >= 0.0
        before_b = ux * rby - uy * rbx >= 0.0
        if (after_a or before_b) if wide else (after_a and before_b):
            return wide and mx * rax + my * ray <= _LEAVES and mx * rbx + my * rby <= _LEAVES
    return False  # the core lies in no free sector (inside a neighbour): faces only


@compiled
def smooth(ka, va, na, ra, vb, nb, tol, out, nrm, sflt, q):
    """Check the contact ``out`` of movable piece a (kind ``ka``, world vertices va, count na,
    radius ra) with static polygon or segment b (vb, nb; static piece q of ``sflt``) against the
    joints of the static geometry (joints.py): a contact along an inner face of b, along an
    outer face the body's core lies behind while another faces it, or at a vertex of b that
    does not allow its normal, is taken instead along b's outer face toward the core (of the
    largest separation among those); a contact along an outer face that runs on into another
    piece's gets the union's patch (:func:`_union_patch`). Returns whether a and b are in
    contact (``out`` rewritten)."""
    row = sflt[q]
    mx, my = out[PFL_NX], out[PFL_NY]
    inner = int(row[PS_INNER])
    for i in range(nb):
        nrm[1, i, 0] = row[PS_NRM + 2 * i]
        nrm[1, i, 1] = row[PS_NRM + 2 * i + 1]
    # the body's core: a circle's centre, a polygon's vertices' mean
    cx, cy = (va[0, 0], va[0, 1]) if ka == CIRCLE else mean_point(va, na)
    face = -1
    for i in range(nb):
        if mx * nrm[1, i, 0] + my * nrm[1, i, 1] >= _PARALLEL:
            face = i
    outer = face >= 0 and (inner >> face) & 1 == 0
    if outer and nrm[1, face, 0] * (cx - vb[face, 0]) + nrm[1, face, 1] * (cy - vb[face, 1]) > 0.0:
        # along an outer face of b, which the body's core faces: the usual case. Where the
        # face runs on into another piece's (a flat joint), its patch is the union's
        if ka != CIRCLE:
            _union_patch(va, na, vb, nb, face, nrm[1, face, 0], nrm[1, face, 1], row, tol, out)
        return True
    if face < 0:
        # a vertex contact of b, at a vertex where others meet it (else it is one the union
        # has too, or a point inside b's edge)
        vi = _contact_vertex(out, vb, nb, int(row[PS_JVERTS]))
        if vi < 0 or _vertex_allows(row, vi, mx, my, cx - vb[vi, 0], cy - vb[vi, 1]):
            return True
    # b's outer faces with the core on their outer side (where the body came from), and the
    # one of largest separation from a among them (among all outer faces if none has)
    jb = -1
    sep = -np.inf
    facing = False
    for i in range(nb):
        if (inner >> i) & 1:
            continue
        nx, ny = nrm[1, i, 0], nrm[1, i, 1]
        out_side = nx * (cx - vb[i, 0]) + ny * (cy - vb[i, 1]) > 0.0
        if ka == CIRCLE:
            si = nx * (va[0, 0] - vb[i, 0]) + ny * (va[0, 1] - vb[i, 1]) - ra
        else:
            si = np.inf
            for k in range(na):
                si = min(si, nx * (va[k, 0] - vb[i, 0]) + ny * (va[k, 1] - vb[i, 1]))
        if (out_side and not facing) or (out_side == facing and si > sep):
            sep = si
            jb = i
            facing = out_side
    if outer and not facing:
        return True  # along an outer face of b, and no outer face faces the core either
    if jb < 0:
        return True  # b has no outer face: keep the contact as it is
    if sep > tol:
        return False  # apart along an outer face: the contact was an artefact of a joint
    nx, ny = nrm[1, jb, 0], nrm[1, jb, 1]
    if ka == CIRCLE:
        d = sep + ra  # the centre's separation from the face
        qx, qy = va[0, 0] - d * nx, va[0, 1] - d * ny
        _one_point(out, nx, ny, -sep, 0.5 * (qx + va[0, 0] - nx * ra),
                   0.5 * (qy + va[0, 1] - ny * ra))
        return True
    # a against face jb of b: a's two deepest vertices along its normal, not clipped to the
    # face's ends: past them lies the other piece of the joint, the union's face going on
    k1, s1, k2, s2 = _deepest_two(va, na, vb[jb, 0], vb[jb, 1], nx, ny)
    _face_patch(va, k1, s1, k2, s2, nx, ny, tol, out)
    return True


@compiled
def mean_point(v, n):
    """The mean of the first n rows of v: a point inside a convex polygon (its core), the
    middle of a segment [m]."""
    x = 0.0
    y = 0.0
    for i in range(n):
        x += v[i, 0]
        y += v[i, 1]
    return x / n, y / n


# LLVM-inlined: read by smooth and _union_patch
@compiled(inline="llvm")
def _deepest_two(va, na, fx, fy, nx, ny):
    """Polygon a's two deepest vertices against the line through (fx, fy) with normal
    (nx, ny): (k1, s1, k2, s2), s their separations [m] (k1 the deepest)."""
    k1 = -1
    k2 = -1
    s1 = np.inf
    s2 = np.inf
    for i in range(na):
        si = nx * (va[i, 0] - fx) + ny * (va[i, 1] - fy)
        if si < s1:
            k2, s2 = k1, s1
            k1, s1 = i, si
        elif si < s2:
            k2, s2 = i, si
    return k1, s1, k2, s2


@compiled
def _face_patch(va, k1, s1, k2, s2, nx, ny, tol, out):
    """Contact ``out`` of polygon a against a face of normal (nx, ny): its deepest vertex k1
    (separation s1 [m]) and, when within ``tol`` [m], its second k2 (s2), each its own
    depth."""
    out[PFL_NX] = nx
    out[PFL_NY] = ny
    out[PFL_DEPTH] = -s1
    out[PFL_CORNER] = 0.0
    out[PFL_P1X] = va[k1, 0] - 0.5 * s1 * nx
    out[PFL_P1Y] = va[k1, 1] - 0.5 * s1 * ny
    out[PFL_P1D] = -s1
    if k2 >= 0 and s2 <= tol:
        out[PFL_NPTS] = 2.0
        out[PFL_P2X] = va[k2, 0] - 0.5 * s2 * nx
        out[PFL_P2Y] = va[k2, 1] - 0.5 * s2 * ny
        out[PFL_P2D] = -s2
    else:
        out[PFL_NPTS] = 1.0
        out[PFL_P2X] = out[PFL_P1X]
        out[PFL_P2Y] = out[PFL_P1Y]
        out[PFL_P2D] = out[PFL_P1D]


@compiled
def _flat_end(row, i, ux, uy, nx, ny):
    """Whether static vertex i (its piece's float row ``row``) is a flat joint where the
    union's boundary runs straight on along (ux, uy), free on the side of (nx, ny): a free
    sector of exactly pi whose rays are +-(ux, uy) (joints.py)."""
    if i >= JOINT_VERTS:
        return False
    at = PS_JOINT + JV_STRIDE * i
    if row[at + JV_KIND] != JK_SECTORS:
        return False
    for k in range(int(row[at + JV_NSEC])):
        c = at + 2 + JV_WIDTH * k
        rax, ray, rbx, rby = row[c], row[c + 1], row[c + 2], row[c + 3]
        if rax * rbx + ray * rby <= -_PARALLEL and abs(rax * ux + ray * uy) >= _PARALLEL and \
                -ray * nx + rax * ny > 0.0:
            return True
    return False


@compiled
def _union_patch(va, na, vb, nb, f, nx, ny, row, tol, out):
    """Where face f of static piece b (world vertices vb, count nb; normal (nx, ny)) runs on
    into another piece's at an end (a flat joint), the contact ``out`` of polygon a along it
    becomes the union's: a's two deepest vertices, not clipped at a flat end. Left as it is
    when neither end is flat, or a chosen vertex lies past an end that is not.

    Why: SAT clips a patch to the piece's face, so a body across several cells gets a patch
    on each, most of them to one side of its centre; a unilateral patch there cannot lift the
    body without turning it (pure translation would pull at one point), and the turn it
    takes grows as it slides (a 0.38 m box landing on 0.1 m cells turned 0.5 rad in 0.8 s).
    The union's patch is the one a single piece gives."""
    j = f + 1 if f + 1 < nb else 0
    ux, uy = vb[j, 0] - vb[f, 0], vb[j, 1] - vb[f, 1]
    length = math.sqrt(ux * ux + uy * uy)
    if length == 0.0:
        return
    ux /= length
    uy /= length
    jverts = int(row[PS_JVERTS])
    lo = -np.inf if (jverts >> f) & 1 and _flat_end(row, f, ux, uy, nx, ny) else 0.0
    hi = np.inf if (jverts >> j) & 1 and _flat_end(row, j, ux, uy, nx, ny) else length
    if lo == 0.0 and hi == length:
        return
    k1, s1, k2, s2 = _deepest_two(va, na, vb[f, 0], vb[f, 1], nx, ny)
    t1 = ux * (va[k1, 0] - vb[f, 0]) + uy * (va[k1, 1] - vb[f, 1])
    t2 = ux * (va[k2, 0] - vb[f, 0]) + uy * (va[k2, 1] - vb[f, 1]) if s2 <= tol else t1
    if min(t1, t2) < lo or max(t1, t2) > hi:
        return  # past an end that is not a joint: SAT's clipped patch stands
    _face_patch(va, k1, s1, k2, s2, nx, ny, tol, out)


# --------------------------------------------------------------------------------------------
# One candidate pair: every piece pair of its two bodies (the pair rows' contact columns)
# --------------------------------------------------------------------------------------------
# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def piece_circle(p, x, y, c, s, sc, pflt):
    """World bounding circle of movable piece p of a body at COM (x, y), rotation (c, s),
    scale sc: (centre x, centre y, radius) [m]."""
    return (x + (c * pflt[p, PF_BCX] - s * pflt[p, PF_BCY]) * sc,
            y + (s * pflt[p, PF_BCX] + c * pflt[p, PF_BCY]) * sc, pflt[p, PF_BRAD] * sc)


# LLVM-inlined: a hot contact-solver helper (jit.py, 'Inlining')
@compiled(inline="llvm")
def place(e, p, cx, cy, c, s, sc, pint, pvert, vb):
    """World vertices of movable piece p of a body at COM (cx, cy), rotation (c, s), scale sc."""
    nv = pint[p, PI_NV]
    for i in range(nv):
        lx = pvert[p, i, 0] * sc
        ly = pvert[p, i, 1] * sc
        vb[i, 0] = cx + c * lx - s * ly
        vb[i, 1] = cy + s * lx + c * ly
    return nv


# LLVM-inlined into contacts.prepare and position_solver.resolve (jit.py, 'Inlining'): the
# narrow phase of every candidate pair in every sub-step; measured with resolve: 0.67 / 0.75
# of the inlined form's PushClutter-v0 gym.make throughput as a plain call.
@compiled(inline="llvm")
def pair_contact(e, k, prs, pos, ang, epar, bint, pint, pvert, pflt, sint, svert, sflt, tol,
                 vbuf, cbuf, pfl):
    """Deepest contact between the pieces of pair k's bodies into ``pfl[e, k, :OUT_LEN]``.

    Each piece of body a is tested against each piece of body b (or the pair's static piece)
    whose bounding circle (a static piece: box) is within ``tol`` [m]; only those are placed
    in world coordinates (``vbuf``) and collided (``collide``, into ``cbuf``). Returns True
    when some piece pair touches (gap <= tol).
    """
    a = prs[e, k, PRS_A]
    b = prs[e, k, PRS_B]
    sp = prs[e, k, PRS_SP]
    va = vbuf[e, 0]
    vb = vbuf[e, 1]
    nrm = vbuf[e, 2:4]
    out = cbuf[e]
    best = -np.inf
    ax, ay = pos[e, a, 0], pos[e, a, 1]
    ca, sa = heading(e, a, ang, cbuf)
    sca = epar[e, a, EP_SCALE]
    if sp < 0:
        bx, by = pos[e, b, 0], pos[e, b, 1]
        cb, sb = heading(e, b, ang, cbuf)
        scb = epar[e, b, EP_SCALE]
        q0, q1 = bint[b, BI_PSTART], bint[b, BI_PSTART] + bint[b, BI_PCOUNT]
    else:
        q0, q1 = sp, sp + 1
    for p in range(bint[a, BI_PSTART], bint[a, BI_PSTART] + bint[a, BI_PCOUNT]):
        pcx, pcy, prad = piece_circle(p, ax, ay, ca, sa, sca, pflt)
        placed = False
        for q in range(q0, q1):
            if sp < 0:
                qcx, qcy, qrad = piece_circle(q, bx, by, cb, sb, scb, pflt)
                dx, dy = pcx - qcx, pcy - qcy
                reach = prad + qrad + tol
                if dx * dx + dy * dy > reach * reach:
                    continue
            else:
                # Static pieces are long (walls): test the piece's circle against their box.
                dx = max(sflt[q, PF_MINX] - pcx, 0.0, pcx - sflt[q, PF_MAXX])
                dy = max(sflt[q, PF_MINY] - pcy, 0.0, pcy - sflt[q, PF_MAXY])
                reach = prad + tol
                if dx * dx + dy * dy > reach * reach:
                    continue
            if not placed:
                na = place(e, p, ax, ay, ca, sa, sca, pint, pvert, va)
                placed = True
            if sp < 0:
                nb = place(e, q, bx, by, cb, sb, scb, pint, pvert, vb)
                kb, rb, vv = pint[q, PI_KIND], pflt[q, PF_RAD] * scb, vb
            else:
                nb, kb, rb, vv = sint[q, PI_NV], sint[q, PI_KIND], sflt[q, PF_RAD], svert[q]
            hit = collide(pint[p, PI_KIND], va, na, pflt[p, PF_RAD] * sca, kb, vv, nb, rb, tol,
                          out, nrm)
            if hit and sp >= 0 and sflt[q, PS_SMOOTH] != 0.0 and _suspect(out, vv, nb, sflt, q):
                # at a joint of static pieces, or along a face that ends at one: checked
                # against their union (joints.py), a call (rare: an arena's walls never)
                hit = smooth(pint[p, PI_KIND], va, na, pflt[p, PF_RAD] * sca, vv, nb, tol, out,
                             nrm, sflt, q)
            if hit:
                if out[PFL_DEPTH] > best:
                    best = out[PFL_DEPTH]
                    for i in range(OUT_LEN):
                        pfl[e, k, i] = out[i]
    return best > -np.inf


# The same narrow-phase step as a compiled call, for rare paths (a re-check after a large
# turn, a pair refreshed after the sweeps), so those do not type pair_contact's body again.
pair_contact_call = compiled(pair_contact.py_func)


# The narrow phase of one pair as a call taking the world by pointer (four words, where
# pair_contact's arrays flattened are ~100 per call).
@compiled
def pair_contact_at(e, k, tol, wp):
    """:func:`pair_contact` of pair k of env e of the worlds at ``wp``, gap tolerance ``tol``."""
    W = load_world(wp)
    return pair_contact(e, k, W.prs, W.pos, W.ang, W.epar, W.bint, W.pint, W.pvert, W.pflt,
                        W.sint, W.svert, W.sflt, tol, W.vbuf, W.cbuf, W.pfl)


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def refresh_moved(e, npairs, prs, tol, bis, pfl, wp):
    """The refresh stage: re-evaluate the pairs of bodies the last sweep moved (``IS_MOVED``)
    at their final poses, gap tolerance ``tol`` [m], of env e of the worlds at ``wp``.

    A pair's stored contact is the one of its last evaluation; a body moved after that (later
    in the last sweep, or in any sweep when the cap cut them off) makes it stale. Refreshing
    those pairs gives the velocity pass current normals and makes max_penetration the true
    overlap left, not the one of some earlier evaluation. Pairs of unmoved bodies are current.
    """
    for k in range(npairs):
        a = prs[e, k, PRS_A]
        b = prs[e, k, PRS_B]
        if bis[e, a, IS_MOVED] == 0 and (prs[e, k, PRS_SP] >= 0 or bis[e, b, IS_MOVED] == 0):
            continue
        if pair_contact_at(e, k, tol, wp):
            pfl[e, k, PFL_TOUCH] = 1.0
        else:
            pfl[e, k, PFL_TOUCH] = 0.0
