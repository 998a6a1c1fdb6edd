"""benchmarks/profile_stages.py: the symbol table it reads from numba's object code and the
names it prints (perf itself is not needed here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "profile_stages.py"
_spec = importlib.util.spec_from_file_location("profile_stages", _PATH)
ps = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ps)

# The object code tests/test_elf.py builds (three functions and some data).
_elf_spec = importlib.util.spec_from_file_location(
    "test_elf_objects", Path(__file__).resolve().parents[1] / "test_elf.py")
_elf_test = importlib.util.module_from_spec(_elf_spec)
_elf_spec.loader.exec_module(_elf_test)


def test_elf_functions_lists_the_defined_functions_with_their_sizes():
    funcs = dict(ps._elf_functions(_elf_test._object_code()))
    # Functions defined here only: not the data, not the declared one.
    assert set(funcs) == {"first", "hidden", "second"}
    assert all(size > 0 for size in funcs.values())


def test_short_names_follow_numbas_mangling():
    mangled = ("_ZN9push_envs7physics10broadphase10find_pairsB3v12B38c8tJTC_2fWQAkyW1xhBopo9C"
               "CCcA_3d_3dExx")
    assert ps._short(mangled) == "push_envs.physics.broadphase.find_pairs"
    assert ps._short("cpython." + mangled) == "cpython.push_envs.physics.broadphase.find_pairs"
    assert ps._short("plain_c_symbol") == "plain_c_symbol"


def test_group_buckets_stages_libm_and_the_rest():
    assert ps._group("push_envs.physics.contacts.prepare") == "physics.contacts.prepare"
    assert ps._group("push_envs_tasks.push_envs_envs_push_t.step_rows") == \
        "task push_t.step_rows"
    assert ps._group("__sincos_fma") == "libm sincos"
    assert ps._group("__ieee754_atan2_fma") == "libm ieee754_atan2"
    assert ps._group("_PyEval_EvalFrameDefault") == "python, numpy and kernel"
