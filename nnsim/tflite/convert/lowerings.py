"""TFLite ops the delegate expresses as several NNAPI operations (tflite-nnapi-delegate.md 4).

PACK below FL6 (CONCATENATION + RESHAPE), UNPACK (RESHAPE + SPLIT), SPLIT_V (N x SLICE),
SQUARED_DIFFERENCE (SUB + MUL), COS (SUB + SIN) and HARD_SWISH below SDK 30 (3 x MUL + ADD),
as upstream's ``NNAPIOpBuilder::Transform*IntoSupportedOps``. Every operation added here maps to
the originating TFLite node.
"""
from __future__ import annotations

import math

import numpy as np

from nnsim.tflite.convert.builder import (INT8_CONVERSION, SCALAR_AS_TENSOR,
                                          USE_INT8_ASYMM_SIGNED, ConvertError)
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType as TT
from nnsim.tflite.validate import legacy_quant_params, split_v_unknown_size
from nnsim.types import OperandType as T
from nnsim.types import OperationCode as C

_QUANT = (TT.UINT8, TT.INT8)
_F32 = np.float32


def _opt(op, name, default=None):
    return getattr(op.options, name, default) if op.options is not None else default


def _norm_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _value(b, index: int, k: int = 0):
    t = b.tensors[index]
    if t.data is None:
        raise ConvertError(f"node {b.node}: tensor {index} '{t.name}' must be constant")
    return np.asarray(t.data).reshape(-1)[k]


def pack_lowered(b, op) -> None:
    """PACK below FL6: CONCATENATION into an intermediate, then RESHAPE to the output."""
    x = b.tensors[op.inputs[0]]
    rank = len(x.shape)
    axis = _norm_axis(int(_opt(op, "axis", 0)), rank + 1)
    if not 0 <= axis < rank:
        raise ConvertError(f"node {b.node}: PACK axis {axis} cannot be lowered")
    total = 0
    for index in op.inputs:
        total += b.tensors[index].shape[axis]
        b.tensor_input(index, USE_INT8_ASYMM_SIGNED)
    b.scalar_int32(axis)
    dims = tuple(total if i == axis else d for i, d in enumerate(x.shape))
    inter = b.intermediate_output(x.type, dims, *legacy_quant_params(x))
    b.finalize(C.CONCATENATION)
    b.append_reshape(inter, op.outputs[0])


def _unpack_lowered(b, op) -> None:
    """UNPACK: RESHAPE merging dims axis and axis+1, then SPLIT(axis, num)."""
    x = b.tensors[op.inputs[0]]
    rank = len(x.shape)
    axis = _norm_axis(int(_opt(op, "axis", 0)), rank)
    num = int(_opt(op, "num", 0))
    if not (0 <= axis < rank - 1) or num != x.shape[axis] or num != len(op.outputs):
        raise ConvertError(f"node {b.node}: UNPACK with axis {axis} cannot be lowered")
    shape = list(x.shape[:axis]) + [x.shape[axis] * x.shape[axis + 1]] + list(x.shape[axis + 2:])
    b.tensor_input(op.inputs[0], USE_INT8_ASYMM_SIGNED)
    b.vector_int32(shape)
    scale, zp = legacy_quant_params(x)
    if x.type in _QUANT and scale == 0.0:
        scale = 1.0
    inter = b.intermediate_output(x.type, shape, scale, zp)
    b.finalize(C.RESHAPE)
    b.ins.append(inter)
    b.scalar_int32(axis)
    b.scalar_int32(num)
    for o in op.outputs:
        b.tensor_output(o, USE_INT8_ASYMM_SIGNED)
    b.finalize(C.SPLIT)


def _split_v_lowered(b, op) -> None:
    """SPLIT_V: one SLICE(input, begin, size) per output, the -1 size resolved."""
    x = b.tensors[op.inputs[0]]
    rank = len(x.shape)
    sizes = [int(s) for s in np.asarray(b.tensors[op.inputs[1]].data).reshape(-1)]
    axis = _norm_axis(int(_value(b, op.inputs[2])), rank)
    unknown = split_v_unknown_size(b.sg, op)
    begin_at = 0
    for k, size in enumerate(sizes):
        size = unknown if size == -1 else size
        if size <= 0:
            raise ConvertError(f"node {b.node}: SPLIT_V split size {size}")
        begin = [begin_at if i == axis else 0 for i in range(rank)]
        extent = [size if i == axis else x.shape[i] for i in range(rank)]
        begin_at += size
        b.tensor_input(op.inputs[0], USE_INT8_ASYMM_SIGNED)
        b.vector_int32(begin)
        b.vector_int32(extent)
        b.tensor_output(op.outputs[k], USE_INT8_ASYMM_SIGNED)
        b.finalize(C.SLICE)


