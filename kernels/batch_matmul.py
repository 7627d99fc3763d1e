"""BATCH_MATMUL: ``out[..., i, j] = sum_k lhs[..., i, k] * rhs[..., k, j]``; numba fast path.

Arithmetic of TFLite's ``reference_ops::BatchMatMul``, which NNAPI's CPU executor
(``BatchMatmul.cpp``) calls after transposing the adjoint operands:

* float32: one float32 accumulator per output, products added in ``k`` order;
* float16 (NNAPI only): the same in half precision, every product and every partial sum rounded
  to float16 (computed exactly in float32 and rounded: float32 holds a product of halves
  exactly, and float32-then-half rounding of a sum equals direct half rounding);
* int32 (NNAPI only): int32 products and sums, wrapping;
* int8: ``acc = sum_k (lhs - lhs_zp) * (rhs - rhs_zp)`` (int32), then
  ``clamp(MultiplyByQuantizedMultiplier(acc, M, S) + out_zp, -128, 127)`` where ``M, S`` quantize
  ``double(float32(lhs_scale * rhs_scale)) / double(out_scale)`` (``GetQuantizedConvolution
  Multiplier``); ``rounding="double"`` is the gemmlowp double rounding AOSP is built with,
  ``"single"`` the ``TFLITE_SINGLE_ROUNDING`` rule.

Batch dimensions (all but the last two) broadcast as TFLite's reference does: equal, or 1 on
one side. ``adj_x`` / ``adj_y`` transpose the last two dimensions of ``lhs`` / ``rhs`` first.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import (multiply_by_quantized_multiplier,
                                       multiply_by_quantized_multiplier_single_rounding,
                                       quantize_multiplier, wrap_int32)

__all__ = ["batch_matmul", "batch_matmul_shape", "batch_matmul_multiplier"]


def batch_matmul_shape(lhs_shape, rhs_shape, adj_x=False, adj_y=False) -> tuple:
    """Output shape: broadcast batch dimensions, then (rows of lhs, columns of rhs).

    Raises ``ValueError`` when a rank is below 2, the contracted sizes differ or the batch
    dimensions do not broadcast.
    """
    lhs_shape, rhs_shape = tuple(lhs_shape), tuple(rhs_shape)
    if len(lhs_shape) < 2 or len(rhs_shape) < 2:
        raise ValueError("batch_matmul operands need rank >= 2")
    rows, depth = lhs_shape[-2:][::-1] if adj_x else lhs_shape[-2:]
    rdepth, cols = rhs_shape[-2:][::-1] if adj_y else rhs_shape[-2:]
    if depth != rdepth:
        raise ValueError(f"cannot multiply {lhs_shape} (adj {adj_x}) by {rhs_shape} (adj {adj_y})")
    batch = np.broadcast_shapes(lhs_shape[:-2], rhs_shape[:-2])
    return tuple(int(d) for d in batch) + (int(rows), int(cols))


def batch_matmul_multiplier(lhs_scale, rhs_scale, out_scale):
    """``(M, S)`` of the int8 requantization (float32 product of the input scales)."""
    product = np.float32(lhs_scale) * np.float32(rhs_scale)
    return quantize_multiplier(float(product) / float(np.float32(out_scale)))


def batch_matmul(lhs, rhs, adj_x=False, adj_y=False, *, lhs_scale=None, lhs_zp=0,
                 rhs_scale=None, rhs_zp=0, out_scale=None, out_zp=0, rounding="double"):
    """Batched matrix product of ``lhs`` and ``rhs`` (same dtype).

    Parameters
    ----------
    lhs, rhs : ndarray
        float32, float16, int32 or int8 (quantized: the scale and zero point arguments are
        required), rank >= 2.
    adj_x, adj_y : bool
        Transpose the last two dimensions of ``lhs`` / ``rhs`` before multiplying.
    rounding : {"double", "single"}
        int8 requantization rule (see the module docstring).

    Returns
    -------
    ndarray
        Dtype of the inputs, shape :func:`batch_matmul_shape`.
    """
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"lhs and rhs dtypes differ: {lhs.dtype} and {rhs.dtype}")
    cm.check_dtype("lhs", lhs, (np.float32, np.float16, np.int32, np.int8))
    out_shape = batch_matmul_shape(lhs.shape, rhs.shape, adj_x, adj_y)
    a, bt = _operands(lhs, rhs, adj_x, adj_y, out_shape)
    out = np.empty(a.shape[:2] + (bt.shape[1],), dtype=lhs.dtype)
    if lhs.dtype == np.float32:
        _matmul_float_core(a, bt, out)
    elif lhs.dtype == np.int32:
        _matmul_int32_core(a, bt, out)
    elif lhs.dtype == np.float16:
        _matmul_half(a, bt, out)
    else:
        m, s = batch_matmul_multiplier(cm.require(lhs_scale, "lhs_scale"),
                                       cm.require(rhs_scale, "rhs_scale"),
                                       cm.require(out_scale, "out_scale"))
        if rounding not in ("double", "single"):
            raise ValueError(f"unknown rounding {rounding!r}")
        _matmul_quant_core(a, bt, int(lhs_zp), int(rhs_zp), int(out_zp), m, s,
                           rounding == "single", out)
    return out.reshape(out_shape)


def _operands(lhs, rhs, adj_x, adj_y, out_shape):
    """``lhs`` as [batch, rows, depth] and ``rhs`` transposed as [batch, cols, depth], both
    broadcast to the output's batch dimensions and contiguous (rows of depth for the cores)."""
    batch = out_shape[:-2]
    a = np.swapaxes(lhs, -1, -2) if adj_x else lhs
    bt = rhs if adj_y else np.swapaxes(rhs, -1, -2)
    a = np.broadcast_to(a, batch + a.shape[-2:])
    bt = np.broadcast_to(bt, batch + bt.shape[-2:])
    n = int(np.prod(batch, dtype=np.int64))
    return (np.ascontiguousarray(a).reshape((n,) + a.shape[-2:]),
            np.ascontiguousarray(bt).reshape((n,) + bt.shape[-2:]))


