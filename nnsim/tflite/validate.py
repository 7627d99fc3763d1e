"""The NNAPI delegate's per-node check: ``NNAPIDelegateKernel::Validate``.

Reference: docs/reference/tflite-nnapi-delegate.md section 5 (upstream
``tensorflow/lite/delegates/nnapi/nnapi_delegate.cc``, LiteRT snapshot of section 0).

``validate_node(model, subgraph, node_index, target_feature_level, is_accelerator_specified)``
returns the list of failures; an empty list means the delegate accepts the node. As upstream,
every check of an op runs and failures accumulate (5); the feature level is compared as a plain
int (27..31, then 1000006+ for FL6..FL8, 2.1). Helper quirks kept on purpose (5.1):

* ``ExpectMaxOpVersion`` and ``ExpectOpVersion`` both test ``version <= N``;
* the "Is...Operator" type checks look only at input 0;
* "quantized" means uint8 or int8 (int16 is not);
* quantization scale / zero point are the *legacy* per-tensor params, 0 / 0 for per-channel.

Ops of the 5.2 table are implemented, plus the few simple upstream ops that
``nnsim.tflite.convert`` can also map (FLOOR, SIN, COS, NEG, logical ops, LRN, FILL, ...).
The recurrent builtins (LSTM, RNN, SVDF, the sequence ops) are validated in
``validate_recurrent``; the constants, failure types and quantization helper both use are in
``validate_common`` (re-exported here). Everything else, CUSTOM ops included, fails with
kUnsupportedOperator (LSH_PROJECTION, which upstream validates and maps but nnsim does not
convert, is refused the same way, so that nothing accepted here fails to convert).
"""
from __future__ import annotations

import numpy as np

from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType as TT
from nnsim.tflite.validate_common import (FL5, FL6, FL7, FL8, SDK_NNAPI10, SDK_NNAPI11,
                                          SDK_NNAPI12, SDK_NNAPI13, NNAPIValidationFailureType,
                                          ValidationFailure, legacy_quant_params)
from nnsim.tflite.validate_recurrent import RECURRENT_RULES, recurrent_is_hybrid

__all__ = [
    "NNAPIValidationFailureType", "ValidationFailure", "validate_node", "is_node_supported",
    "legacy_quant_params", "is_hybrid_operator",
    "SDK_NNAPI10", "SDK_NNAPI11", "SDK_NNAPI12", "SDK_NNAPI13", "FL5", "FL6", "FL7", "FL8",
]

_QUANT = (TT.UINT8, TT.INT8)
_FQ8 = (TT.FLOAT32, TT.UINT8, TT.INT8)
_FQ8I32 = (TT.FLOAT32, TT.UINT8, TT.INT8, TT.INT32)
_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1

F = NNAPIValidationFailureType


def is_hybrid_operator(subgraph, op) -> bool:
    """IsHybridOperator (3.1): CONV_2D / FULLY_CONNECTED, float32 input, quantized weights;
    the recurrent builtins in ``validate_recurrent.recurrent_is_hybrid``."""
    if op.builtin in RECURRENT_RULES:
        return recurrent_is_hybrid(subgraph, op)
    if op.builtin not in (B.CONV_2D, B.FULLY_CONNECTED) or len(op.inputs) < 2:
        return False
    x, w = op.inputs[0], op.inputs[1]
    if x < 0 or w < 0:
        return False
    ts = subgraph.tensors
    return ts[x].type == TT.FLOAT32 and ts[w].type in _QUANT


