"""``NNAPIOpBuilder``: TFLite tensors, scalars and vectors as NNAPI operands.

Reference: docs/reference/tflite-nnapi-delegate.md 3.2 (AddTensor), 3.3 (constant data), 3.4
(scalars and vectors), 3.7 (AddDequantize, sparse CONV_2D weights); upstream
``NNAPIOpBuilder`` in ``tensorflow/lite/delegates/nnapi/nnapi_delegate.cc``. Only public
``ModelBuilder`` methods are called, in the upstream order, so operand indices and lifetimes
match a board's GraphDump.
"""
from __future__ import annotations

import numpy as np

from nnsim.errors import BadDataError
from nnsim.runtime.model import ModelBuilder
from nnsim.common.operand import OperandTypeSpec, SymmPerChannelQuantParams
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType as TT
from nnsim.tflite.sparsity import dense_value
from nnsim.tflite.validate import legacy_quant_params
from nnsim.types import OperandType as T
from nnsim.types import OperationCode as C

# Tensor flags of AddTensor (3.1 / 3.2; NN_TENSOR_FLAG_*).
SCALAR_AS_TENSOR = 1 << 0
INT8_CONVERSION = 1 << 1
USE_INT8_ASYMM_SIGNED = 1 << 2
FORCE_PER_CHANNEL = 1 << 3
HALF_TO_FLOAT_CONVERSION = 1 << 4




class ConvertError(BadDataError):
    """The partition cannot be expressed as an NNAPI model (upstream: ``Init`` fails)."""


class UnwrittenOutputError(ConvertError):
    """nnsim's refusal of a partition whose output upstream would leave unwritten (a sparse
    weight read outside its partition): the delegate keeps those nodes on the CPU instead of
    reading garbage, where upstream fails nothing (3.7)."""


def _as_type(spec_type) -> T:
    return T(int(spec_type))


def is_sparse_weight_node(sg, op) -> bool:
    """IsDensifyConstTensor or IsDequantizeNonConstFloat16 (3.7): a DENSIFY of a constant, or
    a DEQUANTIZE of a non-constant float16 tensor (the DENSIFY -> DEQUANTIZE pattern)."""
    if op.builtin not in (B.DENSIFY, B.DEQUANTIZE) or not op.inputs or op.inputs[0] < 0:
        return False
    x = sg.tensors[op.inputs[0]]
    if op.builtin == B.DENSIFY:
        return x.is_constant
    return x.type == TT.FLOAT16 and not x.is_constant


