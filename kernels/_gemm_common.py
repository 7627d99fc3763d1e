"""Pieces shared by the GEMM cores (:mod:`nnsim.kernels.gemm`): tile sizes, source modes, the
padded input copy, the output pixels' row bases and im2col; byte-run copies and the
store of 16 requantized lanes, which the depthwise cores use too."""

from __future__ import annotations

import numpy as np

from nnsim.kernels._builtins import flat
from nnsim.kernels._jit import (MASKED_BYTES, SIMD_MODE, njit, vb_copy, vb_copy16, vi_load,
                                vi_splat, vi_store, vi_store8, vi_store8n, vi_xor)

_TILE = 64      # output channels per tile (4 vectors of 16 lanes)
#: Columns of 16 channels per float weight tile: 4 (a 64-channel tile, K rows of 64 floats) for
#: AVX-512's 4-column micro-kernel; 1 on AVX2, whose micro-kernels take one column at a time:
#: in 4-column tiles each pass read every fourth cache line of the weights, which cost 4-14 us
#: a 1x1 layer of MobileNet v1 0.25 float after the model's other layers (issue 13).
_FLOAT_COLS = 1 if SIMD_MODE == "avx2" else 4
_ROWS = 4       # output pixels per micro-kernel group
_BLOCK = 64     # output pixels per block (multiple of _ROWS)
#: output pixels per block of the float core when it has no im2col buffer to fill: whole passes
#: of its micro-kernels, 12 and 6 pixels on AVX2 (with 256, each block's last 4 pixels took
#: an 8-pixel pass of _fh1x8: float MobileNet's first layer alone, medians 107.4 -> 104.4 us,
#: benchmarks/README.md "Twenty-seventh session"), 8 and 4 otherwise
_FLOAT_BLOCK = 252 if SIMD_MODE == "avx2" else 256
_DIRECT, _IMPLICIT, _GATHER = 0, 1, 2   # where the patches come from (see gemm._Plan)


