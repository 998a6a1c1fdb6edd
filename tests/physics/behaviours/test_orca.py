"""orca against RVO2 (pyrvo, what IR-SIM's group orca runs): the velocities of random crowds
with obstacle edges, and the stage's group behaviour as IR-SIM drives pyrvo."""

from __future__ import annotations

import math

import numpy as np
import pytest

from push_envs.physics.behaviours.layout import CTL_STEP
from push_envs.physics.behaviours.orca import obstacle_array
from push_envs.physics.behaviours.orca import orca_velocities

# pyrvo computes in float32: velocities agree to its rounding
TOL = 2e-4


def _overlapping(pos, rad, polys):
    gap = np.hypot(*(pos[:, None] - pos[None]).transpose(2, 0, 1)) - rad[:, None] - rad[None]
    np.fill_diagonal(gap, 1.0)
    if gap.min() < 0:
        return True
    import shapely

    for p in polys:
        g = shapely.Polygon(p) if len(p) > 2 else shapely.LineString(p)
        if any(g.distance(shapely.Point(q)) < r for q, r in zip(pos, rad, strict=True)):
            return True
    return False


def _crowd(rng):
    """A random crowd: positions, velocities, radii, speed caps, preferred velocities, and
    RVO2's neighborDist, maxNeighbors, horizons and time step."""
    m = int(rng.integers(2, 20))
    return (rng.uniform(-6, 6, (m, 2)), rng.uniform(-1, 1, (m, 2)), rng.uniform(0.1, 0.4, m),
            rng.uniform(0.5, 2, m), rng.uniform(-2, 2, (m, 2)),
            (8.0, int(rng.integers(1, 12)), 3.0, 2.0, 0.1))


def _rvo2(pyrvo, pos, vel, rad, vmax, pref, params, polys=()):
    """One pyrvo step of the crowd: (its new velocities (m, 2), the simulator), or None when
    RVO2's obstacle tree split an edge (other edges than ours)."""
    nd, maxn, th, tho, dt = params
    sim = pyrvo.RVOSimulator()
    sim.set_time_step(dt)
    for i in range(len(pos)):
        sim.add_agent(pos[i].tolist(), nd, maxn, th, tho, float(rad[i]), float(vmax[i]),
                      vel[i].tolist())
        sim.set_agent_pref_velocity(i, pref[i].tolist())
    for p in polys:
        sim.add_obstacle([list(map(float, v)) for v in p])
    sim.process_obstacles()
    if sim.get_num_obstacle_vertices() != sum(len(p) for p in polys):
        return None
    sim.do_step()
    return np.array([sim.get_agent_velocity(i).to_tuple() for i in range(len(pos))]), sim


def test_velocities_are_rvo2s():
    pyrvo = pytest.importorskip("pyrvo")
    rng = np.random.default_rng(5)
    checked = with_obstacles = 0
    for trial in range(600):
        pos, vel, rad, vmax, pref, params = _crowd(rng)
        polys = []
        for _ in range(trial % 3):
            c = rng.uniform(-6, 6, 2)
            s = rng.uniform(0.3, 1.5)
            polys.append([c + [-s, -s], c + [s, -s], c + [s, s], c + [-s, s]]
                         if rng.random() < 0.5 else [c, c + rng.uniform(-2, 2, 2)])
        if _overlapping(pos, rad, polys):
            continue  # RVO2's answer to an overlap is ill-conditioned (float32 decides)
        got = _rvo2(pyrvo, pos, vel, rad, vmax, pref, params, polys)
        if got is None:
            continue
        ref, sim = got
        out = orca_velocities(pos, vel, rad, vmax, pref, obstacle_array(polys), *params)
        np.testing.assert_allclose(out, ref, rtol=0, atol=TOL)
        checked += 1
        with_obstacles += any(sim.get_agent_num_obstacle_neighbors(i) for i in range(len(pos)))
    assert checked > 250 and with_obstacles > 100


def test_velocities_are_rvo2s_bit_for_bit_without_obstacles():
    """Agents alone (IR-SIM's group orca gives RVO2 no obstacles): the half-planes and linear
    programs in float32, in RVO2's order, and the neighbours in its k-d tree's order, give
    its velocities to the bit, overlapping agents included."""
    pyrvo = pytest.importorskip("pyrvo")
    rng = np.random.default_rng(11)
    for _ in range(300):
        pos, vel, rad, vmax, pref, params = _crowd(rng)
        ref, _sim = _rvo2(pyrvo, pos, vel, rad, vmax, pref, params)
        out = orca_velocities(pos, vel, rad, vmax, pref, obstacle_array([]), *params)
        np.testing.assert_array_equal(out, ref)


