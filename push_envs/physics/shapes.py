"""Shape specs -> convex collision pieces and mass properties (setup time only).

Everything here runs once, when a scene is compiled, so it favours clarity over speed and
may use shapely. The numba kernels only ever see the convex :class:`Piece` arrays produced
here, never shapely objects.

Units: lengths in metres, areas in m², angles in radians. Mass properties are returned per
unit density (``area``) and per unit mass (``gyration_sq``) so that the caller can scale them
by whatever mass the scene assigns: ``inertia [kg·m²] = mass [kg] * gyration_sq [m²]``.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely
from shapely.geometry import LineString, Point, Polygon

from push_envs.physics.config import SceneError

MAX_VERTS = 8
"""Largest vertex count of a polygon piece; bigger convex polygons are split."""

CIRCLE_OUTLINE_VERTS = 32
"""Number of vertices used to draw a circle outline."""

# Relative tolerance on the sine of the turn angle below which three consecutive vertices
# count as collinear. Relative, so that shapes in millimetres and kilometres behave alike.
_COLLINEAR_SIN_TOL = 1e-9

_SHAPE_NAMES = ("circle", "rectangle", "polygon", "linestring", "compound")
# Point lists may come from YAML (lists) or from Python callers (tuples, numpy arrays).
_SEQUENCES = (list, tuple, np.ndarray)


@dataclass(frozen=True, eq=False)
class Piece:
    """One convex collision primitive in some frame (body frame unless stated otherwise).

    ``kind`` is ``"circle"`` (``verts`` = (1, 2) centre, ``radius`` > 0), ``"polygon"``
    (``verts`` = (n, 2) counter-clockwise, strictly convex, 3 <= n <= MAX_VERTS) or
    ``"segment"`` (``verts`` = (2, 2) end points). Coordinates in metres.

    ``eq=False`` because the default dataclass equality would compare numpy arrays, which
    raises; pieces compare by identity.
    """

    kind: str
    verts: np.ndarray
    radius: float = 0.0

    def __post_init__(self) -> None:
        verts = np.array(self.verts, dtype=np.float64).reshape(-1, 2)
        # Read-only so a frozen piece really is immutable (it may be shared between bodies).
        verts.setflags(write=False)
        object.__setattr__(self, "verts", verts)
        object.__setattr__(self, "radius", float(self.radius))


@dataclass(frozen=True, eq=False)
class ShapeInfo:
    """Compiled shape: collision pieces, mass properties and drawing outlines (body frame).

    Attributes:
        pieces: convex pieces in the body frame.
        area: total area [m²]; 0 for a shape made only of line strings.
        centroid: (2,) centre of mass in the body frame [m] (length-weighted midpoint for
            line strings).
        gyration_sq: polar second moment about the centroid divided by area [m²] (divided by
            length for line strings); ``inertia = mass * gyration_sq``.
        outlines: drawing outlines in the body frame: polygons (n, 2), circles as 32-gons,
            line strings (n, 2).
        closed: per outline, True for a closed polygon, False for an open line.
        min_half_thickness: smallest half-width over the pieces [m].
        bounding_radius: largest distance from the body origin to any piece point [m].
    """

    pieces: tuple[Piece, ...]
    area: float
    centroid: np.ndarray
    gyration_sq: float
    outlines: tuple[np.ndarray, ...]
    closed: tuple[bool, ...]
    min_half_thickness: float
    bounding_radius: float

    def geometry(self, state: Sequence[float]) -> shapely.Geometry:
        """Union of the pieces placed at ``state = (x [m], y [m], theta [rad], ...)``.

        The body frame is rotated by theta about the body origin, then translated by (x, y).
        Circles are approximated by shapely buffers (fine for overlap checks and drawing).
        """
        x, y, theta = (float(v) for v in state[:3])
        geoms = [_piece_geometry(_place_piece(p, x, y, theta)) for p in self.pieces]
        return shapely.union_all(geoms)


# --------------------------------------------------------------------------------------------
# Small geometry helpers
# --------------------------------------------------------------------------------------------


def _rotation(theta: float) -> np.ndarray:
    """2x2 rotation matrix for an angle in radians."""
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[c, -s], [s, c]])


def _transform(points: np.ndarray, x: float, y: float, theta: float) -> np.ndarray:
    """Rotate (n, 2) points by theta [rad] about the origin, then translate by (x, y) [m]."""
    return points @ _rotation(theta).T + np.array([x, y])


def _place_piece(piece: Piece, x: float, y: float, theta: float) -> Piece:
    """Copy of ``piece`` moved by the rigid transform (x, y, theta)."""
    return Piece(piece.kind, _transform(piece.verts, x, y, theta), piece.radius)


def _piece_geometry(piece: Piece) -> shapely.Geometry:
    """Shapely geometry of one piece (circles as 64-gon buffers)."""
    if piece.kind == "circle":
        return Point(piece.verts[0]).buffer(piece.radius, quad_segs=16)
    if piece.kind == "segment":
        return LineString(piece.verts)
    return Polygon(piece.verts)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """z-component of the 2-D cross product, broadcasting over leading axes."""
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _signed_area(verts: np.ndarray) -> float:
    """Shoelace signed area [m²]; positive for counter-clockwise vertices."""
    return 0.5 * float(np.sum(_cross(verts, np.roll(verts, -1, axis=0))))


def _drop_repeated(verts: np.ndarray) -> np.ndarray:
    """Remove consecutive duplicate vertices (including last == first)."""
    nxt = np.roll(verts, -1, axis=0)
    keep = np.any(verts != nxt, axis=1)
    if not np.any(keep):
        return verts[:1]
    return verts[keep]


def _drop_collinear(verts: np.ndarray) -> np.ndarray:
    """Remove vertices whose two edges are (nearly) collinear; repeat until stable."""
    while len(verts) >= 3:
        prev = verts - np.roll(verts, 1, axis=0)
        nxt = np.roll(verts, -1, axis=0) - verts
        scale = np.linalg.norm(prev, axis=1) * np.linalg.norm(nxt, axis=1)
        flat = np.abs(_cross(prev, nxt)) <= _COLLINEAR_SIN_TOL * scale
        if not np.any(flat):
            break
        # Drop one vertex at a time: dropping two neighbours at once could change the shape.
        verts = np.delete(verts, int(np.argmax(flat)), axis=0)
    return verts


def _is_strictly_convex_ccw(verts: np.ndarray) -> bool:
    """True if every turn of the closed CCW vertex loop is a strict left turn."""
    prev = verts - np.roll(verts, 1, axis=0)
    nxt = np.roll(verts, -1, axis=0) - verts
    scale = np.linalg.norm(prev, axis=1) * np.linalg.norm(nxt, axis=1)
    return bool(np.all(_cross(prev, nxt) > _COLLINEAR_SIN_TOL * scale))


# --------------------------------------------------------------------------------------------
# Mass properties
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Mass:
    """Mass properties of one part: weight (area m² or length m), centroid, J about centroid.

    ``j_c`` is the polar second moment about the part's own centroid (m⁴ for areas, m³ for
    lengths), i.e. weight * gyration_sq.
    """

    weight: float
    centroid: np.ndarray
    j_c: float


def _polygon_mass(verts: np.ndarray) -> _Mass:
    """Exact area, centroid and polar second moment of a simple CCW polygon."""
    p, q = verts, np.roll(verts, -1, axis=0)
    cross = _cross(p, q)
    area = 0.5 * float(np.sum(cross))
    centroid = np.sum((p + q) * cross[:, None], axis=0) / (6.0 * area)
    # Standard polygon polar moment about the origin, then shift to the centroid.
    terms = p[:, 0] ** 2 + p[:, 0] * q[:, 0] + q[:, 0] ** 2
    terms = terms + p[:, 1] ** 2 + p[:, 1] * q[:, 1] + q[:, 1] ** 2
    j_origin = float(np.sum(cross * terms)) / 12.0
    return _Mass(area, centroid, j_origin - area * float(centroid @ centroid))


def _circle_mass(center: np.ndarray, radius: float) -> _Mass:
    """Disc of radius r: area πr², J about its centre = area * r²/2."""
    area = math.pi * radius**2
    return _Mass(area, np.array(center, dtype=np.float64), area * radius**2 / 2.0)


def _segments_mass(segments: np.ndarray) -> _Mass:
    """Thin rods: weight = total length, J = Σ l (l²/12 + |m - c|²) per unit line density."""
    lengths = np.linalg.norm(segments[:, 1] - segments[:, 0], axis=1)
    mids = segments.mean(axis=1)
    total = float(lengths.sum())
    centroid = (lengths[:, None] * mids).sum(axis=0) / total
    offsets = np.sum((mids - centroid) ** 2, axis=1)
    j_c = float(np.sum(lengths * (lengths**2 / 12.0 + offsets)))
    return _Mass(total, centroid, j_c)


def _combine(masses: Sequence[_Mass]) -> _Mass:
    """Combine parts with the parallel-axis theorem (overlaps are simply counted twice)."""
    total = sum(m.weight for m in masses)
    centroid = sum(m.weight * m.centroid for m in masses) / total
    j_c = sum(m.j_c + m.weight * float((m.centroid - centroid) @ (m.centroid - centroid))
              for m in masses)
    return _Mass(total, np.asarray(centroid, dtype=np.float64), j_c)


# --------------------------------------------------------------------------------------------
# Spec value parsing (build_shape may be called directly, so it checks values itself)
# --------------------------------------------------------------------------------------------


def _is_real(value: Any) -> bool:
    """True for int/float (not bool) values, including numpy scalars."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _require(spec: dict, key: str, where: str) -> Any:
    """Value of a required spec key, or SceneError naming the missing key."""
    if key not in spec:
        raise SceneError(f"{where}: missing key '{key}'")
    return spec[key]


