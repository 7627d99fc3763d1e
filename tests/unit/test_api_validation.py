"""API misuse matrix in the spirit of AOSP TestValidation: each call's exact result code.

Expected codes come from nnapi-runtime.md 1.1 and 1.5 (runtime/NeuralNetworks.cpp,
ModelBuilder.cpp, CompilationBuilder.cpp, ExecutionBuilder.cpp), not from nnsim runs.
"""
from __future__ import annotations

import numpy as np
import pytest

from nnsim import nnapi as nn

OK = nn.ANEURALNETWORKS_NO_ERROR
BAD_DATA = nn.ANEURALNETWORKS_BAD_DATA
BAD_STATE = nn.ANEURALNETWORKS_BAD_STATE
NULL = nn.ANEURALNETWORKS_UNEXPECTED_NULL
OT = nn.ANeuralNetworksOperandType
F32 = OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (1, 2))
I32 = OT(nn.ANEURALNETWORKS_INT32)


def add_model(finish=True):
    """input0 + input1 (float32 [1,2]) -> output, fuse NONE."""
    _, m = nn.ANeuralNetworksModel_create()
    for t in (F32, F32, I32, F32):
        assert nn.ANeuralNetworksModel_addOperand(m, t) == OK
    assert nn.ANeuralNetworksModel_setOperandValue(m, 2, np.array(0, np.int32)) == OK
    assert nn.ANeuralNetworksModel_addOperation(m, nn.ANEURALNETWORKS_ADD, [0, 1, 2], [3]) == OK
    assert nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0, 1], [3]) == OK
    if finish:
        assert nn.ANeuralNetworksModel_finish(m) == OK
    return m


def compiled(model=None):
    _, c = nn.ANeuralNetworksCompilation_create(model or add_model())
    assert nn.ANeuralNetworksCompilation_finish(c) == OK
    return c


# -- model ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("operand_type, code", [
    (OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (1, 2)), OK),
    (OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (0, 2)), OK),          # partial dims allowed
    (OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, ()), OK),              # unknown rank allowed
    (OT(nn.ANEURALNETWORKS_INT32, (1,)), BAD_DATA),               # scalar with dims
    (OT(nn.ANEURALNETWORKS_INT32, (), 1.0, 0), BAD_DATA),         # scalar with scale
    (OT(nn.ANEURALNETWORKS_INT32, (), 0.0, 1), BAD_DATA),         # scalar with zero point
    (OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (2,), 0.5, 0), BAD_DATA),
    (OT(nn.ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, (2,), 0.0, 0), BAD_DATA),   # scale must be > 0
    (OT(nn.ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, (2,), 0.5, 256), BAD_DATA),
    (OT(nn.ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, (2,), 0.5, -1), BAD_DATA),
    (OT(nn.ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED, (2,), 0.5, -128), OK),
    (OT(nn.ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED, (2,), 0.5, 128), BAD_DATA),
    (OT(nn.ANEURALNETWORKS_TENSOR_QUANT8_SYMM, (2,), 0.5, 1), BAD_DATA),
    (OT(nn.ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL, (2,), 0.5, 0), BAD_DATA),
    (OT(nn.ANEURALNETWORKS_TENSOR_INT32, (2,), 0.25, 3), OK),     # not checked at addOperand
    (OT(nn.ANEURALNETWORKS_TENSOR_QUANT16_ASYMM, (2,), 0.5, 65535), OK),
    (OT(nn.ANEURALNETWORKS_TENSOR_QUANT16_ASYMM, (2,), 0.5, 65536), BAD_DATA),
    (OT(9999, (2,)), BAD_DATA),                                    # unknown type
    (OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (2**20, 2**20)), BAD_DATA),  # size overflows uint32
])
def test_add_operand(operand_type, code):
    _, m = nn.ANeuralNetworksModel_create()
    assert nn.ANeuralNetworksModel_addOperand(m, operand_type) == code


