"""A prepared model keeps its operations' plans across executions (nnsim/ops/executor.py
ExecutorState): later executions must compute exactly what a fresh compilation computes, for
new input values, in any order, and from concurrent threads.

Oracle: a new compilation's first execution, which prepares and executes every operation
afresh (the path the conformance vectors check).
"""
from __future__ import annotations

import threading
from functools import partial

import numpy as np
import pytest

from nnsim import nnapi as nn
from nnsim.kernels.program import Program
from nnsim.types import OperandType as T
from nnsim.types import OperationCode as C

_QUANT = {T.TENSOR_QUANT8_ASYMM: np.uint8, T.TENSOR_QUANT8_ASYMM_SIGNED: np.int8}


def _model(t):
    """CONV_2D -> DEPTHWISE_CONV_2D -> ADD (broadcast constant) -> MEAN -> SOFTMAX, input
    [2, 9, 7, 3]; ``t`` is TENSOR_FLOAT32 or a quant8 type."""
    rng = np.random.default_rng(1)
    q = t in _QUANT
    code, m = nn.ANeuralNetworksModel_create()
    operands = []

    def tensor(dims, scale=0.0, zp=0, ttype=t, value=None):
        nn.ANeuralNetworksModel_addOperand(m, nn.ANeuralNetworksOperandType(ttype, dims, scale, zp))
        index = len(operands)
        operands.append(dims)
        if value is not None:
            nn.ANeuralNetworksModel_setOperandValue(m, index, value)
        return index

    def scalar(value):
        return tensor((), ttype=T.INT32, value=np.array(value, np.int32))

    dtype = _QUANT.get(t, np.float32)
    zp = 0 if not q else (3 if dtype == np.int8 else 128)
    x = tensor((2, 9, 7, 3), 0.05 if q else 0.0, zp)
    if q:
        w1 = tensor((5, 3, 3, 3), 0.02, zp, value=rng.integers(0, 255, (5, 3, 3, 3)).astype(dtype)
                    if dtype == np.uint8 else rng.integers(-127, 128, (5, 3, 3, 3)).astype(dtype))
        b1 = tensor((5,), 0.001, 0, T.TENSOR_INT32, rng.integers(-500, 500, 5).astype(np.int32))
    else:
        w1 = tensor((5, 3, 3, 3), value=rng.normal(size=(5, 3, 3, 3)).astype(np.float32))
        b1 = tensor((5,), value=rng.normal(size=5).astype(np.float32))
    c1 = tensor((2, 9, 7, 5), 0.1 if q else 0.0, zp)
    nn.ANeuralNetworksModel_addOperation(m, C.CONV_2D, [x, w1, b1, scalar(1), scalar(1),
                                                        scalar(1), scalar(1)], [c1])
    if q:
        w2 = tensor((1, 3, 3, 5), 0.03, zp, value=rng.integers(0, 255, (1, 3, 3, 5)).astype(dtype)
                    if dtype == np.uint8 else rng.integers(-127, 128, (1, 3, 3, 5)).astype(dtype))
        b2 = tensor((5,), 0.003, 0, T.TENSOR_INT32, rng.integers(-500, 500, 5).astype(np.int32))
    else:
        w2 = tensor((1, 3, 3, 5), value=rng.normal(size=(1, 3, 3, 5)).astype(np.float32))
        b2 = tensor((5,), value=rng.normal(size=5).astype(np.float32))
    d = tensor((2, 5, 4, 5), 0.2 if q else 0.0, zp)
    nn.ANeuralNetworksModel_addOperation(m, C.DEPTHWISE_CONV_2D, [
        c1, w2, b2, scalar(1), scalar(2), scalar(2), scalar(1), scalar(0)], [d])
    k = tensor((1, 1, 1, 5), 0.2 if q else 0.0, zp,
               value=(rng.integers(0, 100, (1, 1, 1, 5)).astype(dtype) if q
                      else rng.normal(size=(1, 1, 1, 5)).astype(np.float32)))
    a = tensor((2, 5, 4, 5), 0.3 if q else 0.0, zp)
    nn.ANeuralNetworksModel_addOperation(m, C.ADD, [d, k, scalar(0)], [a])
    axes = tensor((2,), ttype=T.TENSOR_INT32, value=np.array([1, 2], np.int32))
    mean = tensor((2, 1, 1, 5), 0.3 if q else 0.0, zp)
    nn.ANeuralNetworksModel_addOperation(m, C.MEAN, [a, axes, scalar(1)], [mean])
    beta = tensor((), ttype=T.FLOAT32, value=np.array(1.0, np.float32))
    out = tensor((2, 1, 1, 5), 1 / 256 if q else 0.0, 0 if dtype != np.int8 else -128)
    nn.ANeuralNetworksModel_addOperation(m, C.SOFTMAX, [mean, beta], [out])
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [x], [d, out])
    assert nn.ANeuralNetworksModel_finish(m) == nn.ANEURALNETWORKS_NO_ERROR
    return m, dtype


