"""Narrow phase (narrowphase.py) on small hand-built pieces: depth, normal (from b toward a),
patch points, and the resting tolerance."""

import math

import numpy as np
import pytest

from push_envs.physics import narrowphase
from push_envs.physics.jit import python_entry
from push_envs.physics.narrowphase import CIRCLE
from push_envs.physics.narrowphase import MAX_VERTS
from push_envs.physics.narrowphase import OUT_LEN
from push_envs.physics.narrowphase import POLYGON
from push_envs.physics.narrowphase import SEGMENT

# The narrow phase is compiled for compiled callers only; these twins take Python calls.
collide = python_entry(narrowphase.collide)
collide_circle_polygon = python_entry(narrowphase.collide_circle_polygon)
collide_circles = python_entry(narrowphase.collide_circles)
collide_polygons = python_entry(narrowphase.collide_polygons)

TOL = 1e-5
NRM = np.zeros((2, MAX_VERTS, 2))  # the narrow phase's scratch for edge normals


def square(cx, cy, half=0.2, theta=0.0):
    """CCW vertices of a square, padded to MAX_VERTS rows."""
    c, s = math.cos(theta), math.sin(theta)
    local = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    v = np.zeros((MAX_VERTS, 2))
    v[:4] = np.stack([cx + c * local[:, 0] - s * local[:, 1],
                      cy + s * local[:, 0] + c * local[:, 1]], 1)
    return v


def segment(p0, p1):
    v = np.zeros((MAX_VERTS, 2))
    v[0], v[1] = p0, p1
    return v


def point(x, y):
    v = np.zeros((MAX_VERTS, 2))
    v[0] = x, y
    return v


def polys(va, vb, na=4, nb=4, tol=TOL):
    out = np.full(OUT_LEN, np.nan)
    hit = collide_polygons(va, na, vb, nb, tol, out, NRM)
    return hit, out


def patch(out):
    n = int(out[3])
    return np.array([out[4:6], out[7:9]])[:n], np.array([out[6], out[9]])[:n]


# ------------------------------------------------------------------------------ polygons
@pytest.mark.parametrize("dx, dy, normal", [
    (0.35, 0.0, (1.0, 0.0)), (-0.35, 0.0, (-1.0, 0.0)),
    (0.0, 0.35, (0.0, 1.0)), (0.0, -0.35, (0.0, -1.0)),
])
def test_box_box_depth_and_normal_from_b_toward_a(dx, dy, normal):
    hit, out = polys(square(dx, dy), square(0.0, 0.0))
    assert hit
    np.testing.assert_allclose(out[:2], normal, atol=1e-15)
    assert out[2] == pytest.approx(0.05, abs=1e-14)
    # Swapping a and b flips the normal and keeps the depth.
    hit2, out2 = polys(square(0.0, 0.0), square(dx, dy))
    assert hit2
    np.testing.assert_allclose(out2[:2], -np.array(normal), atol=1e-15)
    assert out2[2] == pytest.approx(0.05, abs=1e-14)


def test_box_box_flat_faces_give_two_point_patch_midway():
    # a overlaps b by 0.05 along x and is shifted 0.1 in y: the faces overlap on y in [-0.1, 0.2].
    hit, out = polys(square(0.35, 0.1), square(0.0, 0.0))
    assert hit and out[3] == 2.0
    pts, depths = patch(out)
    np.testing.assert_allclose(depths, [0.05, 0.05], atol=1e-14)
    # Both points midway through the overlap (x = 0.175) at the ends of the shared face.
    np.testing.assert_allclose(pts[:, 0], [0.175, 0.175], atol=1e-14)
    np.testing.assert_allclose(sorted(pts[:, 1]), [-0.1, 0.2], atol=1e-14)


def test_tilted_box_one_point_patch_at_its_corner():
    # a rotated 45 degrees: its lowest corner pokes 0.01 into b's top face.
    half_diag = 0.2 * math.sqrt(2)
    hit, out = polys(square(0.0, 0.2 + half_diag - 0.01, theta=math.pi / 4), square(0.0, 0.0))
    assert hit and out[3] == 1.0
    np.testing.assert_allclose(out[:2], [0.0, 1.0], atol=1e-12)
    assert out[2] == pytest.approx(0.01, abs=1e-12)
    np.testing.assert_allclose(out[4:6], [0.0, 0.195], atol=1e-12)


def test_tilted_box_two_point_patch_has_unequal_depths():
    # A small box a tilted by 0.01 rad lying on b's top face: both bottom corners inside
    # (and within b's face, so nothing is clipped), at different depths.
    th = 0.01
    hit, out = polys(square(0.0, 0.295, half=0.1, theta=th), square(0.0, 0.0))
    assert hit and out[3] == 2.0
    _, depths = patch(out)
    c, s = math.cos(th), math.sin(th)
    expect = sorted(0.2 - (0.295 + s * lx - c * 0.1) for lx in (-0.1, 0.1))[::-1]
    np.testing.assert_allclose(depths, expect, atol=1e-12)  # deepest first
    assert out[2] == pytest.approx(expect[0], abs=1e-12)
    # A corner past the end of the reference face is clipped to the face's side plane.
    hit, out = polys(square(0.0, 0.395, theta=th), square(0.0, 0.0))
    assert hit and out[3] == 2.0
    pts, _ = patch(out)
    assert np.max(np.abs(pts[:, 0])) == pytest.approx(0.2, abs=1e-12)


