"""TFLite's LSTM cell over a whole sequence: float and the fully integer 8x8_16 kernel.

LiteRT ``kernels/lstm_eval.cc`` (``LstmStepFloat``, ``LstmStepInteger8x8_16``), shared by the
LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM and BIDIRECTIONAL_SEQUENCE_LSTM builtins. Every step is
computed row by row (one batch entry at a time): every operation of a step is per batch row,
so this equals both LiteRT's time-major (whole batch per step) and batch-major (one row per
step) loops. The time loop runs inside the numba cores.

Gate order in the stacked arrays: 0 input, 1 forget, 2 cell, 3 output; peephole arrays:
0 input, 1 forget, 2 output.

Float: ``gate = act(bias + Wx x + Wh h [+ w_c . c])``, with layer normalisation
``act(coef * normalize(Wx x + Wh h [+ w_c . c]) + bias)``; ``c = clip(f * c + i * g)`` (CIFG:
``i = 1 - f``); the output gate's peephole reads the new cell; ``h = o * act(c)``, projected as
``clip(P h + b_p)``. LiteRT multiplies with its optimized GEMM (Eigen/ruy), whose float summation
order is its own: float results agree to rounding, not bit for bit.

Integer (post-training-quantized int8 activations, int16 cell): each matmul is
``MultiplyByQuantizedMultiplier(effective_bias + sum(x * w), m, s)`` added to the int16 gate
with saturation (input part first, then the recurrent part, then the int16 peephole), optional
integer layer norm (``PortableApplyLayerNorm``), gemmlowp int16 sigmoid (Q3.12 in) and tanh
(Q3.12 for the cell gate, Q(15 + cell_scale) for the cell state) read from 65536-entry tables,
cell ``sat(rdbpot(f * c, 15) + rdbpot(i * g, 30 + cell_scale))``, hidden
``clamp(MBQM(o * tanh(c), m, s) + zp)``; with projection the hidden int8 value takes
``-hidden_zp`` (LiteRT b/246629213) and goes through one more int8 matmul.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._builtins import empty, greater, lesser, zeros

from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import (multiply_by_quantized_multiplier as mbqm,
                                       quantize_multiplier, rounding_divide_by_pot, wrap_int32)
from nnsim.kernels.fixed_point16 import logistic16, tanh16
# the float cell shares the NNAPI LSTM kernel's helpers (the same float32 arithmetic)
from nnsim.kernels.lstm import _mean_stddev_normalize, _sigmoid
from nnsim.kernels.normalization import _inv_sqrt_multiplier

__all__ = ["lstm_float", "lstm_integer", "IntegerLstmParams", "integer_lstm_params",
           "activation_table"]


# -- float ------------------------------------------------------------------------------------
@njit(inner=True)
def _act(v, code):
    """TFLite fused activation on a float32 value (1 RELU, 2 RELU_N1_TO_1, 3 RELU6, 4 TANH)."""
    if code == 1:
        return greater(v, np.float32(0))
    if code == 2:
        return lesser(greater(v, np.float32(-1)), np.float32(1))
    if code == 3:
        return lesser(greater(v, np.float32(0)), np.float32(6))
    if code == 4:
        return np.float32(np.tanh(v))
    return v


@njit
def _lstm_float_core(x, wx, wh, peep, ln, bias, proj, proj_bias, cifg, use_peep, use_ln,
                     use_proj, act, cell_clip, proj_clip, reverse, h, c, out):
    n_batch, n_time, n_input = x.shape
    n_cell = wx.shape[1]
    n_output = wh.shape[2]
    gate = empty((4, n_cell), np.float32)
    hidden = empty(n_cell, np.float32)
    row = empty(n_output, np.float32)
    for b in range(n_batch):
        for step in range(n_time):
            t = n_time - 1 - step if reverse else step
            for g in range(4):
                if g == 0 and cifg:
                    continue
                if g == 3:     # the output gate's peephole reads the updated cell
                    for r in range(n_cell):
                        f = gate[1, r]
                        i = np.float32(1) - f if cifg else gate[0, r]
                        v = np.float32(f * c[b, r]) + np.float32(i * gate[2, r])
                        if cell_clip > 0:
                            v = lesser(greater(v, -cell_clip), cell_clip)
                        c[b, r] = v
                for r in range(n_cell):
                    acc = np.float32(0)
                    for k in range(n_input):
                        acc += wx[g, r, k] * x[b, t, k]
                    v = acc if use_ln else np.float32(acc + bias[g, r])
                    acc = np.float32(0)
                    for k in range(n_output):
                        acc += wh[g, r, k] * h[b, k]
                    v = np.float32(acc + v)
                    if use_peep and g != 2:
                        v = np.float32(v + peep[lesser(g, 2), r] * c[b, r])
                    gate[g, r] = v
                if use_ln:
                    _mean_stddev_normalize(gate[g], n_cell)
                    for r in range(n_cell):
                        gate[g, r] = np.float32(gate[g, r] * ln[g, r]) + bias[g, r]
                for r in range(n_cell):
                    gate[g, r] = _act(gate[g, r], act) if g == 2 else _sigmoid(gate[g, r])
            for r in range(n_cell):
                hidden[r] = np.float32(gate[3, r] * _act(c[b, r], act))
            if use_proj:
                for o in range(n_output):
                    acc = np.float32(0)
                    for k in range(n_cell):
                        acc += proj[o, k] * hidden[k]
                    v = np.float32(acc + proj_bias[o])
                    if proj_clip > 0:
                        v = lesser(greater(v, -proj_clip), proj_clip)
                    row[o] = v
            else:
                for o in range(n_output):
                    row[o] = hidden[o]
            for o in range(n_output):
                h[b, o] = row[o]
                out[b, t, o] = row[o]


def lstm_float(x, wx, wh, peep, ln, bias, proj, proj_bias, *, cifg, use_peep, use_ln,
               use_proj, act, cell_clip, proj_clip, reverse, h, c, out):
    """Run the float LSTM over ``x`` [batch, time, input] (any strides), updating the states
    ``h`` [batch, output] and ``c`` [batch, cell] in place and writing ``out``
    [batch, time, output]. Absent parts are passed as zero arrays with their flag off."""
    _lstm_float_core(x, wx, wh, peep, ln, bias, proj, proj_bias, bool(cifg), bool(use_peep),
                     bool(use_ln), bool(use_proj), int(act), np.float32(cell_clip),
                     np.float32(proj_clip), bool(reverse), h, c, out)
    return out


# -- integer 8x8_16 -----------------------------------------------------------------------------
_TABLES: dict = {}


@njit
def _fill_table(kind, integer_bits, table):
    for k in range(65536):
        v = k - 32768
        table[k] = logistic16(v, integer_bits) if kind == 0 else tanh16(v, integer_bits)


def activation_table(kind: str, integer_bits: int) -> np.ndarray:
    """gemmlowp int16 ``logistic`` / ``tanh`` of every Q(integer_bits) input, as int16 indexed
    by ``raw + 32768`` (built once per process)."""
    key = (kind, int(integer_bits))
    table = _TABLES.get(key)
    if table is None:
        table = np.empty(65536, np.int16)
        _fill_table(0 if kind == "sigmoid" else 1, int(integer_bits), table)
        _TABLES[key] = table
    return table


class IntegerLstmParams:
    """What LiteRT's ``PopulateQuantizedLstmParams8x8_16`` and
    ``PopulatePrecomputedZPTimesWeightsWithBias`` compute at Prepare, as arrays for the core."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def integer_lstm_params(*, input_q, state_q, cell_scale_f, weight_scales, peep_scales,
                        ln_scales, proj_scale, gate_q, hidden_q, cell_clip, proj_clip,
                        output_scale, use_ln, use_peep, use_proj, cifg):
    """Effective multipliers of the integer LSTM.

    ``weight_scales``: [(input_to_gate, recurrent_to_gate)] per gate (i, f, c, o);
    ``peep_scales``: (i, f, o) peephole weight scales; ``ln_scales`` per gate; ``gate_q``: the
    four intermediate (scale, zp) pairs (used with layer norm; else 2**-12); ``hidden_q``:
    intermediate 4. Float32 arithmetic where LiteRT uses float variables.
    """
    f32 = np.float32
    in_scale, _ = input_q
    st_scale, _ = state_q
    cell_scale = int(round(np.log2(float(cell_scale_f))))
    inter = [f32(gate_q[g][0]) if use_ln else f32(2.0 ** -12) for g in range(4)]
    hidden_scale = f32(hidden_q[0])
    mx, sx, mh, sh = (np.zeros(4, np.int64) for _ in range(4))
    for g in range(4):
        if g == 0 and cifg:
            continue
        wxs, whs = weight_scales[g]
        ex = f32(f32(f32(wxs) * f32(in_scale)) / inter[g])
        eh = f32(f32(f32(whs) * f32(st_scale)) / inter[g])
        mx[g], sx[g] = quantize_multiplier(float(ex))
        mh[g], sh[g] = quantize_multiplier(float(eh))
    mp, sp = np.zeros(3, np.int64), np.zeros(3, np.int64)
    if use_peep:
        for k, g in enumerate((0, 1, 3)):
            if g == 0 and cifg:
                continue
            e = f32(2.0 ** cell_scale * float(f32(peep_scales[k])) / float(inter[g]))
            mp[k], sp[k] = quantize_multiplier(float(e))
    eff_hidden = f32(2.0 ** -15 / float(hidden_scale) * 2.0 ** -15)
    hm, hs = quantize_multiplier(float(eff_hidden))
    pm = ps = 0
    if use_proj:
        pm, ps = quantize_multiplier(float(f32(f32(f32(proj_scale) * hidden_scale)
                                               / f32(st_scale))))
    lnm, lns, guard = np.zeros(4, np.int64), np.zeros(4, np.int64), np.ones(4, np.int64)
    for g in range(4):
        s = f32(ln_scales[g]) if use_ln else f32(1.0)
        lnm[g], lns[g] = quantize_multiplier(float(s))
        guard[g] = max(1, int(f32(10000) * s))
    qcell = 0
    if cell_clip > 0:
        qcell = int(min(max(f32(cell_clip) / f32(cell_scale_f), f32(-32768)), f32(32767)))
    qproj = 0
    if proj_clip > 0:
        qproj = int(min(max(f32(proj_clip) / f32(output_scale), f32(-128)), f32(127)))
    return IntegerLstmParams(mx=mx, sx=sx, mh=mh, sh=sh, mp=mp, sp=sp, hm=hm, hs=hs,
                             hidden_zp=int(hidden_q[1]), pm=pm, ps=ps, lnm=lnm, lns=lns,
                             guard=guard, cell_scale=cell_scale, qcell=qcell, qproj=qproj)