def test_null_arguments():
    assert nn.ANeuralNetworksModel_addOperand(None, F32) == NULL
    _, m = nn.ANeuralNetworksModel_create()
    assert nn.ANeuralNetworksModel_addOperand(m, None) == NULL
    assert nn.ANeuralNetworksModel_finish(None) == NULL
    assert nn.ANeuralNetworksCompilation_create(None) == (NULL, None)
    assert nn.ANeuralNetworksExecution_create(None) == (NULL, None)
    assert nn.ANeuralNetworksModel_addOperation(m, nn.ANEURALNETWORKS_ADD, None, [0]) == NULL


def test_set_operand_value_rules():
    _, m = nn.ANeuralNetworksModel_create()
    nn.ANeuralNetworksModel_addOperand(m, F32)
    nn.ANeuralNetworksModel_addOperand(m, OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (0, 2)))
    assert nn.ANeuralNetworksModel_setOperandValue(m, 5, np.zeros(2, np.float32)) == BAD_DATA
    assert nn.ANeuralNetworksModel_setOperandValue(m, -1, np.zeros(2, np.float32)) == BAD_DATA
    assert nn.ANeuralNetworksModel_setOperandValue(m, 0, np.zeros(3, np.float32)) == BAD_DATA
    assert nn.ANeuralNetworksModel_setOperandValue(m, 1, np.zeros(2, np.float32)) == BAD_DATA
    assert nn.ANeuralNetworksModel_setOperandValue(m, 0, None, 8) == NULL
    assert nn.ANeuralNetworksModel_setOperandValue(m, 0, None) == OK   # omitted operand
    assert nn.ANeuralNetworksModel_setOperandValue(m, 0, np.zeros(2, np.float32)) == OK


def test_small_values_are_copied_large_values_referenced():
    from nnsim.types import OperandLifeTime as L
    _, m = nn.ANeuralNetworksModel_create()
    nn.ANeuralNetworksModel_addOperand(m, OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (32,)))
    nn.ANeuralNetworksModel_addOperand(m, OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (33,)))
    nn.ANeuralNetworksModel_setOperandValue(m, 0, np.zeros(32, np.float32))   # 128 bytes
    nn.ANeuralNetworksModel_setOperandValue(m, 1, np.zeros(33, np.float32))   # 132 bytes
    assert m.operands[0].lifetime == L.CONSTANT_COPY
    assert m.operands[1].lifetime == L.CONSTANT_REFERENCE


def test_per_channel_params():
    _, m = nn.ANeuralNetworksModel_create()
    pc = OT(nn.ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL, (3, 1, 1, 2))
    nn.ANeuralNetworksModel_addOperand(m, pc)
    nn.ANeuralNetworksModel_addOperand(m, F32)
    P = nn.ANeuralNetworksSymmPerChannelQuantParams
    set_ = nn.ANeuralNetworksModel_setOperandSymmPerChannelQuantParams
    assert set_(m, 1, P(0, [1.0])) == BAD_DATA                 # wrong operand type
    assert set_(m, 0, P(4, [1.0, 1.0, 1.0])) == BAD_DATA       # channelDim >= rank
    assert set_(m, 0, P(0, [1.0, 1.0])) == BAD_DATA            # count != dims[channelDim]
    assert set_(m, 0, P(0, [1.0, 0.0, 1.0])) == BAD_DATA       # scale must be > 0
    assert set_(m, 0, P(0, [0.5, 0.75, 1.0])) == OK


def test_add_operation_rules():
    _, m = nn.ANeuralNetworksModel_create()
    for t in (F32, F32, I32, F32):
        nn.ANeuralNetworksModel_addOperand(m, t)
    add = nn.ANeuralNetworksModel_addOperation
    assert add(m, 12345, [0, 1, 2], [3]) == BAD_DATA                   # invalid op type
    assert add(m, nn.ANEURALNETWORKS_ADD, [0, 1, 7], [3]) == BAD_DATA   # index out of range
    assert add(m, nn.ANEURALNETWORKS_ADD, [0, 1], [3]) == BAD_DATA      # wrong arity
    assert add(m, nn.ANEURALNETWORKS_ADD, [0, 2, 2], [3]) == BAD_DATA   # wrong operand type
    assert add(m, nn.ANEURALNETWORKS_ADD, [0, 1, 2], [3]) == OK


