"""Where numba keeps the compiled kernels: keyed by what each kernel depends on, private,
pruned, and robust to damaged files.

Keyed per kernel: numba's ``cache=True`` stamps a cached function with a hash of its own
file only, so a change to a helper in another module would load a stale kernel that still
calls the old helper, and one shared folder key over every source file (what this module
did before) recompiled the engine and every task after any edit. Here each function of this
package (and each generated hook wrapper) is stamped with a digest of everything its
compiled code depends on: its own bytecode, constants and compile options, and recursively
every jitted function (with its options), intrinsic, constant and structure type it names
(:func:`dependency_digest`). So an edit recompiles the functions that reach it, and nothing
else (an edit of a decorator's options included); a task's hooks, which
reach the engine only through a function pointer (``physics/abi.py``), do not depend on the
engine's code, only on the structure types they share with it. Comments, docstrings and
line numbers are not part of a digest. Entries are filed under the module's dotted name, so
an installed copy and a checkout of the same code share them.

The folder:

* default: ``$XDG_CACHE_HOME/push_envs/numba-<numba version>-<format key>`` (``~/.cache``
  when XDG_CACHE_HOME is unset);
* with ``NUMBA_CACHE_DIR`` set: ``$NUMBA_CACHE_DIR/push_envs-numba-<version>-<format key>``.

The format key hashes the stamping scheme and the Python version, not the sources. Keyed by
the optimisation level too: numba's own cache index does not record ``NUMBA_OPT``, so
kernels compiled at another level (the test suite compiles at a low one, see the root
``conftest.py``) would be loaded by a normal run. At any level but numba's default 3 the
version part reads ``<version>_O<level>``.

Pruned: sibling folders of other keys (older numba versions, the source-hashed folders of
earlier releases; only names of exactly that pattern) are removed at import, except the
``KEEP`` most recently used and any used in the last ``GRACE_S`` seconds.

Private: numba unpickles its index files, so whoever can write into the cache folder can run
code in this process. The folder is created with mode 0o700; an existing folder owned by
someone else is not used (a warning, then a private temporary folder that is removed at
exit, so the kernels compile again), and one of ours that group or others could write is
emptied and made private (its contents cannot be trusted).

Damaged files: a truncated, empty or garbage index or data file (a crash mid-write, a full
disk) would make numba's loader raise in every later process. An entry that fails to load
is removed with a warning and the function is compiled again.
"""

from __future__ import annotations

import atexit
import ctypes
import errno
import hashlib
import os
import re
import shutil
import stat
import sys
import tempfile
import time
import types as pytypes
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import ClassVar

import numba
import numpy as np
from numba.core import caching

from . import _cache_load

KEEP = 4
"""Cache folders of other source keys kept per parent folder (the most recently used)."""

GRACE_S = 15 * 60.0
"""A cache folder used within this many seconds is never pruned [s]."""

_PACKAGE_ROOT = Path(__file__).resolve().parent
_USER_PREFIX = "push_envs-"  # inside a user-set NUMBA_CACHE_DIR, shared with other projects
# configure() also exports the folder as NUMBA_CACHE_DIR, because numba re-reads its whole
# configuration from the environment whenever a NUMBA_* variable changes (a script setting
# NUMBA_NUM_THREADS after import, say) and would drop a CACHE_DIR set only on numba.config.
# This variable marks that NUMBA_CACHE_DIR as ours, so it is not taken for a user's choice.
_OURS = "PUSH_ENVS_NUMBA_CACHE"


def opt_tag(opt: object = None) -> str:
    """``""`` at numba's default optimisation level 3, else ``"_O<level>"`` (``opt``: a
    ``NUMBA_OPT`` value; None: the level this process compiles at)."""
    if opt is None:
        opt = getattr(numba.config.OPT, "_raw_value", numba.config.OPT)
    return "" if str(opt) == "3" else f"_O{opt}"


FORMAT = "dependency-stamps-3"
"""The stamping scheme; bump it when what a digest covers changes."""

OPTIONS_MARK = "__push_envs_options__"
"""An attribute a function compiled by other means than a dispatcher bound to its name (a
``cfunc``, physics/abi.py) carries: the text of its signature and options, part of its
stamp."""


