"""Joints of the static geometry (physics/joints.py, narrowphase.smooth): where static pieces
meet, a body meets their union, not each piece alone.

Scene build: the free sectors around each vertex that another static piece touches, and the
faces other pieces cover. Contacts: a body slides across a joint as across one piece (no
"ghost" bump), and a thin wedge cannot be squeezed out through a corner.

Units: metres, seconds, radians.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from push_envs.physics import joints
from push_envs.physics.jit import python_entry
from push_envs.physics.layout import JK_CLOSED
from push_envs.physics.layout import JK_PLAIN
from push_envs.physics.layout import JK_SECTORS
from push_envs.physics.layout import JV_KIND
from push_envs.physics.layout import JV_NSEC
from push_envs.physics.layout import JV_STRIDE
from push_envs.physics.layout import JV_WIDTH
from push_envs.physics.layout import OUT_LEN
from push_envs.physics.layout import PFL_DEPTH
from push_envs.physics.layout import PFL_NX
from push_envs.physics.layout import PFL_NY
from push_envs.physics.layout import PFL_P1X
from push_envs.physics.layout import PFL_P1Y
from push_envs.physics.layout import PS_DIRTY
from push_envs.physics.layout import PS_INNER
from push_envs.physics.layout import PS_JOINT
from push_envs.physics.layout import PS_JVERTS
from push_envs.physics.layout import PS_NRM
from push_envs.physics.layout import PS_SMOOTH
from push_envs.physics.narrowphase import CIRCLE
from push_envs.physics.narrowphase import MAX_VERTS
from push_envs.physics.narrowphase import POLYGON
from push_envs.physics.narrowphase import collide
from push_envs.physics.narrowphase import smooth


def _statics(scn, obstacles):
    """The compiled scene of ``obstacles`` (static ones) beside a far-away robot."""
    return scn.world([scn.robot("r", 50.0, 50.0, radius=0.1)], obstacles).scene


def _vertex(scene, q, i):
    """Vertex i of static piece q: (kind, [(start angle, span, convex)] in degrees)."""
    at = PS_JOINT + JV_STRIDE * i
    row = scene.sflt[q]
    out = []
    for k in range(int(row[at + JV_NSEC])):
        c = at + 2 + JV_WIDTH * k
        a0 = math.degrees(math.atan2(row[c + 1], row[c])) % 360.0
        a1 = math.degrees(math.atan2(row[c + 3], row[c + 2])) % 360.0
        span = (a1 - a0) % 360.0 or 360.0
        out.append((round(a0, 6), round(span, 6), bool(row[c + 4])))
    return int(row[at + JV_KIND]), sorted(out)


def _piece_at(scene, x, y):
    """The static piece with a vertex at (x, y), and that vertex's index."""
    for q in range(len(scene.sint)):
        for i in range(int(scene.sint[q, 1])):
            if np.allclose(scene.svert[q, i], (x, y), atol=1e-12):
                return q, i
    raise AssertionError((x, y))


# ------------------------------------------------------------------------ at scene build
def test_two_segments_meeting_at_a_corner(scn):
    scene = _statics(scn, [scn.line_wall("top", (2.0, 0.0), (0.0, 0.0)),
                           scn.line_wall("left", (0.0, 0.0), (0.0, -2.0))])
    q, i = _piece_at(scene, 0.0, 0.0)
    # the inside quadrant (90 degrees: concave) and the outside (270: convex)
    assert _vertex(scene, q, i) == (JK_SECTORS, [(0.0, 270.0, True), (270.0, 90.0, False)])
    far_q, far_i = _piece_at(scene, 2.0, 0.0)
    assert _vertex(scene, far_q, far_i)[0] == JK_PLAIN
    assert scene.sflt[q, PS_SMOOTH] == 1.0 and scene.sflt[q, PS_INNER] == 0.0