class _Ctx:
    """One Validate call: the node, the feature level and the accumulated failures."""

    def __init__(self, subgraph, op, fl: int, acc: bool):
        self.sg, self.op, self.fl, self.acc = subgraph, op, fl, acc
        self.version, self.opts = op.version, op.options
        self.failures: list[ValidationFailure] = []

    # -- node access ---------------------------------------------------------------------------
    @property
    def n_in(self) -> int:
        return len(self.op.inputs)

    def t(self, pos: int):
        """Input tensor ``pos`` (None when absent or omitted)."""
        if pos >= len(self.op.inputs) or self.op.inputs[pos] < 0:
            return None
        return self.sg.tensors[self.op.inputs[pos]]

    def out(self, pos: int = 0):
        if pos >= len(self.op.outputs) or self.op.outputs[pos] < 0:
            return None
        return self.sg.tensors[self.op.outputs[pos]]

    def ttype(self, pos: int):
        t = self.t(pos)
        return None if t is None else t.type

    def rank(self, pos: int) -> int:
        t = self.t(pos)
        return 0 if t is None else len(t.shape)

    def is_const(self, pos: int) -> bool:
        t = self.t(pos)
        return t is not None and t.is_constant

    def opt(self, name: str, default=None):
        return getattr(self.opts, name, default) if self.opts is not None else default

    # -- Expect* helpers (5.1) -----------------------------------------------------------------
    def expect(self, cond, ftype: F, message: str) -> bool:
        if not cond:
            self.failures.append(ValidationFailure(ftype, message))
            return False
        return True

    def max_op_version(self, n: int) -> bool:
        return self.expect(self.version <= n, F.kUnsupportedOperatorVersion,
                           f"OP Version higher than {n}")

    def op_version(self, n: int) -> bool:  # quirk: also `<=`
        return self.expect(self.version <= n, F.kUnsupportedOperatorVersion,
                           f"OP Version different from {n}")

    def min_sdk(self, n: int) -> bool:
        return self.expect(self.fl >= n, F.kUnsupportedAndroidVersion,
                           f"Android sdk version less than {n}")

    def type_in(self, actual, allowed, message: str, ftype: F = F.kUnsupportedInputType) -> bool:
        return self.expect(actual in allowed, ftype, message)

    def input_type_in(self, actual, *allowed) -> bool:
        names = ", ".join("kTfLite" + _tfl_name(a) for a in allowed)
        return self.type_in(actual, allowed, f"Input type not in expected list {names}")

    # ExpectIsFloatOperator & co.: input 0 only
    def is_float(self) -> bool:
        return self.type_in(self.ttype(0), (TT.FLOAT32,), "Input should be Float")

    def is_float_or_uint8(self) -> bool:
        return self.type_in(self.ttype(0), (TT.FLOAT32, TT.UINT8), "Input should be Float or UINT8")

    def is_float_or_quant8(self) -> bool:
        return self.type_in(self.ttype(0), _FQ8, "Input should be Float or Quant8")

    def is_float_quant8_or_int32(self) -> bool:
        return self.type_in(self.ttype(0), _FQ8I32, "Input should be Float, Quant8, or Int32")

    def restricted_scales(self) -> bool:
        """ExpectIsRestrictedScalesCompliant (NNAPI 1.0/1.1 quantized CONV/DW/FC)."""
        s_in = legacy_quant_params(self.t(0))[0] if self.t(0) is not None else 0.0
        s_w = legacy_quant_params(self.t(1))[0] if self.t(1) is not None else 0.0
        s_out = legacy_quant_params(self.out())[0] if self.out() is not None else 0.0
        return self.expect(np.float32(s_in) * np.float32(s_w) < np.float32(s_out),
                           F.kNotRestrictedScaleCompliant,
                           "When using NN API version 1.0 or 1.1, input_scale * filter_scale "
                           "< output_scale.")

    def activation_none(self, message: str, ftype: F = F.kNoActivationExpected) -> bool:
        return self.expect(self.opt("fused_activation_function", Act.NONE) == Act.NONE,
                           ftype, message)

    def ranks_at_most_4(self, message: str = "Input rank must be <= 4") -> bool:
        return self.expect(max(self.rank(0), self.rank(1)) <= 4, F.kUnsupportedOperandRank,
                           message)

def _tfl_name(t) -> str:
    return {TT.FLOAT32: "Float32", TT.FLOAT16: "Float16", TT.INT32: "Int32", TT.UINT8: "UInt8",
            TT.INT8: "Int8", TT.BOOL: "Bool", TT.INT64: "Int64"}.get(t, str(t))


# -- per-op rules (5.2); each takes the context and records failures ----------------------------
#
# Simple rules are sequences of standard checks (``_steps``); an upstream
# ``if (cond) Expect(p)`` is written as the check ``not cond or p``, which records the same
# failure in the same place.

def _steps(*steps):
    """A rule made of checks run in the given (upstream) order:
    ("max", N) ExpectMaxOpVersion, ("ver", N) ExpectOpVersion, ("sdk", N) minimum feature
    level, ("is", helper) an ExpectIs...Operator helper, ("in", types) EXPECT_INPUT_TYPE_IN on
    input 0, ("t0", types, message) input 0 type with the op's own message, and
    ("x", predicate(ctx), failure type, message) any other Expect."""

    def rule(v: _Ctx) -> None:
        for step in steps:
            kind, arg = step[0], step[1]
            if kind == "max":
                v.max_op_version(arg)
            elif kind == "ver":
                v.op_version(arg)
            elif kind == "sdk":
                v.min_sdk(arg)
            elif kind == "is":
                getattr(v, arg)()
            elif kind == "in":
                v.input_type_in(v.ttype(0), *arg)
            elif kind == "t0":
                v.expect(v.ttype(0) in arg, F.kUnsupportedInputType, step[2])
            else:
                v.expect(arg(v), step[2], step[3])
    return rule


_RANKS_LE_4 = ("x", lambda v: max(v.rank(0), v.rank(1)) <= 4, F.kUnsupportedOperandRank,
               "Input rank must be <= 4")


def _out_rank_nonzero(message):
    return ("x", lambda v: v.out() is not None and len(v.out().shape) != 0,
            F.kUnsupportedOutputType, message)


def _add_mul(v: _Ctx, max_version: int) -> None:
    v.max_op_version(max_version)
    if v.fl >= SDK_NNAPI13:
        v.is_float_quant8_or_int32()
        if v.ttype(0) == TT.INT32:
            v.activation_none("No activation function supported")
    else:
        v.is_float_or_quant8()
    v.ranks_at_most_4()


def _add(v):
    _add_mul(v, 2)


def _mul(v):
    _add_mul(v, 3 if v.acc else 2)


_sub = _steps(
    ("max", 3),
    ("x", lambda v: (v.fl >= SDK_NNAPI11 and v.ttype(0) == TT.FLOAT32)
     or (v.fl >= SDK_NNAPI12 and v.ttype(0) in _QUANT)
     or (v.fl >= SDK_NNAPI13 and v.ttype(0) == TT.INT32),
     F.kUnsupportedInputType, "NNAPI only support float sub."),
    ("x", lambda v: v.ttype(0) != TT.INT32 or _act_none(v), F.kNoActivationExpected,
     "No activation function supported"),
    _RANKS_LE_4)
