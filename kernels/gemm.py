"""Register-tiled GEMM cores for CONV_2D (and 1x1 convolutions / fully connected layers).

A convolution is ``out[p, c] = sum_k patch[p, k] * w[k, c]`` over output pixels ``p`` (rows of
the output viewed as ``[N * OH * OW, Cout]``) and taps ``k`` in TFLite's (ky, kx, ci) order.
Patches are either input rows (1x1, stride 1, unpadded: no copy) or gathered per block of
pixels (im2col). Micro-kernels compute 4 pixels x 64 channels in 16-lane vector registers
(:mod:`nnsim.kernels._jit` SIMD ops; 6 pixels x 16 channels on widened patches on AVX2,
:mod:`nnsim.kernels._gemm_avx2`), then the tile is requantized (or biased and clamped)
into the output. With more than one thread (:mod:`nnsim.kernels.threads`) a layer is split
into ranges of output pixels or of 64-channel tiles.

Integer path (uint8 / int8, exact modulo 2**32 like TFLite's int32 accumulator). With
``xu = x`` (uint8) or ``x + 128`` (int8) and ``ws = w`` (int8) or ``w - 128`` (uint8), i.e.
``x = xu - cx`` and ``w = ws + cw``::

    sum_k (x - x_zp)(w - w_zp) = D + (cw - w_zp) * (SX - K * (cx + x_zp)) - (cx + x_zp) * SW

where ``D = sum xu * ws`` (``vpdpbusd``: uint8 x int8, 4 taps per lane), ``SX = sum_k xu`` per
pixel, ``SW = sum_k ws`` per channel and ``K`` the number of taps. Padding taps are gathered as
``x = x_zp`` (``xu = cx + x_zp``), whose terms cancel: the same as skipping them. The per
channel term is folded into the bias once (:class:`QuantGemmPlan`); ``SX`` is only computed when
``cw != w_zp`` (uint8 filters whose zero point is not 128).

Float path: ``acc = 0; acc = acc + x[k] * w[k]`` in k order, one product at a time (fused
multiply-add when the CPU has FMA),
then ``+ bias`` and the clamp: TFLite's reference order, lane by lane.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

from nnsim.kernels import _gemm_avx2, _gemm_float, _gemm_int, _gemv
from nnsim.kernels import threads as _threads
from nnsim.kernels._gemm_common import (_BLOCK, _DIRECT, _FLOAT_COLS, _GATHER, _IMPLICIT,
                                        _ROWS, _TILE, _fill_padded, row_bases)
from nnsim.kernels._builtins import flat
from nnsim.kernels._claims import Claimed
from nnsim.kernels._common import (aligned_copy, aligned_full, aligned_zeros, compile_ahead,
                                   in_turn)
from nnsim.kernels._jit import JIT_ENABLED, QP_ROWS, SIMD_MODE, njit
from nnsim.kernels._gemm_float import _float_conv_part, _float_conv_step
from nnsim.kernels._gemv import _float_gemv, _float_gemv_step, _quant_gemv, _quant_gemv_step
from nnsim.kernels._gemm_int import _quant_conv_part, _quant_conv_step
from nnsim.kernels._gemm_int import _requantize_core  # noqa: F401 (re-export)

__all__ = ["QuantGemmPlan", "FloatGemmPlan", "InPlaceFloatPlan", "in_place_float_plan",
           "PackedFilter", "pack_weights", "requant_params", "shift_free", "compile_micro_kernels",
           "compile_gemv_micro_kernels",
           "gemv_runs", "gemm_channels", "float_window"]


# --- micro-kernels compiled on their own (cold start) ---------------------------------------

def gemv_runs(is_float: bool) -> bool:
    """Whether a 1x1 convolution of one output pixel (a classifier), float or 8-bit, runs the
    matrix-vector loops of :mod:`nnsim.kernels._gemv` rather than the GEMM core and its
    micro-kernels: where those loops beat the micro-kernels' one-pixel pass clearly, float on
    AVX-512 and AVX2, integer on AVX2 (MobileNet v1's 1024 -> 1001 152 against 359 us). An
    integer one on AVX-512 VNNI takes ``_mk4``'s one-pixel pass (84 -> 101 us, v2's 1280 ->
    1001 102 -> 116 us: 0.3% of the models), so no integer GEMV is compiled there, 1.1 s of
    the shared models' cold start (issue 13; benchmarks/README.md, "Twenty-second
    session"). The warm-up scans (``nnsim.ops.executor``, ``nnsim.tflite.warm_up``) read the
    same rule for the micro-kernels a plan needs."""
    return SIMD_MODE == "avx2" or (SIMD_MODE == "avx512vnni" and is_float)


def gemm_channels(out_shape, is_float: bool) -> int | None:
    """The channel count whose micro-kernels a convolution of output ``out_shape`` (NHWC, or a
    FULLY_CONNECTED's ``[batch, units]``) needs, for the warm-up scans; None when the shape is
    unknown or the matrix-vector loops run it (one output pixel, :func:`gemv_runs`)."""
    dims = tuple(int(d) for d in out_shape)
    if len(dims) not in (2, 4) or dims[-1] <= 0:
        return None
    return None if all(d == 1 for d in dims[:-1]) and gemv_runs(is_float) else dims[-1]


def compile_micro_kernels(couts=()) -> int:
    """Compile (or load from numba's cache) the micro-kernels of the integer GEMM core (the
    core calls them through their addresses, :func:`nnsim.kernels._gemm_int.micro_kernels`):
    the whole-tile one, which nearly every quantized model calls and the longest compilation
    of all (``_mk4`` on AVX-512, ``_cols_pairs`` on AVX2), then the ones convolutions of
    ``couts`` output channels call besides (``_mk2``, ``_mk1``). :mod:`nnsim.tools.warmup`'s
    child does this first, while the first invoke compiles what its first layers need: the
    invoke, binding its layers, then loads them from the cache. (Left to the child's
    operations, the COCO SSD's ``_mk1`` came with one the child reached last, and the invoke
    waited 1.3 s for it at its end.) One the invoke is compiling meanwhile (claimed,
    :mod:`nnsim.kernels._claims`) is skipped. Returns how many were compiled or loaded. (The
    float core's come last: :func:`compile_float_micro_kernels`.)"""
    if not JIT_ENABLED:
        return 0
    return _gemm_int.compile_micro_kernels([_TILE, *couts])


def compile_gemv_micro_kernels() -> int:
    """Compile (or load) the integer matrix-vector loops' micro-kernels
    (:func:`nnsim.kernels._gemv.micro_kernels`) when those loops run here
    (:func:`gemv_runs`): :mod:`nnsim.tools.warmup`'s child does this first when the plan has
    a quantized layer of one output pixel (a classifier, a fully connected layer), while the
    invoke compiles the core, which binds them after it. Claimed by the invoke, they are
    skipped. Returns how many sets were compiled or loaded (0 or 1)."""
    if not JIT_ENABLED or not gemv_runs(False):
        return 0
    return _gemv.compile_micro_kernels()


def compile_padded_copy() -> int:
    """Compile (or load) :func:`nnsim.kernels._gemm_common._fill_padded`: the padded copy of
    its input that a convolution with a window or a stride makes before its core, on one
    thread (the first layer of nearly every CNN, right after its micro-kernel).
    :mod:`nnsim.tools.warmup`'s child does this before anything else when the plan has such
    a convolution, so that the invoke loads it there instead of compiling it between its
    first micro-kernel and its core. One compilation serves every element type (byte
    views); claimed by the invoke, it is skipped. Returns how many were compiled or loaded
    (0 or 1)."""
    if not JIT_ENABLED:
        return 0
    try:   # the types of the call QuantGemmPlan / FloatGemmPlan bind, on nothing (no rows)
        _fill_padded(np.zeros((1, 1, 1, 1), np.uint8), 1, 1, 0, 0, np.uint8(0),
                     np.zeros(1, np.uint8), 0, 0)
    except Claimed:
        return 0
    return 1


def float_window(filter_shape) -> tuple:
    """``(rows, taps a row)`` of the patches the float GEMM core reads for a convolution of
    this filter (``[cout, kh, kw, cin]``; a FULLY_CONNECTED's ``[units, inputs]`` is one row):
    the window that, with the channel count, picks its micro-kernels
    (:func:`nnsim.kernels._gemm_float.micro_kernels`). A width dilation, which makes each
    patch one row (im2col), is not seen here: for such a layer the warm-up compiles the
    micro-kernels of its undilated window, and the layer its own."""
    dims = tuple(int(d) for d in filter_shape)
    if len(dims) == 2:
        return (1, dims[1])
    if len(dims) != 4:
        return ()
    return (dims[1], dims[2] * dims[3])


def compile_float_micro_kernels(convs) -> int:
    """Compile (or load) the float GEMM core's micro-kernels that float convolutions of
    ``convs``, pairs ``(output channels, window)`` (:func:`float_window`), call
    (:func:`nnsim.kernels._gemm_float.micro_kernels`; a layer compiles them when it is first
    bound): :mod:`nnsim.tools.warmup`'s child does this after its operations, so that the
    invoke's later layers load them. Not first: that made the child late with the model's
    other kernels. One the invoke is compiling meanwhile (claimed) is skipped, with the rest
    of that pair's. Returns how many pairs were done."""
    if not JIT_ENABLED:
        return 0
    done = 0
    for cout, window in sorted(set(convs)):
        try:
            _gemm_float.micro_kernels(cout, window)
        except Claimed:
            continue
        done += 1
    return done


# --- packing (once per constant filter) --------------------------------------------------------

def _tiles(cout, per=4):
    """``[(c0, columns)]``: tiles of up to ``per`` columns of 16 channels covering ``cout``."""
    cols = -(-cout // 16)
    return [(16 * c, min(per, cols - c)) for c in range(0, cols, per)]


class PackedFilter(NamedTuple):
    """A filter in the layout of the micro-kernels (see :func:`pack_weights`)."""

    data: np.ndarray          # int8 (quantized) or float32, 1-D
    sums: np.ndarray | None   # SW: int32 per output channel (quantized only)
    shape: tuple              # (Cout, K)
    dtype: np.dtype           # the filter's dtype


def pack_weights(w2d):
    """``w2d [Cout, K]`` (taps in (ky, kx, ci) order) -> :class:`PackedFilter`.

    uint8/int8: per tile of ``n`` columns of 16 channels, ``[K/4 groups][16 n][4 taps]`` bytes
    of ``ws`` (K padded with zeros to a multiple of 4), plus ``SW``; float: ``[K][16 n]``
    float32 per tile of ``n <= _FLOAT_COLS`` columns (4, or 1 on AVX2: its micro-kernels read
    one column at a time, which then streams by in order). Channels are padded with zeros to
    a multiple of 16. A tile starts at channel ``c0`` at element ``c0 * K`` in both float
    layouts."""
    w2d = np.asarray(w2d)
    if w2d.dtype.kind == "f":
        return PackedFilter(_pack_float(w2d), None, w2d.shape, w2d.dtype)
    data, sums = _pack_quant(w2d)
    return PackedFilter(data, sums, w2d.shape, w2d.dtype)


def _pack_quant(w2d):
    cout, k = w2d.shape
    ws = w2d.astype(np.int16) - (128 if w2d.dtype == np.uint8 else 0)
    kp, cp = -(-k // 4) * 4, -(-cout // 16) * 16
    full = np.zeros((cp, kp), np.int8)
    full[:cout, :k] = ws
    parts = [full[c0:c0 + 16 * n].reshape(16 * n, kp // 4, 4).transpose(1, 0, 2).ravel()
             for c0, n in _tiles(cout)]
    return aligned_copy(np.concatenate(parts)), ws.sum(axis=1, dtype=np.int64).astype(np.int32)


def _pack_float(w2d):
    w2d = w2d.astype(np.float32)
    cout, k = w2d.shape
    full = np.zeros((-(-cout // 16) * 16, k), np.float32)
    full[:cout] = w2d
    parts = [np.ascontiguousarray(full[c0:c0 + 16 * n].T).ravel()
             for c0, n in _tiles(cout, _FLOAT_COLS)]
    return aligned_copy(np.concatenate(parts))


def _check_packed(packed, w):
    kind = "f" if w.dtype.kind == "f" else "q"
    if packed.shape != (w.shape[0], w[0].size) or (packed.sums is None) != (kind == "f") \
            or (kind == "q" and packed.dtype != w.dtype):
        raise ValueError(f"packed filter {packed.shape} {packed.dtype} does not match the filter "
                         f"{w.shape} {w.dtype}")


def requant_params(bias, mults, shifts):
    """The ``qp`` table of :func:`nnsim.kernels._jit.vi_requant` for per-channel ``bias``
    (wrapped to int32), multipliers and shifts: 13 rows of ``cpad`` int32 (Cout rounded up to
    16), channel ``c`` in column ``c``:

    * 0-3: bias, m, m of the odd channel moved to the even one, max(shift, 0);
    * 4-6 (two-step form): r = max(-shift, 0), (1 << r) - 1, ((1 << r) - 1) >> 1;
    * 7-12 (one-division form, 64-bit values, each in the column pair of the even channel of
      its pair): C = 2**30 + 2**(30 + r) (2**30 when r = 0), D = 2**31 (0 when r = 0) and
      K = 31 + r of the even channels, then of the odd ones.

    Both forms compute TFLite's MultiplyByQuantizedMultiplier exactly: with p = x * m,
    SaturatingRoundingDoublingHighMul is s = floor((p + 2**30) / 2**31) (m >= 0) and
    RoundingDivideByPOT(s, r) is floor((s + 2**(r-1) - (s < 0)) / 2**r); nested floors of
    integers merge into floor((p + C - (s < 0) * D) / 2**K), and s < 0 exactly when
    p < -2**30. |p| < 2**62, so no 64-bit sum overflows. A shift below -31 (which
    ``quantize_multiplier`` never gives) raises ValueError."""
    cout = len(mults)
    cpad = -(-cout // 16) * 16 + 16
    m = np.zeros(cpad, np.int64)
    m[:cout] = mults
    right = np.zeros(cpad, np.int64)
    right[:cout] = np.maximum(-np.asarray(shifts, np.int64), 0)
    if right.max(initial=0) > 31:
        raise ValueError(f"requantization shift {-int(right.max())} is below -31")
    qp = np.zeros((QP_ROWS, cpad), np.int64)
    qp[0, :cout] = bias
    qp[1] = m
    qp[2, 0:-1:2] = m[1::2]
    qp[3, :cout] = np.maximum(np.asarray(shifts, np.int64), 0)
    qp[4] = right
    qp[5] = (np.int64(1) << right) - 1
    qp[6] = qp[5] >> 1
    wide = np.stack([np.where(right > 0, 2**30 + (np.int64(1) << (30 + right)), 2**30),
                     np.where(right > 0, 2**31, 0), 31 + right])
    for row, values in zip((7, 9, 11), wide):   # even channels, then odd ones
        qp[row] = np.ascontiguousarray(values[0::2]).view(np.int32)
        qp[row + 1] = np.ascontiguousarray(values[1::2]).view(np.int32)
    return aligned_copy(((qp[:, :cpad - 16] + 2**31) % 2**32 - 2**31).astype(np.int32).ravel())


def shift_free(qp, tables=1):
    """``qp`` (:func:`requant_params`, or ``tables`` of them concatenated, all of one size) as
    a uint32 view when no channel shifts left (every multiplier below 1, as in every layer of
    the shared models), else itself. The requantization intrinsics compile without the left
    shift (``vpsllvd``, a no-op for such a table) when they read a uint32 table, and numba
    compiles the cores that take the table once per table type: most models' layers use the
    variant without it, and a layer whose multipliers reach 1 compiles (lazily) the other.
    The bits are the same either way (the JIT-off fallback reads them as int32)."""
    left = qp.reshape(tables, QP_ROWS, -1)[:, 3]
    return qp if left.any() else qp.view(np.uint32)


# --- plans (everything computed once per layer) -----------------------------------------------

class _Plan:
    """Geometry shared by the quantized and float plans; ``run(x, out)`` computes a layer.

    The micro-kernels read the patch of an output pixel as ``kh`` runs of ``seg`` contiguous
    elements, ``dy`` apart, from a row base offset:

    * ``direct`` (1x1, stride 1, unpadded): the input rows themselves;
    * ``implicit`` (any other undilated-in-width geometry): runs of the padded copy of the input
      (``padded``, refreshed at every run; the border keeps the padding value); an integer run
      that would not be whole groups of 4 bytes is widened to ``kw_p`` pixels, the extra taps
      with zero weights;
    * ``gather`` (dilation in width): patches copied into ``cols`` (im2col) from the padded
      copy, ``kp`` elements per pixel.
    """

    def __init__(self, x_shape, out_shape, kh, kw, cout, geometry, dtype, fill, quad,
                 in_place=False):
        stride_h, stride_w, pad_top, pad_left, dil_h, dil_w = (int(g) for g in geometry)
        self.x_shape = n, h, w, cin = tuple(int(d) for d in x_shape)
        self.out_shape = tuple(int(d) for d in out_shape)
        self.out_size = int(np.prod(self.out_shape[:3]))   # output pixels
        self.k = kh * kw * cin
        self.cout = cout
        self.kw_p = kw
        align = 4 if quad else 1
        if (kh == 1 and kw == 1 and stride_h == 1 and stride_w == 1 and pad_top == 0
                and pad_left == 0 and cin % align == 0
                and self.out_shape[1:3] == self.x_shape[1:3]):
            self.mode = _DIRECT
        elif dil_w == 1:
            self.mode = _IMPLICIT
            while (self.kw_p * cin) % align:   # taps past the window, with zero weights
                self.kw_p += 1
        else:
            self.mode = _GATHER
        self.kp = -(-self.k // align) * align if self.mode == _GATHER else kh * self.kw_p * cin
        self.inner = None
        self.padded = aligned_zeros(64, dtype)
        hp = wp = 0
        # in place (InPlaceFloatPlan): windows read x itself, rows of w pixels
        self.in_place = in_place and self.mode == _IMPLICIT and pad_top == 0 and pad_left == 0
        if self.in_place:
            hp, wp = h, w
        elif self.mode != _DIRECT:
            hp = max(h + pad_top, (self.out_shape[1] - 1) * stride_h + (kh - 1) * dil_h + 1)
            wp = max(w + pad_left, (self.out_shape[2] - 1) * stride_w + (kw - 1) * dil_w + 1)
            slack = (64 + 3 * cin * np.dtype(dtype).itemsize) // np.dtype(dtype).itemsize
            self.padded = aligned_full(n * hp * wp * cin + slack, fill, dtype)
            view = self.padded[:-slack].reshape(n, hp, wp, cin)
            self.inner = view[:, pad_top:pad_top + h, pad_left:pad_left + w]
        if self.mode == _IMPLICIT:
            runs = (kh, self.kw_p * cin, dil_h * wp * cin)
        else:
            runs = (1, self.kp, 0)
        self.geo = np.array([kh, kw, stride_h, stride_w, dil_h, dil_w, hp, wp, cin, self.mode,
                             *runs], np.int64)
        self.cols = aligned_zeros(_BLOCK * self.kp + 64 if self.mode == _GATHER else 64, dtype)
        self.row_bases = row_bases(self.geo, self.out_shape)   # read by the cores' parts alike
        self.pads = np.array([pad_top, pad_left], np.int64)
        self._split = {}   # thread count -> (scratch, its split: see _parallel)
        # a 1x1 filter on one pixel (a classifier): the matrix-vector loops of _gemv, or not
        self.gemv = (self.mode == _DIRECT and self.out_shape[:3] == (1, 1, 1)
                     and gemv_runs(dtype == np.float32))

    def _parallel(self, scratch):
        """For the current thread count (:mod:`nnsim.kernels.threads`): ``(parts, per-part
        copies of each scratch array, whether each part copies the padded rows it reads)``, or
        None to run serially (1 thread, or too little work). Parts are ranges of whole
        4-pixel groups (all channels), or of whole 64-channel tiles (all pixels) when those
        spread the work clearly more evenly (:func:`nnsim.kernels.threads.rows_or_channels`)."""
        count = _threads.get_num_threads()
        if count <= 1:
            return None
        # kept per thread count, with the scratch arrays it copied: other arrays, new copies
        made = self._split.get(count)
        if made is None or len(made[0]) != len(scratch) or any(
                a is not b for a, b in zip(made[0], scratch)):
            made = self._split[count] = (tuple(scratch), self._make_split(count, scratch))
        return made[1]

    def _make_split(self, count, scratch):
        pixels = self.out_size
        if pixels * self.cout * self.k < _threads.MIN_PARALLEL_WORK:
            return None
        by_pixels = [(lo * _ROWS, min(hi * _ROWS, pixels), 0, self.cout)
                     for lo, hi in _threads.split(-(-pixels // _ROWS), count)]
        by_channels = [(0, pixels, lo * _TILE, min(hi * _TILE, self.cout))
                       for lo, hi in _threads.split(-(-self.cout // _TILE), count)]
        parts = _threads.rows_or_channels(by_pixels, by_channels, _split_cost)
        if len(parts) < 2:
            return None
        # a part of the pixels copies the padded rows it reads itself (_fill_part_rows): the
        # rows are then in the cache of the core that reads them (copied by one thread, read
        # by the other, MobileNet v2's first layer took 34 us more, benchmarks/README.md
        # "Sixth session")
        copies = parts is by_pixels and self.mode != _DIRECT and not self.in_place
        return (np.array(parts, np.int64),
                tuple(_threads.per_part(len(parts), a) for a in scratch), copies)

    def _bind_core(self, serial, step, x, xb, flip, args, scratch):
        """The bound call of ``serial`` (every pixel and channel) or, with threads, of
        ``step`` in parts on ``x`` or (windows) on the padded copy, which ``xb`` (the bytes of
        ``x``, int8 XOR ``flip`` to uint8) refreshes: before the core, or in each part."""
        split = self._parallel(scratch)
        direct = self.mode == _DIRECT or self.in_place   # reads x itself
        src = x.reshape(-1) if direct else self.padded
        geo = [int(g) for g in (self.geo[6], self.geo[7], *self.pads)]
        if split is None:   # every pixel and channel (no wrapper: one compilation fewer)
            call = partial(serial, src, *args, *scratch, 0, self.out_size, 0, self.cout)
        else:
            copies = split[2]
            fill = np.array([0] * 6 if direct else geo + [int(flip), int(copies)], np.int64)
            extra = () if serial is _quant_conv_part else (self.padded.view(np.uint8),)
            call = _threads.in_parts(step, (src, *args, *split[1], split[0],
                                            _NO_INPUT if direct else xb, fill, *extra), split[0],
                                     units=(_ROWS, _TILE))
            if copies:
                return call
        if direct:
            return call
        hp = int(self.geo[6])
        return in_turn(partial(_fill_padded, xb, *geo, np.uint8(flip), self.padded.view(np.uint8),
                               0, self.x_shape[0] * hp), call)

    def _weights(self, w):
        """The filter as the [Cout, K] matrix of the micro-kernels (window widened)."""
        if self.kw_p != w.shape[2]:   # extra taps: ws = 0 (uint8 128 is ws 0)
            pad = np.full(w.shape[:2] + (self.kw_p - w.shape[2], w.shape[3]),
                          128 if w.dtype == np.uint8 else 0, w.dtype)
            w = np.concatenate([w, pad], axis=2)
        return w.reshape(w.shape[0], -1)


class QuantGemmPlan(_Plan):
    """A quantized convolution's constants: packed filter, folded bias, multipliers, clamp.

    ``x_dtype``: uint8 or int8 (``w`` [Cout, KH, KW, Cin] uint8 or int8); ``mults``/``shifts``:
    int32 per channel; ``geometry``: (stride_h, stride_w, pad_top, pad_left, dil_h, dil_w);
    ``out_shape``: [N, OH, OW, Cout], computed by the caller from the full padding.
    """

    def __init__(self, x_shape, out_shape, x_dtype, in_zp, w, w_zp, bias, mults, shifts, out_zp,
                 lo, hi, geometry, packed=None):
        cout, kh, kw, cin = w.shape
        cx = 128 if np.dtype(x_dtype) == np.int8 else 0
        cw = 128 if w.dtype == np.uint8 else 0
        fill = cx + int(in_zp)                     # xu of a padding tap (x = x_zp)
        super().__init__(x_shape, out_shape, kh, kw, cout, geometry, np.uint8, fill, True)
        if packed is None or self.kw_p != kw:
            packed = pack_weights(self._weights(w))
        else:
            _check_packed(packed, w)
        k = self.k
        bias = np.zeros(cout, np.int64) if bias is None else bias.astype(np.int64)
        self.wp = packed.data
        self.flip = bool(cx)
        direct = self.mode == _DIRECT
        if SIMD_MODE == "avx2" and cx and direct:   # the AVX2 kernels sum x * ws, not xu * ws
            bias = bias + 128 * packed.sums.astype(np.int64)
        self.qp = shift_free(requant_params(bias - fill * packed.sums.astype(np.int64), mults,
                                            shifts))
        self.prm = np.array([k, cw - int(w_zp), k * fill, int(out_zp), int(lo), int(hi),
                             -(-cout // 16) * 16, 1 if cx and direct else 0], np.int64)
        self.sx = np.zeros(_BLOCK, np.int64)
        self.rb = np.zeros(_BLOCK + 4 * _ROWS, np.int64)   # (the GEMV's scratch)
        self.scratch = _gemm_int.scratch_arrays(self.geo)   # the core allocates nothing
        # the filter as the convolution core reads it: on AVX2 in int16 pairs (_gemm_avx2)
        self.wpk = (_gemm_avx2.widen_pairs(self.wp, cout)
                    if SIMD_MODE == "avx2" and not self.gemv else self.wp)
        self.mks = None   # the micro-kernels' addresses (_gemm_int.micro_kernels), once bound

    def run(self, x, out):
        """``out [N, OH, OW, Cout]`` (uint8/int8) = the convolution of ``x`` (same dtype as
        given to the plan, C-contiguous)."""
        self.bind(x, out)()
        return out

    def bind(self, x, out):
        """A function of no arguments computing ``out`` from the current contents of ``x``
        (both arrays fixed: an interpreter's tensor buffers), with every view made once."""
        xb = x.view(np.uint8)
        if self.gemv:   # (the micro-kernels' addresses after the core, as below)
            mks = np.zeros(2, np.int64) if self.mks is None else self.mks
            args = (xb.reshape(-1), self.geo, self.prm, self.wp, self.qp,
                    out.view(np.uint8).reshape(-1), mks)
            split = self._parallel((self.rb, self.sx))
            if split is None:
                call = partial(_quant_gemv, *args, self.rb, self.sx, 0, self.cout)
            else:
                call = _threads.in_parts(_quant_gemv_step, (*args, *split[1], split[0]),
                                         split[0], units=(_ROWS, _TILE))
            if self.mks is None:
                compile_ahead(call)
                mks[:] = _gemv.micro_kernels(self.qp.dtype)
                self.mks = mks
            return call
        # the micro-kernels' addresses, compiled when first bound (by the invoke that needs
        # them), after the core: a compiling child forked at the invoke's first compilation
        # (nnsim.tools.warmup) compiles them meanwhile (micro-kernels first, ad01 compiled its
        # _mk4 and then the core while the child had only _mk1 to do)
        mks = np.zeros(3, np.int64) if self.mks is None else self.mks
        args = (self.geo, self.row_bases, self.prm, self.wpk, self.qp, mks,
                out.view(np.uint8).reshape(-1, self.cout), out.shape[1], out.shape[2])
        call = self._bind_core(_quant_conv_part, _quant_conv_step, xb, xb,
                               128 if self.flip else 0, args,
                               (self.cols, self.sx, *self.scratch))
        if self.mks is None:   # (addresses filled in before the call can run)
            compile_ahead(call)
            mks[:] = _gemm_int.micro_kernels(self.cout, self.qp.dtype)
            self.mks = mks
        return call


class FloatGemmPlan(_Plan):
    """A float32 convolution's constants: packed filter, bias, clamp."""

    def __init__(self, x_shape, out_shape, w, bias, lo, hi, geometry, packed=None,
                 in_place=False):
        cout, kh, kw, _ = w.shape
        super().__init__(x_shape, out_shape, kh, kw, cout, geometry, np.float32, 0.0, False,
                         in_place)
        packed = pack_weights(w.reshape(cout, -1)) if packed is None else packed
        _check_packed(packed, w)
        self.wp = packed.data
        cpad = -(-cout // 16) * 16
        self.bias = aligned_zeros(cpad, np.float32)
        if bias is not None:
            self.bias[:cout] = bias
        self.clamp = np.array([lo, hi], np.float32)
        self.scratch = np.zeros(16, np.float32)   # partial stores (the core allocates nothing)
        self.mks = None   # the micro-kernels' addresses (_gemm_float.micro_kernels), once bound

    def run(self, x, out):
        self.bind(x, out)()
        return out

    def bind(self, x, out):
        """As :meth:`QuantGemmPlan.bind`."""
        if self.gemv:
            args = (x.reshape(-1), self.geo, self.wp, self.bias, self.clamp, out.reshape(-1))
            split = self._parallel(())
            if split is None:
                return partial(_float_gemv, *args, 0, self.cout)
            return _threads.in_parts(_float_gemv_step, (*args, split[0]), split[0],
                                     units=(_ROWS, _TILE))
        if self.mks is None:   # compiled when first bound (by the invoke that needs them)
            self.mks = _gemm_float.micro_kernels(self.cout, (self.geo[10], self.geo[11]))
        args = (self.geo, self.row_bases, self.wp, self.bias, self.clamp, self.mks,
                out.reshape(-1, self.cout), out.shape[1], out.shape[2])
        return self._bind_core(_float_conv_part, _float_conv_step, x, x.view(np.uint8), 0, args,
                               (self.cols, self.scratch))


class InPlaceFloatPlan:
    """A float convolution padded only at the bottom and the right (TensorFlow's SAME padding
    with stride 2 on even sizes: MobileNet's first layer) whose windows mostly read the input
    in place: the output rows whose windows lie inside the input are computed from ``x`` itself
    (no padded copy of the input: 0.6 MB written and read again for a 224x224x3 image),
    their last columns (whose windows run past a row's end, read as the next row's start) are
    then computed again from a copy of the input's right edge, and the remaining bottom rows
    from the input's last rows; each plan a :class:`FloatGemmPlan`, so each sum is the same
    sequence of operations. :func:`in_place_float_plan` decides when it applies."""

    def __init__(self, x_shape, out_shape, w, bias, lo, hi, geometry, packed, rows, cols):
        _, h, width, cin = x_shape
        _, oh, ow, cout = out_shape
        sh, sw, _, _, dh, _ = geometry
        kh = w.shape[1]
        self.rows, self.cols = rows, cols      # output rows / columns read in place
        self.x0 = cols * sw                    # first input column of the right edge
        self.y0 = rows * sh                    # first input row of the bottom edge
        self.h_r = (rows - 1) * sh + (kh - 1) * dh + 1   # input rows the right edge reads
        self.main = FloatGemmPlan((1, h, width, cin), (1, rows, ow, cout), w, bias, lo, hi,
                                  geometry, packed, in_place=True)
        self.right = None if cols == ow else FloatGemmPlan(
            (1, self.h_r, width - self.x0, cin), (1, rows, ow - cols, cout), w, bias, lo, hi,
            geometry, packed)
        if self.right is not None:   # the right edge's input and output, copied
            self.xr = aligned_zeros((1, self.h_r, width - self.x0, cin), np.float32)
            self.out_r = aligned_zeros((1, rows, ow - cols, cout), np.float32)
        self.bottom = None if rows == oh else FloatGemmPlan(
            (1, h - self.y0, width, cin), (1, oh - rows, ow, cout), w, bias, lo, hi, geometry,
            packed)
        self.out_dtype = np.dtype(np.float32)

    def run(self, x, out):
        self.bind(x, out)()
        return out

    def bind(self, x, out):
        """As :meth:`FloatGemmPlan.bind` (``x`` and ``out`` C-contiguous, one image)."""
        calls = [self.main.bind(x, out[:, :self.rows])]
        if self.right is not None:
            calls += [partial(_copy_columns, x, self.xr, self.h_r, self.x0, True),
                      self.right.bind(self.xr, self.out_r),
                      partial(_copy_columns, out, self.out_r, self.rows, self.cols, False)]
        if self.bottom is not None:
            calls.append(self.bottom.bind(x[:, self.y0:], out[:, self.rows:]))
        return in_turn(*calls)


@njit(_nrt=False)
def _copy_columns(image, edge, rows, col, to_edge):
    """Columns ``col:`` of rows ``0:rows`` of ``image`` [1, H, W, C] into ``edge`` [1, rows,
    W - col, C] (``to_edge``), or back from it (a compiled step: no Python call between the
    in-place plan's parts, :mod:`nnsim.kernels.program`)."""
    width, channels = image.shape[2], image.shape[3]
    n = (width - col) * channels
    whole, compact = flat(image), flat(edge)
    for y in range(rows):
        start = (y * width + col) * channels
        if to_edge:
            for i in range(n):
                compact[y * n + i] = whole[start + i]
        else:
            for i in range(n):
                whole[start + i] = compact[y * n + i]


def in_place_float_plan(x_shape, out_shape, w, bias, lo, hi, geometry, packed):
    """An :class:`InPlaceFloatPlan` for a float convolution when it applies, else None: one
    image of at least 64K values, padded only at the bottom and right, a window of more than
    one pixel, undilated in width, and at least one output row and column inside (the last
    row read in place is not the input's last, so reads past a row's end stay in ``x``); a
    window that reads no padding at all gives a :class:`FloatGemmPlan` reading ``x`` in place
    (at any size: no edges to compute)."""
    n, h, width, cin = (int(d) for d in x_shape)
    _, oh, ow, _ = (int(d) for d in out_shape)
    sh, sw, pad_top, pad_left, dh, dw = (int(g) for g in geometry)
    kh, kw = int(w.shape[1]), int(w.shape[2])
    if n != 1 or pad_top or pad_left or dw != 1 or kh * kw == 1:
        return None
    rows = min(oh, (h - (kh - 1) * dh - 1) // sh + 1)
    cols = min(ow, (width - kw) // sw + 1)
    if rows == oh and cols == ow and rows > 0 and cols > 0:   # no padding read: no edges
        return FloatGemmPlan(x_shape, out_shape, w, bias, lo, hi, geometry, packed,
                             in_place=True)
    while cols < ow and rows > 0 and (rows - 1) * sh + (kh - 1) * dh >= h - 1:
        rows -= 1
    if rows < 1 or cols < 1 or h * width * cin < 65536:   # edges cost more than a copy
        return None
    return InPlaceFloatPlan(x_shape, out_shape, w, bias, lo, hi, geometry, packed, rows, cols)


#: the input of the parts' row copies when there is none (1x1 filters)
_NO_INPUT = np.zeros((1, 1, 1, 1), np.uint8)


def _split_cost(parts):
    """The micro-kernel work of the largest part (4-pixel groups x 16-channel columns), then
    the number of parts."""
    return (max(-(-(p1 - p0) // _ROWS) * -(-(c1 - c0) // 16) for p0, p1, c0, c1 in parts),
            len(parts))


