"""LOCAL_RESPONSE_NORMALIZATION along one axis, float32 / float16; numba fast path.

``out = x * (bias + alpha * sum(window of x**2)) ** -beta``. Two upstream variants:

``variant="nnapi"`` (AOSP ``LocalResponseNormalization.cpp``; float16 computes in float32):
the window is ``[i - r, i + r]`` clipped to the axis, with ``r = min(radius, axis size)``.

* Last axis: TFLite ``optimized_ops::LocalResponseNormalization``. ``s[k] = (x[k] * x[k]) *
  alpha`` in float32; a running float32 sum slides over ``s`` (add the entering term, store
  ``bias + sum``, subtract the leaving term), then ``out = x * (1 / d)`` when ``beta == 1``,
  ``x * (1 / sqrt(d))`` when ``beta == 0.5``, else ``x * pow(d, -beta)``.
* Other axes: AOSP's own loop: ``sum += v * v`` over the window in order, then
  ``x * pow(bias + alpha * sum, -beta)``.

``variant="tflite"`` (TFLite ``reference_ops::LocalResponseNormalization``, LiteRT
``BUILTIN_REF``; last axis only): the window is ``[c - radius, c + radius)`` -- one element
shorter than NNAPI's -- with the second form's arithmetic.

Every float32 operation is computed in float64 and rounded to float32 (exact emulation of
IEEE single precision for +, *, /, sqrt; ``pow`` is correctly rounded, as glibc's ``powf``
almost always is).
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser, zeros
from nnsim.kernels._jit import njit

__all__ = ["local_response_normalization"]


def local_response_normalization(x, radius, bias, alpha, beta, axis=-1, *, variant="nnapi"):
    """Local response normalization of ``x`` along ``axis``.

    Parameters
    ----------
    x : ndarray
        float32 / float16, rank >= 1.
    radius : int
        Half window size, >= 0.
    bias, alpha, beta : float
        The float32 parameters (float16 ones are passed as their exact float values).
    axis : int
        Normalisation axis (negative counts from the end); ``variant="tflite"`` needs the last.
    variant : {"nnapi", "tflite"}
        Which upstream kernel to match (see the module docstring).

    Returns
    -------
    ndarray
        Same shape and dtype as ``x``.
    """
    x = np.asarray(x)
    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    if x.ndim < 1:
        raise ValueError("input must have rank >= 1")
    axis = cm.normalize_axis(axis, x.ndim)
    radius = int(radius)
    if radius < 0:
        raise ValueError(f"radius must be >= 0, got {radius}")
    if variant not in ("nnapi", "tflite"):
        raise ValueError(f"unknown variant {variant!r}")
    if variant == "tflite" and axis != x.ndim - 1:
        raise ValueError("the TFLite kernel normalises along the last axis only")
    x32, dtype = cm.to_float32(x)
    outer = int(np.prod(x.shape[:axis], dtype=np.int64))
    inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    blocks = x32.reshape(outer, x.shape[axis], inner)
    out = np.empty_like(blocks)
    params = np.array([bias, alpha, beta], dtype=np.float32).astype(np.float64)
    with np.errstate(all="ignore"):   # a non-positive base gives NaN / inf, as in C++
        _run(blocks, out, radius, params, variant, axis == x.ndim - 1)
    return out.reshape(x.shape).astype(dtype, copy=False)


def _run(blocks, out, radius, params, variant, last):
    outer, depth, _ = blocks.shape
    if variant == "tflite":
        _window_core(blocks, radius, radius - 1, params, out)
    else:
        r = min(radius, depth)
        if last:
            _sliding_core(blocks.reshape(outer, depth), r, params, out.reshape(outer, depth))
        else:
            _window_core(blocks, r, r, params, out)


@njit(inner=True)
def _f32(v):
    """Round a float64 value to float32 (kept as float64): one IEEE single operation."""
    return np.float64(np.float32(v))


@njit(error_model="numpy")
def _window_core(blocks, before, after, params, out):
    """Window ``[i - before, i + after]`` per element; AOSP's / TFLite reference arithmetic."""
    outer, depth, inner = blocks.shape
    bias, alpha, beta = params[0], params[1], params[2]
    for o in range(outer):
        for n in range(inner):
            for i in range(depth):
                total = 0.0
                for d in range(greater(0, i - before), lesser(depth, i + after + 1)):
                    v = np.float64(blocks[o, d, n])
                    total = _f32(total + _f32(v * v))
                m = _f32(np.power(_f32(bias + _f32(alpha * total)), -beta))
                out[o, i, n] = _f32(np.float64(blocks[o, i, n]) * m)
    return out


@njit(error_model="numpy")
def _sliding_core(rows, r, params, out):
    """TFLite's optimized last-axis kernel: running float32 sum over ``alpha * x**2``."""
    n_rows, depth = rows.shape
    bias, alpha, beta = params[0], params[1], params[2]
    padded = zeros(depth + 2 * r, np.float64)
    for row in range(n_rows):
        for i in range(depth):
            v = np.float64(rows[row, i])
            padded[r + i] = _f32(_f32(v * v) * alpha)
        acc = 0.0
        for i in range(2 * r):
            acc = _f32(acc + padded[i])
        for i in range(depth):
            acc = _f32(acc + padded[i + 2 * r])
            d = _f32(bias + acc)
            acc = _f32(acc - padded[i])
            v = np.float64(rows[row, i])
            if beta == 1.0:
                m = _f32(1.0 / d)
            elif beta == 0.5:
                m = _f32(1.0 / _f32(np.sqrt(d)))
            else:
                m = _f32(np.power(d, -beta))
            out[row, i] = _f32(v * m)
    return out
