"""Per-node mapping of the NNAPI delegate: the node loop of ``AddOpsAndTensors`` and ``Map``.

Reference: docs/reference/tflite-nnapi-delegate.md sections 3.1 (per-node flags), 3.5 (operand
order), 3.7 (DEQUANTIZE / QUANTIZE) and 4 (op mapping). For each node, in upstream order:
whole-node lowerings (PACK below FL6, UNPACK, SPLIT_V, SQUARED_DIFFERENCE, COS, HARD_SWISH below
SDK 30), then the input tensors with their per-op skips and substitutions, then the scalars of
``Map``, then the outputs, then DEQUANTIZE ops for hybrid weights, then the op itself, then an
appended RESHAPE (FULLY_CONNECTED keep_num_dims) or requantizing ADD (MEAN).
"""
from __future__ import annotations

import numpy as np

from nnsim.tflite.convert.builder import (FORCE_PER_CHANNEL, HALF_TO_FLOAT_CONVERSION,
                                          INT8_CONVERSION, SCALAR_AS_TENSOR,
                                          USE_INT8_ASYMM_SIGNED, ConvertError,
                                          is_sparse_weight_node)
from nnsim.tflite.convert.lowerings import (LOWERINGS, hard_swish_lowered, pack_lowered)
from nnsim.tflite.convert.recurrent import RECURRENT_MAPPERS, recurrent_input
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import MirrorPadMode
from nnsim.tflite.schema import TensorType as TT
from nnsim.tflite.validate import FL6, SDK_NNAPI13, is_hybrid_operator, legacy_quant_params
from nnsim.types import OperandType as T
from nnsim.types import OperationCode as C

_QUANT = (TT.UINT8, TT.INT8)
_F32 = np.float32

# 3.1 IsScalarInputSupported
SCALAR_INPUT_OPS = frozenset({
    B.ADD, B.MUL, B.SUB, B.DIV, B.EQUAL, B.NOT_EQUAL, B.GREATER, B.GREATER_EQUAL, B.LESS,
    B.LESS_EQUAL, B.POW, B.MAXIMUM, B.MINIMUM, B.PRELU, B.LEAKY_RELU})
# 3.1 NeedInt8Conversion: ops that need it when input 0 is int8
_INT8_INPUT0_OPS = frozenset({
    B.ADD, B.ARG_MAX, B.ARG_MIN, B.AVERAGE_POOL_2D, B.BATCH_TO_SPACE_ND, B.CONCATENATION,
    B.EQUAL, B.EXPAND_DIMS, B.GATHER, B.GREATER, B.GREATER_EQUAL, B.HARD_SWISH,
    B.L2_NORMALIZATION, B.LEAKY_RELU, B.LESS, B.LESS_EQUAL, B.LOGISTIC, B.MAXIMUM,
    B.MAX_POOL_2D, B.MEAN, B.MINIMUM, B.MUL, B.NOT_EQUAL, B.PAD, B.PADV2, B.PRELU,
    B.REDUCE_MAX, B.REDUCE_MIN, B.RELU, B.RELU_N1_TO_1, B.RELU6, B.RESIZE_BILINEAR,
    B.RESIZE_NEAREST_NEIGHBOR, B.RESHAPE, B.SLICE, B.SOFTMAX, B.SPACE_TO_BATCH_ND,
    B.SPACE_TO_DEPTH, B.DEPTH_TO_SPACE, B.STRIDED_SLICE, B.SUB, B.TANH, B.TILE, B.TOPK_V2,
    B.TRANSPOSE})
# 3.1: ops whose every input (not only input 0) gets INT8_CONVERSION
_INT8_ALL_INPUTS_OPS = frozenset({
    B.FULLY_CONNECTED, B.CONV_2D, B.DEPTHWISE_CONV_2D, B.ADD, B.MUL, B.SUB, B.CONCATENATION,
    B.MAXIMUM, B.MINIMUM, B.LEAKY_RELU, B.LESS, B.LESS_EQUAL, B.PRELU, B.GREATER,
    B.GREATER_EQUAL, B.EQUAL, B.NOT_EQUAL, B.SELECT})