def _compile(m):
    code, comp = nn.ANeuralNetworksCompilation_create(m)
    assert code == nn.ANEURALNETWORKS_NO_ERROR
    assert nn.ANeuralNetworksCompilation_finish(comp) == nn.ANEURALNETWORKS_NO_ERROR
    return comp


def _run(comp, x, dtype):
    code, ex = nn.ANeuralNetworksExecution_create(comp)
    outs = [np.zeros((2, 5, 4, 5), dtype), np.zeros((2, 1, 1, 5), dtype)]
    nn.ANeuralNetworksExecution_setInput(ex, 0, None, x)
    for i, o in enumerate(outs):
        nn.ANeuralNetworksExecution_setOutput(ex, i, None, o)
    assert nn.ANeuralNetworksExecution_compute(ex) == nn.ANEURALNETWORKS_NO_ERROR
    return outs


def _inputs(dtype, n):
    rng = np.random.default_rng(7)
    if dtype == np.float32:
        return [rng.normal(size=(2, 9, 7, 3)).astype(np.float32) for _ in range(n)]
    info = np.iinfo(dtype)
    return [rng.integers(info.min, info.max + 1, (2, 9, 7, 3)).astype(dtype) for _ in range(n)]


@pytest.fixture(autouse=True)
def _board():
    """The default board: its NPU and nnapi-reference share the model (each step model is a
    prepared model with its own state)."""
    from nnsim.runtime import board as boards
    boards.ensure_board()


@pytest.mark.parametrize("t", [T.TENSOR_FLOAT32, T.TENSOR_QUANT8_ASYMM,
                               T.TENSOR_QUANT8_ASYMM_SIGNED])
def test_later_executions_equal_a_fresh_compilation(t):
    m, dtype = _model(t)
    xs = _inputs(dtype, 3)
    expected = [_run(_compile(m), x, dtype) for x in xs]     # each: a first execution
    comp = _compile(m)
    for x, want in zip(xs + xs[::-1], expected + expected[::-1]):
        got = _run(comp, x, dtype)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    # the outputs handed out are the caller's: the next execution leaves them alone
    first = _run(comp, xs[0], dtype)
    kept = [o.copy() for o in first]
    _run(comp, xs[1], dtype)
    for o, k in zip(first, kept):
        np.testing.assert_array_equal(o, k)


def test_concurrent_executions_do_not_share_buffers():
    m, dtype = _model(T.TENSOR_QUANT8_ASYMM)
    xs = _inputs(dtype, 4)
    expected = [_run(_compile(m), x, dtype) for x in xs]
    comp = _compile(m)
    failures = []

    def worker(k):
        for _ in range(15):
            got = _run(comp, xs[k], dtype)
            if not all(np.array_equal(g, w) for g, w in zip(got, expected[k])):
                failures.append(k)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not failures


