"""L2_POOL_2D (NHWC), float32 / float16; numba fast path.

TFLite ``reference_ops::L2Pool`` (NNAPI calls ``optimized_ops::L2Pool``): per window, the
float32 sum of squares of the in-image taps in (ky, kx) order, ``sqrt(sum / count)`` with
``count`` the number of in-image taps, then the fused activation clamp. Float16 computes in
float32.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import njit

__all__ = ["l2_pool_2d"]


def l2_pool_2d(x, *, filter_h, filter_w, stride_h, stride_w, pad_top, pad_bottom, pad_left,
               pad_right, fuse=0):
    """L2 pooling, NHWC.

    Parameters
    ----------
    x : ndarray [N, H, W, C]
        float32 / float16.
    filter_h, filter_w, stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right : int
        Window geometry with explicit padding.
    fuse : int
        NNAPI fuse code.

    Returns
    -------
    ndarray [N, OH, OW, C], dtype of ``x``.
    """
    x = np.asarray(x)
    cm.check_rank("input", x, 4)
    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    pads = (pad_top, pad_bottom, pad_left, pad_right)
    cm.check_conv_geometry(stride_h, stride_w, 1, 1, pads)
    if filter_h < 1 or filter_w < 1:
        raise ValueError("filter size must be >= 1")
    oh = cm.conv_out_size(x.shape[1], filter_h, stride_h, 1, pad_top, pad_bottom)
    ow = cm.conv_out_size(x.shape[2], filter_w, stride_w, 1, pad_left, pad_right)
    x32, dtype = cm.to_float32(x)
    lo, hi = cm.float_clamp(fuse)
    out = np.empty((x.shape[0], oh, ow, x.shape[3]), dtype=np.float32)
    _l2_pool_core(x32, filter_h, filter_w, stride_h, stride_w, pad_top, pad_left, lo, hi, out)
    return out.astype(dtype, copy=False)


@njit(error_model="numpy")
def _l2_pool_core(x, fh, fw, sh, sw, pad_top, pad_left, lo, hi, out):
    n, h, w, c = x.shape
    _, oh, ow, _ = out.shape
    for b in range(n):
        for oy in range(oh):
            y0 = oy * sh - pad_top
            for ox in range(ow):
                x0 = ox * sw - pad_left
                for ch in range(c):
                    total = np.float32(0.0)
                    count = 0
                    for ky in range(greater(0, -y0), lesser(fh, h - y0)):
                        for kx in range(greater(0, -x0), lesser(fw, w - x0)):
                            v = x[b, y0 + ky, x0 + kx, ch]
                            total += v * v
                            count += 1
                    r = np.float32(np.sqrt(total / np.float32(count)))
                    out[b, oy, ox, ch] = lesser(greater(r, lo), hi)
    return out