def _positive(spec: dict, key: str, where: str) -> float:
    """A required finite number > 0."""
    value = _require(spec, key, where)
    if not _is_real(value) or not math.isfinite(value):
        raise SceneError(f"{where}.{key}: must be a finite number, got {value!r}")
    if value <= 0:
        raise SceneError(f"{where}.{key}: must be > 0, got {value!r}")
    return float(value)


def _points(value: Any, where: str, min_count: int, dim: int | None = None) -> np.ndarray:
    """Parse a list of [x, y] pairs (or one pair if ``dim`` is given) into float64."""
    if dim is not None:
        ok = isinstance(value, _SEQUENCES) and len(value) == dim and all(map(_is_real, value))
        if not ok or not all(math.isfinite(v) for v in value):
            raise SceneError(f"{where}: must be a list of {dim} finite numbers, got {value!r}")
        return np.array(value, dtype=np.float64)
    if not isinstance(value, _SEQUENCES) or len(value) < min_count:
        raise SceneError(f"{where}: must be a list of at least {min_count} [x, y] points")
    for k, point in enumerate(value):
        _points(point, f"{where}[{k}]", 0, dim=2)
    return np.array(value, dtype=np.float64).reshape(-1, 2)


# --------------------------------------------------------------------------------------------
# Polygons: normalisation and convex decomposition
# --------------------------------------------------------------------------------------------


