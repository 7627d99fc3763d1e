"""CPU builtins for TFLite operators the NNAPI delegate does not map one-to-one.

Either NNAPI has no such operation (SHAPE, ZEROS_LIKE, BROADCAST_TO, RANGE, CUMSUM, SCATTER_ND,
WHERE, GELU, UNPACK), or the delegate lowers the operator to NNAPI operations whose arithmetic
is not LiteRT's (SQUARE, SQUARED_DIFFERENCE, LEAKY_RELU), or the operands are laid out
differently (SPLIT takes its axis as input 0). The kernels here are LiteRT's (BUILTIN_REF):
the classes live in ``tfl_shape`` (shapes and data movement), ``tfl_math`` (arithmetic),
``tfl_extra`` / ``tfl_segment`` (builtins no delegate takes), ``control_flow`` (IF, WHILE,
CALL_ONCE over the model's other subgraphs) and ``recurrent`` / ``recurrent_bidi`` (LSTM, RNN,
SVDF); ``BUILTINS`` lists them for ``nnsim.tflite.builtins``.

DENSIFY turns a sparse constant (``nnsim.tflite.sparsity``) into its dense value. Not here:
ONES_LIKE (TFLite's schema has no such builtin: the converter emits FILL, or a Flex op).
"""
from __future__ import annotations

from nnsim.tflite.builtins import control_flow, recurrent, recurrent_bidi, tfl_extra, tfl_math
from nnsim.tflite.builtins import tfl_segment, tfl_shape
from nnsim.tflite.schema import BuiltinOperator as B

__all__ = ["BUILTINS"]

BUILTINS: dict = {
    B.SHAPE: tfl_shape.Shape,
    B.ZEROS_LIKE: tfl_shape.ZerosLike,
    B.BROADCAST_TO: tfl_shape.BroadcastTo,
    B.RANGE: tfl_shape.Range,
    B.WHERE: tfl_shape.Where,
    B.UNPACK: tfl_shape.Unpack,
    B.SPLIT: tfl_shape.Split,
    B.SPLIT_V: tfl_shape.SplitV,
    B.SCATTER_ND: tfl_shape.ScatterNd,
    B.DENSIFY: tfl_shape.Densify,
    B.SQUARE: tfl_math.Square,
    B.COS: tfl_math.Cos,
    B.SQUARED_DIFFERENCE: tfl_math.SquaredDifference,
    B.CUMSUM: tfl_math.Cumsum,
    B.GELU: tfl_math.Gelu,
    B.LEAKY_RELU: tfl_math.LeakyRelu,
    # elementwise, data-movement, segment and selection builtins no NNAPI delegate takes
    B.ADD_N: tfl_extra.AddN, B.CEIL: tfl_extra.Ceil, B.ROUND: tfl_extra.Round,
    B.SIGN: tfl_extra.Sign, B.FLOOR_MOD: tfl_extra.FloorMod, B.RELU_0_TO_1: tfl_extra.Relu0To1,
    B.REDUCE_ALL: tfl_extra.ReduceAll, B.ONE_HOT: tfl_extra.OneHot,
    B.REVERSE_SEQUENCE: tfl_extra.ReverseSequence, B.MATRIX_DIAG: tfl_extra.MatrixDiag,
    B.MATRIX_SET_DIAG: tfl_extra.MatrixSetDiag,
    B.DYNAMIC_UPDATE_SLICE: tfl_extra.DynamicUpdateSlice,
    B.SEGMENT_SUM: tfl_segment.SegmentSum, B.UNSORTED_SEGMENT_SUM: tfl_segment.UnsortedSegmentSum,
    B.UNSORTED_SEGMENT_MAX: tfl_segment.UnsortedSegmentMax,
    B.UNSORTED_SEGMENT_MIN: tfl_segment.UnsortedSegmentMin,
    B.UNSORTED_SEGMENT_PROD: tfl_segment.UnsortedSegmentProd, B.UNIQUE: tfl_segment.Unique,
    B.NON_MAX_SUPPRESSION_V4: tfl_segment.NonMaxSuppressionV4,
    B.NON_MAX_SUPPRESSION_V5: tfl_segment.NonMaxSuppressionV5,
    # control flow: run other subgraphs of the model (the NNAPI delegate takes none of them)
    B.IF: control_flow.If, B.WHILE: control_flow.While, B.CALL_ONCE: control_flow.CallOnce,
    # recurrent layers: LiteRT's lstm_eval / basic_rnn / svdf kernels
    **recurrent.BUILTINS,
    **recurrent_bidi.BUILTINS,
}
