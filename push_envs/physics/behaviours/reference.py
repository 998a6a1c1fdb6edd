"""A World from IR-SIM's own description of a loaded world (the reference recordings).

IR-SIM resolves a world file at load: groups expanded, defaults applied, random draws made.
The recordings of its example worlds (``tests/physics/behaviours/data``, written by the
recording script) keep, per object, what it resolved: shape in the body frame, state, goal
queue, limits, behaviour mappings. :func:`world_from_reference` builds the same world here
from that description, so a comparison with IR-SIM does not depend on the random draws of
either side, and needs neither IR-SIM nor its world files.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from ..config import BodySpec
from ..config import load_scene
from ..scene import compile_scene

IRSIM_FIELDS = ("goal", "goal_threshold", "arrive_mode", "behavior", "group",
                "group_behavior", "unobstructed", "path")
"""The IR-SIM fields a body spec carries beside push_envs' own (config.BodySpec)."""


@dataclasses.dataclass(frozen=True)
class _IrsimBody(BodySpec):
    """A body spec with IR-SIM's fields, for a BodySpec that lacks them."""

    goal: Any = None
    goal_threshold: float = 0.1
    arrive_mode: str = "position"
    behavior: Any = None
    group: int = 0
    group_behavior: Any = None
    unobstructed: bool = False
    path: str | None = None


def with_fields(body: BodySpec, fields: Mapping[str, Any]) -> BodySpec:
    """``body`` with IR-SIM's ``fields`` (goal, behavior, ...) set."""
    own = {f.name for f in dataclasses.fields(body)}
    if all(k in own for k in fields):
        return dataclasses.replace(body, **fields)
    values = {f.name: getattr(body, f.name) for f in dataclasses.fields(body)
              if f.name in {g.name for g in dataclasses.fields(_IrsimBody)}}
    values.update(fields)
    return _IrsimBody(**values)


def body_entry(obj: Mapping[str, Any]) -> tuple[dict, dict]:
    """push_envs' body mapping and the IR-SIM fields of one recorded object."""
    kin = obj["kinematics"]
    body: dict[str, Any] = {"name": obj["name"], "shape": _shape(obj["shape"])}
    n = 4 if kin == "acker" else 3
    body["state"] = [float(v) for v in obj["state"][:n]]
    if kin is not None:
        body["kinematics"] = {"name": kin}
        if kin == "acker" and obj.get("wheelbase") is not None:
            body["kinematics"]["wheelbase"] = float(obj["wheelbase"])
        n_vel = 3 if kin == "omni_angular" else 2
        for key in ("vel_min", "vel_max", "acce"):
            body[key] = [float(v) for v in obj[key][:n_vel]]  # "inf" reads as inf
    if obj.get("static") and kin is not None:
        body["static"] = True
    fields = {
        "goal": obj.get("init_goal"),
        "goal_threshold": float(obj["goal_threshold"]),
        "arrive_mode": obj["arrive_mode"],
        "behavior": obj.get("behavior") or (obj.get("group_behavior") or None),
        "group": int(obj["group"]),
        "group_behavior": obj.get("group_behavior"),
        "unobstructed": bool(obj.get("unobstructed", False)),
    }
    return body, fields


def _shape(shape: Mapping[str, Any]) -> dict:
    if shape["name"] == "circle":
        return {"name": "circle", "radius": round(float(shape["radius"]), 12),
                "center": [round(float(c), 12) for c in shape["center"]]}
    return dict(shape)


