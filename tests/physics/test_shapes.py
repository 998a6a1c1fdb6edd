"""Tests for push_envs.physics.shapes: pieces, mass properties and occupancy grids."""

import math
import os

import numpy as np
import pytest
import shapely

from push_envs.physics.config import SceneError
from push_envs.physics.shapes import MAX_VERTS
from push_envs.physics.shapes import build_shape
from push_envs.physics.shapes import grid_boundary_segments
from push_envs.physics.shapes import grid_rectangles
from push_envs.physics.shapes import load_grid

L_SHAPE = [[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]]  # CCW, non-convex


def rect_props(x0, y0, x1, y1):
    """Area, centroid and polar moment about the centroid of an axis-aligned rectangle."""
    w, h = x1 - x0, y1 - y0
    area = w * h
    return area, np.array([(x0 + x1) / 2, (y0 + y1) / 2]), area * (w * w + h * h) / 12


def assert_valid_polygon_piece(piece):
    verts = piece.verts
    assert piece.kind == "polygon"
    assert 3 <= len(verts) <= MAX_VERTS
    edges = np.roll(verts, -1, axis=0) - verts
    nxt = np.roll(edges, -1, axis=0)
    cross = edges[:, 0] * nxt[:, 1] - edges[:, 1] * nxt[:, 0]
    assert np.all(cross > 1e-12), "not strictly convex CCW"


def test_rectangle_mass_properties():
    info = build_shape({"name": "rectangle", "length": 2.0, "width": 1.0}, "r")
    assert info.area == pytest.approx(2.0)
    np.testing.assert_allclose(info.centroid, [0.0, 0.0], atol=1e-12)
    assert info.gyration_sq == pytest.approx((4 + 1) / 12)
    assert info.min_half_thickness == pytest.approx(0.5)
    assert info.bounding_radius == pytest.approx(math.hypot(1.0, 0.5))
    assert len(info.pieces) == 1
    assert_valid_polygon_piece(info.pieces[0])
    # Length runs along body x: the piece spans x in [-1, 1], y in [-0.5, 0.5].
    np.testing.assert_allclose(info.pieces[0].verts.min(axis=0), [-1.0, -0.5])
    assert info.closed == (True,)


def test_circle_mass_properties_and_offset_centre():
    info = build_shape({"name": "circle", "radius": 0.3, "center": [1.0, 0.0]}, "c")
    assert info.area == pytest.approx(math.pi * 0.09)
    assert info.gyration_sq == pytest.approx(0.09 / 2)
    np.testing.assert_allclose(info.centroid, [1.0, 0.0])
    assert info.min_half_thickness == pytest.approx(0.3)
    assert info.bounding_radius == pytest.approx(1.3)
    assert info.pieces[0].kind == "circle" and info.pieces[0].radius == 0.3
    assert info.outlines[0].shape == (32, 2)


def test_l_shape_matches_two_rectangles():
    a1, c1, j1 = rect_props(0, 0, 2, 1)
    a2, c2, j2 = rect_props(0, 1, 1, 2)
    area = a1 + a2
    centroid = (a1 * c1 + a2 * c2) / area
    j = j1 + a1 * np.sum((c1 - centroid) ** 2) + j2 + a2 * np.sum((c2 - centroid) ** 2)

    info = build_shape({"name": "polygon", "vertices": L_SHAPE}, "l")
    assert info.area == pytest.approx(3.0)
    np.testing.assert_allclose(info.centroid, [2.5 / 3, 2.5 / 3])
    assert info.gyration_sq == pytest.approx(j / area)
    for piece in info.pieces:
        assert_valid_polygon_piece(piece)
    # Greedy merging of the triangles should get back to two quadrilaterals.
    assert len(info.pieces) == 2
    pieces_area = sum(shapely.Polygon(p.verts).area for p in info.pieces)
    assert pieces_area == pytest.approx(3.0)
    assert info.geometry((0, 0, 0)).area == pytest.approx(3.0)


def test_clockwise_input_equals_counter_clockwise():
    ccw = build_shape({"name": "polygon", "vertices": L_SHAPE}, "p")
    cw = build_shape({"name": "polygon", "vertices": L_SHAPE[::-1]}, "p")
    assert cw.area == pytest.approx(ccw.area)
    np.testing.assert_allclose(cw.centroid, ccw.centroid)
    assert cw.gyration_sq == pytest.approx(ccw.gyration_sq)
    for piece in cw.pieces:
        assert_valid_polygon_piece(piece)
    assert cw.geometry((0, 0, 0)).symmetric_difference(ccw.geometry((0, 0, 0))).area < 1e-12


