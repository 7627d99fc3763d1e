"""The shared CPU executor (common/CpuExecutor.cpp): runs a finished model's operations in
run order on numpy arrays. Every device, simulated NPUs included, executes through it.
"""
from __future__ import annotations

import dataclasses
from functools import partial
from typing import Callable, Sequence

import numpy as np

from nnsim.errors import BadDataError, NnapiError, OpFailedError
from nnsim.kernels.gemm import float_window, gemm_channels
from nnsim.kernels.program import Program
from nnsim.kernels.threads import get_num_threads
from nnsim.ops.arena import share
from nnsim.ops.base import ExecutionContext
from nnsim.ops.conv_2d import parse_args as conv_parse_args
from nnsim.ops.depthwise_conv_2d import parse_args as dw_parse_args
from nnsim.ops.registry import lookup
from nnsim.platform import vlog
from nnsim.types import OperandLifeTime, OperandType, OperationCode

L = OperandLifeTime
TAG = "CpuExecutor"

class ExecutorState:
    """What the CPU executor keeps for one prepared model across its executions (the work
    ``prepareModel`` does once on a driver: constants decoded, and per operation the plan its
    spec builds for the input shapes seen: filters packed, multipliers, output buffers).

    One state serves one execution at a time; :class:`ExecutorStatePool` hands them out so
    that concurrent executions of the same prepared model never share buffers.
    """

    def __init__(self, model):
        self.model = model
        self.constants: dict[int, object] = {}
        # per operation with a plan: (input key, runner, input values of its last run)
        self.plans: list = [None] * len(model.operations)
        self._steps: list | None = None
        self.arena = None   # the intermediate values' shared buffers (nnsim.ops.arena)
        self.shared = False   # whether the first execution has placed them
        self.chain: _Chain | None = None   # the executions' fixed sequence of plan calls
        self.last_results: list | None = None   # each operation's outputs at the last one

    @property
    def steps(self) -> list["_Step"]:
        if self._steps is None:
            self._steps = [_Step(self, k, op) for k, op in enumerate(self.model.operations)]
        return self._steps

    def constant(self, index: int):
        try:
            return self.constants[index]
        except KeyError:
            value = self.constants[index] = self.model.operands[index].array()
            return value


class ExecutorStatePool:
    """Free :class:`ExecutorState` objects of one prepared model: each :meth:`run` takes one
    (or makes one, when concurrent executions hold the others) and gives it back."""

    def __init__(self, model):
        self.model = model
        self._free: list[ExecutorState] = []

    def run(self, inputs, **kwargs) -> list[np.ndarray]:
        """:func:`run_model` with a state of this pool."""
        # a list's pop and append are atomic: two threads never get the same state
        try:
            state = self._free.pop()
        except IndexError:
            state = ExecutorState(self.model)
        try:
            return run_model(self.model, inputs, state=state, **kwargs)
        finally:
            self._free.append(state)


class _Step:
    """One operation of a state's model with what does not change between executions: its
    spec, operands, constant input values, and where its other inputs come from."""

    def __init__(self, state: ExecutorState, op_index: int, op):
        model = state.model
        self.op_index, self.op = op_index, op
        self.spec = lookup(op.type)
        ins = (model.compiled_inputs or [o.inputs for o in model.operations])[op_index]
        self.in_operands = [model.operands[i] for i in ins]
        self.out_operands = [model.operands[o] for o in op.outputs]
        self.template: list = []      # constant values in place, None elsewhere
        self.dynamic: list = []       # (position, operand index) read from this run's values
        self.constant_mask: list = []
        for pos, (i, operand) in enumerate(zip(ins, self.in_operands)):
            lifetime = operand.lifetime
            constant = lifetime in (L.CONSTANT_COPY, L.CONSTANT_REFERENCE, L.POINTER)
            self.constant_mask.append(constant)
            if constant:
                self.template.append(state.constant(i))
            elif lifetime == L.SUBGRAPH:
                self.template.append(operand.subgraph)
            else:
                self.template.append(None)
                if lifetime != L.NO_VALUE:
                    self.dynamic.append((pos, i))


def _input_key(values, constant_mask) -> tuple:
    """What a plan depends on besides constants: the shape of each non-constant tensor input
    and the value of each non-constant scalar (a scalar given as a model input)."""
    key = []
    for v, const in zip(values, constant_mask):
        if const or v is None:
            key.append(None)
        elif isinstance(v, np.ndarray) and v.ndim:
            key.append(v.shape)
        elif isinstance(v, (np.ndarray, np.generic)):
            key.append(("scalar", v.item()))
        else:
            key.append(id(v))
    return tuple(key)