def test_identify_inputs_and_outputs_rules():
    _, m = nn.ANeuralNetworksModel_create()
    for t in (F32, F32, I32, F32):
        nn.ANeuralNetworksModel_addOperand(m, t)
    nn.ANeuralNetworksModel_setOperandValue(m, 2, np.array(0, np.int32))
    ident = nn.ANeuralNetworksModel_identifyInputsAndOutputs
    assert ident(m, [0, 9], [3]) == BAD_DATA        # out of range
    _, m2 = nn.ANeuralNetworksModel_create()
    for t in (F32, F32, I32, F32):
        nn.ANeuralNetworksModel_addOperand(m2, t)
    nn.ANeuralNetworksModel_setOperandValue(m2, 2, np.array(0, np.int32))
    assert ident(m2, [0, 2], [3]) == BAD_DATA       # a constant
    _, m3 = nn.ANeuralNetworksModel_create()
    for t in (F32, F32, I32, F32):
        nn.ANeuralNetworksModel_addOperand(m3, t)
    assert ident(m3, [0, 0], [3]) == BAD_DATA       # duplicate input


def test_finish_rules():
    m = add_model(finish=False)
    assert nn.ANeuralNetworksModel_finish(m) == OK
    assert nn.ANeuralNetworksModel_finish(m) == BAD_STATE                       # twice
    assert nn.ANeuralNetworksModel_addOperand(m, F32) == BAD_STATE              # modify after
    assert nn.ANeuralNetworksModel_setOperandValue(m, 2, np.array(1, np.int32)) == BAD_STATE
    assert nn.ANeuralNetworksModel_relaxComputationFloat32toFloat16(m, True) == BAD_STATE
    # an operand that is never written makes the model invalid, then every call is BAD_STATE
    _, bad = nn.ANeuralNetworksModel_create()
    for t in (F32, F32, I32, F32, F32):
        nn.ANeuralNetworksModel_addOperand(bad, t)
    nn.ANeuralNetworksModel_setOperandValue(bad, 2, np.array(0, np.int32))
    nn.ANeuralNetworksModel_addOperation(bad, nn.ANEURALNETWORKS_ADD, [0, 4, 2], [3])
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(bad, [0, 1], [3])
    assert nn.ANeuralNetworksModel_finish(bad) == BAD_DATA
    assert nn.ANeuralNetworksModel_finish(bad) == BAD_STATE
    assert nn.ANeuralNetworksModel_addOperand(bad, F32) == BAD_STATE
    assert nn.ANeuralNetworksCompilation_create(bad)[0] == BAD_STATE


def test_finish_rejects_per_channel_operand_without_params():
    _, m = nn.ANeuralNetworksModel_create()
    nn.ANeuralNetworksModel_addOperand(m, OT(nn.ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL,
                                             (1, 1, 1, 1)))
    nn.ANeuralNetworksModel_setOperandValue(m, 0, np.array([1], np.int8))
    assert nn.ANeuralNetworksModel_finish(m) == BAD_DATA


def test_lifo_run_order():
    """Two independent ops added as A then B are numbered B=0, A=1 (reference 1.6)."""
    _, m = nn.ANeuralNetworksModel_create()
    for t in (F32, F32, I32, F32, F32):
        nn.ANeuralNetworksModel_addOperand(m, t)
    nn.ANeuralNetworksModel_setOperandValue(m, 2, np.array(0, np.int32))
    nn.ANeuralNetworksModel_addOperation(m, nn.ANEURALNETWORKS_ADD, [0, 1, 2], [3])   # A
    nn.ANeuralNetworksModel_addOperation(m, nn.ANEURALNETWORKS_MUL, [0, 1, 2], [4])   # B
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0, 1], [3, 4])
    assert nn.ANeuralNetworksModel_finish(m) == OK
    assert [op.type for op in m.operations] == [nn.ANEURALNETWORKS_MUL, nn.ANEURALNETWORKS_ADD]
    assert m.sorted_to_original == [1, 0]


