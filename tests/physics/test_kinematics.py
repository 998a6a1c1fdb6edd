"""Drives and free motion (kinematics.py), unit-tested on the compiled functions and through
World: drive lag, acceleration and grip caps, exact arcs, and coasting under ground friction."""

import math

import numpy as np
import pytest

from push_envs.physics import kinematics
from push_envs.physics.jit import python_entry
from push_envs.physics.kinematics import DRIVE_ACKER
from push_envs.physics.kinematics import DRIVE_DIFF
from push_envs.physics.kinematics import DRIVE_OMNI

# The drives are compiled for compiled callers only; these twins take Python calls.
coast = python_entry(kinematics.coast)
drive_motion = python_entry(kinematics.drive_motion)
drive_twist = python_entry(kinematics.drive_twist)
drive_step = python_entry(kinematics.drive_step)
drive_update = python_entry(kinematics.drive_update)

INF = math.inf
NO_GRIP_CAP = 1e9
G = 9.81


def upd(drive=DRIVE_DIFF, d=(0.0, 0.0), c=(1.0, 0.0), vmin=(-1.0, -1.0), vmax=(1.0, 1.0),
        acc=(INF, INF), tau=0.0, grip=NO_GRIP_CAP, dt=0.1):
    return drive_update(drive, d[0], d[1], c[0], c[1], vmin[0], vmin[1], vmax[0], vmax[1],
                        acc[0], acc[1], tau, grip, dt)


# ------------------------------------------------------------------------------ drive update
def test_no_lag_no_caps_reaches_command_at_once():
    assert upd(c=(0.7, -0.3)) == (0.7, -0.3)


def test_command_clipped_to_velocity_limits():
    assert upd(c=(5.0, -5.0), vmax=(1.5, 2.0), vmin=(-1.0, -0.5)) == (1.5, -0.5)


@pytest.mark.parametrize("tau", [0.05, 0.3, 2.0])
def test_lag_is_exact_exponential(tau):
    dt = 0.1
    d0, d1 = upd(c=(1.0, 0.5), tau=tau, dt=dt)
    f = 1.0 - math.exp(-dt / tau)
    assert d0 == pytest.approx(f, abs=1e-15)
    assert d1 == pytest.approx(0.5 * f, abs=1e-15)
    # Many steps: the first-order response 1 - exp(-t / tau), exactly.
    d = (0.0, 0.0)
    for _ in range(7):
        d = upd(d=d, c=(1.0, 0.0), tau=tau, dt=dt)
    assert d[0] == pytest.approx(1.0 - math.exp(-0.7 / tau), abs=1e-14)


def test_lag_composes_over_substeps():
    one = upd(c=(1.0, 0.4), tau=0.2, dt=0.1)
    half = upd(c=(1.0, 0.4), tau=0.2, dt=0.05)
    two = upd(d=half, c=(1.0, 0.4), tau=0.2, dt=0.05)
    assert two == pytest.approx(one, abs=1e-15)


def test_acceleration_cap_per_component():
    # acce [2 m/s^2, 3 rad/s^2] over 0.1 s: at most 0.2 and 0.3 change.
    d0, d1 = upd(c=(1.0, -1.0), acc=(2.0, 3.0))
    assert (d0, d1) == pytest.approx((0.2, -0.3), abs=1e-15)
    d0, d1 = upd(d=(1.0, 0.0), c=(-1.0, 0.0), acc=(2.0, 3.0))
    assert d0 == pytest.approx(0.8, abs=1e-15)


def test_grip_caps_linear_speed_change_only():
    mu_g = 0.5 * G
    d0, d1 = upd(c=(1.0, 1.0), grip=mu_g)
    assert d0 == pytest.approx(mu_g * 0.1, abs=1e-15)  # 0.4905
    assert d1 == 1.0  # the yaw rate is not grip-limited for a diff drive
    # Braking is capped too.
    d0, _ = upd(d=(1.0, 0.0), c=(0.0, 0.0), grip=mu_g)
    assert d0 == pytest.approx(1.0 - 0.4905, abs=1e-15)


