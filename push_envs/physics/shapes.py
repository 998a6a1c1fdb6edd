"""Shape specs -> convex collision pieces and mass properties (setup time only).

Everything here runs once, when a scene is loaded, so it favours clarity over speed and may
use shapely. The numba kernels only ever see the convex :class:`Piece` arrays produced here,
never shapely objects. Sizes and vertex counts are checked against :mod:`.limits` before any
geometry is built.

Units: lengths in metres, areas in m², angles in radians. Mass properties are returned per
unit density (``area``) and per unit mass (``gyration_sq``) so that the caller can scale them
by whatever mass the scene assigns: ``inertia [kg·m²] = mass [kg] * gyration_sq [m²]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely

from . import checks
from .decompose import COLLINEAR_SIN_TOL
from .decompose import MAX_VERTS
from .decompose import convex_pieces
from .decompose import cross
from .decompose import drop_collinear
from .decompose import drop_repeated
from .decompose import signed_area
from .errors import SceneError
from .errors import short_repr
from .grid import grid_boundary_segments
from .grid import grid_rectangles
from .grid import load_grid
from .limits import MAX_COMPOUND_PARTS
from .limits import MAX_COORD
from .limits import MAX_POLYGON_VERTS
from .limits import MAX_SIZE
from .limits import MIN_SIZE
from .pieces import Piece
from .pieces import piece_geometry
from .pieces import place_piece
from .pieces import transform

__all__ = [
    "MAX_VERTS", "CIRCLE_OUTLINE_VERTS", "Piece", "ShapeInfo", "build_shape", "load_grid",
    "grid_rectangles", "grid_boundary_segments",
]

CIRCLE_OUTLINE_VERTS = 32
"""Number of vertices used to draw a circle outline."""

_SHAPE_NAMES = ("circle", "rectangle", "polygon", "linestring", "compound")
# Point lists may come from YAML (lists) or from Python callers (tuples, numpy arrays).
_SEQUENCES = (list, tuple, np.ndarray)


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
        geoms = [piece_geometry(place_piece(p, x, y, theta)) for p in self.pieces]
        return shapely.union_all(geoms)


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
    crossed = cross(p, q)
    area = 0.5 * float(np.sum(crossed))
    centroid = np.sum((p + q) * crossed[:, None], axis=0) / (6.0 * area)
    # Standard polygon polar moment about the origin, then shift to the centroid.
    terms = p[:, 0] ** 2 + p[:, 0] * q[:, 0] + q[:, 0] ** 2
    terms = terms + p[:, 1] ** 2 + p[:, 1] * q[:, 1] + q[:, 1] ** 2
    j_origin = float(np.sum(crossed * terms)) / 12.0
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


def _require(spec: dict, key: str, where: str) -> Any:
    """Value of a required spec key, or SceneError naming the missing key."""
    if key not in spec:
        raise SceneError(f"{where}: missing key '{key}'")
    return spec[key]


def _size(spec: dict, key: str, where: str) -> float:
    """A required length [m] within [MIN_SIZE, MAX_SIZE]."""
    return checks.size(_require(spec, key, where), f"{where}.{key}")


def _pair(value: Any, where: str, dim: int, unit: str = " m") -> np.ndarray:
    """A point or pose: ``dim`` finite numbers of magnitude <= MAX_COORD [m or rad]."""
    if not isinstance(value, _SEQUENCES) or len(value) != dim:
        raise SceneError(f"{where}: must be a list of {dim} finite numbers, got "
                         f"{short_repr(value)}")
    return np.array([checks.real(v, f"{where}[{k}]", magnitude=MAX_COORD, unit=unit)
                     for k, v in enumerate(value)], dtype=np.float64)


def _points(value: Any, where: str, min_count: int) -> np.ndarray:
    """Parse a list of [x, y] points [m] into an (n, 2) float64 array.

    The count is checked against MAX_POLYGON_VERTS before any point is looked at.
    """
    if not isinstance(value, _SEQUENCES) or len(value) < min_count:
        raise SceneError(f"{where}: must be a list of at least {min_count} [x, y] points")
    if len(value) > MAX_POLYGON_VERTS:
        raise SceneError(f"{where}: {len(value)} points, more than the limit of "
                         f"{MAX_POLYGON_VERTS} (MAX_POLYGON_VERTS)")
    points = [_pair(point, f"{where}[{k}]", 2) for k, point in enumerate(value)]
    return np.array(points, dtype=np.float64).reshape(-1, 2)


# --------------------------------------------------------------------------------------------
# Polygons: normalisation (decomposition lives in decompose.py)
# --------------------------------------------------------------------------------------------


def _width(verts: np.ndarray) -> float:
    """Smallest width [m] of the convex hull of ``verts`` (over the hull's edge normals)."""
    hull = shapely.convex_hull(shapely.MultiPoint(verts))
    if not isinstance(hull, shapely.Polygon):
        return 0.0
    ring = np.asarray(hull.exterior.coords)[:-1]
    edges = np.roll(ring, -1, axis=0) - ring
    normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    proj = ring @ normals.T  # (n_verts, n_edges)
    return float(np.min(proj.max(axis=0) - proj.min(axis=0)))


def _normalise_polygon(verts: np.ndarray, where: str) -> np.ndarray:
    """CCW, repeat-free, collinear-free simple polygon within the size limits, or SceneError."""
    verts = drop_repeated(verts)
    # All points on one line (or one point): zero area. Tested via the singular values of
    # the centred points rather than the signed area, which is also 0 for a symmetric
    # bow-tie that deserves the "self-intersect" message instead.
    sing = np.linalg.svd(verts - verts.mean(axis=0), compute_uv=False)
    if len(verts) < 3 or sing[-1] <= COLLINEAR_SIN_TOL * sing[0]:
        raise SceneError(f"{where}: polygon has zero area")
    edges = np.linalg.norm(np.roll(verts, -1, axis=0) - verts, axis=1)
    if edges.min() < MIN_SIZE:
        k = int(np.argmin(edges))
        raise SceneError(f"{where}: edge {k} is {edges[k]:.3g} m long, shorter than the "
                         f"minimum size of {MIN_SIZE:g} m")
    extent = float(np.max(np.ptp(verts, axis=0)))
    if extent > MAX_SIZE:
        raise SceneError(f"{where}: polygon spans {extent:.3g} m, more than the maximum size "
                         f"of {MAX_SIZE:g} m")
    # Simplicity is checked before collinear removal so that a spike folding back onto
    # itself is reported as a self-intersection rather than silently removed.
    if not shapely.LinearRing(verts).is_simple:
        raise SceneError(f"{where}: polygon vertices self-intersect")
    width = _width(verts)
    if width < MIN_SIZE:
        raise SceneError(f"{where}: polygon is {width:.3g} m thin, less than the minimum "
                         f"size of {MIN_SIZE:g} m")
    verts = drop_collinear(verts)
    return verts if signed_area(verts) > 0 else verts[::-1].copy()


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
        centroid = transform(self.mass.centroid[None, :], x, y, theta)[0]
        return _Part(
            [place_piece(p, x, y, theta) for p in self.pieces],
            _Mass(self.mass.weight, centroid, self.mass.j_c),
            [transform(o, x, y, theta) for o in self.outlines],
            list(self.closed),
            self.is_line,
        )


def _circle(spec: dict, where: str) -> _Part:
    radius = _size(spec, "radius", where)
    center = _pair(spec.get("center", [0.0, 0.0]), f"{where}.center", 2)
    angles = np.linspace(0.0, 2.0 * math.pi, CIRCLE_OUTLINE_VERTS, endpoint=False)
    outline = center + radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    piece = Piece("circle", center[None, :], radius)
    return _Part([piece], _circle_mass(center, radius), [outline], [True])


def _rectangle(spec: dict, where: str) -> _Part:
    """A ``length`` x ``width`` rectangle about its ``center`` (the origin by default; a car
    shape's wheelbase moves it forward, config.py)."""
    half_l = _size(spec, "length", where) / 2.0
    half_w = _size(spec, "width", where) / 2.0
    verts = np.array([[-half_l, -half_w], [half_l, -half_w], [half_l, half_w], [-half_l, half_w]])
    if "center" in spec:
        verts = verts + _pair(spec["center"], f"{where}.center", 2)
    return _Part([Piece("polygon", verts)], _polygon_mass(verts), [verts], [True])


def _polygon(spec: dict, where: str) -> _Part:
    key = f"{where}.vertices"
    verts = _normalise_polygon(_points(_require(spec, "vertices", where), key, 3), key)
    pieces = [Piece("polygon", v) for v in convex_pieces(verts)]
    return _Part(pieces, _polygon_mass(verts), [verts], [True])


def _linestring(spec: dict, where: str) -> _Part:
    key = f"{where}.vertices"
    verts = _points(_require(spec, "vertices", where), key, 2)
    segments = np.stack([verts[:-1], verts[1:]], axis=1)
    lengths = np.linalg.norm(segments[:, 1] - segments[:, 0], axis=1)
    # Repeated points (zero-length segments) are dropped; a segment shorter than MIN_SIZE
    # has no usable direction for a contact normal.
    short = np.flatnonzero((lengths > 0) & (lengths < MIN_SIZE))
    if len(short):
        k = int(short[0])
        raise SceneError(f"{key}: segment {k} is {lengths[k]:.3g} m long, shorter than the "
                         f"minimum size of {MIN_SIZE:g} m")
    segments = segments[lengths > 0]
    if len(segments) == 0:
        raise SceneError(f"{key}: linestring has zero length")
    pieces = [Piece("segment", s) for s in segments]
    return _Part(pieces, _segments_mass(segments), [verts], [False], is_line=True)


def _compound(spec: dict, where: str) -> _Part:
    parts_spec = _require(spec, "parts", where)
    if not isinstance(parts_spec, (list, tuple)) or len(parts_spec) == 0:
        raise SceneError(f"{where}.parts: must be a non-empty list of shapes")
    if len(parts_spec) > MAX_COMPOUND_PARTS:
        raise SceneError(f"{where}.parts: {len(parts_spec)} parts, more than the limit of "
                         f"{MAX_COMPOUND_PARTS} (MAX_COMPOUND_PARTS)")
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
    x, y, theta = _pair(value, where, 3, unit="")  # metres and radians
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
        raise SceneError(f"{where}.name: unknown shape {short_repr(name)}; choices: {choices}")
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
        SceneError: bad geometry (sizes outside [MIN_SIZE, MAX_SIZE], more vertices than
            MAX_POLYGON_VERTS, self-intersecting or zero-area polygons, zero-length line
            strings, ...); the message starts with ``where``.
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