# -- compilation -----------------------------------------------------------------------------------
def test_compilation_rules():
    assert nn.ANeuralNetworksCompilation_create(add_model(finish=False))[0] == BAD_STATE
    _, c = nn.ANeuralNetworksCompilation_create(add_model())
    assert nn.ANeuralNetworksCompilation_setPreference(c, 3) == BAD_DATA
    assert nn.ANeuralNetworksCompilation_setPreference(c, nn.ANEURALNETWORKS_PREFER_LOW_POWER) == OK
    assert nn.ANeuralNetworksCompilation_setPriority(c, 95) == BAD_DATA
    assert nn.ANeuralNetworksCompilation_setPriority(c, nn.ANEURALNETWORKS_PRIORITY_HIGH) == OK
    assert nn.ANeuralNetworksCompilation_setTimeout(c, 1000) == BAD_DATA    # not createForDevices
    assert nn.ANeuralNetworksCompilation_setCaching(c, "/tmp", b"x" * 31) == BAD_DATA
    assert nn.ANeuralNetworksCompilation_setCaching(c, None, b"x" * 32) == NULL
    assert nn.ANeuralNetworksExecution_create(c)[0] == BAD_STATE            # not finished
    assert nn.ANeuralNetworksCompilation_finish(c) == OK
    assert nn.ANeuralNetworksCompilation_finish(c) == BAD_STATE
    assert nn.ANeuralNetworksCompilation_setPreference(c, 1) == BAD_STATE


def test_create_for_devices_rules():
    m = add_model()
    _, n = nn.ANeuralNetworks_getDeviceCount()
    _, dev = nn.ANeuralNetworks_getDevice(n - 1)
    assert nn.ANeuralNetworksDevice_getName(dev) == (OK, "nnapi-reference")
    assert nn.ANeuralNetworksDevice_getType(dev) == (OK, nn.ANEURALNETWORKS_DEVICE_CPU)
    assert nn.ANeuralNetworks_getDevice(n)[0] == BAD_DATA
    assert nn.ANeuralNetworksCompilation_createForDevices(m, [])[0] == BAD_DATA
    assert nn.ANeuralNetworksCompilation_createForDevices(m, [dev, dev])[0] == BAD_DATA
    code, c = nn.ANeuralNetworksCompilation_createForDevices(m, [dev])
    assert code == OK
    assert nn.ANeuralNetworksCompilation_setTimeout(c, 10**9) == OK


# -- execution -------------------------------------------------------------------------------------
def test_execution_rules_and_result():
    c = compiled()
    _, e = nn.ANeuralNetworksExecution_create(c)
    a, b = np.array([[1, 2]], np.float32), np.array([[3, 5]], np.float32)
    out = np.zeros((1, 2), np.float32)
    assert nn.ANeuralNetworksExecution_setInput(e, 2, None, a) == BAD_DATA       # bad index
    assert nn.ANeuralNetworksExecution_setInput(e, 0, None, np.zeros(3, np.float32)) == BAD_DATA
    assert nn.ANeuralNetworksExecution_setInput(e, 0, None, a) == OK
    assert nn.ANeuralNetworksExecution_setInput(e, 0, None, a) == BAD_STATE      # set twice
    assert nn.ANeuralNetworksExecution_compute(e) == BAD_DATA                    # not all set
    assert nn.ANeuralNetworksExecution_setInput(e, 1, None, b) == OK
    assert nn.ANeuralNetworksExecution_setOutput(e, 0, None, out) == OK
    assert nn.ANeuralNetworksExecution_getOutputOperandRank(e, 0)[0] == BAD_STATE
    assert nn.ANeuralNetworksExecution_compute(e) == OK
    assert out.tolist() == [[4.0, 7.0]]
    assert nn.ANeuralNetworksExecution_compute(e) == BAD_STATE                   # not reusable
    assert nn.ANeuralNetworksExecution_getOutputOperandRank(e, 0) == (OK, 2)
    assert nn.ANeuralNetworksExecution_getOutputOperandDimensions(e, 0) == (OK, [1, 2])
    assert nn.ANeuralNetworksExecution_getOutputOperandRank(e, 1)[0] == BAD_DATA
    # timing was not requested: durations are UINT64_MAX
    assert nn.ANeuralNetworksExecution_getDuration(e, 0) == (OK, nn.UINT64_MAX)
    assert nn.ANeuralNetworksExecution_setMeasureTiming(e, True) == BAD_DATA  # not 1 device