_REDUCE_OPS = frozenset({B.REDUCE_ANY, B.REDUCE_MAX, B.REDUCE_MIN, B.REDUCE_PROD, B.SUM, B.MEAN})

# Ops whose Map adds nothing: TFLite builtin -> NNAPI operation (4).
_PLAIN = {
    B.ARG_MAX: C.ARGMAX, B.ARG_MIN: C.ARGMIN, B.HARD_SWISH: C.HARD_SWISH,
    B.L2_NORMALIZATION: C.L2_NORMALIZATION, B.DEQUANTIZE: C.DEQUANTIZE, B.FLOOR: C.FLOOR,
    B.RELU: C.RELU, B.RELU_N1_TO_1: C.RELU1, B.RELU6: C.RELU6, B.LOGISTIC: C.LOGISTIC,
    B.TANH: C.TANH, B.SPACE_TO_BATCH_ND: C.SPACE_TO_BATCH_ND,
    B.BATCH_TO_SPACE_ND: C.BATCH_TO_SPACE_ND, B.TRANSPOSE: C.TRANSPOSE, B.ABS: C.ABS,
    B.EXP: C.EXP, B.LOG: C.LOG, B.RSQRT: C.RSQRT, B.POW: C.POW, B.SLICE: C.SLICE,
    B.SIN: C.SIN, B.SQRT: C.SQRT, B.EMBEDDING_LOOKUP: C.EMBEDDING_LOOKUP,
    B.HASHTABLE_LOOKUP: C.HASHTABLE_LOOKUP, B.MAXIMUM: C.MAXIMUM, B.MINIMUM: C.MINIMUM,
    B.CAST: C.CAST, B.PRELU: C.PRELU, B.TILE: C.TILE, B.LOGICAL_OR: C.LOGICAL_OR,
    B.LOGICAL_AND: C.LOGICAL_AND, B.LOGICAL_NOT: C.LOGICAL_NOT, B.LESS: C.LESS,
    B.LESS_EQUAL: C.LESS_EQUAL, B.GREATER: C.GREATER, B.GREATER_EQUAL: C.GREATER_EQUAL,
    B.EQUAL: C.EQUAL, B.NOT_EQUAL: C.NOT_EQUAL, B.NEG: C.NEG, B.SELECT: C.SELECT,
    B.FILL: C.FILL, B.PACK: C.PACK, B.REVERSE_V2: C.REVERSE,
}
_ACT_OPS = {B.ADD: C.ADD, B.MUL: C.MUL, B.SUB: C.SUB, B.DIV: C.DIV}
_POOL_OPS = {B.AVERAGE_POOL_2D: C.AVERAGE_POOL_2D, B.MAX_POOL_2D: C.MAX_POOL_2D,
             B.L2_POOL_2D: C.L2_POOL_2D}
_KEEP_DIMS_BOOL_OPS = {B.REDUCE_ANY: C.REDUCE_ANY, B.REDUCE_MIN: C.REDUCE_MIN,
                       B.REDUCE_MAX: C.REDUCE_MAX, B.REDUCE_PROD: C.REDUCE_PROD,
                       B.SUM: C.REDUCE_SUM}


# -- small helpers ------------------------------------------------------------------------------

def _opt(op, name, default=None):
    return getattr(op.options, name, default) if op.options is not None else default


def _act(op) -> int:
    """TfLiteFusedActivation == NNAPI FuseCode numerically for NONE..RELU6 (2.2)."""
    return int(_opt(op, "fused_activation_function", 0))


def _padding(op) -> int:
    """schema Padding (SAME 0, VALID 1) -> TfLitePadding == NNAPI PaddingCode (SAME 1, VALID 2)."""
    return int(_opt(op, "padding", 0)) + 1