def test_omni_grip_caps_the_vector_and_keeps_direction():
    mu_g = 0.5 * G
    d0, d1 = upd(drive=DRIVE_OMNI, c=(0.8, 0.6), grip=mu_g)
    assert math.hypot(d0, d1) == pytest.approx(mu_g * 0.1, abs=1e-15)
    assert d1 / d0 == pytest.approx(0.6 / 0.8, abs=1e-14)


def test_acker_grip_caps_speed_not_steer():
    d0, d1 = upd(drive=DRIVE_ACKER, c=(1.0, 0.4), grip=0.5 * G)
    assert d0 == pytest.approx(0.4905, abs=1e-15)
    assert d1 == 0.4


# ------------------------------------------------------------------------------ motion
def test_diff_arc_is_exact_and_full_circle_returns_to_start():
    v, w, dt = 0.8, 2 * math.pi / 3.0, 0.1  # one revolution in 3 s = 30 steps
    x = y = th = 0.0
    for _ in range(30):
        dx, dy, dth = drive_motion(DRIVE_DIFF, v, w, th, 1.0, dt)
        x, y, th = x + dx, y + dy, th + dth
    assert abs(x) < 1e-12 and abs(y) < 1e-12
    assert th == pytest.approx(2 * math.pi, abs=1e-12)
    # One step is the chord of the circle of radius v / w.
    r = v / w
    dx, dy, dth = drive_motion(DRIVE_DIFF, v, w, 0.3, 1.0, dt)
    assert dx == pytest.approx(r * (math.sin(0.3 + w * dt) - math.sin(0.3)), abs=1e-15)
    assert dy == pytest.approx(r * (math.cos(0.3) - math.cos(0.3 + w * dt)), abs=1e-15)
    # Any single step lies on the circle: the chord length is 2 r sin(w dt / 2).
    assert math.hypot(dx, dy) == pytest.approx(2 * r * math.sin(w * dt / 2), abs=1e-15)


def test_diff_straight_line():
    dx, dy, dth = drive_motion(DRIVE_DIFF, 1.0, 0.0, math.pi / 6, 1.0, 0.1)
    assert (dx, dy, dth) == pytest.approx((0.1 * math.cos(math.pi / 6),
                                           0.1 * math.sin(math.pi / 6), 0.0), abs=1e-15)


def test_omni_command_is_body_frame():
    th = math.pi / 2
    dx, dy, dth = drive_motion(DRIVE_OMNI, 1.0, 0.0, th, 1.0, 0.1)
    assert (dx, dy, dth) == pytest.approx((0.0, 0.1, 0.0), abs=1e-15)
    vx, vy, w = drive_twist(DRIVE_OMNI, 0.0, 0.5, th, 1.0)  # body +y = world -x
    assert (vx, vy, w) == pytest.approx((-0.5, 0.0, 0.0), abs=1e-15)


def test_acker_yaw_rate():
    v, steer, wheelbase = 0.9, 0.3, 0.7
    _, _, w = drive_twist(DRIVE_ACKER, v, steer, 0.0, wheelbase)
    assert w == pytest.approx(v * math.tan(steer) / wheelbase, abs=1e-15)
    dx, dy, dth = drive_motion(DRIVE_ACKER, v, steer, 0.0, wheelbase, 0.1)
    assert dth == pytest.approx(0.1 * v * math.tan(steer) / wheelbase, abs=1e-15)
    r = wheelbase / math.tan(steer)
    assert math.hypot(dx, dy) == pytest.approx(2 * r * math.sin(dth / 2), abs=1e-15)


# ------------------------------------------------------------------------------ coasting
def test_coast_exact_stop_distance_and_time():
    mu_g = 0.5 * G
    v0 = 1.0
    x, v, t = 0.0, v0, 0.0
    while v > 0.0:
        dx, _, _, v, _, _ = coast(v, 0.0, 0.0, mu_g, 0.1, 0.1)
        x += dx
        t += 0.1
    assert x == pytest.approx(v0 ** 2 / (2 * mu_g), abs=1e-15)
    assert t == pytest.approx(0.3)  # stop time v0 / (mu g) = 0.204 s -> third step
    # Within a step: x = v t - mu g t^2 / 2.
    dx, dy, _, vx, vy, _ = coast(0.6, 0.8, 0.0, mu_g, 0.1, 0.05)
    assert math.hypot(dx, dy) == pytest.approx(0.05 - 0.5 * mu_g * 0.05 ** 2, abs=1e-15)
    assert math.hypot(vx, vy) == pytest.approx(1.0 - mu_g * 0.05, abs=1e-15)
    assert dy / dx == pytest.approx(0.8 / 0.6)