_div = _steps(("ver", 1), ("sdk", SDK_NNAPI11),
              ("t0", (TT.FLOAT32,), "NNAPI only support float div."), _RANKS_LE_4)
_average_pool = _steps(
    ("max", 2), ("is", "is_float_or_quant8"),
    ("x", lambda v: v.ttype(0) not in _QUANT or v.acc
     or v.opt("filter_width", 0) * v.opt("filter_height", 0) <= 256,
     F.kUnsupportedOperandSize, "Large filter window would overflow on the reference CPU path"))
_max_pool = _relu_logistic = _steps(("max", 2), ("is", "is_float_or_quant8"))
_l2_pool = _steps(("ver", 1), ("is", "is_float"),
                  ("x", lambda v: v.fl >= SDK_NNAPI12 or _act_none(v),
                   F.kUnsupportedOperandValue,
                   "Before NNAPI 1.2 fused activation for l2_pool may not be supported."))


def _act_none(v) -> bool:
    return v.opt("fused_activation_function", Act.NONE) == Act.NONE


def _conv(v):
    v.max_op_version(5)
    x, w = v.t(0), v.t(1)
    if v.fl < SDK_NNAPI12:
        v.expect(not is_hybrid_operator(v.sg, v.op), F.kUnsupportedHybridOperator,
                 "Hybrid operators not supported before NNAPI 1.2")
        v.is_float_or_uint8()
        if w is not None and w.quantization is not None:
            v.expect(len(w.quantization.scales) <= 1, F.kUnsupportedQuantizationType,
                     "Per-channel quantized convolution not supported before NNAPI 1.2.")
    if v.fl < SDK_NNAPI12 and v.ttype(0) == TT.UINT8:
        v.restricted_scales()
    v.expect(v.n_in == 3, F.kMissingRequiredOperand, "Conv2D with omitted bias not supported")
    if v.opt("dilation_w_factor", 1) != 1 or v.opt("dilation_h_factor", 1) != 1:
        v.expect(v.fl >= SDK_NNAPI12, F.kUnsupportedOperandValue,
                 "NNAPI supports dilated Conv2D since NNAPI 1.2.")
    if v.fl < SDK_NNAPI12 and x is not None and w is not None:
        v.expect(_dim(x, 3) == _dim(w, 3), F.kUnsupportedOperandValue,
                 "Grouped convolution not supported before NNAPI < 1.2")


def _depthwise(v):
    v.max_op_version(3)
    if v.fl < SDK_NNAPI12:
        v.is_float_or_uint8()
        if v.ttype(0) == TT.UINT8:
            v.restricted_scales()
        v.expect(v.opt("dilation_w_factor", 1) == 1 and v.opt("dilation_h_factor", 1) == 1,
                 F.kUnsupportedOperandValue,
                 "dilation_width_factor and dilation_height_factor expected to be equal to 1")


def _fully_connected(v):
    v.max_op_version(5)
    out = v.out()
    v.expect(out is None or out.type != TT.INT16, F.kUnsupportedOutputType,
             "Unsupported output of type kTfLiteInt16")
    if v.fl < SDK_NNAPI12:
        v.expect(not is_hybrid_operator(v.sg, v.op), F.kUnsupportedHybridOperator,
                 "Hybrid operators not supported before NNAPI 1.2")
        v.is_float_or_uint8()
    if v.fl < SDK_NNAPI12 and v.ttype(0) == TT.UINT8:
        v.restricted_scales()
    if v.opt("keep_num_dims", False):
        v.min_sdk(SDK_NNAPI13)


_hard_swish = _steps(("is", "is_float_or_quant8"))  # no version check at all
_softmax = _steps(
    ("ver", 2), ("is", "is_float_or_quant8"),
    ("x", lambda v: v.out() is not None and v.out().type in _FQ8, F.kUnsupportedOutputType,
     "Output type should be one of kTfLiteFloat32, kTfLiteUInt8, kTfLiteInt8."),
    ("x", lambda v: v.rank(0) <= 4, F.kUnsupportedOperandRank, "Input rank should be <= 4"),
    ("x", lambda v: v.fl >= SDK_NNAPI12 or v.rank(0) in (2, 4), F.kUnsupportedOperandRank,
     "Before API level 29 only 2D and 4D input tensors were supported."))


def _reshape(v):
    v.op_version(1)
    if v.fl < FL6:
        v.is_float_or_quant8()
    else:
        v.is_float_quant8_or_int32()
    v.expect(v.rank(0) <= 4, F.kUnsupportedOperandRank, "Input rank should be <= 4")
    out = v.out()
    v.expect(out is None or len(out.shape) <= 4, F.kUnsupportedOperandRank,
             "Output rank should be <= 4")
    if v.n_in >= 2:
        v.expect(v.is_const(1), F.kInputTensorShouldHaveConstantShape,
                 "The shape input tensor must be constant.")
    if v.n_in == 1:
        shape = v.opt("new_shape", None) or ()
        n = len(shape)
        if n == 1 and shape[0] == 0:  # legacy models write [0] for a scalar
            n = 0
        v.expect(n > 0, F.kUnsupportedOperandRank, "New shape rank should be > 0")


_SIZE_INPUT = (
    ("x", lambda v: v.n_in >= 2, F.kUnsupportedOperatorVariant, "Expected at least 2 inputs"),
    ("x", lambda v: v.n_in < 2 or v.is_const(1), F.kInputTensorShouldHaveConstantShape,
     "The size input tensor must be constant."))
