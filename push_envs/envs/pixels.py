"""Pixel observations: the primitive table of a World for the compiled rasteriser.

:func:`raster_arrays` turns a World's scene into :class:`~push_envs.physics.raster.
RasterArrays` once: the palette and the world-to-pixel map of ``render.py`` (y up, the world
rectangle fitted to an ``H x W`` image, centred), immovable bodies and the grid map drawn
into a background, movable bodies' outlines in their body frame, and the goal the task
names (:meth:`~push_envs.envs.task.TaskSpec.raster_goal`). The kernels are in
``push_envs.physics.raster``; the env calls them inside its compiled step.
"""

from __future__ import annotations

import numpy as np

from ..physics.layout import DRIVEN, IMMOVABLE, PASSIVE, PI_BODY, PI_NV
from ..physics.raster import (
    G_GOAL_R,
    G_LEN,
    G_MX,
    G_MY,
    G_SCALE,
    G_X0,
    G_Y0,
    PRIM_CIRC,
    PRIM_LINE,
    PRIM_POLY,
    RasterArrays,
    draw_static,
)
from . import render as RD


def _colour(text, default):
    if text is None:
        return default
    import os

    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    try:
        c = pygame.Color(text)
    except (ValueError, TypeError):
        return default
    return (c.r, c.g, c.b)


def _as_circle(outline: np.ndarray) -> tuple[np.ndarray, float] | None:
    """(centre, radius) when the outline is a circle's regular polygon, else None."""
    if len(outline) < 16:
        return None
    centre = outline.mean(axis=0)
    d = np.hypot(*(outline - centre).T)
    if np.ptp(d) > 1e-9 * max(d.max(), 1e-12):
        return None
    return centre, float(d.mean())


