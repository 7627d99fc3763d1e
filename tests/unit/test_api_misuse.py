"""Review D11: misuse of the C-shaped API that is undefined behaviour on a device is flagged.

Each case of usability-and-reliability.md D11 is reproduced as the review ran it; the expected
codes are the ones nnsim.nnapi documents (a freed object is BAD_STATE, NULL is UNEXPECTED_NULL
where runtime/NeuralNetworks.cpp checks for it, a bad buffer is BAD_DATA at the call).
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

from nnsim import nnapi as nn
from nnsim.runtime.execution import Execution

OK = nn.ANEURALNETWORKS_NO_ERROR
BAD_DATA = nn.ANEURALNETWORKS_BAD_DATA
BAD_STATE = nn.ANEURALNETWORKS_BAD_STATE
NULL = nn.ANEURALNETWORKS_UNEXPECTED_NULL
OT = nn.ANeuralNetworksOperandType
F32 = OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (1, 2))
I32 = OT(nn.ANEURALNETWORKS_INT32)


def add_model():
    """input0 + input1 (float32 [1,2]) -> output, fuse NONE."""
    _, m = nn.ANeuralNetworksModel_create()
    for t in (F32, F32, I32, F32):
        assert nn.ANeuralNetworksModel_addOperand(m, t) == OK
    assert nn.ANeuralNetworksModel_setOperandValue(m, 2, np.array(0, np.int32)) == OK
    assert nn.ANeuralNetworksModel_addOperation(m, nn.ANEURALNETWORKS_ADD, [0, 1, 2], [3]) == OK
    assert nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0, 1], [3]) == OK
    assert nn.ANeuralNetworksModel_finish(m) == OK
    return m


def compiled(model):
    _, c = nn.ANeuralNetworksCompilation_create(model)
    assert nn.ANeuralNetworksCompilation_finish(c) == OK
    return c


def bound(compilation, out=None):
    """An execution with inputs [1,2] and [10,20] and an output buffer bound."""
    _, e = nn.ANeuralNetworksExecution_create(compilation)
    assert nn.ANeuralNetworksExecution_setInput(e, 0, None, np.array([1, 2], np.float32)) == OK
    assert nn.ANeuralNetworksExecution_setInput(e, 1, None, np.array([10, 20], np.float32)) == OK
    out = np.zeros((1, 2), np.float32) if out is None else out
    assert nn.ANeuralNetworksExecution_setOutput(e, 0, None, out) == OK
    return e


def errors(logcat, fn):
    return [m for lvl, _, m in logcat.records if lvl == "E" and fn in m]


# -- use after free -------------------------------------------------------------------------------
def test_compilation_create_on_a_freed_model(logcat):
    m = add_model()
    assert nn.ANeuralNetworksModel_free(m) == OK
    code, c = nn.ANeuralNetworksCompilation_create(m)
    assert (code, c) == (BAD_STATE, None)
    assert errors(logcat, "ANeuralNetworksCompilation_create passed a freed ANeuralNetworksModel")


def test_execution_create_on_a_freed_compilation(logcat):
    c = compiled(add_model())
    assert nn.ANeuralNetworksCompilation_free(c) == OK
    assert nn.ANeuralNetworksExecution_create(c) == (BAD_STATE, None)
    assert errors(logcat, "ANeuralNetworksExecution_create passed a freed "
                          "ANeuralNetworksCompilation")


def test_compute_on_an_execution_whose_model_was_freed(logcat):
    m = add_model()
    out = np.zeros((1, 2), np.float32)
    e = bound(compiled(m), out)
    assert nn.ANeuralNetworksModel_free(m) == OK
    assert nn.ANeuralNetworksExecution_compute(e) == BAD_STATE
    assert not out.any()  # nothing was computed
    assert errors(logcat, "ANeuralNetworksExecution_compute passed an ANeuralNetworksExecution "
                          "whose ANeuralNetworksModel was freed")


def test_compute_on_an_execution_whose_compilation_was_freed(logcat):
    c = compiled(add_model())
    e = bound(c)
    assert nn.ANeuralNetworksCompilation_free(c) == OK
    assert nn.ANeuralNetworksExecution_compute(e) == BAD_STATE
    assert nn.ANeuralNetworksExecution_startCompute(e) == (BAD_STATE, None)
    assert errors(logcat, "whose ANeuralNetworksCompilation was freed")


def test_event_wait_on_a_freed_event(logcat):
    e = bound(compiled(add_model()))
    code, event = nn.ANeuralNetworksExecution_startCompute(e)
    assert code == OK
    assert nn.ANeuralNetworksEvent_free(event) == OK  # waits for the computation, as upstream
    assert nn.ANeuralNetworksEvent_wait(event) == BAD_STATE
    assert errors(logcat, "ANeuralNetworksEvent_wait passed a freed ANeuralNetworksEvent")


def test_get_output_operand_rank_on_a_freed_execution(logcat):
    e = bound(compiled(add_model()))
    assert nn.ANeuralNetworksExecution_compute(e) == OK
    assert nn.ANeuralNetworksExecution_getOutputOperandRank(e, 0) == (OK, 2)
    assert nn.ANeuralNetworksExecution_free(e) == OK
    assert nn.ANeuralNetworksExecution_getOutputOperandRank(e, 0) == (BAD_STATE, None)
    assert nn.ANeuralNetworksExecution_getOutputOperandDimensions(e, 0) == (BAD_STATE, None)
    assert errors(logcat, "ANeuralNetworksExecution_getOutputOperandRank passed a freed "
                          "ANeuralNetworksExecution")


def _objects():
    m = add_model()
    c = compiled(m)
    e = bound(c)
    _, event = nn.ANeuralNetworksExecution_startCompute(e)
    nn.ANeuralNetworksEvent_wait(event)
    _, burst = nn.ANeuralNetworksBurst_create(c)
    _, mem = nn.ANeuralNetworksMemory_createFromBytes(bytes(8))
    _, desc = nn.ANeuralNetworksMemoryDesc_create()
    return {"Event": event, "Execution": e, "Burst": burst, "MemoryDesc": desc,
            "Memory": mem, "Compilation": c, "Model": m}


def test_freeing_twice_is_bad_state(logcat):
    for kind, obj in _objects().items():
        free = getattr(nn, f"ANeuralNetworks{kind}_free")
        assert free(obj) == OK, kind
        assert free(obj) == BAD_STATE, kind
        assert errors(logcat, f"ANeuralNetworks{kind}_free passed a freed "
                              f"ANeuralNetworks{kind} (double free)"), kind


def test_free_of_null_is_valid_and_teardown_in_order_logs_nothing(logcat):
    for kind in ("Event", "Execution", "Burst", "MemoryDesc", "Memory", "Compilation", "Model"):
        assert getattr(nn, f"ANeuralNetworks{kind}_free")(None) == OK
    for kind, obj in _objects().items():  # dependants first, as C requires
        assert getattr(nn, f"ANeuralNetworks{kind}_free")(obj) == OK
    assert [r for r in logcat.records if r[0] == "E"] == []


def test_free_of_the_wrong_object_is_bad_data():
    assert nn.ANeuralNetworksModel_free(object()) == BAD_DATA
    assert nn.ANeuralNetworksExecution_free(add_model()) == BAD_DATA


def test_burst_and_memory_after_free(logcat):
    c = compiled(add_model())
    e = bound(c)
    _, burst = nn.ANeuralNetworksBurst_create(c)
    assert nn.ANeuralNetworksBurst_free(burst) == OK
    assert nn.ANeuralNetworksExecution_burstCompute(e, burst) == BAD_STATE

    _, e2 = nn.ANeuralNetworksExecution_create(c)
    _, mem = nn.ANeuralNetworksMemory_createFromBytes(np.array([1, 2], np.float32))
    assert nn.ANeuralNetworksExecution_setInputFromMemory(e2, 0, None, mem, 0, 8) == OK
    assert nn.ANeuralNetworksMemory_free(mem) == OK
    assert nn.ANeuralNetworksExecution_setInputFromMemory(e2, 1, None, mem, 0, 8) == BAD_STATE
    assert nn.ANeuralNetworksExecution_setInput(e2, 1, None, np.ones(2, np.float32)) == \
        BAD_STATE  # the execution now needs a freed memory
    assert errors(logcat, "whose ANeuralNetworksMemory was freed")


def test_freeing_an_in_flight_execution_is_refused(monkeypatch, logcat):
    release = threading.Event()
    original = Execution._compute_internal

    def slow(self):
        release.wait(10)
        original(self)
    monkeypatch.setattr(Execution, "_compute_internal", slow)
    out = np.zeros((1, 2), np.float32)
    e = bound(compiled(add_model()), out)
    code, event = nn.ANeuralNetworksExecution_startCompute(e)
    assert code == OK
    assert nn.ANeuralNetworksExecution_free(e) == BAD_STATE
    assert errors(logcat, "ANeuralNetworksExecution_free passed an in-flight")
    release.set()
    assert nn.ANeuralNetworksEvent_wait(event) == OK
    np.testing.assert_array_equal(out, [[11, 22]])
    assert nn.ANeuralNetworksExecution_free(e) == OK  # once finished it can be freed


# -- buffers at setInput / setOutput ---------------------------------------------------------------
def test_non_contiguous_output_is_bad_data_at_set_output(logcat):
    _, e = nn.ANeuralNetworksExecution_create(compiled(add_model()))
    out = np.zeros((2, 2), np.float32)[:, :1].T  # the review's case: shape (1, 2), strided
    assert out.shape == (1, 2) and not out.flags.c_contiguous
    assert nn.ANeuralNetworksExecution_setOutput(e, 0, None, out) == BAD_DATA
    assert errors(logcat, "ANeuralNetworksExecution_setOutput passed a non-contiguous ndarray")


def test_non_contiguous_input_is_bad_data_at_set_input():
    _, e = nn.ANeuralNetworksExecution_create(compiled(add_model()))
    x = np.arange(4, dtype=np.float32)[::2]
    assert nn.ANeuralNetworksExecution_setInput(e, 0, None, x) == BAD_DATA
    assert nn.ANeuralNetworksExecution_setInput(e, 0, None, np.ascontiguousarray(x)) == OK


@pytest.mark.parametrize("out", [np.zeros((1, 2), np.float32), np.zeros(2, np.float32),
                                 np.zeros(8, np.uint8), bytearray(8)],
                         ids=["operand shape", "flat", "bytes", "bytearray"])
def test_output_buffers_of_any_layout_get_the_output_bytes(out):
    """An output buffer of the operand's shape is filled as one copy, any other buffer of the
    right size byte for byte: each gets [1, 2] + [10, 20], computed again by a reused
    execution (the second compute must overwrite the first's values)."""
    e = bound(compiled(add_model()), out)
    assert nn.ANeuralNetworksExecution_setReusable(e, True) == OK
    for _ in range(2):
        np.frombuffer(out, np.uint8)[:] = 0xFF
        assert nn.ANeuralNetworksExecution_compute(e) == OK
        np.testing.assert_array_equal(np.frombuffer(out, np.float32), [11, 22])


@pytest.mark.parametrize("which", ["setInput", "setOutput"])
def test_wrong_byte_size_is_bad_data_at_the_call(which, logcat):
    _, e = nn.ANeuralNetworksExecution_create(compiled(add_model()))
    fn = getattr(nn, f"ANeuralNetworksExecution_{which}")
    assert fn(e, 0, None, np.zeros(3, np.float32)) == BAD_DATA          # 12 bytes for 8
    assert fn(e, 0, None, np.zeros(2, np.float32), 12) == BAD_DATA      # length past the end
    assert fn(e, 0, None, bytearray(4)) == BAD_DATA
    assert fn(e, 0, None, "12345678") == BAD_DATA                       # not a buffer
    assert errors(logcat, "Setting argument with invalid length: 12, expected length: 8")
    assert errors(logcat, f"ANeuralNetworksExecution_{which} passed length 12 for a buffer "
                          "of 8 bytes")


def test_output_length_selects_the_leading_bytes():
    big = np.full(4, -1, np.float32)
    _, e = nn.ANeuralNetworksExecution_create(compiled(add_model()))
    nn.ANeuralNetworksExecution_setInput(e, 0, None, np.array([1, 2], np.float32))
    nn.ANeuralNetworksExecution_setInput(e, 1, None, np.array([10, 20], np.float32))
    assert nn.ANeuralNetworksExecution_setOutput(e, 0, None, big, 8) == OK
    assert nn.ANeuralNetworksExecution_compute(e) == OK
    np.testing.assert_array_equal(big, [11, 22, -1, -1])


def test_read_only_output_is_bad_data():
    _, e = nn.ANeuralNetworksExecution_create(compiled(add_model()))
    ro = np.zeros(2, np.float32)
    ro.flags.writeable = False
    assert nn.ANeuralNetworksExecution_setOutput(e, 0, None, ro) == BAD_DATA
    assert nn.ANeuralNetworksExecution_setOutput(e, 0, None, bytes(8)) == BAD_DATA


def test_other_dtype_is_reinterpreted_with_one_warning_per_execution(logcat):
    c = compiled(add_model())
    _, e = nn.ANeuralNetworksExecution_create(c)
    a = np.array([1.5, 2.0], np.float32).view(np.int32)  # the bytes of 1.5 and 2.0
    assert nn.ANeuralNetworksExecution_setInput(e, 0, None, a) == OK
    assert nn.ANeuralNetworksExecution_setInput(e, 1, None, np.zeros(2, np.int32)) == OK
    out = np.zeros(2, np.uint32)
    assert nn.ANeuralNetworksExecution_setOutput(e, 0, None, out) == OK
    assert nn.ANeuralNetworksExecution_compute(e) == OK
    np.testing.assert_array_equal(out.view(np.float32), [1.5, 2.0])  # bytes, as C
    warnings = [m for lvl, _, m in logcat.records if lvl == "W"]
    assert warnings == [("ANeuralNetworksExecution_setInput: input 0 is a int32 array but the "
                         "operand is TENSOR_FLOAT32 (float32); its bytes are reinterpreted as "
                         "float32, as C would")]
    logcat.records.clear()
    bound(c)  # matching dtypes: no warning
    assert [m for lvl, _, m in logcat.records if lvl == "W"] == []


# -- nothing raises; one log line ------------------------------------------------------------------
def test_memory_create_from_bytes_returns_codes():
    assert nn.ANeuralNetworksMemory_createFromBytes(None) == (NULL, None)
    assert nn.ANeuralNetworksMemory_createFromBytes("abc") == (BAD_DATA, None)
    assert nn.ANeuralNetworksMemory_createFromBytes(2**40) == (BAD_DATA, None)  # not a size
    assert nn.ANeuralNetworksMemory_createFromBytes(b"") == (BAD_DATA, None)
    code, mem = nn.ANeuralNetworksMemory_createFromBytes(np.array([1, 2], np.float32))
    assert code == OK and bytes(mem.view(0, 8)) == np.array([1, 2], np.float32).tobytes()


def test_model_finish_on_an_invalid_model_logs_once(logcat):
    _, m = nn.ANeuralNetworksModel_create()
    for t in (F32, F32, I32, F32):
        nn.ANeuralNetworksModel_addOperand(m, t)
    nn.ANeuralNetworksModel_setOperandValue(m, 2, np.array(0, np.int32))
    nn.ANeuralNetworksModel_addOperation(m, nn.ANEURALNETWORKS_ADD, [0, 1, 2], [3])
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0], [3])  # operand 1 never written
    assert nn.ANeuralNetworksModel_finish(m) == BAD_DATA
    lines = [m for lvl, _, m in logcat.records if "called on invalid model" in m]
    assert len(lines) == 1, lines
    assert logcat.records[-1][1] == "ModelBuilder"  # upstream's LOG_TAG for the line


def test_no_driver_line_is_logged_once():
    """ExecutionPlan logs "No driver can do operation X" once (the API layer must not repeat
    it), as the finish error is logged once."""
    from nnsim.platform import vlog
    code, m = nn.ANeuralNetworksModel_create()
    t = nn.ANeuralNetworksOperandType(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (2,))
    nn.ANeuralNetworksModel_addOperand(m, t)
    nn.ANeuralNetworksModel_addOperand(m, t)
    nn.ANeuralNetworksModel_addOperation(m, nn.ANEURALNETWORKS_OEM_OPERATION, [0], [1])
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0], [1])
    assert nn.ANeuralNetworksModel_finish(m) == nn.ANEURALNETWORKS_NO_ERROR
    with vlog.LogCapture() as cap:
        code, c = nn.ANeuralNetworksCompilation_create(m)
        assert nn.ANeuralNetworksCompilation_finish(c) == nn.ANEURALNETWORKS_BAD_DATA
    assert cap.lines() == ["No driver can do operation OEM_OPERATION"]