def _normalise_polygon(verts: np.ndarray, where: str) -> np.ndarray:
    """CCW, repeat-free, collinear-free simple polygon, or SceneError."""
    verts = _drop_repeated(verts)
    # All points on one line (or one point): zero area. Tested via the singular values of
    # the centred points rather than the signed area, which is also 0 for a symmetric
    # bow-tie that deserves the "self-intersect" message instead.
    sing = np.linalg.svd(verts - verts.mean(axis=0), compute_uv=False)
    if len(verts) < 3 or sing[-1] <= _COLLINEAR_SIN_TOL * sing[0]:
        raise SceneError(f"{where}: polygon has zero area")
    # Simplicity is checked before collinear removal so that a spike folding back onto
    # itself is reported as a self-intersection rather than silently removed.
    if not shapely.LinearRing(verts).is_simple:
        raise SceneError(f"{where}: polygon vertices self-intersect")
    verts = _drop_collinear(verts)
    return verts if _signed_area(verts) > 0 else verts[::-1].copy()


def _triangulate(verts: np.ndarray) -> list[np.ndarray]:
    """CCW triangles of a simple polygon via shapely's constrained Delaunay triangulation."""
    poly = Polygon(verts)
    triangles = []
    for tri in shapely.get_parts(shapely.constrained_delaunay_triangles(poly)):
        corners = np.asarray(tri.exterior.coords)[:3]
        area = _signed_area(corners)
        centre = corners.mean(axis=0)
        # Keep only non-degenerate triangles inside the polygon (GEOS may return hull ones).
        if abs(area) > 0 and shapely.contains_xy(poly, centre[0], centre[1]):
            triangles.append(corners if area > 0 else corners[::-1].copy())
    return triangles


