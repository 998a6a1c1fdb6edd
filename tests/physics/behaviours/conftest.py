"""Worlds with goals and behaviours for the behaviour tests.

``ir_world(robots, obstacles, num_envs, **world)`` builds a World from push_envs body
mappings that may also carry IR-SIM's fields (goal, goal_threshold, arrive_mode, behavior,
group, group_behavior): those are set on the body specs (``behaviours.reference.with_fields``),
so the tests do not depend on the YAML parser's handling of IR-SIM's keys.

``irsim``: IR-SIM (and pyrvo) when importable, for the tests that compare with it live;
those tests skip without it (the `test` extra installs both, through `irsim`).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from push_envs.physics.behaviours.reference import IRSIM_FIELDS
from push_envs.physics.behaviours.reference import with_fields
from push_envs.physics.config import load_scene
from push_envs.physics.scene import compile_scene
from push_envs.physics.world import World

DATA = Path(__file__).resolve().parent / "data"


def ir_world(robots=(), obstacles=(), num_envs=1, source="<test>", **world):
    """A World of these bodies; IR-SIM's keys of each body go onto its spec."""
    plain, extra = [], {}
    for k, body in enumerate([*robots, *obstacles]):
        b = {key: v for key, v in body.items() if key not in IRSIM_FIELDS}
        f = {key: v for key, v in body.items() if key in IRSIM_FIELDS}
        plain.append(b)
        extra[k] = f
    nr = len(robots)
    world = {"width": 40.0, "height": 40.0, **world}
    spec = load_scene({"world": world, "robot": plain[:nr], "obstacle": plain[nr:]},
                      source=source)
    counts: dict[str, int] = {}
    bodies = []
    for k, b in enumerate(spec.bodies):
        n = counts.get(b.role, 0)
        counts[b.role] = n + 1
        fields = {"path": f"{b.role}[{n}]", **extra[k]}
        bodies.append(with_fields(b, fields))
    spec = dataclasses.replace(spec, bodies=tuple(bodies))
    return World(compile_scene(spec), num_envs=num_envs)


def diff_robot(name, x, y, theta=0.0, radius=0.2, **kw):
    body = {"name": name, "kinematics": {"name": "diff"},
            "shape": {"name": "circle", "radius": radius}, "state": [x, y, theta]}
    body.update(kw)
    return body


def omni_robot(name, x, y, theta=0.0, radius=0.2, **kw):
    body = diff_robot(name, x, y, theta, radius, **kw)
    body["kinematics"] = {"name": "omni"}
    return body


def reference(name: str) -> dict:
    """A recorded IR-SIM world (data/<name>.json)."""
    return json.loads((DATA / f"{name}.json").read_text())


@pytest.fixture
def irsim():
    """IR-SIM's behaviour functions, or skip."""
    return pytest.importorskip("irsim")


@pytest.fixture
def bw():
    """The helpers above: ``bw.world(...)``, ``bw.diff(...)``, ``bw.omni(...)``,
    ``bw.reference(name)``."""
    from types import SimpleNamespace

    return SimpleNamespace(world=ir_world, diff=diff_robot, omni=omni_robot,
                           reference=reference)
