"""Batched pixels: a compiled rasteriser of a World, one image per env.

The picture is the one ``push_envs.core.render`` draws with pygame (same palette, same
world-to-pixel map: y up, the world rectangle fitted to the image), without its
decorations (grid lines, contact arrows, trails, text). The ego view draws the same scene
about a robot instead: the robot's origin at the image centre, its heading up, ``geo[G_SCALE]``
pixels per metre. Everything is drawn from a table of primitives made once at set-up
(``push_envs.sensors.pixels.raster_arrays``):

* ``PRIM_POLY``: a closed outline (any simple polygon, even-odd rule) filled with ``fill``,
  its boundary a band of ``edge_px`` pixels either side in ``edge`` colour;
* ``PRIM_LINE``: an open polyline, a band of ``rad`` pixels either side in ``fill``;
* ``PRIM_CIRC``: a disc (centre = its one vertex, radius ``rad`` [m]) with an edge band;
* ``PRIM_RECT``: an axis-aligned rectangle snapped to whole pixels as ``render()`` draws a
  grid-map cell: its pixel corners rounded half to even (``np.round``), the columns and rows
  [low, high) filled (``pygame.draw.rect``);
* ``PRIM_PXLINE``: axis-aligned segments drawn by ``pygame.draw.line``'s integer rule, ``2 rad``
  pixels wide (a grid map's edges in the top-down view).

The last two hold where a wall is about a pixel thin (a grid map of 0.1 m cells at 6 px/m):
there the geometric rule of the others puts many of its pixels on the other side of a pixel
centre than pygame does. They are used only where the map is axis-aligned in the image.

Everything is filled by scanlines: per pixel row, the crossings of the row's centre line with
the outline (sorted; even-odd spans), so a frame costs a few operations per covered pixel.
Bands (edges, lines, heading lines) are quads filled the same way, half a pixel down-right
as pygame's even-width lines.

The goals' outlines are drawn by pygame's integer rules as render() draws them (vertices
truncated to whole pixels, ``pygame.draw.polygon``'s scanline fill, ``pygame.draw.lines``'
2 px Bresenham lines): a goal is often only a few pixels across, where the geometric rule
moves a tenth of its pixels.

In the top-down view, static primitives (immovable bodies, the grid map) are drawn once into
the background ``bg``; in the ego view they move with the robot, so they are drawn every
frame (the first ``geo[G_NSTATIC]`` of ``mov``, in world coordinates) over a plain ``bg``.
Each frame restores it where the env's previous frame drew (per row, the range of
columns drawn: the frame buffer is the env's own, so the rest still holds the background),
blends the goal overlay (every goal of the task's goal table: an outline at the goal pose
held in the env's goal row, a success circle, in the goal's colour, translucent as pygame's
overlay), then draws the movable bodies at their poses and their heading lines. A pixel is
decided at its centre, so a frame depends only on its env's state: a batch and a single env
give the same bytes.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numba import prange

from .frames import origin_pose_seen
from .jit import compiled
from .layout import EP_SCALE

PRIM_POLY = 0
PRIM_LINE = 1
PRIM_CIRC = 2
PRIM_RECT = 3
PRIM_PXLINE = 4

# geo[:]
G_X0 = 0  # world x of the image's left edge minus the margin [m] (world offset x)
G_Y0 = 1  # world offset y [m]
G_SCALE = 2  # [px/m]
G_MX = 3  # margin left of the world rectangle [px] (ego view: the robot's column [px])
G_MY = 4  # margin below the world rectangle [px] (ego view: the robot's row [px])
G_EGO = 5  # body index of the robot the ego view follows; -1: the top-down view
G_NSTATIC = 6  # ego view: the first G_NSTATIC primitives of ``mov`` are static (world frame)
G_LEN = 7

_CLEAN = 1 << 30  # a dirty range's first column when nothing is drawn (first > last)

GOAL_FILL_A = 90  # overlay opacity of the goal fill (pygame's GOAL_FILL alpha)
GOAL_EDGE_A = 200


class RasterArrays(NamedTuple):
    """The primitive table and the image geometry (see the module doc).

    geo:    (G_LEN,) world-to-pixel map and view (G_* above)
    bg:     (H, W, 3) uint8 background with the static primitives
    kind, body: (P,) primitive kind; body index (movable) or -1 (world coordinates)
    vstart: (P + 1,) CSR into verts;  verts: (K, 2) body frame about the origin [m], or world
    rad:    (P,) circle radius [m] / line half width [px];  edge_px: (P,) edge half band [px]
    fill, edge: (P, 3) colours
    mov:    (Q,) primitives drawn every frame, in order (the movable bodies'; in the ego
            view the static ones first)
    heads:  (B, 4) heading line length [m] and its colour (0 length: none)

    The goal table, one row per goal mark (``push_envs.core.render.GoalMark``, G marks):
    goal:   (PG,) primitives of the marks' outlines, body frame (drawn at the goal pose)
    gstart: (G + 1,) CSR: mark g's outline primitives are goal[gstart[g]:gstart[g + 1]]
    gbody:  (G,) body whose size factor scales mark g's outline, or -1
    gcols:  (G, 3) columns of the task's goal row holding x [m], y [m], theta [rad] (-1: 0)
    grad:   (G,) success circle radius [m] (0: none)
    gcol:   (G, 2, 3) fill and edge colours of mark g

    scratch: (E, KMAX, 2) pixel coordinates of one primitive
    xs:     (E, KMAX) scanline crossings
    ov:     (E, H, W, 3) uint8 goal overlay per env, 0 between frames: channel 0 the part
            (1 fill, 2 edge), channels 1, 2 the mark's index (low, high byte)
    dirty:  (E, H, 2) per env and row, the first and last column drawn over the background
            in the env's frame buffer since the background was last copied there (first >
            last: none); the next frame restores just those (``dirty_all`` at first)
    ovdirty: (E, H, 2) the same for each env's overlay
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
    gstart: np.ndarray
    gbody: np.ndarray
    gcols: np.ndarray
    grad: np.ndarray
    gcol: np.ndarray
    scratch: np.ndarray
    xs: np.ndarray
    ov: np.ndarray
    dirty: np.ndarray
    ovdirty: np.ndarray