_RESIZE_FLAGS = (  # refused up to FL3 included
    ("x", lambda v: v.fl > SDK_NNAPI12 or not v.opt("align_corners", False),
     F.kUnsupportedOperandValue, "NNAPI does not support align_corners == true."),
    ("x", lambda v: v.fl > SDK_NNAPI12 or not v.opt("half_pixel_centers", False),
     F.kUnsupportedOperandValue, "NNAPI does not support half_pixel_centers == true."))
_resize_bilinear = _steps(
    ("max", 3),
    ("x", lambda v: v.rank(0) == 4, F.kUnsupportedOperandRank, "Input should have rank 4"),
    ("is", "is_float_or_quant8"), *_SIZE_INPUT,
    ("x", lambda v: v.fl >= SDK_NNAPI12 or v.out() is None
     or _dim(v.out(), 1) == _dim(v.out(), 2), F.kUnsupportedOperandValue,
     "Require width == height due to driver differences in NNAPI < 1.2"),
    *_RESIZE_FLAGS,
    ("x", lambda v: v.fl >= SDK_NNAPI12 or v.ttype(0) == TT.FLOAT32, F.kUnsupportedInputType,
     "NNAPI 1.0 & 1.1 only supports float input."))
_resize_nearest = _steps(("max", 3), ("sdk", SDK_NNAPI12), ("is", "is_float_or_quant8"),
                         *_SIZE_INPUT, *_RESIZE_FLAGS)
_squeeze = _steps(("ver", 1), ("sdk", SDK_NNAPI11),
                  ("x", lambda v: v.fl != SDK_NNAPI11 or len(v.opt("squeeze_dims", None) or ()),
                   F.kUnsupportedOperandValue,
                   "NNAPI 1.1 does not support null squeeze_dims properly."))
_l2_norm = _steps(
    ("max", 2),
    ("x", lambda v: v.fl >= SDK_NNAPI12 or v.ttype(0) == TT.FLOAT32, F.kUnsupportedInputType,
     "Input should be Float"),
    ("x", lambda v: v.fl >= SDK_NNAPI12 or v.rank(0) == 4, F.kUnsupportedOperatorVariant,
     "Expected 4 inputs"),
    ("x", _act_none, F.kNoActivationExpected, "Expected no activation"))
_floor = _lrn = _steps(("ver", 1))


def _concatenation(v):
    v.max_op_version(2)
    v.activation_none("No activation function supported")
    v.expect(v.rank(0) <= 4, F.kUnsupportedOperandRank, "Input rank should be less than 4")
    t = v.ttype(0)
    v.input_type_in(t, TT.FLOAT16, TT.FLOAT32, TT.UINT8, TT.INT8)
    if t == TT.UINT8 and v.fl < SDK_NNAPI12:
        first = legacy_quant_params(v.t(0))
        for pos in range(1, v.n_in):
            cur = legacy_quant_params(v.t(pos)) if v.t(pos) is not None else (0.0, 0)
            if not v.expect(cur == first, F.kUnsupportedOperandValue,
                            "NNAPI 1.0-1 only supported concatenating quantized tensor of the "
                            "same scale and offset."):
                break


def _dequantize(v):
    x = v.t(0)
    if v.fl >= SDK_NNAPI13 and x is not None and x.type == TT.FLOAT16 and not x.is_constant:
        return  # accepted immediately (3.7: only used for DENSIFY -> DEQUANTIZE)
    v.expect(v.version in (1, 2), F.kUnsupportedOperatorVersion,
             "Supported op versions are 1 and 2 only")
    t = v.ttype(0)
    if v.fl < SDK_NNAPI12:
        v.input_type_in(t, TT.UINT8)
    else:
        v.input_type_in(t, TT.UINT8, TT.INT8)
        if v.fl == SDK_NNAPI12 and t == TT.INT8:
            v.expect(legacy_quant_params(x)[1] == 0, F.kUnsupportedInputType,
                     "NN API supports int8 type since version 1.2 but only for symmetric "
                     "quantization.")


# Upstream returns true / false without recording a failure; a failure is recorded here
# because an empty list means "supported".
_densify = _steps(("x", lambda v: v.fl >= SDK_NNAPI13 and v.is_const(0), F.kUnsupportedOperator,
                   "DENSIFY is only delegated for a constant input from NNAPI 1.3"))
_tanh = _steps(("max", 2),
               ("x", lambda v: v.ttype(0) == TT.FLOAT32
                or (v.ttype(0) in _QUANT and v.fl >= SDK_NNAPI12),
                F.kUnsupportedInputType, " NNAPI only support float tanh."))
_pad = _steps(
    ("max", 2), ("is", "is_float_or_quant8"), ("sdk", SDK_NNAPI11),
    ("x", lambda v: v.t(0) is None or 0 not in v.t(0).shape, F.kUnsupportedOperandValue,
     "NN API pad ops do not support input tensors with no elements"),
    ("x", lambda v: v.n_in >= 2, F.kUnsupportedOperatorVariant, "Expecting at least 2 inputs"),
    ("x", lambda v: v.n_in != 3 or v.fl >= SDK_NNAPI12, F.kUnsupportedOperatorVariant,
     "Specification of the padding value is supported from NNAPI 1.2."),  # -> PAD_V2
    ("x", lambda v: v.n_in == 3 or v.fl >= SDK_NNAPI12 or v.ttype(0) == TT.FLOAT32,
     F.kUnsupportedInputType, "Only Float32 inputs are supported before NNAPI 1.2"))