def test_coast_spin_brakes_at_mu_g_over_gyration():
    mu_g, gyr = 0.5 * G, 0.2
    alpha = mu_g / gyr
    _, _, dth, _, _, w = coast(0.0, 0.0, -3.0, mu_g, gyr, 0.1)
    assert w == pytest.approx(-3.0 + alpha * 0.1, abs=1e-14)
    assert dth == pytest.approx(-(3.0 * 0.1 - 0.5 * alpha * 0.01), abs=1e-15)
    _, _, dth, _, _, w = coast(0.0, 0.0, 1.0, mu_g, gyr, 1.0)
    assert w == 0.0 and dth == pytest.approx(1.0 / (2 * alpha), abs=1e-15)


# ------------------------------------------------------------------------------ through World
def test_world_coasting_box_stops_at_v2_over_2mug(scn):
    """Spec 1 / 8a: a box released at 1 m/s (mu 0.5, dt 0.1) stops within 2 % of
    v^2 / (2 mu g) = 0.1019 m, with its velocity exactly 0 (symplectic Euler would stop short
    by v dt / 2 = 0.05 m)."""
    w = scn.world(obstacles=[scn.box("box", 0.0, 0.0, mass=1.0, velocity=[1.0, 0.0])])
    scn.run(w, 10)
    d = 1.0 / (2 * 0.5 * G)
    assert d == pytest.approx(0.1019, abs=1e-4)
    assert w.state("box")[0, 0] == pytest.approx(d, rel=0.02)
    assert w.state("box")[0, 0] == pytest.approx(d, abs=1e-12)  # in fact exact
    assert np.all(w.velocity("box") == 0.0)
    assert w.state("box")[0, 1] == 0.0 and w.state("box")[0, 2] == 0.0


def test_world_coasting_diagonal_and_mass_independent(scn):
    obs = [scn.box("light", 0.0, 0.0, mass=0.2, velocity=[0.6, -0.8]),
           scn.box("heavy", 5.0, 5.0, mass=50.0, velocity=[0.6, -0.8], friction=0.25)]
    w = scn.world(obstacles=obs)
    scn.run(w, 10)
    for name, mu in (("light", 0.5), ("heavy", 0.25)):
        start = np.array([0.0, 0.0]) if name == "light" else np.array([5.0, 5.0])
        travel = w.state(name)[0, :2] - start
        d = 1.0 / (2 * mu * G)
        np.testing.assert_allclose(travel, d * np.array([0.6, -0.8]), atol=1e-12)
        assert np.all(w.velocity(name) == 0.0)


def test_world_spin_braking_time(scn):
    """Spec 1: a box spinning at 2 rad/s stops after omega r_g / (mu g) seconds,
    r_g = sqrt(I / m); here mu 0.05 so that this is 0.666 s, between steps 6 and 7."""
    mu = 0.05
    w = scn.world(obstacles=[scn.box("box", 0.0, 0.0, mass=1.0, omega=2.0, friction=mu)])
    r_g = math.sqrt(w.inertia("box")[0] / w.mass("box")[0])
    assert r_g == pytest.approx(math.sqrt(0.4 ** 2 / 6), abs=1e-12)
    t_stop = 2.0 * r_g / (mu * G)
    assert 0.6 < t_stop < 0.7
    alpha = mu * G / r_g
    omegas = []
    for _ in range(10):
        w.step()
        omegas.append(w.omega("box")[0])
    for k, om in enumerate(omegas):
        t = (k + 1) * 0.1
        assert om == pytest.approx(max(2.0 - alpha * t, 0.0), abs=1e-12)
    assert omegas[5] > 0.0 and omegas[6] == 0.0
    assert w.state("box")[0, 2] == pytest.approx(2.0 ** 2 / (2 * alpha), abs=1e-12)
    np.testing.assert_array_equal(w.state("box")[0, :2], [0.0, 0.0])


