"""Hybrid CONV_2D: float32 input and output, int8 per-tensor weights; numba fast path.

TFLite ``conv.cc`` ``EvalHybrid`` (every kernel type, the reference one included, runs
``optimized_ops::HybridConv``), for each batch ``b``::

    r = max(|min(x_b)|, |max(x_b)|)                      # float32
    sf = r / 127;  q = clamp(round(x_b * (127 / r)), -127, 127)   (r == 0: q = 0, sf = 1)
    sf_b = float32(sf * w_scale)
    acc = sum over in-image taps of w * q                  # int32 (padding taps are 0)
    out = clamp(float32(acc) * sf_b + bias[c], act_min, act_max)       # float32

The symmetric input quantization is ``tensor_utils::SymmetricQuantizeFloats``.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import empty, greater, lesser
from nnsim.kernels._jit import njit

__all__ = ["hybrid_conv_2d", "symmetric_quantize", "pack_hybrid_filter"]


def pack_hybrid_filter(w):
    """``[Cout, KH, KW, Cin]`` int8 -> ``[KH, KW, Cin, Cout]`` int32, contiguous."""
    return np.ascontiguousarray(np.transpose(np.asarray(w), (1, 2, 3, 0)).astype(np.int32))


def symmetric_quantize(values):
    """``(int8 values, float32 scaling factor)`` of TFLite ``SymmetricQuantizeFloats``."""
    v = np.asarray(values, dtype=np.float32).reshape(-1)
    if v.size == 0:
        return np.zeros(0, np.int8), np.float32(1)
    r = np.float32(max(abs(v.min()), abs(v.max())))
    if r == 0:
        return np.zeros(v.size, np.int8), np.float32(1)
    inv = np.float32(np.float32(127) / r)
    scaled = (v * inv).astype(np.float64)
    q = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
    return np.clip(q, -127, 127).astype(np.int8), np.float32(r / np.float32(127))


def hybrid_conv_2d(x, w, bias, *, w_scale, stride_h, stride_w, pad_top, pad_bottom, pad_left,
                   pad_right, dilation_h=1, dilation_w=1, fuse=0, packed_filter=None):
    """Hybrid 2-D convolution, NHWC.

    Parameters
    ----------
    x : ndarray [N, H, W, Cin] float32
    w : ndarray [Cout, KH, KW, Cin] int8 (symmetric, per-tensor ``w_scale``)
    bias : ndarray [Cout] float32 or None
    w_scale : float
    stride_h, ..., fuse
        As :func:`nnsim.kernels.conv.conv_2d`.
    packed_filter : optional, ``pack_hybrid_filter(w)`` (lets a caller pack constant weights once)

    Returns
    -------
    ndarray [N, OH, OW, Cout] float32
    """
    x, w = np.asarray(x), np.asarray(w)
    cm.check_rank("input", x, 4)
    cm.check_rank("filter", w, 4)
    cm.check_dtype("input", x, (np.float32,))
    cm.check_dtype("filter", w, (np.int8,))
    pads = (pad_top, pad_bottom, pad_left, pad_right)
    cm.check_conv_geometry(stride_h, stride_w, dilation_h, dilation_w, pads)
    cout, kh, kw, cin = w.shape
    if cin != x.shape[3]:
        raise ValueError(f"filter depth {cin} != input depth {x.shape[3]}")
    oh = cm.conv_out_size(x.shape[1], kh, stride_h, dilation_h, pad_top, pad_bottom)
    ow = cm.conv_out_size(x.shape[2], kw, stride_w, dilation_w, pad_left, pad_right)
    n = x.shape[0]
    xq = np.empty(x.shape, np.int8)
    factors = np.empty(n, np.float32)
    for b in range(n):
        q, sf = symmetric_quantize(x[b])
        xq[b] = q.reshape(x.shape[1:])
        factors[b] = np.float32(sf * np.float32(w_scale))
    wt = pack_hybrid_filter(w) if packed_filter is None else packed_filter
    lo, hi = cm.float_clamp(fuse)
    out = np.empty((n, oh, ow, cout), np.float32)
    _hybrid_conv_core(xq, wt, factors, cm.bias_float32(bias, cout), lo, hi, stride_h, stride_w,
                      pad_top, pad_left, dilation_h, dilation_w, out)
    return out


@njit
def _hybrid_conv_core(x, wt, factors, bias, lo, hi, stride_h, stride_w, pad_top, pad_left,
                      dil_h, dil_w, out):
    batches, in_h, in_w, cin = x.shape
    kh, kw, _, cout = wt.shape
    _, out_h, out_w, _ = out.shape
    acc = empty(cout, np.int32)
    for b in range(batches):
        sf = factors[b]
        for oy in range(out_h):
            for ox in range(out_w):
                acc[:] = 0
                for ky in range(kh):
                    iy = oy * stride_h - pad_top + ky * dil_h
                    if iy < 0 or iy >= in_h:
                        continue
                    for kx in range(kw):
                        ix = ox * stride_w - pad_left + kx * dil_w
                        if ix < 0 or ix >= in_w:
                            continue
                        for ci in range(cin):
                            xv = np.int32(x[b, iy, ix, ci])
                            for c in range(cout):
                                acc[c] += xv * wt[ky, kx, ci, c]
                for c in range(cout):
                    v = np.float32(np.float32(acc[c]) * sf) + bias[c]
                    out[b, oy, ox, c] = lesser(greater(v, lo), hi)
    return out