def run_model(model, inputs: Sequence[np.ndarray | None], *,
              declared_shapes: bool = True, prepare_only: bool = False,
              state: ExecutorState | None = None, log: bool = True) -> list[np.ndarray]:
    """Run ``model`` (finished ModelBuilder) on ``inputs`` (one per model input, None = omitted).

    Returns one array per model output with its actual shape. Raises OpFailedError when an
    operation cannot run (unsupported, shape mismatch, kernel failure). With
    ``declared_shapes=False`` output shapes are whatever each operation's prepare computes (the
    TFLite CPU path, whose tensor shapes follow the inputs as TFLite's Prepare does) instead of
    having to match the operands' declared dimensions. With ``prepare_only`` no operation
    executes: each output is a zero-strided stand-in of the shape its prepare computed, so the
    result gives the output shapes for inputs of these shapes (and constant values).

    With a ``state`` (a prepared model's, see :class:`ExecutorState`), an operation whose spec
    has a ``plan`` runs the plan built at its first execution for the same input shapes,
    skipping prepare, as a driver's prepared model does; returned outputs are then copies,
    since plans reuse their buffers at the next execution.

    ``log=False`` leaves out the ``CpuExecutor`` vlog lines: a simulated NPU computes its
    results here, but on a board its driver, not the runtime's CpuExecutor, runs the model.
    """
    if len(inputs) != len(model.input_indexes):
        raise BadDataError(f"expected {len(model.input_indexes)} inputs, got {len(inputs)}")
    if log:
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
    if state is not None and declared_shapes and not prepare_only:
        return _run_planned(model, values, state, log)
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
        ctx = ExecutionContext(op.type, [operands[i] for i in ins], in_vals, outs,
                               run_model=run_model)
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
    if log:
        vlog.vlog(vlog.CPUEXE, TAG, "Completed run normally")
    return [values[o] for o in model.output_indexes]


class _Chain:
    """A prepared model's operations as one sequence of plan calls over fixed buffers, made
    after an execution in which every operation ran a plan that returned its output list of
    the execution before (the plans' own buffers): the next executions with model inputs of
    the same shapes (and scalar values) and the same thread count run the sequence, giving
    the runners that read model inputs the new ones, without the per-operation checks of
    :func:`_run_planned` (TFLite's interpreter and a driver's prepared model run their steps
    the same way). An operation whose runner has its kernel call bound to these buffers
    (``runner.bound_call``) runs that call, in a compiled stretch of the chain's
    :class:`~nnsim.kernels.program.Program`; the others run their runner. A runner that
    returns another list than before (its plan could not bind the new input) ends the chain
    there: the remaining operations run as usual and the chain is made again."""

    def __init__(self, model, state: ExecutorState, values: dict, results: list):
        inputs = set(model.input_indexes)
        self.key = _model_input_key(model, values)
        self.threads = get_num_threads()
        self.values = values   # the intermediate arrays stay the plans' buffers
        # the model input arrays of this execution: while the next ones are the same arrays
        # (the delegate's bound TFLite tensors), the operations reading them run their bound
        # kernel calls too (``fixed``), without a Python call each
        self.inputs = tuple((i, values.get(i)) for i in model.input_indexes)
        self.calls, fixed = [], []
        for n, (step, result) in enumerate(zip(state.steps, results)):
            run, args = state.plans[step.op_index][1:3]
            slots = tuple((pos, i) for pos, i in step.dynamic if i in inputs)
            bound_call = getattr(run, "bound_call", None)
            call = None if slots or bound_call is None else bound_call(args)
            if call is None:
                call = partial(_checked, run, args, slots, result, n, values, step.op.type)
            self.calls.append(call)
            bound = (bound_call(args) if slots and bound_call is not None
                     and all(args[pos] is values.get(i) for pos, i in slots) else None)
            fixed.append(call if bound is None else bound)
        self.program = Program(self.calls)
        self.fixed = None if fixed == self.calls else Program(fixed)

    def program_for(self, values: dict) -> Program:
        """The program to run on the model inputs in ``values``: :attr:`fixed` when they
        are the arrays the chain was made with."""
        if self.fixed is not None and all(values.get(i) is a for i, a in self.inputs):
            return self.fixed
        return self.program


