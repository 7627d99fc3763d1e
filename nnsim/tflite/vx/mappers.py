"""The VX delegate's op mappers: ``IsOpSupported`` of each one in tflite-vx-delegate's
``op_map.cc`` (HEAD 3f4759e; npu-drivers.md 3.3), and the registration tables
``SupportedBuiltinOps()`` / ``SupportedBuiltinCustomOps()`` (3.2).

A check takes a :class:`NodeView` and returns ``(log level, line)`` for a refusal (the level and
text the mapper's ``TFLITE_LOG_PROD`` prints; level 0 where it refuses silently) or None.
"""
from __future__ import annotations

import logging

from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import FullyConnectedOptionsWeightsFormat, TensorType as TT

ERROR, WARNING = logging.ERROR, logging.WARNING


class NodeView:
    """One TFLite node as ``IsSupported`` reads it (tensor types, dims, constness)."""

    def __init__(self, sg, op, dynamic=frozenset()):
        self.sg, self.op, self.dynamic = sg, op, dynamic
        self.inputs, self.outputs = list(op.inputs), list(op.outputs)

    def t(self, i):
        return self.sg.tensors[i]

    def tin(self, k):
        """The k-th input tensor, None when omitted (-1) or absent."""
        if k >= len(self.inputs) or self.inputs[k] < 0:
            return None
        return self.t(self.inputs[k])

    def tout(self, k=0):
        return self.t(self.outputs[k])

    @staticmethod
    def const(t) -> bool:
        return t is not None and t.data is not None

    @staticmethod
    def quantized(t) -> bool:
        """``quantization.type == kTfLiteAffineQuantization``."""
        q = t.quantization
        return q is not None and q.scales is not None and len(q.scales) > 0

    @staticmethod
    def scales(t) -> int:
        q = t.quantization
        return 0 if q is None or q.scales is None else len(q.scales)


def rank(t) -> int:
    return len(t.shape)


QUANT8 = (TT.INT8, TT.UINT8)


def _hybrid(kind):
    def check(n):
        if n.tin(0).type != n.tin(1).type:
            return ERROR, f"hybrid data type is not supported in {kind}."
    return check


def _conv2d(n):
    x, w = n.tin(0), n.tin(1)
    if x.type != w.type:
        return ERROR, "hybrid data type is not supported in conv2d."
    grouped = len(x.shape) > 3 and len(w.shape) > 3 and x.shape[3] != w.shape[3]
    if grouped and x.shape[0] != 1:
        return ERROR, "batch is not supported in grouped conv2d."


def _fully_connected(n):
    if n.tin(0).type != n.tin(1).type:
        return ERROR, "hybrid data type is not supported in fullyconnected."
    fmt = getattr(n.op.options, "weights_format", 0)
    if fmt == FullyConnectedOptionsWeightsFormat.SHUFFLED4x16INT8:
        return ERROR, "Shuffled weight is not supported"
    if any(i >= 0 and n.t(i).type == TT.INT16 for i in n.inputs):
        return ERROR, "Int16 input is not supported"


def _conv3d(n):
    o = n.op.options
    if max(getattr(o, "dilation_w_factor", 1), getattr(o, "dilation_h_factor", 1),
           getattr(o, "dilation_d_factor", 1)) > 1:
        return ERROR, "conv3d could not support dilation > 1."
    if n.tin(0).type != n.tin(1).type:
        return ERROR, "hybrid data type is not supported in conv3d."
    if not n.const(n.tin(1)):
        return ERROR, "weight tensor must be const in conv3d."


def _output_rank0(line, level=WARNING):
    def check(n):
        if rank(n.tout(0)) == 0:
            return level, line
    return check


def _dequantize(n):
    x, y = n.tin(0), n.tout(0)
    if x.type in (TT.INT16, TT.FLOAT16) and y.type == TT.FLOAT32 and n.quantized(x):
        return ERROR, "ASYM I16/F16 input / F32 output is not supported"
    if x.type in QUANT8 and y.type == TT.FLOAT32 and n.quantized(x) and n.scales(x) > 1:
        return ERROR, "SYMM PerChannel I8/U8 input / F32 output is not supported"