def test_reusable_execution_and_async():
    c = compiled()
    _, e = nn.ANeuralNetworksExecution_create(c)
    assert nn.ANeuralNetworksExecution_setReusable(e, True) == OK
    out = np.zeros((1, 2), np.float32)
    nn.ANeuralNetworksExecution_setInput(e, 0, None, np.array([[1, 1]], np.float32))
    nn.ANeuralNetworksExecution_setInput(e, 1, None, np.array([[2, 3]], np.float32))
    nn.ANeuralNetworksExecution_setOutput(e, 0, None, out)
    assert nn.ANeuralNetworksExecution_compute(e) == OK
    assert nn.ANeuralNetworksExecution_compute(e) == OK
    code, event = nn.ANeuralNetworksExecution_startCompute(e)
    assert code == OK
    assert nn.ANeuralNetworksEvent_wait(event) == OK
    assert out.tolist() == [[3.0, 4.0]]


def test_burst():
    c = compiled()
    _, burst = nn.ANeuralNetworksBurst_create(c)
    _, e = nn.ANeuralNetworksExecution_create(c)
    out = np.zeros((1, 2), np.float32)
    nn.ANeuralNetworksExecution_setInput(e, 0, None, np.array([[1, 1]], np.float32))
    nn.ANeuralNetworksExecution_setInput(e, 1, None, np.array([[2, 3]], np.float32))
    nn.ANeuralNetworksExecution_setOutput(e, 0, None, out)
    assert nn.ANeuralNetworksExecution_burstCompute(e, burst) == OK
    assert out.tolist() == [[3.0, 4.0]]
    _, other_burst = nn.ANeuralNetworksBurst_create(compiled())
    _, e2 = nn.ANeuralNetworksExecution_create(c)
    assert nn.ANeuralNetworksExecution_burstCompute(e2, other_burst) == BAD_DATA


def test_output_insufficient_size_with_unknown_output_dims():
    _, m = nn.ANeuralNetworksModel_create()
    out_t = OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (0, 0))
    for t in (F32, F32, I32, out_t):
        nn.ANeuralNetworksModel_addOperand(m, t)
    nn.ANeuralNetworksModel_setOperandValue(m, 2, np.array(0, np.int32))
    nn.ANeuralNetworksModel_addOperation(m, nn.ANEURALNETWORKS_ADD, [0, 1, 2], [3])
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0, 1], [3])
    assert nn.ANeuralNetworksModel_finish(m) == OK
    _, e = nn.ANeuralNetworksExecution_create(compiled(m))
    nn.ANeuralNetworksExecution_setInput(e, 0, None, np.ones((1, 2), np.float32))
    nn.ANeuralNetworksExecution_setInput(e, 1, None, np.ones((1, 2), np.float32))
    nn.ANeuralNetworksExecution_setOutput(e, 0, None, np.zeros(1, np.float32))
    assert nn.ANeuralNetworksExecution_compute(e) == nn.ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE
    assert nn.ANeuralNetworksExecution_getOutputOperandDimensions(e, 0) == (OK, [1, 2])


def test_android_only_handles_fail_cleanly():
    assert nn.ANeuralNetworksMemory_createFromFd(16, 3, -1, 0)[0] == BAD_DATA
    assert nn.ANeuralNetworksMemory_createFromAHardwareBuffer(None)[0] == NULL
    assert nn.ANeuralNetworksEvent_createFromSyncFenceFd(-1)[0] == BAD_DATA


