"""The package's compiled functions: entry kernels, and code only compiled code calls.

numba compiles two wrappers around every ``@njit`` function beside its own code: a Python
entry point that unboxes each argument from a Python object, and a C entry point. For the
engine's stage functions, which take 15-25 arrays each (a hook or a family helper takes the
~100 arrays of W, V and T), those wrappers are most of the function's code: they took about
a fifth of a fresh machine's first ``gym.make("PushBox-v0")`` (48 -> 40 CPU-s, measured with
``benchmarks/cold_start.py``). Code that only compiled code calls needs neither, so:

* :func:`compiled` (``@compiled``, ``@compiled(inline="llvm")``): cached, no wrappers. A
  call from Python raises ``TypeError`` naming the function (without the wrapper numba would
  jump into nothing).
* ``@njit(cache=True)``: a kernel Python calls (an entry point, or a function the tests
  call directly).

Both are keyed in the cache by :mod:`push_envs._numba_cache`; one Python function must never
be compiled by both (the cache does not tell the two apart).

Inlining. numba compiles each function as a library of its own and links a callee's library
into its caller's; LLVM then leaves a callee above its size threshold as a call. A call
passes every array flattened (data, shape, strides ...: ~150 words for a stage of the
physics that takes 20 arrays) and stops LLVM from keeping those values in registers across
it. Two ways to inline, and what each costs:

* ``inline="llvm"`` (numba's ``forceinline``): the callee is typed and lowered once, in its
  own library, and LLVM's ``alwaysinline`` puts its code into each caller. The cost is
  LLVM's, at each call site.
* ``inline="always"`` (numba-IR inlining): the callee's body is typed again inside every
  caller, in numba's own passes, the slow part of a compile.

Measured on the physics step alone (``World.step``, the PushBox-v0 scene, N = 4096, one
thread, CPU time; two processes at a time, pinned to a core each; min over 3 runs of the
best of 5 x 20 steps; cold: the engine's first step on an empty cache, CPU s):

=====================================================  ===========  =========
form                                                   ns/env-step  cold CPU s
=====================================================  ===========  =========
14 hot solver helpers IR-inlined, the stages as calls  543 - 635    29.8
the same, the 17 stages of ``step_env`` LLVM-inlined    291 - 351    32.9
helpers and stages LLVM-inlined (kept)                 283 - 331    25.5
as kept, plus 34 mid-level helpers LLVM-inlined        262 - 310    45.9
every physics function LLVM-inlined, helpers IR        277 - 333    66.9
=====================================================  ===========  =========

Numba optimises a library together with every library it links (the callees' code, again):
each level of calls above the step's stages pays for their code once more, and each inlined
copy of a stage adds its size. So the step has one call site per large stage (the sweep
schedule in ``pipeline.step_env``), and what must not be optimised twice is reached through a
function pointer (``abi.py``), which links nothing: ``step_env`` itself (``pipeline.STEP``,
called by the entry points), sleeping's stages (``sleeping.SLEEP``, compiled only for a world
with sleeping on), and the code only some worlds need (IR-SIM's collision modes, motion noise)
behind an entry point of its own.

So the sub-step's stages and the solver's hot helpers are ``inline="llvm"``, each marked
with a comment; the rest are calls. IR inlining stays where the callee takes a structure by
value per env (``prefetch.py``, ``core/step.py``'s ``prefetch_env``: W or V and T flattened),
in a task's generated hook wrappers (``core/codegen.py``), each with its figure, and for
``core/step.py``'s ``goal_rewards``, which takes the task's functions as arguments (for the
cache's stamps, as its comment says). A task's own helpers are calls: LLVM-inlining every
one of them added ~6 s to PushBox-v0's first ``gym.make`` and no throughput.
"""

from __future__ import annotations

import functools
import importlib
import types as pytypes
from collections.abc import Callable
from typing import Any

from numba import njit
from numba import types
from numba.core import config
from numba.core.registry import CPUDispatcher
from numba.core.typing.typeof import typeof_impl

COMPILED_ONLY = "__push_envs_compiled_only__"
"""The mark :func:`compiled` sets on its function (the cache keys entries by it)."""


class CompiledOnly(CPUDispatcher):
    """A numba dispatcher without a Python entry point: callable from compiled code only."""

    def get_call_template(self, args: Any, kws: Any) -> Any:
        # A constant at a call site (0, True, a module constant) types as a literal, and
        # numba would compile the callee again for every constant it is called with (one
        # helper had eight copies): a compiled-only function takes plain types.
        args = tuple(types.unliteral(a) for a in args)
        kws = {k: types.unliteral(v) for k, v in kws.items()}
        return super().get_call_template(args, kws)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise _refusal(self.py_func)

    def __copy__(self) -> CompiledOnly:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> CompiledOnly:
        return self


