"""What every CPU builtin shares: the node view, errors, TFLite padding and activations.

A builtin is a class built once per node (``__init__`` reads options and constants), whose
``prepare(shapes)`` returns the output shapes for the current input shapes (TFLite's Prepare:
it runs again after ``resize_tensor_input``), and whose ``eval(inputs)`` computes the outputs
from the input arrays (TFLite's Eval). ``inputs`` holds one array per node input, None for an
omitted optional input (tensor index -1).
"""
from __future__ import annotations

import numpy as np

from nnsim.errors import BuiltinError, UnsupportedOperatorError
from nnsim.kernels._common import nothing, same_padding   # noqa: F401 (nothing: re-exported)
from nnsim.tflite.schema import NUMPY_DTYPES, ActivationFunctionType, Padding, TensorType

__all__ = ["BuiltinError", "UnsupportedOperatorError", "Node", "BuiltinOp", "tflite_padding",
           "fuse_code", "numpy_dtype"]


def numpy_dtype(ttype: TensorType) -> np.dtype:
    dtype = NUMPY_DTYPES.get(TensorType(ttype))
    if dtype is None:
        raise TypeError(f"tensor type {TensorType(ttype).name} has no numpy dtype")
    return dtype.newbyteorder("=") if dtype.byteorder not in "=|" else dtype


class Node:
    """One TFLite node of a subgraph, as a builtin sees it."""

    def __init__(self, model, subgraph_index: int, index: int, create_builtin=None):
        self.model = model
        self.subgraph_index = subgraph_index
        self.subgraph = model.subgraphs[subgraph_index]
        self.index = index
        self.op = self.subgraph.operators[index]
        self.name = self.op.name
        # The factory that builds the node's builtin (``builtins.create_builtin``, which passes
        # itself): the control-flow builtins build the builtins of the subgraphs they run with
        # it, as LiteRT's IF / WHILE reach the op resolver through their Subgraph. Handing it
        # down keeps the registry above control_flow.py instead of in a cycle with it.
        self.create_builtin = create_builtin

    @property
    def where(self) -> str:
        return f"node {self.index} ({self.name} v{self.op.version})"

    def error(self, what: str, unsupported: bool = False) -> BuiltinError:
        cls = UnsupportedOperatorError if unsupported else BuiltinError
        return cls(f"{self.where}: {what}")

    def options(self, default_cls):
        opts = self.op.options
        if opts is None:
            return default_cls()
        if not isinstance(opts, default_cls):
            raise self.error(f"unexpected options {type(opts).__name__}")
        return opts

    # -- tensors ----------------------------------------------------------------------------
    def tensor(self, index: int):
        return self.subgraph.tensors[index]

    def input(self, k: int):
        """The k-th input Tensor, or None when it is omitted or absent."""
        if k >= len(self.op.inputs) or self.op.inputs[k] < 0:
            return None
        return self.subgraph.tensors[self.op.inputs[k]]

    def output(self, k: int = 0):
        return self.subgraph.tensors[self.op.outputs[k]]

    def require_input(self, k: int):
        t = self.input(k)
        if t is None:
            raise self.error(f"input {k} is required")
        return t

    def const_input(self, k: int, what: str = "") -> np.ndarray | None:
        """The constant data of input k, or None when it is computed at run time."""
        t = self.input(k)
        return None if t is None or t.data is None else np.asarray(t.data)

    def dtype_in(self, k: int) -> np.dtype:
        return numpy_dtype(self.require_input(k).type)

    def dtype_out(self, k: int = 0) -> np.dtype:
        return numpy_dtype(self.output(k).type)

    def quant(self, tensor):
        """``(scale, zero_point)`` of a per-tensor quantized tensor, ``(None, 0)`` if none."""
        q = tensor.quantization
        if q is None or q.scales.size == 0:
            return None, 0
        if q.per_channel:
            raise self.error(f"tensor {tensor.index} '{tensor.name}' is per-channel quantized "
                             f"where per-tensor quantization is required")
        return float(q.scales[0]), int(q.zero_points[0])

    def quant_in(self, k: int):
        return self.quant(self.require_input(k))

    def quant_out(self, k: int = 0):
        return self.quant(self.output(k))

    def require_quant(self, tensor):
        scale, zp = self.quant(tensor)
        if scale is None:
            raise self.error(f"tensor {tensor.index} '{tensor.name}' has no quantization")
        return scale, zp


class BuiltinOp:
    """Base class of every CPU builtin."""

    def __init__(self, node: Node):
        self.node = node

    def prepare(self, shapes: list) -> list:
        """Output shapes (tuples) for the input shapes (tuples, None for omitted inputs)."""
        raise NotImplementedError

    def eval(self, inputs: list) -> list:
        """Output arrays for the input arrays."""
        raise NotImplementedError

    def bind(self, inputs: list, outputs: list):
        """A function of no arguments that recomputes ``outputs`` (the arrays the last
        ``eval(inputs)`` returned) in place from the current contents of ``inputs``, for an
        interpreter whose tensor buffers stay the same between invokes; None when this builtin
        cannot (the interpreter then calls ``eval``)."""
        return None

    def adopt_output(self, old, new) -> bool:
        """Write the output from now on into ``new`` (same shape and dtype) instead of ``old``,
        the buffer the last ``eval`` returned (:mod:`nnsim.tflite.arena`): True when this
        builtin computes into a buffer of its own (``self.out``) and now uses ``new``."""
        if old is None or getattr(self, "out", None) is not old:
            return False
        self.out = new
        return True

    def error(self, what: str) -> BuiltinError:
        return self.node.error(what)


def tflite_padding(padding, size: int, kernel: int, stride: int, dilation: int = 1):
    """TFLite ``ComputePaddingHeightWidth`` for one dimension: ``(out, before, after)``.

    SAME: ``out = ceil(in / stride)``; VALID: ``out = (in + stride - eff) // stride``; the total
    padding ``max(0, (out - 1) * stride + eff - in)`` is split with the odd unit after.
    """
    if int(padding) == Padding.SAME:
        return same_padding(size, kernel, stride, dilation)
    eff = (kernel - 1) * dilation + 1
    out = (size + stride - eff) // stride
    total = max(0, (out - 1) * stride + eff - size)
    return out, total // 2, total - total // 2


def fuse_code(node: Node, activation) -> int:
    """The fused activation as the kernels' fuse code (NONE, RELU, RELU_N1_TO_1, RELU6)."""
    act = ActivationFunctionType(int(activation))
    if act > ActivationFunctionType.RELU6:
        raise node.error(f"fused activation {act.name} is not supported", unsupported=True)
    return int(act)


def is_view_of(output, source) -> bool:
    """True when ``output`` is a view of all of ``source``'s memory (same data, no copy)."""
    base = output
    while isinstance(base, np.ndarray) and base is not source:
        base = base.base
    if base is source:
        return True
    # numpy points a view of a view at the owner of the memory, not at the view it was made
    # from: a reshape of an aligned buffer (itself a view, kernels._common.aligned_empty)
    # has that buffer's raw allocation as its base
    return (isinstance(output, np.ndarray) and isinstance(source, np.ndarray)
            and output.flags.c_contiguous and source.flags.c_contiguous
            and output.nbytes == source.nbytes
            and output.ctypes.data == source.ctypes.data)


def dummy(shape, dtype) -> np.ndarray:
    """A zero-strided array of ``shape``: lets a data-movement kernel compute an output shape
    in prepare without touching real data."""
    return np.broadcast_to(np.zeros((), dtype=dtype), tuple(shape))
