"""A software prefetch for the kernels: :func:`prefetch_row` asks the processor to start
loading one row of a 2-D array into cache (``llvm.prefetch``) and returns at once.

Why.  The fast engine's cascade visits list positions one after another, and the next one's
row is found only from the current one's (its slot on the port being walked), so each visit
waits for one load from memory that the processor cannot start early on its own.  The rows
of the slots further along a port's list are known already: a walk that asks for the next
one's row while it processes this one overlaps the two loads."""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["prefetch_row"]


@intrinsic
def prefetch_row(typingctx: Any, arr: Any, i: Any) -> Any:
    """``prefetch_row(arr, i)``: prefetch the cache line of ``arr[i, 0]`` for reading (high
    locality).  Changes nothing a program can observe but its speed."""
    if not isinstance(arr, types.Array) or arr.ndim != 2 or not isinstance(i, types.Integer):
        return None
    sig = types.void(arr, i)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        aty, ity = signature.args
        ary = context.make_array(aty)(context, builder, args[0])
        idx = context.cast(builder, args[1], ity, types.intp)
        zero = context.get_constant(types.intp, 0)
        ptr = cgutils.get_item_pointer2(context, builder, ary.data,
                                        cgutils.unpack_tuple(builder, ary.shape),
                                        cgutils.unpack_tuple(builder, ary.strides),
                                        aty.layout, [idx, zero], wraparound=False)
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [ptr, i32(0), i32(3), i32(1)])  # read, high locality, data
        return context.get_dummy_value()

    return sig, codegen