def _pool_reshape_model(code):
    """``code`` (AVERAGE_POOL_2D / MAX_POOL_2D) 2x2 stride 2 -> RESHAPE to [1, 18] -> SQUEEZE,
    uint8."""
    _, m = nn.ANeuralNetworksModel_create()
    q = nn.ANEURALNETWORKS_TENSOR_QUANT8_ASYMM
    for dims, t in [((1, 6, 6, 2), q)] + [((), nn.ANEURALNETWORKS_INT32)] * 6 + \
            [((1, 3, 3, 2), q), ((2,), nn.ANEURALNETWORKS_TENSOR_INT32), ((1, 18), q),
             ((1,), nn.ANEURALNETWORKS_TENSOR_INT32), ((18,), q)]:
        nn.ANeuralNetworksModel_addOperand(
            m, nn.ANeuralNetworksOperandType(t, dims, 0.5 if t == q else 0.0, 3 if t == q else 0))
    for i, v in enumerate([2, 2, 2, 2, 2, 0], start=1):   # VALID, strides, filter, fuse
        nn.ANeuralNetworksModel_setOperandValue(m, i, np.array(v, np.int32))
    nn.ANeuralNetworksModel_setOperandValue(m, 8, np.array([1, 18], np.int32))
    nn.ANeuralNetworksModel_setOperandValue(m, 10, np.array([0], np.int32))
    nn.ANeuralNetworksModel_addOperation(m, code, [0, 1, 2, 3, 4, 5, 6], [7])
    nn.ANeuralNetworksModel_addOperation(m, C.RESHAPE, [7, 8], [9])
    nn.ANeuralNetworksModel_addOperation(m, C.SQUEEZE, [9, 10], [11])
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0], [11])
    assert nn.ANeuralNetworksModel_finish(m) == nn.ANEURALNETWORKS_NO_ERROR
    return m


@pytest.mark.parametrize("code", [C.AVERAGE_POOL_2D, C.MAX_POOL_2D])
def test_pool_and_reshape_plans_follow_new_inputs(code):
    m = _pool_reshape_model(code)
    rng = np.random.default_rng(3)
    xs = [rng.integers(0, 256, (1, 6, 6, 2)).astype(np.uint8) for _ in range(3)]
    comp = _compile(m)
    for x in xs + xs[::-1]:
        _, ex = nn.ANeuralNetworksExecution_create(comp)
        out = np.zeros(18, np.uint8)
        nn.ANeuralNetworksExecution_setInput(ex, 0, None, x)
        nn.ANeuralNetworksExecution_setOutput(ex, 0, None, out)
        assert nn.ANeuralNetworksExecution_compute(ex) == nn.ANEURALNETWORKS_NO_ERROR
        # hand-computed: the same scale and zero point in and out, windows of 2x2 per channel
        windows = x.reshape(3, 2, 3, 2, 2).transpose(0, 2, 4, 1, 3).reshape(3, 3, 2, 4)
        if code == C.MAX_POOL_2D:
            want = windows.max(axis=-1)
        else:   # TFLite's rounding average: (sum + count / 2) / count
            want = (windows.astype(np.int32).sum(axis=-1) + 2) // 4
        np.testing.assert_array_equal(out, want.reshape(18).astype(np.uint8))


def _quantize_pool_model():
    """float32 [1, 4, 4, 2] -> QUANTIZE (uint8, scale 0.1, zero point 7) -> AVERAGE_POOL_2D
    2x2 stride 2 -> DEQUANTIZE -> float32 [1, 2, 2, 2]; outputs: the pooled uint8 and the
    dequantized float32."""
    _, m = nn.ANeuralNetworksModel_create()
    f, q, i32 = T.TENSOR_FLOAT32, T.TENSOR_QUANT8_ASYMM, T.INT32
    for dims, t, scale, zp in [((1, 4, 4, 2), f, 0.0, 0), ((1, 4, 4, 2), q, 0.1, 7)] + \
            [((), i32, 0.0, 0)] * 6 + [((1, 2, 2, 2), q, 0.1, 7), ((1, 2, 2, 2), f, 0.0, 0)]:
        nn.ANeuralNetworksModel_addOperand(m, nn.ANeuralNetworksOperandType(t, dims, scale, zp))
    for i, v in enumerate([2, 2, 2, 2, 2, 0], start=2):   # VALID, strides, filter, fuse
        nn.ANeuralNetworksModel_setOperandValue(m, i, np.array(v, np.int32))
    nn.ANeuralNetworksModel_addOperation(m, C.QUANTIZE, [0], [1])
    nn.ANeuralNetworksModel_addOperation(m, C.AVERAGE_POOL_2D, [1, 2, 3, 4, 5, 6, 7], [8])
    nn.ANeuralNetworksModel_addOperation(m, C.DEQUANTIZE, [8], [9])
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0], [8, 9])
    assert nn.ANeuralNetworksModel_finish(m) == nn.ANEURALNETWORKS_NO_ERROR
    return m


