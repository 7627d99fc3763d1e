"""TFLite builtin -> the NNAPI operations the delegate's converter maps it to.

Read from the converter's own tables (``nodes._PLAIN`` and friends) plus, for the builtins a
function maps (``nodes._MAPPERS``, ``lowerings.LOWERINGS``, the special cases of
``nodes.add_node``), the operations that function may emit, main one first (reference:
tflite-nnapi-delegate.md 4, 3.7). ``tests/unit/test_op_matrix.py`` checks that the keys are
exactly ``nodes.CONVERTIBLE`` and that a lowered node only uses the operations listed here.
"""
from __future__ import annotations

from functools import lru_cache

from nnsim.tflite.convert import nodes
from nnsim.tflite.convert.recurrent import RECURRENT_NNAPI
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.types import OperationCode as C

__all__ = ["tflite_to_nnapi", "nnapi_code_for_builtin"]


def _mapped_by_tables() -> dict:
    mapping = {}
    for table in (nodes._PLAIN, nodes._ACT_OPS, nodes._POOL_OPS, nodes._KEEP_DIMS_BOOL_OPS):
        for b, c in table.items():
            mapping[b] = (c,)
    return mapping


# Builtins mapped by a function (``_MAPPERS``, ``LOWERINGS`` and the whole-node special cases of
# ``add_node``): the NNAPI operations each may emit, the main one first (4, 3.7).
_MAPPED_BY_FUNCTIONS = {
    B.CONV_2D: (C.CONV_2D, C.GROUPED_CONV_2D, C.DEQUANTIZE),
    B.DEPTHWISE_CONV_2D: (C.DEPTHWISE_CONV_2D,),
    B.FULLY_CONNECTED: (C.FULLY_CONNECTED, C.RESHAPE, C.DEQUANTIZE),
    B.SOFTMAX: (C.SOFTMAX,), B.RESHAPE: (C.RESHAPE,),
    B.RESIZE_BILINEAR: (C.RESIZE_BILINEAR,), B.RESIZE_NEAREST_NEIGHBOR: (C.RESIZE_NEAREST_NEIGHBOR,),
    B.SQUEEZE: (C.SQUEEZE,), B.LOCAL_RESPONSE_NORMALIZATION: (C.LOCAL_RESPONSE_NORMALIZATION,),
    B.CONCATENATION: (C.CONCATENATION,), B.PAD: (C.PAD, C.PAD_V2), B.PADV2: (C.PAD_V2,),
    B.STRIDED_SLICE: (C.STRIDED_SLICE,), B.TRANSPOSE_CONV: (C.TRANSPOSE_CONV_2D,),
    B.SPACE_TO_DEPTH: (C.SPACE_TO_DEPTH,), B.DEPTH_TO_SPACE: (C.DEPTH_TO_SPACE,),
    B.MEAN: (C.MEAN, C.ADD), B.LEAKY_RELU: (C.PRELU,), B.TOPK_V2: (C.TOPK_V2,),
    B.GATHER: (C.GATHER,), B.EXPAND_DIMS: (C.EXPAND_DIMS,), B.SPLIT: (C.SPLIT,),
    B.LOG_SOFTMAX: (C.LOG_SOFTMAX,), B.QUANTIZE: (C.QUANTIZE, C.DEQUANTIZE), B.ELU: (C.ELU,),
    B.BATCH_MATMUL: (C.BATCH_MATMUL,), B.MIRROR_PAD: (C.MIRROR_PAD,),
    B.UNPACK: (C.SPLIT, C.RESHAPE), B.SPLIT_V: (C.SLICE,),
    B.SQUARED_DIFFERENCE: (C.SUB, C.MUL), B.COS: (C.SUB, C.SIN),
    B.HARD_SWISH: (C.HARD_SWISH, C.MUL, C.ADD),   # MUL/ADD: the lowering below SDK 30
    B.PACK: (C.PACK, C.CONCATENATION),             # CONCATENATION: the lowering below FL6
    B.DENSIFY: (),                                 # no op: CONV_2D takes its dense value
    **RECURRENT_NNAPI,                             # convert/recurrent.py
}


@lru_cache(maxsize=1)
def tflite_to_nnapi() -> dict:
    """Builtin -> the NNAPI operations the delegate's converter may emit for it."""
    mapping = _mapped_by_tables()
    for b, codes in _MAPPED_BY_FUNCTIONS.items():
        mapping[b] = tuple(dict.fromkeys(mapping.get(b, ()) + codes))
    return mapping


def nnapi_code_for_builtin(builtin) -> C | None:
    """The main NNAPI operation of a TFLite builtin, or None when the delegate maps none."""
    codes = tflite_to_nnapi().get(B(builtin))
    return codes[0] if codes else None


