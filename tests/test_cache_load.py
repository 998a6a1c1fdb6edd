"""push_envs._cache_load: a cached kernel loads without parsing its bitcode, answers numba's
symbol questions as numba would, and still links into code compiled afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_WARM = """
from push_envs.tasks.pushing.push_maze.expert import _bilinear, _cell
import numpy as np
print(_cell(2.5, 0.0, 1.0, 10), _bilinear(np.arange(12.0).reshape(3, 4), 1.2, 0.7, 0.0, 0.0, 0.5))
"""

_CHECK = """
import numpy as np
from llvmlite import binding as ll
from numba import njit
from push_envs import _cache_load
from push_envs.tasks.pushing.push_maze.expert import _bilinear, _cell

a = np.arange(12.0).reshape(3, 4)
assert _cell(2.5, 0.0, 1.0, 10) == 2
value = _bilinear(a, 1.2, 0.7, 0.0, 0.0, 0.5)
lib = _cell.overloads[_cell.signatures[0]].library
libs = [lib, _bilinear.overloads[_bilinear.signatures[0]].library]
engine = lib._codegen._engine
assert type(lib).__name__.startswith("Lazy"), type(lib)
pending = engine.__dict__[_cache_load._PENDING]
assert all(p in pending and _cache_load._BITCODE in p.__dict__ for p in libs)

# Every question numba could ask, answered from the symbol tables alone, is numba's answer:
# the parsed modules' definitions (function names and the rest) and names of nothing.
full = set()
for p in libs:
    mod = ll.parse_bitcode(p.__dict__[_cache_load._BITCODE])
    full |= {g.name for gs in (mod.functions, mod.global_variables) for g in gs
             if not g.is_declaration}
for name in sorted(full):
    if name.startswith(_cache_load._MANGLED):
        assert engine.is_symbol_defined(name), name
assert not engine.is_symbol_defined("_ZN7cpython_no_such_function")
assert all(p in pending for p in libs)  # a mangled no parses nothing

# A new kernel calling a cached one (with its cached signature: no literal, no read-only
# global array) links its module: parsed then, and the result right.
@njit
def caller(x, n, arr):
    return _cell(x, 0.0, 1.0, n) * 10.0 + _bilinear(arr, 1.2, 0.7, 0.0, 0.0, 0.5)

assert caller(2.5, 10, a) == 20.0 + value
assert len(_cell.signatures) == 1 and len(_bilinear.signatures) == 1
assert _cache_load._BITCODE not in lib.__dict__ and lib._shared_module is not None
assert all(engine.is_symbol_defined(n) for n in full)  # everything, once parsed
assert not engine.is_symbol_defined(".no.such.private")
assert engine.__dict__[_cache_load._PENDING] == []
print("OK")
"""


def _run(code: str, cache: Path) -> str:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_a_cached_kernel_loads_lazily_and_links_when_called(tmp_path):
    first = _run(_WARM, tmp_path)  # compiles and saves
    assert _run(_WARM, tmp_path) == first  # loaded: the same results
    assert _run(_CHECK, tmp_path).strip().endswith("OK")


def test_an_object_in_another_format_goes_to_numbas_loader(monkeypatch):
    """Mach-O (macOS) or COFF (Windows) object code has no ELF symbol table: numba's own
    loader takes it, under the lazy load too."""
    from push_envs import _cache_load

    calls = []
    monkeypatch.setattr(_cache_load, "_unserialize", lambda cls, cg, state: calls.append(state))
    macho = (b"\xcf\xfa\xed\xfe" + b"\x00" * 60, b"bitcode")
    with _cache_load._lazily():
        _cache_load._unserialize_lazily(object, None, ("lib", "object", macho))
    assert calls == [("lib", "object", macho)]