_space_to_batch = _steps(("max", 2), ("sdk", SDK_NNAPI11))


def _zero_crops(v) -> bool:
    crops = v.t(2)
    return (crops is not None and crops.data is not None and crops.type == TT.INT32
            and crops.data.nbytes == 16 and not np.any(np.asarray(crops.data)))


_batch_to_space = _steps(("max", 2), ("sdk", SDK_NNAPI11),
                         ("x", _zero_crops, F.kUnsupportedOperandValue, "All crops should be 0."))
_strided_slice = _steps(("max", 2), ("is", "is_float_or_quant8"), ("sdk", SDK_NNAPI11))
_transpose = _steps(("max", 2), ("sdk", SDK_NNAPI11),
                    ("x", lambda v: v.n_in > 1 and v.is_const(1),
                     F.kInputTensorShouldHaveConstantShape,
                     "Dynamically-sized tensors not supported."))
_float_unary_29 = _steps(("ver", 1), ("sdk", SDK_NNAPI12), ("is", "is_float"))
def _rsqrt(v):
    v.op_version(2)
    v.min_sdk(SDK_NNAPI12)
    if v.fl < FL7:
        v.is_float()
    else:
        v.is_float_or_quant8()


_slice = _steps(("max", 2), ("sdk", SDK_NNAPI12), ("in", (TT.FLOAT32, TT.INT32, TT.UINT8, TT.INT8)),
                ("x", lambda v: v.ttype(1) == TT.INT32, F.kUnsupportedInputType,
                 "Begin type should be Int32"),
                ("x", lambda v: v.ttype(2) == TT.INT32, F.kUnsupportedInputType,
                 "Size type should be Int32"))
_transpose_conv = _steps(("max", 4), ("sdk", SDK_NNAPI12),
                         ("x", lambda v: v.n_in > 1 and v.is_const(0) and v.is_const(1),
                          F.kInputTensorShouldHaveConstantShape,
                          "Dynamically-sized tensors not supported."))
_space_depth = _steps(("max", 2), ("in", _FQ8))
_depth_to_space = _steps(("in", _FQ8))  # no version check at all
_mean = _steps(
    ("max", 2), ("sdk", SDK_NNAPI11),
    ("x", lambda v: v.fl < SDK_NNAPI12 or v.ttype(0) in _FQ8, F.kUnsupportedInputType,
     "Expected Float32 or Quantized input"),
    ("x", lambda v: v.fl >= SDK_NNAPI12 or v.ttype(0) == TT.FLOAT32, F.kUnsupportedInputType,
     "Expected Float32 input"),
    _out_rank_nonzero("NNAPI does not support generating a scalar as output for MEAN."),
    ("x", lambda v: v.rank(0) <= 4, F.kUnsupportedOperandValue,
     "NNAPI does not support mean of a tensor with rank > 4"))
_embedding_lookup = _steps(("ver", 1), ("x", lambda v: v.ttype(1) == TT.FLOAT32,
                                        F.kUnsupportedInputType,
                                        "NNAPI only support float32 values."))
_hashtable_lookup = _steps(("ver", 1), ("x", lambda v: v.out() is not None
                                        and v.out().type == TT.FLOAT32,
                                        F.kUnsupportedOutputType,
                                        "NNAPI only support float32 output."))


def _scalar_const(pos):
    return ("x", lambda v: v.t(pos) is None or len(v.t(pos).shape) != 0 or v.is_const(pos),
            F.kUnsupportedInputType, "Scalar operand should be constant")


_max_min = _steps(("max", 3), ("sdk", SDK_NNAPI12), ("in", _FQ8I32), _scalar_const(0),
                  _scalar_const(1))


def _cast(v):
    v.op_version(1)
    v.min_sdk(SDK_NNAPI12)
    types = (TT.FLOAT32, TT.INT32, TT.UINT8) + ((TT.INT8,) if v.fl >= SDK_NNAPI13 else ())
    v.input_type_in(v.ttype(0), *types)
    names = ", ".join("kTfLite" + _tfl_name(t) for t in types)
    v.type_in(None if v.out() is None else v.out().type, types,
              f"Output type should be one of {names}.", F.kUnsupportedOutputType)


_prelu = _steps(("ver", 1), ("sdk", SDK_NNAPI12), ("in", _FQ8))
_tile = _steps(("ver", 1), ("sdk", SDK_NNAPI12), ("in", (TT.FLOAT32, TT.INT8, TT.UINT8, TT.INT32)),
               ("x", lambda v: v.ttype(1) == TT.INT32, F.kUnsupportedInputType,
                "Multipliers should be Int32"))
_logical = _steps(("ver", 1), ("sdk", SDK_NNAPI12), ("t0", (TT.BOOL,), "Input should be bool"))
_comparison = _steps(("max", 2), ("sdk", SDK_NNAPI12),
                     ("in", (TT.FLOAT32, TT.UINT8, TT.INT8, TT.BOOL, TT.INT32)))
_neg = _steps(("max", 2), ("sdk", SDK_NNAPI12), ("in", (TT.FLOAT32, TT.INT32)))
_topk = _steps(("max", 2), ("sdk", SDK_NNAPI12), ("in", (TT.FLOAT32, TT.INT32) + _QUANT),
               ("x", lambda v: v.ttype(1) == TT.INT32 and v.is_const(1), F.kUnsupportedInputType,
                "K param should be a constant of type Int32"))