def test_lone_agent_takes_its_preferred_velocity_capped():
    out = orca_velocities(np.zeros((1, 2)), np.zeros((1, 2)), np.array([0.5]), np.array([1.0]),
                          np.array([[3.0, 4.0]]), obstacle_array([]), 10.0, 10, 5.0, 5.0, 0.1)
    # RVO2's float32: (3, 4) normalised by the reciprocal of its length, times the cap
    inv = np.float32(1.0) / np.sqrt(np.float32(25.0))
    np.testing.assert_array_equal(out, [[np.float32(3.0) * inv, np.float32(4.0) * inv]])
    assert abs(out[0, 0] - 0.6) < 1e-7 and abs(out[0, 1] - 0.8) < 1e-7


def test_head_on_pair_passes_symmetrically():
    """Two agents on one line toward each other: each takes half the avoidance, mirror
    images of each other."""
    pos = np.array([[-3.0, 0.0], [3.0, 0.0]])
    pref = np.array([[1.0, 0.0], [-1.0, 0.0]])
    out = orca_velocities(pos, pref.copy(), np.array([0.5, 0.5]), np.array([1.0, 1.0]), pref,
                          obstacle_array([]), 10.0, 10, 5.0, 5.0, 0.1)
    np.testing.assert_allclose(out[0], -out[1], rtol=0, atol=1e-15)
    assert out[0, 0] < 1.0 and out[0, 0] > 0.5  # slows, keeps going


@pytest.mark.parametrize("kin", ["diff", "omni"])
def test_group_orca_is_irsims(bw, kin):
    """The stage's orca group: IR-SIM's preferred velocities, radii and caps, RVO2's step
    from each member's last orca velocity, IR-SIM's conversion to commands."""
    pyrvo = pytest.importorskip("pyrvo")
    params = {"name": "orca", "neighborDist": 6.0, "maxNeighbors": 4, "timeHorizon": 4.0,
              "timeHorizonObst": 2.0, "safe_radius": 0.2, "maxSpeed": 1.2}
    make = bw.diff if kin == "diff" else bw.omni
    rng = np.random.default_rng(6)
    robots = []
    for k in range(8):
        a = 2 * math.pi * k / 8 + rng.uniform(-0.1, 0.1)
        robots.append(make(f"a{k}", 4 * math.cos(a), 4 * math.sin(a), float(rng.uniform(-3, 3)),
                           radius=0.3, vel_min=[-2, -2], vel_max=[1.5, 1.0], group=1,
                           group_behavior=params,
                           goal=[-4 * math.cos(a), -4 * math.sin(a), 0.0]))
    w = bw.world(robots)
    ovel = rng.uniform(-0.8, 0.8, (8, 2))
    w.behaviours.arrays.ovel[0, :8] = ovel
    w.behaviours.run(w, CTL_STEP, np.array([0]))
    # IR-SIM's OrcaGroupBehavior, on pyrvo
    from irsim.util.util import vel_world2diff
    from irsim.util.util import vel_world2omni

    speed = 1.2 if kin == "diff" else 1.0  # diff: vel_max[0] (1.5) capped; omni: min(1.5, 1)
    sim = pyrvo.RVOSimulator()
    sim.set_time_step(w.dt)
    for k in range(8):
        x, y, th = w.state(f"a{k}")[0, :3]
        sim.add_agent([x, y], 6.0, 4, 4.0, 2.0, 0.3 + 0.2, speed, ovel[k].tolist())
        gx, gy = w.goal(f"a{k}")[0, :2]
        b = math.atan2(gy - y, gx - x)
        if kin == "diff":
            pref = [speed * math.cos(b), speed * math.sin(b)]
        else:
            d = (1.5 * math.cos(b), 1.0 * math.sin(b))
            pref = [speed * d[0] / math.hypot(*d), speed * d[1] / math.hypot(*d)]
        sim.set_agent_pref_velocity(k, pref)
    sim.do_step()
    for k in range(8):
        th = w.state(f"a{k}")[0, 2]
        v = sim.get_agent_velocity(k).to_tuple()
        np.testing.assert_allclose(w.behaviours.arrays.ovel[0, k], v, rtol=0, atol=TOL)
        if kin == "diff":
            cmd = vel_world2diff(th, list(v), w_max=1.0, guarantee_time=w.dt)[:, 0]
        else:
            cmd = vel_world2omni(th, list(v))[:, 0]
        np.testing.assert_allclose(w.cmd[0, k], np.clip(cmd, [-2, -2], [1.5, 1.0]), rtol=0,
                                   atol=5 * TOL / w.dt)