def _value(b, index: int, k: int = 0):
    t = b.tensors[index]
    if t.data is None:
        raise ConvertError(f"node {b.node}: tensor {index} '{t.name}' must be constant")
    return np.asarray(t.data).reshape(-1)[k]


def _norm_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def register_fp16_dequantize_inputs(b, nodes) -> None:
    """First pass of AddOpsAndTensors (3.5/3.7): constant fp16 inputs of DEQUANTIZE nodes are
    registered as TENSOR_FLOAT32 constants before anything else. The DEQUANTIZE node itself adds
    no op; its output is aliased to that operand, which is what FP16GraphPartitionHelper's
    rewiring of the consumers amounts to. The same pass notes the outputs of the sparse-weight
    nodes (``is_sparse_weight_node``), which add no op either: CONV_2D takes their dense value
    as a constant (``OpBuilder.sparse_weights``)."""
    for n in nodes:
        op = b.sg.operators[n]
        if _is_const_fp16_dequantize(b, op):
            b.node = n
            ann = b.tensor_input(op.inputs[0], HALF_TO_FLOAT_CONVERSION | SCALAR_AS_TENSOR)
            if op.outputs and op.outputs[0] >= 0:
                b.t2a.setdefault(op.outputs[0], ann)
        elif is_sparse_weight_node(b.sg, op) and op.outputs and op.outputs[0] >= 0:
            table = b.densify_outputs if op.builtin == B.DENSIFY else b.fp16_dequantize_outputs
            table[op.outputs[0]] = n
    b.ins, b.outs = [], []


def _is_const_fp16_dequantize(b, op) -> bool:
    if op.builtin != B.DEQUANTIZE or not op.inputs or op.inputs[0] < 0:
        return False
    t = b.tensors[op.inputs[0]]
    return t.type == TT.FLOAT16 and t.is_constant


def _need_int8_conversion(b, op) -> bool:
    """NeedInt8Conversion (3.1), before the ``target FL < 30`` test."""
    ts = b.tensors
    x = ts[op.inputs[0]].type if op.inputs and op.inputs[0] >= 0 else None
    code = op.builtin
    if code in (B.CONV_2D, B.DEPTHWISE_CONV_2D, B.FULLY_CONNECTED):
        if x == TT.INT8 and len(op.inputs) > 1 and op.inputs[1] >= 0:
            w = ts[op.inputs[1]]
            return w.type in _QUANT and w.quantization is not None
        return False
    if code == B.TRANSPOSE_CONV:  # quirk: global tensor #2, not the node's input 2
        return len(ts) > 2 and ts[2].type == TT.INT8
    if code == B.SELECT:
        return len(op.inputs) > 1 and ts[op.inputs[1]].type == TT.INT8
    return code in _INT8_INPUT0_OPS and x == TT.INT8


# -- the node -----------------------------------------------------------------------------------

