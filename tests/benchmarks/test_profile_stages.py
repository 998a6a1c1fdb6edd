"""benchmarks/profile_stages.py: the symbol table it reads from numba's object code and the
names it prints (perf itself is not needed here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import llvmlite.binding as ll

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "profile_stages.py"
_spec = importlib.util.spec_from_file_location("profile_stages", _PATH)
ps = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ps)

_IR = """
define double @first(double %x) {
  %y = fmul double %x, %x
  ret double %y
}
define i64 @second(i64 %a, i64 %b) {
  %c = add i64 %a, %b
  %d = mul i64 %c, %a
  ret i64 %d
}
@data = global i64 7
"""


def _object_code() -> bytes:
    ll.initialize_native_target()
    ll.initialize_native_asmprinter()
    tm = ll.Target.from_default_triple().create_target_machine()
    return tm.emit_object(ll.parse_assembly(_IR))


def test_elf_functions_lists_the_defined_functions_with_their_sizes():
    funcs = dict(ps._elf_functions(_object_code()))
    # Functions only: the global variable is not listed.
    assert set(funcs) == {"first", "second"}
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
