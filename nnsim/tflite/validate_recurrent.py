"""``NNAPIDelegateKernel::Validate`` for the recurrent builtins (LSTM, RNN, SVDF, sequence ops).

Upstream ``tensorflow/lite/delegates/nnapi/nnapi_delegate.cc`` (LiteRT snapshot of
tflite-nnapi-delegate.md 0), ``Validate`` cases and ``IsHybridOperator``; messages and failure
types verbatim. BIDIRECTIONAL_SEQUENCE_RNN has no case upstream (kUnsupportedOperator).

| builtin | version | min FL | refused when |
|---|---|---|---|
| LSTM | <= 3 | 28 (kUnsupportedAndroidVersion) | hybrid below 29 (8); basic 5-input kernel: weights not uint8 (3), input / output not scale 1/128 zp 128 (15), cell state neither scale 2**-11 nor zp 0 (15), weights / biases not constant (12); full kernel: 24 inputs below 29 (1), weights (input 4) not f32/u8 (+i8 at FL >= 30) (3) |
| UNIDIRECTIONAL_SEQUENCE_LSTM | <= 2 | 29 | hybrid (8); not 20 or 24 inputs (13) |
| UNIDIRECTIONAL_SEQUENCE_RNN | <= 1 | 29 | hybrid (8) |
| BIDIRECTIONAL_SEQUENCE_LSTM | <= 1 | 29 | hybrid (8) |
| RNN | <= 1 | - | not 5 inputs (13); weights not f32 (3) |
| SVDF | <= 1 | 28 (as kUnsupportedOperandRank) | not 5 inputs (11); weights not f32 (3, twice) |
"""
from __future__ import annotations

from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType as TT
from nnsim.tflite.validate_common import (SDK_NNAPI11, SDK_NNAPI12, SDK_NNAPI13,
                                          legacy_quant_params)
from nnsim.tflite.validate_common import NNAPIValidationFailureType as F

LSTM_FULL_INPUTS = (20, 24)     # kLstmFullKernelNoOptionalParamsInputSize, kLstmFullKernelInputSize
LSTM_BASIC_INPUTS = 5           # kLstmBasicKernelInputSize
_QUANT = (TT.UINT8, TT.INT8)


def recurrent_is_hybrid(subgraph, op) -> bool:
    """IsHybridOperator for the recurrent builtins: float32 input 0 and quantized weights
    (input 2 for the LSTMs, LSTM only for its full kernel; input 1 for the sequence RNN)."""
    pos = {B.LSTM: 2, B.UNIDIRECTIONAL_SEQUENCE_LSTM: 2, B.BIDIRECTIONAL_SEQUENCE_LSTM: 2,
           B.UNIDIRECTIONAL_SEQUENCE_RNN: 1}.get(op.builtin)
    if pos is None or len(op.inputs) <= pos or op.inputs[0] < 0 or op.inputs[pos] < 0:
        return False
    if op.builtin == B.LSTM and len(op.inputs) not in LSTM_FULL_INPUTS:
        return False
    ts = subgraph.tensors
    return ts[op.inputs[0]].type == TT.FLOAT32 and ts[op.inputs[pos]].type in _QUANT


def _not_hybrid(v, message="Hybrid version of this op is not supported by NN API."):
    v.expect(not recurrent_is_hybrid(v.sg, v.op), F.kUnsupportedHybridOperator, message)


def _lstm(v) -> None:
    v.max_op_version(3)
    v.expect(v.fl >= SDK_NNAPI11, F.kUnsupportedAndroidVersion,
             "NNAPI 1.0 has a bug for optional tensors which would affect LSTM.")
    v.expect(v.fl >= SDK_NNAPI12 or not recurrent_is_hybrid(v.sg, v.op),
             F.kUnsupportedHybridOperator, "Hybrid operators not supported before NNAPI 1.2.")
    basic = v.n_in == LSTM_BASIC_INPUTS
    weight_type = v.ttype(2 if basic else 4)
    if basic:
        v.expect(weight_type == TT.UINT8, F.kUnsupportedInputType,
                 "Basic LSTM Kernels support only UINT8 weights")
        qin = legacy_quant_params(v.t(0))
        v.expect(qin[0] == 1.0 / 128.0 and qin[1] == 128, F.kUnsupportedQuantizationParameters,
                 "Invalid input quantization")
        qout = legacy_quant_params(v.out(0))
        v.expect(qout[0] == 1.0 / 128.0 and qout[1] == 128,
                 F.kUnsupportedQuantizationParameters, "Invalid output quantization")
        qcell = legacy_quant_params(v.out(1))
        # upstream writes ||: either condition accepts
        v.expect(qcell[0] == 16.0 / 32768.0 or qcell[1] == 0,
                 F.kUnsupportedQuantizationParameters, "Invalid cell state quantization")
        v.expect(v.is_const(2), F.kInputTensorShouldHaveConstantShape,
                 "Weights tensor should be constant")
        v.expect(v.is_const(3), F.kInputTensorShouldHaveConstantShape,
                 "Biases tensor should be constant")
        return
    if v.n_in == 24:
        v.min_sdk(SDK_NNAPI12)
    if v.fl >= SDK_NNAPI13:
        v.expect(weight_type in (TT.FLOAT32, TT.UINT8, TT.INT8), F.kUnsupportedInputType,
                 "Weight has to be Float32 or UINT8 or INT8")
    else:
        v.expect(weight_type in (TT.FLOAT32, TT.UINT8), F.kUnsupportedInputType,
                 "Weight has to be Float32 or UINT8")


def _unidirectional_lstm(v) -> None:
    v.max_op_version(2)
    v.min_sdk(SDK_NNAPI12)
    _not_hybrid(v)
    v.expect(v.n_in in LSTM_FULL_INPUTS, F.kUnsupportedOperatorVariant,
             "Supporting only operation with 20 or 24 inputs")


def _sequence_12(v) -> None:
    """UNIDIRECTIONAL_SEQUENCE_RNN and BIDIRECTIONAL_SEQUENCE_LSTM."""
    v.op_version(1)
    v.min_sdk(SDK_NNAPI12)
    _not_hybrid(v)


def _rnn(v) -> None:
    v.op_version(1)
    v.expect(v.n_in == 5, F.kUnsupportedOperatorVariant, "Expected 5 input")
    if v.n_in >= 2:
        v.expect(v.ttype(1) == TT.FLOAT32, F.kUnsupportedInputType,
                 "NNAPI only support float32 weights.")


def _svdf(v) -> None:
    v.op_version(1)
    v.expect(v.n_in == 5, F.kUnsupportedOperandRank, "Expected input of rank 5")
    if v.n_in >= 2:
        v.expect(v.ttype(1) == TT.FLOAT32, F.kUnsupportedInputType,
                 "NNAPI only support float32 weights.")
    v.expect(v.fl >= SDK_NNAPI11, F.kUnsupportedOperandRank,
             "SVDF does not support rank > 1 on NNAPI 1.0.")
    v.expect(v.ttype(1) == TT.FLOAT32, F.kUnsupportedInputType, "Weights should be Float32")


RECURRENT_RULES = {
    B.LSTM: _lstm, B.UNIDIRECTIONAL_SEQUENCE_LSTM: _unidirectional_lstm,
    B.UNIDIRECTIONAL_SEQUENCE_RNN: _sequence_12, B.BIDIRECTIONAL_SEQUENCE_LSTM: _sequence_12,
    B.RNN: _rnn, B.SVDF: _svdf,
}