def source_key(root: Path = _PACKAGE_ROOT, opt: object = None) -> str:
    """``numba-<numba version><opt_tag(opt)>-<16 hex digits of a SHA-1 over FORMAT and the
    Python version>``: one folder per numba, level and Python, whatever the sources (each
    entry carries its own dependency stamp). ``root`` is kept for callers of the old
    signature and unused."""
    digest = hashlib.sha1(f"{FORMAT} {sys.version}".encode())
    return f"numba-{numba.__version__}{opt_tag(opt)}-{digest.hexdigest()[:16]}"


def _user_dir(environ: Mapping[str, str]) -> str | None:
    """NUMBA_CACHE_DIR when the user set it (not when configure() exported it)."""
    user = environ.get("NUMBA_CACHE_DIR")
    return user if user and user != environ.get(_OURS) else None


def cache_folder(environ: Mapping[str, str], key: str) -> Path:
    """The cache folder for ``key`` under the environment's cache settings."""
    user = _user_dir(environ)
    if user:
        return Path(user) / f"{_USER_PREFIX}{key}"
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "push_envs" / key


def _sibling_pattern(name: str) -> re.Pattern[str]:
    """Names of our cache folders beside ``name`` (same prefix, any version and hash)."""
    prefix = _USER_PREFIX if name.startswith(_USER_PREFIX) else ""
    return re.compile(rf"{re.escape(prefix)}numba-[0-9][0-9A-Za-z.+_]*-[0-9a-f]{{16}}")


def prune(folder: Path, keep: int = KEEP, grace_s: float = GRACE_S,
          now: float | None = None) -> list[Path]:
    """Remove old sibling cache folders of ``folder``; returns the ones removed.

    Only folders whose name matches our pattern are considered (never anything else in a
    shared NUMBA_CACHE_DIR); of those, the ``keep`` most recently used (modification time)
    and any used within ``grace_s`` seconds stay. Errors (a folder vanishing under a
    concurrent prune, no permission) are ignored.
    """
    now = time.time() if now is None else now
    pattern = _sibling_pattern(folder.name)
    candidates: list[tuple[float, Path]] = []
    try:
        entries = list(folder.parent.iterdir())
    except OSError:
        return []
    for entry in entries:
        if entry.name == folder.name or not pattern.fullmatch(entry.name):
            continue
        try:
            info = entry.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):  # never follow a symlink out of the cache
            candidates.append((info.st_mtime, entry))
    candidates.sort(reverse=True)
    removed = []
    for mtime, entry in candidates[keep:]:
        if now - mtime < grace_s:
            continue
        try:
            shutil.rmtree(entry)
            removed.append(entry)
        except OSError:
            pass
    return removed


def unsafe_reason(folder: Path) -> str | None:
    """Why ``folder`` cannot be trusted as a cache (None if it is private to this user)."""
    if not hasattr(os, "getuid"):  # no POSIX ownership (Windows): nothing to check
        return None
    info = folder.stat()
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    if info.st_uid != os.getuid():
        return f"it is owned by user id {info.st_uid}, not by you ({os.getuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"group or others can write to it (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def _private_temp() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="push_envs-numba-tmp-"))  # mode 0o700
    atexit.register(shutil.rmtree, folder, True)
    return folder


COMPILE_EVERY_PROCESS = (
    "push_envs' kernels then compile into a private temporary folder in every process that "
    "uses them (about 25 s for PushBox-v0's first gym.make on a 2-core machine) and are "
    "thrown away at exit. To keep them, set NUMBA_CACHE_DIR (or XDG_CACHE_HOME) to a folder "
    "you can write to, e.g. NUMBA_CACHE_DIR=$HOME/.cache/numba")
"""What a warning about an unusable cache folder says it costs and what to do about it."""


def _write_probe(folder: Path) -> None:
    """Raise OSError unless a file can be created in ``folder`` (numba writes its index and
    data files there; a read-only folder or file system fails here, not in every compile)."""
    with tempfile.TemporaryFile(dir=folder):
        pass