def _select(v):
    v.max_op_version(2)
    v.min_sdk(SDK_NNAPI12)
    v.input_type_in(v.ttype(1), TT.FLOAT32, TT.INT32, TT.UINT8, TT.INT8)
    c, x = v.t(0), v.t(1)
    v.expect(c is not None and x is not None and tuple(c.shape) == tuple(x.shape),
             F.kUnsupportedOperandValue, "Condition and inputs tensors should have the same shape")


_gather = _steps(("ver", 2), ("sdk", SDK_NNAPI12),
                 ("in", (TT.FLOAT32, TT.FLOAT16, TT.INT32) + _QUANT),
                 ("x", lambda v: v.ttype(1) == TT.INT32, F.kUnsupportedInputType,
                  "Positions type should be one of kTfLiteInt32"),
                 ("x", lambda v: v.rank(1) != 0, F.kUnsupportedOperandRank,
                  "0-dimension args are not supported by NNAPI."))


def _const_int32(pos):
    return ("x", lambda v: v.ttype(pos) == TT.INT32 and v.is_const(pos), F.kUnsupportedInputType,
            "NNAPI only supports constant int32 axis tensor.")


_expand_dims = _steps(("ver", 1), ("sdk", SDK_NNAPI12),
                      ("in", (TT.FLOAT32, TT.FLOAT16, TT.INT32) + _QUANT), _const_int32(1))


def _split(v):
    v.op_version(3)
    v.min_sdk(SDK_NNAPI12)
    t = v.ttype(1)  # value is input 1, axis input 0
    if v.fl >= SDK_NNAPI13:
        v.input_type_in(t, TT.FLOAT32, TT.UINT8, TT.INT8, TT.INT32)
    else:
        v.input_type_in(t, TT.FLOAT32, TT.UINT8, TT.INT32)
    _steps(_const_int32(0))(v)


def split_v_unknown_size(subgraph, op) -> int:
    """ComputeSplitVUnknownSplitSize: the size of the -1 split, or -1 if all are known."""
    x = subgraph.tensors[op.inputs[0]]
    sizes = [int(s) for s in subgraph.tensors[op.inputs[1]].data.reshape(-1)]
    axis = int(subgraph.tensors[op.inputs[2]].data.reshape(-1)[0])
    axis = axis + len(x.shape) if axis < 0 else axis
    if -1 not in sizes:
        return -1
    return int(x.shape[axis]) - sum(s for s in sizes if s != -1)


def _split_v(v):
    v.op_version(2)
    v.min_sdk(SDK_NNAPI13)
    v.input_type_in(v.ttype(0), TT.FLOAT32, TT.UINT8, TT.INT8, TT.INT32)
    sizes, axis = v.t(1), v.t(2)
    sizes_ok = (sizes is not None and sizes.type == TT.INT32 and len(sizes.shape) == 1
                and sizes.is_constant)
    axis_ok = axis is not None and axis.type == TT.INT32 and axis.is_constant
    v.expect(sizes_ok, F.kUnsupportedInputType,
             "NNAPI only supports constant int32 size_splits vector.")
    v.expect(axis_ok, F.kUnsupportedInputType, "NNAPI only supports constant int32 axis tensor.")
    if sizes_ok and axis_ok:
        v.expect(all(int(s) != 0 for s in sizes.data.reshape(-1)), F.kUnsupportedInputType,
                 "NNAPI only supports non-zero split sizes.")
        v.expect(split_v_unknown_size(v.sg, v.op) != 0, F.kUnsupportedInputType,
                 "NNAPI only supports non-zero split sizes.")


_log_softmax = _steps(("ver", 1), ("sdk", SDK_NNAPI12),
                      ("t0", (TT.FLOAT32,), "Input should be Float32."))


def _quantize(v):
    v.max_op_version(2)
    v.min_sdk(SDK_NNAPI12)
    t = v.ttype(0)
    v.expect(t == TT.FLOAT32 or t in _QUANT, F.kUnsupportedInputType,
             "Value should be quantized or Float32.")
    if t in _QUANT:
        v.expect(legacy_quant_params(v.t(0))[0] > 0, F.kUnsupportedQuantizationParameters,
                 "Quantization scale should be > 0.")
    out = v.out()
    allowed = (TT.UINT8,) if v.fl < SDK_NNAPI13 else _QUANT
    v.expect(out is not None and out.type in allowed, F.kUnsupportedOutputType,
             "Output should be kTfLiteUInt8.")
    v.expect(out is not None and legacy_quant_params(out)[0] > 0,
             F.kUnsupportedQuantizationParameters, "Quantization scale should be > 0.")


_reduce_any = _steps(("ver", 2), ("sdk", SDK_NNAPI12),
                     _out_rank_nonzero("NNAPI does not support generating a scalar as output."))
_reduce_min_max = _steps(("max", 2), ("sdk", SDK_NNAPI12), ("in", _FQ8),
                         ("x", lambda v: v.rank(0) != 0, F.kUnsupportedOutputType,
                          "NNAPI does not support generating a scalar as output."))
_reduce_sum_prod = _steps(
    ("ver", 1), ("sdk", SDK_NNAPI12),
    _out_rank_nonzero("NNAPI does not support generating a scalar as output"),
    ("t0", (TT.FLOAT32,), "NNAPI only supports floating point input."))
