"""What a policy sees of a state observation: its repeated blocks put in order, then some
columns held at 0. Training (train/train.py's ``sort_obs`` and ``hide_obs``), the warm start's
clone and a shipped agent all apply the same :class:`ObsView`, so a policy acts on exactly
the rows it was trained on.

Why sort: a task with many like objects (Sweep-v1's 20 pucks) lists them in a fixed but
arbitrary order, one slot per object. An MLP reading such a list must learn the same skill
once per slot and find the object that matters anew in every step; ordered by a key (the
pucks outside the goal first, each group nearest the robot first), slot 0 is always the
object to deal with next. Measured on Sweep-v1 (PPO, 10 M steps, seed 0): 7.7 pucks inside
at the end with the pucks sorted against 3.3 unsorted (its hyperparams.yml).

A sort is seven integers, ``(start, width, count, key, key_size, last, toward)``, and a
standoff [m]: ``count`` slots of ``width`` columns from column ``start``; each slot's key is
the Euclidean norm of its ``key_size`` columns from offset ``key`` in the slot (a position
relative to the robot: its distance [m]); with ``last`` >= 0, slots whose column at offset
``last`` is above 0.5 (a 0/1 flag) go after every other slot. Slots are ordered by (flag, key)
with a stable sort, so ties keep the task's order and the view is a deterministic function of
the observation.

With ``toward`` >= 0 the key is a push pose's distance instead: the point ``standoff`` [m]
behind the slot's position on the line along its ``key_size`` columns from offset ``toward``
(the direction the object is to be pushed, e.g. Sweep-v1's ``goal_minus_puck``), i.e.
``|p - standoff * u / |u||``. That is the point a pusher must reach first, so slot 0 is then
the object a task's dense reward steers the robot to (Sweep-v1's robot term pays progress
toward the nearest push pose; the nearest puck was that target on 71 % of the shipped agent's
steps). Measured there it did not pay: PPO learned slower on two seeds of three with it
(docs/history.md, fifteenth round), so Sweep-v1's entry sorts by position. Rows of
six integers (files written before ``toward``) read as ``toward = -1``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np

from push_envs.core import obs_layout as L

SORT_FIELDS = ("start", "width", "count", "key", "key_size", "last", "toward")
"""The seven integers of one sort, in the order a ``sort_slots`` array row holds them."""


class ObsView:
    """``view(obs)``: a copy of ``obs`` ((..., obs_dim)) with each sort of ``sorts``
    ((k, 7) integers, :data:`SORT_FIELDS`; (k, 6) reads as ``toward = -1``) applied in turn,
    then the columns ``hide`` set to 0; ``obs`` itself when there is nothing to do.
    ``standoff`` ((k,) [m]) is each sort's push-pose standoff, used by rows with ``toward``
    >= 0 and required when there is one (otherwise it defaults to 0). Arguments that do not
    fit an observation of ``obs_dim`` columns raise ValueError naming ``where``."""

    def __init__(self, obs_dim: int, hide: Any = (), sorts: Any = (), where: str = "view",
                 standoff: Any = None) -> None:
        hide = np.asarray(hide)
        hide = hide if hide.size else np.zeros(0, np.int64)
        if hide.dtype.kind not in "iu" or hide.ndim != 1 or (
                len(hide) and (hide.min() < 0 or hide.max() >= obs_dim)):
            raise ValueError(f"{where}: hide_columns must be column numbers below {obs_dim}")
        sorts = np.asarray(sorts)
        sorts = sorts if sorts.size else np.zeros((0, 7), np.int64)
        if sorts.dtype.kind not in "iu" or sorts.ndim != 2 or sorts.shape[1] not in (6, 7):
            raise ValueError(f"{where}: sort_slots must be integer rows of {SORT_FIELDS}, got "
                             f"{sorts.dtype} {sorts.shape}")
        if sorts.shape[1] == 6:
            sorts = np.concatenate([sorts, np.full((len(sorts), 1), -1, sorts.dtype)], 1)
        for row in sorts.tolist():
            _check_sort(row, obs_dim, where)
        if standoff is None and (sorts[:, 6] >= 0).any():
            raise ValueError(f"{where}: sort_standoff is missing, and a sort_slots row keyed "
                             f"by its push pose ('toward' >= 0) needs its standoff [m]")
        standoff = np.zeros(len(sorts)) if standoff is None else np.asarray(standoff)
        if standoff.dtype.kind != "f" or standoff.shape != (len(sorts),) or not (
                np.isfinite(standoff).all() and (standoff >= 0).all()):
            raise ValueError(f"{where}: sort_standoff must be {len(sorts)} finite lengths "
                             f">= 0 [m], one per sort, got {standoff!r}")
        self.hide = hide.astype(np.int64)
        self.sorts = sorts.astype(np.int64)
        self.standoff = standoff.astype(np.float64)

    def __bool__(self) -> bool:
        return bool(len(self.hide) or len(self.sorts))

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        if not self:
            return obs
        obs = np.array(obs, copy=True)
        for (start, width, count, key, key_size, last, toward), standoff in zip(
                self.sorts.tolist(), self.standoff.tolist(), strict=True):
            end = start + width * count
            slots = obs[..., start:end].reshape(*obs.shape[:-1], count, width)
            p = slots[..., key:key + key_size]
            if toward >= 0:
                u = slots[..., toward:toward + key_size]
                n = np.linalg.norm(u, axis=-1, keepdims=True)
                # A slot already at its push direction's origin (u = 0) keeps its position.
                p = p - standoff * u / np.where(n > 1e-9, n, np.inf)
            dist = np.linalg.norm(p, axis=-1)
            if last >= 0:
                # np.lexsort's last key is the primary one: flagged slots after the others.
                order = np.lexsort((dist, slots[..., last] > 0.5), axis=-1)
            else:
                order = np.argsort(dist, axis=-1, kind="stable")
            slots = np.take_along_axis(slots, order[..., None], axis=-2)
            obs[..., start:end] = slots.reshape(*obs.shape[:-1], count * width)
        if len(self.hide):
            obs[..., self.hide] = 0
        return obs


def _check_sort(row: Sequence[int], obs_dim: int, where: str) -> None:
    start, width, count, key, key_size, last, toward = row
    if not (start >= 0 and width >= 1 and count >= 1 and start + width * count <= obs_dim):
        raise ValueError(f"{where}: sort_slots row {row}: {count} slots of {width} columns "
                         f"from column {start} do not fit {obs_dim} columns")
    if not (0 <= key and key_size >= 1 and key + key_size <= width):
        raise ValueError(f"{where}: sort_slots row {row}: the key's {key_size} columns from "
                         f"offset {key} do not fit a slot of {width}")
    if not (last == -1 or 0 <= last < width):
        raise ValueError(f"{where}: sort_slots row {row}: 'last' must be -1 or an offset "
                         f"below {width}")
    if not (toward == -1 or 0 <= toward and toward + key_size <= width):
        raise ValueError(f"{where}: sort_slots row {row}: 'toward' must be -1 or the offset "
                         f"of {key_size} columns that fit a slot of {width}")


def sort_rows(layout: L.Layout, args: Mapping[str, Any], entries: Any,
              source: str = "sort_obs") -> tuple[np.ndarray, np.ndarray]:
    """The ``sort_slots`` rows ((k, 7), :data:`SORT_FIELDS`) and their standoffs ((k,) [m])
    of the yml's ``sort_obs``: one mapping ``{by: <field>, last: <flag field>, toward:
    <field>, standoff: <m>}`` or a list of them, naming repeated fields of ``layout`` (with
    ``args``, the task's arguments). ``last`` is optional and must be a one-column field of
    the same block; ``toward`` (optional, with ``standoff`` >= 0 [m], which needs it) must be
    a field of the block as wide as ``by``: the slots are then ordered by their push pose's
    distance (:class:`ObsView`). Anything else raises ValueError naming ``source``, the key
    and the fields it may name."""
    if isinstance(entries, Mapping):
        entries = [entries]
    repeats = [item for item in layout if isinstance(item, L.Repeat)]
    fields = {f.name: item for item in repeats for f in item.fields}
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{source} must be a mapping {{by: <field>, last: <field>}} or a "
                         f"list of them, got {entries!r}; repeated fields: {list(fields)}")
    keys = {"by", "last", "toward", "standoff"}
    starts = {}
    for f, k, j in L.columns(layout, args):
        if j == 0:
            starts[f.name] = k
    rows, standoffs = [], []
    for i, entry in enumerate(entries):
        at = f"{source}[{i}]" if len(entries) > 1 else source
        if not isinstance(entry, Mapping) or set(entry) - keys or "by" not in entry:
            raise ValueError(f"{at} must be a mapping with the key 'by' (and optionally "
                             f"{sorted(keys - {'by'})}), got {entry!r}")
        by, last = entry["by"], entry.get("last")
        if by not in fields:
            raise ValueError(f"{at}.by: {by!r} is not a repeated observation field; repeated "
                             f"fields: {list(fields)}")
        block = fields[by]
        names = [f.name for f in block.fields]
        count = int(args[block.count])
        if count < 1:
            raise ValueError(f"{at}.by: {by!r}'s block has no slots ({block.count} = {count})")
        start = starts[names[0]]
        key_field = block.fields[names.index(by)]
        row = [start, block.width, count, starts[by] - start, key_field.size, -1, -1]
        if last is not None:
            if last not in names or block.fields[names.index(last)].size != 1:
                raise ValueError(f"{at}.last: {last!r} is not a one-column field of the "
                                 f"block of {by!r}; its fields: {names}")
            row[5] = starts[last] - start
        toward, standoff = entry.get("toward"), entry.get("standoff", 0.0)
        if toward is not None:
            if toward not in names or block.fields[names.index(toward)].size != key_field.size:
                raise ValueError(f"{at}.toward: {toward!r} is not a {key_field.size}-column "
                                 f"field of the block of {by!r}; its fields: {names}")
            row[6] = starts[toward] - start
        elif "standoff" in entry:
            raise ValueError(f"{at}.standoff: needs 'toward', the field along which the push "
                             f"pose lies behind {by!r}")
        if isinstance(standoff, bool) or not isinstance(standoff, (int, float)) or not (
                math.isfinite(standoff) and standoff >= 0):
            raise ValueError(f"{at}.standoff: must be a length >= 0 [m], got {standoff!r}")
        if any(r[0] == start for r in rows):
            raise ValueError(f"{at}: the block of {by!r} is sorted twice")
        rows.append(row)
        standoffs.append(float(standoff))
    return np.array(rows, np.int64).reshape(-1, 7), np.array(standoffs, np.float64)