def prepare(environ: Mapping[str, str] = os.environ, key: str | None = None) -> Path:
    """Create (mode 0o700), check and mark as used the cache folder; prune its old siblings.

    Returns the folder to use: the keyed one, or a private temporary folder (with one
    warning that says what it costs and what to do) when the keyed one is owned by someone
    else, cannot be created or cannot be written to (a read-only folder or file system).
    """
    folder = cache_folder(environ, source_key() if key is None else key)
    try:
        if not _user_dir(environ):
            # Our own parent is private too: nobody else can add or swap cache folders in it.
            folder.parent.parent.mkdir(parents=True, exist_ok=True)
            folder.parent.mkdir(mode=0o700, exist_ok=True)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        reason = unsafe_reason(folder)
        if reason is not None and reason.startswith("group or others"):
            # Ours but writable by others: whatever is inside may have been planted.
            warnings.warn(f"push_envs: numba cache {folder} was not private ({reason}); "
                          "emptied it and set mode 0o700", stacklevel=2)
            shutil.rmtree(folder)
            folder.mkdir(mode=0o700)
            reason = unsafe_reason(folder)
        if reason is not None:
            warnings.warn(f"push_envs: not using the numba cache {folder}: {reason} (numba "
                          "unpickles its index files, so a cache others can write can run "
                          f"code). {COMPILE_EVERY_PROCESS}", stacklevel=2)
            return _private_temp()
        _write_probe(folder)
        os.utime(folder)  # "last used", for prune()
    except OSError as exc:
        what = "is read-only" if isinstance(exc, PermissionError) or \
            getattr(exc, "errno", None) == errno.EROFS else "cannot be used"
        warnings.warn(f"push_envs: the numba cache folder {folder} {what} "
                      f"({type(exc).__name__}: {exc.strerror or exc}). {COMPILE_EVERY_PROCESS}",
                      stacklevel=2)
        return _private_temp()
    prune(folder)
    return folder


def configure() -> str:
    """Point numba's cache at the prepared folder; returns the folder."""
    folder = str(prepare())
    numba.config.CACHE_DIR = folder
    os.environ["NUMBA_CACHE_DIR"] = os.environ[_OURS] = folder  # survives a config reload
    return folder


def threading_layer() -> str:
    """Use numba's ``workqueue`` threading layer unless NUMBA_THREADING_LAYER says otherwise,
    with :func:`guard_parallel_entry` making it safe for threads.

    Why workqueue: the default (OpenMP) layer is not fork-safe once a parallel kernel has run
    (forked children abort), and under load GNU OpenMP's spinning threads made a batch of 64
    envs 5-20x slower than workqueue on 2 shared cores. workqueue is fork-safe and gives the
    same bit-identical results, so a batch can live inside ``AsyncVectorEnv`` or a forked data
    loader. TBB is safe for both, but it is a 26 MB dependency with wheels for x86-64 only,
    and numba finds its library only on the loader's path (not in a plain virtual
    environment); it is used when NUMBA_THREADING_LAYER=tbb selects it.
    """
    if not os.environ.get("NUMBA_THREADING_LAYER"):
        os.environ["NUMBA_THREADING_LAYER"] = "workqueue"  # survives a config reload
        numba.config.THREADING_LAYER = "workqueue"
    guard_parallel_entry()
    return numba.config.THREADING_LAYER


# ------------------------------------------------------------------ threads and workqueue
# workqueue has one queue for the whole process: a second parallel kernel launched while one
# runs (from another Python thread, or nested inside a kernel) makes it abort the process
# (SIGABRT), whatever the thread counts. Threads are how RLlib's and TorchRL's collectors and
# plenty of user code step envs, so every parallel launch goes through a guard:
#
#   numba_parallel_for(fn, args, dims, steps, data, ..., n)    (what every prange kernel calls)
#       if n > 1 and compare-and-swap(busy, 0 -> 1):            the queue is free: take it
#           workqueue's parallel_for(...); busy = 0              (spread over numba's threads)
#       else:                                   one thread asked for, or another launch holds
#           fn(args, dims, steps, data)         the queue: run every chunk right here
#
# ``fn`` is the kernel's gufunc over its whole schedule; workqueue calls it once per thread on
# a slice of it, so calling it once on all of it is the one-thread run (what workqueue itself
# does at num_threads=1, there on a worker thread the caller waits for): same code, same
# chunks, bit-identical results (no kernel of the package reduces across envs). Nothing
# waits, so a guard can neither deadlock nor slow the launch that holds the queue; the
# second thread's batch runs on its own thread at the same time, and a one-thread launch
# skips the hand-off to a worker. The guard is a few instructions of LLVM IR that hold the
# two addresses of this process, built once (about 20 ms) when numba first starts its
# threads and bound to the symbol numba's kernels link against, so it covers every parallel
# kernel of the process, users' own included. A forked child starts with the flag clear.
_BUSY = ctypes.c_int32(0)  # the flag's memory, at a fixed address for the process's life
_GUARD: dict[str, Any] = {}  # the built guard's library (kept alive) and address


