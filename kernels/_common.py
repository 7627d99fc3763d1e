"""Shared checks and precompute helpers for kernel wrappers (plain Python, no JIT).

Both the fast wrappers (``nnsim.kernels.<family>``) and the numpy reference kernels
(``nnsim.kernels.reference.<family>``) use these, so that argument handling and the
float/double rules for multipliers are written once.
"""

from __future__ import annotations

import functools

import numpy as np

from nnsim.kernels.fixed_point import (
    float_activation_range,
    qrange,
    quantize_multiplier_array,
    quantized_activation_range,
)

QUANT_DTYPES = (np.dtype(np.uint8), np.dtype(np.int8))
FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float16))


#: Byte alignment of the buffers the compiled cores read and write with vector loads: one
#: cache line, one AVX-512 register (TFLite aligns its arena the same way:
#: ``kDefaultTensorAlignment = 64``). numpy's buffers are only 16-byte aligned (malloc; a large
#: one is a page plus 16 bytes), so a 64-byte vector at a multiple of 64 from such a base spans
#: two cache lines: each load is split in two, and measured with 2 threads on a widened
#: depthwise layer the second thread ran its half 40% slower (benchmarks/README.md).
ALIGN = 64


def aligned_empty(shape, dtype) -> np.ndarray:
    """An uninitialised C-contiguous array whose first byte is :data:`ALIGN`-byte aligned
    (for a dtype holding Python objects, which no core reads, a plain ``np.empty``: raw
    bytes must not be taken for object references)."""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)
    if dtype.hasobject:
        return np.empty(shape, dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + ALIGN, np.uint8)
    start = -raw.ctypes.data % ALIGN
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def aligned_full(shape, fill, dtype) -> np.ndarray:
    """:func:`aligned_empty` filled with ``fill``."""
    out = aligned_empty(shape, dtype)
    out.fill(fill)
    return out


def aligned_zeros(shape, dtype) -> np.ndarray:
    """:func:`aligned_empty` filled with zeros."""
    return aligned_full(shape, 0, dtype)


def aligned_copy(a, own: bool = False) -> np.ndarray:
    """A C-contiguous, :data:`ALIGN`-byte aligned copy of ``a`` (``a`` itself when it is
    already both, unless ``own``: a buffer of its own, as TFLite's arena gives a tensor)."""
    a = np.asarray(a)
    if not own and a.flags.c_contiguous and a.ctypes.data % ALIGN == 0:
        return a
    out = aligned_empty(a.shape, a.dtype)
    np.copyto(out, a)
    return out


def is_quantized(dtype) -> bool:
    """True for the 8-bit asymmetric types (uint8, int8)."""
    return np.dtype(dtype) in QUANT_DTYPES


def check_dtype(name: str, array: np.ndarray, allowed) -> None:
    """Raise ``TypeError`` unless ``array.dtype`` is one of ``allowed``."""
    if array.dtype not in tuple(np.dtype(a) for a in allowed):
        names = ", ".join(np.dtype(a).name for a in allowed)
        raise TypeError(f"{name}: dtype {array.dtype.name} not supported (expected {names})")


def check_rank(name: str, array: np.ndarray, rank: int) -> None:
    """Raise ``ValueError`` unless ``array`` has exactly ``rank`` dimensions."""
    if array.ndim != rank:
        raise ValueError(f"{name}: expected rank {rank}, got shape {array.shape}")


def require(value, name: str):
    """Return ``value`` or raise ``ValueError`` naming the missing quantization argument."""
    if value is None:
        raise ValueError(f"{name} is required for quantized tensors")
    return value


def to_float32(x: np.ndarray):
    """Return ``(float32 array, dtype to cast the result back to)`` for float16/float32 inputs.

    NNAPI's CPU executor computes float16 operations in float32 and rounds the result.
    """
    return np.ascontiguousarray(x, dtype=np.float32), x.dtype


def output_dtype(out_dtype, default) -> np.dtype:
    """The quantized output dtype: ``out_dtype`` if given, else ``default``; uint8/int8 only."""
    dtype = np.dtype(default if out_dtype is None else out_dtype)
    if dtype not in QUANT_DTYPES:
        raise TypeError(f"quantized output dtype must be uint8 or int8, got {dtype.name}")
    return dtype


