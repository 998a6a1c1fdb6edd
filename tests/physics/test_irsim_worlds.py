"""IR-SIM's own world files load here as written, mean what they mean in IR-SIM, and step.

Two sources:

* ``data/irsim_worlds/``: a handful of IR-SIM's example worlds (MIT, see the folder's README)
  with what IR-SIM 2.12 resolves for each (``expected.json``: names, groups, states, goals,
  shapes, the map), so CI checks the schema without IR-SIM's repository;
* every world of IR-SIM's repository that IR-SIM 2.12 runs headless, read from the bare
  mirror when it is present (skipped otherwise): each loads with one env and with
  ``num_envs=4`` and steps 100 times under random commands with no NaN and, in contact mode,
  no overlap above 1 mm.
"""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
import shapely
import yaml

from push_envs.physics import SceneError, World, load_scene
from push_envs.physics.config import SceneWarning
from push_envs.physics.layout import BF_UNOBS, BI_DRIVE, BI_KIND, DRIVEN, PI_BODY, PI_NV
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
# Two more name a group behaviour their example script registers in Python ('formation',
# 'swarm'); IR-SIM runs them without it (its objects then hold still), push_envs refuses a
# behaviour nobody registered (issue 49: a behaviour IR-SIM does not have is a SceneError).
SCRIPT_BEHAVIOURS = {
    "usage/13custom_behavior/custom_group_behavior.yaml": "formation",
    "usage/13custom_behavior/custom_swarm_behavior.yaml": "swarm",
}


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


@pytest.mark.slow
@pytest.mark.skipif(not MIRROR_WORLDS, reason="IR-SIM's repository mirror is absent")
@pytest.mark.parametrize("num_envs", [1, 4])
@pytest.mark.parametrize("name", MIRROR_WORLDS or ["none"])
def test_irsim_repository_world_loads_and_steps(repo, name, num_envs):
    if name in IRSIM_REFUSES:
        pytest.skip(f"IR-SIM 2.12 does not run it either: {IRSIM_REFUSES[name]}")
    if name in SCRIPT_BEHAVIOURS:
        with pytest.raises(SceneError, match=rf"group_behavior\.name: unknown group behaviour "
                                             rf"'{SCRIPT_BEHAVIOURS[name]}'"), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore", SceneWarning)
            World.from_config(repo / name, num_envs=num_envs)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SceneWarning)
        w = World.from_config(repo / name, num_envs=num_envs)
    assert w.num_envs == num_envs
    assert step_randomly(w, 100) <= 1e-3
