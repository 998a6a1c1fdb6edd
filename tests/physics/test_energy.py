"""No energy from contact (velocity_solver.energy_guard): no step of a scene without drives
raises the kinetic energy (translational + rotational) of its bodies, for restitution up to 1,
spin against walls and contacts of three and more bodies.

The spinning box beside a disc is the reported case: with restitution 1 the box, frozen
against the wall by the velocity pass's shock propagation, batted the disc away, and one step
took the scene from 3.33 J to 5.87 J (floor friction 0.5) or 7.58 J (frictionless floor).
The property test throws random bodies (discs, boxes, triangles) at each other and at walls
(thick and thin, axis-aligned and tilted, and zero-thickness segments).

Units: metres, seconds, kilograms, joules.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from push_envs.physics import World

RISE = 1e-9  # [J] largest rise of kinetic energy tolerated in one step (rounding)


def kinetic(w: World, env: int = 0) -> float:
    """Kinetic energy [J] of every movable body of ``env``: 1/2 m v^2 + 1/2 I w^2."""
    m, inertia = w.epar[env, :, 0], w.epar[env, :, 1]
    total = 0.0
    for b in w.scene.movable:
        total += 0.5 * m[b] * float(w.vel[env, b] @ w.vel[env, b])
        total += 0.5 * inertia[b] * float(w.omg[env, b]) ** 2
    return total


def steps_never_gain(w: World, steps: int) -> list[float]:
    """Step ``w`` without commands; assert no step raises the kinetic energy. Returns the
    energies, first to last."""
    energies = [kinetic(w)]
    for _ in range(steps):
        w.step()
        energies.append(kinetic(w))
        assert np.all(np.isfinite(w.pos)) and np.all(np.isfinite(w.vel))
        assert energies[-1] <= energies[-2] + RISE, energies
    return energies


def spinning_box_beside_a_disc(scn, friction: float) -> World:
    """A 0.4 x 0.2 m, 1 kg box spinning at 20 rad/s 5 mm from a wall, a 1 kg disc beside it,
    restitution 1 everywhere (3.33 J, all of it the box's spin)."""
    return scn.world(obstacles=[
        scn.box("box", 0.0, 0.0, -0.05, length=0.4, width=0.2, mass=1.0, omega=-20.0),
        scn.disc("disc", -0.15, 0.22, radius=0.1, mass=1.0),
        scn.wall("wall", 0.255, 0.0, length=0.1, width=4.0)],
        friction=friction, restitution=1.0)


@pytest.mark.parametrize("friction", [0.5, 0.0])
def test_spinning_box_against_a_wall_beside_a_disc_gains_nothing(scn, friction):
    w = spinning_box_beside_a_disc(scn, friction)
    assert kinetic(w) == pytest.approx(0.5 * (1.0 * (0.4 ** 2 + 0.2 ** 2) / 12) * 400)
    energies = steps_never_gain(w, 20)
    assert energies[0] == pytest.approx(10 / 3)
    # The box did hit both: the disc was set moving, and the box lost spin to it.
    assert np.hypot(*w.velocity("disc")[0]) > 0.0 or w.state("disc")[0, 0] != -0.15
    assert abs(w.omega("box")[0]) < 20.0


def test_elastic_head_on_keeps_its_energy(scn):
    # Not held back where no energy is made: two 1 kg discs, e = 1, frictionless floor, swap
    # velocities and keep their 0.5 J.
    w = scn.world(obstacles=[scn.disc("a", 0.0, 0.0, mass=1.0, velocity=[1.0, 0.0]),
                             scn.disc("b", 0.517, 0.0, mass=1.0)],
                  friction=0.0, restitution=1.0)
    energies = steps_never_gain(w, 10)
    assert energies[-1] == pytest.approx(0.5, abs=1e-6)
    assert w.velocity("b")[0, 0] == pytest.approx(1.0, abs=1e-6)


def test_resting_overlap_is_pushed_out_without_speed(scn):
    # Two boxes placed 1 cm into each other from outside the step (set_state): the solve
    # separates them, and the separation is no launch.
    w = scn.world(obstacles=[scn.box("a", 0.0, 0.0, mass=1.0), scn.box("b", 1.0, 0.0, mass=1.0)])
    w.set_state("b", [0.39, 0.0, 0.0])
    steps_never_gain(w, 5)
    assert kinetic(w) == 0.0


# --------------------------------------------------------------------------------------------
# The property: random scenes without drives
# --------------------------------------------------------------------------------------------
CELL = 0.6  # [m] bodies start in cells of a 3 x 3 grid, each inside its own cell
SPAN = 1.5 * CELL  # [m] half-size of the grid; walls start outside it


@st.composite
def body(draw, name: str, cx: float, cy: float) -> dict:
    kind = draw(st.sampled_from(["disc", "box", "triangle"]))
    if kind == "disc":
        r = draw(st.floats(0.02, 0.25))
        shape, reach = {"name": "circle", "radius": r}, r
    elif kind == "box":
        a, b = draw(st.floats(0.02, 0.4)), draw(st.floats(0.02, 0.4))
        shape, reach = {"name": "rectangle", "length": a, "width": b}, math.hypot(a, b) / 2
    else:
        s = draw(st.floats(0.05, 0.4))
        shape = {"name": "polygon", "vertices": [[-s / 2, -s / 3], [s / 2, -s / 3],
                                                 [draw(st.floats(-s / 2, s / 2)), s / 2]]}
        reach = s
    room = max(CELL / 2 - reach, 0.0)
    return {
        "name": name, "shape": shape, "mass": draw(st.floats(0.05, 5.0)),
        "state": [cx + draw(st.floats(-room, room)), cy + draw(st.floats(-room, room)),
                  draw(st.floats(-math.pi, math.pi))],
        "velocity": [draw(st.floats(-4.0, 4.0)), draw(st.floats(-4.0, 4.0))],
        "omega": draw(st.floats(-40.0, 40.0)),
        "restitution": draw(st.floats(0.0, 1.0)), "friction": draw(st.floats(0.0, 1.0)),
    }


@st.composite
def walls(draw) -> list[dict]:
    out = []
    for k in range(draw(st.integers(0, 4))):
        side = draw(st.sampled_from([(1, 0), (-1, 0), (0, 1), (0, -1)]))
        d = SPAN + draw(st.floats(0.0, 0.3))  # the inner face, just outside the grid
        tilt = draw(st.sampled_from([0.0, 0.0, 0.3, -0.3]))
        thin = draw(st.booleans())
        if thin:  # a zero-thickness line, tilted, moved out so it clears the grid
            d += SPAN * abs(math.tan(tilt))
            cx, cy = side[0] * d, side[1] * d
            ux, uy = -side[1] * math.cos(tilt) - side[0] * math.sin(tilt), \
                side[0] * math.cos(tilt) - side[1] * math.sin(tilt)
            # world-frame vertices: the body's origin at [0, 0, 0] (IR-SIM's default state is
            # [1, 1, 0])
            out.append({"name": f"w{k}", "static": True, "state": [0, 0, 0], "shape": {
                "name": "linestring", "vertices": [[cx - 2 * ux, cy - 2 * uy],
                                                   [cx + 2 * ux, cy + 2 * uy]]}})
        else:
            t = draw(st.floats(0.01, 0.3))
            angle = math.atan2(side[1], side[0])
            out.append({"name": f"w{k}", "static": True, "state": [
                side[0] * (d + t / 2), side[1] * (d + t / 2), angle],
                "shape": {"name": "rectangle", "length": t, "width": 4.0}})
    return out


@st.composite
def scenes(draw) -> dict:
    n = draw(st.integers(2, 5))
    cells = draw(st.permutations(range(9)))[:n]
    bodies = [draw(body(f"b{i}", (c % 3 - 1) * CELL, (c // 3 - 1) * CELL))
              for i, c in enumerate(cells)]
    world = {"step_time": draw(st.sampled_from([0.01, 0.05, 0.1])),
             "friction": draw(st.sampled_from([0.0, 0.0, 0.3, 0.5, 1.0])),
             "restitution": draw(st.floats(0.0, 1.0)),
             "friction_mixing": draw(st.sampled_from(["mean", "geometric", "min", "max"])),
             "restitution_mixing": draw(st.sampled_from(["mean", "geometric", "min", "max"]))}
    return {"world": world, "obstacle": bodies + draw(walls())}


def _check(scene: dict) -> None:
    w = World.from_config(scene)
    steps_never_gain(w, 8)


@given(scenes())
def test_no_step_without_drives_gains_kinetic_energy(scene):
    _check(scene)


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None)
@given(scenes())
def test_no_step_without_drives_gains_kinetic_energy_10000(scene):
    _check(scene)
