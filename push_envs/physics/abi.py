"""The engine's binary interface: compiled once, called through a function pointer.

numba links a callee into every caller: the callee's LLVM module is copied into the caller's
library and optimised again there, and a callee marked ``inline="always"`` is even typed
again. Before this module, every task's kernels carried their own copy of the whole physics
step, so each task paid the engine's compile again (minutes on a fresh machine). Here the
step is a C-callable function (a numba ``cfunc``) compiled, and cached, once; a kernel holds
its address as data and calls it through that pointer, so nothing of the engine is typed,
linked or optimised inside the kernel::

    caller (any cached kernel)                    callee (a cfunc, compiled once)
    --------------------------                    -------------------------------
    wp = struct_ptr(W)   # W's descriptor on the  physics_rows(lo, hi, wp):
                         # stack, once per call       W = load_world(wp)
    call_void(fns[k], (lo, hi, wp))  ---------->      for e in lo..hi-1: step_env(e, W)

A structure travels as one pointer to its numba value (a struct of array descriptors: data
pointer, shape, strides), not as its ~300 flattened scalars, so a call costs a few
nanoseconds. Both sides must agree on the structure's numba type: :class:`AbiType` declares
it once (field -> dtype, ndim) and checks each real structure against it before its pointer
is ever taken (:meth:`AbiType.check`), so a drifted dtype is a clear error, never a misread.

The pointer is valid while the caller runs: it points at the caller's stack, the arrays it
describes are the caller's arguments, and the callee never keeps it.

Python can build the same value itself (:meth:`AbiType.pack`) and pass its address as an
integer: the env's entry kernels take their four structures that way, so a single env's
step does not pay numba's unboxing of ~100 arrays per call. The :class:`Packed` object holds
the structure, so the arrays outlive every call that reads them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .._numba_cache import OPTIONS_MARK


@intrinsic
def struct_ptr(typingctx, value):
    """Pointer (``voidptr``) to a copy of ``value`` (a tuple or named tuple of arrays) on the
    caller's stack, in the caller's entry block (so a loop does not grow the stack)."""
    if not isinstance(value, types.BaseTuple):
        return None

    def codegen(context, builder, signature, args):
        slot = cgutils.alloca_once(builder, context.get_value_type(signature.args[0]))
        builder.store(args[0], slot)
        return builder.bitcast(slot, ir.IntType(8).as_pointer())

    return types.voidptr(value), codegen


def _load_leaves(builder: ir.IRBuilder, ptr: ir.Value, llty: ir.Type) -> ir.Value:
    # One load per scalar leaf, gathered with insertvalue, not one load of the whole
    # aggregate: LLVM does not split a ~4 KB aggregate load, so a callee that reads three
    # fields of W would copy all of it per env (profiled: step_env spent about a quarter of
    # its time there). Per leaf, the extractvalue of a field folds onto its own load and the
    # loads of unread fields are dead code.
    if isinstance(llty, ir.BaseStructType):
        elements = llty.elements
    elif isinstance(llty, ir.ArrayType):
        elements = [llty.element] * llty.count
    else:
        return builder.load(ptr)
    i32 = ir.IntType(32)
    value = ir.Constant(llty, ir.Undefined)
    for i, element in enumerate(elements):
        leaf = _load_leaves(builder, builder.gep(ptr, [i32(0), i32(i)], inbounds=True), element)
        value = builder.insert_value(value, leaf, i)
    return value


def struct_loader(ty: types.Type) -> Any:
    """An intrinsic ``load(ptr) -> ty``: the structure of numba type ``ty`` that
    :func:`struct_ptr` stored at ``ptr`` (a ``voidptr``), or that :meth:`AbiType.pack` built
    at address ``ptr`` (an integer)."""

    @intrinsic
    def load(typingctx, ptr):
        if ptr != types.voidptr and not isinstance(ptr, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            llty = context.get_value_type(ty)
            if isinstance(signature.args[0], types.Integer):
                at = builder.inttoptr(args[0], llty.as_pointer())
            else:
                at = builder.bitcast(args[0], llty.as_pointer())
            return _load_leaves(builder, at, llty)

        return ty(ptr), codegen

    load.abi_type = ty  # what the cache key hashes (push_envs._numba_cache)
    return load


def _indirect_call(name: str, result: types.Type, scalars: tuple[type, ...], doc: str) -> Any:
    """An intrinsic ``name(addr, args) -> result``: a call of the C function at address
    ``addr`` (int64) with the values of the tuple ``args``, each of a type in ``scalars``."""

    def call(typingctx, addr, args):
        if not isinstance(addr, types.Integer) or not isinstance(args, types.BaseTuple):
            return None
        if not all(isinstance(t, scalars) for t in args.types):
            return None

        def codegen(context, builder, signature, llargs):
            n = len(signature.args[1].types)
            vals = [builder.extract_value(llargs[1], i) for i in range(n)]
            fnty = ir.FunctionType(context.get_value_type(result) if result != types.void
                                   else ir.VoidType(), [v.type for v in vals])
            out = builder.call(builder.inttoptr(llargs[0], fnty.as_pointer()), vals)
            return context.get_dummy_value() if result == types.void else out

        return result(addr, args), codegen

    call.__name__ = call.__qualname__ = name
    call.__doc__ = doc
    return intrinsic(call)


_NUMBERS = (types.Integer, types.Float, types.RawPointer)

call_void = _indirect_call("call_void", types.void, (types.Integer, types.RawPointer), """Call
the C function at address ``addr`` (int64) with the values of the tuple ``args`` (integers and
pointers); it returns nothing.""")

call_f8 = _indirect_call("call_f8", types.float64, _NUMBERS, """Call the C function at
address ``addr`` (int64) with the values of the tuple ``args`` (floats, integers and
pointers); it returns a float64 (``double``).""")

call_i8 = _indirect_call("call_i8", types.int64, _NUMBERS, """Call the C function at address
``addr`` (int64) with the values of the tuple ``args`` (floats, integers and pointers); it
returns an int64.""")


_DTYPES = {"f8": types.float64, "i8": types.int64, "u8": types.uint64, "u1": types.uint8,
           "b1": types.boolean}


class AbiType:
    """The declared numba type of a ``NamedTuple`` of C-contiguous arrays.

    ``fields`` maps each field of ``cls``, in order, to ``(dtype code, ndim)``: ``"f8"``
    float64, ``"i8"`` int64, ``"u8"`` uint64, ``"u1"`` uint8, ``"b1"`` bool.
    """

    def __init__(self, cls: type, fields: Mapping[str, tuple[str, int]]) -> None:
        if tuple(fields) != tuple(cls._fields):
            raise TypeError(f"AbiType: fields {tuple(fields)} do not match {cls.__name__}'s "
                            f"{cls._fields}")
        self.cls = cls
        self.fields = dict(fields)
        self.numba_type = types.NamedTuple(
            [types.Array(_DTYPES[d], n, "C") for d, n in fields.values()], cls)
        self.loader = struct_loader(self.numba_type)

    def check(self, value: Any) -> None:
        """Raise TypeError naming the first field of ``value`` whose array is not of the
        declared dtype, dimension and C-contiguous layout (a kernel would misread it)."""
        for name, (code, ndim) in self.fields.items():
            a = getattr(value, name)
            ok = isinstance(a, np.ndarray) and a.dtype == np.dtype(code) and a.ndim == ndim \
                and a.flags.c_contiguous and a.flags.writeable and a.flags.aligned
            if not ok:
                got = (f"{a.dtype}, {a.ndim}-d, C-contiguous={a.flags.c_contiguous}, "
                       f"writeable={a.flags.writeable}" if isinstance(a, np.ndarray)
                       else type(a).__name__)
                raise TypeError(f"{self.cls.__name__}.{name} must be a writeable C-contiguous "
                                f"{np.dtype(code)} array of {ndim} dimension(s), got {got}")

    def pack(self, value: Any) -> Packed:
        """``value`` (checked) as numba holds it, at an address a compiled kernel loads with
        :attr:`loader`: a call then passes one integer per structure, where passing the
        structure itself made numba unbox each of its arrays (~100 arrays, ~2 us, per call
        of a single env's step).

        numba's array value is the words ``meminfo, parent, nitems, itemsize, data,
        shape[ndim], strides[ndim]``, and a named tuple of arrays is its fields' words in
        order (all 8 bytes: no padding; tests/physics/test_abi.py checks against numba's own
        store). ``meminfo`` and ``parent`` are null: the kernels are compiled without
        reference counting, and numba's count skips a null meminfo anyway.
        """
        self.check(value)
        words: list[int] = []
        for name in self.fields:
            a = getattr(value, name)
            words += [0, 0, a.size, a.itemsize, a.ctypes.data, *a.shape, *a.strides]
        return Packed(value, np.array(words, dtype=np.uint64))


class Packed:
    """A structure's numba value, built in Python at :attr:`address` (:meth:`AbiType.pack`).

    It holds the structure, so its arrays live as long as the value that describes them.
    """

    __slots__ = ("_words", "address", "value")

    def __init__(self, value: Any, words: np.ndarray) -> None:
        self.value = value
        self._words = words
        self.address = int(words.ctypes.data)


_CFUNC_OPTIONS = {"cache": True, "_nrt": False}


class CFunction:
    """A ``cfunc`` of a top-level Python function, compiled (or loaded from the cache) on
    first use of :attr:`address`, so a sensor or hook nobody uses is never compiled."""

    def __init__(self, py_func: Callable[..., Any], signature: Any) -> None:
        self.py_func = py_func
        self.signature = signature
        self._compiled: Any = None
        # Part of the cache stamp (push_envs._numba_cache): another signature or option is
        # other machine code under the same source.
        setattr(py_func, OPTIONS_MARK, f"cfunc {signature} {sorted(_CFUNC_OPTIONS.items())}")
        self._lock = threading.Lock()

    @property
    def ready(self) -> bool:
        """Whether it is compiled (or loaded) in this process already."""
        return self._compiled is not None

    @property
    def address(self) -> int:
        """The C function's address (int), compiling it first if needed."""
        if self._compiled is None:
            with self._lock:
                if self._compiled is None:
                    self._compiled = numba.cfunc(self.signature,
                                                 **_CFUNC_OPTIONS)(self.py_func)
        return self._compiled.address


ROWS_SIG = types.void(types.int64, types.int64, types.voidptr)
"""``rows(lo, hi, W*)``: a batched stage over envs lo..hi-1 of one structure."""


ENV_SIG = types.void(types.int64, types.voidptr)
"""``env(e, W*)``: one env of one structure."""

OP_SIG = types.int64(types.int64, types.int64, types.float64, types.voidptr)
"""``op(code, e, x, W*) -> int64``: one of several operations (``code``) on env e of one
structure, with one float argument ``x``."""


__all__ = ["AbiType", "CFunction", "ENV_SIG", "OP_SIG", "Packed", "ROWS_SIG", "call_f8",
           "call_i8", "call_void", "struct_loader", "struct_ptr"]