def _quantize(n):
    x, y = n.tin(0), n.tout(0)
    # the first two lines name the wrong types: that is what the delegate prints
    if x.type == TT.INT32 and y.type in QUANT8 and n.quantized(x):
        return ERROR, "ASYM I16 input / ASYM U8/ASYM I8 output is not supported"
    if x.type == TT.INT16 and y.type in QUANT8 and n.quantized(x):
        return ERROR, "ASYM I32 input / ASYM U8/ASYM I8 output is not supported"
    if x.type == TT.INT16 and y.type == TT.INT32 and n.quantized(x):
        return ERROR, "ASYM I16 input / ASYM I32 output is not supported"
    if x.type == TT.FLOAT32 and y.type in QUANT8 and n.quantized(y) and n.scales(y) > 1:
        return ERROR, "F32 input / SYMM PerChannel I8/U8 output is not supported"


def _fused_activation(n):
    x, y = n.tin(0), n.tout(0)
    if x.type == TT.INT16 and y.type in QUANT8 and n.quantized(x) and n.quantized(y):
        return ERROR, "ASYM I16 input0 / ASYM U8/I8 output is not supported"
    act = getattr(n.op.options, "fused_activation_function", 0)
    if int(act) == 2 and x.type == TT.INT32 and y.type == TT.INT32:   # RELU_N1_TO_1
        return ERROR, "I32 input/I32 output is not supported in Relu1."


def _pow(n):
    if n.tin(0).type == TT.INT32 and n.tin(1).type == TT.INT32:
        return ERROR, "I32 input/I32 output is not supported in pow."


def _reshape(n):
    shape = n.tin(1)
    if len(n.inputs) == 2 and shape is not None and not n.const(shape):
        return WARNING, "Dynamic input shape is not supported in reshape."
    if rank(n.tout(0)) == 0:
        return WARNING, "Dynamic output shape is not supported in reshape."


def _strided_slice(n):
    if not all(n.const(n.tin(k)) for k in (1, 2, 3)):
        return ERROR, "begin_tensor, end_tensor and strides_tensor must be constant."
    if getattr(n.op.options, "new_axis_mask", 0):
        return ERROR, "new_axis_mask > 0 is not supported"
    if getattr(n.op.options, "ellipsis_mask", 0):
        return ERROR, "ellipsis_mask > 0 is not supported"


def _resize(n):
    if not n.const(n.tin(1)):
        return ERROR, "shape tensor must be constant."
    x = n.tin(0)
    if x.type in QUANT8 and not n.quantized(x):
        return ERROR, "Int8 or uint8 input without quantization is not supported in Resize"


def _quant8_without_params(n, op_label):
    for i in n.inputs:
        if i >= 0 and n.t(i).type in QUANT8 and not n.quantized(n.t(i)):
            return ERROR, (f"Int8 or uint8 input without quantization is not supported in "
                           f"{op_label}")


def _split(n):
    if n.outputs[0] in n.dynamic:   # kTfLiteDynamic: a split axis computed at run time
        return WARNING, "dynamic shpae is not supported in split."
    return _quant8_without_params(n, "Split")


def _space_depth(label):
    def check(n):
        for i in n.inputs:
            if i < 0:
                continue
            if n.t(i).type == TT.INT32:
                return ERROR, f"Int32 input is not supported in {label}"
            if n.t(i).type == TT.INT64:
                return ERROR, f"Int64 input is not supported in {label}"
        return _quant8_without_params(n, label)
    return check


def _batch_matmul(n):
    a, b = n.tin(0).type, n.tin(1).type
    if n.tout(0).type == TT.INT32:
        return ERROR, "I32 outputs type is not supported in BatchMatmul"
    if (a, b) in ((TT.FLOAT32, TT.INT8), (TT.INT8, TT.FLOAT32)):
        return ERROR, ("Input with one being float32 and the other being int8 is not "
                       "supported in BatchMatmul")
    o = n.op.options
    if getattr(o, "adj_x", False) and getattr(o, "adj_y", False):
        return ERROR, "Does not support adj_x and adj_y being true at the same time"


