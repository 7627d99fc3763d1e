"""Hand-built IF/WHILE models through the C-shaped API (nnsim.nnapi), shared by the control-flow
tests. Every call must succeed: ``Builder`` raises AssertionError naming the call otherwise.

Expected values in the tests are computed by hand from the loop definitions in the docstrings.
"""
from __future__ import annotations

import numpy as np

from nnsim import nnapi as nn

OK = nn.ANEURALNETWORKS_NO_ERROR
OT = nn.ANeuralNetworksOperandType
BOOL1 = OT(nn.ANEURALNETWORKS_TENSOR_BOOL8, (1,))
I1 = OT(nn.ANEURALNETWORKS_TENSOR_INT32, (1,))
F2 = OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (2,))
SCALAR_I32 = OT(nn.ANEURALNETWORKS_INT32)
MODEL = OT(nn.ANEURALNETWORKS_MODEL)


def ok(result, what: str):
    code = result[0] if isinstance(result, tuple) else result
    assert code == OK, f"{what} returned {code}"
    return result[1] if isinstance(result, tuple) else None


class Builder:
    """A model under construction; ``op`` adds an operation and returns its output operands."""

    def __init__(self):
        self.m = ok(nn.ANeuralNetworksModel_create(), "Model_create")
        self.count = 0

    def operand(self, t) -> int:
        ok(nn.ANeuralNetworksModel_addOperand(self.m, t), "addOperand")
        self.count += 1
        return self.count - 1

    def const(self, t, value) -> int:
        i = self.operand(t)
        ok(nn.ANeuralNetworksModel_setOperandValue(self.m, i, value), "setOperandValue")
        return i

    def fuse_none(self) -> int:
        return self.const(SCALAR_I32, np.array(0, np.int32))

    def ref(self, model) -> int:
        i = self.operand(MODEL)
        ok(nn.ANeuralNetworksModel_setOperandValueFromModel(self.m, i, model),
           "setOperandValueFromModel")
        return i

    def op(self, code, inputs, out_types) -> list[int]:
        outs = [self.operand(t) for t in out_types]
        ok(nn.ANeuralNetworksModel_addOperation(self.m, code, inputs, outs), f"addOperation {code}")
        return outs

    def binary(self, code, a, b, t) -> int:
        return self.op(code, [a, b, self.fuse_none()], [t])[0]

    def finish(self, inputs, outputs):
        ok(nn.ANeuralNetworksModel_identifyInputsAndOutputs(self.m, inputs, outputs),
           "identifyInputsAndOutputs")
        ok(nn.ANeuralNetworksModel_finish(self.m), "Model_finish")
        return self.m


def branch_model(code, t=F2):
    """z = x <code> y (ADD or MUL, fuse NONE)."""
    b = Builder()
    x, y = b.operand(t), b.operand(t)
    z = b.binary(code, x, y, t)
    return b.finish([x, y], [z])


def if_model(t=F2):
    """z = IF(cond, then: x + y, else: x * y); inputs cond, x, y."""
    b = Builder()
    cond, x, y = b.operand(BOOL1), b.operand(t), b.operand(t)
    then_ref = b.ref(branch_model(nn.ANEURALNETWORKS_ADD, t))
    else_ref = b.ref(branch_model(nn.ANEURALNETWORKS_MUL, t))
    (z,) = b.op(nn.ANEURALNETWORKS_IF, [cond, then_ref, else_ref, x, y], [t])
    return b.finish([cond, x, y], [z])


def factorial_cond():
    """(acc, i, n) -> i <= n."""
    b = Builder()
    acc, i, n = b.operand(I1), b.operand(I1), b.operand(I1)
    (out,) = b.op(nn.ANEURALNETWORKS_LESS_EQUAL, [i, n], [BOOL1])
    return b.finish([acc, i, n], [out])


def factorial_body():
    """(acc, i, n) -> (acc * i, i + 1)."""
    b = Builder()
    acc, i, n = b.operand(I1), b.operand(I1), b.operand(I1)
    one = b.const(I1, np.array([1], np.int32))
    acc_out = b.binary(nn.ANEURALNETWORKS_MUL, acc, i, I1)
    i_out = b.binary(nn.ANEURALNETWORKS_ADD, i, one, I1)
    return b.finish([acc, i, n], [acc_out, i_out])


def factorial_model():
    """n! : acc = 1; i = 1; while i <= n: acc *= i; i += 1. Input n, output acc.

    WHILE inputs: acc (input-output), i (state only), n (input only)."""
    b = Builder()
    n = b.operand(I1)
    acc0 = b.const(I1, np.array([1], np.int32))
    i0 = b.const(I1, np.array([1], np.int32))
    cond, body = b.ref(factorial_cond()), b.ref(factorial_body())
    (acc,) = b.op(nn.ANEURALNETWORKS_WHILE, [cond, body, acc0, i0, n], [I1])
    return b.finish([n], [acc])