RASTER_FIELDS = {
    "geo": ("f8", 1), "bg": ("u1", 3), "kind": ("i8", 1), "body": ("i8", 1),
    "vstart": ("i8", 1), "verts": ("f8", 2), "rad": ("f8", 1), "edge_px": ("f8", 1),
    "fill": ("i8", 2), "edge": ("i8", 2), "mov": ("i8", 1), "heads": ("f8", 2),
    "goal": ("i8", 1), "gstart": ("i8", 1), "gbody": ("i8", 1), "gcols": ("i8", 2),
    "grad": ("f8", 1), "gcol": ("i8", 3), "scratch": ("f8", 3), "xs": ("f8", 2),
    "ov": ("u1", 4), "dirty": ("i8", 3), "ovdirty": ("i8", 3)}
"""RasterArrays' fields: (dtype code, ndim) each (``push_envs.physics.abi.AbiType``)."""


@compiled
def _widen(dr, r, a, b):
    """Widen row r's dirty range ``dr[r]`` (first, last column drawn) to cover a..b."""
    if a < dr[r, 0]:
        dr[r, 0] = a
    if b > dr[r, 1]:
        dr[r, 1] = b


TOP_VIEW = (0.0, 0.0, 0.0, 1.0, 0.0)  # a frame's view (_view): the top-down map


@compiled
def _to_px(geo, H, vw, x, y):
    """Pixel coordinates (column, row) [px] of the world point (x, y) [m] in an image H rows
    high (rows grow downwards). ``vw`` is the frame's view (:func:`_view`): top-down, world
    y upwards; or ego, the point's forward offset from the robot upwards and its offset to
    the robot's left to the left."""
    S = geo[G_SCALE]
    if vw[0] == 0.0:
        return geo[G_MX] + (x - geo[G_X0]) * S, H - geo[G_MY] - (y - geo[G_Y0]) * S
    dx, dy = x - vw[1], y - vw[2]
    fwd = vw[3] * dx + vw[4] * dy
    left = vw[3] * dy - vw[4] * dx
    return geo[G_MX] - left * S, geo[G_MY] - fwd * S


