"""Build a one-operator .tflite model in memory and run it on LiteRT's reference kernels.

This is the oracle for the kernel tests: ``run_op`` returns what TFLite's ``BuiltinRefOpResolver``
(``OpResolverType.BUILTIN_REF``) computes for one operator, single-threaded. The flatbuffer is
written with the generated builders of the ``tflite`` package.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import flatbuffers
import numpy as np

try:
    from ai_edge_litert import interpreter as _litert
except ImportError:  # pragma: no cover - the test modules skip when LiteRT is missing
    _litert = None

AVAILABLE = _litert is not None

_TENSOR_TYPES = {
    np.dtype(np.float32): 0,
    np.dtype(np.float16): 1,
    np.dtype(np.int32): 2,
    np.dtype(np.uint8): 3,
    np.dtype(np.int64): 4,
    np.dtype(np.int8): 9,
    np.dtype(np.int16): 7,
}

# BuiltinOperator codes and the options table each operator uses.
OPS = {
    "ADD": (0, "AddOptions"),
    "AVERAGE_POOL_2D": (1, "Pool2DOptions"),
    "CONCATENATION": (2, "ConcatenationOptions"),
    "CONV_2D": (3, "Conv2DOptions"),
    "DEPTHWISE_CONV_2D": (4, "DepthwiseConv2DOptions"),
    "DEQUANTIZE": (6, None),
    "FULLY_CONNECTED": (9, "FullyConnectedOptions"),
    "LOGISTIC": (14, None),
    "MAX_POOL_2D": (17, "Pool2DOptions"),
    "MUL": (18, "MulOptions"),
    "RELU": (19, None),
    "RELU_N1_TO_1": (20, None),
    "RELU6": (21, None),
    "SOFTMAX": (25, "SoftmaxOptions"),
    "PAD": (34, "PadOptions"),
    "MEAN": (40, "ReducerOptions"),
    "SUB": (41, "SubOptions"),
    "QUANTIZE": (114, "QuantizeOptions"),
}


@dataclass
class T:
    """A tensor of the one-op model: constant when ``data`` is given, else a model input.

    ``scale``/``zp`` may be sequences (per-channel, along ``quant_dim``).
    """

    shape: tuple
    dtype: object
    scale: object = None
    zp: object = 0
    data: np.ndarray | None = None
    quant_dim: int = 0


def _mod(name):
    return importlib.import_module(f"tflite.{name}")


def _vector(builder, start_fn, values, prepend):
    start_fn(builder, len(values))
    for v in reversed(list(values)):
        prepend(v)
    return builder.EndVector()


def _options(builder, table, options):
    mod = _mod(table)
    getattr(mod, f"{table}Start")(builder)
    for field, value in options.items():
        getattr(mod, f"{table}Add{field}")(builder, value)
    return getattr(mod, f"{table}End")(builder)


def _quantization(builder, spec):
    if spec.scale is None:
        return None
    qp = _mod("QuantizationParameters")
    scales = np.atleast_1d(np.asarray(spec.scale, np.float32))
    zps = np.atleast_1d(np.asarray(spec.zp, np.int64))
    if zps.size == 1 and scales.size > 1:
        zps = np.repeat(zps, scales.size)
    scale_vec = _vector(builder, qp.QuantizationParametersStartScaleVector, scales,
                        lambda v: builder.PrependFloat32(float(v)))
    zp_vec = _vector(builder, qp.QuantizationParametersStartZeroPointVector, zps,
                     lambda v: builder.PrependInt64(int(v)))
    qp.QuantizationParametersStart(builder)
    qp.QuantizationParametersAddScale(builder, scale_vec)
    qp.QuantizationParametersAddZeroPoint(builder, zp_vec)
    qp.QuantizationParametersAddQuantizedDimension(builder, spec.quant_dim)
    return qp.QuantizationParametersEnd(builder)


def build_model(op: str, inputs, outputs, options=None) -> bytes:
    """Serialise a model with one operator; returns the .tflite bytes.

    ``inputs`` may contain None for an omitted optional input (index -1).
    """
    code, table = OPS[op]
    builder = flatbuffers.Builder(1024)
    specs = [s for s in inputs if s is not None] + list(outputs)
    tensor_mod, buffer_mod = _mod("Tensor"), _mod("Buffer")

    buffers = [None]  # buffer 0 is the conventional empty buffer
    tensor_buffer = []
    for spec in specs:
        if spec.data is not None:
            raw = np.ascontiguousarray(spec.data, dtype=spec.dtype).tobytes()
            buffers.append(raw)
            tensor_buffer.append(len(buffers) - 1)
        else:
            tensor_buffer.append(0)

    tensor_offsets = []
    for i, spec in enumerate(specs):
        name = builder.CreateString(f"t{i}")
        shape = _vector(builder, tensor_mod.TensorStartShapeVector, spec.shape,
                        lambda v: builder.PrependInt32(int(v)))
        quant = _quantization(builder, spec)
        tensor_mod.TensorStart(builder)
        tensor_mod.TensorAddShape(builder, shape)
        tensor_mod.TensorAddType(builder, _TENSOR_TYPES[np.dtype(spec.dtype)])
        tensor_mod.TensorAddBuffer(builder, tensor_buffer[i])
        tensor_mod.TensorAddName(builder, name)
        if quant is not None:
            tensor_mod.TensorAddQuantization(builder, quant)
        tensor_offsets.append(tensor_mod.TensorEnd(builder))

    op_inputs, k = [], 0
    for s in inputs:
        op_inputs.append(-1 if s is None else k)
        k += s is not None
    op_outputs = list(range(k, k + len(outputs)))
    graph_inputs = [i for i, s in enumerate(specs[:k]) if s.data is None]

    operator_mod = _mod("Operator")
    in_vec = _vector(builder, operator_mod.OperatorStartInputsVector, op_inputs,
                     builder.PrependInt32)
    out_vec = _vector(builder, operator_mod.OperatorStartOutputsVector, op_outputs,
                      builder.PrependInt32)
    opts = _options(builder, table, options or {}) if table else None
    operator_mod.OperatorStart(builder)
    operator_mod.OperatorAddOpcodeIndex(builder, 0)
    operator_mod.OperatorAddInputs(builder, in_vec)
    operator_mod.OperatorAddOutputs(builder, out_vec)
    if opts is not None:
        enum = getattr(_mod("BuiltinOptions").BuiltinOptions, table)
        operator_mod.OperatorAddBuiltinOptionsType(builder, enum)
        operator_mod.OperatorAddBuiltinOptions(builder, opts)
    operator = operator_mod.OperatorEnd(builder)

    sg = _mod("SubGraph")
    tensors_vec = _vector(builder, sg.SubGraphStartTensorsVector, tensor_offsets,
                          builder.PrependUOffsetTRelative)
    gin = _vector(builder, sg.SubGraphStartInputsVector, graph_inputs, builder.PrependInt32)
    gout = _vector(builder, sg.SubGraphStartOutputsVector, op_outputs, builder.PrependInt32)
    ops_vec = _vector(builder, sg.SubGraphStartOperatorsVector, [operator],
                      builder.PrependUOffsetTRelative)
    sg.SubGraphStart(builder)
    sg.SubGraphAddTensors(builder, tensors_vec)
    sg.SubGraphAddInputs(builder, gin)
    sg.SubGraphAddOutputs(builder, gout)
    sg.SubGraphAddOperators(builder, ops_vec)
    subgraph = sg.SubGraphEnd(builder)

    buffer_offsets = []
    for raw in buffers:
        data_vec = None
        if raw:
            builder.StartVector(1, len(raw), 16)
            builder.head = builder.head - len(raw)
            builder.Bytes[builder.head: builder.head + len(raw)] = raw
            data_vec = builder.EndVector()
        buffer_mod.BufferStart(builder)
        if data_vec is not None:
            buffer_mod.BufferAddData(builder, data_vec)
        buffer_offsets.append(buffer_mod.BufferEnd(builder))

    oc = _mod("OperatorCode")
    oc.OperatorCodeStart(builder)
    oc.OperatorCodeAddDeprecatedBuiltinCode(builder, min(code, 127))
    oc.OperatorCodeAddBuiltinCode(builder, code)
    oc.OperatorCodeAddVersion(builder, 1)
    opcode = oc.OperatorCodeEnd(builder)

    model = _mod("Model")
    codes_vec = _vector(builder, model.ModelStartOperatorCodesVector, [opcode],
                        builder.PrependUOffsetTRelative)
    sgs_vec = _vector(builder, model.ModelStartSubgraphsVector, [subgraph],
                      builder.PrependUOffsetTRelative)
    bufs_vec = _vector(builder, model.ModelStartBuffersVector, buffer_offsets,
                       builder.PrependUOffsetTRelative)
    desc = builder.CreateString("nnsim kernel oracle")
    model.ModelStart(builder)
    model.ModelAddVersion(builder, 3)
    model.ModelAddOperatorCodes(builder, codes_vec)
    model.ModelAddSubgraphs(builder, sgs_vec)
    model.ModelAddDescription(builder, desc)
    model.ModelAddBuffers(builder, bufs_vec)
    builder.Finish(model.ModelEnd(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def run_op(op: str, inputs, outputs, feeds, options=None, *, reference=True):
    """Run one operator on LiteRT; ``feeds`` are the values of the non-constant inputs.

    ``reference=True`` uses ``BUILTIN_REF`` (TFLite reference kernels), else ``BUILTIN``
    without default delegates (the optimized CPU kernels).
    """
    kind = _litert.OpResolverType
    resolver = kind.BUILTIN_REF if reference else kind.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    interp = _litert.Interpreter(
        model_content=build_model(op, inputs, outputs, options),
        experimental_op_resolver_type=resolver,
        num_threads=1,
    )
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), feeds):
        interp.set_tensor(detail["index"], np.ascontiguousarray(value, dtype=detail["dtype"]))
    interp.invoke()
    return [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]