class _Diverged(Exception):
    """A chained runner returned other outputs than before (``got``, operation ``n``)."""

    def __init__(self, n: int, got: list):
        super().__init__(n)
        self.n, self.got = n, got


def _checked(run, args, slots, result, n, values, op_type):
    """Operation ``n`` of a chain through its runner: its model inputs from ``values``; raises
    :class:`_Diverged` when the runner returns another list than ``result``."""
    for pos, i in slots:
        args[pos] = values[i]
    try:
        got = run(args)
    except NnapiError:
        raise
    except Exception as e:  # as in _run_planned: an execution failure, not a crash
        raise OpFailedError(f"{_name(op_type)} (operation {n}) failed: "
                            f"{type(e).__name__}: {e}") from e
    if got is not result:
        raise _Diverged(n, got)


def _model_input_key(model, values: dict) -> tuple:
    """:func:`_input_key` of the model's inputs: what a chain was made for."""
    return _input_key([values.get(i) for i in model.input_indexes],
                      [False] * len(model.input_indexes))


def _run_chain(model, values: dict, chain: _Chain) -> int:
    """Run ``chain`` on this execution's model inputs (``values``); returns how many
    operations it ran: all of them, or up to the first whose runner returned other outputs
    (stored in ``values``, which then holds every value computed so far)."""
    program = chain.program_for(values)
    chain.values.update(values)
    try:
        program.run()
    except _Diverged as d:
        for k, o in enumerate(model.operations[d.n].outputs):
            chain.values[o] = d.got[k]
        return d.n + 1
    except NnapiError:
        raise
    except Exception as e:  # a bound kernel call: an execution failure, not a crash
        raise OpFailedError(f"a chained operation failed: {type(e).__name__}: {e}") from e
    return len(chain.calls)


def _run_planned(model, values: dict, state: ExecutorState, log: bool) -> list[np.ndarray]:
    """:func:`run_model` on a prepared model's state: each operation with a ``plan`` runs the
    plan built for its input shapes; the others prepare and execute as usual. When an
    operation's inputs are the very arrays of its previous run (the buffers of the plans
    before it), its input list and plan are reused without looking at shapes; once every
    operation does so, the executions run as a :class:`_Chain`."""
    plans, steps, start = state.plans, state.steps, 0
    chain = state.chain
    if chain is not None:
        if chain.key == _model_input_key(model, values) and chain.threads == get_num_threads():
            start = _run_chain(model, values, chain)
            values = chain.values
            if start == len(steps):   # the whole chain ran
                state.last_results = None
                return _completed(model, values, log)
        state.chain = None
    reused, results = state.shared and start == 0, []   # reused: no plan made, none missing
    for step in steps[start:]:
        spec = step.spec
        if spec is None:
            raise OpFailedError(f"operation {_name(step.op.type)} is not implemented")
        entry = plans[step.op_index]
        try:
            if entry is not None and _same_inputs(values, step.dynamic, entry[2]):
                got = entry[1](entry[2])
            else:
                in_vals = list(step.template)
                for pos, i in step.dynamic:
                    if i not in values:
                        raise OpFailedError(f"operand {i} read before it is written")
                    in_vals[pos] = values[i]
                if spec.plan is not None:
                    key = _input_key(in_vals, step.constant_mask)
                    if entry is None or entry[0] != key:
                        reused = False
                        ctx = ExecutionContext(step.op.type, step.in_operands, in_vals,
                                               step.out_operands, run_model=run_model)
                        spec.prepare(ctx)
                        entry = (key, spec.plan(ctx))
                    plans[step.op_index] = (entry[0], entry[1], in_vals)
                    got = entry[1](in_vals)
                else:
                    reused = False
                    ctx = ExecutionContext(step.op.type, step.in_operands, in_vals,
                                           step.out_operands, run_model=run_model)
                    spec.prepare(ctx)
                    spec.execute(ctx)
                    got = ctx.outputs
        except NnapiError:
            raise
        except Exception as e:  # a kernel failure is an execution failure, not a crash
            raise OpFailedError(f"{_name(step.op.type)} (operation {step.op_index}) failed: "
                                f"{type(e).__name__}: {e}") from e
        for k, o in enumerate(step.op.outputs):
            if got[k] is None:
                raise OpFailedError(f"{_name(step.op.type)} did not produce output {k}")
            values[o] = got[k]
        results.append(got)
    outputs = _completed(model, values, log)
    last, state.last_results = state.last_results, (results if start == 0 else None)
    if not state.shared:
        state.shared = True
        state.arena = _share_buffers(model, state, values)
    elif reused and last is not None and all(r is p for r, p in zip(results, last)):
        # every plan kept its input list and returned the same outputs as the execution
        # before (new model inputs aside): the next ones can run as a chain
        state.chain = _Chain(model, state, values, results)
    return outputs


