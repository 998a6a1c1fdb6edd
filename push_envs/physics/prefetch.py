"""Software prefetch of the next env's rows, so a batched step does not wait on memory.

A batch of thousands of envs does not fit in cache: every env-step first touches each of its
rows (pose, scratch, pairs, contacts, observation, ...) cold, one array after another. The
hardware prefetcher follows a few streams, not the ~30 a step reads, so the first stage of
each env's step (the sub-step count) used to wait on a cache miss per array. While env e
steps, :func:`prefetch_row` asks for env e + 1's lines: they arrive in the background, and
env e + 1 finds them in cache. A prefetch is a hint: it changes no value, so rollouts stay
bit-identical.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .jit import compiled

LINE = 64  # [bytes] cache line
ROW_LINES = 8  # lines fetched at most per row: the head of a big row (pairs, contacts) is
# what a step with few contacts reads


@intrinsic
def prefetch_address(typingctx, addr):
    """LLVM's ``llvm.prefetch`` of the line holding byte address ``addr``: a read, kept in
    every cache level (locality 3). A hint with no effect on any value."""
    if not isinstance(addr, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        # llvmlite mangles the name for its pointer type ("p0i8"); LLVM with opaque pointers
        # upgrades it to "p0" as it does numba's own memcpy intrinsics, and the LLVM of older
        # numba releases (typed pointers) takes "p0i8" as it is.
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], fnty)
        builder.call(fn, [builder.inttoptr(args[0], i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(addr), codegen


# Inlined: called once per env, and a by-value W is ~300 flattened scalars per call;
# profiled at 105 of 1386 ns per PushBox env-step as a real call, near nothing inlined.
@compiled(inline="always")
def prefetch_row(a, e):
    """Prefetch the first ``ROW_LINES`` lines of row ``e`` of C-contiguous array ``a``;
    returns how many lines it asked for."""
    stride = a.strides[0]
    start = a.ctypes.data + e * stride
    n = 0
    for k in range(0, min(stride, ROW_LINES * LINE), LINE):
        prefetch_address(start + k)
        n += 1
    return n


@compiled(inline="always")
def prefetch_world(e, W):
    """Prefetch env e's rows of the arrays every physics step reads (``WorldArrays``)."""
    prefetch_row(W.epar, e)
    prefetch_row(W.pos, e)
    prefetch_row(W.ang, e)
    prefetch_row(W.vel, e)
    prefetch_row(W.omg, e)
    prefetch_row(W.drv, e)
    prefetch_row(W.cmd, e)
    prefetch_row(W.bsc, e)
    prefetch_row(W.bis, e)
    prefetch_row(W.aabb, e)
    prefetch_row(W.stamp, e)
    prefetch_row(W.prs, e)
    prefetch_row(W.pfl, e)
    prefetch_row(W.pord, e)
    prefetch_row(W.gsc, e)
    prefetch_row(W.cti, e)
    prefetch_row(W.ctf, e)
    prefetch_row(W.hl, e)