def test_world_robot_speed_rises_at_grip(scn):
    """The robot's speed change is capped at mu g per second: 0.4905, 0.981, 1.0 m/s."""
    w = scn.world(robots=[scn.robot("robot", 0.0, 0.0)])
    speeds = []
    for _ in range(4):
        w.step({"robot": [1.0, 0.0]})
        speeds.append(w.velocity("robot")[0, 0])
    np.testing.assert_allclose(speeds, [0.4905, 0.981, 1.0, 1.0], atol=1e-12)
    # Position is the integral of the drive: 0.04905 + 0.0981 + 0.1 + 0.1.
    assert w.state("robot")[0, 0] == pytest.approx(0.34715, abs=1e-12)


def test_world_drive_lag_from_world_tau(scn):
    w = scn.world(robots=[scn.robot("robot", 0.0, 0.0, friction=100.0)], drive_tau=0.25)
    w.step({"robot": [1.0, 0.0]})
    assert w.velocity("robot")[0, 0] == pytest.approx(1 - math.exp(-0.4), abs=1e-12)


def test_world_diff_circle_returns_to_start(scn):
    w = scn.world(robots=[scn.robot("robot", 1.0, 2.0, 0.5, friction=100.0,
                                    vel_max=[1.0, 3.0], vel_min=[-1.0, -3.0])])
    w_cmd = 2 * math.pi / 3.0
    scn.run(w, 30, {"robot": [0.8, w_cmd]})
    s = w.state("robot")[0]
    assert s[:2] == pytest.approx([1.0, 2.0], abs=1e-9)
    assert math.remainder(s[2] - 0.5, 2 * math.pi) == pytest.approx(0.0, abs=1e-9)


def test_world_acker_state_and_yaw(scn):
    kin = {"name": "acker", "wheelbase": 0.5}
    w = scn.world(robots=[scn.robot("car", 0.0, 0.0, kin=kin, friction=100.0,
                                    vel_max=[1.0, 0.5], vel_min=[-1.0, -0.5])])
    w.step({"car": [1.0, 0.3]})
    s = w.state("car")
    assert s.shape == (1, 4) and s[0, 3] == pytest.approx(0.3)
    assert w.omega("car")[0] == pytest.approx(math.tan(0.3) / 0.5, abs=1e-12)


# ------------------------------------------------------------------ IR-SIM's kinematics keys
def _omni_angular_world(num_envs=1, **robot):
    from push_envs.physics import World

    body = {"name": "r", "kinematics": {"name": "omni_angular"}, "state": [0.0, 0.0, 0.0],
            "shape": {"name": "circle", "radius": 0.2}, "vel_max": [2, 2, 3],
            "vel_min": [-2, -2, -3]}
    body.update(robot)
    return World.from_config({"world": {"friction": 2.0}, "robot": [body]},
                             num_envs=num_envs)


def test_omni_angular_sweeps_the_exact_integral_and_closes_its_circle():
    """A body-frame velocity (vx, vy) turning at w sweeps a circle of radius |v| / w: after a
    full turn (2 pi / w) it is back where it started, after half a turn at the diameter's far
    end, (x, y) = 2 / w (-vy, vx) from the start."""
    vx, vy, w = 0.6, 0.3, math.pi / 2  # a full turn in 4 s = 40 steps
    world = _omni_angular_world()
    for _ in range(20):
        world.step({"r": [vx, vy, w]})
    x, y, th = world.state("r")[0]
    assert (x, y) == pytest.approx((-2 * vy / w, 2 * vx / w), abs=1e-12)
    assert th == pytest.approx(math.pi, abs=1e-12)
    for _ in range(20):
        world.step({"r": [vx, vy, w]})
    assert world.state("r")[0].tolist() == pytest.approx([0.0, 0.0, 2 * math.pi], abs=1e-12)
    assert world.drive_state("r")[0].tolist() == [vx, vy, w]


def test_omni_angular_limits_and_commands():
    world = _omni_angular_world(acce=[10, 10, 5])
    world.step({"r": [0.0, 0.0, 9.0]})
    assert world.drive_state("r")[0, 2] == pytest.approx(0.5)  # acce 5 rad/s^2 x 0.1 s
    for _ in range(10):
        world.step({"r": [0.0, 0.0, 9.0]})
    assert world.drive_state("r")[0, 2] == 3.0  # vel_max
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        world.step({"r": [1.0, 0.0]})


