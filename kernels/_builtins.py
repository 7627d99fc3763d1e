"""Two-argument minimum and maximum and array allocation for compiled kernels: what kernels
call instead of the builtins ``min``/``max`` and ``np.empty``/``np.zeros``/``np.ones`` (the
rule is checked by ``tests/kernels/test_kernels_jit.py``). numba itself is reached through
:mod:`nnsim.kernels._jit`, the one module that imports it."""

from __future__ import annotations

import numpy as np

from nnsim.kernels._jit import JIT_ENABLED

if JIT_ENABLED:
    from nnsim.kernels._jit import (_borrowed, _cgutils, _empty_nd_impl, _intrinsic,
                                    _parse_dtype, _parse_shape, _parse_shape_type, _signature,
                                    _types)

__all__ = ["lesser", "greater", "empty", "zeros", "flat"]


# -- min and max of two numbers ------------------------------------------------------------
# Kernels write lesser(a, b) and greater(a, b) for the builtins min(a, b) and max(a, b). numba
# implements those builtins as overloads that every process compiles again for each pair of
# argument types (numba caches a kernel, not the overloads it calls): 26 compilations, 1.0 s,
# in the shared models' first runs, one process and its compiling child per model (issue 13).
# These are intrinsics: a comparison and a select emitted at the call, nothing compiled.
# Same result as the builtins, compiled or not: both arguments converted to their common type,
# and the first argument unless the second compares lower (higher), as Python's min and max
# and numba's implementation of them (a NaN as the second argument is never picked).


def _lesser(a, b):
    """``min(a, b)`` (see above)."""
    return b if b < a else a


def _greater(a, b):
    """``max(a, b)`` (see above)."""
    return b if b > a else a


lesser, greater = _lesser, _greater

if JIT_ENABLED:
    import operator as _operator

    def _pick(op):
        def typer(typingctx, a, b):
            if not all(isinstance(t, _types.Number) for t in (a, b)):
                return None
            common = typingctx.unify_types(_types.unliteral(a), _types.unliteral(b))
            if not isinstance(common, _types.Number):
                return None

            def codegen(context, builder, sig, args):
                first, second = (context.cast(builder, v, t, common)
                                 for v, t in zip(args, sig.args))
                compare = context.get_function(op, _signature(_types.boolean, common, common))
                return builder.select(compare(builder, (second, first)), second, first)
            return _signature(common, a, b), codegen
        return _intrinsic(typer)

    lesser, greater = _pick(_operator.lt), _pick(_operator.gt)


# -- arrays a kernel allocates --------------------------------------------------------------
# Kernels write empty(shape, dtype) and zeros(shape, dtype) for np.empty and np.zeros (the
# shape an int or a tuple of ints, the dtype a numpy scalar type or an array's dtype). numba
# implements those as overloads compiled again in every process for each shape type (a
# literal size is a type of its own) and dtype: 15 compilations, 1.2 s, in the shared models'
# first runs (issue 13). These are intrinsics emitting numba's own allocation at the call
# (its allocator is still compiled once per process). Where numba lacks the internals they
# use, they are numpy's functions, which numba compiles as before.
empty, zeros = np.empty, np.zeros

if JIT_ENABLED:
    def _allocation(fill_zeros):
        def typer(typingctx, shape, dtype):
            nb_dtype, ndim = _parse_dtype(dtype), _parse_shape_type(shape)
            if nb_dtype is None or ndim is None:
                return None
            array = _types.Array(nb_dtype, ndim, "C")

            def codegen(context, builder, sig, args):
                ary = _empty_nd_impl(context, builder, array,
                                     _parse_shape(context, builder, sig.args[0], args[0]))
                if fill_zeros:
                    _cgutils.memset(builder, ary.data, builder.mul(ary.itemsize, ary.nitems),
                                     0)
                return ary._getvalue()
            return _signature(array, shape, dtype), codegen
        return _intrinsic(typer)

    if _empty_nd_impl is not None:
        empty, zeros = _allocation(False), _allocation(True)


# -- a C-contiguous array as one dimension --------------------------------------------------
# Kernels write flat(a) for a.reshape(-1) of a C-contiguous array. numba's reshape compiles
# helpers the first time a process compiles one (about 360,000 Python calls, 0.2 s: once in
# each process of a cold start that compiles a GEMM core, issue 13) and about 30,000 calls at
# each use. This is an intrinsic: the same data as one dimension of ``a.size`` elements,
# nothing checked at run time (the type says C-contiguous).


def _flat(a):
    """``a.reshape(-1)`` of a C-contiguous array ``a`` (see above)."""
    return a.reshape(-1)


flat = _flat

if JIT_ENABLED:
    @_intrinsic
    def flat(typingctx, a):   # noqa: F811 - the compiled form of the function above
        if not isinstance(a, _types.Array) or a.layout != "C":
            return None
        out = a.copy(ndim=1, layout="C")

        def codegen(context, builder, sig, args):
            src = context.make_array(sig.args[0])(context, builder, args[0])
            dst = context.make_array(out)(context, builder)
            context.populate_array(dst, data=src.data,
                                   shape=_cgutils.pack_array(builder, [src.nitems]),
                                   strides=_cgutils.pack_array(builder, [src.itemsize]),
                                   itemsize=src.itemsize, meminfo=src.meminfo,
                                   parent=src.parent)
            return _borrowed(context, builder, out, dst._getvalue())
        return _signature(out, a), codegen
