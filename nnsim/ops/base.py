"""OperationSpec and the contexts an operation sees (mirrors AOSP's OperationResolver).

An operation module provides three functions:

``validate(ctx: ValidationContext) -> FeatureLevel``
    Runs at addOperation and at Model_finish. Sees operand types, shapes and constant operands
    only. Raises :class:`OperationValidationError` (BAD_DATA) naming the operation, the operand
    and what was expected; returns the minimum feature level of this concrete use.
``prepare(ctx: ExecutionContext) -> None``
    Computes output shapes (``ctx.set_output_shape``) from the actual input shapes.
``execute(ctx: ExecutionContext) -> None``
    Dispatches on the operand type into ``nnsim.kernels`` and stores outputs with
    ``ctx.set_output``. Runs "blindly": everything that can be checked was checked before.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from nnsim.kernels._common import nothing
from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.common.operand import Operand
from nnsim.types import FL1, FL3, FL4, OperandLifeTime, OperandType, OperationCode

T = OperandType


@dataclass(frozen=True)
class OperationSpec:
    code: OperationCode
    validate: Callable
    prepare: Callable
    execute: Callable
    allow_omitted_operand: bool = False
    allow_zero_sized_input: bool = False
    # ``plan(ctx) -> runner``, optional: called after ``prepare`` on a prepared model's
    # executor state; ``runner(in_values) -> [outputs]`` then runs the operation for inputs of
    # the same shapes (constants unchanged) at every later execution, without prepare. It does
    # the Prepare-time work once (packed filters, multipliers, output buffers it may reuse).
    plan: Callable | None = None


class OperationView:
    """One operation over its model's operands: the one vocabulary validation
    (:class:`ValidationContext`), the simulated drivers' support rules and ``explain`` read an
    operation with. Positions past the operation's inputs read as absent (type -1, not
    constant, no value), so a rule may ask about an optional trailing input directly."""

    def __init__(self, operands: Sequence[Operand], code: int, inputs: Sequence[int],
                 outputs: Sequence[int], op_index: int | None = None):
        self._operands = operands
        try:
            self.code = OperationCode(code)
        except ValueError:   # an extension or OEM code: kept as the number
            self.code = int(code)
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.op_index = op_index

    @classmethod
    def of_model(cls, model, index: int) -> "OperationView":
        """Operation ``index`` of a finished model, as the HAL receives it (trailing default
        arguments removed, as ``removeTrailingArgumentsWithDefaultValues`` does)."""
        op = model.operations[index]
        compiled = model.compiled_inputs
        inputs = compiled[index] if compiled else op.inputs
        view = cls(model.operands, op.type, inputs, op.outputs, index)
        view.operation = op
        return view

    # -- introspection ---------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.code.name if isinstance(self.code, OperationCode) else str(self.code)

    @property
    def num_inputs(self) -> int:
        return len(self.inputs)

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    def input(self, i: int) -> Operand:
        return self._operands[self.inputs[i]]

    def output(self, i: int) -> Operand:
        return self._operands[self.outputs[i]]

    def input_type(self, i: int) -> int:
        return self.input(i).type if i < len(self.inputs) else -1

    def output_type(self, i: int) -> int:
        return self.output(i).type

    def input_shape(self, i: int) -> tuple:
        return tuple(self.input(i).dimensions)

    def input_rank(self, i: int) -> int:
        return len(self.input(i).dimensions)

    def is_omitted(self, i: int) -> bool:
        return self.input(i).lifetime == OperandLifeTime.NO_VALUE

    def is_constant(self, i: int) -> bool:
        return i < len(self.inputs) and self.input(i).is_constant

    def constant(self, i: int):
        """Constant value of input ``i`` (scalar or array), None if not a constant."""
        return self.input(i).array() if self.is_constant(i) else None


class ValidationContext(OperationView):
    """Read-only view of one operation of a model being built or finished, with the checks
    an operation's ``validate`` raises through."""

    # -- failure -----------------------------------------------------------------------------
    def fail(self, message: str):
        where = f" (operation {self.op_index})" if self.op_index is not None else ""
        raise OperationValidationError(f"Invalid Operation: {self.name}{where}: {message}")

    def require(self, cond: bool, message: str) -> None:
        if not cond:
            self.fail(message)

    # -- common checks -------------------------------------------------------------------------
    def check_counts(self, inputs, outputs) -> None:
        """``inputs``/``outputs``: an int or a collection of allowed counts."""
        ins = (inputs,) if isinstance(inputs, int) else tuple(inputs)
        outs = (outputs,) if isinstance(outputs, int) else tuple(outputs)
        self.require(self.num_inputs in ins,
                     f"expected {' or '.join(map(str, ins))} inputs, got {self.num_inputs}")
        self.require(self.num_outputs in outs,
                     f"expected {' or '.join(map(str, outs))} outputs, got {self.num_outputs}")

    def check_input_types(self, expected: Sequence[int], start: int = 0) -> None:
        for k, want in enumerate(expected):
            i = start + k
            got = self.input_type(i)
            if got != want:
                self.fail(f"input {i} (operand {self.inputs[i]}) has type {_tname(got)}, "
                          f"expected {_tname(want)}")

    def check_output_types(self, expected: Sequence[int]) -> None:
        for i, want in enumerate(expected):
            got = self.output_type(i)
            if got != want:
                self.fail(f"output {i} (operand {self.outputs[i]}) has type {_tname(got)}, "
                          f"expected {_tname(want)}")

    def check_input_type_in(self, i: int, allowed) -> int:
        t = self.input_type(i)
        if t not in allowed:
            self.fail(f"input {i} (operand {self.inputs[i]}) has unsupported type {_tname(t)}; "
                      f"expected one of {', '.join(_tname(a) for a in allowed)}")
        return t

    def check_rank(self, i: int, ranks, *, output: bool = False) -> None:
        """Rank must be in ``ranks`` when known (rank 0 on a tensor = unknown rank)."""
        opnd = self.output(i) if output else self.input(i)
        r = len(opnd.dimensions)
        if r == 0:
            return
        allowed = (ranks,) if isinstance(ranks, int) else tuple(ranks)
        if r not in allowed:
            what = "output" if output else "input"
            self.fail(f"{what} {i} has rank {r}, expected rank {' or '.join(map(str, allowed))}")

    def same_quant(self, a: Operand, b: Operand) -> bool:
        return a.scale == b.scale and a.zero_point == b.zero_point