def _noisy(num_envs=1, seed=0, kin="diff", alpha=(0.1, 0.0, 0.0, 0.3)):
    from push_envs.physics import World

    return World.from_config(
        {"world": {"friction": 5.0},
         "robot": [{"name": "r", "kinematics": {"name": kin, "noise": True,
                                                 "alpha": list(alpha)},
                    "state": [0.0, 0.0, 0.0], "shape": {"name": "circle", "radius": 0.1},
                    "vel_max": [2, 2], "vel_min": [-2, -2]}]},
        num_envs=num_envs, seed=seed)


def test_motion_noise_of_a_batch_is_each_envs_own_stream():
    """Env i of a batch seeded s moves as a single world seeded s + i, bit for bit; a reset
    with a seed starts the streams again."""
    batch = _noisy(num_envs=3, seed=5)
    for _ in range(15):
        batch.step({"r": [1.0, 0.5]})
    for i in range(3):
        single = _noisy(seed=5 + i)
        for _ in range(15):
            single.step({"r": [1.0, 0.5]})
        assert single.state("r")[0].tobytes() == batch.state("r")[i].tobytes()
    first = batch.state("r").copy()
    assert len({tuple(row) for row in first.tolist()}) == 3  # three different walks
    batch.reset(seed=5)
    for _ in range(15):
        batch.step({"r": [1.0, 0.5]})
    assert batch.state("r").tobytes() == first.tobytes()


def test_motion_noise_has_irsims_spread():
    """diff: the executed velocity is v + N(0, alpha0 v^2 + alpha1 w^2) and w +
    N(0, alpha2 v^2 + alpha3 w^2); from rest at heading 0 with w = 0, one step's x is
    (v + n0) dt, so its spread over many envs is sqrt(alpha0) v dt (heading: 0)."""
    n = 4000
    w = _noisy(num_envs=n, seed=1)
    w.step({"r": [1.0, 0.0]})
    x = w.state("r")[:, 0]
    assert x.mean() == pytest.approx(0.1, abs=4 * 0.1 * math.sqrt(0.1) / math.sqrt(n))
    assert x.std() == pytest.approx(0.1 * math.sqrt(0.1), rel=0.05)
    assert np.all(w.state("r")[:, 2] == 0.0)  # alpha2 = 0 and w = 0: no heading noise
    assert np.all(w.drive_state("r")[:, 0] == 1.0)  # the drive state itself is noise free


# ------------------------------------------------------------------------------ drive step
def _bits(*xs):
    return [np.float64(x).tobytes() for x in xs]


@pytest.mark.parametrize("drive", [DRIVE_DIFF, DRIVE_OMNI, DRIVE_ACKER])
def test_drive_step_is_motion_then_twist_bit_for_bit(drive):
    # drive_step takes the old heading's cosine and sine (free motion reads them from the
    # heading cache) and returns the new heading's; its numbers must be those of drive_motion
    # then drive_twist at theta + dtheta, to the bit: arcs, no turn (either zero, at either
    # zero heading) and turns too small for the arc formula.
    rng = np.random.default_rng(5)
    cases = [(d0, d1, th) for d0 in (0.0, 0.7, -1.3) for d1 in (0.0, -0.0, 0.4, -2.0, 1e-12,
                                                                    -3e-11)
             for th in (0.0, -0.0, 1.0, -2.5, math.pi, 1e-300)]
    cases += [tuple(rng.uniform(-3.0, 3.0, 3)) for _ in range(300)]
    wb, dt = 0.5, 0.05
    for d0, d1, th in cases:
        dx, dy, dth = drive_motion(drive, d0, d1, th, wb, dt)
        vx, vy, w = drive_twist(drive, d0, d1, th + dth, wb)
        got = drive_step(drive, d0, d1, th, math.cos(th), math.sin(th), wb, dt)
        want = (dx, dy, dth, vx, vy, w, math.cos(th + dth), math.sin(th + dth))
        assert _bits(*got) == _bits(*want), (drive, d0, d1, th)
