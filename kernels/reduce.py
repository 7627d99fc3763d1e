"""MEAN over axes, float and 8-bit quantized; numba fast path.

Quantized, ``variant="reference"`` (default; TFLite ``BUILTIN_REF`` for every axis set, and the
default kernel outside its fast path) = ``reference_ops::QuantizedMeanOrSum``::

    M, S = QuantizeMultiplier(double(in_scale) / double(out_scale));  n = prod(reduced dims)
    sh = min(floor(log2(n)), 32, 31 + S);  M' = int32((int64(M) << sh) / n);  S' = S - sh
    out = clamp(MBQM(int32(sum(x) - in_zp * n), M', S') + out_zp)

``variant="optimized"``: the default TFLite CPU kernel, whose 4-D ``keep_dims`` mean over axes
resolving to {1, 2} (a global average pool) uses ``optimized_ops::Mean``::

    t = float32(in_zp * in_scale / out_scale);  bias = out_zp - int(t +/- 0.5)
    M, S = QuantizeMultiplier(float32(in_scale / (float32(H * W) * out_scale)))
    out = clamp(MBQM(sum(x), M, S) + bias)

``variant="aosp"``: NNAPI's MEAN on AOSP's CpuExecutor (``meanGeneric<T, int32_t>``,
common/cpu_operations/SimpleMath.cpp:53-82, calling TFLite's template
``reference_ops::Mean<T, U>``): the int32 sum of the raw quantized values divided by the count
with C++ ``/`` (toward zero), cast to the type. No zero point, no rounding, no requantization:
NNAPI requires the output's scale and zero point to equal the input's, and AOSP never reads
them (docs/numerics.md)::

    out = T(trunc(int32(sum(x)) / n))

Float: float32 sum in input order divided by the float32 count (``reference_ops::Mean``).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import flat, greater, zeros
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import qrange, quantize_multiplier
from nnsim.kernels.gemm import _requantize_core, requant_params

__all__ = ["mean", "prepare_mean", "mean_params", "mean_fast_4d_params",
           "is_mean_4d_fast_path"]


def mean(x, axes, keep_dims, *, in_scale=None, in_zp=0, out_scale=None, out_zp=0,
         variant="reference"):
    """Mean of ``x`` over ``axes``.

    Parameters
    ----------
    x : ndarray
        float32 / float16 / uint8 / int8.
    axes : sequence of int
        Axes to reduce (negative allowed, duplicates ignored).
    keep_dims : bool
        Keep reduced dimensions with size 1.
    in_scale, in_zp, out_scale, out_zp
        Quantization; the output defaults to the input's parameters.
    variant : {"reference", "optimized", "aosp"}
        Which quantized kernel to match: TFLite's two, or AOSP's CpuExecutor (see the module
        docstring; ``"aosp"`` ignores ``out_scale`` and ``out_zp``).

    Returns
    -------
    ndarray
        Same dtype as ``x``.
    """
    x = np.asarray(x)
    plan = prepare_mean(x.shape, x.dtype, axes, keep_dims, in_scale=in_scale, in_zp=in_zp,
                        out_scale=out_scale, out_zp=out_zp, variant=variant)
    return plan.run(x)


def prepare_mean(x_shape, x_dtype, axes, keep_dims, *, in_scale=None, in_zp=0, out_scale=None,
                 out_zp=0, variant="reference"):
    """Checks and constants of :func:`mean` for one input shape (TFLite's Prepare); the plan's
    ``run(x)`` returns the mean (into a buffer of the plan's, reused at every call)."""
    return _MeanPlan(tuple(int(d) for d in x_shape), np.dtype(x_dtype), axes, keep_dims,
                     in_scale, in_zp, out_scale, out_zp, variant)


class _MeanPlan:
    def __init__(self, shape, dtype, axes, keep_dims, in_scale, in_zp, out_scale, out_zp,
                 variant):
        rank = len(shape)
        raw_axes = [int(a) for a in np.atleast_1d(np.asarray(axes, dtype=np.int64))]
        reduced = sorted({cm.normalize_axis(a, rank) for a in raw_axes})
        self.kept = [d for d in range(rank) if d not in reduced]
        self.reduced = reduced
        self.out_shape = tuple(1 if d in reduced else shape[d] for d in range(rank)) \
            if keep_dims else tuple(shape[d] for d in self.kept)
        count = int(np.prod([shape[d] for d in reduced], dtype=np.int64))
        self.blocked = bool(reduced) and reduced == list(range(reduced[0], reduced[-1] + 1))
        if self.blocked:   # one block of consecutive axes: [outer, reduced, inner], no copy
            outer = int(np.prod(shape[:reduced[0]], dtype=np.int64))
            inner = int(np.prod(shape[reduced[-1] + 1:], dtype=np.int64))
        else:
            outer, inner = int(np.prod([shape[d] for d in self.kept], dtype=np.int64)), 1
        self.blocks = (outer, count, inner)
        self.dtype = dtype
        if not cm.is_quantized(dtype):
            cm.check_dtype("input", np.empty(0, dtype), cm.FLOAT_DTYPES)
            self.out = np.empty((outer, inner), np.float32)
            return
        self.count = count
        self.out = np.empty((outer, inner), dtype)
        self.sums = np.empty((outer, inner), np.int32)
        if variant == "aosp":
            self.table = None
            return
        in_scale = cm.require(in_scale, "in_scale")
        if out_scale is None:
            out_scale, out_zp = in_scale, in_zp
        self.qmin, self.qmax = qrange(dtype)
        if variant == "optimized" and is_mean_4d_fast_path(rank, raw_axes, keep_dims):
            m, s, offset = mean_fast_4d_params(in_scale, in_zp, out_scale, out_zp, count)
            subtract = 0
        elif variant in ("reference", "optimized"):
            (m, s), subtract = mean_params(in_scale, out_scale, count), int(in_zp) * count
            offset = out_zp
        else:
            raise ValueError(f"unknown mean variant {variant!r}")
        # MBQM(wrap32(sum - subtract), M, S) + offset: the bias of the requantization table
        self.table = requant_params(np.full(inner, -subtract, np.int64), np.full(inner, m),
                                    np.full(inner, s))
        self.offset = int(offset)

    def bind(self, x):
        """A function of no arguments computing the mean of the current contents of ``x``
        (fixed, C-contiguous) into the plan's output buffer, or None when not supported."""
        if not self.blocked or self.dtype.kind == "f" or not x.flags.c_contiguous:
            return None
        blocks = x.reshape(self.blocks)
        if self.table is None:
            return partial(_mean_aosp_run, blocks, self.sums, self.count, self.out)
        return cm.in_turn(partial(_sum_blocks_core, blocks, self.sums),
                          partial(_requantize_core, self.sums, self.table, self.offset,
                                  self.qmin, self.qmax, self.out.view(np.uint8)))

    def run(self, x):
        if self.blocked:
            blocks = np.ascontiguousarray(x).reshape(self.blocks)
        else:
            blocks = np.ascontiguousarray(np.transpose(x, self.kept + self.reduced))
            blocks = blocks.reshape(self.blocks)
        if self.dtype.kind == "f":
            _mean_float_core(blocks.astype(np.float32, copy=False), self.out)
            return self.out.reshape(self.out_shape).astype(self.dtype, copy=False)
        if self.table is None:
            return _mean_aosp_run(blocks, self.sums, self.count, self.out).reshape(self.out_shape)
        _sum_blocks_core(blocks, self.sums)     # int32 wrap-around, as TFLite's accumulator
        _requantize_core(self.sums, self.table, self.offset, self.qmin, self.qmax,
                         self.out.view(np.uint8))
        return self.out.reshape(self.out_shape)


def is_mean_4d_fast_path(rank, axes, keep_dims):
    """TFLite's special case: 4-D input, keep_dims, axes resolving to exactly {1, 2}.

    (Checked against LiteRT: negative and repeated axes count once they resolve to H, W.)
    """
    resolved = {int(a) % rank for a in axes} if rank else set()
    return bool(keep_dims) and rank == 4 and resolved == {1, 2}


def mean_params(in_scale, out_scale, count):
    """``(M', S')`` of ``QuantizedMeanOrSum`` with the 1/count factor folded in."""
    m, s = quantize_multiplier(float(np.float32(in_scale)) / float(np.float32(out_scale)))
    if count <= 0:
        return m, s
    shift = min(int(count).bit_length() - 1, 32, 31 + s)
    return int(np.int32((m << shift) // count)), s - shift


def mean_fast_4d_params(in_scale, in_zp, out_scale, out_zp, count):
    """``(M, S, bias)`` of ``optimized_ops::Mean`` (uint8) / ``optimized_integer_ops::Mean``."""
    in_scale, out_scale = np.float32(in_scale), np.float32(out_scale)
    num = np.float32(count)
    t = np.float32(np.float32(np.float32(in_zp) * in_scale) / out_scale)
    t = np.float32(t + np.float32(0.5)) if t > 0 else np.float32(t - np.float32(0.5))
    bias = int(out_zp) - int(t)
    m, s = quantize_multiplier(float(np.float32(in_scale / np.float32(num * out_scale))))
    return m, s, bias


def _mean_aosp_run(blocks, sums, count, out):
    """``variant="aosp"``: int32 sums, divided toward zero, cast to the output type with C++
    wrap-around (``static_cast<T>``). A zero count leaves zeros."""
    _sum_blocks_core(blocks, sums)
    _divide_toward_zero_core(sums, max(count, 1))
    np.copyto(out, sums, casting="unsafe")   # integer narrowing wraps, as static_cast
    return out


@njit
def _divide_toward_zero_core(sums, count):
    values = flat(sums)
    for i in range(values.size):
        quotient = abs(np.int64(values[i])) // count
        values[i] = quotient if values[i] >= 0 else -quotient


@njit
def _sum_blocks_core(blocks, sums):
    """``sums[o, i]`` = the int32 (wrapping) sum of ``blocks[o, :, i]``, accumulated in place
    in int32 lanes (the same bits as an int64 sum wrapped once: arithmetic mod 2**32). In
    int64 lanes with a scratch row allocated per call, MobileNet v2's 7x7x1280 MEAN took
    12.8-14.9 us in the model, now 4.8 us (Zen 5)."""
    outer, count, inner = blocks.shape
    for o in range(outer):
        for i in range(inner):
            sums[o, i] = 0
        for r in range(count):
            for i in range(inner):
                sums[o, i] = np.int32(sums[o, i] + np.int32(blocks[o, r, i]))
    return sums


@njit
def _mean_float_core(blocks, out):
    outer, count, inner = blocks.shape
    for o in range(outer):
        total = zeros(inner, np.float32)
        for r in range(count):  # float32, in input order, as reference_ops::Mean
            for i in range(inner):
                total[i] += blocks[o, r, i]
        for i in range(inner):
            out[o, i] = total[i] / np.float32(greater(count, 1))
    return out