def test_collinear_segments_make_a_flat_joint(scn):
    scene = _statics(scn, [scn.line_wall("a", (-1.0, 0.0), (0.0, 0.0)),
                           scn.line_wall("b", (0.0, 0.0), (1.0, 0.0))])
    q, i = _piece_at(scene, 0.0, 0.0)
    assert _vertex(scene, q, i) == (JK_SECTORS, [(0.0, 180.0, True), (180.0, 180.0, True)])


def test_two_boxes_meeting_at_a_point_leave_two_concave_quadrants(scn):
    scene = _statics(scn, [scn.box("top", 0.5, 0.05, length=1.0, width=0.1, static=True),
                           scn.box("left", -0.05, -0.5, length=0.1, width=1.0, static=True)])
    q, i = _piece_at(scene, 0.0, 0.0)
    assert _vertex(scene, q, i) == (JK_SECTORS, [(90.0, 90.0, False), (270.0, 90.0, False)])


def test_boxes_side_by_side_cover_each_others_faces(scn):
    # a floor of three 0.1 m cells: the shared faces are inner; the joints' tops are flat
    scene = _statics(scn, [scn.box(f"c{k}", 0.05 + 0.1 * k, -0.05, length=0.1, width=0.1,
                                   static=True) for k in range(3)])
    inner = [int(scene.sflt[q, PS_INNER]) for q in range(3)]
    # faces: 0 bottom, 1 right, 2 top, 3 left (CCW from the bottom-left vertex)
    assert inner == [0b0010, 0b1010, 0b1000]
    q, i = _piece_at(scene, 0.1, 0.0)
    assert _vertex(scene, q, i) == (JK_SECTORS, [(0.0, 180.0, True)])


def test_a_vertex_inside_another_piece_or_cut_four_ways_is_closed(scn):
    scene = _statics(scn, [scn.box("big", 0.0, 0.0, length=1.0, width=1.0, static=True),
                           scn.box("small", 0.6, 0.6, length=0.4, width=0.4, static=True)])
    q, i = _piece_at(scene, 0.4, 0.4)  # the small box's corner, inside the big one
    assert _vertex(scene, q, i)[0] == JK_CLOSED
    scene = _statics(scn, [scn.line_wall("h", (-1.0, 0.0), (1.0, 0.0)),
                           scn.line_wall("v1", (0.0, 0.0), (0.0, 1.0)),
                           scn.line_wall("v2", (0.0, 0.0), (0.0, -1.0))])
    q, i = _piece_at(scene, 0.0, 1.0)
    assert _vertex(scene, q, i)[0] == JK_PLAIN
    q, i = _piece_at(scene, 0.0, 0.0)
    assert _vertex(scene, q, i)[0] == JK_CLOSED  # four sectors, more than a row keeps


def test_a_lone_piece_is_left_as_it_was(scn):
    scene = _statics(scn, [scn.box("wall", 0.0, 0.0, length=1.0, width=0.1, static=True)])
    assert np.all(scene.sflt[:, PS_SMOOTH:] == 0.0)


# ------------------------------------------------------------------------ contacts
def _floor(scn, pieces, kind):
    """A floor whose top is the line y = 0 from x = -2 to 2, in ``pieces`` equal parts."""
    xs = np.linspace(-2.0, 2.0, pieces + 1)
    if kind == "segments":
        return [scn.line_wall(f"f{i}", (xs[i], 0.0), (xs[i + 1], 0.0)) for i in range(pieces)]
    return [scn.box(f"f{i}", 0.5 * (xs[i] + xs[i + 1]), -0.05, length=xs[1] - xs[0],
                    width=0.1, static=True) for i in range(pieces)]


def _slide(scn, floor, body):
    w = scn.world(obstacles=floor + [body], step_time=0.05, friction=0.0, restitution=0.0)
    for _ in range(20):
        w.step()
    return w.state(body["name"])[0], w.velocity(body["name"])[0]


