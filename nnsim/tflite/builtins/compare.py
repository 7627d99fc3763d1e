"""TFLite comparisons, SELECT / SELECT_V2 and POW on the CPU, where LiteRT's kernels compute
something other than the NNAPI operations the delegate maps them to.

* EQUAL ... LESS_EQUAL (``comparisons.cc``): uint8 / int8 inputs are rescaled in integers
  (``ComparisonWithScaling``, left shift 8), not dequantized in float as NNAPI does; at small
  scales neighbouring values compare equal. Other types compare their values. A quantized scale
  >= 1 is refused: LiteRT aborts (scale 1) or computes garbage (undefined shifts) there.
* SELECT (``select.cc``): raw values are copied (no requantization to the output's
  parameters); the condition may be a scalar or a vector over the first dimension.
  SELECT_V2 broadcasts all three inputs. The delegate maps neither of these extensions.
* POW (``pow.cc``): float32 is ``std::pow`` as in NNAPI; int32 (no NNAPI equivalent) is
  ``std::pow(int, int)`` truncated back to int32, and negative exponents are an error.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels import compare as ck
from nnsim.kernels.float_math import integer_power, power
from nnsim.kernels.logical import select
from nnsim.tflite.builtins._base import BuiltinOp
from nnsim.tflite.builtins.elementwise import broadcast_shape

__all__ = ["Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual", "Select",
           "SelectV2", "Pow"]

_BOOL, _F32, _F16 = np.dtype(np.bool_), np.dtype(np.float32), np.dtype(np.float16)
_I16, _I32, _I64 = np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.int64)
_QUANT = (np.dtype(np.uint8), np.dtype(np.int8))
_ORDERED = (_F32, _I32, _I64) + _QUANT


class _Comparison(BuiltinOp):
    """Output bool of the broadcast shape; ``types`` are what LiteRT's Eval accepts."""

    op = ck.EQUAL
    types: tuple = ()

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        if node.dtype_in(1) != self.dtype:
            raise node.error(f"input types {self.dtype.name} and {node.dtype_in(1).name} "
                             f"differ")
        if self.dtype not in self.types:
            raise node.error(f"type {self.dtype.name} is not supported", unsupported=True)
        self.q = {}
        if self.dtype in _QUANT:
            s1, z1 = node.require_quant(node.input(0))
            s2, z2 = node.require_quant(node.input(1))
            for s in (s1, s2):
                if not 0.0 < s < 1.0:
                    raise node.error(f"quantized comparison with scale {s}: LiteRT's "
                                     f"rescaling is undefined for scales >= 1")
            self.q = dict(in1_scale=s1, in1_zp=z1, in2_scale=s2, in2_zp=z2)

    def prepare(self, shapes):
        return [broadcast_shape(self.node, shapes[0], shapes[1])]

    def eval(self, inputs):
        a, b = inputs[0], inputs[1]
        if self.q:
            return [ck.compare_tflite_quantized(self.op, a, b, **self.q)]
        return [ck.compare(self.op, a, b)]


class Equal(_Comparison):
    op, types = ck.EQUAL, (_BOOL, _F32, _I16, _I32, _I64) + _QUANT


class NotEqual(_Comparison):
    op, types = ck.NOT_EQUAL, (_BOOL, _F32, _I32, _I64) + _QUANT


class Greater(_Comparison):
    op, types = ck.GREATER, _ORDERED


class GreaterEqual(_Comparison):
    op, types = ck.GREATER_EQUAL, _ORDERED + (_I16,)


class Less(_Comparison):
    op, types = ck.LESS, _ORDERED + (_I16, _F16)


class LessEqual(_Comparison):
    op, types = ck.LESS_EQUAL, _ORDERED


class Select(BuiltinOp):
    """SELECT: same shapes, or a scalar condition, or a condition over the first dimension."""

    _TYPES = (_BOOL, _F32, _I16, _I32, _I64) + _QUANT

    def __init__(self, node):
        super().__init__(node)
        if node.dtype_in(0) != _BOOL:
            raise node.error(f"condition type {node.dtype_in(0).name} is not bool")
        dtype = node.dtype_in(1)
        if node.dtype_in(2) != dtype:
            raise node.error(f"input types {dtype.name} and {node.dtype_in(2).name} differ")
        if dtype not in self._TYPES:
            raise node.error(f"type {dtype.name} is not supported", unsupported=True)

    def prepare(self, shapes):
        cond, x, y = (tuple(s) for s in shapes[:3])
        if cond == x == y:
            return [x]
        low_rank = cond == () or (len(cond) == 1 and len(x) >= 1 and cond[0] == x[0])
        if not low_rank or x != y:
            raise self.error(f"condition {cond} and inputs {x}, {y}: SELECT needs equal "
                             f"shapes, a scalar condition or one over the first dimension")
        return [x]

    def eval(self, inputs):
        cond, x, y = inputs[0], inputs[1], inputs[2]
        if cond.ndim == 1 and x.ndim > 1:  # one condition per index of the first dimension
            cond = cond.reshape(cond.shape + (1,) * (x.ndim - 1))
        return [select(cond, x, y)]


class SelectV2(Select):
    """SELECT_V2: the three inputs broadcast together."""

    def prepare(self, shapes):
        cond, x, y = (tuple(s) for s in shapes[:3])
        try:
            return [tuple(np.broadcast_shapes(cond, x, y))]
        except ValueError:
            raise self.error(f"shapes {cond}, {x} and {y} do not broadcast") from None

    def eval(self, inputs):
        return [select(inputs[0], inputs[1], inputs[2])]


class Pow(BuiltinOp):
    """float32 ``std::pow``; int32 ``std::pow(int, int)`` truncated, exponents >= 0."""

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        if node.dtype_in(1) != self.dtype or self.dtype not in (_F32, _I32):
            raise node.error(f"types {self.dtype.name}/{node.dtype_in(1).name} are not "
                             f"supported", unsupported=True)

    def prepare(self, shapes):
        return [broadcast_shape(self.node, shapes[0], shapes[1])]

    def eval(self, inputs):
        base, exponent = inputs[0], inputs[1]
        if self.dtype == _F32:
            return [power(base, exponent)]
        if np.any(exponent < 0):
            raise self.error("POW does not support negative exponents for int32")
        return [integer_power(base, exponent)]
