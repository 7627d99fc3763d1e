"""RANK, TOPK_V2, REVERSE_V2, BATCH_MATMUL and REDUCE_PROD on the CPU, where TFLite's kernel
differs from the NNAPI operation the delegate maps the node to (TFLite reference semantics):

* RANK: the converter has no NNAPI mapping for it;
* TOPK_V2: TFLite orders equal values by index ascending, NNAPI by index descending;
* REVERSE_V2: TFLite takes several (consecutive) axes and negative ones, NNAPI REVERSE one
  axis in [0, rank);
* BATCH_MATMUL: TFLite broadcasts the batch dimensions of either side (and operands of
  different ranks), NNAPI sizes the output from lhs and needs equal ranks;
* REDUCE_PROD: TFLite multiplies ``in * current`` (``0 * inf`` is NaN; int32 / int64 too),
  NNAPI returns 0 as soon as a factor is 0.

The arithmetic is the shared kernels' (``nnsim.kernels``): one implementation per computation.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels import movement
from nnsim.kernels.batch_matmul import batch_matmul, batch_matmul_shape
from nnsim.kernels.reduce_ext import reduce_prod
from nnsim.kernels.topk import topk
from nnsim.tflite.builtins._base import BuiltinOp
from nnsim.tflite.options import BatchMatMulOptions, ReducerOptions

__all__ = ["Rank", "TopKV2", "ReverseV2", "BatchMatMul", "ReduceProd"]

_INDEX_DTYPES = (np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.int64))


class Rank(BuiltinOp):
    """The number of dimensions of the input, as a scalar of the output's type (int32)."""

    def prepare(self, shapes):
        return [()]

    def eval(self, inputs):
        return [np.asarray(np.ndim(inputs[0]), dtype=self.node.dtype_out(0))]


class TopKV2(BuiltinOp):
    """The ``k`` largest values of each innermost row, equal values by index ascending."""

    def __init__(self, node):
        super().__init__(node)
        self.index_dtype = node.dtype_out(1)
        if self.index_dtype not in _INDEX_DTYPES:
            raise node.error(f"index type {self.index_dtype.name} is not supported",
                             unsupported=True)

    def _k(self, value, shape) -> int:
        k = int(np.asarray(value).reshape(-1)[0])
        if len(shape) < 1 or not 0 <= k <= shape[-1]:
            raise self.error(f"k = {k} must be in [0, last dimension of {tuple(shape)}]")
        return k

    def prepare(self, shapes):
        value = self.node.const_input(1)
        if value is None:
            return [None, None]
        shape = tuple(shapes[0][:-1]) + (self._k(value, shapes[0]),)
        return [shape, shape]

    def eval(self, inputs):
        x = inputs[0]
        values, indices = topk(x, self._k(inputs[1], x.shape), ties="tflite")
        return [values, indices.astype(self.index_dtype)]


class ReverseV2(BuiltinOp):
    """Reverse along every listed axis: negative axes count from the end, and the axes, in any
    order, must be consecutive dimensions (LiteRT fails "Non-contiguous `axes`" at Eval
    otherwise; its Prepare only sizes the output like the input, as here)."""

    def prepare(self, shapes):
        return [tuple(shapes[0])]

    def eval(self, inputs):
        x = inputs[0]
        axes = [int(a) for a in np.asarray(inputs[1]).reshape(-1)]
        if any(not -x.ndim <= a < x.ndim for a in axes):
            raise self.error(f"axes {axes} out of range for rank {x.ndim}")
        dims = sorted(a % x.ndim for a in axes)
        if any(b - a != 1 for a, b in zip(dims, dims[1:])):
            raise self.error(f"non-contiguous axes {axes} are not supported")
        return [movement.reverse(x, dims)]


class BatchMatMul(BuiltinOp):
    """float32, or int8 with per-tensor quantization; batch dimensions broadcast."""

    def __init__(self, node):
        super().__init__(node)
        opts = node.options(BatchMatMulOptions)
        self.adj = (bool(opts.adj_x), bool(opts.adj_y))
        dtypes = {node.dtype_in(0), node.dtype_in(1), node.dtype_out(0)}
        if dtypes not in ({np.dtype(np.float32)}, {np.dtype(np.int8)}):
            names = sorted(d.name for d in dtypes)
            raise node.error(f"types {names} are not supported (float32 or int8 only)",
                             unsupported=True)
        self.q = {}
        if dtypes == {np.dtype(np.int8)}:
            (ls, lz), (rs, rz), (os_, oz) = (node.require_quant(t) for t in
                                             (node.input(0), node.input(1), node.output(0)))
            self.q = dict(lhs_scale=ls, lhs_zp=lz, rhs_scale=rs, rhs_zp=rz, out_scale=os_,
                          out_zp=oz)

    def prepare(self, shapes):
        try:
            return [batch_matmul_shape(shapes[0], shapes[1], *self.adj)]
        except ValueError as e:
            raise self.error(str(e)) from None

    def eval(self, inputs):
        try:
            return [batch_matmul(inputs[0], inputs[1], *self.adj, **self.q)]
        except ValueError as e:
            raise self.error(str(e)) from None


class ReduceProd(BuiltinOp):
    """Product over the axes input: float32, int32, int64 (TFLite's ``in * current``)."""

    def __init__(self, node):
        super().__init__(node)
        self.keep_dims = bool(node.options(ReducerOptions).keep_dims)
        dtype = node.dtype_in(0)
        if dtype not in (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64)):
            raise node.error(f"type {dtype.name} is not supported", unsupported=True)

    def _axes(self, value, rank) -> list:
        axes = [int(a) for a in np.asarray(value).reshape(-1)]
        if any(not -rank <= a < rank for a in axes):
            raise self.error(f"axes {axes} out of range for rank {rank}")
        return axes

    def _shape(self, shape, axes) -> tuple:
        reduced = {a % len(shape) for a in axes}
        if self.keep_dims:
            return tuple(1 if d in reduced else s for d, s in enumerate(shape))
        return tuple(s for d, s in enumerate(shape) if d not in reduced)

    def prepare(self, shapes):
        value = self.node.const_input(1)
        if value is None:
            return [None]
        return [self._shape(shapes[0], self._axes(value, len(shapes[0])))]

    def eval(self, inputs):
        x = inputs[0]
        axes = self._axes(inputs[1], x.ndim)
        out = reduce_prod(x, axes, self.keep_dims, zero_guard=False)
        return [out.reshape(self._shape(x.shape, axes))]   # a full reduction is a scalar