def _guard_ir(real: int) -> Any:
    """The guard's LLVM IR module around workqueue's ``parallel_for`` at address ``real``."""
    import llvmlite.ir as ir

    i8p, i32, intp = ir.IntType(8).as_pointer(), ir.IntType(32), ir.IntType(64)
    fnty = ir.FunctionType(ir.VoidType(), [i8p] * 5 + [intp] * 3)  # numba's parallel_for
    gufunc = ir.FunctionType(ir.VoidType(), [i8p.as_pointer(), intp.as_pointer(),
                                             intp.as_pointer(), i8p])
    mod = ir.Module("push_envs_parallel_guard")
    f = ir.Function(mod, fnty, "push_envs_parallel_for")
    fn, args, dims, steps, data = f.args[:5]
    threads = f.args[7]
    b = ir.IRBuilder(f.append_basic_block("entry"))
    pool, here = f.append_basic_block("pool"), f.append_basic_block("here")
    take = f.append_basic_block("take")
    # one thread asked for: the launch is the one-thread run, here, without a hand-off
    b.cbranch(b.icmp_signed("<=", threads, ir.Constant(intp, 1)), here, take)
    b.position_at_end(take)
    busy = b.inttoptr(ir.Constant(intp, ctypes.addressof(_BUSY)), i32.as_pointer())
    took = b.extract_value(b.cmpxchg(busy, ir.Constant(i32, 0), ir.Constant(i32, 1),
                                     "acquire", "monotonic"), 1)
    b.cbranch(took, pool, here)
    b.position_at_end(pool)
    b.call(b.inttoptr(ir.Constant(intp, real), fnty.as_pointer()), f.args)
    b.store_atomic(ir.Constant(i32, 0), busy, "release", 4)
    b.ret_void()
    b.position_at_end(here)
    b.call(b.bitcast(fn, gufunc.as_pointer()),
           [b.bitcast(args, i8p.as_pointer()), b.bitcast(dims, intp.as_pointer()),
            b.bitcast(steps, intp.as_pointer()), data])
    b.ret_void()
    return mod


def _install_guard() -> None:
    """Bind numba's ``numba_parallel_for`` to the guard when workqueue is the layer numba
    started (idempotent; called right after numba starts its threads)."""
    from numba.np.ufunc import parallel

    if "address" in _GUARD or parallel._threading_layer != "workqueue":
        return
    import llvmlite.binding as ll
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.registry import cpu_target
    from numba.np.ufunc import workqueue

    with global_compiler_lock:
        lib = cpu_target.target_context.codegen().create_library("push_envs_parallel_guard")
        lib.add_ir_module(_guard_ir(workqueue.parallel_for))
        lib.finalize()
        address = lib.get_pointer_to_function("push_envs_parallel_for")
    _GUARD.update(library=lib, address=address)
    ll.add_symbol("numba_parallel_for", address)


def guard_parallel_entry() -> None:
    """Route every parallel kernel numba links from now on through the workqueue guard
    (above). numba binds its threading layer lazily, when the first parallel kernel is
    compiled or loaded: the guard is bound right after that, before the kernel is linked."""
    from numba.np.ufunc import parallel

    launch = parallel._launch_threads
    if getattr(launch, "push_envs_guard", False):
        return

    def _launch_threads() -> None:
        launch()
        _install_guard()

    _launch_threads.push_envs_guard = True  # type: ignore[attr-defined]
    parallel._launch_threads = _launch_threads
    if parallel._is_initialized:  # a kernel ran before push_envs was imported
        _install_guard()
    if hasattr(os, "register_at_fork"):
        # a fork taken while another thread held the queue: the child's queue is free
        os.register_at_fork(after_in_child=lambda: setattr(_BUSY, "value", 0))


