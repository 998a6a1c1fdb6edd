"""Joints of the static geometry: where static pieces meet, which contacts their union allows.

Static geometry is a set of convex pieces: a wall of collinear segments, an arena of four
boxes, a map merged into rectangles, a line string of many segments. Each piece is collided
alone, and alone a vertex where two pieces meet is a corner a body may catch on, and a face
two pieces share is a face a body may be pushed out through. In the union neither exists::

     a box sliding along a floor of two pieces, pressed into it by d:

               +---------+ ->
               |   box   |           against piece 2 alone, the box's right face has passed
        =======|=========|V======    piece 2's corner V by less than d, so SAT's least
          piece 1        | piece 2   overlap is along that face: piece 2 pushes the box
                                     back (a "ghost" bump, which spins it off the floor)

     a thin wedge slid tip first into the corner V of two walls:

          V=========================   top wall
        <=|=========== wedge           against the left wall alone, the least overlap is
          |                            along the wedge's long face (V lies on its line):
          |  left wall                 the contact pushes it into the top wall, never back

The remedy is Box2D's for chain shapes (ghost vertices), for any pieces. At scene build, each
vertex V of a static polygon or segment that another static piece touches gets the free
sectors around it: the directions from V that enter no piece, split at every segment through
V (a segment has no inside, but a body cannot cross it)::

    candidates   the directions of every edge through V (polygon edges ending at V or running
                 through it, segments, tangents of discs through V), sorted
    arcs         between consecutive candidates: free when its middle direction, a hair from
                 V, enters no piece
    sectors      consecutive free arcs, merged unless a segment runs between them

A body in a sector wider than pi (a convex corner of the union) may touch V with any normal m
that leaves both of the sector's rays (m . r_a <= 0 and m . r_b <= 0); at a flat joint (pi)
that leaves only the face's own normal, and in a narrower sector (a concave corner) nothing:
no contact there may be a vertex contact at V. A face whose points a hair outside all lie
inside other pieces is an inner face: no contact may use its normal. The narrow phase
(``narrowphase.smooth``) takes a contact that breaks either rule along the static piece's
best outer face instead, and gives a contact along a face that runs on into another piece's
(a flat joint) the union's patch, not the one clipped to the piece's face.

So that the check runs only where it can matter, each piece also keeps its faces' normals,
the vertices where a joint is reachable (a vertex buried in the others is not), and the faces
to check (dirty): inner ones, and those that end at a reachable joint with their outer side
free just there. An arena's walls, overlapping at their corners, have joints only on their
outer sides: a contact on an inner face is never checked.

Computed once per scene by :func:`static_joints` into ``sflt[:, PF_LEN:PS_LEN]`` (layout.py).
Units: metres, radians.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numba.extending import register_jitable

from .layout import JK_CLOSED
from .layout import JK_SECTORS
from .layout import JOINT_VERTS
from .layout import JV_KIND
from .layout import JV_NSEC
from .layout import JV_SECTORS
from .layout import JV_STRIDE
from .layout import JV_WIDTH
from .layout import PF_RAD
from .layout import PI_KIND
from .layout import PI_NV
from .layout import PS_DIRTY
from .layout import PS_INNER
from .layout import PS_JOINT
from .layout import PS_JVERTS
from .layout import PS_NRM
from .layout import PS_SMOOTH

# Piece kinds (narrowphase.CIRCLE, POLYGON, SEGMENT; not imported: narrowphase imports the
# layout this module writes, and this module needs none of its kernels)
_CIRCLE, _POLYGON, _SEGMENT = 0, 1, 2
TOUCH = 1e-7  # [m] a point this near a piece meets it (a map's cells, a file's corners)
_HAIR = 1e-5  # [m] how far from V (or a face) a direction (or an outer point) is probed
_ANGLE_TOL = 1e-9  # [rad] candidates closer than this are one
_CANDS = 64  # edge directions kept per vertex
_TOUCHING = 16  # pieces kept per vertex
_PROBES = (0.02, 0.25, 0.5, 0.75, 0.98)  # where along a face its outer side is probed
_TWO_PI = 2.0 * math.pi
_PYTHON_PIECES = 200  # static_joints runs as Python up to this many static pieces


@register_jitable
def _edge_count(kind, nv):
    """Edges of a piece: a segment has one (its two sides share it), a polygon nv."""
    return 1 if kind == _SEGMENT else nv


@register_jitable
def _depth(kind, nv, v, rad, px, py):
    """How far (px, py) lies inside the piece [m]: > 0 inside (a segment: never), <= 0 on
    or outside it (minus its distance from a segment, or from a circle's rim)."""
    if kind == _CIRCLE:
        return rad - math.hypot(px - v[0, 0], py - v[0, 1])
    if kind == _SEGMENT:
        ex, ey = v[1, 0] - v[0, 0], v[1, 1] - v[0, 1]
        length2 = ex * ex + ey * ey
        t = 0.0
        if length2 > 0.0:
            t = min(max(((px - v[0, 0]) * ex + (py - v[0, 1]) * ey) / length2, 0.0), 1.0)
        return -math.hypot(v[0, 0] + t * ex - px, v[0, 1] + t * ey - py)
    out = np.inf
    for i in range(nv):
        j = i + 1 if i + 1 < nv else 0
        ex, ey = v[j, 0] - v[i, 0], v[j, 1] - v[i, 1]
        length = math.hypot(ex, ey)
        if length == 0.0:
            continue
        out = min(out, -(ey * (px - v[i, 0]) - ex * (py - v[i, 1])) / length)
    return out


@register_jitable
def _near(px, py, grid, gstart, gitem, out):
    """Static pieces listed in the grid cell of (px, py), and in the next cells when it lies
    within 2 _HAIR of their border (a piece touching a point on a cell's border may be
    listed in the next cell only), into ``out`` (long enough for four cells); returns their
    count, without duplicates."""
    lo_x, lo_y, cell, nx, ny = grid[0], grid[1], grid[2], int(grid[3]), int(grid[4])
    fx = (px - lo_x) / cell
    fy = (py - lo_y) / cell
    ci = int(math.floor(fx))
    cj = int(math.floor(fy))
    reach = 2.0 * _HAIR / cell
    i0 = ci - 1 if fx - ci <= reach else ci
    i1 = ci + 1 if ci + 1 - fx <= reach else ci
    j0 = cj - 1 if fy - cj <= reach else cj
    j1 = cj + 1 if cj + 1 - fy <= reach else cj
    n = 0
    for i in range(max(i0, 0), min(i1, nx - 1) + 1):
        for j in range(max(j0, 0), min(j1, ny - 1) + 1):
            c = i * ny + j
            for k in range(gstart[c], gstart[c + 1]):
                r = gitem[k]
                seen = False
                for m in range(n):
                    if out[m] == r:
                        seen = True
                        break
                if not seen:
                    out[n] = r
                    n += 1
    return n


@register_jitable
def _sector(row, at, k, a0, span):
    """Sector k of the vertex at ``row[at:]``: from direction a0 [rad], ccw by span [rad]."""
    c = at + 2 + JV_WIDTH * k
    row[c] = math.cos(a0)
    row[c + 1] = math.sin(a0)
    row[c + 2] = math.cos(a0 + span)
    row[c + 3] = math.sin(a0 + span)
    row[c + 4] = 1.0 if span >= math.pi - 1e-9 else 0.0


@register_jitable
def _vertex_sectors(px, py, touch, nt, sint, svert, sflt, row, at):
    """The free sectors around (px, py) among the pieces ``touch[:nt]`` into ``row[at:]``
    (JV_KIND, JV_NSEC, then the sectors; module docs). Returns False when no direction is
    free (the point is buried in the pieces: no body reaches it without overlapping one)."""
    cand = np.empty(_CANDS)
    cut = np.zeros(_CANDS, np.bool_)
    m = 0
    for t in range(nt):
        r = touch[t]
        kind, nv, v = sint[r, PI_KIND], sint[r, PI_NV], svert[r]
        if kind == _CIRCLE:
            a = math.atan2(py - v[0, 1], px - v[0, 0])
            for da in (0.5 * math.pi, -0.5 * math.pi):
                if m < _CANDS:
                    cand[m] = a + da
                    m += 1
            continue
        for i in range(_edge_count(kind, nv)):
            j = i + 1 if i + 1 < nv else 0
            ex, ey = v[j, 0] - v[i, 0], v[j, 1] - v[i, 1]
            length = math.hypot(ex, ey)
            if length == 0.0:
                continue
            ux, uy = ex / length, ey / length
            s = (px - v[i, 0]) * ux + (py - v[i, 1]) * uy
            off = abs((px - v[i, 0]) * uy - (py - v[i, 1]) * ux)
            if off > TOUCH or s < -TOUCH or s > length + TOUCH:
                continue
            if s > TOUCH and m < _CANDS:
                cand[m] = math.atan2(-uy, -ux)  # toward the edge's start
                cut[m] = kind == _SEGMENT
                m += 1
            if s < length - TOUCH and m < _CANDS:
                cand[m] = math.atan2(uy, ux)  # toward its end
                cut[m] = kind == _SEGMENT
                m += 1
    first = np.int64(0)  # not a literal 0: one signature of _sector
    if m == 0:  # no edge runs from the point (a disc's centre): one sector, the whole turn
        _sector(row, at, first, 0.0, _TWO_PI)
        row[at + JV_KIND] = JK_SECTORS
        row[at + JV_NSEC] = 1
        return True
    # sort the directions in [0, 2 pi), merging those within _ANGLE_TOL (a cut wins)
    # (an insertion sort: m is a handful, and numba's argsort costs seconds to compile)
    for i in range(m):
        a = cand[i] % _TWO_PI
        c = cut[i]
        j = i
        while j > 0 and cand[j - 1] > a:
            cand[j] = cand[j - 1]
            cut[j] = cut[j - 1]
            j -= 1
        cand[j] = a
        cut[j] = c
    ang = np.empty(m)
    iscut = np.zeros(m, np.bool_)
    k = 0
    for i in range(m):
        if k > 0 and cand[i] - ang[k - 1] <= _ANGLE_TOL:
            iscut[k - 1] = iscut[k - 1] or cut[i]
            continue
        ang[k] = cand[i]
        iscut[k] = cut[i]
        k += 1
    if k > 1 and ang[0] + _TWO_PI - ang[k - 1] <= _ANGLE_TOL:
        iscut[0] = iscut[0] or iscut[k - 1]
        k -= 1
    # each arc between consecutive directions: free when its middle enters no piece
    free = np.zeros(k, np.bool_)
    span = np.empty(k)
    for i in range(k):
        a1 = ang[i + 1] if i + 1 < k else ang[0] + _TWO_PI
        span[i] = a1 - ang[i]
        mid = ang[i] + 0.5 * span[i]
        qx, qy = px + _HAIR * math.cos(mid), py + _HAIR * math.sin(mid)
        free[i] = True
        for t in range(nt):
            r = touch[t]
            if _depth(sint[r, PI_KIND], sint[r, PI_NV], svert[r], sflt[r, PF_RAD], qx,
                      qy) > TOUCH:
                free[i] = False
                break
    # sectors: runs of free arcs, each begun after a blocked arc or at a segment
    ns = 0
    closed = True
    for i in range(k):
        if not free[i]:
            continue
        closed = False
        if free[i - 1] and not iscut[i] and k > 1:
            continue
        a0 = ang[i]
        total = span[i]
        j = (i + 1) % k
        while j != i and free[j] and not iscut[j]:
            total += span[j]
            j = (j + 1) % k
        if ns == JV_SECTORS:
            row[at + JV_KIND] = JK_CLOSED  # cut in more ways than a row holds
            return True
        _sector(row, at, ns, a0, total)
        ns += 1
    if closed:
        row[at + JV_KIND] = JK_CLOSED
        return False
    if ns == 0:  # every arc free and no segment among them: one sector, the whole turn
        _sector(row, at, first, ang[0], _TWO_PI)
        ns = 1
    row[at + JV_KIND] = JK_SECTORS
    row[at + JV_NSEC] = ns
    return True


def static_joints(sint: np.ndarray, svert: np.ndarray, sflt: np.ndarray, grid: np.ndarray,
                  gstart: np.ndarray, gitem: np.ndarray) -> None:
    """Write where static pieces meet into ``sflt[:, PF_LEN:PS_LEN]`` (module docs): each
    polygon's or segment's vertex sectors and inner faces; ``grid, gstart, gitem`` is the
    scene's static grid (scene._static_grid), through which a vertex meets only the pieces
    near it: a merged map of thousands of rectangles costs about linear time.

    The same code runs as Python for a scene of up to ``_PYTHON_PIECES`` static pieces (a
    task's few walls: milliseconds, where compiling it costs a new machine's first
    ``gym.make`` 5 CPU-s) and compiled for a larger one (a grid map)."""
    if len(sint) <= _PYTHON_PIECES:
        _joints(sint, svert, sflt, grid, gstart, gitem)
    else:
        _joints_compiled(sint, svert, sflt, grid, gstart, gitem)


def _joints(sint, svert, sflt, grid, gstart, gitem):
    """:func:`static_joints`' work, as Python or compiled (``_joints_compiled``)."""
    n = sint.shape[0]
    most = 0
    for c in range(gstart.shape[0] - 1):
        most = max(most, gstart[c + 1] - gstart[c])
    near = np.empty(4 * most + 1, np.int64)
    touch = np.empty(_TOUCHING, np.int64)
    for q in range(n):
        sflt[q, PS_SMOOTH:] = 0.0
    if n < 2:
        return
    for q in range(n):
        kind, nv = sint[q, PI_KIND], sint[q, PI_NV]
        if kind == _CIRCLE or sflt[q, PF_RAD] != 0.0:
            continue
        jverts = 0
        for i in range(min(nv, JOINT_VERTS)):
            px, py = svert[q, i, 0], svert[q, i, 1]
            nn = _near(px, py, grid, gstart, gitem, near)
            touch[0] = q
            nt = 1
            for t in range(nn):
                r = near[t]
                if r != q and _depth(sint[r, PI_KIND], sint[r, PI_NV], svert[r],
                                     sflt[r, PF_RAD], px, py) >= -TOUCH:
                    if nt < _TOUCHING:
                        touch[nt] = r
                    nt += 1
            if nt == 1:
                continue  # a corner like any other (JK_PLAIN)
            if nt > _TOUCHING:  # more pieces meet here than are kept: faces only
                sflt[q, PS_JOINT + JV_STRIDE * i + JV_KIND] = JK_CLOSED
                jverts |= 1 << i
                continue
            # a vertex buried in the others is written (JK_CLOSED) but needs no check
            if _vertex_sectors(px, py, touch, nt, sint, svert, sflt, sflt[q],
                               PS_JOINT + JV_STRIDE * i):
                jverts |= 1 << i
        # faces: inner when every probe a hair outside lies inside some other piece; checked
        # (dirty) when inner, or when an end meets another piece (a joint a body can reach)
        # with the face's outer side free just there
        inner = 0
        dirty = 0
        sides = 2 if kind == _SEGMENT else nv
        for i in range(sides):
            j = i + 1 if i + 1 < sides else 0
            ax, ay, bx, by = svert[q, i, 0], svert[q, i, 1], svert[q, j, 0], svert[q, j, 1]
            ex, ey = bx - ax, by - ay
            length = math.hypot(ex, ey)
            if length == 0.0:
                continue
            nx, ny = ey / length, -ex / length
            if i < JOINT_VERTS:
                sflt[q, PS_NRM + 2 * i] = nx
                sflt[q, PS_NRM + 2 * i + 1] = ny
            covered = True
            for f in _PROBES:
                if not _covered(ax + f * ex + _HAIR * nx, ay + f * ey + _HAIR * ny, q, sint,
                                svert, sflt, grid, gstart, gitem, near):
                    covered = False
                    break
            if covered:
                inner |= 1 << i
                dirty |= 1 << i
                continue
            tx, ty = ex / length, ey / length
            for end, sign in ((i, 1.0), (j, -1.0)):
                if (jverts >> end) & 1 and not _covered(
                        svert[q, end, 0] + sign * _HAIR * tx + _HAIR * nx,
                        svert[q, end, 1] + sign * _HAIR * ty + _HAIR * ny, q, sint, svert,
                        sflt, grid, gstart, gitem, near):
                    dirty |= 1 << i
        sflt[q, PS_INNER] = float(inner)
        sflt[q, PS_DIRTY] = float(dirty)
        sflt[q, PS_JVERTS] = float(jverts)
        sflt[q, PS_SMOOTH] = 1.0 if dirty != 0 or jverts != 0 else 0.0


@register_jitable
def _covered(px, py, q, sint, svert, sflt, grid, gstart, gitem, near):
    """Whether (px, py) lies inside a static piece other than q (``near``: scratch)."""
    nn = _near(px, py, grid, gstart, gitem, near)
    for t in range(nn):
        r = near[t]
        if r != q and _depth(sint[r, PI_KIND], sint[r, PI_NV], svert[r], sflt[r, PF_RAD], px,
                             py) > TOUCH:
            return True
    return False


_joints_compiled = njit(cache=True)(_joints)