@compiled
def _dir_px(vw, c, s):
    """The image direction (column, row per pixel of length) of the world direction at angle
    (cos c, sin s)."""
    if vw[0] == 0.0:
        return c, -s
    # The direction in the robot's frame: forward (up) and left (left).
    return -(s * vw[3] - c * vw[4]), -(c * vw[3] + s * vw[4])


@compiled
def _view(e, W, R):
    """Env e's view: (0, ...) top-down, or (1, x [m], y [m], cos, sin) the origin pose of the
    robot the ego view follows."""
    ego = int(R.geo[G_EGO])
    if ego < 0:
        return TOP_VIEW
    x, y, _th, c, s = origin_pose_seen(e, ego, W.pos, W.ang, W.bflt, W.epar, W.cbuf)
    return (1.0, x, y, c, s)


@compiled
def _hspan(out, dr, r, a, b, c0, c1, c2):
    """Colour pixels a..b of row r (clipped to the image) and widen row r's dirty range
    ``dr[r]`` (first, last column drawn) to cover them."""
    if a < 0:
        a = 0
    if b > out.shape[1] - 1:
        b = out.shape[1] - 1
    if a > b:
        return
    _widen(dr, r, a, b)
    orow = out[r]
    for c in range(a, b + 1):
        orow[c, 0] = c0
        orow[c, 1] = c1
        orow[c, 2] = c2


@compiled
def _take_row(d, r):
    """Row r's dirty range (first, last column drawn), which is then marked clean."""
    lo, hi = d[r, 0], d[r, 1]
    d[r, 0] = _CLEAN
    d[r, 1] = -1
    return lo, hi


@compiled
def _span(out, dr, r, xl, xr, c0, c1, c2):
    """Colour the pixels of row r whose centres lie in [xl, xr]."""
    _hspan(out, dr, r, int(math.ceil(xl - 0.5)), int(math.floor(xr - 0.5)), c0, c1, c2)


@compiled
def _rows(lo, hi, H):
    """Rows whose centres lie in [lo, hi]."""
    r0 = int(math.ceil(lo - 0.5))
    r1 = int(math.floor(hi - 0.5))
    return max(r0, 0), min(r1, H - 1)


@compiled
def _bounds(sp, n):
    """The bounding box of the points sp[:n]: x low, x high, y low, y high."""
    xlo, xhi, ylo, yhi = np.inf, -np.inf, np.inf, -np.inf
    for i in range(n):
        xlo = min(xlo, sp[i, 0])
        xhi = max(xhi, sp[i, 0])
        ylo = min(ylo, sp[i, 1])
        yhi = max(yhi, sp[i, 1])
    return xlo, xhi, ylo, yhi


@compiled
def fill_polygon(out, dr, sp, n, xs, c0, c1, c2):
    """Even-odd scanline fill of the polygon sp[:n] (pixel coordinates; any simple polygon),
    deciding each pixel at its centre. ``xs`` is scratch for the crossings (>= n)."""
    left, right, lo, hi = _bounds(sp, n)
    if right < 0.0 or left > out.shape[1]:  # beside the image (the ego view's far walls)
        return
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
            _span(out, dr, r, xs[k], xs[k + 1], c0, c1, c2)


@compiled
def fill_segment(out, dr, ax, ay, bx, by, h, c0, c1, c2):
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
    if max(max(q0x, q1x), max(q2x, q3x)) < 0.0 or \
            min(min(q0x, q1x), min(q2x, q3x)) > out.shape[1]:
        return
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
            _span(out, dr, r, xl, xr, c0, c1, c2)


@compiled
def fill_disc(out, dr, cx, cy, rad, c0, c1, c2):
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
        _span(out, dr, r, cx - half, cx + half, c0, c1, c2)


@compiled
def fill_disc_pg(out, dr, cx, cy, rad, c0, c1, c2):
    """The disc pygame's ``draw.circle`` fills for centre (cx, cy) and radius rad [px]: both
    truncated to integers, then the midpoint circle of that radius about the pixel corner
    (x0, y0), each row k below it (and its mirror above) spanning [x0 - h, x0 + h - 1]."""
    x0 = int(cx)
    y0 = int(cy)
    r = int(rad)
    if r < 1:
        return
    H = out.shape[0]
    f = 1 - r
    ddx = 0
    ddy = -2 * r
    x = 0
    y = r
    while x < y:
        if f >= 0:
            y -= 1
            ddy += 2
            f += ddy
        x += 1
        ddx += 2
        f += ddx + 1
        for step in range(2):
            if step == 0:
                if f < 0:
                    continue
                k, h = y - 1, x
            else:
                k, h = x - 1, y
            for row in (y0 + k, y0 - 1 - k):
                if 0 <= row < H:
                    _hspan(out, dr, row, x0 - h, x0 + h - 1, c0, c1, c2)


