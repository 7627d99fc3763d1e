"""QUANTIZED_LSTM (NNAPI 95, feature level 4): the int8 x int16-cell LSTM, bit-exact with AOSP.

Semantics of AOSP common/cpu_operations/QLSTM.cpp ``qlstm::execute`` with the helpers of
common/QuantUtils.{h,cpp} (``MatrixBatchVectorMultiplyAccumulate``, ``ApplyLayerNorm``,
``ApplySigmoid``, ``ApplyTanh``, ``CwiseMul``, ``CwiseAdd``, ``CwiseClipping``,
``VectorBatchVectorCwiseProductAccumulate``), evaluated step by step with the time loop inside
the jitted core (the NNAPI op runs one step; the loop lets a sequence reuse the core).

Per gate g (forget, cell, input, output in AOSP's order), starting from 0 in int16:

* ``g += clamp16(MBQM(eff_in[r] + x . W_in[r], in_scale))`` then the same for the recurrent
  weights and the previous output; ``eff_* = -zero_point * rowsum(W)`` (the gate bias is *not*
  added here: AOSP passes ``bias=nullptr``, so the gate bias only takes part through layer norm);
* peephole: ``g += clamp16(MBQM(w_c * c, peep_scale))`` over ``batch * output_size`` elements of
  the flat cell buffer with ``w_c[k % output_size]`` (AOSP passes ``outputSize`` as the vector
  size); input / forget read the previous cell state, output the new one;
* layer norm (``ApplyLayerNorm``): integer mean / variance with the 2**20 overflow guard,
  ``GetInvSqrtQuantizedMultiplierExp``, weight, bias, ``MBQM(., ln_scale, shift + 12)``; the
  variance floor is ``min(1, int(10000 * ln_scale))`` (AOSP writes min, so it is 0 or 1);
* sigmoid / tanh: gemmlowp int16 fixed point with 3 integer bits; CIFG: ``i = 32767 - f``.

``c = sat16(w16(RDBPOT(f * c_prev, 15)) + w16(RDBPOT(i * g, 30 + cell_shift)))``, clipped to
``+-cell_clip``; ``h = clamp8(MBQM(o * tanh_{cell_shift + 15}(c), 2**-30 / hidden_scale) -
hidden_zp)`` (``ApplyTanh`` does nothing for integer bits outside 0..6, so the input-gate buffer
is used as is); with projection ``out = clamp8(MBQM(proj_eff_bias + h . P) + out_zp)`` clipped
to ``+-proj_clip``, else ``out = h`` (flat copy). The scales are precomputed by the wrapper with
AOSP's float32 / double rules.
"""
from __future__ import annotations

import math

import numpy as np

from nnsim.kernels._builtins import greater, lesser, zeros

from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import (multiply_by_quantized_multiplier, quantize_multiplier,
                                       rounding_divide_by_pot, wrap_int32)
from nnsim.kernels.normalization import _inv_sqrt_multiplier
from nnsim.kernels.fixed_point16 import logistic16, tanh16, w16

GATE_INPUT, GATE_FORGET, GATE_CELL, GATE_OUTPUT = 0, 1, 2, 3
# rows of the per-gate int64 parameter table ``gp`` [11, 4]
IN_M, IN_S, REC_M, REC_S, LN_M, LN_S, LN_LIMIT, HAS_LN, PEEP_M, PEEP_S, HAS_PEEP = range(11)
# entries of the scalar parameter vector ``p``
(P_CIFG, P_CELL_SHIFT, P_CELL_CLIP, P_HID_M, P_HID_S, P_HID_ZP, P_HAS_PROJ, P_PROJ_M,
 P_PROJ_S, P_PROJ_CLIP, P_OUT_ZP) = range(11)


@njit(inner=True)
def _matvec_acc(inp, bias, w, mult, shift, zp, lo, hi, acc):
    """MatrixBatchVectorMultiplyAccumulate: acc[b*rows+r] = clamp(MBQM(bias + in.w) + zp + acc)."""
    batch, depth = inp.shape
    rows = w.shape[0]
    for b in range(batch):
        for r in range(rows):
            s = np.int64(bias[r])
            for d in range(depth):
                s += np.int64(inp[b, d]) * np.int64(w[r, d])
            v = multiply_by_quantized_multiplier(wrap_int32(s), mult, shift) + zp
            v += acc[b * rows + r]
            acc[b * rows + r] = lesser(greater(v, lo), hi)


