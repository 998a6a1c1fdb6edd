"""Batched pixels: a compiled top-down rasteriser of a World, one image per env.

The picture is the one ``push_envs.envs.render`` draws with pygame (same palette, same
world-to-pixel map: y up, the world rectangle fitted to the image), without its
decorations (grid lines, contact arrows, trails, text). Everything is drawn from a table of
primitives made once at set-up (``push_envs.envs.pixels.raster_arrays``):

* ``PRIM_POLY``: a closed outline (any simple polygon, even-odd rule) filled with ``fill``,
  its boundary a band of ``edge_px`` pixels either side in ``edge`` colour;
* ``PRIM_LINE``: an open polyline, a band of ``rad`` pixels either side in ``fill``;
* ``PRIM_CIRC``: a disc (centre = its one vertex, radius ``rad`` [m]) with an edge band.

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


@njit(cache=True, inline="always")
def _seg_d2(px, py, ax, ay, bx, by):
    """Squared distance from (px, py) to the segment a-b [px^2]."""
    ex, ey = bx - ax, by - ay
    wx, wy = px - ax, py - ay
    ll = ex * ex + ey * ey
    t = 0.0
    if ll > 0.0:
        t = (wx * ex + wy * ey) / ll
        t = 0.0 if t < 0.0 else (1.0 if t > 1.0 else t)
    dx, dy = wx - t * ex, wy - t * ey
    return dx * dx + dy * dy


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
def _shade(kind, sp, n, rpx, h, cx, cy):
    """What primitive (pixel coords sp[:n]) does at pixel centre (cx, cy): 0 nothing,
    1 fill, 2 edge band."""
    if kind == PRIM_CIRC:
        dx, dy = cx - sp[0, 0], cy - sp[0, 1]
        d = math.sqrt(dx * dx + dy * dy)
        if h > 0.0 and abs(d - rpx) <= h:
            return 2
        return 1 if d < rpx else 0
    if kind == PRIM_LINE:
        for i in range(n - 1):
            if _seg_d2(cx, cy, sp[i, 0], sp[i, 1], sp[i + 1, 0], sp[i + 1, 1]) <= rpx * rpx:
                return 1
        return 0
    inside = False
    d2 = np.inf
    for i in range(n):
        j = i + 1 if i + 1 < n else 0
        ax, ay, bx, by = sp[i, 0], sp[i, 1], sp[j, 0], sp[j, 1]
        if (ay > cy) != (by > cy):
            xc = ax + (cy - ay) / (by - ay) * (bx - ax)
            if cx < xc:
                inside = not inside
        if h > 0.0:
            q = _seg_d2(cx, cy, ax, ay, bx, by)
            if q < d2:
                d2 = q
    if h > 0.0 and d2 <= h * h:
        return 2
    return 1 if inside else 0


@njit(cache=True)
def _bbox(kind, sp, n, reach, H, W):
    """Pixel rows and columns [r0, r1) x [c0, c1) a primitive can touch."""
    if kind == PRIM_CIRC:
        lx, hx, ly, hy = sp[0, 0], sp[0, 0], sp[0, 1], sp[0, 1]
    else:
        lx, hx, ly, hy = np.inf, -np.inf, np.inf, -np.inf
        for i in range(n):
            lx = min(lx, sp[i, 0])
            hx = max(hx, sp[i, 0])
            ly = min(ly, sp[i, 1])
            hy = max(hy, sp[i, 1])
    c0 = max(int(math.floor(lx - reach)), 0)
    c1 = min(int(math.ceil(hx + reach)) + 1, W)
    r0 = max(int(math.floor(ly - reach)), 0)
    r1 = min(int(math.ceil(hy + reach)) + 1, H)
    return r0, r1, c0, c1


@njit(cache=True)
def draw_prim(R, p, x, y, c, s, k, sp, out):
    """Draw primitive p placed at origin (x, y) [m], rotation (c, s), size factor k."""
    n = _place(R, p, x, y, c, s, k, sp)
    kind = R.kind[p]
    h = R.edge_px[p]
    rpx = R.rad[p] * R.geo[G_SCALE] * k if kind == PRIM_CIRC else R.rad[p]
    reach = max(h, rpx if kind != PRIM_POLY else 0.0) + 1.0
    r0, r1, c0, c1 = _bbox(kind, sp, n, reach, out.shape[0], out.shape[1])
    for r in range(r0, r1):
        cy = r + 0.5
        for col in range(c0, c1):
            m = _shade(kind, sp, n, rpx, h, col + 0.5, cy)
            if m == 1:
                out[r, col, 0] = R.fill[p, 0]
                out[r, col, 1] = R.fill[p, 1]
                out[r, col, 2] = R.fill[p, 2]
            elif m == 2:
                out[r, col, 0] = R.edge[p, 0]
                out[r, col, 1] = R.edge[p, 1]
                out[r, col, 2] = R.edge[p, 2]


@njit(cache=True, inline="always")
def _blend(d, s, a):
    """pygame's alpha blend of source s over destination d at opacity a (0-255)."""
    return d + (((s - d) * a + s) >> 8)