def add_node(b, op) -> None:
    """One iteration of AddOpsAndTensors' second loop."""
    code = op.builtin
    if code == B.CUSTOM or code not in CONVERTIBLE:
        raise ConvertError(f"node {b.node}: {op.name} has no NNAPI mapping")
    if is_sparse_weight_node(b.sg, op):
        return  # DENSIFY (-> DEQUANTIZE): CONV_2D adds the dense weights (3.7)
    if code == B.DENSIFY:   # Validate refuses it: Map has no case for DENSIFY
        raise ConvertError(f"node {b.node}: DENSIFY of a non-constant input has no NNAPI "
                           f"mapping")
    x = b.tensors[op.inputs[0]] if op.inputs and op.inputs[0] >= 0 else None
    if code == B.PACK and b.fl < FL6:
        return pack_lowered(b, op)
    if code in LOWERINGS:
        return LOWERINGS[code](b, op)

    hybrid = is_hybrid_operator(b.sg, op)
    need_int8 = b.fl < SDK_NNAPI13 and _need_int8_conversion(b, op)
    use_signed = b.fl >= SDK_NNAPI13 and not hybrid
    if _is_const_fp16_dequantize(b, op):
        return
    in_flags = (SCALAR_AS_TENSOR if code in SCALAR_INPUT_OPS else 0) | \
               (USE_INT8_ASYMM_SIGNED if use_signed else 0)
    if code == B.HARD_SWISH and b.sdk < SDK_NNAPI13:  # the device SDK, not the target FL
        return hard_swish_lowered(b, op, need_int8)
    if code == B.PACK:  # NNAPI PACK takes the axis first
        b.scalar_int32(_norm_axis(int(_opt(op, "axis", 0)), len(x.shape) + 1))
    _add_inputs(b, op, in_flags, need_int8, use_signed, hybrid)
    nn_code = _map(b, op, need_int8, use_signed)

    out_flags = (INT8_CONVERSION if need_int8 else 0) | \
                (USE_INT8_ASYMM_SIGNED if use_signed else 0)
    fc_inter = mean_inter = -1
    for o in op.outputs:
        out = b.tensors[o]
        if code == B.FULLY_CONNECTED and _opt(op, "keep_num_dims", False):
            units = int(out.shape[-1])
            dims = (int(np.prod(out.shape)) // units, units)
            fc_inter = b.intermediate_output(out.type, dims, *legacy_quant_params(out))
        elif code == B.MEAN and legacy_quant_params(x) != legacy_quant_params(out):
            mean_inter = b.intermediate_output(out.type, out.shape, *legacy_quant_params(x),
                                               need_int8=need_int8)
        else:
            b.tensor_output(o, out_flags)
    _dequantize_where_needed(b, op)
    b.finalize(nn_code)
    if fc_inter >= 0:
        b.append_reshape(fc_inter, op.outputs[0])
    if mean_inter >= 0:
        b.append_requantize(mean_inter, op.outputs[0], out_flags)


def _add_inputs(b, op, flags, need_int8, use_signed, hybrid) -> None:
    """The input loop of AddOpsAndTensors with its per-op skips and substitutions (3.5, 4)."""
    code, ts = op.builtin, b.tensors
    for pos, index in enumerate(op.inputs):
        if index >= 0 and ts[index].type == TT.FLOAT16 and ts[index].is_constant:
            flags |= HALF_TO_FLOAT_CONVERSION  # sticky for the later inputs
        if code == B.TRANSPOSE_CONV:
            continue  # added by the mapping: the input order differs
        if code in RECURRENT_MAPPERS:
            recurrent_input(b, op, pos, index, flags, hybrid)
            continue
        if code == B.FULLY_CONNECTED and index < 0:
            continue  # omitted bias: a zero bias is added by the mapping
        if code == B.CONV_2D and pos == 1 and b.sparse_weights(index):
            continue
        if need_int8 and (pos == 0 or code in _INT8_ALL_INPUTS_OPS):
            b.tensor_input(index, flags | INT8_CONVERSION, hybrid)
            continue
        if code == B.SPLIT and index == op.inputs[0]:
            continue  # the axis becomes a scalar
        if code in (B.PAD, B.PADV2) and len(op.inputs) == 3 and pos == 2:
            _pad_value(b, index, need_int8)
            continue
        if code in (B.RESIZE_BILINEAR, B.RESIZE_NEAREST_NEIGHBOR):
            if pos == 0:  # the size tensor becomes two scalars
                b.tensor_input(index, flags, hybrid)
        elif code == B.TOPK_V2 and pos > 0:
            continue
        elif code == B.GATHER:
            if pos == 0:
                b.tensor_input(index, flags, hybrid)
        elif code == B.EXPAND_DIMS and pos == 1:
            continue
        elif code == B.BATCH_TO_SPACE_ND and pos == 2:
            continue  # crops are not passed (validated to be zero)
        elif code in (B.ARG_MAX, B.ARG_MIN):
            if pos == 0:
                b.tensor_input(index, flags, hybrid)
            else:
                _arg_axis(b, index)
        elif code in (B.MAXIMUM, B.MINIMUM):
            _max_min_operand(b, index, flags, hybrid, use_signed)
        elif code in _REDUCE_OPS and pos == 1:
            if len(ts[index].shape) == 0:
                b.vector_int32([_value(b, index)])
            else:
                b.tensor_input(index, flags, hybrid)
        elif code == B.FILL:
            _fill_input(b, pos, index)
        else:
            b.tensor_input(index, flags, hybrid)


def _pad_value(b, index, need_int8) -> None:
    if index < 0:
        return
    t = b.tensors[index]
    if t.type == TT.FLOAT16:
        if t.is_constant:  # upstream passes `data.f16->data`, the raw half bits, as a float
            b.scalar_float32(float(np.asarray(t.data).reshape(-1).view(np.uint16)[0]))
        else:
            b.single_value_as_scalar(index, T.TENSOR_FLOAT16)
    elif t.type == TT.FLOAT32:
        if t.is_constant:
            b.scalar_float32(_value(b, index))
        else:
            b.single_value_as_scalar(index, T.FLOAT32)
    elif t.type in _QUANT:
        if t.is_constant:
            v = int(_value(b, index))
            b.scalar_int32(v + 128 if t.type == TT.INT8 and need_int8 else v)
        else:
            b.single_value_as_scalar(index, T.INT32)
    else:
        raise ConvertError("Unsupported type of pad value for pad_v2")


def _arg_axis(b, index) -> None:
    t = b.tensors[index]
    if t.type == TT.INT32:
        if t.is_constant:
            b.scalar_int32(_value(b, index))
        else:
            b.single_value_as_scalar(index, T.INT32)
    elif t.type == TT.INT64:
        b.scalar_int32(_value(b, index))
    else:
        raise ConvertError(f"node {b.node}: ARG_MAX/ARG_MIN axis must be int32 or int64")


def _max_min_operand(b, index, flags, hybrid, use_signed) -> None:
    t = b.tensors[index]
    if len(t.shape) != 0:
        b.tensor_input(index, flags, hybrid)
        return
    if not t.is_constant:
        raise ConvertError(f"node {b.node}: a rank-0 MAXIMUM/MINIMUM operand must be constant")
    scale, zp = legacy_quant_params(t)
    v = np.asarray(t.data).reshape(-1)[:1]
    if t.type == TT.FLOAT32:
        b.new_constant(T.TENSOR_FLOAT32, (1,), v, np.float32, scale, zp)
    elif t.type == TT.UINT8:
        b.new_constant(T.TENSOR_QUANT8_ASYMM, (1,), v, np.uint8, scale, zp)
    elif t.type == TT.INT8:
        scale = 1.0 if scale == 0 else scale
        if use_signed:
            b.new_constant(T.TENSOR_QUANT8_ASYMM_SIGNED, (1,), v, np.int8, scale, zp)
        else:  # the value is shifted, the zero point is not (as upstream)
            b.new_constant(T.TENSOR_QUANT8_ASYMM, (1,), v.astype(np.int16) + 128, np.uint8,
                           scale, zp)
    elif t.type == TT.INT32:
        b.new_constant(T.TENSOR_INT32, (1,), v, np.int32, scale, zp)
    else:
        raise ConvertError(f"node {b.node}: unsupported rank-0 operand type {t.type.name}")


def _fill_input(b, pos, index) -> None:
    t = b.tensors[index]
    if pos == 0:
        if t.type == TT.INT32:
            b.tensor_input(index)
        elif t.type == TT.INT64:
            vals = np.asarray(t.data).reshape(-1).astype(np.int32)
            b.new_constant(T.TENSOR_INT32, t.shape, vals, np.int32, *legacy_quant_params(t))
        else:
            raise ConvertError(f"node {b.node}: FILL dims must be int32 or int64")
        return
    if t.type == TT.FLOAT32:
        if t.is_constant:
            b.scalar_float32(_value(b, index))
        else:
            b.single_value_as_scalar(index, T.FLOAT32)
    elif t.type in (TT.INT32, TT.INT64):
        if t.is_constant:
            b.scalar_int32(_value(b, index))
        else:
            b.single_value_as_scalar(index, T.INT32)
    else:
        raise ConvertError(f"node {b.node}: FILL value must be float32, int32 or int64")


def _dequantize_where_needed(b, op) -> None:
    """AddDequantizeOperatorsWhereNeeded (3.7): hybrid CONV_2D / FULLY_CONNECTED."""
    if op.builtin not in (B.CONV_2D, B.FULLY_CONNECTED) or not op.inputs or op.inputs[0] < 0:
        return
    if b.tensors[op.inputs[0]].type != TT.FLOAT32:
        return
    for pos in (1, 2):
        if pos >= len(op.inputs) or op.inputs[pos] < 0:
            continue
        t = b.tensors[op.inputs[pos]]
        if t.type in _QUANT:
            b.add_dequantize(pos, op.inputs[pos], t.type)


def _zero_bias(b, input_index, weights_index, n) -> None:
    """Map's add_zero_bias: float32 zeros, or int32 zeros with scale in_scale * w_scale."""
    if b.tensors[input_index].type == TT.FLOAT32:
        b.vector_float32(np.zeros(n, np.float32))
    else:
        s = _F32(legacy_quant_params(b.tensors[input_index])[0]) * \
            _F32(legacy_quant_params(b.tensors[weights_index])[0])
        b.vector_int32(np.zeros(n, np.int32), float(s), 0)


# -- Map: the scalars of each op and its NNAPI code (4) ------------------------------------------

def _map(b, op, need_int8, use_signed) -> C:
    code = op.builtin
    if code in _PLAIN:
        return _PLAIN[code]
    if code in _ACT_OPS:
        b.scalar_int32(_act(op))
        return _ACT_OPS[code]
    if code in _POOL_OPS:
        for v in (_padding(op), _opt(op, "stride_w"), _opt(op, "stride_h"),
                  _opt(op, "filter_width"), _opt(op, "filter_height"), _act(op)):
            b.scalar_int32(v)
        return _POOL_OPS[code]
    if code in _KEEP_DIMS_BOOL_OPS:
        b.scalar_bool(_opt(op, "keep_dims", False))
        return _KEEP_DIMS_BOOL_OPS[code]
    if code in RECURRENT_MAPPERS:
        return RECURRENT_MAPPERS[code](b, op, is_hybrid_operator(b.sg, op))
    return _MAPPERS[code](b, op, use_signed)


def _conv(b, op, _signed):
    for v in (_padding(op), _opt(op, "stride_w"), _opt(op, "stride_h")):
        b.scalar_int32(v)
    x, w = b.tensors[op.inputs[0]], b.tensors[op.inputs[1]]
    grouped = bool(x.shape) and bool(w.shape) and x.shape[3] != w.shape[3]
    if grouped:
        b.scalar_int32(x.shape[3] // w.shape[3])
    b.scalar_int32(_act(op))
    _dilation(b, op)
    return C.GROUPED_CONV_2D if grouped else C.CONV_2D


def _dilation(b, op) -> None:
    dw, dh = _opt(op, "dilation_w_factor", 1), _opt(op, "dilation_h_factor", 1)
    if dw != 1 or dh != 1:
        b.scalar_bool(False)  # NHWC
        b.scalar_int32(dw)
        b.scalar_int32(dh)


def _depthwise(b, op, _signed):
    for v in (_padding(op), _opt(op, "stride_w"), _opt(op, "stride_h"),
              _opt(op, "depth_multiplier"), _act(op)):
        b.scalar_int32(v)
    _dilation(b, op)
    return C.DEPTHWISE_CONV_2D


def _fully_connected(b, op, _signed):
    if not (len(op.inputs) == 3 and op.inputs[2] >= 0):
        _zero_bias(b, op.inputs[0], op.inputs[1], b.tensors[op.inputs[1]].shape[0])
    b.scalar_int32(_act(op))
    return C.FULLY_CONNECTED


def _softmax(b, op, _signed):
    b.scalar_float32(_opt(op, "beta", 0.0))  # the optional axis is not added (default -1)
    return C.SOFTMAX


def _reshape(b, op, _signed):
    if len(op.inputs) == 1:
        b.vector_int32(_opt(op, "new_shape", None) or [])
    return C.RESHAPE


def _resize_bilinear(b, op, _signed):
    out = b.tensors[op.outputs[0]]
    b.scalar_int32(out.shape[2])  # width
    b.scalar_int32(out.shape[1])  # height
    ac, hp = _opt(op, "align_corners", False), _opt(op, "half_pixel_centers", False)
    if ac or hp:
        b.scalar_bool(False)  # NHWC
        b.scalar_bool(ac)
        b.scalar_bool(hp)
    return C.RESIZE_BILINEAR


def _resize_nearest(b, op, _signed):
    b.scalar_int32(_value(b, op.inputs[1], 1))  # width = size[1]
    b.scalar_int32(_value(b, op.inputs[1], 0))  # height = size[0]
    b.scalar_bool(False)  # NHWC
    ac, hp = _opt(op, "align_corners", False), _opt(op, "half_pixel_centers", False)
    if ac or hp:
        b.scalar_bool(ac)
        b.scalar_bool(hp)
    return C.RESIZE_NEAREST_NEIGHBOR


def _squeeze(b, op, _signed):
    b.vector_int32(_opt(op, "squeeze_dims", None) or None)  # empty: an omitted operand
    return C.SQUEEZE


def _lrn(b, op, _signed):
    b.scalar_int32(_opt(op, "radius", 0))
    for name in ("bias", "alpha", "beta"):
        b.scalar_float32(_opt(op, name, 0.0))
    return C.LOCAL_RESPONSE_NORMALIZATION


def _concatenation(b, op, _signed):
    rank = len(b.tensors[op.inputs[0]].shape)
    b.scalar_int32(_norm_axis(int(_opt(op, "axis", 0)), rank))
    return C.CONCATENATION


def _pad(b, op, _signed):
    if len(op.inputs) == 2 or op.inputs[2] < 0:
        return C.PAD
    return C.PAD_V2


def _strided_slice(b, op, _signed):
    for name in ("begin_mask", "end_mask", "shrink_axis_mask"):
        b.scalar_int32(_opt(op, name, 0))
    return C.STRIDED_SLICE


def _transpose_conv(b, op, use_signed):
    """TRANSPOSE_CONV: inputs are 0 output_shape, 1 weights, 2 input, 3 bias (optional)."""
    x, w = op.inputs[2], op.inputs[1]
    b.tensor_input(x, USE_INT8_ASYMM_SIGNED if b.fl >= SDK_NNAPI13 else INT8_CONVERSION)
    b.tensor_input(w, FORCE_PER_CHANNEL)
    if len(op.inputs) == 4 and op.inputs[3] >= 0:
        b.tensor_input(op.inputs[3])
    else:
        _zero_bias(b, x, w, int(_value(b, op.inputs[0], 3)))
    b.tensor_input(op.inputs[0])
    for v in (_padding(op), _opt(op, "stride_w"), _opt(op, "stride_h"), _act(op)):
        b.scalar_int32(v)
    b.scalar_bool(False)  # NHWC
    return C.TRANSPOSE_CONV_2D


def _block(code):
    def mapper(b, op, _signed):
        b.scalar_int32(_opt(op, "block_size", 0))
        return code
    return mapper


def _mean(b, op, _signed):
    b.scalar_int32(1 if _opt(op, "keep_dims", False) else 0)  # INT32 for MEAN (4)
    return C.MEAN


def _leaky_relu(b, op, use_signed):
    t = b.tensors[op.inputs[0]]
    alpha = float(_opt(op, "alpha", 0.0))
    if t.type == TT.FLOAT32:
        b.new_constant(T.TENSOR_FLOAT32, (1,), [alpha], np.float32)
    elif t.type == TT.INT8 and b.fl >= SDK_NNAPI13:
        b.new_constant(T.TENSOR_QUANT8_ASYMM_SIGNED, (1,), [1], np.int8, alpha, 0)
    else:
        b.new_constant(T.TENSOR_QUANT8_ASYMM, (1,), [1], np.uint8, alpha, 0)
    return C.PRELU


def _topk(b, op, _signed):
    b.scalar_int32(_value(b, op.inputs[1]))
    return C.TOPK_V2


def _gather(b, op, _signed):
    b.scalar_int32(_opt(op, "axis", 0))
    b.tensor_input(op.inputs[1], 0)
    return C.GATHER


def _expand_dims(b, op, _signed):
    b.scalar_int32(_value(b, op.inputs[1]))
    return C.EXPAND_DIMS


def _split(b, op, _signed):
    b.scalar_int32(_value(b, op.inputs[0]))
    b.scalar_int32(_opt(op, "num_splits", 0))
    return C.SPLIT


def _log_softmax(b, op, _signed):
    b.scalar_float32(1.0)
    b.scalar_int32(-1)
    return C.LOG_SOFTMAX


def _quantize(b, op, _signed):
    x = op.inputs[0]
    if b.tensors[x].type in _QUANT:  # NNAPI QUANTIZE only quantizes from float (3.7)
        b.add_dequantize(0, x, TT.FLOAT32)
    return C.QUANTIZE


def _elu(b, op, _signed):
    b.scalar_float32(1.0)
    return C.ELU


def _batch_matmul(b, op, _signed):
    b.scalar_bool(_opt(op, "adj_x", False))
    b.scalar_bool(_opt(op, "adj_y", False))
    return C.BATCH_MATMUL


def _mirror_pad(b, op, _signed):
    mode = _opt(op, "mode", MirrorPadMode.REFLECT)
    b.scalar_int32(0 if mode == MirrorPadMode.REFLECT else 1)
    return C.MIRROR_PAD


_MAPPERS = {
    B.CONV_2D: _conv, B.DEPTHWISE_CONV_2D: _depthwise, B.FULLY_CONNECTED: _fully_connected,
    B.SOFTMAX: _softmax, B.RESHAPE: _reshape, B.RESIZE_BILINEAR: _resize_bilinear,
    B.RESIZE_NEAREST_NEIGHBOR: _resize_nearest, B.SQUEEZE: _squeeze,
    B.LOCAL_RESPONSE_NORMALIZATION: _lrn, B.CONCATENATION: _concatenation, B.PAD: _pad,
    B.PADV2: _pad, B.STRIDED_SLICE: _strided_slice, B.TRANSPOSE_CONV: _transpose_conv,
    B.SPACE_TO_DEPTH: _block(C.SPACE_TO_DEPTH), B.DEPTH_TO_SPACE: _block(C.DEPTH_TO_SPACE),
    B.MEAN: _mean, B.LEAKY_RELU: _leaky_relu, B.TOPK_V2: _topk, B.GATHER: _gather,
    B.EXPAND_DIMS: _expand_dims, B.SPLIT: _split, B.LOG_SOFTMAX: _log_softmax,
    B.QUANTIZE: _quantize, B.ELU: _elu, B.BATCH_MATMUL: _batch_matmul,
    B.MIRROR_PAD: _mirror_pad,
}



# Every builtin this module maps (DENSIFY adds no op: CONV_2D takes its dense value, 3.7).
CONVERTIBLE = frozenset(_PLAIN) | frozenset(_ACT_OPS) | frozenset(_POOL_OPS) | \
    frozenset(_KEEP_DIMS_BOOL_OPS) | frozenset(_MAPPERS) | frozenset(LOWERINGS) | \
    frozenset(RECURRENT_MAPPERS) | {B.DENSIFY}