def _pool_execution(comp, x, pooled, floats, reusable=False):
    """An execution of :func:`_quantize_pool_model`'s compilation bound to ``x`` and the two
    output arrays (``reusable``: ANeuralNetworksExecution_setReusable)."""
    _, ex = nn.ANeuralNetworksExecution_create(comp)
    if reusable:
        assert nn.ANeuralNetworksExecution_setReusable(ex, True) == nn.ANEURALNETWORKS_NO_ERROR
    nn.ANeuralNetworksExecution_setInput(ex, 0, None, x)
    nn.ANeuralNetworksExecution_setOutput(ex, 0, None, pooled)
    nn.ANeuralNetworksExecution_setOutput(ex, 1, None, floats)
    return ex


def test_a_reusable_execution_reads_its_input_buffer_anew_at_each_compute():
    """The plans bind their kernels to the arrays of the first compute (the bound input
    buffer, their own output buffers); refilling the caller's input buffer must change every
    result. Oracle: the arithmetic by hand (round half away from zero, TFLite's rounding
    average, float32(double(scale) * (q - zp)))."""
    comp = _compile(_quantize_pool_model())
    x = np.zeros((1, 4, 4, 2), np.float32)
    pooled, floats = np.zeros((1, 2, 2, 2), np.uint8), np.zeros((1, 2, 2, 2), np.float32)
    ex = _pool_execution(comp, x, pooled, floats, reusable=True)
    rng = np.random.default_rng(11)
    for _ in range(4):
        x[...] = rng.uniform(-1.0, 26.0, x.shape).astype(np.float32)
        assert nn.ANeuralNetworksExecution_compute(ex) == nn.ANEURALNETWORKS_NO_ERROR
        v = (x / np.float32(0.1)).astype(np.float64)   # a float32 division, as TFLite
        q = np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5) + 7, 0, 255).astype(np.int64)
        windows = q.reshape(2, 2, 2, 2, 2).transpose(0, 2, 4, 1, 3).reshape(1, 2, 2, 2, 4)
        want = (windows.sum(axis=-1) + 2) // 4
        np.testing.assert_array_equal(pooled, want.astype(np.uint8))
        np.testing.assert_array_equal(
            floats, (float(np.float32(0.1)) * (want - 7)).astype(np.float32))


@pytest.mark.parametrize("constant_first", [False, True])
def test_a_broadcast_constant_operand_is_expanded_once_and_kept_in_order(constant_first):
    """SUB of x [2, 3, 4] and a constant [4] (either side) over several executions of one
    compilation: the plan expands the constant once; the values and the operand order must
    stay those of numpy's broadcasting (hand oracle)."""
    _, m = nn.ANeuralNetworksModel_create()
    f = T.TENSOR_FLOAT32
    for dims, t in [((2, 3, 4), f), ((4,), f), ((), T.INT32), ((2, 3, 4), f)]:
        nn.ANeuralNetworksModel_addOperand(m, nn.ANeuralNetworksOperandType(t, dims, 0.0, 0))
    c = np.array([0.5, -1.0, 2.0, 8.0], np.float32)
    nn.ANeuralNetworksModel_setOperandValue(m, 1, c)
    nn.ANeuralNetworksModel_setOperandValue(m, 2, np.array(0, np.int32))
    ins = [1, 0, 2] if constant_first else [0, 1, 2]
    nn.ANeuralNetworksModel_addOperation(m, C.SUB, ins, [3])
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0], [3])
    assert nn.ANeuralNetworksModel_finish(m) == nn.ANEURALNETWORKS_NO_ERROR
    comp = _compile(m)
    rng = np.random.default_rng(4)
    for _ in range(3):
        x = rng.normal(size=(2, 3, 4)).astype(np.float32)
        _, ex = nn.ANeuralNetworksExecution_create(comp)
        out = np.zeros((2, 3, 4), np.float32)
        nn.ANeuralNetworksExecution_setInput(ex, 0, None, x)
        nn.ANeuralNetworksExecution_setOutput(ex, 0, None, out)
        assert nn.ANeuralNetworksExecution_compute(ex) == nn.ANEURALNETWORKS_NO_ERROR
        np.testing.assert_array_equal(out, c - x if constant_first else x - c)