def _tname(t: int) -> str:
    try:
        return OperandType(t).name
    except ValueError:
        return str(t)


# Feature level by tensor type for "simple" ops (float32/quant8 FL1, float16 FL3, signed FL4).
def type_feature_level(t: int, quant8_fl=FL1) -> int:
    if t == T.TENSOR_FLOAT32:
        return FL1
    if t == T.TENSOR_QUANT8_ASYMM:
        return quant8_fl
    if t == T.TENSOR_QUANT8_ASYMM_SIGNED:
        return FL4
    if t == T.TENSOR_INT32:
        return FL4
    return FL3


class ExecutionContext:
    """Inputs and outputs of one operation during execution on the CPU executor."""

    def __init__(self, code: int, in_operands: Sequence[Operand], in_values: Sequence,
                 out_operands: Sequence[Operand], run_model=None):
        self.code = OperationCode(code)
        # the executor running this operation, for IF/WHILE's referenced models; passed in
        # because the executor sits above the operation specs it dispatches to
        self._run_model = run_model
        self._in_ops = in_operands
        self._in_vals = in_values
        self._out_ops = out_operands
        self.output_shapes: list = [tuple(o.dimensions) for o in out_operands]
        self.outputs: list = [None] * len(out_operands)

    @property
    def num_inputs(self) -> int:
        return len(self._in_ops)

    @property
    def num_outputs(self) -> int:
        return len(self._out_ops)

    def input(self, i: int):
        """Input ``i`` as a typed, shaped ndarray (scalars as numpy scalars); None if omitted."""
        if i >= len(self._in_vals):
            return None
        return self._in_vals[i]

    def run_referenced_model(self, model, inputs: Sequence) -> list:
        """Run a referenced model (an IF branch, a WHILE condition or body) on the executor
        that runs this operation; returns its outputs."""
        if self._run_model is None:
            raise OpFailedError(f"{self.code.name}: no executor to run a referenced model")
        return self._run_model(model, inputs)

    def has_input(self, i: int) -> bool:
        return i < len(self._in_vals) and self._in_vals[i] is not None

    def scalar(self, i: int, default=None):
        v = self.input(i)
        if v is None:
            return default
        return v.item() if isinstance(v, np.ndarray) or isinstance(v, np.generic) else v

    def input_operand(self, i: int) -> Operand:
        return self._in_ops[i]

    def output_operand(self, i: int) -> Operand:
        return self._out_ops[i]

    def input_shape(self, i: int) -> tuple:
        v = self.input(i)
        return tuple(v.shape) if v is not None else ()

    def set_output_shape(self, i: int, shape) -> None:
        shape = tuple(int(d) for d in shape)
        declared = self._out_ops[i].dimensions
        if declared:
            if len(declared) != len(shape) or any(d and d != s for d, s in zip(declared, shape)):
                raise OpFailedError(
                    f"{self.code.name}: output {i} shape {shape} does not match the declared "
                    f"dimensions {declared}")
        self.output_shapes[i] = shape

    def set_output(self, i: int, value: np.ndarray) -> None:
        want = self._out_ops[i].dtype()
        arr = np.asarray(value)
        if arr.dtype != want:
            arr = arr.astype(want)
        self.outputs[i] = arr.reshape(self.output_shapes[i]) if self.output_shapes[i] else arr


def context_runner(spec: OperationSpec, ctx: ExecutionContext) -> Callable:
    """A ``plan`` runner that prepares and executes ``spec`` afresh at each call: for the inputs
    an operation's plan does not cover (a zero-sized batch, a weight computed at run time)."""
    code, in_ops, out_ops = ctx.code, ctx._in_ops, ctx._out_ops

    def run(values):
        c = ExecutionContext(code, in_ops, values, out_ops)
        spec.prepare(c)
        spec.execute(c)
        return c.outputs
    return run


def reshape_plan(spec: OperationSpec, ctx: ExecutionContext) -> Callable:
    """A ``plan`` for operations that only give input 0 a new shape (RESHAPE, SQUEEZE,
    EXPAND_DIMS): the output is a view of the input, the same view object while the input is
    the same array. Only when every other input is constant; otherwise the shape may depend
    on values (a reshape target given at execution) and :func:`context_runner` is used."""
    if not all(ctx.input_operand(i).is_constant for i in range(1, ctx.num_inputs)):
        return context_runner(spec, ctx)
    shape = ctx.output_shapes[0]
    last: list = [None, None]

    def run(values):
        x = values[0]
        if x is not last[0]:
            last[0], last[1] = x, [x.reshape(shape)]
        return last[1]
    # in an executor chain: nothing to call while the input is the same array (the view
    # follows its contents), so no Python call between the compiled stretches around it
    run.bound_call = lambda values: nothing if values[0] is last[0] else None
    return run