_elu = _steps(("ver", 1), ("sdk", SDK_NNAPI13),
              ("t0", (TT.FLOAT32,), "NNAPI only supports floating point input."))


def _fits_int32(tensor) -> bool:
    vals = np.asarray(tensor.data).reshape(-1)
    return bool(np.all((vals >= _INT32_MIN) & (vals <= _INT32_MAX)))


def _fill(v):
    v.op_version(1)
    v.min_sdk(SDK_NNAPI13)
    dims = v.t(0)
    v.expect(v.is_const(0), F.kUnsupportedInputType,
             "NNAPI doesn't support dynamic dimensions tensor.")
    v.input_type_in(v.ttype(0), TT.INT32, TT.INT64)
    if v.is_const(0):
        v.expect(_dim(dims, 0) != 0, F.kUnsupportedOperandValue,
                 "NNAPI doesn't support generating scalars from FILL")
        if dims.type == TT.INT64:
            v.expect(_fits_int32(dims), F.kUnsupportedOperandValue,
                     "NNAPI only supports int32 dimensions tensor. If the dimensions type is "
                     "int64 and they are constant we can convert them to int32 if the value "
                     "isn't too large.")
    value = v.t(1)
    v.input_type_in(v.ttype(1), TT.FLOAT32, TT.INT32, TT.INT64)
    if value is not None and value.type == TT.INT64 and value.is_constant:
        v.expect(_fits_int32(value), F.kUnsupportedInputType,
                 "NNAPI only supports int32 input. If the input type is int64 and constant we "
                 "can convert it to int32 if the value isn't too large.")


def _pack(v):
    v.op_version(2)
    v.min_sdk(SDK_NNAPI13)
    if v.fl >= FL6:
        v.input_type_in(v.ttype(0), TT.INT32, TT.FLOAT32, TT.INT8, TT.UINT8)
    else:
        v.input_type_in(v.ttype(0), TT.FLOAT32, TT.INT8)
        axis = v.opt("axis", 0)
        v.expect(axis != -1 and axis != v.rank(0), F.kUnsupportedOperandValue,
                 "NNAPI does not support axis being the last dimension")


_unpack = _steps(
    ("ver", 2), ("sdk", SDK_NNAPI13), ("in", _FQ8),
    ("x", lambda v: v.rank(0) > 1, F.kUnsupportedOperandValue,
     "NNAPI does not support unpacking a rank-1 tensor"),
    ("x", lambda v: v.rank(0) <= 4, F.kUnsupportedOperandValue,
     "NNAPI does not support unpacking a tensor with rank > 4"),
    ("x", lambda v: v.opt("axis", 0) not in (-1, v.rank(0) - 1), F.kUnsupportedOperandValue,
     "NNAPI does not support axis being the last dimension"))


def _squared_difference(v):
    v.op_version(2)
    v.min_sdk(SDK_NNAPI11)
    if v.fl >= SDK_NNAPI13:
        v.input_type_in(v.ttype(0), TT.FLOAT32, TT.UINT8, TT.INT8, TT.INT32)
    elif v.fl >= SDK_NNAPI12:
        v.input_type_in(v.ttype(0), TT.FLOAT32, TT.UINT8)
    else:
        v.input_type_in(v.ttype(0), TT.FLOAT32)
    v.ranks_at_most_4("NNAPI does not support input rank greater than 4")


def _broadcast_batch_matmul(v) -> bool:
    a, b = v.t(0), v.t(1)
    return (a is None or b is None or len(a.shape) != len(b.shape)
            or tuple(a.shape[:-2]) != tuple(b.shape[:-2]))


_batch_matmul = _steps(
    ("ver", 2), ("sdk", FL6), ("in", (TT.FLOAT32, TT.INT32, TT.INT8)),
    ("x", lambda v: v.ttype(0) == v.ttype(1), F.kUnsupportedHybridOperator,
     "NNAPI does not support hybrid batch matmul"),
    ("x", lambda v: 2 <= v.rank(0) <= 4, F.kUnsupportedOperandRank,
     "NNAPI does not support input rank greater than 4 or less than 2"),
    ("x", lambda v: not _broadcast_batch_matmul(v), F.kUnsupportedInputType,
     "NNAPI does not support broadcast batch matmul"))
_TWO_INPUTS = ("x", lambda v: v.n_in == 2, F.kUnsupportedOperatorVariant, "Expecting 2 inputs")
_mirror_pad = _steps(("max", 2), ("sdk", FL7), ("is", "is_float_quant8_or_int32"),
                     ("x", lambda v: v.t(0) is None or 0 not in v.t(0).shape,
                      F.kUnsupportedOperandValue,
                      "NN API pad ops do not support input tensors with no elements"),
                     _TWO_INPUTS)
_reverse_v2 = _steps(("max", 3), ("sdk", FL7), ("is", "is_float_quant8_or_int32"), _TWO_INPUTS)


