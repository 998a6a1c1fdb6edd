"""IR-SIM's own world files load here as written, mean what they mean in IR-SIM, and step.

Two sources:

* ``data/irsim_worlds/``: a handful of IR-SIM's example worlds (MIT, see the folder's README)
  with what IR-SIM 2.12 resolves for each (``expected.json``: names, groups, states, goals,
  shapes, the map), so CI checks the schema without IR-SIM's repository;
* every world of IR-SIM's repository that IR-SIM 2.12 runs headless, read from the bare
  mirror when it is present (skipped otherwise): each loads with one env and with
  ``num_envs=4`` and steps 100 times with ``World.step()`` (the objects run their behaviours;
  a driven robot with none, which IR-SIM's scripts drive by keyboard or by hand, gets random
  commands) with no NaN, in contact mode no overlap above 1 mm, and every object that carries
  a goal and a behaviour moved toward its goal: it arrived (at its last goal or one before),
  or it ends nearer its goal than it started. The two worlds whose group behaviour IR-SIM's
  example script registers run with push_envs' counterparts registered first
  (docs/examples/irsim_group_behaviours.py), as the scripts run them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import shapely
import yaml

from push_envs.physics import SceneError
from push_envs.physics import World
from push_envs.physics import load_scene
from push_envs.physics.behaviours.layout import BI_CODE
from push_envs.physics.behaviours.layout import CODE_NONE
from push_envs.physics.config import SceneWarning
from push_envs.physics.layout import BF_UNOBS
from push_envs.physics.layout import BI_DRIVE
from push_envs.physics.layout import BI_KIND
from push_envs.physics.layout import BI_ROLE
from push_envs.physics.layout import DRIVEN
from push_envs.physics.layout import PI_BODY
from push_envs.physics.layout import PI_NV
from push_envs.physics.layout import ROLE_ROBOT
from push_envs.physics.world import DRIVE_COLUMNS

DATA = Path(__file__).parent / "data" / "irsim_worlds"
EXPECTED = json.loads((DATA / "expected.json").read_text())
MIRROR = "/work/.mirror/hanruihua+ir-sim/repo"

# IR-SIM 2.12 runs 62 of its repository's 66 worlds headless. These four it refuses itself:
# a custom behaviour registered in Python (3) and duplicate names (1).
IRSIM_REFUSES = {
    "tests/custom_behavior.yaml": "behaviour 'dash_custom' is registered by the example's script",
    "usage/13custom_behavior/custom_behavior.yaml": "behaviour 'dash_custom' (script-registered)",
    "usage/13custom_behavior/custom_smooth_dash.yaml": "behaviour 'smooth_dash' "
                                                      "(script-registered)",
    "tests/test_duplicate_names.yaml": "two objects named 'dup'",
}
# Two more name a group behaviour that their example script registers in Python before it
# loads them (env.load_behavior("custom_group_methods")); push_envs' counterparts, compiled
# group behaviours, are registered by importing the docs' worked example.
SCRIPT_BEHAVIOURS = {
    "usage/13custom_behavior/custom_group_behavior.yaml": "formation",
    "usage/13custom_behavior/custom_swarm_behavior.yaml": "swarm",
}
EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"

# Objects with a goal and a behaviour that may make no progress toward it in 100 steps: per
# world, the objects that may, how many of them at most (over all envs), and why.
NO_PROGRESS: dict[str, tuple[set[str], int, str]] = {
    "usage/13custom_behavior/custom_group_behavior.yaml": (
        {f"robot_{i}" for i in range(5)}, 5,
        "formation drives the group's centroid to its goals' centroid; the circle "
        "distribution puts each goal opposite its robot, so both centroids are the circle's "
        "centre and the formation holds still (IR-SIM resolves the same goals)"),
    "tests/test_collision_world.yaml": (
        {"obstacle_103", "obstacle_104"}, 2,
        "two rvo obstacles on a 2 m circle, each to the opposite side, through the static "
        "disc and rectangle at its centre: rvo stalls them there, as in IR-SIM (recorded: "
        "after 100 steps both are as far from their goals as at the start, or farther)"),
    "usage/15fov_world/fov_world_multi.yaml": (
        {f"obstacle_{i}" for i in range(3, 13)}, 1,
        "wandering vo obstacles on random draws per env, in stop mode: with IR-SIM's Euler "
        "step (since IR-SIM's modes move by it), obstacle_5 of env 1 comes within 1.2 m of "
        "its goal at step 33, is turned back by obstacle_9 and then herded by obstacle_11 "
        "1.15-1.2 m behind it for 60 steps, as in dynamic_random.yaml"),
    "usage/08random_obstacle/dynamic_random.yaml": (
        {f"obstacle_{i}" for i in range(1, 21)}, 2,
        "twenty wandering rvo obstacles, random polygons drawn per env: rvo's reciprocal "
        "avoidance lets a neighbour that heads for its goal through another herd that one "
        "ahead of it (obstacle_11 keeps obstacle_15 2.7 m ahead for 50 steps in env 0)"),
}


def register_script_behaviours() -> None:
    """Register formation and swarm as IR-SIM's example scripts do before loading."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    import irsim_group_behaviours  # noqa: F401  (registers them at import)