def _bidi_rnn(n):
    if n.tin(1).type != TT.FLOAT32:                 # kFwWeightsTensor
        return ERROR, "Does not support quantized weight in BidirectionalSequenceRnn"
    if n.tin(9) is not None and n.tin(10) is None:  # kAuxInputTensor, kFwAuxWeightsTensor
        return ERROR, ("Does not support auxiliary inputs without auxiliary weights in "
                       "BidirectionalSequenceRnn")


def _uni_rnn(n):
    if n.tin(1).type != TT.FLOAT32:                 # kWeightsTensor
        return ERROR, "Does not support quantized weights in UnidirectionalSequenceRnn"


def _uni_lstm(n):
    if n.tin(0).type not in QUANT8:
        return ERROR, "UnidirectionalLstm input is only support UInt8 || Int8"
    h, c = n.tin(18), n.tin(19)                     # kOutputStateTensor, kCellStateTensor
    if h is None or h.type != n.tout(0).type:
        return ERROR, "OutputState should be the same type as output"
    if c is None or c.type not in (TT.FLOAT16, TT.INT16):
        return ERROR, "Cell_state is only support Int16 || Float16 "


def _bidi_lstm(n):
    if n.tin(1) is None or n.tin(1).type != TT.FLOAT32:   # kFwInputToInputWeightsTensor
        return ERROR, "Quantized weights are not supported"
    if n.tin(16) is not None:                       # kFwProjectionWeightsTensor
        return ERROR, "Projection weights are not supported"
    if n.tin(42) is not None:                       # kFwAuxInputToCellWeightsTensor
        return ERROR, "Aux weights are not supported"


def _batch_space(rank_line, block_line, dynamic_line, block_first):
    """Batch2Space / Space2Batch: 4-D input, a 2-element block shape, a static output; the
    two mappers test the last two in opposite orders."""
    def check(n):
        block = n.tin(1)
        checks = [(rank(n.tin(0)) != 4, (ERROR, rank_line)),
                  (block is None or not block.shape or block.shape[0] != 2, (ERROR, block_line)),
                  (rank(n.tout(0)) == 0, (WARNING, dynamic_line))]
        if not block_first:
            checks[1], checks[2] = checks[2], checks[1]
        for bad, line in checks:
            if bad:
                return line
    return check


def _const_input(k, line, level=WARNING):
    def check(n):
        if not n.const(n.tin(k)):
            return level, line
    return check


def _slice(n):
    if not (n.const(n.tin(1)) and n.const(n.tin(2))):
        return WARNING, ("vx-delegate cannot support dynamic shaped operator(slice), fallback "
                         "it to CPU")
    x, y = n.tin(0), n.tout(0)
    if rank(x) > 3 and x.shape[0] != y.shape[0]:
        return ERROR, "vx-delegate doesn't support slice in batch."


def _select(n):
    if rank(n.tin(0)) != rank(n.tin(1)):
        return ERROR, "condition and input must have the same rank"
    bad = (TT.BOOL, TT.INT8, TT.UINT8)
    if any(i >= 0 and n.t(i).type in bad for i in n.inputs[1:]):
        return ERROR, "Bool type input is not supported"
    if any(n.t(o).type in bad for o in n.outputs):
        return ERROR, "Bool type output is not supported"


def _embedding_lookup(n):
    if n.tin(1).type == TT.UINT8 and n.tout(0).type == TT.INT8:
        return ERROR, "Does not support hybrid quantization with U8 weight and I8 output"


def _one_hot(n):
    if not n.const(n.tin(1)):
        return ERROR, "delegate only support parameters tensor as const input"
    if n.tout(0).type == TT.BOOL:
        return ERROR, "Bool type output is not supported"


def _arg(n):
    if rank(n.tin(0)) == 0 or rank(n.tout(0)) == 0:
        return WARNING, "Arg cannot support dynamic shape"


def _shape(n):
    if any(d <= 0 for d in n.tin(0).shape):
        return WARNING, "Negative shape values are not supported."


