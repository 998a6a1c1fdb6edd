"""Loading one of our cached kernels: its files read once, its linking module parsed only
when something links against it.

numba caches a kernel as its machine code (an ELF object) plus the LLVM bitcode of a
"module for linking", which a later compile inlines when it calls the kernel. Loading an
entry, numba reads the index, reads and unpickles the data file, parses that bitcode
(``llvmlite.binding.parse_bitcode``) and walks every function and global of it to learn the
names the library defines. A cached start that only runs already-compiled code never links
against anything, yet paid the parse and the walk for each of its libraries (about 60 ms of
PushBox-v0's ``gym.make`` on a 2-core machine), and our loader (``_numba_cache``) read the
index and the data file a second time to see whether the code calls numba's runtime.

Here, for entries of this package only (``_numba_cache.DependencyLocator``):

* the index and the data file are read once; the runtime check looks at those bytes;
* the library's defined names are taken from its object code's ELF symbol table, and its
  bitcode is kept unparsed (an object in another format, on macOS or Windows, is loaded by
  numba's own loader). The table holds every definition of the module the object was
  compiled from except the private ones, which carry only names LLVM's passes make up
  (``switch.table.*``, ``.const.*``): checked on every entry of a full cache (485
  libraries), and by tests/test_cache_load.py;
* the bitcode is parsed the first time anything asks for the library's linking module
  (``_shared_module``: a compile that links against it, or saving it again);
* the engine's answer to "is this name defined?" is numba's own: a yes, or a no for a
  mangled function name (``_ZN...``, ``cfunc._ZN...``, what numba looks functions up by),
  is taken from the names above; any other no first parses every pending library.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Iterator
from typing import Any

from llvmlite import binding as ll
from numba.core import codegen

from . import _elf

_PENDING = "_push_envs_pending"  # engine attribute: libraries whose bitcode is unparsed
_BITCODE = "_push_envs_bitcode"  # library attribute: its unparsed linking bitcode
_lazy_depth = 0  # > 0 while one of our entries is rebuilt
_classes: dict[type, type] = {}


def _parse_pending(lib: Any) -> Any:
    """Parse ``lib``'s kept bitcode into its linking module and register its names, as
    numba's loader does (once)."""
    bitcode = lib.__dict__.pop(_BITCODE, None)
    mod = lib.__dict__.get("_lazy_shared_module")
    if bitcode is not None:
        mod = ll.parse_bitcode(bitcode)
        lib.__dict__["_lazy_shared_module"] = mod
        engine = lib._codegen._engine
        engine._load_defined_symbols(mod)
        pending = engine.__dict__.get(_PENDING)
        if pending is not None and lib in pending:
            pending.remove(lib)
    return mod


def _lazy_class(cls: type) -> type:
    """``cls`` (numba's JIT code library) whose ``_shared_module`` is parsed on first use."""
    lazy = _classes.get(cls)
    if lazy is None:
        lazy = type(f"Lazy{cls.__name__}", (cls,), {
            "_shared_module": property(
                _parse_pending,
                lambda self, mod: self.__dict__.__setitem__("_lazy_shared_module", mod)),
            "__module__": __name__,
        })
        _classes[cls] = lazy
    return lazy


_unserialize = codegen.CPUCodeLibrary._unserialize.__func__
_is_symbol_defined = codegen.JitEngine.is_symbol_defined


def _unserialize_lazily(cls: type, cg: Any, state: tuple) -> Any:
    """numba's ``CPUCodeLibrary._unserialize``; for an object-code entry of ours, without
    parsing its bitcode (see the module's docstring)."""
    name, kind, data = state
    if _lazy_depth == 0 or kind != "object" or not _elf.is_elf64(data[0]):
        # (Another object format, Mach-O or COFF: numba's own loader, which parses.)
        return _unserialize(cls, cg, state)
    object_code, shared_bitcode = data
    names = _elf.defined(object_code)
    lib = cg.create_library(name)
    lib.__class__ = _lazy_class(type(lib))
    lib.enable_object_caching()
    lib._set_compiled_object(object_code)
    lib.__dict__[_BITCODE] = shared_bitcode
    lib._finalize_final_module()
    engine = cg._engine
    engine._defined_symbols |= names
    engine.__dict__.setdefault(_PENDING, []).append(lib)
    return lib


_MANGLED = ("_ZN", "cfunc._ZN")  # numba's function names: never private, so in the symbol tables


def _is_symbol_defined_or_pending(self: Any, name: str) -> bool:
    """numba's ``JitEngine.is_symbol_defined``: a name outside the symbol tables that is
    not a function's (a private global's, say) is looked up in the parsed pending
    libraries before the answer is no."""
    if _is_symbol_defined(self, name):
        return True
    pending = self.__dict__.get(_PENDING)
    if not pending or name.startswith(_MANGLED):
        return False
    for lib in list(pending):
        _parse_pending(lib)
    return _is_symbol_defined(self, name)


@contextlib.contextmanager
def _lazily() -> Iterator[None]:
    global _lazy_depth
    _lazy_depth += 1
    try:
        yield
    finally:
        _lazy_depth -= 1


def load_entry(cache: Any, sig: Any, target_context: Any) -> Any:
    """numba's ``Cache._load_overload`` for an entry of ours: the index and the data file
    read once, numba's runtime started when the code names it (``NRT_``/``nrt_`` in the
    data; over-inclusion costs only the runtime's start), the library rebuilt lazily.
    Returns the compiled result, or None when the entry is missing or stale."""
    if not cache._enabled:
        return None
    files = cache._cache_file
    name = files._load_index().get(cache._index_key(sig, target_context.codegen()))
    if name is None:
        return None
    try:
        with open(os.path.join(files._cache_path, name), "rb") as fh:
            raw = fh.read()
    except OSError:  # removed while the index still names it: numba's answer too
        return None
    if b"NRT_" in raw or b"nrt_" in raw:
        from numba.core.runtime import rtsys

        rtsys.initialize(target_context)
    data = pickle.loads(raw)
    with _lazily():
        return cache._impl.rebuild(target_context, data)


def install() -> None:
    """Route object-code loads and symbol questions through this module (idempotent)."""
    codegen.CPUCodeLibrary._unserialize = classmethod(_unserialize_lazily)
    codegen.JitEngine.is_symbol_defined = _is_symbol_defined_or_pending