def _count_chains(monkeypatch):
    """The number of operations each chained execution ran (nnsim/ops/executor.py _Chain)."""
    from nnsim.ops import executor
    ran = []
    real = executor._run_chain

    def counted(model, values, chain):
        ran.append((real(model, values, chain), len(chain.calls)))
        return ran[-1][0]
    monkeypatch.setattr(executor, "_run_chain", counted)
    return ran


@pytest.mark.parametrize("t", [T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED])
def test_executions_run_as_one_chain_once_every_plan_is_bound(monkeypatch, t):
    """Once two executions ran every operation's plan on the buffers of the one before, the
    next ones call the plans in turn (a chain); they must still equal a fresh compilation."""
    ran = _count_chains(monkeypatch)
    m, dtype = _model(t)
    xs = _inputs(dtype, 3)
    expected = [_run(_compile(m), x, dtype) for x in xs]
    assert ran == []   # a first execution builds the plans
    comp = _compile(m)
    for x, want in zip(xs * 3, expected * 3):
        for g, w in zip(_run(comp, x, dtype), want):
            np.testing.assert_array_equal(g, w)
    assert ran and all(done == total for done, total in ran)


def test_a_plan_that_returns_new_outputs_ends_the_chain(monkeypatch):
    """A chained plan whose runner hands back other output arrays (as a plan does when it
    cannot bind a new input) ends the chain there: the operations after it run as usual on
    those arrays, and no chain is made again while that goes on."""
    from nnsim.ops import executor
    ran = _count_chains(monkeypatch)
    real_init = executor._Chain.__init__

    def init(self, model, state, values, results):
        real_init(self, model, state, values, results)
        step = state.steps[1]   # the depthwise convolution's plan, through its runner
        run, args = state.plans[step.op_index][1:3]
        self.calls[1] = partial(executor._checked, lambda a: [o.copy() for o in run(a)], args,
                                (), results[1], 1, self.values, step.op.type)
        self.program = Program(self.calls)
    monkeypatch.setattr(executor._Chain, "__init__", init)
    m, dtype = _model(T.TENSOR_QUANT8_ASYMM)
    xs = _inputs(dtype, 3)
    expected = [_run(_compile(m), x, dtype) for x in xs]
    comp = _compile(m)
    for x, want in zip(xs * 3, expected * 3):
        for g, w in zip(_run(comp, x, dtype), want):
            np.testing.assert_array_equal(g, w)
    assert ran and all(done == 2 < total for done, total in ran)


def test_a_chain_follows_new_input_shapes():
    """An input of unspecified dimensions: executions with new shapes in between chained
    ones must compute for their own shape (oracle: a fresh compilation per execution)."""
    _, m = nn.ANeuralNetworksModel_create()
    q = T.TENSOR_QUANT8_ASYMM
    rng = np.random.default_rng(5)
    for dims, t, scale, zp in [((1, 0, 0, 3), q, 0.05, 128), ((4, 1, 1, 3), q, 0.02, 120),
                               ((4,), T.TENSOR_INT32, 0.001, 0)] + [((), T.INT32, 0.0, 0)] * 4 \
            + [((1, 0, 0, 4), q, 0.1, 100)]:
        nn.ANeuralNetworksModel_addOperand(m, nn.ANeuralNetworksOperandType(t, dims, scale, zp))
    nn.ANeuralNetworksModel_setOperandValue(m, 1, rng.integers(0, 256, (4, 1, 1, 3))
                                            .astype(np.uint8))
    nn.ANeuralNetworksModel_setOperandValue(m, 2, rng.integers(-900, 900, 4).astype(np.int32))
    for i, v in zip((3, 4, 5, 6), (1, 1, 1, 0)):   # SAME padding, strides 1, no activation
        nn.ANeuralNetworksModel_setOperandValue(m, i, np.array(v, np.int32))
    nn.ANeuralNetworksModel_addOperation(m, C.CONV_2D, [0, 1, 2, 3, 4, 5, 6], [7])
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0], [7])
    assert nn.ANeuralNetworksModel_finish(m) == nn.ANEURALNETWORKS_NO_ERROR

    def run(comp, x):
        _, ex = nn.ANeuralNetworksExecution_create(comp)
        out = np.zeros(x.shape[:3] + (4,), np.uint8)
        typed = nn.ANeuralNetworksOperandType(q, x.shape, 0.05, 128)
        assert nn.ANeuralNetworksExecution_setInput(ex, 0, typed, x) == \
            nn.ANEURALNETWORKS_NO_ERROR
        assert nn.ANeuralNetworksExecution_setOutput(
            ex, 0, nn.ANeuralNetworksOperandType(q, out.shape, 0.1, 100), out) == \
            nn.ANEURALNETWORKS_NO_ERROR
        assert nn.ANeuralNetworksExecution_compute(ex) == nn.ANEURALNETWORKS_NO_ERROR
        return out

    comp = _compile(m)
    for h, w in [(5, 6)] * 4 + [(3, 7), (5, 6), (5, 6), (3, 7)]:
        x = rng.integers(0, 256, (1, h, w, 3)).astype(np.uint8)
        np.testing.assert_array_equal(run(comp, x), run(_compile(m), x))


