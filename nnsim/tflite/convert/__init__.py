"""Build the NNAPI model of one delegated partition: the delegate's ``BuildGraph``.

Reference: docs/reference/tflite-nnapi-delegate.md sections 3 (operands) and 4 (op mapping);
upstream ``NNAPIOpBuilder`` / ``NNAPIDelegateKernel::AddOpsAndTensors`` / ``BuildGraph`` in
``tensorflow/lite/delegates/nnapi/nnapi_delegate.cc``.

``build_nnapi_model(model, subgraph_index, node_indices, input_tensors, output_tensors,
options) -> ConvertedModel`` builds the model through the public ``ModelBuilder`` methods only
(``add_operand``, ``set_operand_value``, ``set_operand_symm_per_channel_quant_params``,
``add_operation``, ``identify_inputs_and_outputs``, ``relax_computation_float32_to_float16``,
``finish``), in the upstream call order, so operand indices, lifetimes and operation order are
the ones a board's GraphDump shows. Constants are always attached with ``set_operand_value``
(3.3 step 4: nnsim models come from a buffer, not from an mmap'ed file), so a value of at most
128 bytes is CONSTANT_COPY and a larger one CONSTANT_REFERENCE.

Modules: ``builder`` (the operand builder, ``NNAPIOpBuilder``: 3.2-3.4, 3.7), ``nodes`` (the
per-node loop of ``AddOpsAndTensors`` and ``Map``: 3.1, 3.5, 4), ``lowerings`` (TFLite ops
expressed as several NNAPI operations: 4).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from nnsim.runtime.model import ModelBuilder
from nnsim.tflite.convert import nodes as node_mapping
from nnsim.tflite.convert.builder import ConvertError, OpBuilder, UnwrittenOutputError
from nnsim.tflite.schema import TensorType as TT
from nnsim.tflite.validate import SDK_NNAPI11

__all__ = ["ConvertOptions", "ConvertedModel", "ConvertError", "build_nnapi_model",
           "apply_input_conversion", "apply_output_conversion"]

_NP = {TT.FLOAT32: "float32", TT.FLOAT16: "float16", TT.INT32: "int32", TT.UINT8: "uint8",
       TT.INT8: "int8", TT.INT64: "int64", TT.BOOL: "bool", TT.INT16: "int16"}


@dataclass(frozen=True)
class ConvertOptions:
    """``target_feature_level``: 27..31 or 1000006+ (3.1 flags, 4 variants);
    ``android_sdk_version``: the device SDK (HARD_SWISH lowering, relaxed-fp16 call);
    ``runtime_feature_level``: the newest NNAPI feature level the built model may need (None:
    the emulated phone's runtime level; the TFLite CPU path's one-node models use FL8)."""

    target_feature_level: int
    android_sdk_version: int
    allow_fp16: bool = False
    runtime_feature_level: int | None = None


@dataclass
class ConvertedModel:
    """A finished NNAPI model and how it maps back to the TFLite subgraph.

    ``input_conversions`` / ``output_conversions`` name the value conversion the delegate's
    ``Invoke`` applies (3.6): ``int8_to_uint8`` (+128 before NNAPI), ``uint8_to_int8`` (-128
    after), ``uint8_to_int32``, ``int8_to_int32`` (plain widening, FL >= 30),
    ``int8_to_int32_plus128`` (FL < 30), ``int64_to_int32``, ``float16_to_float32``. See
    ``apply_input_conversion`` / ``apply_output_conversion``.
    """

    nnapi_model: ModelBuilder
    tensor_to_operand: dict[int, int]
    model_input_tensors: list[int]
    model_output_tensors: list[int]
    input_conversions: dict[int, str] = field(default_factory=dict)
    output_conversions: dict[int, str] = field(default_factory=dict)
    nnapi_to_tflite_node: list[int] = field(default_factory=list)

    @cached_property
    def _plain(self) -> tuple:
        """Whether the inputs and the outputs go without conversion (3.6) and without a scalar
        operand's reshape: then the delegate's values pass as they are (the Python around
        each execution is a cost of every invoke: benchmarks/README.md, "Twenty-seventh
        session")."""
        model = self.nnapi_model
        inputs = not self.input_conversions and not any(
            model.operands[i].is_scalar for i in model.input_indexes)
        return inputs, not self.output_conversions

    def nnapi_inputs(self, values) -> list[np.ndarray]:
        """The NNAPI model's inputs, in order, from TFLite tensor values (a mapping tensor ->
        array), converted as the delegate's Invoke does (3.6); a one-element tensor fed to a
        scalar operand (3.4) is passed as a 0-d array."""
        if self._plain[0]:
            arrays = [values[t] for t in self.model_input_tensors]
            if set(map(type, arrays)) <= {np.ndarray}:
                return arrays
        arrays = []
        for t, ann in zip(self.model_input_tensors, self.nnapi_model.input_indexes):
            value = apply_input_conversion(values[t], self.input_conversions.get(t))
            if self.nnapi_model.operands[ann].is_scalar:
                value = value.reshape(())
            arrays.append(value)
        return arrays

    def tflite_outputs(self, results) -> dict[int, np.ndarray]:
        """TFLite tensor -> value from the NNAPI model's outputs, converted back (3.6)."""
        if self._plain[1] and set(map(type, results)) <= {np.ndarray}:
            return dict(zip(self.model_output_tensors, results))
        return {t: apply_output_conversion(r, self.output_conversions.get(t))
                for t, r in zip(self.model_output_tensors, results)}


def apply_input_conversion(value, conversion: str | None) -> np.ndarray:
    """A TFLite input value as the NNAPI model input expects it (3.6)."""
    value = np.asarray(value)
    if conversion is None:
        return value
    if conversion == "int8_to_uint8":
        return (value.astype(np.int16) + 128).astype(np.uint8)
    if conversion == "int8_to_int32_plus128":
        return value.astype(np.int32) + 128
    if conversion in ("uint8_to_int32", "int8_to_int32", "int64_to_int32"):
        return value.astype(np.int32)
    if conversion == "float16_to_float32":
        return value.astype(np.float32)
    raise ValueError(f"unknown input conversion {conversion!r}")


def apply_output_conversion(value, conversion: str | None) -> np.ndarray:
    """An NNAPI model output as the TFLite tensor holds it (3.6)."""
    value = np.asarray(value)
    if conversion is None:
        return value
    if conversion == "uint8_to_int8":
        return (value.astype(np.int16) - 128).astype(np.int8)
    raise ValueError(f"unknown output conversion {conversion!r}")


def _conversion_name(src: TT, dst: TT, fl: int) -> str:
    name = f"{_NP.get(src, src.name.lower())}_to_{_NP.get(dst, dst.name.lower())}"
    if name == "int8_to_int32" and fl < 30:
        name += "_plus128"
    return name


def build_nnapi_model(model, subgraph_index: int, node_indices, input_tensors, output_tensors,
                      options: ConvertOptions) -> ConvertedModel:
    """``NNAPIDelegateKernel::BuildGraph`` for the partition ``node_indices`` (in that order).

    ``input_tensors`` / ``output_tensors`` are the partition's tensor lists (6.4); model inputs
    are the non-constant, non-omitted, mapped ones sorted ascending, model outputs the mapped
    ones sorted ascending (3.6). Raises ConvertError, or the NnapiError of the failing
    ModelBuilder call, when the partition cannot be built.
    """
    sg = model.subgraphs[subgraph_index]
    b = OpBuilder(sg, options)
    if options.runtime_feature_level is not None:
        b.model.runtime_feature_level = int(options.runtime_feature_level)
    nodes = [int(n) for n in node_indices]
    node_mapping.register_fp16_dequantize_inputs(b, nodes)
    for n in nodes:
        b.node = n
        node_mapping.add_node(b, sg.operators[n])

    ins, model_inputs = [], []
    for t in sorted({int(i) for i in input_tensors}):
        if t < 0 or sg.tensors[t].is_constant or t not in b.t2a:
            continue
        ins.append(b.t2a[t])
        model_inputs.append(t)
    outs, model_outputs = [], []
    produced_by_sparse = {o: n for table in (b.densify_outputs, b.fp16_dequantize_outputs)
                          for o, n in table.items()}
    for t in sorted({int(o) for o in output_tensors}):
        if t >= 0 and t in b.t2a:
            outs.append(b.t2a[t])
            model_outputs.append(t)
        elif t in produced_by_sparse:
            # Upstream skips unmapped outputs, so a node outside the partition would read a
            # tensor nothing writes; nnsim refuses the partition instead (3.7: the dense
            # weights exist only as constants of the partition's CONV_2D nodes).
            n = produced_by_sparse[t]
            raise UnwrittenOutputError(
                f"node {n}: {sg.operators[n].name} output tensor {t} is used outside its "
                f"partition; its sparse weights are only added to the partition's CONV_2D nodes")
    for ann, t in b.state_outputs:  # written back to the state tensors after Invoke (3.6)
        outs.append(ann)
        model_outputs.append(t)
    b.model.identify_inputs_and_outputs(ins, outs)
    if b.sdk >= SDK_NNAPI11:
        b.model.relax_computation_float32_to_float16(bool(options.allow_fp16))
    b.model.finish()

    in_conv = {t: _conversion_name(sg.tensors[t].type, b.type_conversion[t], b.fl)
               for t in model_inputs if t in b.type_conversion}
    out_conv = {t: "uint8_to_int8" for t in model_outputs
                if sg.tensors[t].type == TT.INT8 and b.type_conversion.get(t) == TT.UINT8}
    return ConvertedModel(b.model, dict(b.t2a), model_inputs, model_outputs, in_conv, out_conv,
                          list(b.op_to_node))