def test_memory_from_fd_as_constant(tmp_path):
    import os
    path = tmp_path / "weights.bin"
    path.write_bytes(np.array([[10, 20]], np.float32).tobytes())
    fd = os.open(path, os.O_RDONLY)
    try:
        code, mem = nn.ANeuralNetworksMemory_createFromFd(8, 1, fd, 0)
    finally:
        os.close(fd)
    assert code == OK
    _, m = nn.ANeuralNetworksModel_create()
    for t in (F32, F32, I32, F32):
        nn.ANeuralNetworksModel_addOperand(m, t)
    assert nn.ANeuralNetworksModel_setOperandValueFromMemory(m, 1, mem, 0, 8) == OK
    assert nn.ANeuralNetworksModel_setOperandValueFromMemory(m, 1, mem, 4, 8) == BAD_DATA
    nn.ANeuralNetworksModel_setOperandValue(m, 2, np.array(0, np.int32))
    nn.ANeuralNetworksModel_addOperation(m, nn.ANEURALNETWORKS_ADD, [0, 1, 2], [3])
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0], [3])
    assert nn.ANeuralNetworksModel_finish(m) == OK
    _, e = nn.ANeuralNetworksExecution_create(compiled(m))
    out = np.zeros((1, 2), np.float32)
    nn.ANeuralNetworksExecution_setInput(e, 0, None, np.array([[1, 2]], np.float32))
    nn.ANeuralNetworksExecution_setOutput(e, 0, None, out)
    assert nn.ANeuralNetworksExecution_compute(e) == OK
    assert out.tolist() == [[11.0, 22.0]]


def test_supported_operations_for_devices_in_original_order():
    from nnsim.drivers.limited import LimitedDriver
    from nnsim.runtime.devices import get_device_manager
    from nnsim.types import OperationCode
    get_device_manager().set_drivers([LimitedDriver(
        "mul-only", 0.5, lambda model, i: model.operations[i].type == OperationCode.MUL)])
    _, m = nn.ANeuralNetworksModel_create()
    for t in (F32, F32, I32, F32, F32):
        nn.ANeuralNetworksModel_addOperand(m, t)
    nn.ANeuralNetworksModel_setOperandValue(m, 2, np.array(0, np.int32))
    nn.ANeuralNetworksModel_addOperation(m, nn.ANEURALNETWORKS_ADD, [0, 1, 2], [3])
    nn.ANeuralNetworksModel_addOperation(m, nn.ANEURALNETWORKS_MUL, [0, 1, 2], [4])
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0, 1], [3, 4])
    assert nn.ANeuralNetworksModel_getSupportedOperationsForDevices(m, [None])[0] == BAD_STATE
    nn.ANeuralNetworksModel_finish(m)
    _, dev = nn.ANeuralNetworks_getDevice(0)
    # run order is MUL, ADD; the answer is in the order operations were added: ADD, MUL
    assert nn.ANeuralNetworksModel_getSupportedOperationsForDevices(m, [dev]) == (
        OK, [False, True])


def test_model_operand_references_a_finished_model():
    """setOperandValueFromModel (IF/WHILE bodies): the referenced model must be finished and
    valid (BAD_STATE), the index in range (BAD_DATA); the operand type is not checked by the
    call (ModelBuilder::setOperandValueFromModel) but a non-MODEL operand with a SUBGRAPH
    value fails Model_finish (reference 1.5)."""
    inner = add_model(finish=False)
    _, outer = nn.ANeuralNetworksModel_create()
    nn.ANeuralNetworksModel_addOperand(outer, OT(nn.ANEURALNETWORKS_MODEL))
    nn.ANeuralNetworksModel_addOperand(outer, F32)
    set_ = nn.ANeuralNetworksModel_setOperandValueFromModel
    assert set_(outer, 0, inner) == BAD_STATE          # not finished yet
    assert nn.ANeuralNetworksModel_finish(inner) == OK
    assert set_(outer, 2, inner) == BAD_DATA           # no operand 2
    assert set_(outer, 0, None) == NULL
    assert set_(outer, 0, inner) == OK
    from nnsim.types import OperandLifeTime
    assert outer.operands[0].lifetime == OperandLifeTime.SUBGRAPH
    assert outer.referenced_models() == [inner]
