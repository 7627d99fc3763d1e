"""The shared CPU executor (common/CpuExecutor.cpp): runs a finished model's operations in
run order on numpy arrays. Every device, simulated NPUs included, executes through it.
"""
from __future__ import annotations

import contextvars
import dataclasses
from typing import Sequence

import numpy as np

from nnsim.errors import BadDataError, NnapiError, OpFailedError
from nnsim.ops.base import ExecutionContext
from nnsim.ops.registry import lookup
from nnsim.runtime import vlog
from nnsim.types import LOOP_TIMEOUT_DEFAULT_NS, OperandLifeTime, OperationCode

L = OperandLifeTime
TAG = "CpuExecutor"

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


def run_model(model, inputs: Sequence[np.ndarray | None], *,
              declared_shapes: bool = True, prepare_only: bool = False) -> list[np.ndarray]:
    """Run ``model`` (finished ModelBuilder) on ``inputs`` (one per model input, None = omitted).

    Returns one array per model output with its actual shape. Raises OpFailedError when an
    operation cannot run (unsupported, shape mismatch, kernel failure). With
    ``declared_shapes=False`` output shapes are whatever each operation's prepare computes (the
    TFLite CPU path, whose tensor shapes follow the inputs as TFLite's Prepare does) instead of
    having to match the operands' declared dimensions. With ``prepare_only`` no operation
    executes: each output is a zero-strided stand-in of the shape its prepare computed, so the
    result gives the output shapes for inputs of these shapes (and constant values).
    """
    if len(inputs) != len(model.input_indexes):
        raise BadDataError(f"expected {len(model.input_indexes)} inputs, got {len(inputs)}")
    vlog.vlog(vlog.CPUEXE, TAG, f"CpuExecutor::run() with request({len(inputs)} inputs)")
    values: dict[int, object] = {}
    for k, index in enumerate(model.input_indexes):
        arr = inputs[k]
        if arr is not None:
            operand = model.operands[index]
            arr = np.asarray(arr)
            if arr.dtype != operand.dtype():
                arr = arr.view(operand.dtype()) if arr.dtype.itemsize == operand.dtype().itemsize \
                    else arr.astype(operand.dtype())
        values[index] = arr
    operands = model.operands
    compiled = model.compiled_inputs or [op.inputs for op in model.operations]
    for op_index, op in enumerate(model.operations):
        spec = lookup(op.type)
        if spec is None:
            raise OpFailedError(f"operation {_name(op.type)} is not implemented")
        ins = compiled[op_index]
        in_vals = []
        for i in ins:
            operand = operands[i]
            if operand.lifetime in (L.CONSTANT_COPY, L.CONSTANT_REFERENCE, L.POINTER):
                in_vals.append(operand.array())
            elif operand.lifetime == L.NO_VALUE:
                in_vals.append(None)
            elif operand.lifetime == L.SUBGRAPH:
                in_vals.append(operand.subgraph)  # IF/WHILE read their referenced models
            else:
                if i not in values:
                    raise OpFailedError(f"operand {i} read before it is written")
                in_vals.append(values[i])
        outs = [operands[o] for o in op.outputs]
        if not declared_shapes:
            outs = [dataclasses.replace(o, dimensions=()) for o in outs]
        ctx = ExecutionContext(op.type, [operands[i] for i in ins], in_vals, outs)
        try:
            spec.prepare(ctx)
            if prepare_only:
                ctx.outputs = [np.broadcast_to(np.zeros((), o.dtype()), shape)
                               for o, shape in zip(outs, ctx.output_shapes)]
            else:
                spec.execute(ctx)
        except NnapiError:
            raise
        except Exception as e:  # a kernel failure is an execution failure, not a crash
            raise OpFailedError(f"{_name(op.type)} (operation {op_index}) failed: "
                                f"{type(e).__name__}: {e}") from e
        for k, o in enumerate(op.outputs):
            if ctx.outputs[k] is None:
                raise OpFailedError(f"{_name(op.type)} did not produce output {k}")
            values[o] = ctx.outputs[k]
    vlog.vlog(vlog.CPUEXE, TAG, "Completed run normally")
    return [values[o] for o in model.output_indexes]


def _name(code: int) -> str:
    try:
        return OperationCode(code).name
    except ValueError:
        return str(code)
