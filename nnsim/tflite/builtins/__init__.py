"""TFLite CPU builtins: the kernels for every node that stays on the CPU.

``create_builtin(model, subgraph_index, node_index)`` returns the builtin for one node (a
``BuiltinOp``: ``prepare(shapes) -> shapes``, ``eval(arrays) -> arrays``) or raises
``UnsupportedOperatorError`` naming the node and the operator. Semantics are TFLite's
reference kernels (``BuiltinRefOpResolver``): TFLite padding, fused activations, per-tensor
uint8 and per-channel int8 quantization. ``BUILTINS`` and ``CUSTOM_OPS`` list what exists,
explicitly (no scanning).
"""
from __future__ import annotations

from nnsim.tflite.builtins import (activations, compare, conv, elementwise, pooling, quantize,
                                   norm, reduce, resize, shape, shape2, tfl_only)
from nnsim.tflite.builtins._base import (BuiltinError, BuiltinOp, Node,
                                         UnsupportedOperatorError)
from nnsim.tflite.builtins.detection import DetectionPostProcess
from nnsim.tflite.builtins.nnapi_backed import NnapiBacked
from nnsim.tflite.schema import BuiltinOperator as B

__all__ = ["BUILTINS", "CUSTOM_OPS", "NNAPI_BACKED", "BuiltinError", "BuiltinOp", "Node",
           "UnsupportedOperatorError", "create_builtin", "supported_operators"]

BUILTINS: dict = {
    B.CONV_2D: conv.Conv2D,
    B.DEPTHWISE_CONV_2D: conv.DepthwiseConv2D,
    B.FULLY_CONNECTED: conv.FullyConnected,
    B.AVERAGE_POOL_2D: pooling.AveragePool2D,
    B.MAX_POOL_2D: pooling.MaxPool2D,
    B.ADD: elementwise.Add,
    B.SUB: elementwise.Sub,
    B.MUL: elementwise.Mul,
    B.FLOOR_DIV: elementwise.FloorDiv,
    B.RELU: activations.Relu,
    B.RELU_N1_TO_1: activations.Relu1,
    B.RELU6: activations.Relu6,
    B.LOGISTIC: activations.Logistic,
    B.TANH: activations.Tanh,
    B.HARD_SWISH: activations.HardSwish,
    B.SOFTMAX: activations.Softmax,
    B.QUANTIZE: quantize.Quantize,
    B.DEQUANTIZE: quantize.Dequantize,
    B.MEAN: reduce.Mean,
    B.ARG_MAX: reduce.ArgMax,
    B.ARG_MIN: reduce.ArgMin,
    B.RESIZE_BILINEAR: resize.ResizeBilinear,
    B.RESHAPE: shape.Reshape,
    B.SQUEEZE: shape.Squeeze,
    B.CONCATENATION: shape.Concatenation,
    B.PAD: shape.Pad,
    B.TRANSPOSE: shape.Transpose,
    B.SLICE: shape.Slice,
    B.STRIDED_SLICE: shape.StridedSlice,
    B.GATHER: shape.Gather,
    B.GATHER_ND: shape.GatherNd,
    B.CAST: shape.Cast,
    # TFLite rescales quantized comparisons in integers (NNAPI compares dequantized floats),
    # SELECT copies raw values (NNAPI requantizes), int32 POW is TFLite's own
    B.EQUAL: compare.Equal, B.NOT_EQUAL: compare.NotEqual, B.GREATER: compare.Greater,
    B.GREATER_EQUAL: compare.GreaterEqual, B.LESS: compare.Less, B.LESS_EQUAL: compare.LessEqual,
    B.SELECT: compare.Select, B.SELECT_V2: compare.SelectV2, B.POW: compare.Pow,
    # builtins NNAPI cannot express, or lowers to operations that compute differently, and
    # SPLIT / SPLIT_V / UNPACK, whose axis or sizes may be computed at run time
    **tfl_only.BUILTINS,
    # TFLite's TOPK_V2 breaks ties lowest index first (NNAPI: highest), REVERSE_V2 takes
    # negative and several axes, BATCH_MATMUL broadcasts batches both ways, REDUCE_PROD has no
    # zero guard and takes int32/int64, RANK has no NNAPI mapping
    B.RANK: shape2.Rank, B.TOPK_V2: shape2.TopKV2, B.REVERSE_V2: shape2.ReverseV2,
    B.BATCH_MATMUL: shape2.BatchMatMul, B.REDUCE_PROD: shape2.ReduceProd,
    # quantized SUM and LOG_SOFTMAX have no NNAPI form (their float variants still run through
    # the NNAPI lowering); TFLite's reference LRN sums over [c-r, c+r), NNAPI over [c-r, c+r]
    **norm.BUILTINS,
}