def _completed(model, values: dict, log: bool) -> list[np.ndarray]:
    """The end of a prepared model's execution: its vlog line and copies of the model's
    outputs (plans rewrite their buffers at the next execution)."""
    if log:
        vlog.vlog(vlog.CPUEXE, TAG, "Completed run normally")
    return [np.array(values[o], copy=True) for o in model.output_indexes]


def _share_buffers(model, state: ExecutorState, values: dict):
    """After a prepared model's first execution: the outputs of plans whose runner can write
    elsewhere (``runner.adopt``) move into one arena (:mod:`nnsim.ops.arena`); the model's
    outputs keep their buffers."""
    keep = set(model.output_indexes) | set(model.input_indexes)
    lives, runners = {}, {}
    for s, step in enumerate(state.steps):
        for _, i in step.dynamic:
            if i in lives:
                lives[i] = (lives[i][0], s)
        entry = state.plans[step.op_index]
        adopt = getattr(entry[1], "adopt", None) if entry is not None else None
        for k, o in enumerate(step.op.outputs):
            if o not in keep and adopt is not None:
                lives[o], runners[o] = (s, s), (adopt, k)
    return share(lives, values, lambda o, old, new: runners[o][0](runners[o][1], old, new))


def conv_variant(x_shape, filter_shape, out_shape, dilated=False):
    """What, besides operand types, picks the compiled core of a convolution (CONV_2D,
    DEPTHWISE_CONV_2D; TFLite's and NNAPI's alike): the filter's window, the input / output
    size ratio (the stride), whether the output is one pixel (the matrix-vector loops of
    ``kernels/_gemv.py``), whether a dilation factor is above 1 (a float depthwise layer's
    core, ``kernels.depthwise._float_core``). None when a shape is not known (rank 4
    expected)."""
    if len(x_shape) != 4 or len(filter_shape) != 4 or len(out_shape) != 4 or 0 in out_shape:
        return None
    ratio = tuple(-(-int(a) // int(b)) for a, b in zip(x_shape[1:3], out_shape[1:3]))
    return (tuple(int(d) for d in filter_shape[1:3]), ratio, tuple(out_shape[1:3]) == (1, 1),
            bool(dilated))


def _dilated(step) -> bool:
    """Whether a CONV_2D or DEPTHWISE_CONV_2D step has a constant dilation factor above 1
    (the factors are its last two inputs when it has them)."""
    parse = conv_parse_args if step.op.type == OperationCode.CONV_2D else dw_parse_args
    n = len(step.in_operands)
    if not parse(n, lambda i: step.in_operands[i].type)[2]:
        return False
    return any(isinstance(v, (int, np.integer, np.ndarray)) and np.ndim(v) == 0 and int(v) > 1
               for v in step.template[n - 2:])


_CONVS = (OperationCode.CONV_2D, OperationCode.DEPTHWISE_CONV_2D)


def warm_up_steps(model) -> list[tuple[tuple, Callable[[], bool]]]:
    """One operation of each kind of ``model`` (its type, input operand types and, for a
    convolution, :func:`conv_variant`), in run order, as ``(kind, warm)``: ``warm()`` runs
    that operation once on zero-filled inputs of its operands' declared shapes (constants as
    they are), so that the kernels an execution will need are compiled, and stored in numba's
    cache, ahead of it; it returns False when the operation cannot run so (an input of unknown
    shape, a value it rejects). Nothing is kept (see :mod:`nnsim.tools.warmup`)."""
    state = ExecutorState(model)
    first_of_kind: dict = {}
    for step in state.steps:
        variant = None
        if step.op.type in _CONVS and len(step.in_operands) >= 2 and step.out_operands:
            variant = conv_variant(step.in_operands[0].dimensions,
                                   step.in_operands[1].dimensions,
                                   step.out_operands[0].dimensions, _dilated(step))
        kind = (step.op.type, tuple(o.type for o in step.in_operands), variant)
        first_of_kind.setdefault(kind, step)
    return [(kind, partial(_warm_step, model, step)) for kind, step in first_of_kind.items()]


def float_conv_channels(model) -> set[tuple]:
    """``(output channels, window)`` of ``model``'s float CONV_2D and FULLY_CONNECTED
    operations (a 1x1 convolution over the batch: ``ops.fully_connected.plan``) that the float
    GEMM core runs (``kernels.gemm.gemm_channels``: not one output pixel the matrix-vector
    loops run), whose micro-kernels depend on both (``kernels.gemm.float_window``,
    ``kernels.gemm.compile_float_micro_kernels``). Read from an NHWC output shape: for an
    NCHW one it names a width instead, and the child compiles a micro-kernel in vain."""
    return _gemm_conv_channels(model, (OperandType.TENSOR_FLOAT32, OperandType.TENSOR_FLOAT16),
                               True)


def quant_conv_channels(model) -> set[int]:
    """As :func:`float_conv_channels`, for quantized operations (8-bit input): the integer
    GEMM core's micro-kernels (``kernels.gemm.compile_micro_kernels``)."""
    return _gemm_conv_channels(model, _QUANT8, False)


def quant_gemv_layers(model) -> bool:
    """Whether ``model`` has a quantized CONV_2D or FULLY_CONNECTED of one output pixel that
    the matrix-vector loops run (``kernels.gemm.gemm_channels`` None), whose micro-kernels
    the compiling child compiles first (``kernels.gemm.compile_gemv_micro_kernels``)."""
    return None in _gemm_conv_channels(model, _QUANT8, False, keep_gemv=True)


def _gemm_conv_channels(model, input_types, is_float: bool, keep_gemv=False) -> set:
    channels = set()
    for op in model.operations:
        rank = {OperationCode.CONV_2D: 4, OperationCode.FULLY_CONNECTED: 2}.get(op.type)
        if rank is None or len(op.inputs) < 2 or not op.outputs:
            continue
        x, out = model.operands[op.inputs[0]], model.operands[op.outputs[0]]
        dims = tuple(out.dimensions or ())
        if x.type in input_types and len(dims) == rank:
            cout = gemm_channels(dims, is_float)
            if cout is not None and is_float:
                cout = (cout, float_window(model.operands[op.inputs[1]].dimensions or ()))
            if cout is not None or keep_gemv:
                channels.add(cout)
    return channels


_QUANT8 = (OperandType.TENSOR_QUANT8_ASYMM, OperandType.TENSOR_QUANT8_ASYMM_SIGNED)
_QUANT8_FILTERS = _QUANT8 + (OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL,)


def is_windowed_conv(kind) -> bool:
    """Whether a kind of :func:`warm_up_steps` is a CONV_2D with a window or a stride and more
    than one output pixel: the GEMM core then reads a padded copy of its input
    (``kernels.gemm.compile_padded_copy``)."""
    return kind[0] == OperationCode.CONV_2D and windowed_variant(kind[2])


def windowed_variant(variant) -> bool:
    """Whether a convolution of this :func:`conv_variant` has a window or a stride (not a
    1x1 filter at stride 1) and more than one output pixel."""
    return variant is not None and not variant[2] and (variant[0], variant[1]) != ((1, 1), (1, 1))


def is_quantized_conv(kind) -> bool:
    """Whether a kind of :func:`warm_up_steps` is a quantized CONV_2D (the integer GEMM core
    runs it)."""
    op_type, types = kind[:2]
    return (op_type == OperationCode.CONV_2D and len(types) >= 2 and types[0] in _QUANT8
            and types[1] in _QUANT8_FILTERS)


def _warm_step(model, step: _Step) -> bool:
    if step.spec is None:
        return False
    in_vals = list(step.template)
    for pos, i in step.dynamic:
        operand = model.operands[i]
        if not operand.is_fully_specified:
            return False
        in_vals[pos] = np.zeros(tuple(operand.dimensions), operand.dtype())
    try:
        ctx = ExecutionContext(step.op.type, step.in_operands, in_vals, step.out_operands,
                               run_model=run_model)
        step.spec.prepare(ctx)
        if step.spec.plan is not None:
            step.spec.plan(ctx)(in_vals)
        else:
            step.spec.execute(ctx)
    except Exception:   # best effort: the real execution reports any failure
        return False
    return True


def _same_inputs(values: dict, dynamic: list, previous: list) -> bool:
    """Whether each run-time input of a step is the very array its plan last ran on (a plain
    loop: this check runs for every operation of every execution)."""
    for pos, i in dynamic:
        if values.get(i) is not previous[pos]:
            return False
    return True


def _name(code: int) -> str:
    try:
        return OperationCode(code).name
    except ValueError:
        return str(code)