def raster_arrays(world, height: int, width: int, num_envs: int,
                  goal: tuple[int, tuple[int, int, int], float] | None = None) -> RasterArrays:
    """The rasteriser's tables for ``world`` at ``height x width`` pixels.

    ``goal``: (goal body index or -1, columns of the task's goal row holding x, y, theta,
    success circle radius [m]) or None (no goal drawn).
    """
    sc = world.scene
    wspec = sc.spec.world
    x0, y0 = float(wspec.offset[0]), float(wspec.offset[1])
    S = min(width / float(wspec.width), height / float(wspec.height))
    geo = np.zeros(G_LEN)
    geo[G_X0], geo[G_Y0], geo[G_SCALE] = x0, y0, S
    geo[G_MX] = (width - wspec.width * S) / 2.0
    geo[G_MY] = (height - wspec.height * S) / 2.0
    kinds: list[int] = []
    bodies: list[int] = []
    verts: list[np.ndarray] = []
    rad: list[float] = []
    edge_px: list[float] = []
    fills: list[tuple] = []
    edges: list[tuple] = []

    def add(kind, body, v, r, h, fill, edge):
        kinds.append(kind)
        bodies.append(body)
        verts.append(np.asarray(v, np.float64).reshape(-1, 2))
        rad.append(r)
        edge_px.append(h)
        fills.append(fill)
        edges.append(edge)
        return len(kinds) - 1

    line_px = max(3, int(round(RD.LINE_WIDTH_M * S)))
    static: list[int] = []
    mov: list[int] = []
    heads = np.zeros((sc.num_bodies, 4))
    body_prims: dict[int, list[int]] = {}
    n_robot = 0
    specs = sc.spec.bodies
    # The grid map's cells and edges first (the renderer draws them before the bodies).
    for j in range(len(sc.sint)):
        b = int(sc.sint[j, PI_BODY])
        if sc.shapes[b] is None:
            static.append(add(PRIM_POLY, -1, sc.svert[j, :sc.sint[j, PI_NV]], 0.0, 0.0,
                              RD.MAP_CELL, RD.MAP_CELL))
    for seg in np.asarray(sc.map_segments).reshape(-1, 2, 2):
        static.append(add(PRIM_LINE, -1, seg, 1.0, 0.0, RD.MAP_EDGE, RD.MAP_EDGE))
    for i, info in enumerate(sc.shapes):
        if info is None:
            continue
        kind = int(sc.bint[i, 0])
        if kind == DRIVEN:
            default = RD.ROBOT_FILLS[n_robot % len(RD.ROBOT_FILLS)]
            n_robot += 1
        elif kind == PASSIVE:
            default = RD.PASSIVE_FILL
        else:
            default = RD.IMMOVABLE_FILL
        fill = _colour(specs[i].color if i < len(specs) else None, default)
        edge = RD._darker(fill)
        outlines = [np.asarray(o, np.float64) for o in info.outlines]
        closed = [bool(c) for c in info.closed]
        placed = kind == IMMOVABLE
        pose = sc.pose0[i]
        c, s = np.cos(pose[2]), np.sin(pose[2])
        prims = []
        for o, cl in zip(outlines, closed, strict=True):
            if placed:
                o = np.stack([pose[0] + c * o[:, 0] - s * o[:, 1],
                              pose[1] + s * o[:, 0] + c * o[:, 1]], 1)
            body = -1 if placed else i
            circ = _as_circle(o) if cl else None
            if circ is not None:
                p = add(PRIM_CIRC, body, circ[0], circ[1], 1.0, fill, edge)
            elif cl:
                p = add(PRIM_POLY, body, o, 0.0, 1.0, fill, edge)
            else:
                p = add(PRIM_LINE, body, o, line_px / 2.0, 0.0, fill, fill)
            prims.append(p)
        body_prims[i] = prims
        if placed:
            static.extend(prims)
        else:
            mov.extend(prims)
            heads[i, 0] = RD._ray_reach(outlines, closed)
            heads[i, 1:] = edge
    goal_prims: list[int] = []
    gbody, gcols, grad = -1, (-1, -1, -1), 0.0
    if goal is not None:
        gbody, gcols, grad = goal
        for p in body_prims.get(gbody, []):
            if kinds[p] == PRIM_LINE:
                continue
            # Goal outlines are polygons in the goal colours (a circle as its polygon).
            v = verts[p]
            if kinds[p] == PRIM_CIRC:
                t = np.linspace(0.0, 2.0 * np.pi, 32, endpoint=False)
                v = v[0] + rad[p] * np.stack([np.cos(t), np.sin(t)], 1)
            goal_prims.append(add(PRIM_POLY, gbody, v, 0.0, 1.0, RD.GOAL_FILL[:3],
                                  RD.GOAL_EDGE[:3]))
        geo[G_GOAL_R] = grad
    vstart = np.zeros(len(kinds) + 1, np.int64)
    vstart[1:] = np.cumsum([len(v) for v in verts])
    allv = np.concatenate(verts) if verts else np.zeros((0, 2))
    kmax = max([len(v) for v in verts] + [sum(len(verts[p]) for p in goal_prims), 1])
    R = RasterArrays(
        geo=geo, bg=np.zeros((height, width, 3), np.uint8),
        kind=np.array(kinds, np.int64), body=np.array(bodies, np.int64), vstart=vstart,
        verts=allv, rad=np.array(rad), edge_px=np.array(edge_px),
        fill=np.array(fills, np.int64).reshape(-1, 3),
        edge=np.array(edges, np.int64).reshape(-1, 3), mov=np.array(mov, np.int64),
        heads=heads, goal=np.array(goal_prims, np.int64),
        gbody=np.array([gbody], np.int64), gcols=np.array(gcols, np.int64),
        gcol=np.array([RD.GOAL_FILL[:3], RD.GOAL_EDGE[:3]], np.int64),
        scratch=np.zeros((max(num_envs, 1), kmax, 2)), xs=np.zeros((max(num_envs, 1), kmax + 2)),
        ov=np.zeros((max(num_envs, 1), height, width, 3), np.uint8))
    R.bg[:] = RD.BACKGROUND
    draw_static(R, np.array(static, np.int64), R.bg)
    return R


def empty_raster() -> RasterArrays:
    """RasterArrays of the right types and no content (envs that observe no pixels)."""
    z1, zi = np.zeros(0), np.zeros(0, np.int64)
    return RasterArrays(geo=np.zeros(G_LEN), bg=np.zeros((0, 0, 3), np.uint8), kind=zi,
                        body=zi, vstart=np.zeros(1, np.int64), verts=np.zeros((0, 2)), rad=z1,
                        edge_px=z1, fill=np.zeros((0, 3), np.int64),
                        edge=np.zeros((0, 3), np.int64), mov=zi, heads=np.zeros((0, 4)),
                        goal=zi, gbody=np.full(1, -1, np.int64),
                        gcols=np.full(3, -1, np.int64), gcol=np.zeros((2, 3), np.int64),
                        scratch=np.zeros((0, 1, 2)), xs=np.zeros((0, 1)),
                        ov=np.zeros((0, 1, 1, 3), np.uint8))
