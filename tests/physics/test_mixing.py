"""Friction and restitution mixing (physics/mixing.py): one rule per world, built in or a
user's compiled function, checked against hand-computed coefficients.

Restitution is measured as the rebound ratio of a disc thrown at a wall on a frictionless
floor (the engine matches e v to 1e-4, docs/physics.md); friction as the wall's
friction-to-normal ratio while a rotation-locked block slides along it, pushed at 45 degrees
from the wall normal (outside every cone below, so the ratio is the coefficient itself), in
its second step (later the block runs ahead of the wall's friction).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import cfunc

from push_envs.physics import SceneError
from push_envs.physics.jit import python_entry
from push_envs.physics.mixing import MIX_GEOMETRIC
from push_envs.physics.mixing import MIX_MAX
from push_envs.physics.mixing import MIX_MEAN
from push_envs.physics.mixing import MIX_MIN
from push_envs.physics.mixing import MIX_SIGNATURE
from push_envs.physics.mixing import MIX_USER
from push_envs.physics.mixing import mix

BOX_MU, WALL_MU = 0.5, 0.1
DISC_E, WALL_E = 1.0, 0.2
FRICTION = {"mean": 0.3, "geometric": math.sqrt(0.05), "min": 0.1, "max": 0.5}
RESTITUTION = {"mean": 0.6, "geometric": math.sqrt(0.2), "min": 0.2, "max": 1.0}


@cfunc(MIX_SIGNATURE)
def _seven_tenths(a, ia, b, ib):
    return 0.7


@cfunc(MIX_SIGNATURE)
def _by_body(a, ia, b, ib):
    # A material table keyed by the world index: the wall (index 2 below) counts as 0.9.
    wa = 0.9 if ia == 2 else a
    wb = 0.9 if ib == 2 else b
    return wa * wb


@cfunc(MIX_SIGNATURE)
def _nan(a, ia, b, ib):
    return math.nan


@cfunc(MIX_SIGNATURE)
def _huge(a, ia, b, ib):
    return 5.0


_MIX = python_entry(mix)  # compiled on its first call


@pytest.mark.parametrize("rule, a, b, want", [
    (MIX_MEAN, 0.2, 0.8, 0.5), (MIX_GEOMETRIC, 0.2, 0.8, 0.4), (MIX_MIN, 0.2, 0.8, 0.2),
    (MIX_MAX, 0.2, 0.8, 0.8), (MIX_GEOMETRIC, 0.0, 0.8, 0.0), (MIX_MEAN, 0.0, 0.0, 0.0),
])
def test_builtin_rules_by_hand(rule, a, b, want):
    assert _MIX(rule, 0, a, 3, b, 4) == pytest.approx(want, abs=1e-15)


def test_user_rule_is_called_with_both_bodies():
    assert _MIX(MIX_USER, _by_body.address, 0.5, 2, 0.5, 7) == \
        pytest.approx(0.45, abs=1e-15)


def _bounce(scn, **world):
    w = scn.world(obstacles=[
        scn.disc("a", 0.0, 0.0, mass=1.0, velocity=[1.0, 0.0], restitution=DISC_E),
        scn.wall("wall", 0.45, 0.0, restitution=WALL_E)], friction=0.0, **world)
    scn.run(w, 10)
    return -float(w.velocity("a")[0, 0])


@pytest.mark.parametrize("rule", sorted(RESTITUTION))
def test_restitution_rule_from_the_scene(scn, rule):
    assert _bounce(scn, restitution_mixing=rule) == pytest.approx(RESTITUTION[rule], abs=1e-4)


def test_restitution_default_is_the_mean(scn):
    assert _bounce(scn) == pytest.approx(0.6, abs=1e-4)


def _slide_ratio(scn, setup=None, **world):
    robots, obstacles, n = scn.wedge_against_wall(45.0, inertia=1e3, friction=BOX_MU)
    obstacles[1]["friction"] = WALL_MU
    w = scn.world(robots, obstacles, **world)
    if setup is not None:
        setup(w)
    y0 = float(w.state("box")[0, 1])
    scn.run(w, 2, {"robot": n.tolist()})
    assert float(w.state("box")[0, 1]) - y0 > 0.01  # it slides along the wall
    wall = [r for r in w.contacts("box") if r.other == "wall"][0]
    return abs(wall.friction) / wall.force


@pytest.mark.parametrize("rule", sorted(FRICTION))
def test_friction_rule_from_the_scene(scn, rule):
    assert _slide_ratio(scn, friction_mixing=rule) == pytest.approx(FRICTION[rule], rel=1e-3)


@pytest.mark.parametrize("rule", ["geometric", "max"])
def test_friction_rule_from_the_world_setter(scn, rule):
    def setup(w):
        w.friction_mixing = rule
        assert w.friction_mixing == rule

    assert _slide_ratio(scn, setup) == pytest.approx(FRICTION[rule], rel=1e-3)


def test_user_friction_function(scn):
    def setup(w):
        w.friction_mixing = _seven_tenths
        assert w.friction_mixing is _seven_tenths

    assert _slide_ratio(scn, setup) == pytest.approx(0.7, rel=1e-3)


def test_user_function_reads_the_bodies(scn):
    def setup(w):
        assert w.index("wall") == 2
        w.friction_mixing = _by_body

    assert _slide_ratio(scn, setup) == pytest.approx(BOX_MU * 0.9, rel=1e-3)


def test_user_restitution_is_clamped(scn):
    for fn, want in ((_nan, 0.0), (_huge, 1.0)):
        w = scn.world(obstacles=[
            scn.disc("a", 0.0, 0.0, mass=1.0, velocity=[1.0, 0.0]),
            scn.wall("wall", 0.45, 0.0)], friction=0.0)
        w.restitution_mixing = fn
        scn.run(w, 10)
        assert -float(w.velocity("a")[0, 0]) == pytest.approx(want, abs=1e-4)
        assert np.all(np.isfinite(w.vel))


def test_bad_rules_are_refused(scn):
    with pytest.raises(SceneError, match=r"world\.friction_mixing.*unknown mixing rule 'avg'"):
        scn.world(friction_mixing="avg")
    with pytest.raises(SceneError, match=r"world\.restitution_mixing"):
        scn.world(restitution_mixing=1)
    w = scn.world()
    with pytest.raises(ValueError, match="World.friction_mixing: unknown mixing rule"):
        w.friction_mixing = "harmonic"

    @cfunc("float64(float64, float64)")
    def two(a, b):
        return a

    with pytest.raises(ValueError, match="signature"):
        w.restitution_mixing = two
    with pytest.raises(ValueError, match="World.friction_mixing"):
        w.friction_mixing = 0.5
    assert w.friction_mixing == "mean"  # unchanged by the refusals
