"""What the agent of an IR-SIM world observes (``push_envs/World-v0``): a flat float32 row.

The columns, in order (robot frame: x forward, y to the left of the agent's heading):

=============  =====  ==========================================================
block          width  contents
=============  =====  ==========================================================
state          7      x, y [m]; cos, sin of the heading; the drive state (2: diff
                      [v m/s, omega rad/s], omni [vx, vy m/s], acker [v m/s,
                      steer rad]); for omni_angular the third, its yaw rate
                      [rad/s], is one more column (8)
goal           7      goal x, y [m]; goal in the robot frame dx, dy [m]; the
                      distance [m]; cos, sin of the heading error (0, 0 for a
                      goal without a heading)
lidar          n      each ray-casting sensor the agent carries, in scene order:
                      ranges [m] (lidar2d); ranges and radial velocities [m/s]
                      (fmcw_lidar2d, 2 n); ranges and hit velocities (lidar2d
                      with has_velocity, 3 n: range, vx, vy world frame)
contact2d      4 x 6  if the agent carries contact2d: up to 4 contacts, deepest
                      force first: touching flag, normal (robot frame, toward
                      the agent), force [N], point (robot frame) [m]
fov            3 m    if the agent declares ``fov`` / ``fov_radius``: for each of
                      the m other objects (names order): seen flag, position in
                      the robot frame [m] (0, 0 when unseen)
=============  =====  ==========================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..physics.layout import BI_DRIVE
from ..physics.layout import YW_STATE

MAX_CONTACTS = 4
"""Contacts of the agent observed by its contact2d block."""
CONTACT_COLS = 6


@dataclass(frozen=True)
class Block:
    """One block of the observation row: its name, first column and width."""

    name: str
    start: int
    width: int


class WorldObservation:
    """The observation layout of an agent in a world, and its assembly (numpy, all envs)."""

    def __init__(self, world: Any, agent: int) -> None:
        self.world = world
        self.agent = agent
        self.name = world.scene.names[agent]
        spec = world.scene.spec.bodies[agent]
        self.drive_cols = _drive_columns(world, agent)
        blocks: list[tuple[str, int]] = [("state", 5 + self.drive_cols), ("goal", 7)]
        self.lidars: list[tuple[int, Any]] = [
            (k, lspec) for k, (b, lspec) in enumerate(world.scene.lidars) if b == agent]
        for k, lspec in self.lidars:
            n = int(world.lidar_arrays.nbeam[k])
            per = 2 if lspec.fmcw else 3 if lspec.has_velocity else 1
            blocks.append((f"lidar{k}", per * n))
        self.contact = "contact2d" in tuple(spec.sensors)
        if self.contact:
            blocks.append(("contact2d", MAX_CONTACTS * CONTACT_COLS))
        self.fov = (getattr(spec, "fov", None) is not None
                    or getattr(spec, "fov_radius", None) is not None)
        nb = len(world.scene.spec.bodies)
        self.others = np.array([b for b in range(nb) if b != agent], np.int64)
        if self.fov:
            blocks.append(("fov", 3 * len(self.others)))
        self.blocks: list[Block] = []
        at = 0
        for name, width in blocks:
            self.blocks.append(Block(name, at, width))
            at += width
        self.size = at

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Observation-space bounds (low, high): infinite but for lidar ranges, flags, cos
        and sin."""
        lo = np.full(self.size, -np.inf, np.float32)
        hi = np.full(self.size, np.inf, np.float32)
        s = self.blocks[0].start
        lo[s + 2:s + 4], hi[s + 2:s + 4] = -1.0, 1.0
        g = self.blocks[1].start
        lo[g + 4] = 0.0
        lo[g + 5:g + 7], hi[g + 5:g + 7] = -1.0, 1.0
        for blk, (_k, lspec) in zip(self.blocks[2:2 + len(self.lidars)], self.lidars,
                                    strict=True):
            n = blk.width // (2 if lspec.fmcw else 3 if lspec.has_velocity else 1)
            lo[blk.start:blk.start + n] = 0.0
            hi[blk.start:blk.start + n] = lspec.range_max
        for blk in self.blocks:
            if blk.name == "contact2d":
                cols = blk.start + np.arange(MAX_CONTACTS) * CONTACT_COLS
                lo[cols], hi[cols] = 0.0, 1.0
                lo[cols + 1], hi[cols + 1] = -1.0, 1.0
                lo[cols + 2], hi[cols + 2] = -1.0, 1.0
                lo[cols + 3] = 0.0
            if blk.name == "fov":
                cols = blk.start + 3 * np.arange(len(self.others))
                lo[cols], hi[cols] = 0.0, 1.0
        return lo, hi

    def goal_frame(self, goal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Distance [m] from the agent to ``goal`` (E, 3) per env, and the agent's state."""
        st = self.world.state(self.name)
        return np.hypot(goal[:, 0] - st[:, 0], goal[:, 1] - st[:, 1]), st

    def assemble(self, out: np.ndarray) -> None:
        """Write every env's observation row into ``out`` (num_envs, size) float32."""
        w = self.world
        st = w.state(self.name)
        x, y, th = st[:, 0], st[:, 1], st[:, 2]
        c, s = np.cos(th), np.sin(th)
        b = self.blocks[0].start
        out[:, b] = x
        out[:, b + 1] = y
        out[:, b + 2] = c
        out[:, b + 3] = s
        out[:, b + 4:b + 6] = w.drv[:, self.agent, :2]
        if self.drive_cols == 3:
            out[:, b + 6] = _yaw_state(w, self.agent)
        goal = w.goal(self.name)
        g = self.blocks[1].start
        gx = np.nan_to_num(goal[:, 0] - x)
        gy = np.nan_to_num(goal[:, 1] - y)
        out[:, g] = np.nan_to_num(goal[:, 0])
        out[:, g + 1] = np.nan_to_num(goal[:, 1])
        out[:, g + 2] = c * gx + s * gy
        out[:, g + 3] = -s * gx + c * gy
        out[:, g + 4] = np.hypot(gx, gy)
        has = np.isfinite(goal[:, 2])
        err = np.where(has, goal[:, 2] - th, 0.0)
        out[:, g + 5] = np.where(has, np.cos(err), 0.0)
        out[:, g + 6] = np.where(has, np.sin(err), 0.0)
        k = 2
        if self.lidars:
            # one scan of every ray-casting sensor; each block reads its own rows
            w.lidar_array(self.name, self.lidars[0][1].name)
            for slot, lspec in self.lidars:
                blk = self.blocks[k]
                k += 1
                n = int(w.lidar_arrays.nbeam[slot])
                r = w.lidar_arrays.ranges[:, slot, :n]
                out[:, blk.start:blk.start + n] = r
                if lspec.fmcw:
                    out[:, blk.start + n:blk.start + 2 * n] = w.lidar_arrays.radial[:, slot, :n]
                elif lspec.has_velocity:
                    v = w.lidar_arrays.vels[:, slot, :n]
                    out[:, blk.start + n:blk.start + 2 * n] = v[..., 0]
                    out[:, blk.start + 2 * n:blk.start + 3 * n] = v[..., 1]
        if self.contact:
            blk = self.blocks[k]
            k += 1
            arr, _count = w.contact_array(self.name, MAX_CONTACTS)
            nx, ny = arr[..., 1], arr[..., 2]
            px, py = arr[..., 4] - x[:, None], arr[..., 5] - y[:, None]
            cc, ss = c[:, None], s[:, None]
            rows = np.stack([arr[..., 0], cc * nx + ss * ny, -ss * nx + cc * ny, arr[..., 3],
                             cc * px + ss * py, -ss * px + cc * py], axis=-1)
            out[:, blk.start:blk.start + blk.width] = rows.reshape(len(out), -1)
        if self.fov:
            blk = self.blocks[k]
            seen = w.fov_detected(self.name)[:, self.others]
            ox = w.pos[:, self.others, 0] - x[:, None]
            oy = w.pos[:, self.others, 1] - y[:, None]
            rx = np.where(seen, c[:, None] * ox + s[:, None] * oy, 0.0)
            ry = np.where(seen, -s[:, None] * ox + c[:, None] * oy, 0.0)
            rows = np.stack([seen.astype(np.float64), rx, ry], axis=-1)
            out[:, blk.start:blk.start + blk.width] = rows.reshape(len(out), -1)


def _drive_columns(world: Any, agent: int) -> int:
    """Command columns of the agent's drive: 3 for omni_angular, else 2."""
    from ..physics.world import DRIVE_COLUMNS

    return DRIVE_COLUMNS[int(world.scene.bint[agent, BI_DRIVE])]


def _yaw_state(world: Any, agent: int) -> np.ndarray:
    """An omni_angular drive's yaw-rate state [rad/s] per env."""
    return world.yaw[:, agent, YW_STATE]