def _arg_min_max(v):
    v.max_op_version(2)
    v.min_sdk(SDK_NNAPI12)
    v.input_type_in(v.ttype(0), TT.FLOAT16, TT.FLOAT32, TT.INT32, TT.UINT8, TT.INT8)
    axis = v.t(1)
    if axis is not None and axis.type == TT.INT64:
        v.expect(axis.is_constant and _fits_int32(axis), F.kUnsupportedInputType,
                 "NNAPI only supports axis as int32. If the axis type is int64 and constant we "
                 "can convert it to int32 if the value isn't too large.")
    else:
        v.expect(axis is not None and axis.type == TT.INT32, F.kUnsupportedInputType,
                 "Axis should be Int32")
    v.expect(v.opt("output_type", TT.FLOAT32) == TT.INT32, F.kUnsupportedOutputType,
             "NNAPI only supports int32 output.")


def _dim(tensor, i: int):
    return tensor.shape[i] if tensor is not None and i < len(tensor.shape) else None


RULES = {
    B.ADD: _add, B.MUL: _mul, B.SUB: _sub, B.DIV: _div,
    B.ARG_MAX: _arg_min_max, B.ARG_MIN: _arg_min_max,
    B.AVERAGE_POOL_2D: _average_pool, B.MAX_POOL_2D: _max_pool, B.L2_POOL_2D: _l2_pool,
    B.CONV_2D: _conv, B.DEPTHWISE_CONV_2D: _depthwise, B.FULLY_CONNECTED: _fully_connected,
    B.HARD_SWISH: _hard_swish, B.SOFTMAX: _softmax, B.RESHAPE: _reshape,
    B.RESIZE_BILINEAR: _resize_bilinear, B.RESIZE_NEAREST_NEIGHBOR: _resize_nearest,
    B.SQUEEZE: _squeeze, B.L2_NORMALIZATION: _l2_norm, B.LOCAL_RESPONSE_NORMALIZATION: _lrn,
    B.CONCATENATION: _concatenation, B.DEQUANTIZE: _dequantize, B.DENSIFY: _densify,
    B.FLOOR: _floor, B.RELU: _relu_logistic, B.RELU_N1_TO_1: _relu_logistic,
    B.RELU6: _relu_logistic, B.LOGISTIC: _relu_logistic, B.TANH: _tanh,
    B.PAD: _pad, B.PADV2: _pad, B.SPACE_TO_BATCH_ND: _space_to_batch,
    B.BATCH_TO_SPACE_ND: _batch_to_space, B.STRIDED_SLICE: _strided_slice,
    B.TRANSPOSE: _transpose, B.ABS: _float_unary_29, B.EXP: _float_unary_29,
    B.LOG: _float_unary_29, B.POW: _float_unary_29, B.SQRT: _float_unary_29,
    B.SIN: _float_unary_29, B.COS: _float_unary_29, B.RSQRT: _rsqrt, B.SLICE: _slice,
    B.TRANSPOSE_CONV: _transpose_conv, B.SPACE_TO_DEPTH: _space_depth,
    B.DEPTH_TO_SPACE: _depth_to_space, B.MEAN: _mean, B.EMBEDDING_LOOKUP: _embedding_lookup,
    B.HASHTABLE_LOOKUP: _hashtable_lookup, B.MAXIMUM: _max_min, B.MINIMUM: _max_min,
    B.CAST: _cast, B.LEAKY_RELU: _prelu, B.PRELU: _prelu, B.TILE: _tile,
    B.LOGICAL_OR: _logical, B.LOGICAL_AND: _logical, B.LOGICAL_NOT: _logical,
    B.LESS: _comparison, B.LESS_EQUAL: _comparison, B.GREATER: _comparison,
    B.GREATER_EQUAL: _comparison, B.EQUAL: _comparison, B.NOT_EQUAL: _comparison,
    B.NEG: _neg, B.TOPK_V2: _topk, B.SELECT: _select, B.GATHER: _gather,
    B.EXPAND_DIMS: _expand_dims, B.SPLIT: _split, B.SPLIT_V: _split_v,
    B.LOG_SOFTMAX: _log_softmax, B.QUANTIZE: _quantize, B.REDUCE_ANY: _reduce_any,
    B.REDUCE_MIN: _reduce_min_max, B.REDUCE_MAX: _reduce_min_max,
    B.REDUCE_PROD: _reduce_sum_prod, B.SUM: _reduce_sum_prod, B.ELU: _elu, B.FILL: _fill,
    B.PACK: _pack, B.UNPACK: _unpack, B.SQUARED_DIFFERENCE: _squared_difference,
    B.BATCH_MATMUL: _batch_matmul, B.MIRROR_PAD: _mirror_pad, B.REVERSE_V2: _reverse_v2,
    **RECURRENT_RULES,
}


def validate_node(model, subgraph, node_index: int, target_feature_level: int,
                  is_accelerator_specified: bool) -> list[ValidationFailure]:
    """``NNAPIDelegateKernel::Validate`` for node ``node_index`` of ``subgraph`` (an index into
    ``model.subgraphs`` or a Subgraph). Returns the failures; [] = the delegate accepts it."""
    sg = model.subgraphs[subgraph] if isinstance(subgraph, int) else subgraph
    op = sg.operators[node_index]
    rule = RULES.get(op.builtin)
    if rule is None or op.builtin == B.CUSTOM:
        return [ValidationFailure(F.kUnsupportedOperator, "Unsupported operation type.")]
    ctx = _Ctx(sg, op, int(target_feature_level), bool(is_accelerator_specified))
    rule(ctx)
    return ctx.failures


def is_node_supported(model, subgraph, node_index: int, target_feature_level: int,
                      is_accelerator_specified: bool) -> bool:
    return not validate_node(model, subgraph, node_index, target_feature_level,
                             is_accelerator_specified)
