"""fov: IR-SIM's field of view, as an observation: which other objects the robot sees.

A body's field of view is two body keys, not a ``sensors:`` entry (IR-SIM's ``fov`` [rad] and
``fov_radius`` [m])::

    robot:
      - name: robot
        fov: 1.57
        fov_radius: 5.0

The rule (IR-SIM's ``fov_detect_object``) is the engine's, ``push_envs/physics/fov.py``:
``World.fov_detected(name)`` reads it for any body with a view, IR-SIM's defaults included (a
body with a lidar and no ``fov`` sees over the lidar's fan). An env observes the field of view
of its robot when the robot declares ``fov``: for every other body (in ``World.names`` order,
the grid map included), whether it is seen, then the x, y [m] of its origin in the robot's
frame (x along the heading, y to its left), zeros when not seen. ``render()`` draws the view
as a translucent wedge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from typing import NamedTuple

import numpy as np

from ..core.obs_layout import Field
from ..physics.abi import AbiType
from ..physics.abi import CFunction
from ..physics.fov import detect
from ..physics.fov import fov_of
from ..physics.frames import origin_pose
from ..physics.frames import origin_pose_seen
from .base import SENSE_OBSERVE
from .base import SENSE_SIG
from .base import Sensor
from .base import load_env
from .base import load_world
from .base import register_sensor

WEDGE = (120, 170, 230, 50)  # the view's fill (R, G, B, A)
WEDGE_REACH = 1000.0  # [m] a wedge of unbounded radius is drawn this long


@dataclass(frozen=True)
class FovSpec:
    """A field of view: ``fov`` [rad] wide about the heading, ``radius`` [m] deep."""

    fov: float
    radius: float
    name: str = "fov"


class FovArrays(NamedTuple):
    """prm (2,): fov [rad], radius [m];  body (1,): the observer;  others (K,): the bodies
    observed, in order;  rad (B,): each body's minimum bounding radius [m] at size 1;
    seen (E, B) uint8: the last detection per env."""

    prm: np.ndarray
    body: np.ndarray
    others: np.ndarray
    rad: np.ndarray
    seen: np.ndarray


FOV_ABI = AbiType(FovArrays, {"prm": ("f8", 1), "body": ("i8", 1), "others": ("i8", 1),
                              "rad": ("f8", 1), "seen": ("u1", 2)})
load_fov = FOV_ABI.loader


def fov_sense(which, e, at, wp, sp, vp, tp):
    """Detect in env e, then write each other body's seen flag from column ``at`` and its
    origin's (x, y) in the observer's frame [m] after them (zeros when not seen)."""
    if which != SENSE_OBSERVE:
        return
    W = load_world(wp)
    V = load_env(vp)
    F = load_fov(sp)
    b = F.body[0]
    seen = F.seen[e]
    detect(e, b, F.prm[0], F.prm[1], W, F.rad, seen)
    x, y, _th, c, s = origin_pose_seen(e, b, W.pos, W.ang, W.bflt, W.epar, W.cbuf)
    obs = V.obs[e]
    n = F.others.shape[0]
    for k in range(n):
        j = F.others[k]
        hit = seen[j] != 0
        obs[at + k] = 1.0 if hit else 0.0
        fx = fy = 0.0
        if hit:
            px, py, _t, _c, _s = origin_pose(e, j, W.pos, W.ang, W.bflt, W.epar)
            dx, dy = px - x, py - y
            fx, fy = c * dx + s * dy, -s * dx + c * dy
        obs[at + n + 2 * k] = fx
        obs[at + n + 2 * k + 1] = fy


FOV_SENSE = CFunction(fov_sense, SENSE_SIG)


@register_sensor
class Fov(Sensor):
    """IR-SIM's field of view (see the module doc)."""

    name = "fov"
    in_scenes = False  # body keys, not a sensors: entry
    abi = FOV_ABI
    sense = FOV_SENSE

    @classmethod
    def from_body(cls, body: Any) -> FovSpec | None:
        if body.fov is None:
            return None  # a view taken from the lidar is read from World, not observed
        view = fov_of(body)
        return FovSpec(*view)

    def __init__(self, env: Any, body: int, spec: FovSpec) -> None:
        super().__init__(env, body, spec)
        w = env.world
        B = w.scene.num_bodies
        self.others = np.array([j for j in range(B) if j != body], np.int64)
        self.arrays = FovArrays(prm=np.array([spec.fov, spec.radius]),
                                body=np.array([body], np.int64), others=self.others,
                                rad=w.fov_radii.copy(), seen=np.zeros((env.num_envs, B), np.uint8))

    def fields(self) -> tuple[Field, ...]:
        w = self.env.world
        name = w.scene.names[self.body]
        others = self.others
        who = ", ".join(w.scene.names[j] for j in others)

        def seen(ctx: Any) -> np.ndarray:
            return ctx.world.fov_detected(name)[:, others].astype(float)

        def rel(ctx: Any) -> np.ndarray:
            me = ctx.world.state(name)
            out = []
            for j in others:
                other = ctx.world.scene.names[j]
                p = ctx.world.state(other)[:, :2] if ctx.world.scene.shapes[j] is not None \
                    else np.zeros((ctx.world.num_envs, 2))
                d = p - me[:, :2]
                c, s = np.cos(me[:, 2]), np.sin(me[:, 2])
                out.append(np.stack([c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1]], 1))
            rows = np.concatenate(out, axis=1) if out else np.zeros((ctx.world.num_envs, 0))
            return rows * np.repeat(seen(ctx), 2, axis=1)

        fov_deg = math.degrees(self.spec.fov)
        return (Field("fov_seen", len(others),
                      f"1 if the body is in the field of view ({fov_deg:g} deg, "
                      f"{self.spec.radius:g} m; IR-SIM's rule), else 0, for each of: {who}",
                      "-", 0.0, 1.0, seen),
                Field("fov_xy", 2 * len(others),
                      "each of those bodies' origin x, y in the robot's frame when seen, "
                      "else 0", "m", -np.inf, np.inf, rel))

    @classmethod
    def draw(cls, renderer: Any, env: int, body: int, spec: FovSpec) -> None:
        """The view: a translucent wedge ``fov`` wide and ``radius`` deep about the heading."""
        w = renderer.world
        x, y, th = w.state(w.names[body])[env, :3]
        reach = min(spec.radius, WEDGE_REACH)
        arc = np.linspace(th - spec.fov / 2.0, th + spec.fov / 2.0, 33)
        pts = np.concatenate([[[x, y]], np.stack([x + reach * np.cos(arc),
                                                  y + reach * np.sin(arc)], 1)])
        overlay = renderer.overlay
        overlay.fill((0, 0, 0, 0))
        renderer.pg.draw.polygon(overlay, WEDGE, renderer.world_to_px(pts).tolist())
        renderer.canvas.blit(overlay, (0, 0))


__all__ = ["FOV_ABI", "FOV_SENSE", "Fov", "FovArrays", "FovSpec"]