@njit(cache=True)
def _draw_goal(e, W, R, goal_row, sp, out):
    """The translucent goal: the goal body's outline at the goal pose, then the success
    circle, decided per pixel as pygame's overlay (last drawn wins) and blended once."""
    gx, gy, gt = goal_row[R.gcols[0]], goal_row[R.gcols[1]], goal_row[R.gcols[2]]
    S = R.geo[G_SCALE]
    H, Wd = out.shape[0], out.shape[1]
    k = W.epar[e, R.gbody[0], EP_SCALE] if R.gbody[0] >= 0 else 1.0
    c, s = math.cos(gt), math.sin(gt)
    cpx = R.geo[G_MX] + (gx - R.geo[G_X0]) * S
    cpy = H - R.geo[G_MY] - (gy - R.geo[G_Y0]) * S
    crad = max(2.0, R.geo[G_GOAL_R] * S) if R.geo[G_GOAL_R] > 0.0 else 0.0
    # Bounding box of the overlay: the outline's and the circle's.
    r0, r1, c0, c1 = H, 0, Wd, 0
    if crad > 0.0:
        r0 = max(int(math.floor(cpy - crad)) - 1, 0)
        r1 = min(int(math.ceil(cpy + crad)) + 2, H)
        c0 = max(int(math.floor(cpx - crad)) - 1, 0)
        c1 = min(int(math.ceil(cpx + crad)) + 2, Wd)
    base = 0
    for gi in range(R.goal.shape[0]):
        p = R.goal[gi]
        n = _place(R, p, gx, gy, c, s, k, sp[base:])
        a0, a1, b0, b1 = _bbox(PRIM_POLY, sp[base:], n, 2.0, H, Wd)
        r0, r1, c0, c1 = min(r0, a0), max(r1, a1), min(c0, b0), max(c1, b1)
        base += n
    for r in range(r0, r1):
        cy = r + 0.5
        for col in range(c0, c1):
            cx = col + 0.5
            which = 0  # 0 none, 1 fill, 2 edge
            base = 0
            for gi in range(R.goal.shape[0]):
                p = R.goal[gi]
                n = R.vstart[p + 1] - R.vstart[p]
                m = _shade(PRIM_POLY, sp[base:], n, 0.0, R.edge_px[p], cx, cy)
                if m > 0:
                    which = m
                base += n
            if crad > 0.0:
                dx, dy = cx - cpx, cy - cpy
                d = math.sqrt(dx * dx + dy * dy)
                if d <= crad:
                    which = 2 if d > crad - 2.0 else 1
            if which == 0:
                continue
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
        for col in range(Wd):
            out[r, col, 0] = bg[r, col, 0]
            out[r, col, 1] = bg[r, col, 1]
            out[r, col, 2] = bg[r, col, 2]
    sp = R.scratch[e]
    if R.gcols[0] >= 0:
        _draw_goal(e, W, R, goal_row, sp, out)
    for q in range(R.mov.shape[0]):
        p = R.mov[q]
        b = R.body[p]
        x, y, _th, c, s = origin_pose(e, b, W.pos, W.ang, W.bflt, W.epar)
        draw_prim(R, p, x, y, c, s, W.epar[e, b, EP_SCALE], sp, out)
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
        r0 = max(int(math.floor(min(ay, by) - 3.0)), 0)
        r1 = min(int(math.ceil(max(ay, by) + 3.0)) + 1, H)
        c0 = max(int(math.floor(min(ax, bx) - 3.0)), 0)
        c1 = min(int(math.ceil(max(ax, bx) + 3.0)) + 1, Wd)
        for r in range(r0, r1):
            cy = r + 0.5
            for col in range(c0, c1):
                cx = col + 0.5
                dx, dy = cx - ax, cy - ay
                if _seg_d2(cx, cy, ax, ay, bx, by) <= 1.0 or dx * dx + dy * dy <= 6.25:
                    out[r, col, 0] = np.uint8(R.heads[b, 1])
                    out[r, col, 1] = np.uint8(R.heads[b, 2])
                    out[r, col, 2] = np.uint8(R.heads[b, 3])


@njit(cache=True)
def draw_static(R, prims, out):
    """Draw the (world-frame) primitives ``prims`` into ``out`` (the background, once)."""
    sp = R.scratch[0]
    for i in range(prims.shape[0]):
        draw_prim(R, prims[i], 0.0, 0.0, 1.0, 0.0, 1.0, sp, out)


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
