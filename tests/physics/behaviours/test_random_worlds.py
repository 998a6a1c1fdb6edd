"""Random IR-SIM world files, run by IR-SIM 2.12 and by ``World.from_config``: what IR-SIM's
example worlds show (test_reference.py), on worlds nobody tuned for.

Each world is drawn from a seed and written as IR-SIM's YAML, then loaded by both:

* **crowds**: 2-10 diff or omni robots on a circle (``distribution: circle``), each to the
  opposite side, with rvo (its modes, speed limits, window, factor and neighbour threshold
  drawn) or sfm, in IR-SIM's ``stop`` or ``unobstructed`` mode, sometimes a static disc near
  the centre. Every robot IR-SIM brings to its goal within the run arrives here too, by
  IR-SIM's step x 1.2 + 10, and no two robots overlap by more than 1 cm where IR-SIM's do not
  (sfm in ``stop`` mode lets IR-SIM's robots overlap by up to the two robots' travel in a
  step, before they stop: here, no more than that).
* **dash**: one diff, omni or acker robot with one to three goals (``goal`` a pose or a list),
  in ``stop`` mode: it arrives within 10 % (+1 step) of IR-SIM's step. (In the contact mode
  a drive accelerates within its traction, where IR-SIM's jumps to its speed: a 10-step
  trip then differs by more than 10 %.)

Live against IR-SIM (skipped without it; the `test` extra installs it). A few seeds of each
in the default suite, many more under ``slow``.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
import yaml

from push_envs.physics import World

irsim = pytest.importorskip("irsim")

STEPS = 600
SFM_VMAX = 1.5  # [m/s] IR-SIM 2.12's sfm speed cap (behavior_methods.py)


def _crowd(rng: np.random.Generator) -> tuple[dict, float]:
    kin = str(rng.choice(["diff", "omni"]))
    radius = float(rng.choice([0.15, 0.2, 0.25]))
    behaviour = {"name": str(rng.choice(["rvo", "rvo", "sfm"])) if kin == "diff" else "rvo"}
    if behaviour["name"] == "rvo":
        behaviour.update(vxmax=float(rng.choice([0.8, 1.0, 1.5])),
                         vymax=float(rng.choice([0.8, 1.0, 1.5])),
                         acce=float(rng.choice([0.5, 1.0])), factor=float(rng.choice([1.0, 2.0])),
                         neighbor_threshold=float(rng.choice([3.0, 5.0])))
        if rng.random() < 0.3:
            behaviour["mode"] = str(rng.choice(["vo", "hrvo"]))
    world = {"world": {"height": 10, "width": 10, "step_time": 0.1, "sample_time": 0.1,
                       "collision_mode": str(rng.choice(["stop", "unobstructed"])),
                       "control_mode": "auto"},
             "robot": [{"number": int(rng.integers(2, 11)),
                        "distribution": {"name": "circle", "radius": float(rng.uniform(2.5, 4.5)),
                                         "center": [5, 5]},
                        "kinematics": {"name": kin},
                        "shape": [{"name": "circle", "radius": radius}], "behavior": behaviour,
                        "vel_min": [-3, -3.0], "vel_max": [3, 3.0], "arrive_mode": "position",
                        "goal_threshold": float(rng.choice([0.1, 0.2, 0.3]))}]}
    if rng.random() < 0.4:
        world["obstacle"] = [{"shape": {"name": "circle", "radius": float(rng.uniform(0.2, 0.6))},
                              "state": [5 + float(rng.uniform(-0.5, 0.5)),
                                        5 + float(rng.uniform(-0.5, 0.5)), 0]}]
    return world, radius


def _dash(rng: np.random.Generator) -> dict:
    kin = str(rng.choice(["diff", "omni", "acker"]))
    start = rng.uniform([1, 1, -3], [9, 9, 3])
    goals = rng.uniform([1, 1, -3], [9, 9, 3], size=(int(rng.integers(1, 4)), 3))
    if kin == "acker":
        # a car on a 50 m field, as IR-SIM's car_world.yaml: 4.6 m long, 3 m wheelbase
        robot = {"kinematics": {"name": "acker"},
                 "shape": {"name": "rectangle", "length": 4.6, "width": 1.6, "wheelbase": 3},
                 "state": [*(10 + 3 * start[:2]).tolist(), float(start[2]), 0],
                 "goal": [[*(10 + 3 * g[:2]).tolist(), float(g[2])] for g in goals],
                 "vel_max": [4, 1], "goal_threshold": 1.0}
        size = 50
    else:
        robot = {"kinematics": {"name": kin}, "shape": {"name": "circle", "radius": 0.2},
                 "state": start.tolist(),
                 "goal": goals.tolist() if len(goals) > 1 else goals[0].tolist(),
                 "goal_threshold": float(rng.choice([0.1, 0.2]))}
        if rng.random() < 0.5:
            robot["vel_max"] = [float(rng.choice([0.5, 1, 2])), float(rng.choice([0.5, 1, 2]))]
        size = 10
    robot["behavior"] = {"name": "dash"}
    return {"world": {"height": size, "width": size, "step_time": 0.1, "sample_time": 0.1,
                      "collision_mode": "stop"}, "robot": [robot]}


def _deepest(xy: np.ndarray, radius: float) -> float:
    """The deepest overlap [m] between discs of ``radius`` at the rows of ``xy``."""
    d = np.hypot(*(xy[:, None] - xy[None]).transpose(2, 0, 1))
    np.fill_diagonal(d, np.inf)
    return float((2.0 * radius - d).max())


def _run_both(path: str, radius: float | None) -> tuple[dict, dict, float, float]:
    """Each robot's first arrival step in IR-SIM and here, and the deepest disc overlap of
    each (0 without ``radius``)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        env = irsim.make(path, display=False, log_level="ERROR", seed=0)
    w = World.from_config(path)
    names = [r.name for r in env.robot_list]
    theirs: dict[str, int] = {}
    ours: dict[str, int] = {}
    deep_theirs = deep_ours = 0.0
    for k in range(1, STEPS + 1):
        with contextlib.redirect_stdout(io.StringIO()):
            env.step()
        w.step()
        for r in env.robot_list:
            if r.name not in theirs and r.arrive:
                theirs[r.name] = k
        for n in names:
            if n not in ours and w.arrived(n)[0]:
                ours[n] = k
        if radius is not None and len(names) > 1:
            deep_theirs = max(deep_theirs, _deepest(
                np.array([r.state.ravel()[:2] for r in env.robot_list]), radius))
            deep_ours = max(deep_ours, _deepest(
                np.array([w.state(n)[0][:2] for n in names]), radius))
    import matplotlib.pyplot as plt

    plt.close("all")  # IR-SIM draws its figure even headless: one per world otherwise
    return theirs, ours, deep_theirs, deep_ours


