"""Control flow in the runtime: the logical steps of a COMPOUND plan that are not executed on a
device (runtime/ExecutionPlan.h ``IfStep``, ``WhileStep``, ``GotoStep``), the partitioner's
control-flow rules (runtime/ExecutionPlan.cpp ``getPerformance`` for IF/WHILE,
``isControlFlowOperationWithOperandOfUnknownSize``), and their interpretation at execution time
(``ExecutionPlan::nextCompound`` for IfStep / WhileStep / GotoStep).

Operands are named by ``(source model index, operand index)`` pairs: source model 0 is the main
model, the others are the referenced models in the order the partitioner reached them. At
execution an environment maps such pairs to values; an IfStep or WhileStep moves values between
the outer operation's operands and the branch, condition or body model operands.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from nnsim.errors import MissedDeadlineError, OpFailedError
from nnsim.platform import vlog
from nnsim.types import SCALAR_TYPES, OperandLifeTime, OperationCode, PreferenceCode

L = OperandLifeTime
IF_COND, IF_THEN, IF_ELSE, IF_FIRST_INPUT = 0, 1, 2, 3
WHILE_COND, WHILE_BODY, WHILE_FIRST_INPUT = 0, 1, 2
CONTROL_FLOW = (OperationCode.IF, OperationCode.WHILE)


def _pair(p) -> str:
    return f"({p[0]}, {p[1]})"


@dataclass
class IfStep:
    index: int
    condition: tuple = (0, 0)
    then_step: int = -1
    else_step: int = -1
    outer_inputs: list = field(default_factory=list)
    outer_outputs: list = field(default_factory=list)
    then_inputs: list = field(default_factory=list)
    then_outputs: list = field(default_factory=list)
    else_inputs: list = field(default_factory=list)
    else_outputs: list = field(default_factory=list)
    device = None

    def __str__(self) -> str:
        return f"Step#{self.index}: if {_pair(self.condition)} then={self.then_step} " \
               f"else={self.else_step}"


@dataclass
class WhileStep:
    index: int
    cond_step: int = -1
    body_step: int = -1
    exit_step: int = -1
    outer_inputs: list = field(default_factory=list)
    outer_outputs: list = field(default_factory=list)
    cond_inputs: list = field(default_factory=list)
    cond_output: tuple = (0, 0)
    body_inputs: list = field(default_factory=list)
    body_outputs: list = field(default_factory=list)
    device = None

    def __str__(self) -> str:
        return f"Step#{self.index}: while cond={self.cond_step} body={self.body_step} " \
               f"exit={self.exit_step}"


@dataclass
class GotoStep:
    index: int
    goto_step: int = -1
    device = None

    def __str__(self) -> str:
        return f"Step#{self.index}: goto {self.goto_step}"


# -- partitioning rules -------------------------------------------------------------------------
def referenced_model(model, op, k: int):
    return model.operands[op.inputs[k]].subgraph


def has_unknown_size(operand) -> bool:
    """``hasUnknownSize``: a tensor of unknown rank or with a zero dimension."""
    if not operand.dimensions:
        return operand.type not in SCALAR_TYPES
    return any(d == 0 for d in operand.dimensions)


def has_operand_of_unknown_size(model, op_index: int) -> bool:
    """``isControlFlowOperationWithOperandOfUnknownSize``: IF/WHILE whose outer operands or
    whose referenced models' inputs/outputs include one of unknown size (the 1.3 HAL and the
    partitioner do not support them: such an operation runs whole on the CPU device)."""
    op = model.operations[op_index]
    if op.type not in CONTROL_FLOW:
        return False
    first = (IF_THEN, IF_ELSE) if op.type == OperationCode.IF else (WHILE_COND, WHILE_BODY)
    if any(has_unknown_size(model.operands[i]) for i in op.inputs + op.outputs):
        return True
    for k in first:
        ref = referenced_model(model, op, k)
        if any(has_unknown_size(ref.operands[i]) for i in ref.input_indexes + ref.output_indexes):
            return True
    return False


def control_flow_performance(preference, device, model, op_index, operation_performance):
    """IF: ifPerformance + 0.5 * (then + else); WHILE: whilePerformance + cond + body, each
    model's value the float32 sum of ``operation_performance`` over its operations."""
    caps = device.capabilities()
    op = model.operations[op_index]

    def apply(p):
        return p.power_usage if preference == PreferenceCode.PREFER_LOW_POWER else p.exec_time

    def model_perf(ref):
        total = np.float32(0)
        for i in range(len(ref.operations)):
            total = np.float32(total + np.float32(operation_performance(preference, device,
                                                                        ref, i)))
        return total

    if op.type == OperationCode.IF:
        a, b = (model_perf(referenced_model(model, op, k)) for k in (IF_THEN, IF_ELSE))
        # float + 0.5 * (float + float): the product is double in C++, the result float
        return float(np.float32(float(np.float32(apply(caps.if_performance)))
                                + 0.5 * float(np.float32(a + b))))
    cond, body = (model_perf(referenced_model(model, op, k)) for k in (WHILE_COND, WHILE_BODY))
    return float(np.float32(np.float32(np.float32(apply(caps.while_performance)) + cond) + body))


