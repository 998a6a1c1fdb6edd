"""pygame drawing of one env of a :class:`~push_envs.physics.World`.

The picture is a top view with the y axis up: the world rectangle
``[offset, offset + (width, height)]`` [m] is mapped onto the window with a small margin and
the aspect ratio kept. Immovable bodies and the grid map never move, so they are drawn once
into a background surface that each frame starts from; movable bodies' outlines are kept in
their body frame and placed by one vectorised numpy transform per frame.

pygame is imported lazily (inside :class:`Renderer`), so importing this module, and hence the
environments, costs nothing for training runs that never draw.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

import numpy as np

from push_envs.physics import sensor_registry
from push_envs.physics.frames import com_offsets
from push_envs.physics.layout import CT_FN
from push_envs.physics.layout import CT_NX
from push_envs.physics.layout import CT_NY
from push_envs.physics.layout import CT_PX
from push_envs.physics.layout import CT_PY
from push_envs.physics.layout import DRIVEN
from push_envs.physics.layout import EP_SCALE
from push_envs.physics.layout import IMMOVABLE
from push_envs.physics.layout import PASSIVE

if TYPE_CHECKING:
    from push_envs.physics import World

RENDER_MODES = ("rgb_array", "human")

# Colours (R, G, B); alpha given separately where translucent.
BACKGROUND = (246, 245, 240)
GRID_LINE = (222, 222, 215)
BOUNDS_LINE = (190, 190, 182)
MAP_CELL = (95, 95, 95)
MAP_EDGE = (55, 55, 55)
IMMOVABLE_FILL = (80, 80, 80)
PASSIVE_FILL = (245, 150, 45)
ROBOT_FILLS = ((60, 120, 220), (40, 170, 150), (140, 90, 200))  # cycled over robots
GOAL_FILL = (40, 190, 70, 90)
GOAL_EDGE = (20, 140, 45, 200)
TRAIL = (120, 150, 210, 130)
CONTACT = (215, 25, 25)
HUD_TEXT = (20, 20, 20)
HUD_BACK = (255, 255, 255, 170)

GRID_STEP = 0.5  # [m] spacing of the faint grid lines
MARGIN_PX = 12  # empty border around the world rectangle [px]
ARROW_PER_TRACTION = 0.3  # [m] of arrow per robot traction (mu m g) of normal force
ARROW_MAX = 0.6  # [m] longest contact arrow, so a jammed contact does not cross the scene
LINE_WIDTH_M = 0.03  # [m] drawn thickness of line strings (they have no area)


@dataclass(frozen=True)
class Goal:
    """A target a task wants drawn (beneath the bodies, translucent green).

    kind:   ``"circle"``: a disc of ``radius`` [m] at ``center`` (x, y) [m];
            ``"outline"``: the outline of body ``body`` placed at ``pose`` (x [m], y [m],
            theta [rad]) of its origin, e.g. the target pose of a pushed object.
    color:  (R, G, B) fill of the goal (drawn translucent, edge darker), so a task with several
            objects can match each goal to its object; None: the default green.
    """

    kind: str
    center: tuple[float, float] = (0.0, 0.0)
    radius: float = 0.1
    body: str = ""
    pose: tuple[float, float, float] = (0.0, 0.0, 0.0)
    color: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("circle", "outline"):
            raise ValueError(f"Goal.kind must be 'circle' or 'outline', got {self.kind!r}")


@dataclass(frozen=True)
class GoalMark:
    """How a task draws one of its goals, declared once; ``render()`` and the compiled pixel
    observation (``push_envs.sensors.pixels``) both draw from it, at the pose the goal row holds.

    cols:   columns of the task's goal row (``TaskArrays.goal[e]``) holding x [m], y [m] and
            optionally theta [rad] of the goal (two columns: theta 0)
    body:   the body whose outline is drawn at the goal pose (scaled by its size factor), or
            "" for none
    radius: the success circle's radius [m] about (x, y), or 0 for none
    color:  (R, G, B) of the goal, as :class:`Goal`; None: the default green

    A mark draws the outline first, then the circle (as :class:`Goal` s, in that order).
    """

    cols: tuple[int, ...]
    body: str = ""
    radius: float = 0.0
    color: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        if len(self.cols) not in (2, 3) or any(int(c) != c or c < 0 for c in self.cols):
            raise ValueError(f"GoalMark.cols must be 2 or 3 column indices >= 0 (x, y[, theta])"
                             f", got {self.cols!r}")
        if not (math.isfinite(self.radius) and self.radius >= 0.0):
            raise ValueError(f"GoalMark.radius must be a finite number >= 0 [m], got "
                             f"{self.radius!r}")
        if not self.body and self.radius == 0.0:
            raise ValueError("GoalMark draws nothing: give a body outline or a radius > 0")

    def pose(self, row: Sequence[float]) -> tuple[float, float, float]:
        """The goal pose (x [m], y [m], theta [rad]) in the goal row ``row``."""
        theta = float(row[self.cols[2]]) if len(self.cols) == 3 else 0.0
        return float(row[self.cols[0]]), float(row[self.cols[1]]), theta

    def goals(self, row: Sequence[float]) -> list[Goal]:
        """What :meth:`Renderer.render` draws for this mark at the goal row ``row``."""
        x, y, t = self.pose(row)
        out = []
        if self.body:
            out.append(Goal(kind="outline", body=self.body, pose=(x, y, t), color=self.color))
        if self.radius > 0.0:
            out.append(Goal(kind="circle", center=(x, y), radius=self.radius,
                            color=self.color))
        return out

    def colours(self) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """(fill, edge) RGB as drawn (the overlay opacities are GOAL_FILL[3], GOAL_EDGE[3])."""
        return goal_colours(self.color)


def goal_colours(color: Sequence[int] | None) -> tuple[tuple[int, int, int],
                                                       tuple[int, int, int]]:
    """(fill, edge) RGB of a goal of colour ``color`` (None: the default green)."""
    if color is None:
        return GOAL_FILL[:3], GOAL_EDGE[:3]  # type: ignore[return-value]
    return tuple(int(v) for v in color[:3]), darker(color)  # type: ignore[return-value]


@dataclass
class _Body:
    """Drawing data of one body, prepared once."""

    index: int
    kind: int
    fill: tuple[int, int, int]
    outlines: list[np.ndarray]  # body frame, relative to the origin [m]
    closed: list[bool]
    heading: float  # [m] length of the heading line (origin to the outline along +x)


# matplotlib's one-letter colours (IR-SIM's worlds use them: color: 'g', 'k').
_MPL_LETTERS = {"b": (0, 0, 255), "g": (0, 128, 0), "r": (255, 0, 0), "c": (0, 191, 191),
                "m": (191, 0, 191), "y": (191, 191, 0), "k": (0, 0, 0), "w": (255, 255, 255)}


def _parse_colour(pygame: Any, text: str | None, default: tuple[int, int, int],
                  where: str) -> tuple[int, int, int]:
    """A YAML colour string (name, '#rrggbb' or a matplotlib letter) as RGB, or ``default``
    with a warning."""
    if text is None:
        return default
    if text in _MPL_LETTERS:
        return _MPL_LETTERS[text]
    try:
        c = pygame.Color(text)
    except (ValueError, TypeError):
        warnings.warn(f"Renderer: {where}.color {text!r} is not a colour pygame knows; "
                      "using the default", stacklevel=3)
        return default
    return (c.r, c.g, c.b)


def darker(rgb: Sequence[int], f: float = 0.6) -> tuple[int, int, int]:
    return tuple(int(v * f) for v in rgb[:3])  # type: ignore[return-value]


def ray_reach(outlines: Sequence[np.ndarray], closed: Sequence[bool]) -> float:
    """Farthest crossing of the ray from the origin along +x with the outlines [m].

    Used as the heading-line length so that the line ends on the body's edge (a box's
    bounding radius would overshoot its front face). 0 when the ray misses everything.
    """
    best = 0.0
    for pts, cl in zip(outlines, closed, strict=True):
        p = pts
        q = np.roll(pts, -1, axis=0) if cl else pts[1:]
        p = p[: len(q)]
        # Segment p + t (q - p) meets the ray y = 0, x > 0 where p_y + t d_y = 0.
        dy = q[:, 1] - p[:, 1]
        ok = np.abs(dy) > 1e-12
        t = np.where(ok, -p[:, 1] / np.where(ok, dy, 1.0), -1.0)
        hit = ok & (t >= 0.0) & (t <= 1.0)
        if np.any(hit):
            x = p[hit, 0] + t[hit] * (q[hit, 0] - p[hit, 0])
            if np.any(x > 0):
                best = max(best, float(x[x > 0].max()))
    return best


class Renderer:
    """Draws env ``env`` of a World with pygame.

    Args:
        world: the World to draw (read only; the renderer never changes it).
        mode: ``"rgb_array"``: :meth:`render` returns an (H, W, 3) uint8 frame and no window
            is opened (works headless); ``"human"``: :meth:`render` shows a window and keeps
            ``fps`` frames per second.
        width_px: frame width [px]; the height follows from the world's aspect ratio.
        fps: frame rate of ``"human"`` mode [1/s]; None: one frame per ``sample_time`` of
            the world (IR-SIM's render interval; the step time when not given).
        title: window caption of ``"human"`` mode.
        margin_px: empty border around the world rectangle [px].
        decorations: draw the grid lines, the world's bounds, contacts, trails and text
            (False: only what the pixel observations draw, for comparing with them).

    Every sensor a body carries draws itself (its module's ``draw``, found in the sensor
    registry): a lidar its beams to the latest readings in ``world.lidar_arrays`` (written by
    an env's step, or by ``World.lidar``), a field of view its wedge. A sensor draws with
    :attr:`pg` (pygame), :meth:`world_to_px`, :meth:`colour` and the :attr:`canvas` and
    :attr:`overlay` (translucent) surfaces.

    A body whose ``plot`` says ``show_trajectory`` (IR-SIM's option) has its path drawn, in
    ``traj_color`` (its own colour by default), the last ``keep_traj_length`` frames (all
    when 0).
    """

    def __init__(self, world: World, mode: str = "rgb_array", *, width_px: int = 600,
                 fps: int | None = None, title: str = "push_envs",
                 margin_px: int = MARGIN_PX,
                 decorations: bool = True) -> None:
        if mode not in RENDER_MODES:
            raise ValueError(f"Renderer: mode must be one of {RENDER_MODES}, got {mode!r}")
        if not 0 <= margin_px <= width_px // 4:
            raise ValueError(f"Renderer: margin_px must be in [0, width_px / 4], got "
                             f"{margin_px}")
        if width_px < 4 * margin_px or width_px < 8:
            raise ValueError(f"Renderer: width_px must be >= max(8, 4 margin_px), got "
                             f"{width_px}")
        self.margin = int(margin_px)
        self.decorations = bool(decorations)
        if mode == "rgb_array":
            # Off-screen drawing needs no video device; the dummy driver keeps SDL from
            # looking for one on headless machines (setdefault: a user's choice wins).
            os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        import pygame

        self._pg = pygame
        self.world = world
        self.mode = mode
        w = world.scene.spec.world
        self.fps = int(fps) if fps is not None else max(1, round(1.0 / w.render_interval))
        self.title = title
        self._x0, self._y0 = float(w.offset[0]), float(w.offset[1])
        self._wm, self._hm = float(w.width), float(w.height)
        self.width_px = int(width_px)
        self.scale = (self.width_px - 2 * self.margin) / self._wm  # [px/m]
        self.height_px = int(round(self._hm * self.scale)) + 2 * self.margin

        self._font = None
        try:
            pygame.font.init()
            self._font = pygame.font.Font(None, 20)
        except Exception:  # fonts are optional (no SDL_ttf): the HUD is skipped
            self._font = None

        self._window = None
        self._clock = None
        if mode == "human":
            pygame.display.init()
            self._window = pygame.display.set_mode((self.width_px, self.height_px))
            pygame.display.set_caption(title)
            self._clock = pygame.time.Clock()

        size = (self.width_px, self.height_px)
        self._canvas = pygame.Surface(size)
        # Translucent things (goals, trail, HUD backing) are drawn on this layer, then blended.
        self._overlay = pygame.Surface(size, pygame.SRCALPHA)
        self._bodies = self._prepare_bodies()
        self._by_name = {world.names[b.index]: b for b in self._bodies}
        # (declaration, body, spec) of every sensor a body carries, in body order.
        self._sensors = [(decl, i, spec) for i, body in enumerate(world.scene.spec.bodies)
                         for decl, spec in sensor_registry.attached(body)]
        self._prepare_movable()
        self._background = self._draw_background()
        self._closed_flag = False
        # IR-SIM's plot.show_trajectory: (body index, colour, frames kept or 0) and the path
        # of the env drawn last.
        specs = world.scene.spec.bodies
        self._traj = [(b.index, _parse_colour(pygame, specs[b.index].plot.get("traj_color"),
                                              b.fill, world.names[b.index]),
                       int(specs[b.index].plot.get("keep_traj_length") or 0))
                      for b in self._bodies
                      if b.kind != IMMOVABLE and specs[b.index].plot.get("show_trajectory")]
        self._paths: dict[int, list] = {i: [] for i, _, _ in self._traj}
        self._path_env = -1

    # ------------------------------------------------------------------ for the sensors
    @property
    def pg(self) -> Any:
        """The pygame module."""
        return self._pg

    @property
    def canvas(self) -> Any:
        """The frame being drawn (a pygame Surface)."""
        return self._canvas

    @property
    def overlay(self) -> Any:
        """A translucent layer (SRCALPHA Surface): clear it, draw, blit it onto the canvas."""
        return self._overlay

    def colour(self, text: str | None, default: tuple[int, int, int],
               where: str) -> tuple[int, int, int]:
        """A YAML colour (name or '#rrggbb') as (R, G, B); ``default`` for None, or with a
        warning naming ``where`` for a colour pygame does not know."""
        return _parse_colour(self._pg, text, default, where)

    # ---------------------------------------------------------------------------- geometry
    def world_to_px(self, xy: Any) -> np.ndarray:
        """World points (..., 2) [m] to pixel coordinates (..., 2) (float, y down)."""
        p = np.asarray(xy, dtype=np.float64)
        out = np.empty_like(p)
        out[..., 0] = self.margin + (p[..., 0] - self._x0) * self.scale
        out[..., 1] = self.height_px - self.margin - (p[..., 1] - self._y0) * self.scale
        return out

    @staticmethod
    def _place(pts: np.ndarray, pose: Sequence[float], scale: float = 1.0) -> np.ndarray:
        """Body-frame points [m] to the world for origin pose (x, y, theta), size factor."""
        c, s = math.cos(pose[2]), math.sin(pose[2])
        x = scale * pts[:, 0]
        y = scale * pts[:, 1]
        return np.stack([pose[0] + c * x - s * y, pose[1] + s * x + c * y], axis=1)

    def _prepare_bodies(self) -> list[_Body]:
        pg = self._pg
        scene = self.world.scene
        specs = scene.spec.bodies
        bodies = []
        n_robot = 0
        for i, info in enumerate(scene.shapes):
            if info is None:  # the grid map: drawn from its occupancy grid instead
                continue
            kind = int(scene.bint[i, 0])
            if kind == DRIVEN:
                default = ROBOT_FILLS[n_robot % len(ROBOT_FILLS)]
                n_robot += 1
            elif kind == PASSIVE:
                default = PASSIVE_FILL
            else:
                default = IMMOVABLE_FILL
            colour = specs[i].color if i < len(specs) else None
            fill = _parse_colour(pg, colour, default, scene.names[i])
            outlines = [np.asarray(o, dtype=np.float64) for o in info.outlines]
            closed = [bool(c) for c in info.closed]
            bodies.append(_Body(i, kind, fill, outlines, closed, ray_reach(outlines, closed)))
        return bodies

    def _prepare_movable(self) -> None:
        """Concatenate movable outlines so one numpy transform places them all per frame."""
        mov = [b for b in self._bodies if b.kind != IMMOVABLE]
        self._mov = mov
        pts, owner, self._mov_slices = [], [], []
        start = 0
        for k, b in enumerate(mov):
            sl = []
            for o, cl in zip(b.outlines, b.closed, strict=True):
                pts.append(o)
                owner.append(np.full(len(o), k))
                sl.append((start, start + len(o), cl))
                start += len(o)
            self._mov_slices.append(sl)
        self._mov_pts = np.concatenate(pts) if pts else np.zeros((0, 2))
        self._mov_owner = np.concatenate(owner) if owner else np.zeros(0, np.int64)
        self._mov_index = np.array([b.index for b in mov], np.int64)
        self._mov_heading = np.array([b.heading for b in mov])

    # -------------------------------------------------------------------------- background
    def _draw_background(self) -> Any:
        """Background, grid, bounds, occupied map cells and immovable bodies (drawn once)."""
        pg = self._pg
        surf = pg.Surface((self.width_px, self.height_px))
        surf.fill(BACKGROUND)
        x1, y1 = self._x0 + self._wm, self._y0 + self._hm
        if self.decorations:
            for gx in np.arange(math.ceil(self._x0 / GRID_STEP) * GRID_STEP, x1 + 1e-9,
                                GRID_STEP):
                a, b = self.world_to_px([[gx, self._y0], [gx, y1]])
                pg.draw.line(surf, GRID_LINE, a, b)
            for gy in np.arange(math.ceil(self._y0 / GRID_STEP) * GRID_STEP, y1 + 1e-9,
                                GRID_STEP):
                a, b = self.world_to_px([[self._x0, gy], [x1, gy]])
                pg.draw.line(surf, GRID_LINE, a, b)
            corners = self.world_to_px([[self._x0, self._y0], [x1, self._y0], [x1, y1],
                                        [self._x0, y1]])
            pg.draw.lines(surf, BOUNDS_LINE, True, corners.tolist())

        w = self.world.scene.spec.world
        if w.obstacle_map is not None:
            rx, ry = w.cell  # IR-SIM stretches a map over the world: cells need not be square
            # Cell (i, j) covers [x0 + i rx, x0 + (i+1) rx] x [y0 + j ry, ...]; rounding
            # both corners (not the size) keeps neighbouring cells gap-free. The pixel
            # observation fills the same whole-pixel rects (raster.PRIM_RECT), and draws the
            # map's edges by this pygame line's integer rule (raster.PRIM_PXLINE).
            for i, j in np.argwhere(np.asarray(w.obstacle_map, dtype=bool)):
                lo = self.world_to_px([self._x0 + i * rx, self._y0 + (j + 1) * ry])
                hi = self.world_to_px([self._x0 + (i + 1) * rx, self._y0 + j * ry])
                lo, hi = np.round(lo), np.round(hi)
                pg.draw.rect(surf, MAP_CELL, pg.Rect(lo[0], lo[1], hi[0] - lo[0],
                                                     hi[1] - lo[1]))
        for seg in np.asarray(self.world.scene.map_segments).reshape(-1, 2, 2):
            a, b = self.world_to_px(seg)
            pg.draw.line(surf, MAP_EDGE, a, b, 2)

        line_px = max(3, int(round(LINE_WIDTH_M * self.scale)))
        for b in self._bodies:
            if b.kind != IMMOVABLE:
                continue
            pose = self.world.scene.pose0[b.index]
            for o, cl in zip(b.outlines, b.closed, strict=True):
                px = self.world_to_px(self._place(o, pose)).tolist()
                if cl:
                    pg.draw.polygon(surf, b.fill, px)
                    pg.draw.lines(surf, darker(b.fill), True, px, 2)
                else:
                    pg.draw.lines(surf, b.fill, False, px, line_px)
                    # Round joints and caps: wide pygame lines leave notches at corners.
                    for p in px:
                        pg.draw.circle(surf, b.fill, p, line_px / 2)
        return surf

    # ------------------------------------------------------------------------------ frame
    def render(self, env: int = 0, *, goals: Sequence[Goal] = (),
               trail: np.ndarray | None = None, hud: Sequence[str] = ()) -> np.ndarray | None:
        """Draw env ``env`` of the world.

        Args:
            env: which env of the batch to draw.
            goals: targets drawn translucent beneath the bodies.
            trail: (n, 2) past robot positions [m], drawn as a faint polyline.
            hud: text lines shown at the top-left.

        Returns:
            ``"rgb_array"``: (H, W, 3) uint8 frame (row 0 at the top); ``"human"``: None.
        """
        if self._closed_flag:
            raise RuntimeError("Renderer.render: the renderer was closed")
        if not 0 <= env < self.world.num_envs:
            raise IndexError(f"Renderer.render: env {env} out of range "
                             f"[0, {self.world.num_envs})")
        pg = self._pg
        canvas = self._canvas
        canvas.blit(self._background, (0, 0))
        if not self.decorations:
            trail, hud = None, ()
        if goals or (trail is not None and len(trail) > 1):
            self._overlay.fill((0, 0, 0, 0))
            self._draw_goals(goals, env)
            if trail is not None and len(trail) > 1:
                pts = self.world_to_px(np.asarray(trail, dtype=np.float64)[:, :2]).tolist()
                pg.draw.lines(self._overlay, TRAIL, False, pts, 2)
            canvas.blit(self._overlay, (0, 0))
        if self._traj:
            self._draw_trajectories(env)
        self._draw_movable(env)
        for decl, body, spec in self._sensors:
            decl.draw(self, env, body, spec)
        if self.decorations:
            self._draw_contacts(env)
        if hud:
            self._draw_hud(hud)

        if self.mode == "human":
            self._window.blit(canvas, (0, 0))
            pg.event.pump()  # keeps the window responsive; events stay queued for callers
            pg.display.flip()
            self._clock.tick(self.fps)
            return None
        # Same pixels as transpose(surfarray.array3d(canvas), (1, 0, 2)), but tobytes writes
        # row-major RGB directly (about 5x faster than array3d plus a transposing copy);
        # the copy makes the frame writable and independent of the canvas.
        raw = pg.image.tobytes(canvas, "RGB")
        return np.frombuffer(raw, np.uint8).reshape(self.height_px, self.width_px, 3).copy()

    def _draw_trajectories(self, env: int) -> None:
        """The paths of the bodies that show their trajectory (IR-SIM's plot option)."""
        if env != self._path_env:
            self._paths = {i: [] for i in self._paths}
            self._path_env = env
        for i, colour, keep in self._traj:
            path = self._paths[i]
            path.append(self.world.state(self.world.names[i])[env, :2].copy())
            if keep and len(path) > keep:
                del path[: len(path) - keep]
            if len(path) > 1:
                self._pg.draw.lines(self._canvas, colour, False,
                                    self.world_to_px(np.array(path)).tolist(), 2)

    def _draw_goals(self, goals: Sequence[Goal], env: int) -> None:
        pg = self._pg
        for g in goals:
            fill, edge = goal_colours(g.color)
            fill, edge = (*fill, GOAL_FILL[3]), (*edge, GOAL_EDGE[3])
            if g.kind == "circle":
                c = self.world_to_px(g.center)
                r = max(2.0, g.radius * self.scale)
                pg.draw.circle(self._overlay, fill, c, r)
                pg.draw.circle(self._overlay, edge, c, r, 2)
                continue
            body = self._by_name.get(g.body)
            if body is None:
                raise KeyError(f"Renderer: goal outline names body {g.body!r}, which has no "
                               f"drawable shape; bodies: {list(self._by_name)}")
            scale = float(self.world.epar[env, body.index, EP_SCALE]) \
                if body.kind != IMMOVABLE else 1.0
            for o, cl in zip(body.outlines, body.closed, strict=True):
                px = self.world_to_px(self._place(o, g.pose, scale)).tolist()
                if cl:
                    pg.draw.polygon(self._overlay, fill, px)
                pg.draw.lines(self._overlay, edge, cl, px, 2)

    def _draw_movable(self, env: int) -> None:
        pg = self._pg
        if not self._mov:
            return
        w = self.world
        idx = self._mov_index
        # Origin pose from the COM state (as World.state does, but for all bodies at once):
        # the COM sits at R(theta) * scale * com_local from the origin.
        theta = w.ang[env, idx]
        sc = w.epar[env, idx, EP_SCALE]
        c, s = np.cos(theta), np.sin(theta)
        off = com_offsets(w.scene.bflt, idx, theta, sc)
        ox, oy = w.pos[env, idx, 0] - off[:, 0], w.pos[env, idx, 1] - off[:, 1]
        # All movable outline vertices in one go (owner k -> that body's pose and scale).
        k = self._mov_owner
        x = sc[k] * self._mov_pts[:, 0]
        y = sc[k] * self._mov_pts[:, 1]
        world_pts = np.stack([ox[k] + c[k] * x - s[k] * y, oy[k] + s[k] * x + c[k] * y], 1)
        px_all = self.world_to_px(world_pts)
        origin_px = self.world_to_px(np.stack([ox, oy], 1))
        tip_px = self.world_to_px(np.stack([ox + c * sc * self._mov_heading,
                                            oy + s * sc * self._mov_heading], 1))
        line_px = max(3, int(round(LINE_WIDTH_M * self.scale)))
        for j, b in enumerate(self._mov):
            edge = darker(b.fill)
            for a0, a1, cl in self._mov_slices[j]:
                px = px_all[a0:a1].tolist()
                if cl:
                    pg.draw.polygon(self._canvas, b.fill, px)
                    pg.draw.lines(self._canvas, edge, True, px, 2)
                else:
                    pg.draw.lines(self._canvas, b.fill, False, px, line_px)
            if b.heading > 0:
                pg.draw.line(self._canvas, edge, origin_px[j], tip_px[j], 2)
                pg.draw.circle(self._canvas, edge, origin_px[j], 2.5)

    def _force_scale(self, env: int) -> float:
        """Arrow length per newton [m/N]: ARROW_PER_TRACTION per robot traction."""
        w = self.world
        robots = [b.index for b in self._bodies if b.kind == DRIVEN]
        ref = 0.0
        if robots:
            ref = float(w.traction(w.names[robots[0]])[env])
        if not ref > 0:
            # No robot (or a frictionless one): fall back to the heaviest movable load.
            loads = [float(w.traction(w.names[b.index])[env]) for b in self._mov]
            ref = max([v for v in loads if np.isfinite(v)], default=0.0)
        return ARROW_PER_TRACTION / ref if ref > 0 else ARROW_PER_TRACTION

    def _draw_contacts(self, env: int) -> None:
        w = self.world
        n = int(w.ctn[env])
        if n == 0:
            return
        pg = self._pg
        per_n = self._force_scale(env)
        kinds = w.scene.bint[:, 0]
        cti = w.cti[env, :n]
        ctf = w.ctf[env, :n]
        for c in range(n):
            a, b = int(cti[c, 0]), int(cti[c, 1])
            p = ctf[c, [CT_PX, CT_PY]]
            nrm = ctf[c, [CT_NX, CT_NY]]  # from b toward a: the push on a
            length = min(ARROW_MAX, max(0.0, float(ctf[c, CT_FN])) * per_n)
            if length * self.scale >= 3:
                # One arrow per movable side (action and reaction); immovable bodies feel
                # the same force but an arrow into a wall only adds clutter.
                for body, sign in ((a, 1.0), (b, -1.0)):
                    if 0 <= body < len(kinds) and kinds[body] != IMMOVABLE:
                        self._arrow(p, p + sign * length * nrm)
            pg.draw.circle(self._canvas, CONTACT, self.world_to_px(p), 4)

    def _arrow(self, p0: np.ndarray, p1: np.ndarray) -> None:
        pg = self._pg
        a, b = self.world_to_px(np.stack([p0, p1]))
        d = b - a
        L = float(np.hypot(*d))
        if L < 1:
            return
        u = d / L
        v = np.array([-u[1], u[0]])
        head = min(10.0, 0.4 * L)
        base = b - head * u
        pg.draw.line(self._canvas, CONTACT, a, base, 3)
        pg.draw.polygon(self._canvas, CONTACT,
                        [b.tolist(), (base + 0.5 * head * v).tolist(),
                         (base - 0.5 * head * v).tolist()])

    def _draw_hud(self, lines: Sequence[str]) -> None:
        if self._font is None:
            return
        pg = self._pg
        try:
            images = [self._font.render(str(t), True, HUD_TEXT) for t in lines]
        except Exception:  # a broken font must not break the frame
            return
        pad = 4
        wmax = max(im.get_width() for im in images)
        hsum = sum(im.get_height() for im in images)
        back = pg.Surface((wmax + 2 * pad, hsum + 2 * pad), pg.SRCALPHA)
        back.fill(HUD_BACK)
        self._canvas.blit(back, (MARGIN_PX // 2, MARGIN_PX // 2))
        y = MARGIN_PX // 2 + pad
        for im in images:
            self._canvas.blit(im, (MARGIN_PX // 2 + pad, y))
            y += im.get_height()

    # ------------------------------------------------------------------------------ close
    def close(self) -> None:
        """Close the window (human mode); safe to call twice."""
        if self._closed_flag:
            return
        self._closed_flag = True
        if self._window is not None:
            self._pg.display.quit()
            self._window = None


__all__ = ["Goal", "GoalMark", "Renderer", "RENDER_MODES"]