# ------------------------------------------------------------------ dependency stamps
# A digest walks the names a function's bytecode uses (co_names, nested code included) and
# hashes what each resolves to in its globals:
#
#   jitted function (a numba dispatcher)  -> its own digest, recursively (cycles: by name),
#                                            and its compile options
#   intrinsic                             -> its definition's code and closure values
#   module (np, math, or one of ours)     -> each of its attributes the code names
#   int, float, str, tuple, namedtuple    -> repr;  array -> dtype, shape, bytes
#   class (a NamedTuple of arrays)        -> module, name and fields
#   numba type                            -> repr (field types of a structure's type)
#   anything else                         -> its type's name (never an address)
#
# Over-inclusion only costs a spurious recompile; what the compiled code can see is always
# included.
# Memo of digests by function. Keyed by id but holding the function too: a function that was
# freed could otherwise hand its id, and so its digest, to a new function.
_DIGESTS: dict[int, tuple[Any, str]] = {}
_FOREIGN = ("numba", "numpy", "llvmlite", "math", "builtins", "cmath", "operator")


_NESTED = object()


def _code_bytes(code: pytypes.CodeType, doc: Any, out: list[bytes]) -> list[str]:
    """Append code's bytecode, names and constants (not line numbers, not the docstring);
    return every name it and its nested code use. ``doc``: the function's docstring, None
    for a function without one (CPython up to 3.13 keeps the docstring, or None in its
    place, as a function's first constant), or ``_NESTED`` for nested code."""
    out.append(code.co_code)
    out.append(repr((code.co_names, code.co_varnames, code.co_argcount,
                     code.co_kwonlyargcount, code.co_flags)).encode())
    names = list(code.co_names)
    for k, c in enumerate(code.co_consts):
        if isinstance(c, pytypes.CodeType):
            names += _code_bytes(c, _NESTED, out)
        elif not (k == 0 and doc is not _NESTED and c == doc):
            out.append(repr(c).encode())
    return names


def _value_bytes(value: Any, out: list[bytes], depth: int) -> None:
    """Append what the compiled code can see of a global ``value``."""
    if _is_dispatcher(value):
        out.append(dependency_digest(value.py_func, depth + 1).encode())
        out.append(_options_bytes(value))
    elif hasattr(value, "_defn") and callable(getattr(value, "_defn", None)):  # intrinsic
        defn = value._defn
        _code_bytes(defn.__code__, defn.__doc__, out)
        for cell in defn.__closure__ or ():
            _value_bytes(cell.cell_contents, out, depth + 1)
    elif isinstance(value, numba.core.types.Type):
        out.append(repr(value).encode())
        cls = getattr(value, "instance_class", None)
        if cls is not None:
            out.append(repr(getattr(cls, "_fields", ())).encode())
    elif isinstance(value, (bool, int, float, complex, str, bytes, type(None))):
        out.append(repr(value).encode())
    elif isinstance(value, tuple):
        out.append(type(value).__name__.encode())
        out.append(repr(getattr(value, "_fields", ())).encode())
        for v in value:
            _value_bytes(v, out, depth)
    elif isinstance(value, np.ndarray):
        out.append(f"{value.dtype.str}{value.shape}".encode())
        out.append(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, np.generic):
        out.append(f"{value.dtype.str}{value!r}".encode())
    elif isinstance(value, type):
        out.append(f"{value.__module__}.{value.__qualname__}".encode())
        out.append(repr(getattr(value, "_fields", ())).encode())
    elif isinstance(value, pytypes.FunctionType) and not (value.__module__ or "").startswith(
            _FOREIGN):
        out.append(dependency_digest(value, depth + 1).encode())
    else:
        kind = type(value)
        name = getattr(value, "__name__", "")
        out.append(f"{kind.__module__}.{kind.__qualname__}:{name}".encode())


def _is_dispatcher(value: Any) -> bool:
    """A numba dispatcher, or physics/jit.py's LazyCompiled standing in for one."""
    return isinstance(value, numba.core.dispatcher.Dispatcher) or \
        getattr(type(value), "lazy_dispatcher", False)