def _matmul_half(a, bt, out):
    """float16: vectorised over outputs, a Python loop over the (short) contracted axis only."""
    acc = np.zeros(out.shape, dtype=np.float16)
    a32, b32 = a.astype(np.float32), bt.astype(np.float32)
    for k in range(a.shape[2]):
        product = (a32[:, :, k, None] * b32[:, None, :, k]).astype(np.float16)
        acc = (acc.astype(np.float32) + product.astype(np.float32)).astype(np.float16)
    out[...] = acc


@njit
def _matmul_float_core(a, bt, out):
    batches, rows, depth = a.shape
    cols = bt.shape[1]
    for b in range(batches):
        for i in range(rows):
            for j in range(cols):
                total = np.float32(0.0)
                for k in range(depth):      # float32, in k order (no reassociation)
                    total += a[b, i, k] * bt[b, j, k]
                out[b, i, j] = total
    return out


@njit
def _matmul_int32_core(a, bt, out):
    batches, rows, depth = a.shape
    cols = bt.shape[1]
    for b in range(batches):
        for i in range(rows):
            for j in range(cols):
                total = np.int64(0)
                for k in range(depth):      # int32 wrap-around at every step
                    total = wrap_int32(total + wrap_int32(np.int64(a[b, i, k]) * bt[b, j, k]))
                out[b, i, j] = total
    return out


@njit
def _matmul_quant_core(a, bt, lhs_zp, rhs_zp, out_zp, mult, shift, single, out):
    batches, rows, depth = a.shape
    cols = bt.shape[1]
    for b in range(batches):
        for i in range(rows):
            for j in range(cols):
                total = np.int64(0)
                for k in range(depth):
                    total += (np.int64(a[b, i, k]) - lhs_zp) * (np.int64(bt[b, j, k]) - rhs_zp)
                acc = wrap_int32(total)
                if single:
                    v = multiply_by_quantized_multiplier_single_rounding(acc, mult, shift)
                else:
                    v = multiply_by_quantized_multiplier(acc, mult, shift)
                v += out_zp
                out[b, i, j] = lesser(greater(v, -128), 127)
    return out
