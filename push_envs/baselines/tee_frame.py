"""Push-T seen from the T: the inputs of the DAgger policy (``train/dagger.py``) and its
actions between the T's frame and the robot's body frame, in numpy only.

The policy that ``train/dagger.py`` trains reads these features and answers in the T's frame;
the pretrained agent (:mod:`push_envs.baselines.agent`) runs the same code without torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import obs_layout as L

# The observation fields the frame reads, by the attribute that holds each one's column.
FIELDS = {"robot": "robot_xy", "heading": "robot_heading", "obj": "object_rel",
          "obj_heading": "object_heading_rel", "goal": "goal_xy",
          "goal_heading": "goal_heading"}


class TeeFrame:
    """Push-T seen from the T: the policy's inputs, and its actions between the T's frame and
    the robot's body frame. Columns are looked up by name in the task's observation layout
    (or given as :attr:`columns`, as a saved agent holds them)."""

    FEATURES = ("robot x, y in the T's frame [m]", "goal origin x, y in the T's frame [m]",
                "the same x10", "cos, sin of the goal heading less the T's",
                "that heading error [rad]", "the same x10")
    SIZE = 10

    def __init__(self, layout: tuple, args: dict[str, Any]) -> None:
        self._set({key: L.offset(layout, args, name) for key, name in FIELDS.items()})

    @classmethod
    def from_columns(cls, columns: dict[str, int]) -> TeeFrame:
        """The frame reading the first columns ``columns`` names (the keys of :data:`FIELDS`,
        as :attr:`columns` returns them). A missing key or a negative column: ValueError."""
        missing = sorted(set(FIELDS) - set(columns))
        bad = {k: v for k, v in columns.items()
               if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0}
        if missing or bad:
            raise ValueError(f"TeeFrame columns need {sorted(FIELDS)} as ints >= 0; missing "
                             f"{missing}, bad {bad}")
        frame = cls.__new__(cls)
        frame._set({k: int(columns[k]) for k in FIELDS})
        return frame

    def _set(self, columns: dict[str, int]) -> None:
        self.robot, self.heading = columns["robot"], columns["heading"]
        self.obj, self.obj_heading = columns["obj"], columns["obj_heading"]
        self.goal, self.goal_heading = columns["goal"], columns["goal_heading"]

    @property
    def columns(self) -> dict[str, int]:
        """The first column of each field read (keys of :data:`FIELDS`)."""
        return {k: int(getattr(self, k)) for k in FIELDS}

    def _poses(self, obs: np.ndarray) -> tuple[np.ndarray, ...]:
        """Robot (x, y, cos, sin), the T's origin and the cos, sin of its heading (world)."""
        o = np.asarray(obs, np.float64)
        rx, ry = o[:, self.robot], o[:, self.robot + 1]
        c, s = o[:, self.heading], o[:, self.heading + 1]
        lx, ly = o[:, self.obj], o[:, self.obj + 1]
        hc, hs = o[:, self.obj_heading], o[:, self.obj_heading + 1]
        return rx, ry, c, s, rx + c * lx - s * ly, ry + s * lx + c * ly, c * hc - s * hs, \
            s * hc + c * hs

    def features(self, obs: np.ndarray) -> np.ndarray:
        """(N, obs_dim) observations -> (N, 10) inputs (:attr:`FEATURES`), float32."""
        o = np.asarray(obs, np.float64)
        rx, ry, _, _, ox, oy, ct, st = self._poses(o)

        def local(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return ct * x + st * y, -st * x + ct * y

        px, py = local(rx - ox, ry - oy)
        gx, gy = local(o[:, self.goal] - ox, o[:, self.goal + 1] - oy)
        cg, sg = o[:, self.goal_heading], o[:, self.goal_heading + 1]
        ce, se = cg * ct + sg * st, sg * ct - cg * st
        err = np.arctan2(se, ce)
        return np.stack([px, py, gx, gy, 10 * gx, 10 * gy, ce, se, err, 10 * err],
                        axis=1).astype(np.float32)

    def to_frame(self, obs: np.ndarray, act: np.ndarray) -> np.ndarray:
        """Body-frame velocities (N, 2) [m/s] -> the same velocities in the T's frame."""
        _, _, c, s, _, _, ct, st = self._poses(obs)
        wx, wy = c * act[:, 0] - s * act[:, 1], s * act[:, 0] + c * act[:, 1]
        return np.stack([ct * wx + st * wy, -st * wx + ct * wy], axis=1).astype(np.float32)

    def from_frame(self, obs: np.ndarray, act: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`to_frame`."""
        _, _, c, s, _, _, ct, st = self._poses(obs)
        wx, wy = ct * act[:, 0] - st * act[:, 1], st * act[:, 0] + ct * act[:, 1]
        return np.stack([c * wx + s * wy, -s * wx + c * wy], axis=1).astype(np.float32)


SPEED_FLOOR = 1e-3  # [m/s] speeds below this are modelled as this (log of 0)


def encode(act: np.ndarray) -> np.ndarray:
    """Velocities (N, 2) [m/s] -> (unit direction x, y; log speed), float32."""
    speed = np.linalg.norm(act, axis=1, keepdims=True)
    return np.concatenate([act / np.maximum(speed, SPEED_FLOOR),
                           np.log(np.maximum(speed, SPEED_FLOOR))], axis=1).astype(np.float32)


def decode(y: np.ndarray) -> np.ndarray:
    """The inverse of :func:`encode` (the direction renormalised, speeds capped at 1 m/s)."""
    d = y[:, :2] / np.maximum(np.linalg.norm(y[:, :2], axis=1, keepdims=True), 1e-6)
    return d * np.minimum(np.exp(y[:, 2:3]), 1.0)