class OpBuilder:
    """``NNAPIOpBuilder``: operands of the op being built accumulate in ``ins``/``outs``
    (augmented_inputs_/augmented_outputs_) until ``finalize`` adds the operation."""

    def __init__(self, subgraph, options):
        self.sg = subgraph
        self.tensors = subgraph.tensors
        self.fl = int(options.target_feature_level)
        self.sdk = int(options.android_sdk_version)
        self.model = ModelBuilder.create()  # ANeuralNetworksModel_create
        self.t2a: dict[int, int] = {}          # TFLite tensor -> NNAPI operand (3.2)
        self.type_conversion: dict[int, TT] = {}  # TFLite tensor -> equivalent TFLite type
        self.ins: list[int] = []
        self.outs: list[int] = []
        self.op_to_node: list[int] = []       # nnapi_to_tflite_op_mapping_
        self.dequantized: dict[tuple[int, int], int] = {}  # DequantizeMapping
        # 3.7 sparse weights: output tensor -> node, of the partition's DENSIFY nodes with a
        # constant input and of its DEQUANTIZE nodes with a non-constant float16 input
        self.densify_outputs: dict[int, int] = {}
        self.fp16_dequantize_outputs: dict[int, int] = {}
        # AddStateFloat32Tensor outputs (RNN / SVDF / LSTM): (operand, TFLite state tensor)
        self.state_outputs: list[tuple[int, int]] = []
        self.node = -1

    # -- raw operands ---------------------------------------------------------------------------
    def operand(self, nn_type, dims=(), scale: float = 0.0, zp: int = 0) -> int:
        return self.model.add_operand(OperandTypeSpec(int(nn_type), tuple(int(d) for d in dims),
                                                      float(scale), int(zp)))

    def set_value(self, index: int, values) -> None:
        if values is None:
            self.model.set_operand_value(index, None)
        else:
            self.model.set_operand_value(index, np.ascontiguousarray(values))

    def add_operation(self, code, inputs, outputs) -> None:
        """AddOperationToModel: the op and its originating TFLite node (3.5)."""
        self.model.add_operation(int(code), list(inputs), list(outputs))
        self.op_to_node.append(self.node)

    def finalize(self, code) -> None:
        """FinalizeAddOperation."""
        self.add_operation(code, self.ins, self.outs)
        self.ins, self.outs = [], []

    # -- AddTensor (3.2, 3.3) --------------------------------------------------------------------
    def tensor(self, index: int, flags: int = 0, hybrid: bool = False) -> int:
        """The NNAPI operand of TFLite tensor ``index``; registered once, first wins."""
        if index < 0:
            raise ConvertError(f"node {self.node}: an omitted optional input has no NNAPI "
                               f"operand here")
        if index in self.t2a:
            return self.t2a[index]
        t = self.tensors[index]
        ttype = t.type
        if hybrid and ttype == TT.UINT8:
            ttype = TT.INT8  # legacy: uint8 weights of hybrid ops hold int8 values
        scale, zp = legacy_quant_params(t)
        per_channel = None
        if ttype == TT.FLOAT32:
            nn, scale, zp = T.TENSOR_FLOAT32, 0.0, 0
        elif ttype == TT.FLOAT16:
            nn, scale, zp = T.TENSOR_FLOAT16, 0.0, 0
            if flags & HALF_TO_FLOAT_CONVERSION:
                nn = T.TENSOR_FLOAT32
                self.type_conversion[index] = TT.FLOAT32
        elif ttype == TT.UINT8:
            nn = T.TENSOR_QUANT8_ASYMM
            scale = 1.0 if scale == 0 else scale
        elif ttype == TT.INT8:
            if flags & USE_INT8_ASYMM_SIGNED:
                nn = T.TENSOR_QUANT8_ASYMM_SIGNED
            elif flags & INT8_CONVERSION:
                nn = T.TENSOR_QUANT8_ASYMM
            else:
                nn = T.TENSOR_QUANT8_SYMM
            q = t.quantization
            if q is not None and (len(q.scales) > 1 or flags & FORCE_PER_CHANNEL):
                per_channel = SymmPerChannelQuantParams(int(q.quantized_dimension),
                                                        tuple(float(s) for s in q.scales))
                nn, scale, zp = T.TENSOR_QUANT8_SYMM_PER_CHANNEL, 0.0, 0
            else:
                if flags & INT8_CONVERSION:
                    zp += 128
                    self.type_conversion[index] = TT.UINT8
                scale = 1.0 if scale == 0 else scale
        elif ttype == TT.INT32:
            nn = T.TENSOR_INT32
        elif ttype == TT.BOOL:
            nn, scale, zp = T.TENSOR_BOOL8, 0.0, 0
        elif ttype == TT.INT16:
            nn = T.TENSOR_QUANT16_SYMM
        else:
            raise ConvertError(f"Failed to add NN API tensor: type {ttype.name} is not "
                               f"supported (tensor {index} '{t.name}').")
        dims = tuple(t.shape)
        if not dims and flags & SCALAR_AS_TENSOR:
            dims = (1,)
        ann = self.operand(nn, dims, scale, zp)
        self.t2a[index] = ann
        if per_channel is not None:
            self.model.set_operand_symm_per_channel_quant_params(ann, per_channel)
        if t.is_constant:
            data = np.asarray(t.data)
            if ttype in (TT.UINT8, TT.INT8) and flags & INT8_CONVERSION and per_channel is None:
                # upstream reads the bytes as int8 and adds 128, uint8 data included (3.3)
                data = (data.view(np.int8).astype(np.int16) + 128).astype(np.uint8)
            elif t.type == TT.FLOAT16 and flags & HALF_TO_FLOAT_CONVERSION:
                data = data.astype(np.float32)
            self.set_value(ann, data)
        return ann

    def tensor_input(self, index: int, flags: int = 0, hybrid: bool = False) -> int:
        ann = self.tensor(index, flags, hybrid)
        self.ins.append(ann)
        return ann

    def tensor_output(self, index: int, flags: int = 0) -> int:
        ann = self.tensor(index, flags)
        self.outs.append(ann)
        return ann

    # -- scalars, vectors, delegate-made tensors (3.4) -----------------------------------------
    def _scalar(self, nn_type, value, dtype) -> int:
        ann = self.operand(nn_type)
        self.set_value(ann, np.asarray([value], dtype=dtype))
        self.ins.append(ann)
        return ann

    def scalar_int32(self, value) -> int:
        return self._scalar(T.INT32, int(value), np.int32)

    def scalar_float32(self, value) -> int:
        return self._scalar(T.FLOAT32, value, np.float32)

    def scalar_bool(self, value) -> int:
        return self._scalar(T.BOOL, bool(value), np.bool_)

    def vector(self, values, nn_type, dtype, scale: float = 0.0, zp: int = 0) -> int:
        """AddVectorOperand: dims [n]; n == 0 gives an omitted (NO_VALUE) operand."""
        arr = np.asarray([] if values is None else values, dtype=dtype).reshape(-1)
        ann = self.operand(nn_type, (arr.size,), scale, zp)
        self.set_value(ann, arr if arr.size else None)
        self.ins.append(ann)
        return ann

    def vector_int32(self, values, scale: float = 0.0, zp: int = 0) -> int:
        return self.vector(values, T.TENSOR_INT32, np.int32, scale, zp)

    def vector_float32(self, values) -> int:
        return self.vector(values, T.TENSOR_FLOAT32, np.float32)

    def new_constant(self, nn_type, dims, values, dtype, scale: float = 0.0, zp: int = 0) -> int:
        """AddNewInputConstantTensor: a delegate-made constant with explicit type/params."""
        ann = self.operand(nn_type, dims, scale, zp)
        self.set_value(ann, np.asarray(values, dtype=dtype).reshape(tuple(dims)))
        self.ins.append(ann)
        return ann

    def sparse_weights(self, index: int) -> bool:
        """DensifyAndDequantizeConstTensor (3.7): when CONV_2D's filter ``index`` is the output
        of a DENSIFY of this partition, directly or through a float16 DEQUANTIZE, add its dense
        value as a new constant input (float16 dequantized to float32 in the second case, with
        the DENSIFY output's dims and per-tensor quantization); False for any other filter."""
        dequantize = self.fp16_dequantize_outputs.get(index)
        if dequantize is not None:
            densify = self.densify_outputs.get(self.sg.operators[dequantize].inputs[0])
        else:
            densify = self.densify_outputs.get(index)
        if densify is None:
            return False
        op = self.sg.operators[densify]
        sparse, out = self.tensors[op.inputs[0]], self.tensors[op.outputs[0]]
        try:
            value = dense_value(sparse)
        except ValueError as e:   # the reader checked the sparsity: a kernel bug
            raise ConvertError(f"node {densify}: cannot densify tensor {sparse.index}: {e}") \
                from None
        if sparse.type == TT.FLOAT32 or (sparse.type == TT.FLOAT16 and dequantize is not None):
            self.new_constant(T.TENSOR_FLOAT32, out.shape, value, np.float32)
        elif sparse.type == TT.FLOAT16:
            self.new_constant(T.TENSOR_FLOAT16, out.shape, value, np.float16)
        elif sparse.type == TT.INT8:
            self.new_constant(T.TENSOR_QUANT8_ASYMM_SIGNED, out.shape, value, np.int8,
                              *legacy_quant_params(out))
        else:
            raise ConvertError(f"node {densify}: DENSIFY of {sparse.type.name} weights has no "
                               f"NNAPI form")
        return True

    def additional_output(self, dims, nn_type, scale: float = 0.0, zp: int = 0) -> int:
        """AddAdditionalOutputTensor: a new temporary written by the op being built."""
        ann = self.operand(nn_type, dims, scale, zp)
        self.outs.append(ann)
        return ann

    def intermediate_output(self, tfl_type, dims, scale, zp, need_int8: bool = False) -> int:
        """AddIntermediateOutputTensor."""
        if tfl_type == TT.FLOAT32:
            nn = T.TENSOR_FLOAT32
        elif tfl_type == TT.INT8:
            nn = T.TENSOR_QUANT8_ASYMM if need_int8 else T.TENSOR_QUANT8_ASYMM_SIGNED
        elif tfl_type == TT.UINT8:
            nn = T.TENSOR_QUANT8_ASYMM
        else:
            raise ConvertError(f"node {self.node}: no intermediate tensor of type "
                               f"{TT(tfl_type).name}")
        return self.additional_output(dims, nn, scale, zp + (128 if need_int8 else 0))

    def single_value_as_scalar(self, index: int, nn_type) -> None:
        """AddSingleValueTensorAsScalarOperand: a non-constant 1-element tensor fed to an NNAPI
        scalar; it becomes a model input with a recorded type conversion. (Upstream adds the
        scalar operand even when the tensor is already mapped; kept.)"""
        t = self.tensors[index]
        if int(np.prod(t.shape)) != 1:
            raise ConvertError(f"node {self.node}: tensor {index} must hold exactly one value")
        equivalent = {T.INT32: TT.INT32, T.FLOAT32: TT.FLOAT32}.get(_as_type(nn_type))
        if equivalent is None:
            raise ConvertError(f"NN API Delegate: Can't get an equivalent TF Lite type for "
                               f"provided NN API type: {int(nn_type)}.")
        ann = self.operand(nn_type)
        if index in self.t2a:
            self.ins.append(self.t2a[index])
            return
        self.t2a[index] = ann
        self.ins.append(ann)
        if t.type != equivalent:
            self.type_conversion[index] = equivalent

    def add_dequantize(self, position: int, index: int, dequantized_type) -> None:
        """AddDequantize (3.7): one DEQUANTIZE per (operand, type), reused; replaces input
        ``position`` of the op being built."""
        ann = self.t2a.get(index)
        if ann is None:   # e.g. int8 weights from DENSIFY: upstream dequantizes operand -1
            raise ConvertError(f"node {self.node}: tensor {index} '{self.tensors[index].name}' "
                               f"has no NNAPI operand to dequantize")
        key = (ann, int(dequantized_type))
        if key not in self.dequantized:
            out = self.operand(T.TENSOR_FLOAT32, self.tensors[index].shape)
            self.add_operation(C.DEQUANTIZE, [ann], [out])
            self.dequantized[key] = out
        self.ins[position] = self.dequantized[key]

    def append_reshape(self, intermediate: int, out_index: int) -> None:
        """AppendReshape: RESHAPE(intermediate, out dims) -> the TFLite output."""
        self.ins.append(intermediate)
        self.vector_int32(self.tensors[out_index].shape)
        self.tensor_output(out_index, USE_INT8_ASYMM_SIGNED)
        self.finalize(C.RESHAPE)

    def append_requantize(self, intermediate: int, out_index: int, flags: int) -> None:
        """AppendRequantize: ADD(intermediate, zero [1] scale 1 zp 0, NONE) -> the output."""
        self.ins.append(intermediate)
        out = self.tensors[out_index]
        if out.type not in (TT.UINT8, TT.INT8):
            raise ConvertError(f"node {self.node}: requantize needs a quantized output")
        if out.type == TT.UINT8 or flags & INT8_CONVERSION:
            self.vector([0], T.TENSOR_QUANT8_ASYMM, np.uint8, 1.0, 0)
        else:
            self.vector([0], T.TENSOR_QUANT8_ASYMM_SIGNED, np.int8, 1.0, 0)
        self.scalar_int32(0)
        self.tensor_output(out_index, flags)
        self.finalize(C.ADD)