@pytest.mark.parametrize("pieces", [2, 10, 40])
@pytest.mark.parametrize("kind", ["boxes", "segments"])
def test_a_box_slides_across_joints_as_across_one_piece(scn, kind, pieces):
    # 3 m/s, 0.15 m a step from x = -1.5: its leading face lands exactly on a joint. Alone,
    # the next piece's corner was a vertex inside the box: the box was stopped, kicked
    # 0.77-1.2 m off the floor and spun (-4 to -7 rad).
    box = scn.box("box", -1.5, 0.15, length=0.3, width=0.3, mass=1.0, velocity=[3.0, 0.0])
    state, vel = _slide(scn, _floor(scn, pieces, kind), box)
    one, one_vel = _slide(scn, _floor(scn, 1, kind), box)
    np.testing.assert_allclose(one, [1.5, 0.15, 0.0], atol=1e-12)
    np.testing.assert_allclose(state, one, atol=1e-9)
    np.testing.assert_allclose(vel, one_vel, atol=1e-9)


def _land(scn, pieces, kind, size, velocity, dt, friction, theta=0.0):
    """A box of side ``size`` [m] dropped 5 cm above the floor of ``pieces`` pieces with
    ``velocity`` [m/s], its pose and velocity after 0.8 s."""
    box = scn.box("box", -1.5, size / 2 + 0.05, theta=theta, length=size, width=size,
                  mass=1.0, velocity=list(velocity))
    w = scn.world(obstacles=_floor(scn, pieces, kind) + [box], step_time=dt,
                  friction=friction, restitution=0.0)
    for _ in range(round(0.8 / dt)):
        w.step()
    return np.r_[w.state("box")[0], w.velocity("box")[0]]


@pytest.mark.parametrize("seed", range(12))
def test_a_box_landing_flat_on_a_floor_of_cells_slides_as_on_one_piece(scn, seed):
    # A box lands flat on a floor of 2, 10 or 40 cells (boxes or segments) while sliding,
    # and slides on. SAT clipped each cell's patch to its face: a body across several cells
    # got patches mostly off its centre, which no push can clear without turning it, and
    # the turn grew as it slid (11 of 60 such trials turned, up to 0.53 rad in 0.8 s; 1.26
    # rad before the joints). Along a face that runs on into the next cell's, the patch is
    # now the union's, as one piece gives it.
    rng = np.random.default_rng(seed)
    kind = ("boxes", "segments")[seed % 2]
    pieces = int(rng.choice([2, 10, 40]))
    velocity = (rng.uniform(0.5, 4.0), -rng.uniform(0.5, 3.0))
    dt = float(rng.choice([0.02, 0.05, 0.1]))
    size = float(rng.uniform(0.1, 0.4))
    friction = float(rng.choice([0.0, 0.3]))
    one = _land(scn, 1, kind, size, velocity, dt, friction)
    many = _land(scn, pieces, kind, size, velocity, dt, friction)
    assert abs(one[2]) < 1e-12
    np.testing.assert_allclose(many, one, atol=1e-9)


@pytest.mark.xfail(strict=True, reason="a known defect: a box landing tilted on a floor of "
                   "cells can keep a spin it does not keep on one piece (9 of 120 random "
                   "trials with a tilt of up to 0.3 rad differ by more than 1e-6)")
def test_a_box_landing_tilted_on_a_floor_of_segments_settles_as_on_one_piece(scn):
    # A 0.156 m box tilted 0.104 rad lands at (3.92, -1.97) m/s, dt 0.1 s, frictionless: on
    # one segment it settles flat and still; on 40 it keeps turning at -0.15 rad/s.
    args = (0.15625, (3.92393, -1.97468), 0.1, 0.0, 0.10352)
    np.testing.assert_allclose(_land(scn, 40, "segments", *args),
                               _land(scn, 1, "segments", *args), atol=1e-6)


