"""LOG_SOFTMAX along one axis, float32 / float16; numba fast path for float32.

NNAPI ``log_softmax::compute<T>`` (LogSoftmax.cpp), in the tensor's own type ``T``::

    m = max(x);  sum = T(0);  for each x: sum = T(double(sum) + exp(double((x - m) * beta)))
    log_sum = T(log(double(sum)));  out = (x - m) * beta - log_sum

``(x - m)`` is computed in ``T`` and multiplied by the float ``beta`` in float32; for float16
the partial sums and ``log_sum`` are rounded to half (done here with numpy over all rows).
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater
from nnsim.kernels._jit import njit

__all__ = ["log_softmax"]


def log_softmax(x, beta=1.0, axis=-1):
    """``(x - max) * beta - log(sum(exp((x - max) * beta)))`` along ``axis``.

    Parameters
    ----------
    x : ndarray
        float32 / float16, rank >= 1.
    beta : float
        Positive scale of the logits.
    axis : int

    Returns
    -------
    ndarray
        Same shape and dtype.
    """
    x = np.asarray(x)
    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    axis = cm.normalize_axis(axis, x.ndim)
    moved = np.ascontiguousarray(np.moveaxis(x, axis, -1))
    rows = moved.reshape(-1, moved.shape[-1]) if moved.size else moved.reshape(0, 1)
    beta = np.float32(beta)
    if x.dtype == np.float16:
        out = _log_softmax_half(rows, beta)
    else:
        out = np.empty(rows.shape, dtype=np.float32)
        _log_softmax_core(rows, beta, out)
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


def _log_softmax_half(rows, beta):
    diff = (rows - rows.max(axis=1, keepdims=True)).astype(np.float16)   # half subtraction
    scaled = diff.astype(np.float32) * beta                               # float32 product
    total = np.zeros(rows.shape[0], dtype=np.float16)
    for k in range(rows.shape[1]):
        total = (total.astype(np.float64) + np.exp(scaled[:, k].astype(np.float64)))\
            .astype(np.float16)
    log_sum = np.log(total.astype(np.float64)).astype(np.float16)
    return (scaled - log_sum.astype(np.float32)[:, None]).astype(np.float16)


@njit
def _log_softmax_core(rows, beta, out):
    n_rows, depth = rows.shape
    for r in range(n_rows):
        m = rows[r, 0]
        for i in range(1, depth):
            m = greater(m, rows[r, i])
        total = np.float32(0.0)
        for i in range(depth):
            e = np.exp(np.float64(np.float32((rows[r, i] - m) * beta)))
            total = np.float32(np.float64(total) + e)
        log_sum = np.float32(np.log(np.float64(total)))
        for i in range(depth):
            out[r, i] = np.float32((rows[r, i] - m) * beta) - log_sum
    return out