@compiled
def fill_rect_snapped(out, dr, sp, n, c0, c1, c2):
    """The axis-aligned rectangle spanned by sp[:n] (pixel coordinates), its corners rounded
    half to even: the pixels [round(lo), round(hi)) in both directions, as render() rounds a
    grid cell's corners and ``pygame.draw.rect`` fills the rect."""
    xlo, xhi, ylo, yhi = _bounds(sp, n)
    a, b = int(np.rint(xlo)), int(np.rint(xhi)) - 1
    r0, r1 = max(int(np.rint(ylo)), 0), min(int(np.rint(yhi)) - 1, out.shape[0] - 1)
    for r in range(r0, r1 + 1):
        _hspan(out, dr, r, a, b, c0, c1, c2)


@compiled
def fill_line_pg(out, dr, ax, ay, bx, by, width, c0, c1, c2):
    """The axis-aligned segment a-b (pixel coordinates) as ``pygame.draw.line`` draws it
    ``width`` pixels wide: the end points truncated toward zero, the band reaching
    (width - 1) // 2 pixels before the line and width // 2 after it, square ends at the end
    points; nothing when the line lies outside the image (pygame clips the line itself
    before widening it)."""
    H, Wd = out.shape[0], out.shape[1]
    x1, y1, x2, y2 = int(ax), int(ay), int(bx), int(by)
    if abs(x1 - x2) <= abs(y1 - y2):  # vertical (or a point): widened along x
        if x1 < 0 or x1 > Wd:
            return
        a, b = x1 - (width - 1) // 2, x1 + width // 2
        r0, r1 = min(y1, y2), max(y1, y2)
    else:
        if y1 < 0 or y1 > H:
            return
        a, b = min(x1, x2), max(x1, x2)
        r0, r1 = y1 - (width - 1) // 2, y1 + width // 2
    for r in range(max(r0, 0), min(r1, H - 1) + 1):
        _hspan(out, dr, r, a, b, c0, c1, c2)


@compiled
def fill_polygon_pg(out, dr, sp, n, xs, c0, c1, c2):
    """``pygame.draw.polygon``'s fill of sp[:n], whole-pixel coordinates (:func:`_truncate`):
    per row y from the top vertex to the bottom one, the crossings int(x1 + (y - y1)
    (x2 - x1) / (y2 - y1)) of the edges with y1 <= y < y2 (and of those ending on the bottom
    row), filled pairwise, both ends included; then the horizontal edges between the two.
    ``xs``: scratch (>= n)."""
    H = out.shape[0]
    minx, maxx, miny, maxy = _bounds(sp, n)
    if miny == maxy:
        if 0 <= miny < H:
            _hspan(out, dr, int(miny), int(minx), int(maxx), c0, c1, c2)
        return
    for yi in range(max(int(miny), 0), min(int(maxy), H - 1) + 1):
        y = float(yi)
        m = 0
        for i in range(n):
            h = i - 1 if i > 0 else n - 1
            y1, y2 = sp[h, 1], sp[i, 1]
            if y1 < y2:
                x1, x2 = sp[h, 0], sp[i, 0]
            elif y1 > y2:
                y1, y2 = y2, y1
                x1, x2 = sp[i, 0], sp[h, 0]
            else:
                continue
            if (y1 <= y < y2) or (y == maxy and y2 == maxy):
                x = float(int((y - y1) * (x2 - x1) / (y2 - y1) + x1))
                k = m
                while k > 0 and xs[k - 1] > x:
                    xs[k] = xs[k - 1]
                    k -= 1
                xs[k] = x
                m += 1
        for k in range(0, m - 1, 2):
            _hspan(out, dr, yi, int(xs[k]), int(xs[k + 1]), c0, c1, c2)
    for i in range(n):
        h = i - 1 if i > 0 else n - 1
        y = sp[i, 1]
        if miny < y < maxy and sp[h, 1] == y and 0.0 <= y < H:
            a, b = int(sp[i, 0]), int(sp[h, 0])
            _hspan(out, dr, int(y), min(a, b), max(a, b), c0, c1, c2)


