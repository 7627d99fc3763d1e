"""ADD, SUB, MUL with numpy broadcasting, float and 8-bit quantized; numba fast path.

Quantized ADD/SUB follow TFLite's ``left_shift = 20`` scheme (``kernels/add.cc``, ``sub.cc``,
``reference_ops::Add``)::

    twice_max = 2 * max(s1, s2)                       # float32 max, exact doubling
    M1, S1 = QuantizeMultiplier(s1 / twice_max)       # double
    M2, S2 = QuantizeMultiplier(s2 / twice_max)
    Mo, So = QuantizeMultiplier(twice_max / float32(2**20 * s_out))
    a = MBQM((x1 - zp1) << 20, M1, S1);  b = MBQM((x2 - zp2) << 20, M2, S2)
    out = clamp(MBQM(a +/- b, Mo, So) + zp_out)

(the input stages exactly, in int32 lanes: :func:`_input_stage`).

Quantized MUL (``kernels/mul.cc``): ``real = float32(float32(s1 * s2) / s_out)``;
``out = clamp(MBQM((x1 - zp1) * (x2 - zp2), M, S) + zp_out)``.
Float: the float32 operation, then the fused activation clamp.

The quantized core reads int8 inputs as uint8 bytes ``x + 128`` with the zero point moved by
128 (``x - zp`` unchanged) and writes the low byte of the int32 result, the int8 or uint8 value
alike: one compiled core serves both types.

ADD/SUB of two 8-bit inputs of the same shape has 65,536 possible input pairs; a plan
computes the exact outputs of all of them (the core's arithmetic in numpy:
:func:`_exact_pairs`) and looks for a linear form in int32 lanes,
``clamp((u * P + v * Q + R) >> S, lo, hi)`` (u, v: the bytes read as above), that gives every
one of them (:func:`_linear_form`). When one exists the plan runs it (about 12 vector
operations per 16 elements against 30: three requantizations; 42 of the shared models' 43
ADDs have one); when none does, the exact core. Either way every output is the exact one.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels import threads as _threads
from nnsim.kernels._builtins import greater, lesser, zeros
from nnsim.kernels._jit import (njit, vi_add, vi_and, vi_ashr, vi_load8, vi_mul, vi_pack8q,
                                vi_requantq, vi_shl, vi_splat, vi_store4, vi_store8, vi_xor,
                                vq_load)
from nnsim.kernels.fixed_point import quantize_multiplier
from nnsim.kernels.gemm import requant_params, shift_free

__all__ = ["add", "sub", "mul", "add_sub_params", "mul_params", "prepare_binary"]

_ADD, _SUB, _MUL = 0, 1, 2
#: Quantized ADD/SUB/MUL of at least this many elements run in parts with more than one
#: thread (nnsim.kernels.threads); 3 requantizations per element make 4096 about 10 us.
_PARALLEL_ELEMENTS = 4096
#: The same for the linear form, 4 times faster: 32768 elements about 2 us (Zen 5); 2 threads
#: made MobileNet v2's ADDs of 6272-18816 elements 0.4-0.9 us slower.
_LINEAR_PARALLEL_ELEMENTS = 32768


def add(a, b, *, fuse=0, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0, out_scale=None,
        out_zp=0, out_dtype=None):
    """Elementwise ``a + b`` with broadcasting.

    Parameters
    ----------
    a, b : ndarray
        Both float32 / float16, or both uint8 / int8 (quantized with ``in1_*`` / ``in2_*``).
    fuse : int
        NNAPI fuse code, applied in the output domain.
    in1_scale, in1_zp, in2_scale, in2_zp, out_scale, out_zp
        Quantization of the inputs and the output.
    out_dtype : np.uint8 or np.int8, optional
        Quantized output type (default ``a.dtype``).

    Returns
    -------
    ndarray
        Broadcast shape of ``a`` and ``b``.
    """
    return _binary(_ADD, a, b, fuse, in1_scale, in1_zp, in2_scale, in2_zp, out_scale, out_zp,
                   out_dtype)


def sub(a, b, *, fuse=0, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0, out_scale=None,
        out_zp=0, out_dtype=None):
    """Elementwise ``a - b`` with broadcasting; arguments as :func:`add`."""
    return _binary(_SUB, a, b, fuse, in1_scale, in1_zp, in2_scale, in2_zp, out_scale, out_zp,
                   out_dtype)


def mul(a, b, *, fuse=0, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0, out_scale=None,
        out_zp=0, out_dtype=None):
    """Elementwise ``a * b`` with broadcasting; arguments as :func:`add`."""
    return _binary(_MUL, a, b, fuse, in1_scale, in1_zp, in2_scale, in2_zp, out_scale, out_zp,
                   out_dtype)


def add_sub_params(in1_scale, in2_scale, out_scale):
    """TFLite ADD/SUB multipliers ``((M1, S1), (M2, S2), (Mo, So))`` for left_shift 20."""
    s1, s2, so = (np.float32(cm.require(s, n)) for s, n in
                  ((in1_scale, "in1_scale"), (in2_scale, "in2_scale"), (out_scale, "out_scale")))
    twice_max = 2.0 * float(max(s1, s2))
    real_out = twice_max / float(np.float32(np.float32(1 << 20) * so))
    return (quantize_multiplier(float(s1) / twice_max),
            quantize_multiplier(float(s2) / twice_max),
            quantize_multiplier(real_out))


def mul_params(in1_scale, in2_scale, out_scale):
    """TFLite MUL multiplier ``(M, S)`` from the all-float32 ``s1 * s2 / s_out``."""
    s1, s2, so = (np.float32(cm.require(s, n)) for s, n in
                  ((in1_scale, "in1_scale"), (in2_scale, "in2_scale"), (out_scale, "out_scale")))
    return quantize_multiplier(float(np.float32(np.float32(s1 * s2) / so)))


def _binary(op, a, b, fuse, s1, zp1, s2, zp2, so, zpo, out_dtype):
    a, b = np.asarray(a), np.asarray(b)
    plan = prepare_binary(op, a.shape, b.shape, a.dtype, b.dtype, fuse=fuse, in1_scale=s1,
                          in1_zp=zp1, in2_scale=s2, in2_zp=zp2, out_scale=so, out_zp=zpo,
                          out_dtype=out_dtype)
    return plan.run(a, b, np.empty(plan.shape, plan.out_dtype))


def prepare_binary(op, a_shape, b_shape, a_dtype, b_dtype, *, fuse=0, in1_scale=None, in1_zp=0,
                   in2_scale=None, in2_zp=0, out_scale=None, out_zp=0, out_dtype=None):
    """Checks and constants of ADD (``op`` 0), SUB (1) or MUL (2) for these shapes and types
    (TFLite's Prepare): a plan whose ``run(a, b, out)`` writes ``out`` (``plan.shape``,
    ``plan.out_dtype``; float16 is computed in float32 and returned as float16)."""
    return _BinaryPlan(op, tuple(a_shape), tuple(b_shape), np.dtype(a_dtype), np.dtype(b_dtype),
                       fuse, in1_scale, in1_zp, in2_scale, in2_zp, out_scale, out_zp, out_dtype)


#: :func:`_input_stage` of the input with the larger scale (multiplier 2**30, shift 0):
#: ``MBQM(v << 20) = v << 19`` exactly.
_SHIFT_STAGE = (1 << 19, 0, 0, 0, 0)
#: The plan of an ADD/SUB of at least this many elements looks for the linear form (a numpy
#: search over the 65,536 input pairs: 3.5 ms when the first candidate serves, 7 ms for none).
_LINEAR_MIN_ELEMENTS = 2048
#: The shifts the linear form tries, most precise first (int32 lanes limit S: |u * P| < 2**31).
_LINEAR_SHIFTS = (22, 21, 20, 19, 18)


def _uniform_table(m, s):
    return requant_params(np.zeros(16, np.int64), np.full(16, m), np.full(16, s))


def _input_stage(m, shift):
    """ADD/SUB's input stage ``MBQM(v << 20, m, shift)`` for ``|v| <= 255`` in int32 lanes:
    ``(mh, ml, ch, dm, r)`` with ``MBQM = (v * mh + ch + ((v >> 31) & dm) + ((v * ml + 1024)
    >> 11)) >> r``.

    Why it is exact: with ``r = -shift`` (>= 0: an input's multiplier is at most 0.5),
    K = 31 + r, MBQM(x) = floor((x * m + C - (x * m < -2**30) * D) / 2**K)
    (``gemm.requant_params``: C = 2**30 + 2**(30 + r), D = 2**31; C = 2**30, D = 0 when
    r = 0). For x = v * 2**20 every term is a multiple of 2**20, and x * m < -2**30 is v < 0
    (m >= 2**30, or m = 0 and r = 0), so MBQM = floor(N / 2**(11 + r)) with N = v * m +
    1024 + (ch - (v < 0) * (r > 0)) * 2**11, ch = 2**(r - 1) (0 when r = 0). Splitting
    m = mh * 2**11 + ml, floor(N / 2**(11 + r)) = floor((v * mh + ch - (v < 0) * (r > 0) +
    floor((v * ml + 1024) / 2**11)) / 2**r); |v * mh| < 2**28, |v * ml| < 2**19 and
    ch <= 2**30, so every step fits an int32. Three multiplications in 64-bit lanes per
    input become two in 32-bit ones."""
    r = -int(shift)
    if not 0 <= r <= 31 or not 0 <= m < 1 << 31:
        raise ValueError(f"ADD/SUB input multiplier {m} * 2**{shift} out of range")
    return m >> 11, m & 2047, (1 << (r - 1)) if r else 0, -1 if r else 0, r


class _BinaryPlan:
    def __init__(self, op, a_shape, b_shape, a_dtype, b_dtype, fuse, s1, zp1, s2, zp2, so, zpo,
                 out_dtype):
        self.op, self.shape = op, cm.broadcast_shape(a_shape, b_shape)
        self.same = a_shape == b_shape
        self.quantized = cm.is_quantized(a_dtype)
        if self.quantized:
            if b_dtype not in cm.QUANT_DTYPES:
                names = "uint8, int8"
                raise TypeError(f"input2: dtype {b_dtype.name} not supported (expected {names})")
            self.out_dtype = cm.output_dtype(out_dtype, a_dtype)
            lo, hi = cm.quant_clamp(fuse, so, zpo, self.out_dtype)
            # int8 inputs are read as uint8 + 128 (module doc)
            ins = [(int(zp1), 128 * (a_dtype == np.int8)), (int(zp2), 128 * (b_dtype == np.int8))]
            stages = [(0,) * 5, (0,) * 5]
            if op == _MUL:
                table = _uniform_table(*mul_params(s1, s2, so))
            else:
                params = add_sub_params(s1, s2, so)
                table = _uniform_table(*params[2])
                stages = [_input_stage(*params[0]), _input_stage(*params[1])]
            # ADD's inputs swapped (a sum of integers: the same bits) so that an input whose
            # stage is a shift (the larger scale's: multiplier 0.5) comes second
            self.swap = op == _ADD and stages[0] == _SHIFT_STAGE != stages[1]
            if self.swap:
                ins.reverse()
                stages.reverse()
            self.table = shift_free(table)   # the output's requantization
            (zp_a, flip_a), (zp_b, flip_b) = ins
            self.prm = np.array([op, zp_a + flip_a, zp_b + flip_b, int(zpo), int(lo), int(hi),
                                 flip_a, flip_b, *stages[0], *stages[1],
                                 int(op == _ADD and stages[1] == _SHIFT_STAGE)], np.int64)
            self.linear = None
            if op != _MUL and self.same and int(np.prod(self.shape)) >= _LINEAR_MIN_ELEMENTS:
                slopes = [_slope(*params[0], *params[2]), _slope(*params[1], *params[2])]
                if self.swap:
                    slopes.reverse()
                if op == _SUB:
                    slopes[1] = -slopes[1]
                self.linear = _linear_form(self.prm, params[2], *slopes)
            return
        for name, dtype in (("input1", a_dtype), ("input2", b_dtype)):
            if dtype not in cm.FLOAT_DTYPES:
                names = ", ".join(np.dtype(d).name for d in cm.FLOAT_DTYPES)
                raise TypeError(f"{name}: dtype {dtype.name} not supported (expected {names})")
        self.lo, self.hi = cm.float_clamp(fuse)
        self.out_dtype = np.dtype(np.float32)
        self.cast = a_dtype

    def bind(self, a, b, out):
        """A function of no arguments computing ``out`` from the current contents of ``a`` and
        ``b`` (same shapes, all three arrays fixed), or None when not supported."""
        if not self.same or not (a.flags.c_contiguous and b.flags.c_contiguous):
            return None
        if self.quantized:
            a, b = (b, a) if self.swap else (a, b)
            flat = out.reshape(-1).view(np.uint8)
            if self.linear is not None:
                args, step, block, least = ((_bytes(a), _bytes(b), self.linear, flat),
                                            _linear_step, 64, _LINEAR_PARALLEL_ELEMENTS)
                serial = partial(_linear_range, *args, np.int64(0), np.int64(out.size))
            else:
                args, step, block, least = ((_bytes(a), _bytes(b), self.table, self.prm, flat),
                                            _quant_step, 16, _PARALLEL_ELEMENTS)
                serial = partial(_quant_core, *args)
            count = _threads.get_num_threads()
            blocks = -(-out.size // block)
            if count > 1 and out.size >= least:   # parts of whole blocks
                parts = np.array([(block * lo, min(block * hi, out.size))
                                  for lo, hi in _threads.split(blocks, count)], np.int64)
                return _threads.in_parts(step, (*args, parts), parts)
            return serial
        if a.dtype != np.float32 or b.dtype != np.float32:
            return None
        return partial(_float_core, self.op, a.reshape(-1), b.reshape(-1), self.lo, self.hi,
                       out.reshape(-1))

    def run(self, a, b, out):
        if self.same:
            fa, fb = np.ascontiguousarray(a).reshape(-1), np.ascontiguousarray(b).reshape(-1)
        else:
            _, fa, fb = cm.broadcast_flat(np.asarray(a), np.asarray(b))
        if self.quantized:
            fa, fb = (fb, fa) if self.swap else (fa, fb)
            flat = out.reshape(-1).view(np.uint8)
            if self.linear is not None:
                _linear_range(_bytes(fa), _bytes(fb), self.linear, flat, np.int64(0),
                              np.int64(flat.size))
            else:
                _quant_core(_bytes(fa), _bytes(fb), self.table, self.prm, flat)
            return out
        _float_core(self.op, fa.astype(np.float32, copy=False),
                    fb.astype(np.float32, copy=False), self.lo, self.hi, out.reshape(-1))
        return out.astype(self.cast, copy=False)


def _slope(m, shift, m_out, shift_out):
    """The real factor from an input's difference ``x - zp`` to the output of ADD/SUB: the
    input stage ``2**20 * m * 2**(shift - 31)`` times the output's ``m_out * 2**(shift_out -
    31)`` (the quantized multipliers, not the scales)."""
    return math.ldexp(m * m_out, 20 + shift + shift_out - 62)


def _linear_form(prm, out_stage, alpha, beta):
    """``[P, Q, R, S, flip_a, flip_b, lo, hi]`` (int64) such that
    ``clamp((u * P + v * Q + R) >> S, lo, hi)`` in int32 lanes, u = byte_a ^ flip_a and
    v = byte_b ^ flip_b, equals the exact core (``prm``; ``out_stage``: the output's
    multiplier and shift) for every pair of input bytes, or None when no candidate does.
    ``alpha``, ``beta``: the real slopes (output units per unit of u, v), from which
    P, Q = floor or ceil of slope * 2**S are tried.

    For candidate (P, Q, S) every pair's exact output F (:func:`_exact_pairs`) bounds R:
    F > lo needs u * P + v * Q + R >= F * 2**S, F < hi needs it < (F + 1) * 2**S; a non-empty
    intersection over the 65,536 pairs gives a form exact for every input (its midpoint is
    taken). Sums are checked to stay inside int32 (no lane wraps). Some exact outputs are no
    floor of a linear function (ties rounded away from zero on both sides of it, the input
    stage's own rounding): then None."""
    flip_a, flip_b, lo, hi = int(prm[6]), int(prm[7]), int(prm[4]), int(prm[5])
    grid = np.arange(256, dtype=np.int64)
    u, v = np.repeat(grid, 256) ^ flip_a, np.tile(grid, 256) ^ flip_b
    f = _exact_pairs(u, v, prm, *out_stage)
    above, below = f > lo, f < hi
    limit = 1 << 31
    for shift in _LINEAR_SHIFTS:
        one = 1 << shift
        for p in sorted({math.floor(alpha * one), math.ceil(alpha * one)}):
            for q in sorted({math.floor(beta * one), math.ceil(beta * one)}):
                if 255 * max(abs(p), abs(q)) >= limit or 255 * (abs(p) + abs(q)) >= limit:
                    continue
                base = u * p + v * q
                low = int(np.max(f * one - base, where=above, initial=-limit))
                high = int(np.min((f + 1) * one - base - 1, where=below, initial=limit))
                if low > high:
                    continue
                r = (low + high) // 2
                if abs(r) >= limit or int(np.max(np.abs(base + r))) >= limit:
                    continue
                return np.array([p, q, r, shift, flip_a, flip_b, lo, hi], np.int64)
    return None


def _exact_pairs(u, v, prm, m, shift):
    """The exact core's ADD/SUB outputs (values, clamped) for input lanes ``u``, ``v`` (int64
    arrays: bytes after the flips), in numpy: the input stages of :func:`_input_stage` (a
    shift stage is one too), the sum or difference, TFLite's MultiplyByQuantizedMultiplier
    (``m``, ``shift``) of it as gemmlowp writes it, the zero point and the clamp. Plans use it
    for their search, so the exact core need not compile when the linear form serves."""
    def stage(x, mh, ml, ch, dm, r):
        return (x * mh + ch + ((x >> 31) & dm) + ((x * ml + 1024) >> 11)) >> r

    ra = stage(u - prm[1], *prm[8:13])
    rb = stage(v - prm[2], *prm[13:18])
    x = ra - rb if prm[0] == _SUB else ra + rb
    x = (((x << max(shift, 0)) + 2**31) & 0xFFFFFFFF) - 2**31    # int32 wrap of the shift
    high = (x * m + (1 << 30)) >> 31     # SaturatingRoundingDoublingHighMul, m >= 0
    right = max(-shift, 0)
    mask = (1 << right) - 1              # RoundingDivideByPOT: halves away from zero
    y = (high >> right) + ((high & mask) > (mask >> 1) + (high < 0))
    return np.clip(y + prm[3], prm[4], prm[5])


def _bytes(x):
    """A quantized array's flat bytes (a view: the core flips int8 bytes as it reads them)."""
    return x.reshape(-1).view(np.uint8)


@njit
def _quant_core(a, b, table, prm, out):
    """16 elements at a time; the last partial vector goes through 16-byte scratch buffers."""
    _quant_range(a, b, table, prm, out, np.int64(0), np.int64(out.size))
    return out


@njit
def _quant_step(a, b, table, prm, out, parts, t):
    """Part ``t`` of :func:`_quant_core` in parts (element ranges starting at multiples of 16;
    :mod:`nnsim.kernels.team`); every element is computed as in one thread."""
    _quant_range(a, b, table, prm, out, parts[t, 0], parts[t, 1])


@njit(inner=True)
def _quant_range(a, b, table, prm, out, start, n):
    """Elements ``start:n`` (``start`` a multiple of 16): the whole vectors in place, the
    last partial one through 16-byte scratch buffers, both by :func:`_quant_span` (one
    compiled loop body serves both)."""
    full = n - (n - start) % 16
    _quant_span(a, b, table, prm, out, start, full)
    if full < n:
        ta, tb, to = zeros(16, a.dtype), zeros(16, b.dtype), zeros(16, np.uint8)
        # element loops, not slice assignments: those compile numba's shape-mismatch error
        # formatting, 1.3 s of a cold start
        for j in range(n - full):
            ta[j], tb[j] = a[full + j], b[full + j]
        _quant_span(ta, tb, table, prm, to, np.int64(0), np.int64(16))
        for j in range(n - full):
            out[full + j] = to[j]


@njit(_nrt=False, inner=True)
def _quant_span(a, b, table, prm, out, start, n):
    """Elements ``start:n``, whole vectors of 16. The output requantization's rows stay in
    registers for the whole span (vq_load): reloaded for every 16 elements, with a call per
    16, MobileNet v2's 56x56x24 ADD took 53.5 against 48.8 us (AVX-512). The operation is
    chosen once, outside the loops, and the scalars of ``prm`` read once: with one loop for
    both, LLVM read them again every 16 elements (``out`` might alias ``prm``). ADD/SUB's
    input stages run in int32 lanes (:func:`_input_stage`): 56x56x24 26.1 -> 18.9 us (Zen 5),
    52.3 -> 37.8 us (AVX2), against three requantizations in 64-bit lanes. (Four results
    packed into one store saved 6% but compiled the loop bodies six times more: +0.56 s.)"""
    q = vq_load(table, 0, 16)
    flips, zps = (vi_splat(prm[6]), vi_splat(prm[7])), (vi_splat(-prm[1]), vi_splat(-prm[2]))
    op, zpo, lo, hi = prm[0], prm[3], prm[4], prm[5]
    if op == _MUL:
        for i in range(start, n, 16):
            va, vb = _inputs16(a, b, i, flips, zps)
            vi_store8(vi_requantq(vi_mul(va, vb), q, 0, zpo, lo, hi), out, i)
        return
    s1 = (vi_splat(prm[8]), vi_splat(prm[9]), vi_splat(prm[10]), vi_splat(prm[11]),
          vi_splat(prm[12]))
    low = (vi_splat(1024), vi_splat(11), vi_splat(31))
    if prm[18] != 0:   # ADD, the second input's stage a shift (_SHIFT_STAGE): 11 vector
        shift = vi_splat(19)   # operations fewer per 16 elements; 56x56x24 ADD 19.0 -> 15.2 us
        # (Zen 5), 37.7 -> 30.7 us (AVX2)
        for i in range(start, n, 16):
            va, vb = _inputs16(a, b, i, flips, zps)
            total = vi_add(_input_stage16(va, s1, low), vi_shl(vb, shift))
            vi_store8(vi_requantq(total, q, 0, zpo, lo, hi), out, i)
        return
    # SUB: the second term negated as (r ^ -1) + 1; ADD: (r ^ 0) + 0
    neg = (vi_splat(-1 if op == _SUB else 0), vi_splat(1 if op == _SUB else 0))
    s2 = (vi_splat(prm[13]), vi_splat(prm[14]), vi_splat(prm[15]), vi_splat(prm[16]),
          vi_splat(prm[17]))
    for i in range(start, n, 16):
        va, vb = _inputs16(a, b, i, flips, zps)
        ra, rb = _input_stage16(va, s1, low), _input_stage16(vb, s2, low)
        rb = vi_add(vi_xor(rb, neg[0]), neg[1])
        vi_store8(vi_requantq(vi_add(ra, rb), q, 0, zpo, lo, hi), out, i)


@njit(_nrt=False, inline="always", inner=True)
def _input_stage16(v, stage, low):
    """MBQM(v << 20, m, shift) of 16 lanes: ``stage`` the splats of :func:`_input_stage`'s
    ``(mh, ml, ch, dm, r)``, ``low`` those of 1024, 11, 31."""
    frac = vi_ashr(vi_add(vi_mul(v, stage[1]), low[0]), low[1])
    high = vi_add(vi_add(vi_mul(v, stage[0]), stage[2]), vi_and(vi_ashr(v, low[2]), stage[3]))
    return vi_ashr(vi_add(high, frac), stage[4])


@njit(_nrt=False, inline="always", inner=True)
def _inputs16(a, b, i, flips, zps):
    """``a[i:i + 16]``, ``b[i:i + 16]`` minus their zero points: bytes (uint8 a, b), int8 ones
    XOR 0x80 = x + 128 (zp1, zp2 moved alike)."""
    return (vi_add(vi_xor(vi_load8(a, i), flips[0]), zps[0]),
            vi_add(vi_xor(vi_load8(b, i), flips[1]), zps[1]))


@njit
def _linear_step(a, b, lin, out, parts, t):
    """Part ``t`` of the linear form in parts (element ranges starting at multiples of 64)."""
    _linear_range(a, b, lin, out, parts[t, 0], parts[t, 1])


@njit
def _linear_range(a, b, lin, out, start, n):
    """The linear form ``lin`` (:func:`_linear_form`) of elements ``start:n`` (``start`` a
    multiple of 64; int64 bounds): whole blocks of 64 in place, the last partial one through
    64-byte scratch buffers. A serial bound call is the whole range (no wrapper function: a
    compiled function less at a cold start)."""
    full = n - (n - start) % 64
    _linear_span(a, b, lin, out, start, full)
    if full < n:
        ta, tb, to = zeros(64, a.dtype), zeros(64, b.dtype), zeros(64, np.uint8)
        for j in range(n - full):   # element loops: see _quant_range
            ta[j], tb[j] = a[full + j], b[full + j]
        _linear_span(ta, tb, lin, to, np.int64(0), np.int64(64))
        for j in range(n - full):
            out[full + j] = to[j]


@njit(_nrt=False, inner=True)
def _linear_span(a, b, lin, out, start, n):
    """Elements ``start:n``, whole blocks of 64: four vectors of ``(u * P + v * Q + R) >> S``
    clamped and packed into one 64-byte store."""
    flips = (vi_splat(lin[4]), vi_splat(lin[5]))
    form = (vi_splat(lin[0]), vi_splat(lin[1]), vi_splat(lin[2]), vi_splat(lin[3]))
    lo, hi = lin[6], lin[7]
    for i in range(start, n, 64):
        vi_store4(vi_pack8q(_linear16(a, b, i, flips, form),
                            _linear16(a, b, i + 16, flips, form),
                            _linear16(a, b, i + 32, flips, form),
                            _linear16(a, b, i + 48, flips, form), 0, lo, hi), out, i, 16)


@njit(_nrt=False, inner=True)
def _linear16(a, b, i, flips, form):
    """``(u * P + v * Q + R) >> S`` of elements ``i:i + 16`` (``form``: the splats of P, Q, R,
    S; not inlined by numba: LLVM inlines it, and the compile is the same)."""
    u, v = vi_xor(vi_load8(a, i), flips[0]), vi_xor(vi_load8(b, i), flips[1])
    return vi_ashr(vi_add(vi_add(vi_mul(u, form[0]), vi_mul(v, form[1])), form[2]), form[3])


@njit
def _float_core(op, a, b, lo, hi, out):
    for i in range(out.size):
        if op == _ADD:
            v = a[i] + b[i]
        elif op == _SUB:
            v = a[i] - b[i]
        else:
            v = a[i] * b[i]
        out[i] = lesser(greater(v, lo), hi)
    return out