def _squared_difference_lowered(b, op) -> None:
    """SQUARED_DIFFERENCE: d = SUB(a, b) into a temporary sized for sqrt of the output range,
    then MUL(d, d)."""
    lhs, out = b.tensors[op.inputs[0]], b.tensors[op.outputs[0]]
    out_scale, out_zp = legacy_quant_params(out)
    max_output, zp = _F32(0.0), 0
    if lhs.type == TT.FLOAT32:
        nn = T.TENSOR_FLOAT32
    elif lhs.type == TT.INT32:
        nn = T.TENSOR_INT32
    elif lhs.type == TT.UINT8:
        max_output, zp, nn = _F32(255 - out_zp) * _F32(out_scale), 128, T.TENSOR_QUANT8_ASYMM
    elif lhs.type == TT.INT8:
        max_output, nn = _F32(127 - out_zp) * _F32(out_scale), T.TENSOR_QUANT8_ASYMM_SIGNED
    else:
        raise ConvertError(f"node {b.node}: SQUARED_DIFFERENCE of {lhs.type.name}")
    scale = _F32(2.0) * np.sqrt(_F32(max_output)) / _F32(254.0)
    flags = SCALAR_AS_TENSOR | USE_INT8_ASYMM_SIGNED
    b.tensor_input(op.inputs[0], flags)
    b.tensor_input(op.inputs[1], flags)
    b.scalar_int32(0)
    diff = b.additional_output(out.shape, nn, float(scale), zp)
    b.finalize(C.SUB)
    b.ins += [diff, diff]
    b.scalar_int32(0)
    b.tensor_output(op.outputs[0], USE_INT8_ASYMM_SIGNED)
    b.finalize(C.MUL)


def _cos_lowered(b, op) -> None:
    """COS: SIN(SUB(pi/2 filled tensor, x))."""
    x, out = b.tensors[op.inputs[0]], b.tensors[op.outputs[0]]
    b.new_constant(T.TENSOR_FLOAT32, x.shape, np.full(int(np.prod(x.shape)), math.pi / 2),
                   np.float32, *legacy_quant_params(x))
    b.tensor_input(op.inputs[0])
    b.scalar_int32(0)
    diff = b.additional_output(out.shape, T.TENSOR_FLOAT32)
    b.finalize(C.SUB)
    b.ins.append(diff)
    b.tensor_output(op.outputs[0])
    b.finalize(C.SIN)


def _quant_params_for_range(lo, hi) -> tuple[float, int]:
    """CalculateQuantizationParams: scale (max-min)/255, zero point clamped to [0, 255]."""
    lo, hi = _F32(lo), _F32(hi)
    scale = (hi - lo) / _F32(255.0)
    if lo > 0:
        zp = 0
    elif hi < 0:
        zp = 255
    else:
        zp = int((_F32(0.0) - lo) / scale)
    return float(scale), zp


def hard_swish_lowered(b, op, need_int8) -> None:
    """HARD_SWISH below SDK 30: y = 0.5x * relu1(x/3) + 0.5x as 3 MUL + ADD (4)."""
    x_index, y_index = op.inputs[0], op.outputs[0]
    x = b.tensors[x_index]
    in_scale, in_zp = legacy_quant_params(x)
    in_scale = _F32(in_scale)
    flags = INT8_CONVERSION if need_int8 else 0
    if need_int8:
        in_zp += 128
    quant = x.type in _QUANT
    nn = T.TENSOR_QUANT8_ASYMM if quant else T.TENSOR_FLOAT32
    in_min = _F32(0 - in_zp) * in_scale if quant else _F32(0.0)
    in_max = _F32(255 - in_zp) * in_scale if quant else _F32(0.0)

    def constant(value):
        if quant:
            b.vector([64], T.TENSOR_QUANT8_ASYMM, np.uint8, float(_F32(value) / _F32(64)), 0)
        else:
            b.vector_float32([value])

    s1_min = max(in_min / _F32(3.0), _F32(-1.0))
    s1_max = min(in_max / _F32(3.0), _F32(1.0))
    s1_q = _quant_params_for_range(s1_min, s1_max) if quant else (0.0, 0)
    b.tensor_input(x_index, flags)
    constant(_F32(1.0) / _F32(3.0))
    b.scalar_int32(2)  # FUSED_RELU1
    s1 = b.additional_output(x.shape, nn, *s1_q)
    b.finalize(C.MUL)

    s2_min, s2_max = in_min / _F32(2.0), in_max / _F32(2.0)
    b.tensor_input(x_index, flags)
    constant(_F32(0.5))
    b.scalar_int32(0)
    s2 = b.additional_output(x.shape, nn, float(in_scale / _F32(2.0)), in_zp)
    b.finalize(C.MUL)

    b.ins += [s1, s2]
    b.scalar_int32(0)
    s3_q = (0.0, 0)
    if quant:
        hi = s1_max * s2_max if s1_max * s2_max > s1_min * s2_min else s1_min * s2_min
        s3_q = _quant_params_for_range(0.0, hi)
    s3 = b.additional_output(x.shape, nn, *s3_q)
    b.finalize(C.MUL)

    b.ins += [s2, s3]
    b.scalar_int32(0)
    b.tensor_output(y_index, flags)
    b.finalize(C.ADD)


LOWERINGS = {
    B.UNPACK: _unpack_lowered, B.SPLIT_V: _split_v_lowered,
    B.SQUARED_DIFFERENCE: _squared_difference_lowered, B.COS: _cos_lowered,
}