def _options_bytes(disp: Any) -> bytes:
    """A dispatcher's compile options (``_nrt``, ``forceinline``, ``inline``, ``fastmath``
    ...): the same code under other options is other machine code, so a kernel compiled
    with a callee inlined must not be loaded once the callee is a call again."""
    options = disp._options if getattr(type(disp), "lazy_dispatcher", False) \
        else disp.targetoptions
    return repr(sorted((k, _plain(v)) for k, v in options.items())).encode()


def _plain(value: Any) -> str:
    """repr of an option's value, or its type's name where repr would show an address."""
    text = repr(value)
    return type(value).__qualname__ if " at 0x" in text else text


def dependency_digest(py_func: Any, depth: int = 0) -> str:
    """Hex digest of everything the compiled code of ``py_func`` depends on (see above),
    and of its own compile options when its module binds its name to its dispatcher."""
    key = id(py_func)
    memo = _DIGESTS.get(key)
    if memo is not None and memo[0] is py_func:
        return memo[1]
    if depth > 200:  # a cycle deeper than any call chain: stand in with the name
        return f"{py_func.__module__}.{py_func.__qualname__}"
    _DIGESTS[key] = (py_func, f"{py_func.__module__}.{py_func.__qualname__}")  # cycle guard
    out: list[bytes] = []
    names = _code_bytes(py_func.__code__, py_func.__doc__, out)
    glb = py_func.__globals__
    own = glb.get(py_func.__name__)
    if _is_dispatcher(own) and own.py_func.__code__ is py_func.__code__:
        out.append(_options_bytes(own))
    out.append(repr(py_func.__dict__.get(OPTIONS_MARK)).encode())  # a cfunc's (physics/abi.py)
    seen: set[str] = set()
    for name in names:
        if name in seen or name not in glb:
            continue
        seen.add(name)
        value = glb[name]
        out.append(name.encode())
        if isinstance(value, pytypes.ModuleType):
            out.append(value.__name__.encode())
            for attr in dict.fromkeys(names):
                sub = getattr(value, attr, None)
                if sub is not None and not isinstance(sub, pytypes.ModuleType):
                    out.append(attr.encode())
                    _value_bytes(sub, out, depth)
        else:
            _value_bytes(value, out, depth)
    for cell in py_func.__closure__ or ():
        _value_bytes(cell.cell_contents, out, depth)
    h = hashlib.sha256()
    for b in out:
        h.update(b)
    digest = h.hexdigest()
    _DIGESTS[key] = (py_func, digest)
    return digest


class _LazyStamp:
    """A function's source stamp, computed when numba first compares or saves it (numba
    builds a function's cache at decoration, before the module's later globals exist).
    Pickled as the digest string; compared with one by value."""

    def __init__(self, py_func: Any) -> None:
        self._py_func = py_func

    @property
    def value(self) -> str:
        # A function compiled without numba's Python wrapper (physics/jit.py) is another
        # binary than the same code with it: calling the first through the second's entry
        # point would jump into nothing.
        kind = "|compiled-only" if self._py_func.__dict__.get(
            "__push_envs_compiled_only__") else ""
        return dependency_digest(self._py_func) + kind

    def __eq__(self, other: object) -> bool:
        other = other.value if isinstance(other, _LazyStamp) else other
        return self.value == other

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self.value)

    def __reduce__(self) -> tuple:
        return (str, (self.value,))


def _ours(py_file: str) -> bool:
    """Files stamped by dependency: this package's and the generated hook wrappers'."""
    path = os.path.abspath(py_file)
    return path.startswith(str(_PACKAGE_ROOT) + os.sep) or \
        os.sep + "push_envs_tasks" + os.sep in path


