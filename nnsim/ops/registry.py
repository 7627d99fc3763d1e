"""The operation registry: every OperationSpec listed explicitly (no module scanning).

``NOT_IMPLEMENTED`` lists every other OperationCode, also explicitly; a test checks that the
two are disjoint and together cover the enum. nnapi-reference supports exactly the registered
operations.
"""
from __future__ import annotations

from nnsim.errors import NnapiError
from nnsim.ops import (activations, add, argminmax, batch_space, cast, concatenation, conv_2d,
                       depth_space, depthwise_conv_2d, dequantize, div, fully_connected, gather,
                       l2_normalization, l2_pool, log_softmax, mean, minmax, pad, pad_v2, pooling,
                       quantize, reduce, reshape, resize, slicing, softmax, split, squeeze, tanh,
                       transpose, transpose_conv_2d, unary)
from nnsim.ops import comparisons, logical, select
from nnsim.ops import pow as pow_op
from nnsim.ops import (batch_matmul, channel_shuffle, fill, mirror_pad, pack, rank, reverse,
                       tile, topk_v2)
from nnsim.ops import grouped_conv_2d, instance_normalization, local_response_normalization
from nnsim.ops import embedding_lookup, hashtable_lookup
from nnsim.ops import lstm, quantized_lstm, rnn, sequence_lstm, sequence_rnn, svdf
from nnsim.ops import qlstm
from nnsim.ops import lsh_projection, random_multinomial
from nnsim.ops import box_ops, detection_postprocessing, generate_proposals, heatmap_max_keypoint
from nnsim.ops import roi_ops
from nnsim.ops import control_flow
from nnsim.types import OperationCode as C

ALL_SPECS = (
    add.ADD, add.SUB, add.MUL,
    conv_2d.SPEC,
    depthwise_conv_2d.SPEC,
    fully_connected.SPEC,
    pooling.AVERAGE_POOL_2D, pooling.MAX_POOL_2D,
    reshape.SPEC,
    softmax.SPEC,
    concatenation.SPEC,
    quantize.SPEC,
    dequantize.SPEC,
    activations.RELU, activations.RELU1, activations.RELU6, activations.LOGISTIC,
    pad.SPEC,
    mean.SPEC,
    depth_space.SPACE_TO_DEPTH, depth_space.DEPTH_TO_SPACE,
    batch_space.SPACE_TO_BATCH_ND, batch_space.BATCH_TO_SPACE_ND,
    squeeze.SQUEEZE, squeeze.EXPAND_DIMS,
    unary.ABS, unary.EXP, unary.FLOOR, unary.LOG, unary.NEG, unary.RSQRT, unary.SQRT,
    unary.SIN,
    comparisons.EQUAL, comparisons.NOT_EQUAL, comparisons.GREATER, comparisons.GREATER_EQUAL,
    comparisons.LESS, comparisons.LESS_EQUAL,
    logical.LOGICAL_AND, logical.LOGICAL_OR, logical.LOGICAL_NOT,
    select.SPEC,
    pow_op.SPEC,
    tanh.TANH, tanh.HARD_SWISH, tanh.ELU,
    div.SPEC,
    minmax.MAXIMUM, minmax.MINIMUM, minmax.PRELU,
    transpose.SPEC,
    slicing.SLICE, slicing.STRIDED_SLICE,
    gather.SPEC,
    argminmax.ARGMAX, argminmax.ARGMIN,
    cast.SPEC,
    resize.RESIZE_BILINEAR, resize.RESIZE_NEAREST_NEIGHBOR,
    l2_normalization.SPEC,
    l2_pool.SPEC,
    reduce.REDUCE_SUM, reduce.REDUCE_MAX, reduce.REDUCE_MIN,
    reduce.REDUCE_PROD, reduce.REDUCE_ALL, reduce.REDUCE_ANY,
    tile.SPEC, fill.SPEC, rank.SPEC, topk_v2.SPEC, channel_shuffle.SPEC,
    pack.SPEC, mirror_pad.SPEC, reverse.SPEC, batch_matmul.SPEC,
    split.SPEC,
    pad_v2.SPEC,
    log_softmax.SPEC,
    transpose_conv_2d.SPEC,
    local_response_normalization.SPEC, instance_normalization.SPEC, grouped_conv_2d.SPEC,
    embedding_lookup.SPEC, hashtable_lookup.SPEC,
    lstm.SPEC, rnn.SPEC, svdf.SPEC,
    sequence_lstm.UNIDIRECTIONAL_SEQUENCE_LSTM, sequence_lstm.BIDIRECTIONAL_SEQUENCE_LSTM,
    sequence_rnn.UNIDIRECTIONAL_SEQUENCE_RNN, sequence_rnn.BIDIRECTIONAL_SEQUENCE_RNN,
    quantized_lstm.QUANTIZED_16BIT_LSTM, qlstm.SPEC,
    lsh_projection.SPEC, random_multinomial.SPEC,
    control_flow.IF, control_flow.WHILE,
    box_ops.AXIS_ALIGNED_BBOX_TRANSFORM, box_ops.BOX_WITH_NMS_LIMIT, generate_proposals.SPEC,
    detection_postprocessing.SPEC, heatmap_max_keypoint.SPEC, roi_ops.ROI_ALIGN,
    roi_ops.ROI_POOLING,
)

NOT_IMPLEMENTED = frozenset({
    C.OEM_OPERATION,
})


def _build(specs):
    table = {}
    for spec in specs:
        if spec.code in table:
            raise NnapiError(f"operation {spec.code.name} registered twice")
        if spec.code in NOT_IMPLEMENTED:
            raise NnapiError(f"operation {spec.code.name} is registered and in NOT_IMPLEMENTED")
        table[spec.code] = spec
    return table


REGISTRY = _build(ALL_SPECS)


def lookup(code: int):
    """The OperationSpec for ``code``, or None when nnsim does not implement it."""
    return REGISTRY.get(code)


def is_registered(code: int) -> bool:
    return code in REGISTRY