def test_gap_within_tolerance_is_negative_depth_and_beyond_is_none():
    hit, out = polys(square(0.4 + 5e-6, 0.0), square(0.0, 0.0))
    assert hit and out[2] == pytest.approx(-5e-6, abs=1e-15)
    assert out[6] == pytest.approx(-5e-6, abs=1e-15)
    hit, out = polys(square(0.4 + 2e-5, 0.0), square(0.0, 0.0))
    assert not hit
    hit, _ = polys(square(0.4, 0.0), square(0.0, 0.0))  # exact touching
    assert hit


# ------------------------------------------------------------------------------ circles
def test_circle_circle():
    out = np.zeros(OUT_LEN)
    assert collide_circles(0.3, 0.4, 0.3, 0.0, 0.0, 0.3, TOL, out)
    np.testing.assert_allclose(out[:2], [0.6, 0.8], atol=1e-15)
    assert out[2] == pytest.approx(0.1, abs=1e-15)
    assert out[3] == 1.0
    # Midway between the deepest points: 0.5 along the centre line, i.e. (0.3, 0.4) * 0.5.
    np.testing.assert_allclose(out[4:6], [0.15, 0.2], atol=1e-15)
    assert collide_circles(0.6 + 5e-6, 0.0, 0.3, 0.0, 0.0, 0.3, TOL, out)
    assert out[2] == pytest.approx(-5e-6, abs=1e-15)
    assert not collide_circles(0.6 + 2e-5, 0.0, 0.3, 0.0, 0.0, 0.3, TOL, out)


def test_circle_polygon_face_region():
    out = np.zeros(OUT_LEN)
    # Circle of radius 0.1 above the top face of a 0.4 box, 0.02 deep, off to one side.
    assert collide_circle_polygon(0.15, 0.28, 0.1, square(0, 0), 4, TOL, out)
    np.testing.assert_allclose(out[:2], [0.0, 1.0], atol=1e-15)
    assert out[2] == pytest.approx(0.02, abs=1e-14)
    np.testing.assert_allclose(out[4:6], [0.15, 0.19], atol=1e-14)


def test_circle_polygon_vertex_region():
    out = np.zeros(OUT_LEN)
    d = 0.1 - 0.01  # centre 0.09 from the corner (0.2, 0.2) along the diagonal
    c = 0.2 + d / math.sqrt(2)
    assert collide_circle_polygon(c, c, 0.1, square(0, 0), 4, TOL, out)
    np.testing.assert_allclose(out[:2], [1 / math.sqrt(2)] * 2, atol=1e-12)
    assert out[2] == pytest.approx(0.01, abs=1e-12)
    # Just outside the corner's reach: no contact, even though the face planes would say so.
    c = 0.2 + (0.1 + 2e-5) / math.sqrt(2)
    assert not collide_circle_polygon(c, c, 0.1, square(0, 0), 4, TOL, out)


def test_circle_centre_inside_polygon_pushed_out_through_nearest_face():
    out = np.zeros(OUT_LEN)
    assert collide_circle_polygon(0.15, 0.0, 0.1, square(0, 0), 4, TOL, out)
    np.testing.assert_allclose(out[:2], [1.0, 0.0], atol=1e-15)
    assert out[2] == pytest.approx(0.15, abs=1e-14)


def test_dispatch_flips_normal_when_polygon_is_a():
    out = np.zeros(OUT_LEN)
    circ = point(0.0, 0.28)
    assert collide(POLYGON, square(0, 0), 4, 0.0, CIRCLE, circ, 1, 0.1, TOL, out, NRM)
    np.testing.assert_allclose(out[:2], [0.0, -1.0], atol=1e-15)  # from the circle toward a
    assert out[2] == pytest.approx(0.02, abs=1e-14)


# ------------------------------------------------------------------------------ segments
def test_segment_is_two_sided():
    seg = segment((-1.0, 0.0), (1.0, 0.0))
    out = np.zeros(OUT_LEN)
    for side in (1.0, -1.0):
        assert collide(CIRCLE, point(0.3, side * 0.09), 1, 0.1, SEGMENT, seg, 2, 0.0, TOL, out,
                       NRM)
        np.testing.assert_allclose(out[:2], [0.0, side], atol=1e-15)
        assert out[2] == pytest.approx(0.01, abs=1e-14)
        hit, pout = polys(square(0.2, side * 0.19), seg, 4, 2)
        assert hit
        np.testing.assert_allclose(pout[:2], [0.0, side], atol=1e-15)
        assert pout[2] == pytest.approx(0.01, abs=1e-14)
        assert pout[3] == 2.0  # a box lying flat on a wall line: two points


def test_segment_end_is_a_vertex_region():
    seg = segment((0.0, -1.0), (0.0, 0.0))
    out = np.zeros(OUT_LEN)
    assert collide(CIRCLE, point(0.06, 0.08), 1, 0.11, SEGMENT, seg, 2, 0.0, TOL, out, NRM)
    np.testing.assert_allclose(out[:2], [0.6, 0.8], atol=1e-12)
    assert out[2] == pytest.approx(0.01, abs=1e-12)
    assert not collide(CIRCLE, point(0.06, 0.08), 1, 0.09, SEGMENT, seg, 2, 0.0, TOL, out, NRM)
