"""TFLite CPU builtins computed by the NNAPI operations the delegate maps a node to.

Where TFLite's CPU kernel and the NNAPI operation compute the same thing, nnsim keeps one
implementation: the node is lowered alone with the NNAPI delegate's own converter
(``nnsim.tflite.convert.build_nnapi_model``) at the newest feature level (FL8, SDK 35: signed
int8 operands, no int8 -> uint8 shims), and the resulting one-node NNAPI model runs on the shared
CPU executor (``nnsim.ops.executor``), i.e. through the registered ``OperationSpec``s.
No board runs this NNAPI model, so it logs nothing (``vlog.silenced``) and it may use operations
above the emulated phone's runtime feature level.

Which builtins take this path is an explicit list (``NNAPI_BACKED`` in ``builtins/__init__``):
a builtin is admitted only once the LiteRT single-op differential test (BUILTIN_REF) shows that
TFLite's kernel equals the NNAPI operation for it; builtins whose TFLite semantics differ keep a
dedicated class.

Shapes: ``prepare`` runs every lowered operation's ``prepare`` on stand-in inputs of the right
shapes (no data is computed). Stand-ins filled with 0 and with 1 must give the same output
shapes; otherwise an output shape depends on input *values* (a non-constant size or axis
input) and it is reported as dynamic (None), as TFLite does for such tensors.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from nnsim.errors import NnapiError
from nnsim.ops.registry import lookup
from nnsim.platform import vlog
from nnsim.ops.executor import run_model
from nnsim.tflite.builtins._base import BuiltinOp, Node, numpy_dtype
from nnsim.tflite.convert import ConvertError, ConvertOptions, build_nnapi_model
from nnsim.tflite.validate import FL8
from nnsim.types import OperationCode

__all__ = ["NnapiBacked", "NEWEST"]

# The newest delegate behaviour: FL8 (NNAPI feature level 8), an SDK 35 device.
NEWEST = ConvertOptions(target_feature_level=FL8, android_sdk_version=35,
                        runtime_feature_level=FL8)


class NnapiBacked(BuiltinOp):
    """One TFLite node computed by its NNAPI lowering on the CPU executor.

    Raises ``UnsupportedOperatorError`` at construction when the converter cannot lower this
    node or lowers it to an NNAPI operation nnsim does not implement.
    """

    def __init__(self, node: Node):
        super().__init__(node)
        op = node.op
        self._inputs = list(op.inputs)
        self._outputs = list(op.outputs)
        self._built: dict = {}
        declared = [None if i < 0 else tuple(node.tensor(i).shape) for i in op.inputs]
        self._convert(declared)

    # -- the NNAPI model --------------------------------------------------------------------
    def _convert(self, in_shapes):
        """The ConvertedModel for these input shapes (built once per shape set)."""
        key = tuple(in_shapes)
        converted = self._built.get(key)
        if converted is not None:
            return converted
        node = self.node
        model = _model_with_input_shapes(node, in_shapes)
        with vlog.silenced():
            try:
                converted = build_nnapi_model(model, node.subgraph_index, [node.index],
                                              [i for i in self._inputs if i >= 0],
                                              [o for o in self._outputs if o >= 0], NEWEST)
            except (ConvertError, NnapiError, ValueError, IndexError, TypeError) as e:
                raise node.error(f"nnsim has no CPU kernel for this {node.name} variant: {e}",
                                 unsupported=True) from None
        for operation in converted.nnapi_model.operations:
            if lookup(operation.type) is None:
                name = OperationCode(operation.type).name
                raise node.error(f"nnsim has no CPU kernel for the TFLite operator {node.name} "
                                 f"(its NNAPI operation {name} is not implemented)",
                                 unsupported=True)
        if len(self._built) > 8:   # a few shape sets at most (resize_tensor_input)
            self._built.clear()
        self._built[key] = converted
        return converted

    # -- TFLite Prepare / Eval --------------------------------------------------------------
    def prepare(self, shapes: list) -> list:
        converted = self._convert(shapes)
        zeros = _output_shapes(converted, self._inputs, shapes, 0)
        ones = _output_shapes(converted, self._inputs, shapes, 1)
        if zeros is None or zeros != ones:
            return [None] * len(self._outputs)
        return [zeros.get(o) for o in self._outputs]

    def eval(self, inputs: list) -> list:
        shapes = [None if a is None else tuple(np.shape(a)) for a in inputs]
        converted = self._convert(shapes)
        values = {t: a for t, a in zip(self._inputs, inputs) if t >= 0 and a is not None}
        with vlog.silenced():
            try:
                results = run_model(converted.nnapi_model, converted.nnapi_inputs(values),
                                    declared_shapes=False)
            except NnapiError as e:
                raise self.error(str(e)) from None
        by_tensor = converted.tflite_outputs(results)
        return [self._as_tflite(o, by_tensor[o]) for o in self._outputs]

    def _as_tflite(self, tensor_index: int, value: np.ndarray) -> np.ndarray:
        """The NNAPI result in the TFLite tensor's dtype: only a lossless widening (an int32
        result for an int64 tensor) is applied; anything else is an error, never a cast."""
        want = numpy_dtype(self.node.tensor(tensor_index).type)
        if value.dtype == want:
            return value
        if value.dtype.kind in "iu" and want.kind in "iu" and np.can_cast(value.dtype, want):
            return value.astype(want)
        raise self.error(f"the NNAPI lowering produced {value.dtype} for a {want} tensor")


def _model_with_input_shapes(node: Node, in_shapes):
    """The TFLite model with the node's input tensors reshaped (after resize_tensor_input)."""
    sg = node.subgraph
    changed = {i: tuple(s) for i, s in zip(node.op.inputs, in_shapes)
               if i >= 0 and s is not None and tuple(sg.tensors[i].shape) != tuple(s)}
    if not changed:
        return node.model
    tensors = tuple(dataclasses.replace(t, shape=changed[k]) if k in changed else t
                    for k, t in enumerate(sg.tensors))
    subgraphs = list(node.model.subgraphs)
    subgraphs[node.subgraph_index] = dataclasses.replace(sg, tensors=tensors)
    return dataclasses.replace(node.model, subgraphs=tuple(subgraphs))


def _output_shapes(converted, tflite_inputs, in_shapes, fill: int):
    """TFLite tensor -> output shape, from the operations' prepare on stand-in inputs filled
    with ``fill``; None when a prepare refuses the stand-ins."""
    model = converted.nnapi_model
    shape_of = {t: s for t, s in zip(tflite_inputs, in_shapes) if t >= 0}
    stand_ins = []
    for t, index in zip(converted.model_input_tensors, model.input_indexes):
        operand = model.operands[index]
        shape = () if operand.is_scalar else tuple(shape_of.get(t) or ())
        stand_ins.append(np.broadcast_to(np.array(fill, operand.dtype()), shape))
    with vlog.silenced():
        try:
            results = run_model(model, stand_ins, declared_shapes=False, prepare_only=True)
        except NnapiError:  # a stand-in value the prepare refuses: the shape is unknown
            return None
    return {t: tuple(int(d) for d in r.shape)
            for t, r in zip(converted.model_output_tensors, results)}