@compiled
def line_pg(out, dr, x1, y1, x2, y2, width, c0, c1, c2):
    """``pygame.draw.line``'s pixels of a line ``width`` pixels wide between the whole-pixel
    points (x1, y1) and (x2, y2): Bresenham's points from end to end, each the centre of a
    span across the line ((width - 1) // 2 pixels before, width // 2 after), horizontal for
    a steep line and vertical for a flat one. (pygame first clips a line that leaves the
    image, which can move its pixels by one; here the pixels are clipped.)"""
    H = out.shape[0]
    steep = abs(x1 - x2) <= abs(y1 - y2)
    dx, dy = abs(x2 - x1), abs(y2 - y1)
    sx = 1 if x1 < x2 else -1
    sy = 1 if y1 < y2 else -1
    e0 = dx if dx > dy else -dy
    err = e0 // 2 if e0 >= 0 else -((-e0) // 2)  # C's division truncates toward zero
    a, b = (width - 1) // 2, width // 2
    while True:
        if steep:
            if 0 <= y1 < H:
                _hspan(out, dr, y1, x1 - a, x1 + b, c0, c1, c2)
        else:
            for r in range(max(y1 - a, 0), min(y1 + b, H - 1) + 1):
                _hspan(out, dr, r, x1, x1, c0, c1, c2)
        if x1 == x2 and y1 == y2:
            return
        e2 = err
        if e2 > -dx:
            err -= dy
            x1 += sx
        if e2 < dy:
            err += dx
            y1 += sy


@compiled
def _truncate(sp, n):
    """Pixel coordinates sp[:n] truncated toward zero, as pygame takes them."""
    for i in range(n):
        sp[i, 0] = float(int(sp[i, 0]))
        sp[i, 1] = float(int(sp[i, 1]))


@compiled
def _place(R, p, x, y, c, s, k, vw, sp):
    """Pixel coordinates of primitive p's vertices placed at origin (x, y), rotation (c, s),
    size factor k, in view ``vw``, into sp; returns the vertex count."""
    H = R.bg.shape[0]
    v0 = R.vstart[p]
    n = R.vstart[p + 1] - v0
    for i in range(n):
        vx = R.verts[v0 + i, 0] * k
        vy = R.verts[v0 + i, 1] * k
        wx = x + c * vx - s * vy
        wy = y + s * vx + c * vy
        sp[i, 0], sp[i, 1] = _to_px(R.geo, H, vw, wx, wy)
    return n


@compiled
def _draw_placed(R, p, sp, n, k, out, dr, fill, edge, xs):
    """Draw primitive p (already placed into sp[:n]) with colours fill / edge (rows)."""
    kind = R.kind[p]
    h = R.edge_px[p]
    if kind == PRIM_CIRC:
        rpx = R.rad[p] * R.geo[G_SCALE] * k
        if h > 0.0:
            fill_disc(out, dr, sp[0, 0], sp[0, 1], rpx + h, edge[0], edge[1], edge[2])
            fill_disc(out, dr, sp[0, 0], sp[0, 1], rpx - h, fill[0], fill[1], fill[2])
        else:
            fill_disc(out, dr, sp[0, 0], sp[0, 1], rpx, fill[0], fill[1], fill[2])
        return
    if kind == PRIM_RECT:
        fill_rect_snapped(out, dr, sp, n, fill[0], fill[1], fill[2])
        return
    if kind == PRIM_PXLINE:
        for i in range(n - 1):
            fill_line_pg(out, dr, sp[i, 0], sp[i, 1], sp[i + 1, 0], sp[i + 1, 1],
                         int(round(2.0 * R.rad[p])), fill[0], fill[1], fill[2])
        return
    if kind == PRIM_LINE:
        for i in range(n - 1):
            fill_segment(out, dr, sp[i, 0], sp[i, 1], sp[i + 1, 0], sp[i + 1, 1], R.rad[p],
                         fill[0], fill[1], fill[2])
        return
    fill_polygon(out, dr, sp, n, xs, fill[0], fill[1], fill[2])
    if h > 0.0:
        for i in range(n):
            j = i + 1 if i + 1 < n else 0
            fill_segment(out, dr, sp[i, 0], sp[i, 1], sp[j, 0], sp[j, 1], h,
                         edge[0], edge[1], edge[2])


