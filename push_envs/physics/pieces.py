"""Convex collision pieces and the rigid transforms that place them (setup time only).

Units: metres and radians.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import LineString
from shapely.geometry import Point
from shapely.geometry import Polygon


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


def rotation(theta: float) -> np.ndarray:
    """2x2 rotation matrix for an angle in radians."""
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[c, -s], [s, c]])


def transform(points: np.ndarray, x: float, y: float, theta: float) -> np.ndarray:
    """Rotate (n, 2) points by theta [rad] about the origin, then translate by (x, y) [m]."""
    return points @ rotation(theta).T + np.array([x, y])


def place_piece(piece: Piece, x: float, y: float, theta: float) -> Piece:
    """Copy of ``piece`` moved by the rigid transform (x, y, theta)."""
    return Piece(piece.kind, transform(piece.verts, x, y, theta), piece.radius)


def piece_geometry(piece: Piece) -> shapely.Geometry:
    """Shapely geometry of one piece (circles as 64-gon buffers)."""
    if piece.kind == "circle":
        return Point(piece.verts[0]).buffer(piece.radius, quad_segs=16)
    if piece.kind == "segment":
        return LineString(piece.verts)
    return Polygon(piece.verts)