class DependencyLocator(caching._CacheLocator):
    """numba cache locator of this package's functions: entries in ``CACHE_DIR/<module>``,
    named by qualified name (no line number), stamped with :func:`dependency_digest`."""

    def __init__(self, py_func: Any, py_file: str) -> None:
        self._py_func = py_func
        self._py_file = py_file
        self._cache_path = os.path.join(numba.config.CACHE_DIR, py_func.__module__)

    def get_cache_path(self) -> str:
        return self._cache_path

    def get_source_stamp(self) -> Any:
        return _LazyStamp(self._py_func)

    def get_disambiguator(self) -> str:
        qual = self._py_func.__qualname__
        # A function made inside another shares its qualified name with its siblings.
        return str(self._py_func.__code__.co_firstlineno) if "<locals>" in qual else "0"

    _ready: ClassVar[set[str]] = set()  # folders already made and found writable

    def ensure_cache_path(self) -> None:
        # numba's version writes a temporary file to prove the folder writable, for every
        # function at import (~200): once per folder is enough.
        if self._cache_path not in self._ready:
            super().ensure_cache_path()
            self._ready.add(self._cache_path)

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> DependencyLocator | None:
        if not numba.config.CACHE_DIR or not _ours(py_file):
            return None
        self = cls(py_func, py_file)
        try:
            self.ensure_cache_path()
        except OSError:
            return None
        return self


def _drop_entry(cache: Any, exc: BaseException) -> None:
    """Remove a cache entry that failed to load (its index and data files), with a warning."""
    cf = cache._cache_file
    base = os.path.splitext(cf._index_name)[0]
    warnings.warn(f"push_envs: a damaged numba cache entry {cf._index_path} "
                  f"({type(exc).__name__}: {exc}) was removed; compiling it again",
                  stacklevel=3)
    try:
        for name in os.listdir(cf._cache_path):
            if name == cf._index_name or (name.startswith(base + ".")
                                          and name.endswith(".nbc")):
                os.unlink(os.path.join(cf._cache_path, name))
    except OSError:
        pass


_load = caching.Cache._load_overload
_load_ours = _cache_load.load_entry
_save = caching.Cache._save_overload
_load_public = caching.Cache.load_overload


def _load_without_refresh(self: Any, sig: Any, target_context: Any) -> Any:
    """numba's ``load_overload`` for our entries, without its ``target_context.refresh()``.

    numba refreshes the target context before every cache load: it imports and installs
    every lowering registry (numpy, linalg with a scipy import, random, typed containers
    ...), 0.3-0.5 s of a cached start that loads code already compiled and needs none of
    them. A compile still refreshes (numba's compiler does so itself). What a loaded entry
    does need is linked in anyway, except the runtime's symbols: numba's runtime is started
    first when the entry's code names it (``_cache_load.load_entry``).
    """
    if not isinstance(self._impl.locator, DependencyLocator):
        return _load_public(self, sig, target_context)
    with self._guard_against_spurious_io_errors():
        return self._load_overload(sig, target_context)


def _not_damage(exc: BaseException) -> bool:
    """An error loading an entry that says nothing about the entry's files: the threading
    layer NUMBA_THREADING_LAYER names cannot be loaded (a parallel kernel starts it first).
    Dropping the entry would not help, and would cost every other process a compile."""
    return isinstance(exc, ValueError) and "threading layer" in str(exc).lower()


def _load_overload(self: Any, sig: Any, target_context: Any) -> Any:
    ours = isinstance(self._impl.locator, DependencyLocator)
    try:
        return (_load_ours if ours else _load)(self, sig, target_context)
    except Exception as exc:  # a damaged file: pickle, EOF, ELF or LLVM errors alike
        if not ours or _not_damage(exc):
            raise
        _drop_entry(self, exc)
        return None


def _save_overload(self: Any, sig: Any, data: Any) -> None:
    try:
        _save(self, sig, data)
    except Exception as exc:  # the index it appends to is damaged
        if not isinstance(self._impl.locator, DependencyLocator):
            raise
        _drop_entry(self, exc)
        try:
            _save(self, sig, data)
        except Exception:
            pass  # not cached this time; the compiled function still runs


def install() -> None:
    """Put :class:`DependencyLocator` first and guard numba's cache loads (idempotent)."""
    if DependencyLocator not in caching.CacheImpl._locator_classes:
        caching.CacheImpl._locator_classes.insert(0, DependencyLocator)
    caching.Cache._load_overload = _load_overload
    caching.Cache._save_overload = _save_overload
    caching.Cache.load_overload = _load_without_refresh
    _cache_load.install()


CACHE_DIR = configure()
install()
THREADING_LAYER = threading_layer()
