"""QUANTIZED_LSTM (OperationCode 95, feature level 4): one int8 LSTM step with an int16 cell.

Inputs (AOSP common/types/operations/include/QLSTM.h): 0 input [B, I] (int8 asymm signed);
1-4 input-to-{input, forget, cell, output} weights [U, I] and 5-8 recurrent-to-* weights
[U, O] (quant8 symm; input gate ones optional: CIFG); 9-11 cell-to-{input, forget, output}
peephole weights [U] (quant16 symm, optional); 12-15 gate biases [U] (int32; input omitted with
CIFG); 16 projection weights [O, U] (quant8 symm) and 17 projection bias [O] (int32), optional;
18 previous output [B, O] (int8 asymm signed); 19 previous cell state [B, U] (quant16 symm,
scale a power of two <= 2**-9); 20-23 layer-norm weights [U] (quant16 symm, optional);
24 cell clip, 25 projection clip, 26-29 intermediate scales of the 4 gates (FLOAT32);
30 hidden-state zero point (INT32), 31 hidden-state scale (FLOAT32).
Outputs: 0 output state out [B, O], 1 cell state out [B, U], 2 output [B, O].

validate: counts and types (common/types/operations/src/QLSTM.cpp), always FL4; prepare: the
omitted-operand and shape rules of common/cpu_operations/QLSTM.cpp ``qlstm::prepare``
(OP_FAILED); execute: nnsim.kernels.qlstm.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.qlstm import qlstm
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL4, OperandType, OperationCode

T = OperandType
S8, Q8S, Q16, I32, F32 = (T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_QUANT8_SYMM,
                          T.TENSOR_QUANT16_SYMM, T.TENSOR_INT32, T.FLOAT32)
INPUT_TYPES = ([S8] + [Q8S] * 8 + [Q16] * 3 + [I32] * 4 + [Q8S, I32, S8, Q16] + [Q16] * 4
               + [F32] * 6 + [T.INT32, F32])
REQUIRED = (0, 2, 3, 4, 6, 7, 8, 13, 14, 15, 18, 19)


def validate(ctx):
    ctx.check_counts(32, 3)
    ctx.check_input_types(INPUT_TYPES)
    ctx.check_output_types((S8, Q16, S8))
    return FL4


def _shape_is(ctx, i, shape, what):
    dims = ctx.input_shape(i)
    cm.check(ctx, tuple(dims) == tuple(shape),
             f"{what} (input {i}) has shape {tuple(dims)}, expected {tuple(shape)}")


def _all_or_none(flags):
    return all(flags) or not any(flags)


def _check(ctx):
    """qlstm::prepare: returns (batch, units, output size)."""
    has = ctx.has_input
    for i in REQUIRED:
        cm.check(ctx, has(i), f"required input {i} is omitted")
    xs = ctx.input_shape(0)
    cm.check(ctx, len(xs) == 2, f"input has rank {len(xs)}, expected 2")
    batch, n_in = xs
    cm.check(ctx, len(ctx.input_shape(4)) == 2, "input-to-output weights must have rank 2")
    units = ctx.input_shape(4)[0]
    cm.check(ctx, len(ctx.input_shape(8)) == 2, "recurrent-to-output weights must have rank 2")
    n_out = ctx.input_shape(8)[1]
    for i in (1, 2, 3, 4):
        if has(i):
            _shape_is(ctx, i, (units, n_in), "input weights")
    for i in (5, 6, 7, 8):
        if has(i):
            _shape_is(ctx, i, (units, n_out), "recurrent weights")
    cm.check(ctx, has(1) == has(5), "CIFG weights must be all present or all omitted")
    cifg = not has(1)
    for i in (9, 10, 11):
        if has(i):
            _shape_is(ctx, i, (units,), "peephole weights")
    cm.check(ctx, ((has(9) or cifg) and has(10) and has(11)) or not (has(9) or has(10) or has(11)),
             "peephole weights must be all present or all omitted")
    if cifg:
        cm.check(ctx, not has(12), "input gate bias is present when CIFG is used")
    else:
        cm.check(ctx, has(12), "input gate bias is omitted")
    for i in (12, 13, 14, 15):
        if has(i):
            _shape_is(ctx, i, (units,), "gate bias")
    if has(16):
        _shape_is(ctx, 16, (n_out, units), "projection weights")
    if has(17):
        _shape_is(ctx, 17, (n_out,), "projection bias")
    _shape_is(ctx, 18, (batch, n_out), "previous output")
    _shape_is(ctx, 19, (batch, units), "previous cell state")
    for i in (20, 21, 22, 23):
        if has(i):
            _shape_is(ctx, i, (units,), "layer norm weights")
    if cifg:
        cm.check(ctx, not has(20), "input layer norm weights are present when CIFG is used")
        cm.check(ctx, _all_or_none([has(i) for i in (21, 22, 23)]),
                 "layer norm weights must be all present or all omitted")
    else:
        cm.check(ctx, _all_or_none([has(i) for i in (20, 21, 22, 23)]),
                 "layer norm weights must be all present or all omitted")
    return batch, units, n_out


def prepare(ctx):
    batch, units, n_out = _check(ctx)
    for i, shape in enumerate(((batch, n_out), (batch, units), (batch, n_out))):
        ctx.set_output_shape(i, shape)


def execute(ctx):
    _check(ctx)
    get, op = ctx.input, ctx.input_operand
    has_peep = any(ctx.has_input(i) for i in (9, 10, 11))
    has_ln = any(ctx.has_input(i) for i in (20, 21, 22, 23))
    scales = {"input": op(0).scale, "input_zp": op(0).zero_point, "prev_out": op(18).scale,
              "prev_out_zp": op(18).zero_point, "cell": op(19).scale,
              "input_to": [op(i).scale for i in (1, 2, 3, 4)],
              "recurrent_to": [op(i).scale for i in (5, 6, 7, 8)],
              "cell_to": [op(i).scale for i in (9, 10, 11)],
              "layer_norm": [op(i).scale for i in (20, 21, 22, 23)],
              "projection": op(16).scale}
    try:
        out, cell = qlstm(
            get(0)[np.newaxis], get(18), get(19), [get(i) for i in (1, 2, 3, 4)],
            [get(i) for i in (5, 6, 7, 8)],
            [get(i) for i in (9, 10, 11)] if has_peep else None,
            [get(i) for i in (12, 13, 14, 15)],
            [get(i) for i in (20, 21, 22, 23)] if has_ln else None,
            get(16), get(17), scales, (ctx.scalar(24), ctx.scalar(25)),
            [ctx.scalar(i) for i in (26, 27, 28, 29)], ctx.scalar(30), ctx.scalar(31))
    except ValueError as err:
        cm.check(ctx, False, str(err))
    ctx.set_output(0, out[0])
    ctx.set_output(1, cell)
    ctx.set_output(2, out[0])


SPEC = OperationSpec(OperationCode.QUANTIZED_LSTM, validate, prepare, execute,
                     allow_omitted_operand=True)