def quant_clamp(fuse: int, out_scale, out_zp: int, dtype):
    """Activation clamp in the output's quantized domain (TFLite CalculateActivationRangeQuantized).

    ``out_scale`` may be None only when ``fuse`` is 0 (the clamp is then the type range).
    """
    qmin, qmax = qrange(dtype)
    if int(fuse) == 0:
        return qmin, qmax
    return quantized_activation_range(fuse, require(out_scale, "out_scale"), out_zp, qmin, qmax)


def float_clamp(fuse: int):
    """Float activation clamp ``(lo, hi)`` as float32 values (infinite when unbounded)."""
    lo, hi = float_activation_range(fuse)
    return np.float32(lo), np.float32(hi)


def broadcast_shape(a_shape, b_shape) -> tuple:
    """NumPy/NNAPI broadcasting of two shapes (trailing dimensions aligned, 1 stretches); the one
    definition every layer uses. ValueError when they do not broadcast."""
    try:
        return tuple(int(d) for d in np.broadcast_shapes(tuple(a_shape), tuple(b_shape)))
    except ValueError:
        raise ValueError(f"shapes {tuple(a_shape)} and {tuple(b_shape)} cannot be broadcast") \
            from None


def broadcast_flat(a, b):
    """``(shape, flat a, flat b)``: both inputs broadcast to the common shape, contiguous."""
    shape = broadcast_shape(a.shape, b.shape)
    flat_a = np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1)
    flat_b = np.ascontiguousarray(np.broadcast_to(b, shape)).reshape(-1)
    return shape, flat_a, flat_b


def same_padding(size: int, kernel: int, stride: int, dilation: int = 1):
    """SAME padding of one spatial dimension: ``(out, before, after)`` with
    ``out = ceil(size / stride)`` and the total ``max(0, (out - 1) * stride + eff_k - size)``
    split with the odd unit after. The one definition of TFLite's
    ``ComputePaddingHeightWidth`` and NNAPI's ``calculateExplicitPadding`` (nnapi-runtime.md
    1.4), which agree; TRANSPOSE_CONV_2D has its own rule (ops/transpose_conv_2d.py)."""
    effective = (kernel - 1) * dilation + 1
    out = (size + stride - 1) // stride
    total = max(0, (out - 1) * stride + effective - size)
    return out, total // 2, total - total // 2


def explicit_out_size(size: int, kernel: int, stride: int, dilation: int, before: int,
                      after: int) -> int:
    """Output size for explicit padding: ``(in + pads - eff_k) // stride + 1`` (may be < 1)."""
    effective = (kernel - 1) * dilation + 1
    return (size + before + after - effective) // stride + 1


def conv_out_size(size: int, kernel: int, stride: int, dilation: int, before: int, after: int):
    """``explicit_out_size``, refusing a window that does not fit (ValueError)."""
    effective = (kernel - 1) * dilation + 1
    out = explicit_out_size(size, kernel, stride, dilation, before, after)
    if out < 1:
        raise ValueError(
            f"window of {effective} (kernel {kernel}, dilation {dilation}) does not fit an input "
            f"of {size} with padding {before}+{after}"
        )
    return out


def check_conv_geometry(stride_h, stride_w, dilation_h, dilation_w, pads) -> None:
    """Strides and dilations must be >= 1 and paddings >= 0."""
    if min(stride_h, stride_w) < 1 or min(dilation_h, dilation_w) < 1:
        raise ValueError("strides and dilations must be >= 1")
    if min(pads) < 0:
        raise ValueError("paddings must be >= 0")


def filter_scales(w_scales, channels: int) -> np.ndarray:
    """Normalise ``w_scales`` to a float32 vector of length 1 or ``channels``."""
    scales = np.atleast_1d(np.asarray(require(w_scales, "w_scales"), dtype=np.float32)).ravel()
    if scales.size not in (1, channels):
        raise ValueError(f"w_scales has {scales.size} entries; expected 1 or {channels}")
    return scales