# -- interpretation -------------------------------------------------------------------------------
class Interpreter:
    """The values of one compound execution and the IF/WHILE/GOTO state machine.

    ``env`` maps (source model, operand) to a value; constants and omitted operands are read
    from their model. ``next_index`` is the step to run next (``mNextStepIndex``).
    """

    EVALUATE_CONDITION, EVALUATE_BODY = "EVALUATE_CONDITION", "EVALUATE_BODY"

    def __init__(self, plan, loop_timeout_ns: int, log):
        self.plan, self.loop_timeout_ns, self.log = plan, loop_timeout_ns, log
        self.env: dict = {}
        self.next_index = 0
        self.while_state: dict = {}   # step index -> [stage, iteration, start ns]
        self.alias: dict = {}         # IF outer output -> the taken branch's output

    def value(self, key):
        while key in self.alias and key not in self.env:
            key = self.alias[key]
        m, o = key
        operand = self.plan.source_models[m].operands[o]
        if operand.is_constant:
            return operand.array()
        if operand.lifetime == L.NO_VALUE:
            return None
        if key not in self.env:
            raise OpFailedError(f"operand {_pair(key)} is read before it is written")
        return self.env[key]

    def _condition(self, key) -> bool:
        v = self.value(key)
        if v is None:
            raise OpFailedError(f"cannot read the condition operand {_pair(key)}")
        return bool(np.asarray(v).reshape(-1)[0])

    def _copy(self, sources, targets) -> None:
        values = [self.value(s) for s in sources]   # read all first: sources may be targets
        for t, v in zip(targets, values):
            self.env[t] = v

    def next_execution_step(self):
        """Advance over control-flow steps; return the next ExecutionStep, or None at the end."""
        steps = self.plan.steps
        while self.next_index < len(steps):
            step = steps[self.next_index]
            if isinstance(step, IfStep):
                self._if(step)
            elif isinstance(step, WhileStep):
                self._while(step)
            elif isinstance(step, GotoStep):
                self.log(f"next: {step}")
                self.next_index = step.goto_step
            else:
                self.next_index += 1
                return step
        return None

    def _if(self, step: IfStep) -> None:
        self.log(f"next: {step}")
        cond = self._condition(step.condition)
        self.next_index = step.then_step if cond else step.else_step
        ins, outs = (step.then_inputs, step.then_outputs) if cond else \
            (step.else_inputs, step.else_outputs)
        self._copy(step.outer_inputs, ins)
        # The IF's outputs are the taken branch's outputs (upstream points both at one buffer
        # with Controller::setOutput): later reads of an outer output follow this alias.
        for outer, inner in zip(step.outer_outputs, outs):
            self.env.pop(outer, None)
            self.alias[outer] = inner

    def _while(self, step: WhileStep) -> None:
        state = self.while_state.setdefault(step.index, [self.EVALUATE_CONDITION, -1, 0])
        if state[0] == self.EVALUATE_CONDITION:
            state[1] += 1
            self.log(f"next: {step}: iteration {state[1]}: evaluating condition")
            if state[1] == 0:
                state[2] = time.monotonic_ns()
            n_carried = len(step.body_outputs)
            sources = [outer if state[1] == 0 or i >= n_carried else step.body_outputs[i]
                       for i, outer in enumerate(step.outer_inputs)]
            self._copy(sources, step.cond_inputs)
            state[0] = self.EVALUATE_BODY
            self.next_index = step.cond_step
            return
        elapsed = time.monotonic_ns() - state[2]
        if elapsed > self.loop_timeout_ns:
            vlog.log_error("ExecutionPlan", f"WHILE loop timed out after "
                                            f"{elapsed // 1_000_000} ms")
            raise MissedDeadlineError("WHILE loop timed out")
        state[0] = self.EVALUATE_CONDITION
        if self._condition(step.cond_output):
            self.log(f"next: {step}: iteration {state[1]}: evaluating body")
            self._copy(step.cond_inputs, step.body_inputs)
            for o in step.body_outputs:   # this iteration writes them anew
                self.env.pop(o, None)
            self.next_index = step.body_step
        else:
            self.log(f"next: {step}: iteration {state[1]}: exiting loop")
            self._copy(step.cond_inputs[:len(step.outer_outputs)], step.outer_outputs)
            state[1] = -1
            self.next_index = step.exit_step