def _cast(n):
    x, y = n.tin(0).type, n.tout(0).type
    for tt, label in ((TT.COMPLEX64, "Complex64"), (TT.UINT32, "UInt32"),
                      (TT.UINT16, "UInt16")):
        if tt in (x, y):
            return WARNING, f"Cast could not support {label} input/output."


def _squared_difference(n):
    a, b, y = n.tin(0), n.tin(1), n.tout(0)
    silent = (0, "refused without a log line: SquareDifferenceMapper accepts float32, or "
                 "int8/uint8 with per-tensor scales on input 0 and the output")
    if a.type != b.type:
        return silent
    if a.type == TT.FLOAT32 and y.type == TT.FLOAT32:
        return None
    if a.type == y.type and a.type in QUANT8 and n.scales(a) == 1 and n.scales(y) == 1:
        return None
    return silent


def _refuse_all(n):
    return 0, "refused without a log line: its mapper (CustomOpMap) refuses every node"


_NONE = None   # a mapper without its own IsOpSupported (the base class answers true)

# builtin -> (mapper, its IsOpSupported); the keys are SupportedBuiltinOps() (op_map.cc reg).
MAPPERS = {
    B.FULLY_CONNECTED: ("FullyConnectedMapper", _fully_connected),
    B.SOFTMAX: ("SoftmaxMapper", _NONE),
    B.CONV_2D: ("Conv2dMapper", _conv2d),
    B.MAX_POOL_2D: ("Pool2dMapper", _NONE), B.AVERAGE_POOL_2D: ("Pool2dMapper", _NONE),
    B.DEPTHWISE_CONV_2D: ("DepthwiseConv2dMapper", _hybrid("DepthwiseConv2d")),
    B.DEQUANTIZE: ("DequantizeMapper", _dequantize),
    B.QUANTIZE: ("QuantizeMapper", _quantize),
    B.CONCATENATION: ("ConcatenationMapper", _NONE),
    B.LOCAL_RESPONSE_NORMALIZATION: ("LocalResponseNormalizationMapper", _NONE),
    B.L2_NORMALIZATION: ("L2NormalizationMapper", _NONE),
    B.RESHAPE: ("ReshapeMapper", _reshape),
    B.STRIDED_SLICE: ("StridedSliceMapper", _strided_slice),
    B.PAD: ("PadMapper", _output_rank0("Pad cannot support dynamic shape")),
    B.MIRROR_PAD: ("MirrorPadMapper", _output_rank0("MirrorPad cannot support dynamic shape")),
    B.EXPAND_DIMS: ("ExpandDimsMapper",
                    _const_input(1, "const axis_tensor is only supported in expand_dims.")),
    B.ONE_HOT: ("OneHotMapper", _one_hot),
    B.ADD: ("AddMapper", _fused_activation), B.SUB: ("SubMapper", _fused_activation),
    B.DIV: ("DivMapper", _fused_activation), B.MUL: ("MulMapper", _fused_activation),
    B.POW: ("PowMapper", _pow),
    B.MINIMUM: ("MinimumMapper", _NONE), B.MAXIMUM: ("MaximumMapper", _NONE),
    B.RESIZE_NEAREST_NEIGHBOR: ("ResizeMapper", _resize),
    B.RESIZE_BILINEAR: ("ResizeMapper", _resize),
    B.ADD_N: ("AddNMapper", _NONE),
    B.SPLIT: ("SplitMapper", _split), B.SPLIT_V: ("SplitVMapper", _split),
    B.SQUEEZE: ("SqueezeMapper", _NONE),
    B.SPACE_TO_DEPTH: ("Space2DepthMapper", _space_depth("Space2Depth")),
    B.DEPTH_TO_SPACE: ("Depth2SpaceMapper", _space_depth("Depth2Space")),
    B.PRELU: ("PreluMapper", _NONE),
    B.TRANSPOSE: ("Transpose", _output_rank0("Dynamic shape is not supported in transpose")),
    B.BATCH_MATMUL: ("BatchMatmul", _batch_matmul),
    B.RNN: ("Rnn", _NONE),
    B.UNIDIRECTIONAL_SEQUENCE_RNN: ("UnidirectionalSequenceRnn", _uni_rnn),
    B.BIDIRECTIONAL_SEQUENCE_RNN: ("BidirectionalSequenceRnn", _bidi_rnn),
    B.GATHER: ("Gather", _NONE), B.GATHER_ND: ("GatherNd", _NONE),   # string inputs: global
    B.UNIDIRECTIONAL_SEQUENCE_LSTM: ("UnidirectionalSequenceLstm", _uni_lstm),
    B.BIDIRECTIONAL_SEQUENCE_LSTM: ("BidirectionalSequenceLstm", _bidi_lstm),
    B.BATCH_TO_SPACE_ND: ("Batch2Space", _batch_space(
        "batch2space in vx-delagate only support 4D input",
        "batch2space in vx-delagate only support the input whose spatial dimensions is 2",
        "dynamic shape in not support in batchtospace", True)),
    B.SPACE_TO_BATCH_ND: ("Space2Batch", _batch_space(
        "space2batch in vx-delegate only support 4D input",
        "space2batch in vx-delegate only support the input whose spatial dimensions is 2",
        "dynamic shape in not support in space2batch", False)),
    B.REVERSE_V2: ("ReverseV2",
                   _const_input(1, "const axis_tensor is only supported in reverse.", ERROR)),
    B.SLICE: ("Slice", _slice),
    B.TRANSPOSE_CONV: ("TransposeConvMapper",
                       _output_rank0("transpose conv cannot support dynamic shape")),
    B.SELECT: ("Select", _select), B.SELECT_V2: ("Select", _select),
    B.PACK: ("PackMapper", _NONE), B.UNPACK: ("UnpackMapper", _NONE),
    B.ARG_MIN: ("ArgOpMapper", _arg), B.ARG_MAX: ("ArgOpMapper", _arg),
    B.CONV_3D: ("Conv3dMapper", _conv3d),
    B.SHAPE: ("ShapeMapper", _shape),
    B.EMBEDDING_LOOKUP: ("EmbeddingLookup", _embedding_lookup),
    B.HASHTABLE_LOOKUP: ("HashtableLookup", _NONE),
    B.CAST: ("CastMapper", _cast),
    B.BROADCAST_TO: ("BroadcastToMapper", _NONE),
    B.SQUARED_DIFFERENCE: ("SquareDifferenceMapper", _squared_difference),
    B.SCATTER_ND: ("ScatterNDMapper",
                   _const_input(2, "ScatterNd only support parameter tensor as const input.")),
    B.LEAKY_RELU: ("LeakyReluMapper", _NONE),
    B.LOGICAL_AND: ("LogicalOpMapper", _NONE), B.LOGICAL_OR: ("LogicalOpMapper", _NONE),
}
for _op in (B.REDUCE_MIN, B.SUM, B.REDUCE_MAX, B.REDUCE_ANY, B.REDUCE_PROD, B.MEAN):
    MAPPERS[_op] = ("ReduceOpMapper",
                     _const_input(1, "const axis_tensor is only supported in reduce."))
for _op in (B.ABS, B.SIN, B.EXP, B.LOG, B.SQRT, B.RSQRT, B.SQUARE, B.FLOOR, B.FLOOR_DIV,
            B.GREATER, B.GREATER_EQUAL, B.LESS, B.LESS_EQUAL, B.NOT_EQUAL, B.EQUAL,
            B.LOGICAL_NOT, B.HARD_SWISH, B.GELU, B.ELU, B.RELU, B.RELU_N1_TO_1, B.RELU6,
            B.LOGISTIC, B.NEG, B.TANH):
    MAPPERS[_op] = ("SimpleOpMapper", _NONE)

SUPPORTED_BUILTINS = frozenset(MAPPERS)
CUSTOM_MAPPERS = {"vsi-npu": ("NBGOpMap", _NONE), "WRNN_BIDI_SEQGRU": ("CustomOpMap", _refuse_all)}