def test_bow_tie_self_intersects():
    spec = {"name": "polygon", "vertices": [[0, 0], [1, 1], [1, 0], [0, 1]]}
    with pytest.raises(SceneError, match=r"obstacle\[0\]\.shape\.vertices: .*self-intersect"):
        build_shape(spec, "f.yaml: obstacle[0].shape")


@pytest.mark.parametrize(
    "spec, text",
    [
        ({"name": "polygon", "vertices": [[0, 0], [1, 1], [2, 2]]}, "zero area"),
        ({"name": "polygon", "vertices": [[0, 0], [1, 0]]}, "at least 3"),
        ({"name": "circle", "radius": -1}, "radius: must be > 0"),
        ({"name": "rectangle", "length": 1}, "missing key 'width'"),
        ({"name": "linestring", "vertices": [[1, 1], [1, 1]]}, "zero length"),
        ({"name": "blob"}, "unknown shape"),
    ],
)
def test_bad_geometry_names_location(spec, text):
    with pytest.raises(SceneError, match="here") as err:
        build_shape(spec, "here")
    assert text in str(err.value)


def test_convex_polygon_with_many_vertices_is_split():
    angles = np.linspace(0, 2 * np.pi, 20, endpoint=False)
    verts = np.stack([np.cos(angles), np.sin(angles)], axis=1).tolist()
    info = build_shape({"name": "polygon", "vertices": verts}, "p")
    assert len(info.pieces) > 1
    for piece in info.pieces:
        assert_valid_polygon_piece(piece)
    exact_area = 0.5 * 20 * math.sin(2 * math.pi / 20)
    assert info.area == pytest.approx(exact_area)
    assert sum(shapely.Polygon(p.verts).area for p in info.pieces) == pytest.approx(exact_area)


def test_collinear_and_repeated_vertices_are_removed():
    verts = [[0, 0], [1, 0], [2, 0], [2, 0], [2, 1], [0, 1], [0, 0]]
    info = build_shape({"name": "polygon", "vertices": verts}, "p")
    assert len(info.pieces) == 1 and len(info.pieces[0].verts) == 4
    assert info.area == pytest.approx(2.0)


def test_compound_with_pose():
    spec = {
        "name": "compound",
        "parts": [
            {"name": "rectangle", "length": 2.0, "width": 1.0},  # area 2 at (0, 0)
            # A 2x1 rectangle turned by 90 deg and moved to (2, 1): area 2 at (2, 1).
            {"name": "rectangle", "length": 2.0, "width": 1.0, "pose": [2.0, 1.0, math.pi / 2]},
            {"name": "circle", "radius": 0.5, "pose": [-3.0, 0.0]},
        ],
    }
    info = build_shape(spec, "c")
    a_circle = math.pi * 0.25
    area = 4.0 + a_circle
    centroid = np.array([2.0 * 2.0 + a_circle * -3.0, 2.0 * 1.0]) / area
    assert info.area == pytest.approx(area)
    np.testing.assert_allclose(info.centroid, centroid)
    j_rect = 2.0 * 5 / 12
    j = (j_rect + 2.0 * np.sum(centroid**2)
         + j_rect + 2.0 * np.sum((np.array([2.0, 1.0]) - centroid) ** 2)
         + a_circle * 0.125 + a_circle * np.sum((np.array([-3.0, 0.0]) - centroid) ** 2))
    assert info.gyration_sq == pytest.approx(j / area)
    # The rotated part spans x in [1.5, 2.5], y in [0, 2].
    rotated = info.pieces[1].verts
    np.testing.assert_allclose(rotated.min(axis=0), [1.5, 0.0], atol=1e-12)
    np.testing.assert_allclose(rotated.max(axis=0), [2.5, 2.0], atol=1e-12)
    np.testing.assert_allclose(info.pieces[2].verts, [[-3.0, 0.0]])
    assert info.bounding_radius == pytest.approx(3.5)
    assert len(info.outlines) == 3


def test_nested_compound_rejected():
    spec = {"name": "compound", "parts": [{"name": "compound", "parts": []}]}
    with pytest.raises(SceneError, match=r"s\.parts\[0\]\.name: .*nested"):
        build_shape(spec, "s")


