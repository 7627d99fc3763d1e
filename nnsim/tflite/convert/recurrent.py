"""The NNAPI delegate's mapping of the recurrent builtins (tflite-nnapi-delegate.md 4, "also
mapped"; upstream ``nnapi_delegate.cc`` AddOpsAndTensors input loop and ``Map``).

Inputs (``recurrent_input``, called per node input in order):

* LSTM (full kernel) / UNIDIRECTIONAL_SEQUENCE_LSTM: inputs 20..23 (layer norm) are skipped
  here and appended by ``Map`` after the scalars; an omitted input becomes an omitted
  TENSOR_FLOAT32 ``[0]`` operand (AddVectorFloat32Operand(nullptr, 0)); so does one of SVDF and
  BIDIRECTIONAL_SEQUENCE_LSTM;
* RNN, UNIDIRECTIONAL_SEQUENCE_RNN: every input as a tensor.

Map (the scalars and extra operands, then the NNAPI code):

| builtin | NNAPI op | added by Map |
|---|---|---|
| UNIDIRECTIONAL_SEQUENCE_LSTM | UNIDIRECTIONAL_SEQUENCE_LSTM | act, cell clip, proj clip, time_major BOOL, 4 layer-norm operands (omitted with 20 inputs) |
| UNIDIRECTIONAL_SEQUENCE_RNN | UNIDIRECTIONAL_SEQUENCE_RNN | act, time_major **INT32** |
| BIDIRECTIONAL_SEQUENCE_LSTM | BIDIRECTIONAL_SEQUENCE_LSTM | act, cell clip, proj clip, merge_outputs, time_major, 8 omitted layer-norm operands |
| RNN | RNN | state output (float32, dims of input 4) first, act |
| SVDF | SVDF | state output (dims of input 4) first, rank, act |
| LSTM (20/24 inputs) | LSTM | act, cell clip, proj clip, scratch output (float32, dims [0, 0]), state outputs of inputs 18 and 19, layer norm inputs 20..23 |

A state output (AddStateFloat32Tensor) is a new NNAPI output operand written back to the TFLite
state tensor after each Invoke; ``OpBuilder.state_outputs`` records (operand, tensor) and
``build_nnapi_model`` makes them model outputs after the partition's own.

Not converted (ConvertError): the LSTM basic 5-input kernel (upstream: weights decomposed into
QUANTIZED_16BIT_LSTM) and the int8 full kernel at FL >= 30 (upstream: QUANTIZED_LSTM).
"""
from __future__ import annotations

from nnsim.tflite.convert.builder import ConvertError
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType as TT
from nnsim.types import OperandType as T
from nnsim.types import OperationCode as C

_OMITTED_AS_EMPTY = (B.LSTM, B.SVDF, B.BIDIRECTIONAL_SEQUENCE_LSTM,
                     B.UNIDIRECTIONAL_SEQUENCE_LSTM)


def _opt(op, name, default=None):
    return getattr(op.options, name, default) if op.options is not None else default


def recurrent_input(b, op, pos, index, flags, hybrid) -> None:
    """One iteration of the input loop for a recurrent builtin."""
    code = op.builtin
    if code == B.LSTM and len(op.inputs) == 5:
        raise ConvertError(f"node {b.node}: nnsim does not convert the basic LSTM kernel "
                           f"(QUANTIZED_16BIT_LSTM)")
    if code == B.LSTM and op.inputs[0] >= 0 and b.tensors[op.inputs[0]].type == TT.INT8:
        raise ConvertError(f"node {b.node}: nnsim does not convert the int8 LSTM kernel "
                           f"(QUANTIZED_LSTM)")
    if code in (B.LSTM, B.UNIDIRECTIONAL_SEQUENCE_LSTM) and pos >= 20:
        return  # layer norm weights: added by Map, last
    if index < 0 and code in _OMITTED_AS_EMPTY:
        b.vector_float32(None)
        return
    b.tensor_input(index, flags, hybrid)


def _state_output(b, tensor_index) -> None:
    """AddStateFloat32Tensor: a float32 output with the state tensor's dims."""
    ann = b.additional_output(b.tensors[tensor_index].shape, T.TENSOR_FLOAT32)
    b.state_outputs.append((ann, int(tensor_index)))


def _layer_norm(b, op, hybrid) -> None:
    for i in range(20, 24):
        index = op.inputs[i]
        if index >= 0:
            b.tensor_input(index, 0, hybrid)
        else:
            b.vector_float32(None)


def _clips(b, op) -> None:
    b.scalar_int32(_opt(op, "fused_activation_function", 0))
    b.scalar_float32(_opt(op, "cell_clip", 0.0))
    b.scalar_float32(_opt(op, "proj_clip", 0.0))


def _unidirectional_lstm(b, op, hybrid):
    _clips(b, op)
    b.scalar_bool(_opt(op, "time_major", False))
    if len(op.inputs) == 24:
        _layer_norm(b, op, hybrid)
    else:
        for _ in range(4):
            b.vector_float32(None)
    return C.UNIDIRECTIONAL_SEQUENCE_LSTM


def _unidirectional_rnn(b, op, _hybrid):
    b.scalar_int32(_opt(op, "fused_activation_function", 0))
    b.scalar_int32(int(bool(_opt(op, "time_major", False))))
    return C.UNIDIRECTIONAL_SEQUENCE_RNN


def _bidirectional_lstm(b, op, _hybrid):
    _clips(b, op)
    b.scalar_bool(_opt(op, "merge_outputs", False))
    b.scalar_bool(_opt(op, "time_major", True))
    for _ in range(8):   # TFLite has no layer norm here: NNAPI gets omitted operands
        b.vector_float32(None)
    return C.BIDIRECTIONAL_SEQUENCE_LSTM


def _rnn(b, op, _hybrid):
    _state_output(b, op.inputs[4])
    b.scalar_int32(_opt(op, "fused_activation_function", 0))
    return C.RNN


def _svdf(b, op, _hybrid):
    _state_output(b, op.inputs[4])
    b.scalar_int32(_opt(op, "rank", 1))
    b.scalar_int32(_opt(op, "fused_activation_function", 0))
    return C.SVDF


def _lstm(b, op, hybrid):
    _clips(b, op)
    b.additional_output((0, 0), T.TENSOR_FLOAT32)   # the scratch buffer NNAPI requires
    _state_output(b, op.inputs[18])
    _state_output(b, op.inputs[19])
    if len(op.inputs) == 24:
        _layer_norm(b, op, hybrid)
    return C.LSTM


RECURRENT_MAPPERS = {
    B.UNIDIRECTIONAL_SEQUENCE_LSTM: _unidirectional_lstm,
    B.UNIDIRECTIONAL_SEQUENCE_RNN: _unidirectional_rnn,
    B.BIDIRECTIONAL_SEQUENCE_LSTM: _bidirectional_lstm,
    B.RNN: _rnn, B.SVDF: _svdf, B.LSTM: _lstm,
}
# the NNAPI operations each may emit (mapping._MAPPED_BY_FUNCTIONS)
RECURRENT_NNAPI = {
    B.UNIDIRECTIONAL_SEQUENCE_LSTM: (C.UNIDIRECTIONAL_SEQUENCE_LSTM,),
    B.UNIDIRECTIONAL_SEQUENCE_RNN: (C.UNIDIRECTIONAL_SEQUENCE_RNN,),
    B.BIDIRECTIONAL_SEQUENCE_LSTM: (C.BIDIRECTIONAL_SEQUENCE_LSTM,),
    B.RNN: (C.RNN,), B.SVDF: (C.SVDF,), B.LSTM: (C.LSTM,),
}
