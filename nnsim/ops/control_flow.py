"""IF and WHILE (feature level 4): control flow over referenced models.

Operand layout (common/types/include/ControlFlow.h):

* IF: input 0 the condition (TENSOR_BOOL8 [1]), 1 the then model, 2 the else model, then the
  branch inputs; outputs = the branch outputs.
* WHILE: input 0 the condition model, 1 the body model, then m input-output, k state-only and
  n input-only operands; m outputs. The condition model has m+k+n inputs and one TENSOR_BOOL8
  [1] output; the body model has m+k+n inputs and m+k outputs.

Validation mirrors ``validateIfOperation`` / ``validateWhileOperation`` of T13
common/types/src/Validation.cpp. Execution here is ``CpuExecutor::executeIfOperation`` /
``executeWhileOperation``: it runs when a whole model (or a step model) holding the operation
executes on a device; the partitioned path interprets IF/WHILE in the runtime instead
(nnsim.runtime.control_flow).
"""
from __future__ import annotations

import contextvars
import time

import numpy as np

from nnsim.errors import MissedDeadlineError
from nnsim.ops.base import OperationSpec, ValidationContext
from nnsim.platform import vlog
from nnsim.types import FL4, LOOP_TIMEOUT_DEFAULT_NS, OperandLifeTime, OperandType, OperationCode

IF_COND, IF_THEN, IF_ELSE, IF_FIRST_INPUT = 0, 1, 2, 3
WHILE_COND, WHILE_BODY, WHILE_FIRST_INPUT = 0, 1, 2
TAG = "CpuExecutor"


# -- validation ------------------------------------------------------------------------------------
def _referenced(ctx: ValidationContext, k: int, what: str):
    operand = ctx.input(k)
    if operand.type != OperandType.MODEL or operand.lifetime != OperandLifeTime.SUBGRAPH \
            or operand.subgraph is None:
        ctx.fail(f"Unexpected operand type: {operand.type} -- Operand is not a valid subgraph "
                 f"reference for {what}")
    return operand.subgraph


def _compatible(ctx, a, b, what: str) -> None:
    """Same type, rank and dimensions where both are known, scale, zeroPoint, extra params."""
    ok = a.type == b.type and a.scale == b.scale and a.zero_point == b.zero_point \
        and a.channel_quant == b.channel_quant
    if ok and a.dimensions and b.dimensions:
        ok = len(a.dimensions) == len(b.dimensions) and all(
            x == y or x == 0 or y == 0 for x, y in zip(a.dimensions, b.dimensions))
    if not ok:
        ctx.fail(f"incompatible operands for {what}: {_desc(a)} vs {_desc(b)}")


def _desc(o) -> str:
    return f"{OperandType(o.type).name}{list(o.dimensions)} scale {o.scale} zp {o.zero_point}"


def _check_condition(ctx, operand, what: str) -> None:
    if operand.type != OperandType.TENSOR_BOOL8 or tuple(operand.dimensions) != (1,):
        ctx.fail(f"{what} must be a TENSOR_BOOL8 singleton [1], got {_desc(operand)}")


def _io(model, inputs: bool, i: int):
    indexes = model.input_indexes if inputs else model.output_indexes
    return model.operands[indexes[i]]


def validate_if(ctx: ValidationContext) -> int:
    ctx.require(ctx.num_inputs >= 3, "IF must have at least 3 inputs")
    ctx.require(ctx.num_outputs >= 1, "IF must have at least 1 output")
    _check_condition(ctx, ctx.input(IF_COND), "IF condition operand")
    for k, name in ((IF_THEN, "IF then model"), (IF_ELSE, "IF else model")):
        branch = _referenced(ctx, k, name)
        n_in, n_out = len(branch.input_indexes), len(branch.output_indexes)
        ctx.require(ctx.num_inputs == IF_FIRST_INPUT + n_in,
                    f"{name} has {n_in} inputs but IF has {ctx.num_inputs - IF_FIRST_INPUT}")
        ctx.require(ctx.num_outputs == n_out,
                    f"{name} has {n_out} outputs but IF has {ctx.num_outputs}")
        for i in range(n_in):
            _compatible(ctx, _io(branch, True, i), ctx.input(IF_FIRST_INPUT + i),
                        f"{name} input {i}")
        for i in range(n_out):
            _compatible(ctx, _io(branch, False, i), ctx.output(i), f"{name} output {i}")
    return FL4


