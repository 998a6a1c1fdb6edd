"""pixels: the pixel observation, as one sensor module (``obs_mode="pixels"``).

The env makes it from its arguments (``pixel_size``, ``pixel_view``, ``pixel_fov``), not from
a scene. Every step its compiled sense function rasterises env e into the env's image buffer
(``V.pix[e]``, ``push_envs/physics/raster.py``'s kernels), and before a SAME_STEP autoreset it
keeps that frame as the env's final observation (its own ``final`` array).

:func:`raster_arrays` turns a World's scene into :class:`~push_envs.physics.raster.
RasterArrays` once: the palette and the world-to-pixel map of ``render.py`` (y up, the world
rectangle fitted to an ``H x W`` image, centred) or the ego view's (a robot at the centre,
heading up, ``W / fov`` pixels per metre), immovable bodies and the grid map drawn into a
background (top-down) or kept for every frame (ego), movable bodies' outlines in their body
frame, and the goal table: one row
per :class:`~push_envs.core.render.GoalMark` the task declares
(:meth:`~push_envs.core.task.TaskSpec.goal_marks`, the declaration ``render()`` draws
from). The kernels are in ``push_envs.physics.raster``; the sense function calls them
inside the env's compiled step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from ..core import render as RD
from ..physics.abi import CFunction
from ..physics.checks import fail
from ..physics.checks import keys
from ..physics.layout import DRIVEN
from ..physics.layout import IMMOVABLE
from ..physics.layout import PASSIVE
from ..physics.layout import PI_BODY
from ..physics.layout import PI_NV
from ..physics.raster import G_EGO
from ..physics.raster import G_LEN
from ..physics.raster import G_MX
from ..physics.raster import G_MY
from ..physics.raster import G_NSTATIC
from ..physics.raster import G_SCALE
from ..physics.raster import G_X0
from ..physics.raster import G_Y0
from ..physics.raster import PRIM_CIRC
from ..physics.raster import PRIM_LINE
from ..physics.raster import PRIM_POLY
from ..physics.raster import PRIM_PXLINE
from ..physics.raster import PRIM_RECT
from ..physics.raster import RASTER_FIELDS
from ..physics.raster import RasterArrays
from ..physics.raster import dirty_all
from ..physics.raster import dirty_none
from ..physics.raster import draw_static
from ..physics.raster import raster_env
from .base import SENSE_FINAL
from .base import SENSE_OBSERVE
from .base import SENSE_SIG
from .base import Sensor
from .base import load_env
from .base import load_task
from .base import load_world
from .base import register_sensor
from .base import structure


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
                  marks: Sequence[RD.GoalMark] = (), goal_width: int | None = None,
                  ego: int = -1, fov: float = 0.0) -> RasterArrays:
    """The rasteriser's tables for ``world`` at ``height x width`` pixels.

    ``marks``: the goals drawn (``TaskSpec.goal_marks``), at the poses held in the columns
    they name of each env's goal row; ``goal_width``: that row's length (checks the columns).
    ``ego``: the body index of the robot an ego view follows (its origin at the image
    centre, its heading up), ``fov`` [m] the width of that view; -1: the top-down view.
    """
    sc = world.scene
    wspec = sc.spec.world
    x0, y0 = float(wspec.offset[0]), float(wspec.offset[1])
    wm, hm = float(wspec.width), float(wspec.height)
    S = min(width / wm, height / hm)
    mx, my = (width - wm * S) / 2.0, (height - hm * S) / 2.0
    if height == int(round(hm * (width / wm))):  # render()'s height, the same arithmetic
        # render()'s own aspect: use its map exactly (the width sets the scale, the image is
        # anchored at the bottom left, and the rounded height cuts or pads the top), so the
        # two agree pixel for pixel. Centring the fraction of a pixel instead put the border
        # and any wall about a pixel thin on the other side of the pixel centres.
        S, mx, my = width / wm, 0.0, 0.0
    if ego >= 0:
        if not (np.isfinite(fov) and fov > 0.0):
            raise ValueError(f"raster_arrays: fov must be a finite width > 0 [m], got {fov!r}")
        if int(sc.bint[ego, 0]) != DRIVEN:
            raise ValueError(f"raster_arrays: the ego view follows a robot; body {ego} "
                             f"({sc.names[ego]!r}) has no kinematics")
        # The robot's origin at the image centre; square pixels, so the view is
        # fov x fov * H / W [m].
        S, mx, my, x0, y0 = width / fov, width / 2.0, height / 2.0, 0.0, 0.0
    geo = np.zeros(G_LEN)
    geo[G_X0], geo[G_Y0], geo[G_SCALE] = x0, y0, S
    geo[G_MX], geo[G_MY] = mx, my
    geo[G_EGO] = ego
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
    n_robot = 0
    specs = sc.spec.bodies
    # The grid map's cells and edges first (the renderer draws them before the bodies). Top
    # down, by pygame's integer rules (whole-pixel cells, truncated 2 px lines): its walls are
    # often about a pixel thin, and only the same rule puts them on the same pixels as
    # render(). The ego view turns them, so there they are polygons and bands.
    top = ego < 0
    for j in range(len(sc.sint)):
        b = int(sc.sint[j, PI_BODY])
        if sc.shapes[b] is None:
            static.append(add(PRIM_RECT if top else PRIM_POLY, -1,
                              sc.svert[j, :sc.sint[j, PI_NV]], 0.0, 0.0, RD.MAP_CELL,
                              RD.MAP_CELL))
    for seg in np.asarray(sc.map_segments).reshape(-1, 2, 2):
        static.append(add(PRIM_PXLINE if top else PRIM_LINE, -1, seg, 1.0, 0.0, RD.MAP_EDGE,
                          RD.MAP_EDGE))
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
        edge = RD.darker(fill)
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
        if placed:
            static.extend(prims)
        else:
            mov.extend(prims)
            heads[i, 0] = RD.ray_reach(outlines, closed)
            heads[i, 1:] = edge
    goal_prims, gstart, gbody, gcols, grad, gcol = [], [0], [], [], [], []
    for m in marks:
        if goal_width is not None and max(m.cols) >= goal_width:
            raise ValueError(f"GoalMark {m}: column {max(m.cols)} is beyond the task's goal "
                             f"row ({goal_width} columns)")
        b = -1
        if m.body:
            if m.body not in sc.index or sc.shapes[sc.index[m.body]] is None:
                raise ValueError(f"GoalMark {m}: no body {m.body!r} with a drawable shape; "
                                 f"bodies: {[n for n, i in sc.index.items() if sc.shapes[i]]}")
            b = sc.index[m.body]
            info = sc.shapes[b]
            for o, cl in zip(info.outlines, info.closed, strict=True):
                # Goal outlines keep the body's own vertices (a circle as its polygon), as
                # render() draws them; an open line string is drawn as its edge.
                goal_prims.append(add(PRIM_POLY if cl else PRIM_LINE, b, o, 0.0, 1.0,
                                      (0, 0, 0), (0, 0, 0)))
        gstart.append(len(goal_prims))
        gbody.append(b if b >= 0 and int(sc.bint[b, 0]) != IMMOVABLE else -1)
        gcols.append(tuple(m.cols) + (-1,) * (3 - len(m.cols)))
        grad.append(float(m.radius))
        gcol.append(m.colours())
    vstart = np.zeros(len(kinds) + 1, np.int64)
    vstart[1:] = np.cumsum([len(v) for v in verts])
    allv = np.concatenate(verts) if verts else np.zeros((0, 2))
    kmax = max([len(v) for v in verts] + [1])
    if not top:  # drawn every frame, before the goals and the movable bodies
        geo[G_NSTATIC] = len(static)
        mov = static + mov
    R = RasterArrays(
        geo=geo, bg=np.zeros((height, width, 3), np.uint8),
        kind=np.array(kinds, np.int64), body=np.array(bodies, np.int64), vstart=vstart,
        verts=allv, rad=np.array(rad), edge_px=np.array(edge_px),
        fill=np.array(fills, np.int64).reshape(-1, 3),
        edge=np.array(edges, np.int64).reshape(-1, 3), mov=np.array(mov, np.int64),
        heads=heads, goal=np.array(goal_prims, np.int64), gstart=np.array(gstart, np.int64),
        gbody=np.array(gbody, np.int64), gcols=np.array(gcols, np.int64).reshape(-1, 3),
        grad=np.array(grad, np.float64), gcol=np.array(gcol, np.int64).reshape(-1, 2, 3),
        scratch=np.zeros((max(num_envs, 1), kmax, 2)), xs=np.zeros((max(num_envs, 1), kmax + 2)),
        # One overlay per env: a per-thread one (numba.get_thread_id) fails to link when the
        # kernel is loaded from numba's cache in a new process ("Symbol not found").
        ov=np.zeros((max(num_envs, 1), height, width, 3), np.uint8),
        dirty=dirty_all(num_envs, height, width), ovdirty=dirty_none(max(num_envs, 1), height))
    R.bg[:] = RD.BACKGROUND
    if top:
        draw_static(R, np.array(static, np.int64), R.bg)
    return R


@dataclass(frozen=True)
class PixelSpec:
    """The image: ``height`` x ``width`` [px]; ``view`` "top" (the arena) or "ego" (about the
    robot, ``fov`` [m] wide)."""

    height: int
    width: int
    view: str = "top"
    fov: float = 0.0
    name: str = "pixels"


PIXEL_ABI = structure("PixelArrays", {**RASTER_FIELDS, "final": ("u1", 4)}, """The
rasteriser's tables (:class:`~push_envs.physics.raster.RasterArrays`' fields, in order), then
``final`` (E, H, W, 3) uint8: each env's frame before its last SAME_STEP autoreset (no rows
unless the env resets so).""")
PixelArrays = PIXEL_ABI.cls
load_pixels = PIXEL_ABI.loader


def pixel_sense(which, e, at, wp, sp, vp, tp):
    """Env e's frame into the env's image buffer; before a SAME_STEP autoreset, that frame
    into ``final``."""
    V = load_env(vp)
    S = load_pixels(sp)
    if which == SENSE_FINAL:
        src, dst = V.pix[e], S.final[e]
        for r in range(src.shape[0]):
            for c in range(src.shape[1]):
                for ch in range(3):
                    dst[r, c, ch] = src[r, c, ch]
        return
    if which != SENSE_OBSERVE:
        return
    R = RasterArrays(S.geo, S.bg, S.kind, S.body, S.vstart, S.verts, S.rad, S.edge_px, S.fill,
                     S.edge, S.mov, S.heads, S.goal, S.gstart, S.gbody, S.gcols, S.grad, S.gcol,
                     S.scratch, S.xs, S.ov, S.dirty, S.ovdirty)
    raster_env(e, load_world(wp), R, load_task(tp).goal[e], V.pix[e])


PIXEL_SENSE = CFunction(pixel_sense, SENSE_SIG)


@register_sensor
class Pixels(Sensor):
    """The pixel observation (see the module doc): made by the env, never by a scene."""

    name = "pixels"
    in_scenes = False
    abi = PIXEL_ABI
    sense = PIXEL_SENSE

    @classmethod
    def parse(cls, raw: Any, where: str) -> PixelSpec:
        """``{size: (height, width) [px], view: "top" | "ego", fov: [m]}`` (the env checks
        its arguments first; this refuses what slips past)."""
        entry = keys(raw, ("size", "view", "fov"), where)
        try:
            h, w = (int(v) for v in entry["size"])
        except (KeyError, TypeError, ValueError):
            raise fail(f"{where}.size", "must be (height, width) [px]") from None
        view = entry.get("view", "top")
        if view not in ("top", "ego"):
            raise fail(f"{where}.view", f"must be 'top' or 'ego', got {view!r}")
        return PixelSpec(h, w, view, float(entry.get("fov") or 0.0))

    def __init__(self, env: Any, body: int, spec: PixelSpec) -> None:
        """The image of ``env``'s scene; an ego view follows body ``body``."""
        super().__init__(env, body, spec)
        E = env.num_envs
        goal = env.task_arrays.goal
        self.raster = raster_arrays(env.world, spec.height, spec.width, E,
                                    env.task.goal_marks(env), goal.shape[1],
                                    body if spec.view == "ego" else -1, spec.fov)
        keep = E if env.autoreset_mode == AutoresetMode.SAME_STEP else 0
        self.arrays = PixelArrays(*self.raster, final=np.zeros(
            (keep, spec.height, spec.width, 3), np.uint8))