def load(path: Path | str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SceneWarning)  # IR-SIM's own fallbacks, said once
        return load_scene(path)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_world_resolves_as_irsim(name):
    """Names (IR-SIM's running id), groups, states (default [1, 1, 0], circle layouts),
    goals (default [1, 9, 0]), kinematics, shapes (body frame, car wheelbase) and the obstacle
    map as IR-SIM 2.12 resolves them."""
    spec = load(DATA / name)
    want = EXPECTED[name]
    # The one default that differs: a file without collision_mode runs this engine's contact
    # mode here (IR-SIM's default is stop); docs/irsim.md says why.
    text = (DATA / name).read_text()
    given = "collision_mode" in (yaml.safe_load(text)["world"] or {})
    assert spec.world.collision_mode == (want["collision_mode"] if given else "contact")
    assert [b.name for b in spec.bodies] == [o["name"] for o in want["objects"]]
    random_bodies = {b for g in spec.groups for b in g.bodies}
    for i, (body, o) in enumerate(zip(spec.bodies, want["objects"], strict=True)):
        assert body.role == o["role"] and body.group == o["group"], body.name
        assert (body.kinematics.name if body.kinematics else None) == o["kinematics"]
        assert body.unobstructed == o["unobstructed"]
        assert (body.static or not np.isfinite(body.mass)) == o["static"], body.name
        if o["wheelbase"] is not None and o["kinematics"] == "acker":
            assert body.kinematics.wheelbase == o["wheelbase"]
        if i in random_bodies:
            continue  # drawn per env at a reset (test_placement.py)
        np.testing.assert_allclose(body.state[:3], o["state"], atol=1e-12, err_msg=body.name)
        np.testing.assert_allclose(np.array(body.goal)[:, :3], o["goal"], atol=1e-12)
        geom = body.shape_info(body.name).geometry((0.0, 0.0, 0.0))
        if "circle" in o["shape"] and "random_shape" in text:
            continue  # radius drawn from radius_range, here from the scene's seed
        if "circle" in o["shape"]:
            (piece,) = body.shape_info(body.name).pieces
            assert piece.radius == pytest.approx(o["shape"]["circle"], abs=1e-12)
            np.testing.assert_allclose(piece.verts[0], o["shape"]["center"], atol=1e-12)
        elif not (body.shape.get("vertices") and "random_shape" in text):
            assert geom.area == pytest.approx(o["shape"]["area"], rel=1e-9)
            np.testing.assert_allclose(geom.bounds, o["shape"]["bounds"], atol=1e-9)
    if want["map"] is None:
        assert spec.world.obstacle_map is None
    else:
        occ = spec.world.obstacle_map
        assert list(occ.shape) == want["map"]["shape"]
        assert int(occ.sum()) == want["map"]["occupied"]
        import hashlib

        assert hashlib.sha256(np.packbits(np.ascontiguousarray(occ)).tobytes()).hexdigest() \
            == want["map"]["sha256"]
        np.testing.assert_allclose(spec.world.cell, want["map"]["reso"], rtol=1e-12)