def conv_multipliers(in_scale, scales: np.ndarray, out_scale, channels: int, float_product: bool):
    """Per-output-channel ``(multipliers, shifts)`` as int32 arrays of length ``channels``.

    ``float_product=True`` is TFLite's per-tensor rule (uint8 CONV/DEPTHWISE, per-tensor
    FULLY_CONNECTED, ``GetQuantizedConvolutionMultipler``): ``double(float32(in * w)) /
    double(out)``. Otherwise the per-channel rule (``PopulateConvolutionQuantizationParams``):
    ``double(in) * double(w[c]) / double(out)``.
    """
    in_scale = np.float32(require(in_scale, "in_scale"))
    out_scale = np.float32(require(out_scale, "out_scale"))
    scales = np.asarray(scales, dtype=np.float32)
    if float_product:
        real = (in_scale * scales).astype(np.float64) / np.float64(out_scale)
    else:
        real = np.float64(in_scale) * scales.astype(np.float64) / np.float64(out_scale)
    mults, shifts = quantize_multiplier_array(real)
    if shifts.max(initial=0) > 31:
        raise ValueError("requantization multiplier in_scale * w_scale / out_scale >= 2**31")
    if mults.size == 1:
        mults, shifts = np.repeat(mults, channels), np.repeat(shifts, channels)
    return mults, shifts


def bias_int32(bias, channels: int) -> np.ndarray:
    """Quantized bias as a contiguous int32 vector (zeros when None)."""
    if bias is None:
        return np.zeros(channels, dtype=np.int32)
    bias = np.asarray(bias)
    if bias.shape != (channels,):
        raise ValueError(f"bias: expected shape ({channels},), got {bias.shape}")
    check_dtype("bias", bias, (np.int32,))
    return np.ascontiguousarray(bias)


def bias_float32(bias, channels: int) -> np.ndarray:
    """Float bias as a contiguous float32 vector (zeros when None)."""
    if bias is None:
        return np.zeros(channels, dtype=np.float32)
    bias = np.asarray(bias)
    if bias.shape != (channels,):
        raise ValueError(f"bias: expected shape ({channels},), got {bias.shape}")
    return np.ascontiguousarray(bias, dtype=np.float32)


def normalize_axis(axis: int, rank: int) -> int:
    """Map a possibly negative axis into [0, rank)."""
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} out of range for rank {rank}")
    return axis % rank


def direct(call):
    """``call``, a ``functools.partial`` of a compiled core with all its arguments, calling
    the core's compiled variant for exactly these argument types without numba's dispatch
    (typing each argument and choosing a variant: about 0.2 us a call with 5-20 arguments,
    some 14 us of a MobileNet v2 invoke, Zen 5); ``call`` itself when the core has no such
    variant yet (call it once first), is not compiled (JIT off) or ``call`` is not such a
    partial. For calls bound once and run many times (a plan's fixed buffers)."""
    overloads = getattr(getattr(call, "func", None), "overloads", None)
    if not overloads or not isinstance(call, functools.partial) or call.keywords:
        return call
    core = call.func
    try:
        variant = overloads.get(tuple(core.typeof_pyval(a) for a in call.args))
    except (TypeError, ValueError):   # an argument numba cannot type
        return call
    return call if variant is None else functools.partial(variant.entry_point, *call.args)


def compile_ahead(call) -> None:
    """Compile (or load from numba's cache) now, without running anything, the variant of
    each compiled core that the bound ``call`` (``partial(core, *args)``, or :func:`in_turn`
    of such) runs, for a caller that wants them compiled before something else (a GEMM
    plan's core before its micro-kernels, :mod:`nnsim.kernels.gemm`). Anything else (a layer
    in parts, the JIT off) is left to its first call."""
    if not isinstance(call, functools.partial) or call.keywords:
        return
    if call.func is _in_turn:
        for piece in call.args[0]:
            compile_ahead(piece)
        return
    core = call.func
    if hasattr(core, "typeof_pyval") and hasattr(core, "overloads"):
        core.compile(tuple(core.typeof_pyval(a) for a in call.args))


def nothing():
    """A bound call with no work (a step whose output is a view of a fixed buffer);
    :mod:`nnsim.kernels.program` gives it no row."""


def in_turn(*calls):
    """One bound call running the bound ``calls`` in order (:mod:`nnsim.kernels.program` runs
    each of them as a piece of its own)."""
    return functools.partial(_in_turn, calls)


def _in_turn(calls):
    for call in calls:
        call()