def _refusal(py_func: Any) -> TypeError:
    return TypeError(
        f"{py_func.__module__}.{py_func.__qualname__} is compiled for compiled callers only "
        "(push_envs.physics.jit.compiled: no Python entry point); call it from an @njit "
        "function, or its plain Python version as .py_func")


class LazyCompiled:
    """A compiled-only function whose numba dispatcher is made when numba first types a
    call to it.

    A process that loads its kernels from the cache never types a call, so it never makes
    the ~200 dispatchers of the package's helpers (a tenth of a cached start). numba sees
    this object as the dispatcher's type (``typeof`` below), so callers compile as they
    would against the dispatcher itself.
    """

    lazy_dispatcher = True  # what push_envs._numba_cache recognises (no import of this module)
    __slots__ = ("_disp", "_options", "py_func")

    def __init__(self, py_func: Any, options: dict[str, Any]) -> None:
        self.py_func = py_func
        self._options = options
        self._disp: CompiledOnly | None = None

    @property
    def dispatcher(self) -> CompiledOnly:
        if self._disp is None:
            disp = CompiledOnly(py_func=self.py_func, locals={}, targetoptions=self._options)
            disp.enable_caching()
            self._disp = disp
        return self._disp

    def __getattr__(self, name: str) -> Any:
        # Only what the dispatcher has: never its own slots (unset on an object that copy or
        # pickle made without __init__, where looking them up here would recurse) and never
        # a special name (copy and pickle probe those, and must not build a dispatcher).
        if name in LazyCompiled.__slots__ or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        return getattr(self.dispatcher, name)

    # Compiled code is immutable and belongs to its module, as a function does: a copy is the
    # function itself, and a pickle refers to it by its module and name.
    def __copy__(self) -> LazyCompiled:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> LazyCompiled:
        return self

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return _by_name, (self.py_func.__module__, self.py_func.__qualname__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise _refusal(self.py_func)

    def __repr__(self) -> str:
        return f"<compiled {self.py_func.__module__}.{self.py_func.__qualname__}>"


def _by_name(module: str, qualname: str) -> Any:
    """The compiled function ``module.qualname`` (how a pickled one is found again)."""
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


@typeof_impl.register(LazyCompiled)
def _typeof_lazy(value: LazyCompiled, c: Any) -> types.Dispatcher:
    return types.Dispatcher(value.dispatcher)


def compiled(fn: Callable[..., Any] | None = None, *, inline: str = "never",
             **options: Any) -> Any:
    """Compile ``fn`` (cached) for calls from compiled code only: no Python or C wrapper.

    ``inline`` (see the module's 'Inlining'): ``"never"``, a call unless LLVM's heuristics
    inline it; ``"llvm"``, always inlined by LLVM (numba's ``forceinline``), typed once;
    ``"always"``, numba's IR inlining, typed again inside every caller. Use either only where
    a measurement shows it pays. ``options``: further numba target options (``_nrt=False``
    ...).
    """
    if inline not in ("never", "llvm", "always"):
        raise ValueError(f"compiled: inline must be 'never', 'llvm' or 'always', got {inline!r}")

    def wrap(func: Callable[..., Any]) -> Any:
        if config.DISABLE_JIT:
            return func
        # Set either way: an unset forceinline is inherited from the caller being compiled,
        # which would inline a helper everywhere once one LLVM-inlined caller typed it first.
        targetoptions = dict(nopython=True, no_cpython_wrapper=True, no_cfunc_wrapper=True,
                             inline="always" if inline == "always" else "never",
                             forceinline=inline == "llvm", **options)
        # A copy of the function, marked: the cache stamps it apart from an @njit of the same
        # code (push_envs._numba_cache), whose entry has the Python wrapper this one lacks.
        own = pytypes.FunctionType(func.__code__, func.__globals__, func.__name__,
                                   func.__defaults__, func.__closure__)
        functools.update_wrapper(own, func)
        del own.__wrapped__
        own.__dict__[COMPILED_ONLY] = True
        if inline == "always":
            # numba's IR inlining looks for a dispatcher object among the globals: made now.
            disp = CompiledOnly(py_func=own, locals={}, targetoptions=targetoptions)
            disp.enable_caching()
            return disp
        return LazyCompiled(own, targetoptions)

    return wrap if fn is None else wrap(fn)


def python_entry(disp: CompiledOnly | LazyCompiled) -> Any:
    """A Python-callable twin of a :func:`compiled` function (for tests and notebooks): the
    same code with numba's Python entry point, compiled on first call and never cached (so
    it never shares a cache entry with ``disp``). Its callees are ``disp``'s callees."""
    return njit(disp.py_func)


__all__ = ["CompiledOnly", "LazyCompiled", "compiled", "python_entry"]