@njit(inner=True)
def _peephole_acc(vec, v_size, cell, n, mult, shift, acc):
    """VectorBatchVectorCwiseProductAccumulate over the first ``n`` flat elements."""
    for k in range(n):
        prod = multiply_by_quantized_multiplier(np.int64(vec[k % v_size]) * np.int64(cell[k]),
                                                mult, shift)
        acc[k] = lesser(greater(prod + acc[k], -32768), 32767)


@njit(inner=True)
def _layer_norm(g, weights, bias, mult, shift, limit, batch, units):
    """ApplyLayerNorm in place on the flat [batch * units] gate buffer."""
    guard = np.int64(1 << 20)
    for b in range(batch):
        base = b * units
        total = np.int64(0)
        total_sq = np.int64(0)
        for j in range(units):
            v = g[base + j]
            total += v
            total_sq += v * v
        num = total * 1024
        mean = wrap_int32(num // units if num >= 0 else -((-num) // units))
        variance = total_sq * (guard // units) - mean * mean
        v2 = wrap_int32(variance // guard if variance >= 0 else -((-variance) // guard))
        if v2 < 1:
            v2 = np.int64(limit)
        inv_m, inv_s = _inv_sqrt_multiplier(v2)
        for j in range(units):
            shifted = wrap_int32(1024 * g[base + j] - mean)
            rescaled = multiply_by_quantized_multiplier(shifted, inv_m, inv_s)
            val3 = wrap_int32(rescaled * np.int64(weights[j]) + np.int64(bias[j]))
            val4 = (val3 + 512) // 1024 if val3 > 0 else -((-(val3 - 512)) // 1024)
            val5 = multiply_by_quantized_multiplier(val4, mult, shift + 12)
            g[base + j] = lesser(greater(val5, -32768), 32767)


@njit(inner=True)
def _gate(gate, x, h, c_peep, w_in, w_rec, eff_in, eff_rec, peep, ln_w, ln_b, gp, batch,
          units, n_out, acc):
    """One gate's pre-activation (matmuls, peephole, layer norm) into ``acc``."""
    acc[:] = 0
    _matvec_acc(x, eff_in[gate], w_in[gate], gp[IN_M, gate], gp[IN_S, gate], 0, -32768, 32767,
                acc)
    _matvec_acc(h, eff_rec[gate], w_rec[gate], gp[REC_M, gate], gp[REC_S, gate], 0, -32768,
                32767, acc)
    if gp[HAS_PEEP, gate]:
        _peephole_acc(peep[gate], n_out, c_peep, batch * n_out, gp[PEEP_M, gate],
                      gp[PEEP_S, gate], acc)
    if gp[HAS_LN, gate]:
        _layer_norm(acc, ln_w[gate], ln_b[gate], gp[LN_M, gate], gp[LN_S, gate],
                    gp[LN_LIMIT, gate], batch, units)


@njit
def _qlstm_core(x, prev_out, prev_cell, w_in, w_rec, eff_in, eff_rec, peep, ln_w, ln_b, gp,
                proj_w, proj_b, p, out, cell_out):
    steps, batch, _ = x.shape
    units = w_in.shape[1]
    n_out = prev_out.shape[1]
    n = batch * units
    h = prev_out.copy()
    c = prev_cell.reshape(n).astype(np.int64)
    fg = zeros(n, np.int64)
    cg = zeros(n, np.int64)
    ig = zeros(n, np.int64)
    og = zeros(n, np.int64)
    hidden = zeros((batch, units), np.int8)
    res = zeros(batch * n_out, np.int64)
    shift_ic = 30 + p[P_CELL_SHIFT]
    tanh_bits = p[P_CELL_SHIFT] + 15
    clip = p[P_CELL_CLIP]
    for t in range(steps):
        xt = x[t]
        _gate(GATE_FORGET, xt, h, c, w_in, w_rec, eff_in, eff_rec, peep, ln_w, ln_b, gp, batch,
              units, n_out, fg)
        for k in range(n):
            fg[k] = logistic16(fg[k], 3)
        _gate(GATE_CELL, xt, h, c, w_in, w_rec, eff_in, eff_rec, peep, ln_w, ln_b, gp, batch,
              units, n_out, cg)
        for k in range(n):
            cg[k] = tanh16(cg[k], 3)
        if p[P_CIFG]:
            for k in range(n):
                ig[k] = 32767 - fg[k]
        else:
            _gate(GATE_INPUT, xt, h, c, w_in, w_rec, eff_in, eff_rec, peep, ln_w, ln_b, gp,
                  batch, units, n_out, ig)
            for k in range(n):
                ig[k] = logistic16(ig[k], 3)
        for k in range(n):
            kept = w16(rounding_divide_by_pot(fg[k] * c[k], np.int64(15)))
            added = w16(rounding_divide_by_pot(ig[k] * cg[k], shift_ic))
            v = lesser(greater(kept + added, -32768), 32767)
            if clip > 0:
                v = lesser(greater(v, -clip), clip)
            c[k] = v
        _gate(GATE_OUTPUT, xt, h, c, w_in, w_rec, eff_in, eff_rec, peep, ln_w, ln_b, gp, batch,
              units, n_out, og)
        for k in range(n):
            og[k] = logistic16(og[k], 3)
            th = tanh16(c[k], tanh_bits) if 0 <= tanh_bits <= 6 else ig[k]
            v = multiply_by_quantized_multiplier(og[k] * th, p[P_HID_M], p[P_HID_S])
            hidden[k // units, k % units] = lesser(greater(v - p[P_HID_ZP], -128), 127)
        if p[P_HAS_PROJ]:
            res[:] = 0
            _matvec_acc(hidden, proj_b, proj_w, p[P_PROJ_M], p[P_PROJ_S], p[P_OUT_ZP], -128, 127,
                        res)
            pc = p[P_PROJ_CLIP]
            if pc > 0:
                for k in range(batch * n_out):
                    res[k] = lesser(greater(res[k], -pc), pc)
        else:
            flat = hidden.reshape(n)
            for k in range(batch * n_out):
                res[k] = flat[k]
        for b in range(batch):
            for j in range(n_out):
                h[b, j] = res[b * n_out + j]
                out[t, b, j] = res[b * n_out + j]
    for k in range(n):
        cell_out[k // units, k % units] = c[k]


def _f32(v):
    return np.float32(v)


def _qm(real):
    """AOSP QuantizeMultiplier on the (float32 or double) real multiplier."""
    if not math.isfinite(float(real)):
        raise ValueError(f"effective scale {real} is not finite")
    return quantize_multiplier(float(real))


def _rowsum_times(w, zero_point):
    """PrecomputeZeroPointTimesWeightWithBias without a bias: zero_point * rowsum(W) (int32)."""
    return (w.astype(np.int64).sum(axis=1) * int(zero_point)).astype(np.int32)


def qlstm(x, prev_out, prev_cell, input_to, recurrent_to, cell_to, biases, layer_norm,
          projection, projection_bias, scales, clips, intermediate_scales, hidden_zp,
          hidden_scale):
    """Run QUANTIZED_LSTM over ``x`` [T, B, I] (int8), returning (outputs [T, B, O] int8,
    cell state [B, U] int16).

    ``input_to`` / ``recurrent_to``: four int8 weights in NNAPI gate order (input, forget, cell,
    output), the input gate's None with CIFG; ``cell_to``: three int16 peephole vectors (input,
    forget, output) or None; ``biases``: four int32 gate biases (only used by layer norm);
    ``layer_norm``: four int16 weights or None; ``scales``: dict of the operands' float32
    scales and zero points ('input', 'input_zp', 'prev_out', 'prev_out_zp', 'cell',
    'input_to', 'recurrent_to', 'cell_to', 'layer_norm', 'projection'), the per-gate entries
    being 4- (or 3-) element lists; ``clips``: (cell clip, projection clip).
    Raises ValueError for parameters AOSP's execute rejects (cell scale not a power of two or
    above 2**-9).
    """
    units = input_to[GATE_OUTPUT].shape[0]
    n_out = recurrent_to[GATE_OUTPUT].shape[1]
    n_in = x.shape[2]
    cifg = input_to[GATE_INPUT] is None
    cell_scale = _f32(scales["cell"])
    log2 = _f32(np.log(cell_scale) * (_f32(1.0) / np.log(_f32(2.0))))  # CheckedLog2, in float
    rounded = np.round(log2)
    if not abs(log2 - rounded) < 1e-3:
        raise ValueError(f"cell state scale {float(cell_scale)} is not a power of two")
    cell_shift = int(rounded)
    if cell_shift > -9:
        raise ValueError(f"cell state scale 2**{cell_shift} is above 2**-9")
    if 30 + cell_shift < 0:
        raise ValueError(f"cell state scale 2**{cell_shift} is below 2**-30")

    w_in = np.zeros((4, units, n_in), np.int8)
    w_rec = np.zeros((4, units, n_out), np.int8)
    eff_in = np.zeros((4, units), np.int32)
    eff_rec = np.zeros((4, units), np.int32)
    peep = np.zeros((4, units), np.int16)
    ln_w = np.zeros((4, units), np.int16)
    ln_b = np.zeros((4, units), np.int32)
    gp = np.zeros((11, 4), np.int64)
    in_s, out_s = _f32(scales["input"]), _f32(scales["prev_out"])
    peep_gate = {0: GATE_INPUT, 1: GATE_FORGET, 2: GATE_OUTPUT}
    for g in range(4):
        if g == GATE_INPUT and cifg:
            continue
        inter = _f32(intermediate_scales[g])
        w_in[g], w_rec[g] = input_to[g], recurrent_to[g]
        eff_in[g] = _rowsum_times(input_to[g], -scales["input_zp"])
        eff_rec[g] = _rowsum_times(recurrent_to[g], -scales["prev_out_zp"])
        gp[IN_M, g], gp[IN_S, g] = _qm(_f32(scales["input_to"][g]) * in_s / inter)
        gp[REC_M, g], gp[REC_S, g] = _qm(_f32(scales["recurrent_to"][g]) * out_s / inter)
        if layer_norm is not None and layer_norm[g] is not None:
            ln_scale = _f32(scales["layer_norm"][g])
            ln_w[g], ln_b[g] = layer_norm[g], biases[g]
            gp[LN_M, g], gp[LN_S, g] = _qm(ln_scale)
            gp[LN_LIMIT, g] = min(1, int(_f32(10000) * ln_scale))
            gp[HAS_LN, g] = 1
    if cell_to is not None:
        if n_out > units:
            raise ValueError("peephole with output size > number of units reads past the "
                             "peephole weights in AOSP")
        for k, g in peep_gate.items():
            if cell_to[k] is None or (g == GATE_INPUT and cifg):
                continue
            inter = _f32(intermediate_scales[g])
            peep[g] = cell_to[k]
            # std::pow(2, cellShift) is a double: the product is evaluated in double
            real = (2.0 ** cell_shift) * float(_f32(scales["cell_to"][k])) / float(inter)
            gp[PEEP_M, g], gp[PEEP_S, g] = _qm(real)
            gp[HAS_PEEP, g] = 1

    p = np.zeros(11, np.int64)
    p[P_CIFG] = int(cifg)
    p[P_CELL_SHIFT] = cell_shift
    cell_clip, proj_clip = _f32(clips[0]), _f32(clips[1])
    if cell_clip > 0:
        p[P_CELL_CLIP] = w16(int(min(max(cell_clip / cell_scale, _f32(-32768)), _f32(32767))))
    hidden_scale = _f32(hidden_scale)
    p[P_HID_M], p[P_HID_S] = _qm(2.0 ** -15 / float(hidden_scale) * 2.0 ** -15)
    p[P_HID_ZP] = ((int(hidden_zp) + 128) & 0xFF) - 128     # read as int8_t
    p[P_OUT_ZP] = int(scales["prev_out_zp"])
    proj_w = np.zeros((max(n_out, 1), units), np.int8)
    proj_b = np.zeros(max(n_out, 1), np.int32)
    if projection is not None:
        proj_scale = _f32(scales["projection"])
        proj_w = np.ascontiguousarray(projection, np.int8)
        bias = np.zeros(n_out, np.int64) if projection_bias is None else \
            np.asarray(projection_bias, np.int64)
        proj_b = (bias + projection.astype(np.int64).sum(axis=1) * p[P_HID_ZP]).astype(np.int32)
        p[P_HAS_PROJ] = 1
        p[P_PROJ_M], p[P_PROJ_S] = _qm(proj_scale * hidden_scale / out_s)
        if proj_clip > 0:
            # AOSP divides by the projection *weights* scale
            p[P_PROJ_CLIP] = int(min(max(proj_clip / proj_scale, _f32(-128)), _f32(127)))
            p[P_PROJ_CLIP] = ((p[P_PROJ_CLIP] + 128) & 0xFF) - 128

    steps, batch = x.shape[0], x.shape[1]
    out = np.empty((steps, batch, n_out), np.int8)
    cell_out = np.empty((batch, units), np.int16)
    _qlstm_core(np.ascontiguousarray(x, np.int8), np.ascontiguousarray(prev_out, np.int8),
                np.ascontiguousarray(prev_cell, np.int16), w_in, w_rec, eff_in, eff_rec, peep,
                ln_w, ln_b, gp, proj_w, proj_b, p, out, cell_out)
    return out, cell_out