def _crowd_case(tmp_path, seed: int) -> None:
    world, radius = _crowd(np.random.default_rng(seed))
    path = tmp_path / f"crowd_{seed}.yaml"
    path.write_text(yaml.safe_dump(world, sort_keys=False))
    theirs, ours, deep_theirs, deep_ours = _run_both(str(path), radius)
    late = {n: (k, ours.get(n)) for n, k in theirs.items()
            if ours.get(n) is None or ours[n] > 1.2 * k + 10}
    assert not late, (seed, world["robot"][0]["behavior"], late)
    if deep_theirs <= 0.01:
        assert deep_ours <= 0.01, (seed, deep_ours, deep_theirs)
    else:
        # IR-SIM's robots overlap (sfm in stop mode, or unobstructed): each stops (or passes)
        # after at most a step at its behaviour's speed, here as there
        b = world["robot"][0]["behavior"]
        speed = (np.hypot(b["vxmax"], b["vymax"]) if b["name"] == "rvo"
                 else b.get("vmax", SFM_VMAX))
        bound = (np.inf if world["world"]["collision_mode"] == "unobstructed"
                 else 2.0 * speed * world["world"]["step_time"])
        assert deep_ours <= bound, (seed, deep_ours, deep_theirs, bound)


def _dash_case(tmp_path, seed: int) -> None:
    world = _dash(np.random.default_rng(seed))
    path = tmp_path / f"dash_{seed}.yaml"
    path.write_text(yaml.safe_dump(world, sort_keys=False))
    theirs, ours, _, _ = _run_both(str(path), None)
    assert set(ours) == set(theirs), (seed, theirs, ours)
    for n, k in theirs.items():
        assert abs(ours[n] - k) <= 0.1 * k + 1, (seed, world["robot"][0]["kinematics"], k,
                                                 ours[n])


@pytest.mark.parametrize("seed", [100, 104, 109, 122])
def test_random_crowd_arrives_as_in_irsim(tmp_path, seed):
    _crowd_case(tmp_path, seed)


@pytest.mark.parametrize("seed", [0, 14, 15, 17])
def test_random_dash_robot_arrives_as_in_irsim(tmp_path, seed):
    _dash_case(tmp_path, seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(200, 240))
def test_random_crowd_arrives_as_in_irsim_many(tmp_path, seed):
    _crowd_case(tmp_path, seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1000, 1040))
def test_random_dash_robot_arrives_as_in_irsim_many(tmp_path, seed):
    _dash_case(tmp_path, seed)