def _try_merge(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """Union of two CCW convex polygons sharing an edge, if it is convex and small enough."""
    a_keys = [tuple(v) for v in a]
    b_keys = [tuple(v) for v in b]
    for i in range(len(a)):
        p, q = a_keys[i], a_keys[(i + 1) % len(a)]
        # A shared edge runs p->q in a and q->p in b (both CCW).
        for j in range(len(b)):
            if b_keys[j] == q and b_keys[(j + 1) % len(b)] == p:
                # Walk a from q round to p, then b's vertices strictly after p up to q.
                a_part = [a[(i + 1 + k) % len(a)] for k in range(len(a))]
                b_part = [b[(j + 2 + k) % len(b)] for k in range(len(b) - 2)]
                merged = _drop_collinear(np.array(a_part + b_part))
                if len(merged) <= MAX_VERTS and _is_strictly_convex_ccw(merged):
                    return merged
                return None
    return None


def _merge_convex(pieces: list[np.ndarray]) -> list[np.ndarray]:
    """Greedily merge neighbouring convex pieces while the union stays convex and small.

    Fewer pieces means fewer narrow-phase pairs at run time; optimality is not needed.
    """
    pieces = list(pieces)
    changed = True
    while changed:
        changed = False
        for i in range(len(pieces)):
            for j in range(i + 1, len(pieces)):
                merged = _try_merge(pieces[i], pieces[j])
                if merged is not None:
                    pieces[i] = merged
                    del pieces[j]
                    changed = True
                    break
            if changed:
                break
    return pieces


def _convex_pieces(verts: np.ndarray) -> list[np.ndarray]:
    """Split a normalised simple polygon into CCW convex pieces of <= MAX_VERTS vertices."""
    if len(verts) <= MAX_VERTS and _is_strictly_convex_ccw(verts):
        return [verts]
    return _merge_convex(_triangulate(verts))


# --------------------------------------------------------------------------------------------
# Per-shape builders: spec -> _Part in the shape's own frame.
# --------------------------------------------------------------------------------------------


@dataclass
class _Part:
    """Intermediate result for one primitive shape, in its own frame."""

    pieces: list[Piece]
    mass: _Mass
    outlines: list[np.ndarray]
    closed: list[bool]
    is_line: bool = False

    def moved(self, x: float, y: float, theta: float) -> _Part:
        """This part placed by the rigid transform (x, y, theta)."""
        centroid = _transform(self.mass.centroid[None, :], x, y, theta)[0]
        return _Part(
            [_place_piece(p, x, y, theta) for p in self.pieces],
            _Mass(self.mass.weight, centroid, self.mass.j_c),
            [_transform(o, x, y, theta) for o in self.outlines],
            list(self.closed),
            self.is_line,
        )


def _circle(spec: dict, where: str) -> _Part:
    radius = _positive(spec, "radius", where)
    center = _points(spec.get("center", [0.0, 0.0]), f"{where}.center", 0, dim=2)
    angles = np.linspace(0.0, 2.0 * math.pi, CIRCLE_OUTLINE_VERTS, endpoint=False)
    outline = center + radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    piece = Piece("circle", center[None, :], radius)
    return _Part([piece], _circle_mass(center, radius), [outline], [True])


def _rectangle(spec: dict, where: str) -> _Part:
    half_l = _positive(spec, "length", where) / 2.0
    half_w = _positive(spec, "width", where) / 2.0
    verts = np.array([[-half_l, -half_w], [half_l, -half_w], [half_l, half_w], [-half_l, half_w]])
    return _Part([Piece("polygon", verts)], _polygon_mass(verts), [verts], [True])


def _polygon(spec: dict, where: str) -> _Part:
    key = f"{where}.vertices"
    verts = _normalise_polygon(_points(_require(spec, "vertices", where), key, 3), key)
    pieces = [Piece("polygon", v) for v in _convex_pieces(verts)]
    return _Part(pieces, _polygon_mass(verts), [verts], [True])


def _linestring(spec: dict, where: str) -> _Part:
    key = f"{where}.vertices"
    verts = _points(_require(spec, "vertices", where), key, 2)
    segments = np.stack([verts[:-1], verts[1:]], axis=1)
    segments = segments[np.linalg.norm(segments[:, 1] - segments[:, 0], axis=1) > 0]
    if len(segments) == 0:
        raise SceneError(f"{key}: linestring has zero length")
    pieces = [Piece("segment", s) for s in segments]
    return _Part(pieces, _segments_mass(segments), [verts], [False], is_line=True)


def _compound(spec: dict, where: str) -> _Part:
    parts_spec = _require(spec, "parts", where)
    if not isinstance(parts_spec, (list, tuple)) or len(parts_spec) == 0:
        raise SceneError(f"{where}.parts: must be a non-empty list of shapes")
    parts = []
    for k, part_spec in enumerate(parts_spec):
        part_where = f"{where}.parts[{k}]"
        if isinstance(part_spec, dict) and part_spec.get("name") == "compound":
            raise SceneError(f"{part_where}.name: compound shapes cannot be nested")
        part = _build_part(part_spec, part_where)
        pose = part_spec.get("pose", [0.0, 0.0, 0.0])
        parts.append(part.moved(*_pose(pose, f"{part_where}.pose")))
    return _merge_parts(parts)


def _pose(value: Any, where: str) -> tuple[float, float, float]:
    """Parse a part pose [x, y] or [x, y, theta] (metres, radians)."""
    if isinstance(value, _SEQUENCES) and len(value) == 2:
        value = [*value, 0.0]
    x, y, theta = _points(value, where, 0, dim=3)
    return float(x), float(y), float(theta)


def _merge_parts(parts: list[_Part]) -> _Part:
    """Concatenate parts; mass from the areal parts if any, else from the line parts.

    Areas and lengths cannot be summed, so line strings inside a compound that also has
    areal parts are treated as massless (they still collide).
    """
    areal = [p.mass for p in parts if not p.is_line]
    mass = _combine(areal) if areal else _combine([p.mass for p in parts])
    return _Part(
        [piece for p in parts for piece in p.pieces],
        mass,
        [o for p in parts for o in p.outlines],
        [c for p in parts for c in p.closed],
        is_line=not areal,
    )


_BUILDERS = {
    "circle": _circle,
    "rectangle": _rectangle,
    "polygon": _polygon,
    "linestring": _linestring,
    "compound": _compound,
}


def _build_part(spec: Any, where: str) -> _Part:
    """Dispatch on the shape name."""
    if not isinstance(spec, dict):
        raise SceneError(f"{where}: shape must be a mapping, got {type(spec).__name__}")
    name = _require(spec, "name", where)
    if not isinstance(name, str) or name not in _BUILDERS:
        choices = ", ".join(_SHAPE_NAMES)
        raise SceneError(f"{where}.name: unknown shape {name!r}; choices: {choices}")
    return _BUILDERS[name](spec, where)


# --------------------------------------------------------------------------------------------
# Derived piece measures
# --------------------------------------------------------------------------------------------


def _half_thickness(piece: Piece) -> float:
    """Circle: radius; polygon: half its smallest width over edge normals; segment: 0."""
    if piece.kind == "circle":
        return piece.radius
    if piece.kind == "segment":
        return 0.0
    verts = piece.verts
    edges = np.roll(verts, -1, axis=0) - verts
    normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    proj = verts @ normals.T  # (n_verts, n_edges)
    return float(0.5 * np.min(proj.max(axis=0) - proj.min(axis=0)))


def _reach(piece: Piece) -> float:
    """Largest distance from the body origin to a point of the piece [m]."""
    dist = float(np.max(np.linalg.norm(piece.verts, axis=1)))
    return dist + piece.radius if piece.kind == "circle" else dist


def build_shape(spec: dict, where: str) -> ShapeInfo:
    """Compile a shape spec (see module docs) into convex pieces and mass properties.

    Args:
        spec: shape mapping, e.g. ``{"name": "rectangle", "length": 2.0, "width": 1.0}``;
            lengths in metres, angles in radians.
        where: location prefix for error messages, e.g. ``"scene.yaml: robot[0].shape"``.

    Raises:
        SceneError: bad geometry (non-positive sizes, self-intersecting or zero-area
            polygons, zero-length line strings, ...); the message starts with ``where``.
    """
    part = _build_part(spec, where)
    area = 0.0 if part.is_line else part.mass.weight
    gyration_sq = part.mass.j_c / part.mass.weight
    return ShapeInfo(
        pieces=tuple(part.pieces),
        area=float(area),
        centroid=np.asarray(part.mass.centroid, dtype=np.float64),
        gyration_sq=float(gyration_sq),
        outlines=tuple(np.asarray(o, dtype=np.float64) for o in part.outlines),
        closed=tuple(part.closed),
        min_half_thickness=min(_half_thickness(p) for p in part.pieces),
        bounding_radius=max(_reach(p) for p in part.pieces),
    )


# --------------------------------------------------------------------------------------------
# Occupancy grids
# --------------------------------------------------------------------------------------------


def _load_png_values(path: str, where: str) -> np.ndarray:
    """Occupancy values (0-100, dark = occupied) of an image, indexed [x_col, y_row_up]."""
    # Headless: pygame must not try to open a window when only decoding an image.
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    import pygame  # heavy and only needed for image maps, so imported lazily

    try:
        surface = pygame.image.load(path)
    except (pygame.error, OSError) as exc:
        raise SceneError(f"{where}: cannot load image {path!r}: {exc}") from exc
    rgb = pygame.surfarray.array3d(surface).astype(np.float64)  # (W, H, 3), [col, row]
    gray = rgb @ np.array([0.299, 0.587, 0.114])
    # surfarray is indexed [col, row] with row 0 at the top; flip rows so j grows upward.
    return 100.0 * (1.0 - gray[:, ::-1] / 255.0)


def load_grid(obstacle_map: Any, where: str, base_dir: str | None) -> np.ndarray:
    """Load an occupancy grid as a bool array ``occ[i, j]`` (i along x, j along y).

    Args:
        obstacle_map: 2-D array-like of 0-100 values or bools (already indexed [i, j]), or
            a path to an image (relative paths are resolved against ``base_dir``). In images
            dark pixels are occupied and the top row is the largest y.
        where: location prefix for error messages.
        base_dir: folder of the scene file, or None (current directory).

    Returns:
        Bool array, True where the cell value is > 50 (on a 0-100 scale) or True.
    """
    if isinstance(obstacle_map, (str, os.PathLike)):
        path = os.fspath(obstacle_map)
        if not os.path.isabs(path) and base_dir is not None:
            path = os.path.join(base_dir, path)
        if not os.path.isfile(path):
            raise SceneError(f"{where}: map image not found: {path!r}")
        values = _load_png_values(path, where)
    else:
        values = _array_values(obstacle_map, where)
    if values.ndim != 2 or values.size == 0:
        raise SceneError(f"{where}: occupancy grid must be a non-empty 2-D array, "
                         f"got shape {values.shape}")
    return values > 50.0


def _array_values(obstacle_map: Any, where: str) -> np.ndarray:
    """Validate a directly given grid and return it as 0-100 float values."""
    try:
        arr = np.asarray(obstacle_map)
    except ValueError as exc:  # ragged nested lists
        raise SceneError(f"{where}: occupancy grid is not a rectangular array") from exc
    if arr.dtype == np.bool_:
        return arr.astype(np.float64) * 100.0
    if arr.ndim != 2 or arr.size == 0:
        return arr  # reported by the caller with its shape
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise SceneError(f"{where}: occupancy grid must hold numbers 0-100 or bools")
    arr = arr.astype(np.float64)
    # Out-of-range values usually mean a 0-255 image passed as an array by mistake.
    if not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.max() > 100:
        raise SceneError(f"{where}: occupancy values must lie in [0, 100]")
    return arr


def _row_runs(row: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs [start, stop) of True in a 1-D bool array."""
    padded = np.concatenate([[False], row, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def grid_rectangles(
    occ: np.ndarray, resolution: float, origin: Sequence[float] = (0.0, 0.0)
) -> list[Piece]:
    """Cover the occupied cells with few solid axis-aligned rectangles (world frame).

    Greedy: maximal runs along x in each row j; a run that repeats unchanged in the next
    rows extends the same rectangle in y. Cells are solid (not outlines) so that bodies
    cannot tunnel through a one-cell-thick wall between two contact checks.

    Args:
        occ: bool occupancy ``occ[i, j]``; cell (i, j) covers
            x in [i*res, (i+1)*res], y in [j*res, (j+1)*res] (plus ``origin``).
        resolution: cell size [m].
        origin: world position [m] of the grid corner (0, 0).

    Returns:
        CCW 4-vertex polygon pieces in world coordinates [m].
    """
    occ = np.asarray(occ, dtype=bool)
    ox, oy = float(origin[0]), float(origin[1])
    boxes: list[tuple[int, int, int, int]] = []  # (i0, i1, j0, j1), half-open
    open_runs: dict[tuple[int, int], int] = {}  # run -> first row j
    for j in range(occ.shape[1] + 1):
        runs = set(_row_runs(occ[:, j])) if j < occ.shape[1] else set()
        for run in [r for r in open_runs if r not in runs]:
            boxes.append((run[0], run[1], open_runs.pop(run), j))
        for run in runs:
            open_runs.setdefault(run, j)
    pieces = []
    for i0, i1, j0, j1 in sorted(boxes, key=lambda b: (b[2], b[0])):
        x0, x1 = ox + i0 * resolution, ox + i1 * resolution
        y0, y1 = oy + j0 * resolution, oy + j1 * resolution
        pieces.append(Piece("polygon", [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]))
    return pieces


def _edge_runs(mask: np.ndarray) -> list[tuple[int, int, int]]:
    """Runs (line, start, stop) of True along axis 1 of a 2-D mask, per line of axis 0."""
    return [(line, a, b) for line in range(mask.shape[0]) for a, b in _row_runs(mask[line])]


def grid_boundary_segments(
    occ: np.ndarray, resolution: float, origin: Sequence[float] = (0.0, 0.0)
) -> np.ndarray:
    """Boundary edges between occupied and free cells (or the map border), for drawing.

    Collinear neighbouring edges are merged into one segment.

    Returns:
        (k, 2, 2) float64 array of world-frame segments [m].
    """
    occ = np.asarray(occ, dtype=bool)
    ox, oy = float(origin[0]), float(origin[1])
    padded = np.pad(occ, 1, constant_values=False)
    # Vertical lines x = i*res: cells (i-1, j) and (i, j) differ. Shape (nx+1, ny).
    vertical = padded[:-1, 1:-1] != padded[1:, 1:-1]
    # Horizontal lines y = j*res: cells (i, j-1) and (i, j) differ. Shape (ny+1, nx).
    horizontal = (padded[1:-1, :-1] != padded[1:-1, 1:]).T
    segs = [[[i, a], [i, b]] for i, a, b in _edge_runs(vertical)]
    segs += [[[a, j], [b, j]] for j, a, b in _edge_runs(horizontal)]
    out = np.array(segs, dtype=np.float64).reshape(-1, 2, 2) * resolution
    return out + np.array([ox, oy])