def test_linestring_segments_and_rod_properties():
    spec = {"name": "linestring", "vertices": [[0, 0], [2, 0], [2, 0], [2, 1]]}
    info = build_shape(spec, "l")
    assert [p.kind for p in info.pieces] == ["segment", "segment"]
    np.testing.assert_allclose(info.pieces[1].verts, [[2, 0], [2, 1]])
    assert info.area == 0.0
    # Length-weighted midpoint: (2*(1, 0) + 1*(2, 0.5)) / 3.
    centroid = np.array([4 / 3, 1 / 6])
    np.testing.assert_allclose(info.centroid, centroid)
    j = (2 * (4 / 12 + np.sum((np.array([1, 0]) - centroid) ** 2))
         + 1 * (1 / 12 + np.sum((np.array([2, 0.5]) - centroid) ** 2)))
    assert info.gyration_sq == pytest.approx(j / 3)
    assert info.min_half_thickness == 0.0
    assert info.closed == (False,)
    assert info.geometry((0, 0, 0)).length == pytest.approx(3.0)


def test_geometry_rotates_about_body_origin_then_translates():
    info = build_shape({"name": "rectangle", "length": 2.0, "width": 1.0}, "r")
    geom = info.geometry((5.0, 1.0, math.pi / 2))
    minx, miny, maxx, maxy = geom.bounds
    assert (minx, miny, maxx, maxy) == pytest.approx((4.5, 0.0, 5.5, 2.0))


# --------------------------------------------------------------------------------------------
# Occupancy grids
# --------------------------------------------------------------------------------------------


def test_load_grid_from_array():
    occ = load_grid([[0, 100, 51], [50, 0, 100]], "w", None)
    assert occ.dtype == bool
    np.testing.assert_array_equal(occ, [[False, True, True], [False, False, True]])
    np.testing.assert_array_equal(load_grid(np.eye(2, dtype=bool), "w", None), np.eye(2) > 0)


@pytest.mark.parametrize("bad", [[1, 2, 3], [[]], [[0, 300]], [[0, 1], [0]]])
def test_load_grid_rejects_bad_arrays(bad):
    with pytest.raises(SceneError, match="world.obstacle_map"):
        load_grid(bad, "f.yaml: world.obstacle_map", None)


def test_load_grid_missing_file(tmp_path):
    with pytest.raises(SceneError, match="w: map image not found"):
        load_grid("nope.png", "w", str(tmp_path))


def test_load_grid_png_orientation(tmp_path):
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    pygame = pytest.importorskip("pygame")
    # 3 columns (x) by 2 rows; only the top-left pixel is black.
    surface = pygame.Surface((3, 2))
    surface.fill((255, 255, 255))
    surface.set_at((0, 0), (0, 0, 0))
    surface.set_at((2, 1), (100, 100, 100))  # bottom-right, mid grey ~ 61 -> occupied
    pygame.image.save(surface, str(tmp_path / "map.png"))

    occ = load_grid("map.png", "w", str(tmp_path))
    assert occ.shape == (3, 2)
    expected = np.zeros((3, 2), dtype=bool)
    expected[0, 1] = True  # top row = largest y
    expected[2, 0] = True
    np.testing.assert_array_equal(occ, expected)


def test_grid_rectangles_cover_l_of_cells_exactly():
    occ = np.zeros((5, 4), dtype=bool)
    occ[1:4, 0] = True  # a horizontal bar along x
    occ[1, 1:4] = True  # and a vertical bar along y at i = 1
    occ[3, 2] = True  # an isolated cell
    res = 0.5
    rects = grid_rectangles(occ, res)
    assert len(rects) == 3
    for rect in rects:
        assert_valid_polygon_piece(rect)
    total = sum(shapely.Polygon(r.verts).area for r in rects)
    assert total == pytest.approx(occ.sum() * res**2)
    for i, j in np.argwhere(occ):
        centre = ((i + 0.5) * res, (j + 0.5) * res)
        inside = [shapely.Polygon(r.verts).contains(shapely.Point(centre)) for r in rects]
        assert sum(inside) == 1


def test_grid_rectangles_merge_repeated_runs_and_origin():
    occ = np.ones((3, 4), dtype=bool)
    rects = grid_rectangles(occ, 0.1, origin=(1.0, 2.0))
    assert len(rects) == 1
    np.testing.assert_allclose(rects[0].verts, [[1.0, 2.0], [1.3, 2.0], [1.3, 2.4], [1.0, 2.4]])


def test_grid_boundary_segments():
    occ = np.zeros((3, 3), dtype=bool)
    occ[0, 0] = occ[1, 0] = True  # 2x1 block at the map corner
    segs = grid_boundary_segments(occ, 1.0)
    assert segs.shape == (4, 2, 2)
    assert sum(np.linalg.norm(s[1] - s[0]) for s in segs) == pytest.approx(6.0)
    assert grid_boundary_segments(np.zeros((2, 2), dtype=bool), 1.0).shape == (0, 2, 2)