def fibonacci_model():
    """(a, b) = (0, 1); k = 0; while k < n: (a, b) = (b, a + b); k += 1. Input n; outputs a, k.

    Float32 state [a, b] is one TENSOR_FLOAT32 [2] updated by FULLY_CONNECTED with the matrix
    [[0, 1], [1, 1]] (as AOSP's while_fib), here with a batch of 1: shape [1, 2]."""
    state_t = OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (1, 2))
    c = Builder()
    s, k, n = c.operand(state_t), c.operand(I1), c.operand(I1)
    (less,) = c.op(nn.ANEURALNETWORKS_LESS, [k, n], [BOOL1])
    cond = c.finish([s, k, n], [less])
    bb = Builder()
    s, k, n = bb.operand(state_t), bb.operand(I1), bb.operand(I1)
    weights = bb.const(OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (2, 2)),
                       np.array([[0, 1], [1, 1]], np.float32))
    bias = bb.const(OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (2,)), np.zeros(2, np.float32))
    (s_out,) = bb.op(nn.ANEURALNETWORKS_FULLY_CONNECTED, [s, weights, bias, bb.fuse_none()],
                     [state_t])
    one = bb.const(I1, np.array([1], np.int32))
    k_out = bb.binary(nn.ANEURALNETWORKS_ADD, k, one, I1)
    body = bb.finish([s, k, n], [s_out, k_out])
    b = Builder()
    n = b.operand(I1)
    s0 = b.const(state_t, np.array([[0, 1]], np.float32))
    k0 = b.const(I1, np.array([0], np.int32))
    s_final, k_final = b.op(nn.ANEURALNETWORKS_WHILE, [b.ref(cond), b.ref(body), s0, k0, n],
                            [state_t, I1])
    return b.finish([n], [s_final, k_final])


def nested_model():
    """acc = 0; i = 0; while i < n: acc = IF(i < 3, acc + 1, acc * 2); i += 1.

    The IF sits in the WHILE body; its branches read acc and a constant."""
    def step(code, value):
        b = Builder()
        acc = b.operand(I1)
        c = b.const(I1, np.array([value], np.int32))
        return b.finish([acc], [b.binary(code, acc, c, I1)])
    c = Builder()
    acc, i, n = c.operand(I1), c.operand(I1), c.operand(I1)
    (less,) = c.op(nn.ANEURALNETWORKS_LESS, [i, n], [BOOL1])
    cond = c.finish([acc, i, n], [less])
    bb = Builder()
    acc, i, n = bb.operand(I1), bb.operand(I1), bb.operand(I1)
    three = bb.const(I1, np.array([3], np.int32))
    (small,) = bb.op(nn.ANEURALNETWORKS_LESS, [i, three], [BOOL1])
    (acc_out,) = bb.op(nn.ANEURALNETWORKS_IF,
                       [small, bb.ref(step(nn.ANEURALNETWORKS_ADD, 1)),
                        bb.ref(step(nn.ANEURALNETWORKS_MUL, 2)), acc], [I1])
    one = bb.const(I1, np.array([1], np.int32))
    i_out = bb.binary(nn.ANEURALNETWORKS_ADD, i, one, I1)
    body = bb.finish([acc, i, n], [acc_out, i_out])
    b = Builder()
    n = b.operand(I1)
    acc0 = b.const(I1, np.array([0], np.int32))
    i0 = b.const(I1, np.array([0], np.int32))
    (acc_final,) = b.op(nn.ANEURALNETWORKS_WHILE, [b.ref(cond), b.ref(body), acc0, i0, n], [I1])
    return b.finish([n], [acc_final])


def infinite_loop_model():
    """while true-ish: i < n with body i = i + 0 never ends; input n, output i."""
    c = Builder()
    i, n = c.operand(I1), c.operand(I1)
    (less,) = c.op(nn.ANEURALNETWORKS_LESS, [i, n], [BOOL1])
    cond = c.finish([i, n], [less])
    bb = Builder()
    i, n = bb.operand(I1), bb.operand(I1)
    zero = bb.const(I1, np.array([0], np.int32))
    body = bb.finish([i, n], [bb.binary(nn.ANEURALNETWORKS_ADD, i, zero, I1)])
    b = Builder()
    n = b.operand(I1)
    i0 = b.const(I1, np.array([0], np.int32))
    (out,) = b.op(nn.ANEURALNETWORKS_WHILE, [b.ref(cond), b.ref(body), i0, n], [I1])
    return b.finish([n], [out])


def run(model, inputs, output_templates, devices=None, loop_timeout_ns=None,
        expect=OK):
    """Compile (all devices, or ``createForDevices``), execute; returns (code, outputs)."""
    if devices is None:
        comp = ok(nn.ANeuralNetworksCompilation_create(model), "Compilation_create")
    else:
        comp = ok(nn.ANeuralNetworksCompilation_createForDevices(model, devices),
                  "Compilation_createForDevices")
    ok(nn.ANeuralNetworksCompilation_finish(comp), "Compilation_finish")
    ex = ok(nn.ANeuralNetworksExecution_create(comp), "Execution_create")
    if loop_timeout_ns is not None:
        ok(nn.ANeuralNetworksExecution_setLoopTimeout(ex, loop_timeout_ns), "setLoopTimeout")
    for k, value in enumerate(inputs):
        ok(nn.ANeuralNetworksExecution_setInput(ex, k, None, value), f"setInput {k}")
    outs = [np.zeros_like(t) for t in output_templates]
    for k, out in enumerate(outs):
        ok(nn.ANeuralNetworksExecution_setOutput(ex, k, None, out), f"setOutput {k}")
    code = nn.ANeuralNetworksExecution_compute(ex)
    return code, outs, comp