# Builtins whose TFLite CPU kernel computes what their NNAPI lowering computes: they run through
# the registered NNAPI operations (nnapi_backed.py). Each one is admitted only with a LiteRT
# BUILTIN_REF single-op differential test (tests/tflite/test_builtins_nnapi_backed.py).
NNAPI_BACKED = frozenset({
    B.ABS, B.EXP, B.LOG, B.NEG, B.RSQRT, B.SQRT, B.FLOOR, B.ELU,
    B.DIV, B.MAXIMUM, B.MINIMUM, B.PRELU,
    B.DEPTH_TO_SPACE, B.SPACE_TO_DEPTH, B.BATCH_TO_SPACE_ND, B.SPACE_TO_BATCH_ND,
    B.EXPAND_DIMS, B.PADV2,
    B.L2_NORMALIZATION, B.L2_POOL_2D, B.LOG_SOFTMAX,
    B.REDUCE_MAX, B.REDUCE_MIN, B.SUM,
    B.RESIZE_NEAREST_NEIGHBOR, B.TRANSPOSE_CONV,
    B.LOGICAL_AND, B.LOGICAL_OR, B.LOGICAL_NOT, B.SIN,
    B.EMBEDDING_LOOKUP, B.HASHTABLE_LOOKUP,
    B.TILE, B.FILL, B.REDUCE_ANY, B.PACK, B.MIRROR_PAD,
})

CUSTOM_OPS: dict = {
    "TFLite_Detection_PostProcess": DetectionPostProcess,
}


def supported_operators() -> list[str]:
    """Names of every operator with a CPU builtin (builtin codes, then custom codes)."""
    return sorted(op.name for op in set(BUILTINS) | NNAPI_BACKED) + sorted(CUSTOM_OPS)


def create_builtin(model, subgraph_index: int, node_index: int) -> BuiltinOp:
    """The CPU builtin for one node; UnsupportedOperatorError when nnsim has none."""
    node = Node(model, subgraph_index, node_index, create_builtin)
    op = node.op
    if op.builtin == B.CUSTOM:
        cls = CUSTOM_OPS.get(op.custom_code or "")
    else:
        cls = BUILTINS.get(op.builtin)
        if cls is None and op.builtin in NNAPI_BACKED:
            cls = NnapiBacked
    if cls is None:
        kind = "custom operator" if op.builtin == B.CUSTOM else "operator"
        raise node.error(f"nnsim has no CPU kernel for the TFLite {kind} {node.name}",
                         unsupported=True)
    if op.builtin != B.DENSIFY:
        # A sparse constant's data is its stored values only; LiteRT's FULLY_CONNECTED reads
        # sparse weights directly, nnsim's kernels only take dense ones (via DENSIFY).
        for k in range(len(op.inputs)):
            t = node.input(k)
            if t is not None and t.sparsity is not None:
                raise node.error(f"input {k} (tensor {t.index} '{t.name}') is sparse: nnsim "
                                 f"has no sparse kernel for {node.name}", unsupported=True)
    try:
        return cls(node)
    except (TypeError, KeyError) as e:  # a tensor type without a numpy dtype, and the like
        raise node.error(f"cannot set up the kernel: {e}", unsupported=True) from None