def overlaps_above(w: World, tol: float) -> list[tuple[str, str]]:
    """Pairs of bodies (neither unobstructed) that overlap by more than ``tol`` [m] in some
    env, measured with shapely on the current poses: each shape shrunk by tol / 2."""
    sc = w.scene
    out = []
    live = [i for i in range(sc.num_bodies) if sc.bflt[i, BF_UNOBS] == 0.0]
    for e in range(w.num_envs):
        geoms = {}
        for i in live:
            if sc.shapes[i] is None:
                rows = np.flatnonzero(sc.sint[:, PI_BODY] == i)
                g = shapely.union_all([shapely.Polygon(sc.svert[j, :sc.sint[j, PI_NV]])
                                       for j in rows])
            else:
                g = sc.shapes[i].geometry(w.state(sc.names[i])[e, :3])
            geoms[i] = g.buffer(-tol / 2) if g.area > 0 else g
        movable = set(sc.movable.tolist())
        for a in live:
            if a not in movable:
                continue
            for b in live:
                if b != a and (b not in movable or b > a) and geoms[a].intersects(geoms[b]):
                    out.append((sc.names[a], sc.names[b]))
    return out


def step_randomly(w: World, steps: int, seed: int = 0, check_every: int = 25) -> float:
    """Step with uniform random commands in [-1, 1]; returns the deepest overlap seen."""
    rng = np.random.default_rng(seed)
    sc = w.scene
    driven = [(n, DRIVE_COLUMNS[int(sc.bint[i, BI_DRIVE])]) for i, n in enumerate(sc.names)
              if sc.bint[i, BI_KIND] == DRIVEN]
    deepest = 0.0
    for k in range(steps):
        w.step({n: rng.uniform(-1, 1, (w.num_envs, c)) for n, c in driven})
        deepest = max(deepest, float(w.max_penetration.max()))
        assert np.all(np.isfinite(w.pos)) and np.all(np.isfinite(w.ang)), f"step {k}"
        if sc.collision_mode == 0 and (k + 1) % check_every == 0:
            assert not overlaps_above(w, 1e-3), f"step {k}"
    return deepest


@pytest.mark.parametrize("name", ["robot_world.yaml", "obstacle_world.yaml",
                                  "dynamic_obstacle.yaml", "robot_omni_angular_world.yaml"])
def test_fixture_world_steps(name):
    w = World.from_config(DATA / name, num_envs=4)
    assert step_randomly(w, 100) <= 1e-3


# ------------------------------------------------------------------ IR-SIM's repository


