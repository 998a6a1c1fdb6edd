"""sfm against IR-SIM's social force model, per object (social_force_model) and as a group
(SocialForceModelBatch, social groups included), and its analytic limits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from push_envs.physics.behaviours.layout import CTL_STEP

PARAMS = {"vmax": 0.9, "neighbor_threshold": 4.0, "force_factor_social": 5.0,
          "force_factor_obstacle": 3.0, "gamma": 0.5, "sigma_obstacle": 0.6,
          "safety_radius": 0.05, "lambda_importance": 1.5, "n_angular": 1.8,
          "n_velocity": 2.6, "relaxation_time": 0.4}


def _rows(w, names, kin):
    """IR-SIM's rvo states [x, y, vx, vy, r + 0.1, vx_des, vy_des, theta] of ``names``."""
    out = []
    for n in names:
        i = w.index(n)
        x, y, th = w.state(n)[0, :3]
        d0, d1 = w.drv[0, i]
        c, s = math.cos(th), math.sin(th)
        v = (c * d0 - s * d1, s * d0 + c * d1) if kin == "omni" else (c * d0, s * d0)
        gx, gy = w.goal(n)[0, :2]
        b = math.atan2(gy - y, gx - x)
        # IR-SIM's desired_omni_vel: the linear limit on both axes (diff), or each axis's
        vel_max = w.scene.spec.bodies[i].vel_max
        sy = vel_max[0] if kin == "diff" else vel_max[1]
        des = (vel_max[0] * math.cos(b), sy * math.sin(b)) \
            if math.hypot(gx - x, gy - y) > 0.1 else (0.0, 0.0)
        out.append([x, y, v[0], v[1], w.behaviours.arrays.bf[i, 3] + 0.1, des[0], des[1], th])
    return out


def _to_command(w, name, kin, vx, vy):
    from irsim.util.util import vel_world2diff
    from irsim.util.util import vel_world2omni

    th = w.state(name)[0, 2]
    body = w.scene.spec.bodies[w.index(name)]
    if kin == "diff":
        cmd = vel_world2diff(th, [vx, vy], w_max=body.vel_max[1], guarantee_time=w.dt,
                             tolerance=0.02)[:, 0]
    else:
        cmd = vel_world2omni(th, np.array([[vx], [vy]]))[:, 0]
    return np.clip(cmd, body.vel_min, body.vel_max)


def _crowd(bw, kin, rng, n, group=None):
    make = bw.diff if kin == "diff" else bw.omni
    robots = []
    for i in range(n):
        x, y = rng.uniform(-2.5, 2.5, 2)
        extra = {"group": 3, "group_behavior": group} if group else \
            {"behavior": {"name": "sfm", **PARAMS}}
        robots.append(make(f"p{i}", float(x), float(y), float(rng.uniform(-3, 3)),
                           radius=0.2, vel_min=[-1.5, -3], vel_max=[1.5, 3],
                           goal=[float(v) for v in rng.uniform(-6, 6, 2)] + [0.0], **extra))
    # the wall at the origin, so its vertices are the segment IR-SIM's functions are given
    # below (without a state a body stands at IR-SIM's default [1, 1, 0])
    walls = [{"name": "wall", "shape": {"name": "linestring", "vertices": [[-6, 3], [6, 3]]},
              "static": True, "state": [0.0, 0.0, 0.0]},
             {"name": "post", "shape": {"name": "circle", "radius": 0.3}, "state": [4, -4, 0]}]
    return bw.world(robots, walls)


@pytest.mark.parametrize("kin", ["diff", "omni"])
def test_sfm_command_is_irsims(bw, irsim, kin):
    from irsim.lib.behavior.behavior_methods import SFMVelocity

    rng = np.random.default_rng(3)
    done = 0
    for _ in range(40):
        try:
            w = _crowd(bw, kin, rng, int(rng.integers(1, 6)))
        except ValueError:
            continue
        n = sum(1 for b in w.scene.spec.bodies if b.role == "robot")
        w.drv[0, :n] = rng.uniform(-1, 1, (n, 2))
        w.behaviours.run(w, CTL_STEP, np.array([0]))
        names = [f"p{i}" for i in range(n)]
        rows = _rows(w, names, kin)
        neighbours = [r[:5] for r in rows[1:]] + [[4.0, -4.0, 0.0, 0.0, 0.3 + 0.1]]
        vx, vy = SFMVelocity(rows[0], neighbours, [[-6, 3, 6, 3]], step_time=w.dt, **PARAMS)
        np.testing.assert_allclose(w.cmd[0, 0], _to_command(w, "p0", kin, vx, vy), rtol=0,
                                   atol=1e-12)
        done += 1
    assert done > 30


@pytest.mark.parametrize("kin", ["diff", "omni"])
def test_sfm_group_is_irsims_batch(bw, irsim, kin):
    from irsim.lib.algorithm.social_force_model import SocialForceModelBatch

    group = {"name": "sfm", **PARAMS, "social_groups": [[0, 1, 2], [3, 4]],
             "force_factor_gaze": 2.0, "gaze_vision_angle": 80.0}
    rng = np.random.default_rng(4)
    done = 0
    for _ in range(30):
        try:
            w = _crowd(bw, kin, rng, 6, group=group)
        except ValueError:
            continue
        w.drv[0, :6] = rng.uniform(-1, 1, (6, 2))
        w.behaviours.run(w, CTL_STEP, np.array([0]))
        names = [f"p{i}" for i in range(6)]
        states = np.array(_rows(w, names, kin))
        des = states[:, 5:7]
        norm = np.hypot(des[:, 0], des[:, 1])
        states[norm > 1e-9, 5:7] = PARAMS["vmax"] * des[norm > 1e-9] / norm[norm > 1e-9, None]
        params = {k: v for k, v in group.items() if k not in ("name", "neighbor_threshold")}
        batch = SocialForceModelBatch(states, [[4.0, -4.0, 0.0, 0.0, 0.4]], [[-6, 3, 6, 3]],
                                      step_time=w.dt, neighbor_range=PARAMS["neighbor_threshold"],
                                      **params)
        vel = batch.cal_vel()
        for k, n in enumerate(names):
            np.testing.assert_allclose(w.cmd[0, k], _to_command(w, n, kin, *vel[k]), rtol=0,
                                       atol=1e-12)
        done += 1
    assert done > 20


def test_desired_force_alone_relaxes_toward_vmax(bw):
    """No neighbour, no wall: v' = v + dt (v0 e - v) / tau, capped at vmax (omni: exact)."""
    w = bw.world([bw.omni("p", 0, 0, goal=[10, 0, 0], vel_max=[2, 2], vel_min=[-2, -2],
                          behavior={"name": "sfm", "vmax": 1.0, "relaxation_time": 0.5})],
                 collision_mode="stop")
    v = 0.0
    for _ in range(6):
        w.step()
        v = v + 0.1 * (1.0 - v) / 0.5
        assert w.drive_state("p")[0, 0] == pytest.approx(v, abs=1e-12)
        assert w.drive_state("p")[0, 1] == pytest.approx(0.0, abs=1e-12)
