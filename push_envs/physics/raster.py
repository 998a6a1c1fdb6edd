"""Batched pixels: a compiled top-down rasteriser of a World, one image per env.

The picture is the one ``push_envs.envs.render`` draws with pygame (same palette, same
world-to-pixel map: y up, the world rectangle fitted to the image), without its
decorations (grid lines, contact arrows, trails, text). Everything is drawn from a table of
primitives made once at set-up (``push_envs.envs.pixels.raster_arrays``):

* ``PRIM_POLY``: a closed outline (any simple polygon, even-odd rule) filled with ``fill``,
  its boundary a band of ``edge_px`` pixels either side in ``edge`` colour;
* ``PRIM_LINE``: an open polyline, a band of ``rad`` pixels either side in ``fill``;
* ``PRIM_CIRC``: a disc (centre = its one vertex, radius ``rad`` [m]) with an edge band.

Everything is filled by scanlines: per pixel row, the crossings of the row's centre line with
the outline (sorted; even-odd spans), so a frame costs a few operations per covered pixel.
Bands (edges, lines, heading lines) are quads filled the same way, half a pixel down-right
as pygame's even-width lines.

Static primitives (immovable bodies, the grid map) are drawn once into the background
``bg``; each frame copies it, blends the goal overlay (the goal body's outline at the goal
pose and the success circle, translucent as pygame's overlay), then draws the movable bodies
at their poses and their heading lines. A pixel is decided at its centre, so a frame depends
only on its env's state: a batch and a single env give the same bytes.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .frames import origin_pose
from .layout import EP_SCALE

PRIM_POLY = 0
PRIM_LINE = 1
PRIM_CIRC = 2

# geo[:]
G_X0 = 0  # world x of the image's left edge minus the margin [m] (world offset x)
G_Y0 = 1  # world offset y [m]
G_SCALE = 2  # [px/m]
G_MX = 3  # margin left of the world rectangle [px]
G_MY = 4  # margin below the world rectangle [px]
G_GOAL_R = 5  # success circle radius [m] (0: none)
G_LEN = 6

GOAL_FILL_A = 90  # overlay opacity of the goal fill (pygame's GOAL_FILL alpha)
GOAL_EDGE_A = 200


class RasterArrays(NamedTuple):
    """The primitive table and the image geometry (see the module doc).

    geo:    (G_LEN,) world-to-pixel map, goal circle radius [m]
    bg:     (H, W, 3) uint8 background with the static primitives
    kind, body: (P,) primitive kind; body index (movable) or -1 (world coordinates)
    vstart: (P + 1,) CSR into verts;  verts: (K, 2) body frame about the origin [m], or world
    rad:    (P,) circle radius [m] / line half width [px];  edge_px: (P,) edge half band [px]
    fill, edge: (P, 3) colours
    mov:    (Q,) primitives drawn every frame, in order (the movable bodies')
    heads:  (B, 4) heading line length [m] and its colour (0 length: none)
    goal:   (G,) primitives of the goal body's outline (drawn at the goal pose)
    gbody:  (1,) goal body (its size factor scales the outline), or -1
    gcols:  (3,) columns of the task's goal row holding x [m], y [m], theta [rad]; -1: none
    gcol:   (2, 3) goal fill and edge colours
    scratch: (E, KMAX, 2) pixel coordinates of one primitive
    xs:     (E, KMAX) scanline crossings
    ov:     (E, H, W, 3) uint8 goal overlay (0 between frames)
    """

    geo: np.ndarray
    bg: np.ndarray
    kind: np.ndarray
    body: np.ndarray
    vstart: np.ndarray
    verts: np.ndarray
    rad: np.ndarray
    edge_px: np.ndarray
    fill: np.ndarray
    edge: np.ndarray
    mov: np.ndarray
    heads: np.ndarray
    goal: np.ndarray
    gbody: np.ndarray
    gcols: np.ndarray
    gcol: np.ndarray
    scratch: np.ndarray
    xs: np.ndarray
    ov: np.ndarray


@njit(cache=True, inline="always")
def _span(out, r, xl, xr, c0, c1, c2):
    """Colour the pixels of row r whose centres lie in [xl, xr]."""
    a = int(math.ceil(xl - 0.5))
    b = int(math.floor(xr - 0.5))
    if a < 0:
        a = 0
    if b > out.shape[1] - 1:
        b = out.shape[1] - 1
    for c in range(a, b + 1):
        out[r, c, 0] = c0
        out[r, c, 1] = c1
        out[r, c, 2] = c2


@njit(cache=True, inline="always")
def _rows(lo, hi, H):
    """Rows whose centres lie in [lo, hi]."""
    r0 = int(math.ceil(lo - 0.5))
    r1 = int(math.floor(hi - 0.5))
    return max(r0, 0), min(r1, H - 1)


@njit(cache=True)
def fill_polygon(out, sp, n, xs, c0, c1, c2):
    """Even-odd scanline fill of the polygon sp[:n] (pixel coordinates; any simple polygon),
    deciding each pixel at its centre. ``xs`` is scratch for the crossings (>= n)."""
    lo, hi = np.inf, -np.inf
    for i in range(n):
        lo = min(lo, sp[i, 1])
        hi = max(hi, sp[i, 1])
    r0, r1 = _rows(lo, hi, out.shape[0])
    for r in range(r0, r1 + 1):
        cy = r + 0.5
        m = 0
        for i in range(n):
            j = i + 1 if i + 1 < n else 0
            ay, by = sp[i, 1], sp[j, 1]
            if (ay > cy) != (by > cy):
                x = sp[i, 0] + (cy - ay) / (by - ay) * (sp[j, 0] - sp[i, 0])
                k = m
                while k > 0 and xs[k - 1] > x:  # insertion sort (few crossings)
                    xs[k] = xs[k - 1]
                    k -= 1
                xs[k] = x
                m += 1
        for k in range(0, m - 1, 2):
            _span(out, r, xs[k], xs[k + 1], c0, c1, c2)


@njit(cache=True)
def fill_segment(out, ax, ay, bx, by, h, c0, c1, c2):
    """A segment drawn h pixels either side (square caps), as pygame draws a line 2h wide:
    the band is shifted by half a pixel down-right, like pygame's even-width lines."""
    ax += 0.5
    ay += 0.5
    bx += 0.5
    by += 0.5
    dx, dy = bx - ax, by - ay
    ll = math.sqrt(dx * dx + dy * dy)
    if ll > 0.0:
        dx, dy = dx / ll * h, dy / ll * h
    else:
        dx, dy = h, 0.0
    nx, ny = -dy, dx
    # Corners of the quad (convex): a - d + n, b + d + n, b + d - n, a - d - n.
    q0x, q0y = ax - dx + nx, ay - dy + ny
    q1x, q1y = bx + dx + nx, by + dy + ny
    q2x, q2y = bx + dx - nx, by + dy - ny
    q3x, q3y = ax - dx - nx, ay - dy - ny
    lo = min(min(q0y, q1y), min(q2y, q3y))
    hi = max(max(q0y, q1y), max(q2y, q3y))
    r0, r1 = _rows(lo, hi, out.shape[0])
    for r in range(r0, r1 + 1):
        cy = r + 0.5
        xl, xr = np.inf, -np.inf
        for e in range(4):
            if e == 0:
                px, py, qx, qy = q0x, q0y, q1x, q1y
            elif e == 1:
                px, py, qx, qy = q1x, q1y, q2x, q2y
            elif e == 2:
                px, py, qx, qy = q2x, q2y, q3x, q3y
            else:
                px, py, qx, qy = q3x, q3y, q0x, q0y
            if (py > cy) != (qy > cy):
                x = px + (cy - py) / (qy - py) * (qx - px)
                xl = min(xl, x)
                xr = max(xr, x)
        if xl <= xr:
            _span(out, r, xl, xr, c0, c1, c2)


@njit(cache=True)
def fill_disc(out, cx, cy, rad, c0, c1, c2):
    """The disc of radius rad [px] about (cx, cy), decided at pixel centres."""
    if rad <= 0.0:
        return
    r0, r1 = _rows(cy - rad, cy + rad, out.shape[0])
    for r in range(r0, r1 + 1):
        dy = r + 0.5 - cy
        q = rad * rad - dy * dy
        if q < 0.0:
            continue
        half = math.sqrt(q)
        _span(out, r, cx - half, cx + half, c0, c1, c2)


@njit(cache=True)
def _place(R, p, x, y, c, s, k, sp):
    """Pixel coordinates of primitive p's vertices placed at origin (x, y), rotation (c, s),
    size factor k, into sp; returns the vertex count."""
    geo = R.geo
    S, x0, y0, mx, my = geo[G_SCALE], geo[G_X0], geo[G_Y0], geo[G_MX], geo[G_MY]
    H = R.bg.shape[0]
    v0 = R.vstart[p]
    n = R.vstart[p + 1] - v0
    for i in range(n):
        vx = R.verts[v0 + i, 0] * k
        vy = R.verts[v0 + i, 1] * k
        wx = x + c * vx - s * vy
        wy = y + s * vx + c * vy
        sp[i, 0] = mx + (wx - x0) * S
        sp[i, 1] = H - my - (wy - y0) * S
    return n


@njit(cache=True)
def _draw_placed(R, p, sp, n, k, out, fill, edge, xs):
    """Draw primitive p (already placed into sp[:n]) with colours fill / edge (rows)."""
    kind = R.kind[p]
    h = R.edge_px[p]
    if kind == PRIM_CIRC:
        rpx = R.rad[p] * R.geo[G_SCALE] * k
        if h > 0.0:
            fill_disc(out, sp[0, 0], sp[0, 1], rpx + h, edge[0], edge[1], edge[2])
            fill_disc(out, sp[0, 0], sp[0, 1], rpx - h, fill[0], fill[1], fill[2])
        else:
            fill_disc(out, sp[0, 0], sp[0, 1], rpx, fill[0], fill[1], fill[2])
        return
    if kind == PRIM_LINE:
        for i in range(n - 1):
            fill_segment(out, sp[i, 0], sp[i, 1], sp[i + 1, 0], sp[i + 1, 1], R.rad[p],
                         fill[0], fill[1], fill[2])
        return
    fill_polygon(out, sp, n, xs, fill[0], fill[1], fill[2])
    if h > 0.0:
        for i in range(n):
            j = i + 1 if i + 1 < n else 0
            fill_segment(out, sp[i, 0], sp[i, 1], sp[j, 0], sp[j, 1], h,
                         edge[0], edge[1], edge[2])


@njit(cache=True)
def draw_prim(R, p, x, y, c, s, k, sp, xs, out):
    """Draw primitive p placed at origin (x, y) [m], rotation (c, s), size factor k."""
    n = _place(R, p, x, y, c, s, k, sp)
    _draw_placed(R, p, sp, n, k, out, R.fill[p], R.edge[p], xs)


@njit(cache=True, inline="always")
def _blend(d, s, a):
    """pygame's alpha blend of source s over destination d at opacity a (0-255)."""
    return d + (((s - d) * a + s) >> 8)


_ONE = np.array([1, 1, 1], np.int64)
_TWO = np.array([2, 2, 2], np.int64)


@njit(cache=True)
def _draw_goal(e, W, R, goal_row, sp, xs, ov, out):
    """The translucent goal: the goal body's outline at the goal pose, then the success
    circle, drawn into the overlay ``ov`` (1: fill, 2: edge; last drawn wins, as on pygame's
    overlay surface), blended once and cleared."""
    gx, gy, gt = goal_row[R.gcols[0]], goal_row[R.gcols[1]], goal_row[R.gcols[2]]
    S = R.geo[G_SCALE]
    H, Wd = out.shape[0], out.shape[1]
    k = W.epar[e, R.gbody[0], EP_SCALE] if R.gbody[0] >= 0 else 1.0
    c, s = math.cos(gt), math.sin(gt)
    lx, hx, ly, hy = np.inf, -np.inf, np.inf, -np.inf
    for gi in range(R.goal.shape[0]):
        p = R.goal[gi]
        n = _place(R, p, gx, gy, c, s, k, sp)
        for i in range(n):
            lx = min(lx, sp[i, 0])
            hx = max(hx, sp[i, 0])
            ly = min(ly, sp[i, 1])
            hy = max(hy, sp[i, 1])
        _draw_placed(R, p, sp, n, k, ov, _ONE, _TWO, xs)
    if R.geo[G_GOAL_R] > 0.0:
        cpx = R.geo[G_MX] + (gx - R.geo[G_X0]) * S
        cpy = H - R.geo[G_MY] - (gy - R.geo[G_Y0]) * S
        crad = max(2.0, R.geo[G_GOAL_R] * S)
        fill_disc(ov, cpx, cpy, crad, 2, 2, 2)
        fill_disc(ov, cpx, cpy, crad - 2.0, 1, 1, 1)
        lx, hx = min(lx, cpx - crad), max(hx, cpx + crad)
        ly, hy = min(ly, cpy - crad), max(hy, cpy + crad)
    r0 = max(int(math.floor(ly)) - 3, 0)
    r1 = min(int(math.ceil(hy)) + 4, H)
    c0 = max(int(math.floor(lx)) - 3, 0)
    c1 = min(int(math.ceil(hx)) + 4, Wd)
    for r in range(r0, r1):
        for col in range(c0, c1):
            which = ov[r, col, 0]
            if which == 0:
                continue
            ov[r, col, 0] = 0
            ov[r, col, 1] = 0
            ov[r, col, 2] = 0
            a = GOAL_FILL_A if which == 1 else GOAL_EDGE_A
            for ch in range(3):
                out[r, col, ch] = _blend(np.int64(out[r, col, ch]),
                                         np.int64(R.gcol[which - 1, ch]), a)


@njit(cache=True)
def raster_env(e, W, R, goal_row, out):
    """Draw env e into ``out`` (H, W, 3) uint8: background, goal, movable bodies, headings."""
    H, Wd = out.shape[0], out.shape[1]
    bg = R.bg
    for r in range(H):
        orow = out[r]
        brow = bg[r]
        for col in range(Wd):
            orow[col, 0] = brow[col, 0]
            orow[col, 1] = brow[col, 1]
            orow[col, 2] = brow[col, 2]
    sp = R.scratch[e]
    xs = R.xs[e]
    if R.gcols[0] >= 0:
        _draw_goal(e, W, R, goal_row, sp, xs, R.ov[e], out)
    for q in range(R.mov.shape[0]):
        p = R.mov[q]
        b = R.body[p]
        x, y, _th, c, s = origin_pose(e, b, W.pos, W.ang, W.bflt, W.epar)
        draw_prim(R, p, x, y, c, s, W.epar[e, b, EP_SCALE], sp, xs, out)
    S = R.geo[G_SCALE]
    for b in range(R.heads.shape[0]):
        length = R.heads[b, 0]
        if length <= 0.0:
            continue
        x, y, _th, c, s = origin_pose(e, b, W.pos, W.ang, W.bflt, W.epar)
        k = W.epar[e, b, EP_SCALE]
        ax = R.geo[G_MX] + (x - R.geo[G_X0]) * S
        ay = H - R.geo[G_MY] - (y - R.geo[G_Y0]) * S
        bx = ax + c * length * k * S
        by = ay - s * length * k * S
        c0, c1, c2 = np.uint8(R.heads[b, 1]), np.uint8(R.heads[b, 2]), np.uint8(R.heads[b, 3])
        fill_segment(out, ax, ay, bx, by, 1.0, c0, c1, c2)
        fill_disc(out, ax, ay, 2.5, c0, c1, c2)


@njit(cache=True)
def draw_static(R, prims, out):
    """Draw the (world-frame) primitives ``prims`` into ``out`` (the background, once)."""
    sp = R.scratch[0]
    xs = R.xs[0]
    for i in range(prims.shape[0]):
        draw_prim(R, prims[i], 0.0, 0.0, 1.0, 0.0, 1.0, sp, xs, out)


@njit(cache=True)
def raster_serial(W, R, goals, out):
    """Every env into out (E, H, W, 3); ``goals`` (E, n) the task's goal rows."""
    for e in range(out.shape[0]):
        raster_env(e, W, R, goals[e], out[e])


@njit(cache=True, parallel=True)
def raster_parallel(W, R, goals, out):
    """As raster_serial, prange over envs."""
    for e in prange(out.shape[0]):
        raster_env(e, W, R, goals[e], out[e])