def world_from_reference(ref: Mapping[str, Any], num_envs: int = 1, *,
                         skip: Sequence[str] = (), **world_kw: Any) -> Any:
    """A :class:`~push_envs.physics.World` of ``num_envs`` envs of the recorded world
    ``ref`` (its ``world`` and ``objects``); objects named in ``skip`` (or IR-SIM's grid
    map) are left out. The world runs in the recording's ``collision_mode`` (IR-SIM's
    default, ``stop``, when it has none); ``world_kw`` adds or overrides world keys
    (friction, collision_mode, ...)."""
    from ..world import World

    robots, obstacles, fields = [], [], {}
    for obj in ref["objects"]:
        if obj["name"] in skip or obj["shape"]["name"] == "map":
            continue
        body, f = body_entry(obj)
        (robots if obj["role"] == "robot" else obstacles).append(body)
        fields[obj["name"]] = f
    world = {"step_time": float(ref["world"]["step_time"]), "width": 1e3, "height": 1e3,
             "collision_mode": ref["world"].get("collision_mode", "stop")}
    world.update(world_kw)
    scene = {"world": world, "robot": robots, "obstacle": obstacles}
    spec = load_scene(scene, source=ref["world"].get("file", "<reference>"))
    counts: dict[str, int] = {}
    bodies = []
    for b in spec.bodies:
        k = counts.get(b.role, 0)
        counts[b.role] = k + 1
        f = dict(fields[b.name], path=f"{b.role}[{k}]")
        if f["goal"] is not None and not f["goal"]:
            f["goal"] = None
        bodies.append(with_fields(b, f))
    spec = dataclasses.replace(spec, bodies=tuple(bodies))
    out = World(compile_scene(spec), num_envs=num_envs)
    for obj in ref["objects"]:
        # a wandering object's first goal is IR-SIM's draw, recorded as its queue
        if obj.get("wander") and obj.get("goal") and obj["name"] in out.names \
                and out.behaviours is not None:
            out.set_goal(obj["name"], obj["goal"])
    return out



def reference_from_irsim(env: Any) -> dict:
    """The description :func:`world_from_reference` reads, taken from a loaded IR-SIM
    environment (``irsim.make(...)``): each object as IR-SIM resolved it. Only IR-SIM's
    objects are read; IR-SIM itself is not imported here."""
    import numpy as np

    def floats(a: Any) -> list[float]:
        return [float(v) for v in np.asarray(a, dtype=float).reshape(-1)]

    def shape(obj: Any) -> dict:
        gf = obj.gf
        geom = gf._original_geometry
        if gf.name == "circle":
            return {"name": "circle", "radius": float(gf.radius),
                    "center": floats(geom.centroid.coords[0])}
        if gf.name == "linestring":
            return {"name": "linestring", "vertices": [floats(p) for p in geom.coords]}
        if gf.name == "map":
            return {"name": "map"}
        polys = list(geom.geoms) if hasattr(geom, "geoms") else [geom]
        parts = [{"name": "polygon", "vertices": [floats(p) for p in list(g.exterior.coords)[:-1]]}
                 for g in polys]
        return parts[0] if len(parts) == 1 else {"name": "compound", "parts": parts}

    objects = []
    for obj in env.objects:
        objects.append({
            "name": obj.name, "role": obj.role, "group": int(obj.group),
            "kinematics": obj.kinematics, "shape": shape(obj), "state": floats(obj.state),
            "goal": None if obj._goal is None else [floats(g) for g in obj._goal],
            "init_goal": None if obj._init_goal is None else [floats(g) for g in obj._init_goal],
            "goal_threshold": float(obj.goal_threshold), "arrive_mode": obj.arrive_mode,
            "behavior": obj.obj_behavior.behavior_dict or None,
            "group_behavior": obj.group_behavior_dict or None,
            "vel_min": floats(obj.vel_min), "vel_max": floats(obj.vel_max),
            "acce": floats(obj.info.acce), "static": bool(obj.static),
            "unobstructed": bool(obj.unobstructed),
            "wheelbase": None if obj.wheelbase is None else float(obj.wheelbase),
            "wander": bool(getattr(obj, "wander", False)),
        })
    return {"world": {"file": "<irsim>", "step_time": float(env.step_time),
                      "collision_mode": env._world_param.collision_mode},
            "objects": objects}