@njit(_nrt=False)
def _fill_padded(x, hp, wp, pad_top, pad_left, flip, padded, g_lo, g_hi):
    """Rows ``g_lo:g_hi`` of a padded NHWC copy (row ``g`` is padded row ``g % hp`` of image
    ``g // hp``): their interior is ``x`` (XOR ``flip`` per byte), their border is left as it
    is. Both arrays are byte views (``x`` [N, H, W, C * itemsize] C-contiguous, ``padded``
    1-D), so one compilation serves every element type."""
    _, h, w, row = x.shape
    xb = flat(x)
    size = w * row
    for g in range(g_lo, g_hi):
        y = g % hp - pad_top
        if 0 <= y < h:
            _copy_run(xb, (g // hp * h + y) * size, padded, (g * wp + pad_left) * row, size,
                      flip)


@njit(_nrt=False, inline="always", inner=True)
def _fill_part_rows(xin, fill, geo, out_h, out_w, padded, p_lo, p_hi):
    """When ``fill[5]`` is set: :func:`_fill_padded` of the padded rows that output pixels
    ``p_lo:p_hi`` read (``fill[:5]``: the padded height, width, top and left padding and the
    XOR byte), so that a part of a layer split by pixels copies the rows it reads itself
    (a halo row shared by two parts is written by both, with the same bytes), wherever its
    bounds are."""
    if fill[5] == 0 or p_hi <= p_lo:
        return
    kh, sh, dh, hp = geo[0], geo[2], geo[4], geo[6]
    b0, r0 = divmod(p_lo, out_h * out_w)
    b1, r1 = divmod(p_hi - 1, out_h * out_w)
    _fill_padded(xin, fill[0], fill[1], fill[2], fill[3], np.uint8(fill[4]), padded,
                 b0 * hp + r0 // out_w * sh, b1 * hp + r1 // out_w * sh + (kh - 1) * dh + 1)


@njit(_nrt=False, inner=True)
def _copy_run(src, s, dst, d, size, flip):
    """``dst[d:d + size] = src[s:s + size] ^ flip`` on uint8 arrays (not overlapping), 64
    bytes at a time, then (without masked byte stores) 16: a float first layer's right edge,
    223 rows of 24 bytes, took 11 us byte by byte on AVX2, more than its convolution."""
    i = 0
    if MASKED_BYTES:
        for i in range(0, size, 64):
            vb_copy(src, s + i, dst, d + i, size - i, flip)
        return
    word = np.int64(flip) * 16843009                     # flip in every byte
    m = vi_splat(word - (1 << 32) if word >= (1 << 31) else word)
    while i + 64 <= size:
        vi_store(vi_xor(vi_load(src, s + i), m), dst, d + i)
        i += 64
    while i + 16 <= size:
        vb_copy16(src, s + i, dst, d + i, flip)
        i += 16
    if i < size and size >= 16:   # the last 16 bytes again, overlapping (the same values)
        vb_copy16(src, s + size - 16, dst, d + size - 16, flip)
        return
    for j in range(i, size):   # fewer than 16 bytes in all
        dst[d + j] = src[s + j] ^ flip


@njit(_nrt=False, inner=True)
def _store8(r, out, o, count):
    """The low bytes of the first ``min(count, 16)`` lanes of ``r`` to ``out[o:]`` (masked:
    nothing past them is written)."""
    if count >= 16:
        vi_store8(r, out, o)
    else:
        vi_store8n(r, out, o, count)


def row_bases(geo, out_shape) -> np.ndarray:
    """int64: where the patch of each output pixel starts in the core's source (``geo``: the
    plan's geometry, ``out_shape``: [N, OH, OW, ...]), computed once with the plan: entry p for
    pixel p (the padded copy or the input itself); for im2col (``_GATHER``) entry j for row j of
    a block's patches. Then ``4 * _ROWS`` copies of the last entry: a micro-kernel reads the
    entries of whole groups of pixels past a block's last one (stores nothing for them), so
    they must point into the source (a block's last entries may be the next part's pixels,
    which another thread may be copying: read, never used). Computed in the GEMM cores a block
    at a time, the bases took 5% of the compile work of the shared models' first runs (numba's
    Python calls: 25.73 -> 24.44 M without them, AVX2; issue 13)."""
    stride_h, stride_w, hp, wp, cp, mode, seg = (int(geo[i]) for i in (2, 3, 6, 7, 8, 9, 11))
    n, out_h, out_w = (int(d) for d in out_shape[:3])
    if mode == _GATHER:
        table = np.arange(_BLOCK, dtype=np.int64) * seg
    elif mode == _DIRECT:
        table = np.arange(n * out_h * out_w, dtype=np.int64) * seg
    else:
        b = np.arange(n, dtype=np.int64)[:, None, None]
        oy = np.arange(out_h, dtype=np.int64)[None, :, None]
        ox = np.arange(out_w, dtype=np.int64)[None, None, :]
        table = (((b * hp + oy * stride_h) * wp + ox * stride_w) * cp).reshape(-1)
    last = table[-1] if table.size else 0   # (no pixels: a zero-sized batch)
    return np.concatenate([table, np.full(4 * _ROWS, last, np.int64)])


@njit(_nrt=False, inline="always", inner=True)
def _gather(xpad, geo, p0, n, out_h, out_w, cols):
    """im2col for a dilated-in-width window: patches of pixels p0.. as rows of ``kp``."""
    kh, kw, stride_h, stride_w, dil_h, dil_w = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5]
    hp, wp, cin, kp = geo[6], geo[7], geo[8], geo[11]
    b, rest = divmod(p0, out_h * out_w)
    oy, ox = divmod(rest, out_w)
    for j in range(n):
        d = j * kp
        for ky in range(kh):
            s = ((b * hp + oy * stride_h + ky * dil_h) * wp + ox * stride_w) * cin
            for kx in range(kw):
                for ci in range(cin):
                    cols[d] = xpad[s + kx * dil_w * cin + ci]
                    d += 1
        while d < (j + 1) * kp:
            cols[d] = 0
            d += 1
        ox += 1
        if ox == out_w:
            ox = 0
            oy += 1
            if oy == out_h:
                oy = 0
                b += 1