@compiled
def draw_prim(R, p, x, y, c, s, k, vw, sp, xs, out, dr):
    """Draw primitive p placed at origin (x, y) [m], rotation (c, s), size factor k, in view
    ``vw``."""
    n = _place(R, p, x, y, c, s, k, vw, sp)
    _draw_placed(R, p, sp, n, k, out, dr, R.fill[p], R.edge[p], xs)


@compiled
def _blend(d, s, a):
    """pygame's alpha blend of source s over destination d at opacity a (0-255)."""
    return d + (((s - d) * a + s) >> 8)


@compiled
def _draw_goals(e, W, R, goal_row, vw, sp, xs, out, dr):
    """The translucent goals, mark by mark: its outline at the goal pose, then its success
    circle, drawn into the env's overlay (part and mark index; last drawn wins, as on
    pygame's overlay surface), then blended once over the rows and columns it touched, and
    cleared."""
    ov = R.ov[e]
    ovd = R.ovdirty[e]
    S = R.geo[G_SCALE]
    H = out.shape[0]
    for g in range(R.gstart.shape[0] - 1):
        # the overlay codes of mark g: fill, edge (int64, not literals: one signature of the
        # fill kernels)
        f0, f1, f2 = np.int64(1), g & 255, g >> 8
        e0 = np.int64(2)
        line_w = np.int64(2)  # the outline's width [px]
        tc = R.gcols[g, 2]
        gx, gy = goal_row[R.gcols[g, 0]], goal_row[R.gcols[g, 1]]
        gt = goal_row[tc] if tc >= 0 else 0.0
        gb = R.gbody[g]
        k = W.epar[e, gb, EP_SCALE] if gb >= 0 else 1.0
        c, s = math.cos(gt), math.sin(gt)
        for gi in range(R.gstart[g], R.gstart[g + 1]):
            p = R.goal[gi]
            n = _place(R, p, gx, gy, c, s, k, vw, sp)
            _truncate(sp, n)
            closed = R.kind[p] != PRIM_LINE
            if closed:
                fill_polygon_pg(ov, ovd, sp, n, xs, f0, f1, f2)
            for i in range(n if closed else n - 1):  # the outline as a 2 px line
                j = i + 1 if i + 1 < n else 0
                line_pg(ov, ovd, int(sp[i, 0]), int(sp[i, 1]), int(sp[j, 0]), int(sp[j, 1]),
                        line_w, e0, f1, f2)
        if R.grad[g] > 0.0:
            cpx, cpy = _to_px(R.geo, H, vw, gx, gy)
            # As pygame: the disc, then a 2 px ring (here: the disc 2 px smaller inside it).
            crad = max(2.0, R.grad[g] * S)
            fill_disc_pg(ov, ovd, cpx, cpy, crad, e0, f1, f2)
            fill_disc_pg(ov, ovd, cpx, cpy, crad - 2.0, f0, f1, f2)
    for r in range(H):
        lo, hi = _take_row(ovd, r)
        if lo > hi:
            continue
        _widen(dr, r, lo, hi)
        orow = out[r]
        vrow = ov[r]
        for col in range(lo, hi + 1):
            part = vrow[col, 0]
            if part == 0:
                continue
            g = np.int64(vrow[col, 1]) | (np.int64(vrow[col, 2]) << 8)
            vrow[col, 0] = 0
            vrow[col, 1] = 0
            vrow[col, 2] = 0
            a = GOAL_FILL_A if part == 1 else GOAL_EDGE_A
            for ch in range(3):
                orow[col, ch] = _blend(np.int64(orow[col, ch]), R.gcol[g, part - 1, ch], a)


