"""Reference hybrid CONV_2D (numpy, padded input and one matmul per tap): the oracle for
:mod:`nnsim.kernels.hybrid_conv`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.hybrid_conv import symmetric_quantize


def hybrid_conv_2d(x, w, bias, *, w_scale, stride_h, stride_w, pad_top, pad_bottom, pad_left,
                   pad_right, dilation_h=1, dilation_w=1, fuse=0, packed_filter=None):
    x, w = np.asarray(x, np.float32), np.asarray(w)
    n, h, wd, cin = x.shape
    cout, kh, kw, _ = w.shape
    oh = cm.conv_out_size(h, kh, stride_h, dilation_h, pad_top, pad_bottom)
    ow = cm.conv_out_size(wd, kw, stride_w, dilation_w, pad_left, pad_right)
    out = np.empty((n, oh, ow, cout), np.float32)
    lo, hi = cm.float_clamp(fuse)
    b = np.zeros(cout, np.float32) if bias is None else np.asarray(bias, np.float32)
    for i in range(n):
        q, sf = symmetric_quantize(x[i])
        q = np.pad(q.reshape(h, wd, cin).astype(np.int64),
                   ((pad_top, pad_bottom), (pad_left, pad_right), (0, 0)))
        acc = np.zeros((oh, ow, cout), np.int64)
        for ky in range(kh):
            for kx in range(kw):
                y0, x0 = ky * dilation_h, kx * dilation_w
                tap = q[y0:y0 + (oh - 1) * stride_h + 1:stride_h,
                        x0:x0 + (ow - 1) * stride_w + 1:stride_w]
                acc += tap @ w[:, ky, kx, :].astype(np.int64).T
        factor = np.float32(sf * np.float32(w_scale))
        v = (acc.astype(np.float32) * factor).astype(np.float32) + b
        out[i] = np.clip(v, lo, hi)
    return out
