"""The package's compiled functions: entry kernels, and code only compiled code calls.

numba compiles two wrappers around every ``@njit`` function beside its own code: a Python
entry point that unboxes each argument from a Python object, and a C entry point. For the
engine's stage functions, which take 15-25 arrays each (a hook or a family helper takes the
~100 arrays of W, V and T), those wrappers are most of the function's code: they took about
a fifth of a fresh machine's first ``gym.make("PushBox-v0")`` (48 -> 40 CPU-s, measured with
``benchmarks/cold_start.py``). Code that only compiled code calls needs neither, so:

* :func:`compiled` (``@compiled``, ``@compiled(inline="always")``): cached, no wrappers. A
  call from Python raises ``TypeError`` naming the function (without the wrapper numba would
  jump into nothing).
* ``@njit(cache=True)``: a kernel Python calls (an entry point, or a function the tests
  call directly).

Both are keyed in the cache by :mod:`push_envs._numba_cache`; one Python function must never
be compiled by both (the cache does not tell the two apart).

IR inlining (``inline="always"``) types a helper's body again at every call site, so it costs
compile time; it stays only where a measurement shows that it pays. LLVM left even small
``@compiled`` helpers as calls (``benchmarks/profile_stages.py`` lists them as functions of
their own). The contact solver's twelve hot helpers are IR-inlined, each marked with a
comment:

* narrowphase: ``_place``, ``_edge_normal``;
* velocity_solver: ``_point_vel``, ``_vel_row``;
* position_solver: ``_move``, ``_friction``, ``pair_weights``, ``_register_block``,
  ``_backed``;
* contacts: ``_push_dir``, ``_ds``, ``_pair_level``.

The measurement: WallSlide-v0's physics step alone (``World.step_raw``, N = 4096, one
thread, CPU time, best of 4 alternating processes). It took 1745 ns per env-step with the
helpers as calls and 1620 ns inlined; dc4393a, before compile-once, which inlined them,
took 1627 ns. On the whole env-step the figures were 2138, 1807 and 1821 ns.

Neither part alone was enough. ``_place``, ``_point_vel`` and ``_vel_row`` alone gave
1631 ns against 1668 ns for the helpers as calls, in the same run. The eight of
position_solver and contacts alone gave 1732 ns against 1745 ns. The cost is paid once, in
the engine's compile on the first ``gym.make`` of a fresh machine (``benchmarks/cold_start.py``).
"""

from __future__ import annotations

import functools
import types as pytypes
from collections.abc import Callable
from typing import Any

from numba import njit, types
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
        return getattr(self.dispatcher, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise _refusal(self.py_func)

    def __repr__(self) -> str:
        return f"<compiled {self.py_func.__module__}.{self.py_func.__qualname__}>"


@typeof_impl.register(LazyCompiled)
def _typeof_lazy(value: LazyCompiled, c: Any) -> types.Dispatcher:
    return types.Dispatcher(value.dispatcher)


def compiled(fn: Callable[..., Any] | None = None, *, inline: str = "never",
             **options: Any) -> Any:
    """Compile ``fn`` (cached) for calls from compiled code only: no Python or C wrapper.

    ``inline``: numba's IR inlining (``"always"`` types ``fn``'s body again inside every
    caller; use it only where a measurement shows it pays). ``options``: further numba target
    options (``_nrt=False`` ...).
    """

    def wrap(func: Callable[..., Any]) -> Any:
        if config.DISABLE_JIT:
            return func
        targetoptions = dict(nopython=True, no_cpython_wrapper=True, no_cfunc_wrapper=True,
                             inline=inline, **options)
        # A copy of the function, marked: the cache stamps it apart from an @njit of the same
        # code (push_envs._numba_cache), whose entry has the Python wrapper this one lacks.
        own = pytypes.FunctionType(func.__code__, func.__globals__, func.__name__,
                                   func.__defaults__, func.__closure__)
        functools.update_wrapper(own, func)
        del own.__wrapped__
        own.__dict__[COMPILED_ONLY] = True
        if inline != "never":
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