def zero_point_bias(weights, zero_point, bias=None):
    """``PrecomputeZeroPointTimesWeightWithBias``: ``bias + zero_point * rowsum(weights)``."""
    out = np.zeros(weights.shape[0], np.int64) if bias is None else bias.astype(np.int64)
    if zero_point != 0:
        out = out + np.int64(zero_point) * weights.astype(np.int64).sum(axis=1)
    return np.array([wrap_int32(v) for v in out], np.int64)


@njit(inner=True)
def _tdiv(a, b):
    """C++ integer division (truncates toward zero)."""
    q = abs(a) // b
    return q if a >= 0 else -q


@njit(inner=True)
def _layer_norm(gate, coef, bias, m, s, guard, n):
    """PortableApplyLayerNorm on one int16 row (held in int64), in place."""
    total = np.int64(0)
    total_sq = np.int64(0)
    for k in range(n):
        total += gate[k]
        total_sq += gate[k] * gate[k]
    mean = _tdiv(total * 1024, n)
    variance = total_sq * ((1 << 20) // n) - mean * mean
    var2 = _tdiv(variance, 1 << 20)
    if var2 < 1:
        var2 = guard
    inv_m, inv_s = _inv_sqrt_multiplier(var2)
    for k in range(n):
        shifted = wrap_int32(1024 * gate[k] - mean)
        rescaled = mbqm(shifted, inv_m, inv_s)
        v3 = wrap_int32(rescaled * np.int64(coef[k]) + bias[k])
        v4 = _tdiv(v3 + 512 if v3 > 0 else v3 - 512, 1024)
        v5 = mbqm(v4, m, s + 12)
        gate[k] = lesser(greater(v5, -32768), 32767)


@njit
def _lstm_int_core(x, wx, wh, bx, bh, mx, sx, mh, sh, peep, mp, sp, ln, lnb, lnm, lns, guard,
                   proj, pbias, pm, ps, hm, hs, hidden_zp, state_zp, cell_scale, qcell, qproj,
                   cifg, use_peep, use_ln, use_proj, sig, tanh_gate, tanh_cell, reverse,
                   h, c, out):
    n_batch, n_time, n_input = x.shape
    n_cell = wx.shape[1]
    n_output = wh.shape[2]
    gate = zeros((4, n_cell), np.int64)
    hidden = empty(n_cell, np.int64)
    for b in range(n_batch):
        for step in range(n_time):
            t = n_time - 1 - step if reverse else step
            for g in range(4):
                if g == 0 and cifg:
                    continue
                if g == 3:      # cell update before the output gate (its peephole)
                    for r in range(n_cell):
                        f = gate[1, r]
                        i = 32767 - f if cifg else gate[0, r]
                        v = rounding_divide_by_pot(f * np.int64(c[b, r]), 15)
                        v += rounding_divide_by_pot(i * gate[2, r], 30 + cell_scale)
                        v = lesser(greater(v, -32768), 32767)
                        if qcell > 0:
                            v = lesser(greater(v, -qcell), qcell)
                        c[b, r] = v
                for r in range(n_cell):
                    acc = bx[g, r]
                    for k in range(n_input):
                        acc += np.int32(x[b, t, k]) * np.int32(wx[g, r, k])
                    v = lesser(greater(mbqm(acc, mx[g], sx[g]), -32768), 32767)
                    acc = bh[g, r]
                    for k in range(n_output):
                        acc += np.int32(h[b, k]) * np.int32(wh[g, r, k])
                    v = lesser(greater(mbqm(acc, mh[g], sh[g]) + v, -32768), 32767)
                    if use_peep and g != 2:
                        p = lesser(g, 2)
                        v += mbqm(np.int64(peep[p, r]) * np.int64(c[b, r]), mp[p], sp[p])
                        v = lesser(greater(v, -32768), 32767)
                    gate[g, r] = v
                if use_ln:
                    _layer_norm(gate[g], ln[g], lnb[g], lnm[g], lns[g], guard[g], n_cell)
                table = tanh_gate if g == 2 else sig
                for r in range(n_cell):
                    gate[g, r] = table[gate[g, r] + 32768]
            for r in range(n_cell):
                prod = gate[3, r] * np.int64(tanh_cell[np.int64(c[b, r]) + 32768])
                zp = -hidden_zp if use_proj else hidden_zp
                hidden[r] = lesser(greater(mbqm(prod, hm, hs) + zp, -128), 127)
            for o in range(n_output):
                if use_proj:
                    acc = pbias[o]
                    for k in range(n_cell):
                        acc += hidden[k] * np.int64(proj[o, k])
                    v = lesser(greater(mbqm(acc, pm, ps) + state_zp, -128), 127)
                    if qproj > 0:
                        v = lesser(greater(v, -qproj), qproj)
                else:
                    v = hidden[o]
                h[b, o] = v
                out[b, t, o] = v


def lstm_integer(x, wx, wh, bx, bh, peep, ln, lnb, proj, pbias, p: IntegerLstmParams, *,
                 state_zp, cifg, use_peep, use_ln, use_proj, reverse, h, c, out):
    """Run the integer LSTM over int8 ``x`` [batch, time, input]; int8 ``h`` and int16 ``c``
    are updated in place, int8 ``out`` [batch, time, output] written."""
    _lstm_int_core(x, wx, wh, bx, bh, p.mx, p.sx, p.mh, p.sh, peep, p.mp, p.sp, ln, lnb, p.lnm,
                   p.lns, p.guard, proj, pbias, p.pm, p.ps, p.hm, p.hs, p.hidden_zp,
                   int(state_zp), p.cell_scale, p.qcell, p.qproj, bool(cifg), bool(use_peep),
                   bool(use_ln), bool(use_proj), activation_table("sigmoid", 3),
                   activation_table("tanh", 3), activation_table("tanh", 15 + p.cell_scale),
                   bool(reverse), h, c, out)
    return out