def validate_while(ctx: ValidationContext) -> int:
    ctx.require(ctx.num_inputs >= 3, "WHILE must have at least 3 inputs")
    ctx.require(ctx.num_outputs >= 1, "WHILE must have at least 1 output")
    n_outer = ctx.num_inputs - WHILE_FIRST_INPUT
    cond = _referenced(ctx, WHILE_COND, "WHILE condition model")
    ctx.require(len(cond.input_indexes) == n_outer,
                f"WHILE condition model has {len(cond.input_indexes)} inputs, expected {n_outer}")
    ctx.require(len(cond.output_indexes) == 1, "WHILE condition model must have 1 output")
    for i in range(n_outer):
        _compatible(ctx, _io(cond, True, i), ctx.input(WHILE_FIRST_INPUT + i),
                    f"WHILE condition model input {i}")
    _check_condition(ctx, _io(cond, False, 0), "WHILE condition model output")
    body = _referenced(ctx, WHILE_BODY, "WHILE body model")
    n_in, n_out = len(body.input_indexes), len(body.output_indexes)
    ctx.require(n_in == n_outer, f"WHILE body model has {n_in} inputs, expected {n_outer}")
    ctx.require(n_out >= ctx.num_outputs,
                f"WHILE body model has {n_out} outputs, fewer than the {ctx.num_outputs} of WHILE")
    ctx.require(n_in >= n_out, "WHILE body model has more outputs than inputs")
    for i in range(n_in):
        _compatible(ctx, _io(body, True, i), ctx.input(WHILE_FIRST_INPUT + i),
                    f"WHILE body model input {i}")
    for i in range(ctx.num_outputs):
        _compatible(ctx, _io(body, False, i), ctx.output(i), f"WHILE body model output {i}")
    for i in range(n_out):   # loop-carried: what the body writes it reads next iteration
        _compatible(ctx, _io(body, True, i), _io(body, False, i),
                    f"WHILE body model input/output {i}")
    return FL4


# The WHILE loop timeout of the execution being computed (``setLoopTimeout``; the HAL passes it
# with each request). A context variable, so concurrent executions in threads keep their own.
_LOOP_TIMEOUT_NS = contextvars.ContextVar("nnsim_loop_timeout_ns",
                                          default=LOOP_TIMEOUT_DEFAULT_NS)


def loop_timeout_ns() -> int:
    return _LOOP_TIMEOUT_NS.get()


def set_loop_timeout_ns(duration_ns: int):
    """Set the loop timeout for this thread's executions; returns a token for ``reset``."""
    return _LOOP_TIMEOUT_NS.set(int(duration_ns))


def reset_loop_timeout_ns(token) -> None:
    _LOOP_TIMEOUT_NS.reset(token)


# -- execution on a device (CpuExecutor) -------------------------------------------------
def _condition_value(value) -> bool:
    return bool(np.asarray(value).reshape(-1)[0])




def prepare_nothing(ctx) -> None:
    """Output shapes come from the branch or body that runs (dynamic across iterations)."""


def _set_outputs(ctx, values) -> None:
    for i, value in enumerate(values):
        value = np.asarray(value)
        ctx.set_output_shape(i, value.shape)
        ctx.set_output(i, value)


def execute_if(ctx) -> None:
    cond = _condition_value(ctx.input(IF_COND))
    vlog.vlog(vlog.CPUEXE, TAG, f"CpuExecutor::executeIfOperation: condition value: {int(cond)}")
    branch = ctx.input(IF_THEN if cond else IF_ELSE)
    _set_outputs(ctx, ctx.run_referenced_model(branch, [ctx.input(i) for i in range(IF_FIRST_INPUT,
                                                                  ctx.num_inputs)]))


def execute_while(ctx) -> None:
    cond_model, body_model = ctx.input(WHILE_COND), ctx.input(WHILE_BODY)
    values = [ctx.input(i) for i in range(WHILE_FIRST_INPUT, ctx.num_inputs)]
    n_carried = len(body_model.output_indexes)
    timeout, start = loop_timeout_ns(), time.monotonic_ns()
    iteration = 0
    while True:
        vlog.vlog(vlog.CPUEXE, TAG, f"CpuExecutor::executeWhileOperation: iteration {iteration}")
        cond = _condition_value(ctx.run_referenced_model(cond_model, values)[0])
        vlog.vlog(vlog.CPUEXE, TAG,
                  f"CpuExecutor::executeWhileOperation: condition value: {int(cond)}")
        if not cond:
            break
        elapsed = time.monotonic_ns() - start
        if elapsed > timeout:
            vlog.log_error(TAG, f"CpuExecutor::executeWhileOperation: timed out after "
                                f"{elapsed // 1_000_000} ms")
            raise MissedDeadlineError("WHILE loop timed out")
        # body outputs replace the loop-carried values; input-only values stay
        values = list(ctx.run_referenced_model(body_model, values)) + values[n_carried:]
        iteration += 1
    _set_outputs(ctx, values[:ctx.num_outputs])


IF = OperationSpec(OperationCode.IF, validate_if, prepare_nothing, execute_if)
WHILE = OperationSpec(OperationCode.WHILE, validate_while, prepare_nothing, execute_while)