@pytest.mark.parametrize("where", ["runner", "bound call"])
def test_a_kernel_failure_in_a_chain_is_an_execution_failure(monkeypatch, where):
    """As in an unchained execution: OP_FAILED, not an exception out of compute; from an
    operation run through its runner or from a bound kernel call the chain makes."""
    from nnsim.ops import executor
    real_init = executor._Chain.__init__

    def failing(*args):
        raise ValueError("planted")

    def init(self, model, state, values, results):
        real_init(self, model, state, values, results)
        step = state.steps[2]
        args = state.plans[step.op_index][2]
        self.calls[2] = (partial(failing, args) if where == "bound call" else
                         partial(executor._checked, failing, args, (), results[2], 2,
                                 self.values, step.op.type))
        self.program = Program(self.calls)
    monkeypatch.setattr(executor._Chain, "__init__", init)
    m, dtype = _model(T.TENSOR_QUANT8_ASYMM)
    comp = _compile(m)
    codes = []
    for x in _inputs(dtype, 5):
        _, ex = nn.ANeuralNetworksExecution_create(comp)
        nn.ANeuralNetworksExecution_setInput(ex, 0, None, x)
        for i, shape in enumerate([(2, 5, 4, 5), (2, 1, 1, 5)]):
            nn.ANeuralNetworksExecution_setOutput(ex, i, None, np.zeros(shape, dtype))
        codes.append(nn.ANeuralNetworksExecution_compute(ex))
    # the chain is made at the second execution (the first places the arena)
    assert codes == [nn.ANEURALNETWORKS_NO_ERROR] * 2 + [nn.ANEURALNETWORKS_OP_FAILED] * 3


def test_a_chain_runs_the_input_readers_bound_while_the_inputs_stay(monkeypatch):
    """A reusable execution keeps its input array: the chain then runs the operations that
    read it (QUANTIZE here) as bound kernel calls too (``_Chain.fixed``, no Python call
    between the compiled steps); a new execution with another input array runs them through
    their runners. Both must follow the input's values. Oracle: a fresh compilation."""
    from nnsim.ops import executor
    used = []
    real = executor._Chain.program_for

    def recorded(chain, values):
        program = real(chain, values)
        used.append(chain.fixed is not None and program is chain.fixed)
        return program
    monkeypatch.setattr(executor._Chain, "program_for", recorded)
    m = _quantize_pool_model()
    comp = _compile(m)
    x = np.zeros((1, 4, 4, 2), np.float32)
    pooled, floats = np.zeros((1, 2, 2, 2), np.uint8), np.zeros((1, 2, 2, 2), np.float32)
    ex = _pool_execution(comp, x, pooled, floats, reusable=True)
    rng = np.random.default_rng(3)
    for k in range(6):
        value = rng.uniform(-1.0, 26.0, x.shape).astype(np.float32)
        if k == 4:   # another execution, another input array: the runners' path
            x = value.copy()
            ex = _pool_execution(comp, x, pooled, floats, reusable=True)
        x[...] = value
        assert nn.ANeuralNetworksExecution_compute(ex) == nn.ANEURALNETWORKS_NO_ERROR
        want = np.zeros_like(pooled), np.zeros_like(floats)
        fresh = _pool_execution(_compile(m), value, *want)
        assert nn.ANeuralNetworksExecution_compute(fresh) == nn.ANEURALNETWORKS_NO_ERROR
        np.testing.assert_array_equal(pooled, want[0])
        np.testing.assert_array_equal(floats, want[1])
    assert True in used and used[-1] is False, used