def _mirror_worlds() -> list[str]:
    if not os.path.isdir(MIRROR):
        return []
    try:
        names = subprocess.run(["git", "-C", MIRROR, "ls-tree", "-r", "--name-only", "HEAD",
                                "usage", "tests"], check=True, capture_output=True,
                               text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return []
    return sorted(n for n in names if n.endswith(".yaml"))


MIRROR_WORLDS = _mirror_worlds()


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """IR-SIM's usage/ and tests/ folders, extracted from the mirror."""
    if not MIRROR_WORLDS:
        pytest.skip("IR-SIM's repository mirror is absent")
    out = tmp_path_factory.mktemp("irsim")
    subprocess.run(f"git -C {MIRROR} archive HEAD usage tests | tar -x -C {out}", shell=True,
                   check=True)
    return out


def step_world(w: World, steps: int, seed: int = 0, check_every: int = 25) -> dict:
    """Step ``w`` with ``World.step()``, random commands in [-1, 1] for the driven robots
    without a behaviour; no NaN, and in contact mode no overlap above 1 mm every
    ``check_every`` steps. Returns, per object with a goal and a behaviour, a (num_envs,)
    bool: it arrived at some step (its arrive flag rose or its goal moved on to the next), or
    it ends nearer its goal than it started."""
    rng = np.random.default_rng(seed)
    sc = w.scene
    P = w.behaviours
    code = P.arrays.bi[:, BI_CODE] if P is not None else np.zeros(sc.num_bodies, int)
    free = [(n, DRIVE_COLUMNS[int(sc.bint[i, BI_DRIVE])]) for i, n in enumerate(sc.names)
            if sc.bint[i, BI_KIND] == DRIVEN and code[i] == CODE_NONE
            and sc.bint[i, BI_ROLE] == ROLE_ROBOT]
    goers = [n for i, n in enumerate(sc.names)
             if code[i] != CODE_NONE and sc.bint[i, BI_KIND] == DRIVEN
             and np.isfinite(w.goal(n)[:, :2]).all()]

    def distance(n: str) -> np.ndarray:
        return np.hypot(*(w.state(n)[:, :2] - w.goal(n)[:, :2]).T)

    start = {n: (distance(n), w.goal(n).copy()) for n in goers}
    reached = {n: np.zeros(w.num_envs, bool) for n in goers}
    for k in range(steps):
        w.step({n: rng.uniform(-1, 1, (w.num_envs, c)) for n, c in free} or None)
        assert np.all(np.isfinite(w.pos)) and np.all(np.isfinite(w.ang)), f"step {k}"
        for n in goers:
            moved_on = ~np.all(np.isclose(w.goal(n), start[n][1], equal_nan=True), axis=1)
            reached[n] |= w.arrived(n) | moved_on
        if sc.collision_mode == 0 and (k + 1) % check_every == 0:
            assert not overlaps_above(w, 1e-3), f"step {k}"
    return {n: reached[n] | (distance(n) < start[n][0]) for n in goers}


@pytest.mark.slow
@pytest.mark.skipif(not MIRROR_WORLDS, reason="IR-SIM's repository mirror is absent")
@pytest.mark.parametrize("num_envs", [1, 4])
@pytest.mark.parametrize("name", MIRROR_WORLDS or ["none"])
def test_irsim_repository_world_loads_and_steps(repo, name, num_envs):
    if name in IRSIM_REFUSES:
        pytest.skip(f"IR-SIM 2.12 does not run it either: {IRSIM_REFUSES[name]}")
    if name in SCRIPT_BEHAVIOURS:
        register_script_behaviours()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SceneWarning)
        w = World.from_config(repo / name, num_envs=num_envs)
    assert w.num_envs == num_envs
    progress = step_world(w, 100)
    stuck = {n for n, ok in progress.items() if not ok.all()}
    allowed, most, why = NO_PROGRESS.get(name, (set(), 0, ""))
    assert stuck <= allowed and len(stuck) <= most, \
        f"no progress toward their goals: {sorted(stuck)} (allowed: at most {most}: {why})"


@pytest.mark.skipif(not MIRROR_WORLDS, reason="IR-SIM's repository mirror is absent")
def test_unregistered_group_behaviour_is_refused(repo, tmp_path):
    """A group behaviour nobody registered: a SceneError naming the file, the key and the
    reason (IR-SIM's example world with its behaviour renamed, so the test does not depend
    on whether another test registered formation)."""
    text = (repo / "usage/13custom_behavior/custom_group_behavior.yaml").read_text()
    path = tmp_path / "formation.yaml"
    path.write_text(text.replace("'formation'", "'formation_nobody_registered'"))
    want = (r"formation\.yaml: robot\[0\]\[0\]\.group_behavior\.name: unknown group behaviour "
            r"'formation_nobody_registered'")
    with pytest.raises(SceneError, match=want), warnings.catch_warnings():
        warnings.simplefilter("ignore", SceneWarning)
        World.from_config(path)
