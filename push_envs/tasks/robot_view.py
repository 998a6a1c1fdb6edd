"""What a robot sees of itself, declared once for every task: its head (pose and velocity)
and its contact slots, with the kernels that write them.

Both families and CoopPush-v0 (once per robot) put these fields in their observation: the
declarations below give the fields' names, docs, units, bounds and test readers, and the
kernels write them at columns the task looks up by name (``push_envs.core.obs_layout``).
Inside the head and inside one contact slot the columns follow the declaration: ``HEAD`` and
``SLOT`` are those relative offsets, computed here from the fields, never typed in.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np

from push_envs.core import Field
from push_envs.core import Repeat
from push_envs.core import compiled
from push_envs.physics.frames import origin_pose_seen
from push_envs.physics.layout import CT_FN
from push_envs.physics.layout import CT_NX
from push_envs.physics.layout import CT_NY
from push_envs.physics.layout import CT_PX
from push_envs.physics.layout import CT_PY
from push_envs.physics.sensors import sorted_slot

FORCE_CLIP = 10.0  # force / traction is clipped to this in the observation
VEL_CLIP = 20.0  # [m/s] velocities are clipped to this in the observation
OMEGA_CLIP = 50.0  # [rad/s]

Reader = Callable[[Any], np.ndarray]


def robot_frame(th: np.ndarray, v: np.ndarray) -> np.ndarray:
    """World vectors (E, 2) into the frames of headings ``th`` (E,) [rad]."""
    c, s = np.cos(th), np.sin(th)
    return np.stack([c * v[:, 0] + s * v[:, 1], -s * v[:, 0] + c * v[:, 1]], 1)


def cos_sin(a: np.ndarray) -> np.ndarray:
    """(E, 2) cos and sin of angles ``a`` (E,) [rad]."""
    return np.stack([np.cos(a), np.sin(a)], 1)


def head_fields(prefix: str = "robot_", who: str = "robot",
                pose: Reader = lambda c: c.robot,
                name: Callable[[Any], str] = lambda c: c.robot_name) -> tuple[Field, ...]:
    """The robot's head: origin x, y, heading cos, sin, velocity, yaw rate. ``pose(ctx)``
    reads its (E, 3) origin pose [m, rad] and ``name(ctx)`` its body name, for the tests."""
    inf = np.inf
    return (
        Field(f"{prefix}xy", 2, f"{who} origin x, y (world)", "m", -inf, inf,
              lambda c: pose(c)[:, :2]),
        Field(f"{prefix}heading", 2, f"cos, sin of the {who} heading", "-", -1, 1,
              lambda c: cos_sin(pose(c)[:, 2])),
        Field(f"{prefix}vel", 2, f"{who} velocity vx, vy (world, clipped)", "m/s", -VEL_CLIP,
              VEL_CLIP, lambda c: np.clip(c.world.velocity(name(c)), -VEL_CLIP, VEL_CLIP)),
        Field(f"{prefix}omega", 1, f"{who} yaw rate (clipped)", "rad/s", -OMEGA_CLIP,
              OMEGA_CLIP,
              lambda c: np.clip(c.world.omega(name(c)), -OMEGA_CLIP, OMEGA_CLIP)[:, None]),
    )


def contact_block(prefix: str = "", who: str = "robot",
                  pose: Reader = lambda c: c.robot,
                  slots: Reader = lambda c: c.robot_slots) -> Repeat:
    """The robot's ``max_contacts`` contact slots, largest force first: in contact, normal
    (from the other body toward the robot, robot frame), force / traction, point (relative
    to the robot's origin, robot frame). ``slots(ctx)`` reads the world's (E, M, 6) contact
    array of the robot (``World.contact_array``)."""
    inf = np.inf

    def rot(c: Any, v: np.ndarray) -> np.ndarray:
        return robot_frame(pose(c)[:, 2], v)

    return Repeat("max_contacts", "M", (
        Field(f"{prefix}contact_on", 1, f"{who} contact (largest force first): in contact "
              "(0/1)", "-", 0, 1, lambda c, j: slots(c)[:, j, 0:1]),
        Field(f"{prefix}contact_normal", 2, f"its normal, from the other body toward the "
              f"{who} ({who} frame)", "-", -1, 1, lambda c, j: rot(c, slots(c)[:, j, 1:3])),
        Field(f"{prefix}contact_force", 1, f"its force / {who} traction (clipped to "
              f"{FORCE_CLIP:g})", "-", 0, FORCE_CLIP,
              lambda c, j: np.minimum(slots(c)[:, j, 3:4] / c.traction, FORCE_CLIP)),
        Field(f"{prefix}contact_point", 2, f"its point relative to the {who} origin ({who} "
              "frame)", "m", -inf, inf,
              lambda c, j: rot(c, slots(c)[:, j, 4:6] - pose(c)[:, :2]) * slots(c)[:, j, 0:1]),
    ), name=f"{prefix}contacts")


def relative(fields: tuple[Field, ...], prefix: str) -> Any:
    """Offsets of ``fields`` from the first one's column, named without ``prefix``."""
    names, at, k = [], [], 0
    for f in fields:
        names.append(f.name[len(prefix):])
        at.append(k)
        k += f.size
    return namedtuple("Offsets", names)(*at)


HEAD = relative(head_fields(), "robot_")
"""Columns of the head from its first: xy, heading, vel, omega."""
HEAD_WIDTH = sum(f.size for f in head_fields())
SLOT = relative(contact_block().fields, "contact_")
"""Columns of a contact slot from its first: on, normal, force, point."""
SLOT_WIDTH = contact_block().width


# ------------------------------------------------------------------------------ kernels
@compiled
def clip(x, limit):
    """x clipped to [-limit, limit]."""
    return -limit if x < -limit else (limit if x > limit else x)


# The three writers of a two-column field: LLVM-inlined, as they sit in every observe hook
# (a call would pass the row's array structure for two stores).
@compiled(inline="llvm")
def put2(row, k, a, b):
    """A two-column field from column k: ``row[k], row[k + 1] = a, b``."""
    row[k] = a
    row[k + 1] = b


@compiled(inline="llvm")
def put_in_frame(row, k, c, s, x, y):
    """The world vector (x, y) seen in the frame of heading (cos c, sin s), into columns k,
    k + 1 (units: those of x and y)."""
    row[k] = c * x + s * y
    row[k + 1] = -s * x + c * y


@compiled(inline="llvm")
def put_heading_in_frame(row, k, c, s, co, so):
    """cos and sin of the heading (cos co, sin so) relative to the heading (cos c, sin s),
    into columns k, k + 1: angle differences by identities, cos(a - b) = ca cb + sa sb and
    sin(a - b) = sa cb - ca sb, with no trigonometric call."""
    row[k] = co * c + so * s
    row[k + 1] = so * c - co * s


@compiled
def write_head(e, W, row, k, r):
    """Robot r's head into ``row`` from column k (the layout of :func:`head_fields`);
    returns its origin x, y [m] and heading cos, sin."""
    rx, ry, _th, c, s = origin_pose_seen(e, r, W.pos, W.ang, W.bflt, W.epar, W.cbuf)
    put2(row, k + HEAD.xy, rx, ry)
    put2(row, k + HEAD.heading, c, s)
    put2(row, k + HEAD.vel, clip(W.vel[e, r, 0], VEL_CLIP), clip(W.vel[e, r, 1], VEL_CLIP))
    row[k + HEAD.omega] = clip(W.omg[e, r], OMEGA_CLIP)
    return rx, ry, c, s


@compiled
def write_contacts(e, W, row, base, m, r, rx, ry, c, s, trac):
    """Robot r's ``m`` contact slots into ``row`` from column ``base`` (the layout of
    :func:`contact_block`): normal toward the robot and point relative to its origin (rx, ry)
    [m], both in its frame (heading cos c, sin s), force / ``trac`` [N]; largest force
    first. Returns the robot's contact count."""
    cti, ctf = W.cti, W.ctf
    for j in range(SLOT_WIDTH * m):
        row[base + j] = 0.0
    n = 0
    for k in range(W.ctn[e]):
        a = cti[e, k, 0]
        b = cti[e, k, 1]
        if a != r and b != r:
            continue
        sgn = 1.0 if a == r else -1.0
        f = min(ctf[e, k, CT_FN] / trac, FORCE_CLIP)
        slot = sorted_slot(row, base, SLOT_WIDTH, SLOT.force, n, m, f)
        n += 1
        if slot < m:
            nx, ny = sgn * ctf[e, k, CT_NX], sgn * ctf[e, k, CT_NY]
            px, py = ctf[e, k, CT_PX] - rx, ctf[e, k, CT_PY] - ry
            q = base + SLOT_WIDTH * slot
            row[q + SLOT.on] = 1.0
            put_in_frame(row, q + SLOT.normal, c, s, nx, ny)
            row[q + SLOT.force] = f
            put_in_frame(row, q + SLOT.point, c, s, px, py)
    return n


__all__ = ["FORCE_CLIP", "HEAD", "HEAD_WIDTH", "OMEGA_CLIP", "SLOT", "SLOT_WIDTH", "VEL_CLIP",
           "clip", "contact_block", "cos_sin", "head_fields", "put2", "put_heading_in_frame",
           "put_in_frame", "relative", "robot_frame", "write_contacts", "write_head"]
