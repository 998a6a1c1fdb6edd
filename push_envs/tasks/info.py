"""A task's info columns, declared once in its ``TaskSpec.info_fields`` (name, type) and
read from there by the kernels: the column table ``INFO`` (``info[e, INFO.contacts]``) and
the record ``InfoRow`` an evaluate hook fills by name and stores at once::

    INFO = info_columns(PushMulti)
    InfoRow = info_row(PushMulti)

    write_info(V.info, e, InfoRow(boxes_at_goal=float(placed), box_to_goal=worst, ...))

A record has one field per declared column, in declared order, so a value cannot land in
another column, nor a column be left unwritten. The info array holds floats: give each
value as one (``float(count)``), so the record is a homogeneous tuple.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from push_envs.core.step import INFO_TASK
from push_envs.core.task import columns
from push_envs.physics.jit import compiled


def info_columns(task: type) -> Any:
    """``task``'s info column table for the kernels: the ``INFO_TASK`` generic columns
    (``generic0``...), then its ``info_fields`` in order."""
    return columns([f"generic{i}" for i in range(INFO_TASK)], [k for k, _ in task.info_fields])


def info_row(task: type) -> type:
    """The record of ``task``'s info values: a namedtuple ``InfoRow`` with a field per entry
    of its ``info_fields``, in order. Bind it to the module global ``InfoRow`` of the task's
    module (its name and module let pickle, and so numba's cache, find the class)."""
    return namedtuple("InfoRow", [k for k, _ in task.info_fields], module=task.__module__)


# IR-inlined: typed in each evaluate hook with that task's own record type
@compiled(inline="always")
def write_info(info, e, row):
    """Store the record ``row`` (an ``InfoRow`` of floats) in env e's task info columns: its
    fields in order, from column ``INFO_TASK`` on."""
    for i in range(len(row)):
        info[e, INFO_TASK + i] = row[i]
