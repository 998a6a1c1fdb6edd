"""The structure ABI (push_envs/physics/abi.py): a value packed in Python is, word for word,
what numba itself stores, and a kernel loads it back field by field."""

from __future__ import annotations

from typing import NamedTuple

import gymnasium as gym
import numpy as np
import pytest
from fresh_compile import compile_alone
from numba import carray
from numba import njit

import push_envs  # noqa: F401  (registers the ids)
from push_envs.core.step import ENV_ABI
from push_envs.core.step import ROWS_ABI
from push_envs.core.step import TASK_ABI
from push_envs.physics.abi import AbiType
from push_envs.physics.abi import struct_ptr
from push_envs.physics.arrays import WORLD_ABI


class Mixed(NamedTuple):
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    d: np.ndarray


MIXED = AbiType(Mixed, {"a": ("f8", 2), "b": ("i8", 1), "c": ("u1", 3), "d": ("b1", 1)})
load_mixed = MIXED.loader


def _mixed() -> Mixed:
    return Mixed(a=np.arange(12.0).reshape(3, 4), b=np.array([7, -3, 5], np.int64),
                 c=np.arange(24, dtype=np.uint8).reshape(2, 3, 4),
                 d=np.array([True, False]))


@njit
def _numba_words(value, out):
    # numba's own store of the value (struct_ptr), read back as 8-byte words
    out[:] = carray(struct_ptr(value), out.shape, np.uint64)


def _refcount_words(abi: AbiType) -> np.ndarray:
    """Word positions of each array's meminfo and parent (numba fills in live pointers)."""
    at, out = 0, []
    for _, ndim in abi.fields.values():
        out += [at, at + 1]
        at += 5 + 2 * ndim
    return np.array(out)


def _assert_same_words(abi: AbiType, value) -> None:
    packed = abi.pack(value)
    mine = packed._words
    theirs = np.zeros_like(mine)
    _numba_words(value, theirs)
    keep = np.ones(len(mine), bool)
    keep[_refcount_words(abi)] = False
    np.testing.assert_array_equal(mine[keep], theirs[keep])
    assert not mine[~keep].any()  # null meminfo and parent


def test_a_packed_value_is_numbas_own_layout():
    _assert_same_words(MIXED, _mixed())


@pytest.mark.parametrize("env_id", ["PushBox-v0", "PushT-v0"])
def test_the_envs_structures_pack_as_numba_stores_them(env_id):
    core = gym.make_vec(env_id, num_envs=3).unwrapped
    core.reset(seed=0)
    for abi, value in zip((ROWS_ABI, WORLD_ABI, ENV_ABI, TASK_ABI),
                          (core._rows, core.world.arrays, core.env_arrays, core.task_arrays),
                          strict=True):
        _assert_same_words(abi, value)


@njit
def _read(addr):
    m = load_mixed(addr)
    m.a[2, 1] += 100.0  # writes reach the caller's array
    return m.a[1, 3], m.b[2], m.c[1, 2, 3], m.d[0], m.a.shape[1], m.c.strides[0]


def test_a_kernel_loads_a_packed_value_by_address():
    value = _mixed()
    packed = MIXED.pack(value)
    assert _read(packed.address) == (7.0, 5, 23, True, 4, 12)
    assert value.a[2, 1] == 109.0


def test_pack_refuses_an_array_of_another_layout():
    value = _mixed()._replace(a=np.asfortranarray(np.ones((3, 4))))
    with pytest.raises(TypeError, match=r"Mixed\.a must be a writeable C-contiguous float64"):
        MIXED.pack(value)
    with pytest.raises(TypeError, match=r"Mixed\.b must be .* int64 array of 1 dimension"):
        MIXED.pack(_mixed()._replace(b=np.zeros(3, np.int32)))


def test_an_env_packs_again_when_its_world_grows_its_buffers_elsewhere():
    # World.step may grow the pair buffers (new arrays) behind the env: the env's next step
    # must run on the new arrays, not the packed old ones.
    core = gym.make_vec("PushBox-v0", num_envs=2).unwrapped
    core.reset(seed=0)
    w = core.world
    old = core._packed[1]
    w.arrays = w.arrays._replace(prs=w.arrays.prs.copy())
    core.step(np.zeros((2, core.single_action_space.shape[0]), np.float32))
    assert core._packed[1] is not old and core._packed[1].value is w.arrays


def _package_c_functions() -> list[str]:
    """``module:NAME`` of every C function (abi.CFunction) a module of the package defines."""
    import importlib
    import pkgutil

    from push_envs.physics.abi import CFunction

    found = []
    for info in pkgutil.walk_packages(push_envs.__path__, "push_envs."):
        if info.name.endswith("__main__"):  # a command line: importing it runs it
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra (torch, ray ...) that is not installed
            continue
        for name, value in vars(module).items():
            if isinstance(value, CFunction) and value.py_func.__module__ == info.name:
                found.append(f"{info.name}:{name}")
    return sorted(found)


@pytest.mark.slow
def test_each_c_function_compiles_alone_at_O3_on_an_empty_cache(tmp_path):
    """Each C function compiled alone, first thing in a fresh process, at -O3, on an empty
    cache (fresh_compile.py): what a user's first world of its kind compiles. (Found when the
    test runs: collecting them imports every module.)"""
    failed = {}
    for k, spec in enumerate(_package_c_functions()):
        out = compile_alone(spec, tmp_path / str(k))
        if out.returncode != 0 or out.stdout.split() != ["True"]:
            failed[spec] = out.stderr[-1500:]
    assert not failed, failed


def test_the_c_functions_are_found():
    """The slow test above walks every C function: the engine's, the behaviours', the
    sensors' and the task stages' are among them."""
    specs = _package_c_functions()
    for spec in ("push_envs.physics.pipeline:PHYSICS_MODES", "push_envs.physics.continuous:CCD",
                 "push_envs.physics.sleeping:SLEEP", "push_envs.physics.behaviours.rvo:RVO",
                 "push_envs.sensors.lidar2d:LIDAR_SENSE", "push_envs.core.step:STEP"):
        assert spec in specs
    assert len(specs) >= 18
