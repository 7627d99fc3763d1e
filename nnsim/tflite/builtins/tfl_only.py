"""CPU builtins for TFLite operators the NNAPI delegate does not map one-to-one.

Either NNAPI has no such operation (SHAPE, ZEROS_LIKE, BROADCAST_TO, RANGE, CUMSUM, SCATTER_ND,
WHERE, GELU, UNPACK), or the delegate lowers the operator to NNAPI operations whose arithmetic
is not LiteRT's (SQUARE, SQUARED_DIFFERENCE, LEAKY_RELU), or the operands are laid out
differently (SPLIT takes its axis as input 0). The kernels here are LiteRT's (BUILTIN_REF):
the classes live in ``tfl_shape`` (shapes and data movement) and ``tfl_math`` (arithmetic);
``BUILTINS`` lists them for ``nnsim.tflite.builtins``.

DENSIFY turns a sparse constant (``nnsim.tflite.sparsity``) into its dense value. Not here:
ONES_LIKE (TFLite's schema has no such builtin: the converter emits FILL, or a Flex op).
"""
from __future__ import annotations

from nnsim.tflite.builtins import tfl_math, tfl_shape
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
}