def test_a_disc_touching_a_flat_joint_is_pushed_along_the_floor_not_back(scn):
    # A disc over piece 1, its rim over piece 2's corner V = (0, 0): alone, piece 2 pushes it
    # from V (up and back); in the union V lies on a flat floor, and the push is straight up,
    # by the disc's depth below the floor's line.
    scene = _statics(scn, [scn.box(f"c{k}", -0.05 + 0.1 * k, -0.05, length=0.1, width=0.1,
                                   static=True) for k in range(2)])
    q, _ = _piece_at(scene, 0.1, 0.0)  # piece 2: [0, 0.1] x [-0.1, 0]
    vb = scene.svert[q]
    nb = int(scene.sint[q, 1])
    va = np.zeros((MAX_VERTS, 2))
    va[0] = (-0.01, 0.095)
    out = np.zeros(OUT_LEN)
    nrm = np.zeros((2, MAX_VERTS, 2))
    assert python_entry(collide)(CIRCLE, va, 1, 0.1, POLYGON, vb, nb, 0.0, 1e-5, out, nrm)
    assert out[PFL_NX] == pytest.approx(-0.01 / math.hypot(0.01, 0.095))  # from V: back
    assert python_entry(smooth)(CIRCLE, va, 1, 0.1, vb, nb, 1e-5, out, nrm, scene.sflt, q)
    assert (out[PFL_NX], out[PFL_NY]) == (0.0, 1.0)
    assert out[PFL_DEPTH] == pytest.approx(0.005, abs=1e-15)
    assert (out[PFL_P1X], out[PFL_P1Y]) == pytest.approx((-0.01, -0.0025), abs=1e-15)


def test_python_and_compiled_joints_agree(scn):
    # static_joints runs as Python for a few pieces and compiled for a map: one code, two
    # ways to run it, the same numbers (a map of random cells, with segments through it).
    rng = np.random.default_rng(3)
    occ = rng.uniform(size=(12, 12)) < 0.4
    occ[5, :] = True
    lines = [scn.line_wall("l0", (0.0, 0.6), (1.2, 0.6)),
             scn.line_wall("l1", (0.3, 0.0), (0.3, 0.6))]
    scene = scn.world([scn.robot("r", 5.0, 5.0, radius=0.1)], lines, obstacle_map=occ,
                      map_resolution=0.1).scene
    assert len(scene.sint) > 10
    args = (scene.sint, scene.svert, None, scene.grid, scene.gstart, scene.gitem)
    py = scene.sflt.copy()
    nb = scene.sflt.copy()
    joints._joints(args[0], args[1], py, *args[3:])
    joints._joints_compiled(args[0], args[1], nb, *args[3:])
    np.testing.assert_array_equal(py, nb)
    np.testing.assert_array_equal(py, scene.sflt)
    assert py[:, PS_SMOOTH].sum() > 10


def test_an_arena_of_overlapping_walls_checks_no_contact_on_its_inner_faces(scn):
    # Four walls overlapping at the corners (the tasks' arenas): their joints all lie on the
    # outer side, so a contact on a face toward the arena is never checked (the narrow phase's
    # test reads PS_DIRTY), and every face away from it ends at a joint with its outer side
    # free: checked.
    walls = [scn.box("s", 2.0, -0.05, length=4.2, width=0.1, static=True),
             scn.box("n", 2.0, 4.05, length=4.2, width=0.1, static=True),
             scn.box("w", -0.05, 2.0, length=0.1, width=4.2, static=True),
             scn.box("e", 4.05, 2.0, length=0.1, width=4.2, static=True)]
    scene = _statics(scn, walls)
    for q in range(4):
        v = scene.svert[q, :4]
        toward = [bool(np.dot(scene.sflt[q, PS_NRM + 2 * i:PS_NRM + 2 * i + 2],
                              np.array([2.0, 2.0]) - 0.5 * (v[i] + v[(i + 1) % 4])) > 0.0)
                  for i in range(4)]
        dirty = int(scene.sflt[q, PS_DIRTY])
        assert [bool(dirty >> i & 1) for i in range(4)] == [not t for t in toward]
        assert int(scene.sflt[q, PS_JVERTS]) == 0b1111 and scene.sflt[q, PS_INNER] == 0.0
