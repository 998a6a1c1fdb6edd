"""Scripted pushing policies (experts for demonstration datasets): go behind the object, push
it to the goal.

They read only the state observation (see the task docstring's table), so they double as a
check that the observation carries what a controller needs. :func:`push_box_actions` works on
a whole batch of observations at once (numpy, no per-env Python), :func:`push_box_action` on
one; :func:`expert` looks the policy of a task and drive up.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

BatchPolicy = Callable[[np.ndarray], np.ndarray]


def _wrap(a: np.ndarray) -> np.ndarray:
    return (a + np.pi) % (2.0 * np.pi) - np.pi


def push_box_actions(obs: np.ndarray, standoff: float = 0.32, align: float = 0.12) -> np.ndarray:
    """Actions in [-1, 1]^2, shape (N, 2), of a diff robot (v max 1 m/s, omega max 2 rad/s)
    for a batch of state observations of shape (N, obs_dim).

    ``standoff`` [m] is how far behind the box centre the robot lines up; ``align`` [m] how
    far off the push line it may be before it re-approaches.
    """
    o = np.asarray(obs, dtype=np.float64)
    if o.ndim != 2 or o.shape[1] < 21:
        raise ValueError(f"obs must be a batch of state observations (N, >= 21), got shape "
                         f"{np.shape(obs)}")
    rx, ry, c, s = o[:, 0], o[:, 1], o[:, 2], o[:, 3]
    rth = np.arctan2(s, c)
    bx = rx + c * o[:, 7] - s * o[:, 8]
    by = ry + s * o[:, 7] + c * o[:, 8]
    gx, gy = o[:, 15], o[:, 16]
    ux, uy = gx - bx, gy - by
    dist = np.hypot(ux, uy) + 1e-9
    ux, uy = ux / dist, uy / dist
    # Where the robot must stand to push the box toward the goal.
    px, py = bx - ux * standoff, by - uy * standoff
    # Offset of the robot from the push line, and how far behind the box it is.
    dx, dy = rx - bx, ry - by
    behind = -(dx * ux + dy * uy)
    cross = -dx * uy + dy * ux
    pushing = (behind > 0.2) & (np.abs(cross) < align)
    approach = ~pushing & ((behind > 0.0) | (np.hypot(px - rx, py - ry) < 0.6))
    # In front of the box: swing around it on the side the robot is on, clear of its corners.
    side = np.where(cross >= 0.0, 1.0, -1.0)
    tx = np.where(pushing, gx, np.where(approach, px, bx - uy * side * 0.45 - ux * 0.1))
    ty = np.where(pushing, gy, np.where(approach, py, by + ux * side * 0.45 - uy * 0.1))
    err = _wrap(np.arctan2(ty - ry, tx - rx) - rth)
    v = np.maximum(np.cos(err), 0.0) * np.minimum(1.0, 2.0 * np.hypot(tx - rx, ty - ry) + 0.3)
    w = np.clip(1.5 * err, -1.0, 1.0)
    return np.stack([v, w], axis=1).astype(np.float32)


def push_box_action(obs: np.ndarray, standoff: float = 0.32, align: float = 0.12) -> np.ndarray:
    """:func:`push_box_actions` for one observation: an action of shape (2,)."""
    return push_box_actions(np.asarray(obs)[None, :], standoff, align)[0]


# (task id, robot) -> batch policy. WallSlide-v0 shares PushBox-v0's observation layout and
# its box lies flat on the wall with the goal along it, so the same push-pose controller
# pushes the box's end face along the wall.
EXPERTS: dict[tuple[str, str], BatchPolicy] = {
    ("PushBox-v0", "diff"): push_box_actions,
    ("WallSlide-v0", "diff"): push_box_actions,
}


def expert(env_id: str, robot: str) -> BatchPolicy:
    """The scripted batch policy of ``env_id`` driven by ``robot``; a ``KeyError`` naming the
    tasks that have one otherwise."""
    try:
        return EXPERTS[(env_id, robot)]
    except KeyError:
        have = ", ".join(f"{i} ({r})" for i, r in EXPERTS)
        raise KeyError(f"no scripted expert for {env_id} with robot={robot!r}; scripted "
                       f"experts exist for: {have}. Use a trained model (.zip) instead") from None
