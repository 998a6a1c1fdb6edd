"""push_envs/tasks/info.py: a task's info columns come from its info_fields alone, and an
InfoRow lands in them in declared order."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from numba import njit

from push_envs.core.step import INFO_TASK
from push_envs.tasks import REGISTRY
from push_envs.tasks import spec_of
from push_envs.tasks.info import info_columns
from push_envs.tasks.info import info_row
from push_envs.tasks.info import write_info


@pytest.mark.parametrize("module", REGISTRY)
def test_each_task_reads_its_info_columns_from_its_info_fields(module):
    task = spec_of(module)
    names = tuple(k for k, _ in task.info_fields)
    mod = importlib.import_module(module)
    # a task whose columns are its family's (PushBox, WallSlide) reads the family's table
    family = importlib.import_module(module.rsplit(".", 1)[0] + ".family")
    info = getattr(mod, "INFO", None) or family.INFO
    assert info._fields[INFO_TASK:] == names
    assert all(getattr(info, n) == INFO_TASK + i for i, n in enumerate(names))

class _Toy:
    info_fields = (("count", int), ("distance", float), ("touching", bool))


ToyRow = info_row(_Toy)
TOY = info_columns(_Toy)


@njit(cache=False)
def _fill(info, e, count, distance):
    write_info(info, e, ToyRow(distance=distance, touching=1.0, count=float(count)))


def test_write_info_stores_a_record_by_name_in_declared_order():
    assert TOY._fields == (*(f"generic{i}" for i in range(INFO_TASK)), "count", "distance",
                           "touching")
    assert ToyRow._fields == ("count", "distance", "touching")
    info = np.full((2, INFO_TASK + 4), -1.0)
    _fill(info, 1, 7, 0.25)
    assert info[1, TOY.count] == 7.0 and info[1, TOY.distance] == 0.25
    assert info[1, TOY.touching] == 1.0
    # nothing outside the record's columns is written, nor another env's row
    assert (info[1, :INFO_TASK] == -1.0).all() and info[1, INFO_TASK + 3] == -1.0
    assert (info[0] == -1.0).all()