@compiled
def raster_env(e, W, R, goal_row, out):
    """Draw env e into ``out`` (H, W, 3) uint8, the env's own frame buffer (its previous
    frame, whose drawn pixels ``R.dirty[e]`` records): the background restored where the
    previous frame drew, then the goals, the movable bodies and their heading lines."""
    H = out.shape[0]
    bg = R.bg
    dr = R.dirty[e]
    # Only the pixels drawn over since the background was last copied differ from it: a
    # full copy per frame costs more than everything drawn on it (the frame buffers of a
    # batch do not fit in the caches).
    for r in range(H):
        lo, hi = _take_row(dr, r)
        if lo > hi:
            continue
        orow = out[r]
        brow = bg[r]
        for col in range(lo, hi + 1):
            orow[col, 0] = brow[col, 0]
            orow[col, 1] = brow[col, 1]
            orow[col, 2] = brow[col, 2]
    sp = R.scratch[e]
    xs = R.xs[e]
    vw = _view(e, W, R)
    nstatic = int(R.geo[G_NSTATIC])
    for q in range(nstatic):  # ego view: the static scene, in world coordinates
        draw_prim(R, R.mov[q], 0.0, 0.0, 1.0, 0.0, 1.0, vw, sp, xs, out, dr)
    if R.gstart.shape[0] > 1:
        _draw_goals(e, W, R, goal_row, vw, sp, xs, out, dr)
    for q in range(nstatic, R.mov.shape[0]):
        p = R.mov[q]
        b = R.body[p]
        x, y, _th, c, s = origin_pose_seen(e, b, W.pos, W.ang, W.bflt, W.epar, W.cbuf)
        draw_prim(R, p, x, y, c, s, W.epar[e, b, EP_SCALE], vw, sp, xs, out, dr)
    S = R.geo[G_SCALE]
    for b in range(R.heads.shape[0]):
        length = R.heads[b, 0]
        if length <= 0.0:
            continue
        x, y, _th, c, s = origin_pose_seen(e, b, W.pos, W.ang, W.bflt, W.epar, W.cbuf)
        k = W.epar[e, b, EP_SCALE]
        ax, ay = _to_px(R.geo, H, vw, x, y)
        dc, dw = _dir_px(vw, c, s)
        bx = ax + dc * length * k * S
        by = ay + dw * length * k * S
        c0, c1, c2 = np.int64(R.heads[b, 1]), np.int64(R.heads[b, 2]), np.int64(R.heads[b, 3])
        fill_segment(out, dr, ax, ay, bx, by, 1.0, c0, c1, c2)
        fill_disc_pg(out, dr, ax, ay, 2.5, c0, c1, c2)


@njit(cache=True)
def draw_static(R, prims, out):
    """Draw the (world-frame) primitives ``prims`` into ``out`` (the top-down view's
    background, once)."""
    sp = R.scratch[0]
    xs = R.xs[0]
    dr = np.zeros((out.shape[0], 2), np.int64)  # set-up only: nothing to restore
    for i in range(prims.shape[0]):
        draw_prim(R, prims[i], 0.0, 0.0, 1.0, 0.0, 1.0, TOP_VIEW, sp, xs, out, dr)


@njit(cache=True)
def raster_serial(W, R, goals, out):
    """Every env into its frame buffer out[e] (E, H, W, 3); ``goals`` (E, n) the task's goal
    rows."""
    for e in range(out.shape[0]):
        raster_env(e, W, R, goals[e], out[e])


@njit(cache=True, parallel=True)
def raster_parallel(W, R, goals, out):
    """As raster_serial, prange over envs."""
    for i in prange(out.shape[0]):
        e = np.int64(i)  # as in pipeline.step_parallel: one compile of raster_env, not two
        raster_env(e, W, R, goals[e], out[e])


def dirty_all(num_envs: int, height: int, width: int) -> np.ndarray:
    """Dirty rows of frame buffers whose content is unknown: every pixel redrawn."""
    d = np.empty((num_envs, height, 2), np.int64)
    d[..., 0] = 0
    d[..., 1] = width - 1
    return d


def dirty_none(n: int, height: int) -> np.ndarray:
    """Dirty rows of ``n`` clean buffers (the overlays start empty)."""
    d = np.empty((n, height, 2), np.int64)
    d[..., 0] = _CLEAN
    d[..., 1] = -1
    return d
