"""ExecutionPlan: device choice and partitioning (runtime/ExecutionPlan.cpp, reference 3.2-3.3).

``partition_the_work`` is ``ModelBuilder::partitionTheWork``: find the best device for each
operation, take the single-device shortcut when one device won everything, otherwise drain
per-device FIFO queues (highest device index first) into ExecutionSteps whose step models are
built through the public ModelBuilder API. Log lines are the Android 12+ (T13) wording of
reference section 3.6, under logcat tag ``ExecutionPlan``.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from nnsim.errors import BadDataError, NnapiError, OpFailedError
from nnsim.platform import vlog
from nnsim.runtime import trace
from nnsim.runtime.cache import DeviceCache, cache_file_paths, derive_token_simple, derive_token_step
from nnsim.runtime.control_flow import (CONTROL_FLOW, IF_COND, IF_ELSE, IF_FIRST_INPUT, IF_THEN,
                                        WHILE_BODY, WHILE_COND, WHILE_FIRST_INPUT, GotoStep,
                                        IfStep, WhileStep, control_flow_performance,
                                        has_operand_of_unknown_size, referenced_model)
from nnsim.runtime.devices import DeviceManager
from nnsim.runtime.model import ModelBuilder, unknown_input_counts
from nnsim.common.operand import OperandTypeSpec
from nnsim.types import OperandLifeTime, OperandType, OperationCode, PreferenceCode

L = OperandLifeTime
TAG = "ExecutionPlan"
MAIN_MODEL = 0


def _vlog(message: str) -> None:
    vlog.vlog(vlog.COMPILATION, TAG, message)


def op_label(model, index: int) -> str:
    return f"{OperationCode(model.operations[index].type).name}:{index}"


# -- device choice ------------------------------------------------------------------------------
def get_performance(preference: int, device, model, op_index: int) -> float:
    """``getPerformance``: IF/WHILE add up their referenced models; otherwise input 0's
    operand type selects the entry (float32 arithmetic)."""
    op = model.operations[op_index]
    if op.type in CONTROL_FLOW:
        return control_flow_performance(preference, device, model, op_index, get_performance)
    if device is DeviceManager.cpu_device():
        return 1.0
    caps = device.capabilities()

    def apply(p):
        return p.power_usage if preference == PreferenceCode.PREFER_LOW_POWER else p.exec_time

    operand_type = model.operands[op.inputs[0]].type if op.inputs else OperandType.TENSOR_FLOAT32
    if model.relax_float32_to_float16 and operand_type in (OperandType.FLOAT32,
                                                           OperandType.TENSOR_FLOAT32):
        perf = caps.relaxed_float32_to_float16_scalar if operand_type == OperandType.FLOAT32 \
            else caps.relaxed_float32_to_float16_tensor
        return float(np.float32(apply(perf)))
    return float(np.float32(apply(caps.lookup(operand_type))))


def supported_by_device(device, model) -> list[bool]:
    """``DriverDevice::getSupportedOperations``: ops above the device's feature level are
    unsupported (the slice of MetaModel); any driver error makes every op unsupported."""
    try:
        answer = list(device.supported_operations(model))
    except NnapiError as e:
        vlog.log_error("Manager", f"getSupportedOperations failed with code {e.result_code}")
        return [False] * len(model.operations)
    if len(answer) != len(model.operations):
        vlog.log_error("Manager", "getSupportedOperations returned a vector of the wrong length")
        return [False] * len(model.operations)
    result = [bool(ok) and op.min_feature_level <= device.feature_level
              for ok, op in zip(answer, model.operations)]
    if trace.active():
        trace.record("getSupportedOperations", device=device.name,
                     supported=[op_label(model, i) for i, ok in enumerate(result) if ok],
                     unsupported=[op_label(model, i) for i, ok in enumerate(result) if not ok])
    return result


def find_best_device_for_each_operation(model, devices, preference: int) -> list[int]:
    """Device index per operation; ``len(devices)`` = the control-flow interpreter (an IF/WHILE
    the CPU would win runs in the runtime, its referenced models partitioned in turn)."""
    can_do = [supported_by_device(d, model) for d in devices]
    cpu = DeviceManager.cpu_device()
    best_for_op = []
    for i, op in enumerate(model.operations):
        best, best_perf = -1, 0.0
        compared = []                       # (device, exec time or None = can't do)
        unknown_size = has_operand_of_unknown_size(model, i)
        if unknown_size:
            # Control flow with operands of unknown size: the CPU device only, as a plain op.
            if cpu in devices and can_do[devices.index(cpu)][i]:
                best = devices.index(cpu)
        else:
            for d_index, device in enumerate(devices):
                if can_do[d_index][i]:
                    perf = get_performance(preference, device, model, i)
                    compared.append((device.name, perf))
                    if best < 0 or perf < best_perf or (perf == best_perf and device is cpu):
                        best, best_perf = d_index, perf
                else:
                    compared.append((device.name, None))
                    _vlog(f"Device {device.name} can't do operation {op_label(model, i)}")
        if best < 0:
            name = OperationCode(op.type).name
            vlog.log_error(TAG, f"No driver can do operation {name}")
            err = BadDataError(f"No driver can do operation {name}")
            err.logged = True   # once, here, under ExecutionPlan's tag as upstream
            raise err
        if devices[best] is cpu and op.type in CONTROL_FLOW and not unknown_size:
            _vlog(f"ModelBuilder::findBestDeviceForEachOperation({op_label(model, i)}) = -1 "
                  f"(NNAPI)")
            best = len(devices)
            trace.record("findBestDeviceForEachOperation", op=op_label(model, i),
                         compared=compared, best=-1, device="NNAPI (control flow)")
        else:
            trace.record("findBestDeviceForEachOperation", op=op_label(model, i),
                         compared=compared, best=best, device=devices[best].name)
            _vlog(f"ModelBuilder::findBestDeviceForEachOperation({op_label(model, i)}) = "
                  f"{best} ({devices[best].name})")
        best_for_op.append(best)
    return best_for_op


# -- steps ----------------------------------------------------------------------------------------
class ExecutionStep:
    """One partition: a step model built from source operations, compiled on one device."""

    def __init__(self, plan: "ExecutionPlan", index: int, source_model_index: int, device):
        self.plan, self.index, self.device = plan, index, device
        self.source_model_index = source_model_index
        self.model = plan.source_models[source_model_index]
        self.step_model = ModelBuilder()
        self.operand_map: dict[int, int] = {}
        self.model_inputs: list[tuple[int, int]] = []
        self.model_outputs: list[tuple[int, int]] = []
        self.temps_as_inputs: list[tuple[int, int]] = []
        self.temps_as_outputs: dict[int, int] = {}
        self.outputs_as_inputs: list[tuple[int, int]] = []
        self.source_operations: list[int] = []
        self.step_inputs: list[tuple[int, int]] = []
        self.step_outputs: list[tuple[int, int]] = []
        self.prepared = None
        self.token = None

    def _add_operand(self, src: int, as_input: bool) -> int:
        if src in self.operand_map:
            return self.operand_map[src]
        source = self.model.operands[src]
        sm = self.step_model
        idx = sm.add_operand(OperandTypeSpec(source.type, source.dimensions, source.scale,
                                             source.zero_point))
        self.operand_map[src] = idx
        if source.channel_quant is not None:
            sm.set_operand_symm_per_channel_quant_params(idx, source.channel_quant)
        lt = source.lifetime
        if lt in (L.CONSTANT_COPY, L.CONSTANT_REFERENCE, L.POINTER):
            sm.set_operand_value(idx, source.value)
            if lt != L.CONSTANT_COPY:
                sm.operands[idx].lifetime = L.CONSTANT_REFERENCE
        elif lt == L.NO_VALUE:
            sm.set_operand_value(idx, None)
        elif lt == L.SUBGRAPH:
            sm.set_operand_value_from_model(idx, source.subgraph)
        elif lt == L.TEMPORARY_VARIABLE:
            if as_input:
                self.temps_as_inputs.append((src, idx))
            else:
                self.plan.temporary_defining_step[(self.source_model_index, src)] = self.index
        elif lt == L.SUBGRAPH_INPUT:
            self.model_inputs.append((src, idx))
        elif lt == L.SUBGRAPH_OUTPUT:
            (self.outputs_as_inputs if as_input else self.model_outputs).append((src, idx))
        return idx

    def add_operation(self, op_index: int) -> None:
        model = self.model
        op = model.operations[op_index]
        inputs = model.compiled_inputs[op_index] if model.compiled_inputs else op.inputs
        ins = [self._add_operand(i, True) for i in inputs]
        outs = [self._add_operand(o, False) for o in op.outputs]
        self.step_model.add_operation(op.type, ins, outs)
        self.source_operations.append(op_index)

    def record_temp_as_step_output(self, src: int) -> None:
        self.temps_as_outputs[src] = self.operand_map[src]

    def key(self, src: int) -> tuple:
        """The (source model, operand) pair of operand ``src`` of this step's source model."""
        return (self.source_model_index, src)

    def dump(self) -> None:
        _vlog(f"Step#{self.index}: execute on {self.device.name}")
        log_model_to_info(self.step_model)

    def _log_step_model(self) -> None:
        _vlog(f"ExecutionStep::finishStepModel, step {self.index}")

        def fmt(name, pairs):
            _vlog(f"{name}: " + ", ".join(f"{a}->{b}" for a, b in pairs))
        fmt("step model inputs", self.step_inputs)
        fmt("step model outputs", self.step_outputs)
        fmt("model inputs", self.model_inputs)
        fmt("model outputs", self.model_outputs)
        fmt("temps as step model inputs", self.temps_as_inputs)
        fmt("temps as step model outputs", sorted(self.temps_as_outputs.items()))
        fmt("outputs as step model inputs", self.outputs_as_inputs)

    def finish_step_model(self, preference: int, priority: int) -> None:
        model = self.plan.model   # relaxation follows the main model
        for src, idx in sorted(self.temps_as_outputs.items()):
            operand = self.step_model.operands[idx]
            if not operand.is_fully_specified:
                _vlog(f"StepModelOutput (operand#{src} of source graph) has unknown size: "
                      f"{operand.type_spec()}")
        self.step_model.relax_computation_float32_to_float16(model.relax_float32_to_float16)
        self.step_inputs = self.model_inputs + self.temps_as_inputs + self.outputs_as_inputs
        self.step_outputs = self.model_outputs + sorted(self.temps_as_outputs.items())
        if vlog.vlog_is_on(vlog.COMPILATION):
            self._log_step_model()
        if not self.step_inputs or not self.step_outputs:
            _vlog("ExecutionStep::finishStepModel: finishing step model with no inputs or no "
                  "outputs")
            raise OpFailedError("step model with no inputs or no outputs")
        self.step_model.identify_inputs_and_outputs([b for _, b in self.step_inputs],
                                                    [b for _, b in self.step_outputs])
        self.step_model.finish()
        _vlog(f"ExecutionStep::finishStepModel, compilation on {self.device.name}")
        token = None
        if self.plan.cache_info is not None:
            token = derive_token_step(self.plan.cache_info.token,
                                      [(self.source_model_index, i)
                                       for i in self.source_operations],
                                      self.device, preference, priority)
        self.prepared = compile_model(self.device, self.step_model, preference, priority,
                                      self.plan.cache_info, token)


def compile_model(device, model, preference, priority, cache_info, token):
    """``compile()``: prepare on ``device``, going through the compilation cache when both the
    app (setCaching) and the device (cache files needed) support it."""
    cache = None
    if cache_info is not None and token is not None and device.is_caching_supported:
        n_model, n_data = device.number_of_cache_files_needed
        models, datas = cache_file_paths(cache_info.cache_dir, token, n_model, n_data)
        cache = DeviceCache(token, models, datas)
        if cache.exists():
            try:
                prepared = device.prepare_from_cache(cache)
            except NnapiError as e:
                prepared = None
                vlog.log_error("Manager", f"prepareModelFromCache failure ({e.result_code.name}): "
                                          f"{e}")
            if prepared is not None:
                vlog.log_info("Manager",
                              "prepareModelFromCache: successfully prepared model from cache")
                return prepared
        for k, path in enumerate(models + datas):
            vlog.vlog(vlog.COMPILATION, "Manager", f"Cache {k}: {path}")
    try:
        return device.prepare(model, preference, priority, cache)
    except NnapiError:
        raise
    except Exception as e:  # a driver bug is a failed compilation, not a crash
        raise OpFailedError(f"{device.name} failed to prepare the model: {e}") from e


# -- the plan --------------------------------------------------------------------------------------
class ExecutionPlan:
    EMPTY, SIMPLE, COMPOUND = "EMPTY", "SIMPLE", "COMPOUND"

    def __init__(self, model: ModelBuilder, cache_info=None):
        self.model = model
        self.kind = self.EMPTY
        self.device = None
        self.prepared = None
        self.steps: list = []   # ExecutionStep | IfStep | WhileStep | GotoStep
        self.source_models: list[ModelBuilder] = [model]
        self.temporary_defining_step: dict[tuple, int] = {}
        self.cache_info = cache_info
        self.valid = False
        self.best_device_for_op: list[int] = []
        self.devices: list = []

    def reset(self) -> None:
        self.__init__(self.model, self.cache_info)

    def become_single_step(self, device) -> None:
        self.kind, self.device = self.SIMPLE, device

    def create_new_step(self, device, source_model_index: int = MAIN_MODEL) -> ExecutionStep:
        return self._append(ExecutionStep(self, len(self.steps), source_model_index, device))

    def _append(self, step):
        self.kind = self.COMPOUND
        self.steps.append(step)
        return step

    def add_source_model(self, model) -> int:
        """``SourceModels::addModel``: every reference gets its own index, even a model
        referenced twice."""
        self.source_models.append(model)
        return len(self.source_models) - 1

    def execution_steps(self) -> list[ExecutionStep]:
        return [s for s in self.steps if isinstance(s, ExecutionStep)]

    def _find_temps_as_step_model_outputs(self) -> None:
        """``findTempsAsStepModelOutputs``: a temporary defined by one step and read by a later
        step, IF (condition, outer inputs) or WHILE (outer inputs) is an output of its step."""
        def record(key):
            definer = self.temporary_defining_step.get(key)
            if definer is not None:
                self.steps[definer].record_temp_as_step_output(key[1])
        for step in self.steps:
            if isinstance(step, ExecutionStep):
                for src, _ in step.temps_as_inputs:
                    record(step.key(src))
            elif isinstance(step, IfStep):
                record(step.condition)
                for key in step.outer_inputs:
                    record(key)
            elif isinstance(step, WhileStep):
                for key in step.outer_inputs:
                    record(key)

    def finish(self, preference: int, priority: int) -> None:
        if self.kind == self.SIMPLE:
            _vlog("ExecutionPlan::SimpleBody::finish, compilation")
            token = None
            if self.cache_info is not None:
                token = derive_token_simple(self.cache_info.token, self.device, preference,
                                            priority)
            self.prepared = compile_model(self.device, self.model, preference, priority,
                                          self.cache_info, token)
            vlog.log_info(TAG, "ExecutionPlan::SimpleBody::finish: compilation finished "
                               f"successfully on {self.device.name}")
        elif self.kind == self.COMPOUND:
            self._find_temps_as_step_model_outputs()
            for step in self.execution_steps():
                try:
                    step.finish_step_model(preference, priority)
                except NnapiError:
                    _vlog("ExecutionPlan::CompoundBody::finish -- finishStepModel failed")
                    raise
            vlog.log_info(TAG, "ExecutionPlan::CompoundBody::finish: compilation finished "
                               "successfully")
        self.valid = True

    def dump(self) -> None:
        if self.kind == self.SIMPLE:
            _vlog(f"SIMPLE for {self.device.name}")
        elif self.kind == self.COMPOUND:
            for step in self.steps:
                if isinstance(step, ExecutionStep):
                    step.dump()
                else:
                    _vlog(str(step))
        else:
            _vlog("EMPTY")

    def device_names_by_op(self) -> list[str]:
        """Name of the device each main-model operation runs on (for reports)."""
        if self.kind == self.SIMPLE:
            return [self.device.name] * len(self.model.operations)
        names = ["NNAPI"] * len(self.model.operations)   # IF/WHILE on the interpreter
        for step in self.execution_steps():
            if step.source_model_index == MAIN_MODEL:
                for i in step.source_operations:
                    names[i] = step.device.name
        return names


def log_model_to_info(model) -> None:
    """A compact model print under tag Utils (upstream ``logModelToInfo``; its exact text was
    not transcribed, see nnapi-runtime.md section 9)."""
    if not vlog.vlog_is_on(vlog.COMPILATION):
        return
    ops = ", ".join(f"{OperationCode(op.type).name}({','.join(map(str, op.inputs))})->"
                    f"({','.join(map(str, op.outputs))})" for op in model.operations)
    vlog.log_info("Utils", f"Model{{operands: {len(model.operands)}, operations: [{ops}], "
                           f"inputIndexes: {list(model.input_indexes)}, outputIndexes: "
                           f"{list(model.output_indexes)}}}")


def partition_the_work(model: ModelBuilder, devices, preference: int, priority: int,
                       cache_info=None) -> ExecutionPlan:
    """``ModelBuilder::partitionTheWork``; raises BadDataError when no device can do an op."""
    plan = ExecutionPlan(model, cache_info)
    plan.devices = list(devices)
    _partition_internal(plan, MAIN_MODEL, list(devices), preference)
    plan.finish(preference, priority)
    if vlog.vlog_is_on(vlog.COMPILATION):
        _vlog("ModelBuilder::partitionTheWork: source model: ")
        log_model_to_info(model)
        plan.dump()
    return plan


def _partition_internal(plan, source_index: int, devices, preference: int) -> None:
    """``partitionTheWorkInternal`` for one source model (the main model, or a model an IF or
    WHILE references, partitioned into the same flat list of steps)."""
    model = plan.source_models[source_index]
    _vlog(f"ModelBuilder::partitionTheWork: sourceModelIndex = {source_index}, deviceCount = "
          f"{len(devices)}, operationCount = {len(model.operations)}")
    best = find_best_device_for_each_operation(model, devices, preference)
    interpreter = len(devices)
    if source_index == MAIN_MODEL:
        plan.best_device_for_op = best
        # The shortcut is for the main model only (the plan is flat), and not when the one
        # choice is the control-flow interpreter.
        if len(set(best)) == 1 and best[0] != interpreter:
            d = best[0]
            _vlog(f"ModelBuilder::partitionTheWork: only one best device: {d} = "
                  f"{devices[d].name}")
            plan.become_single_step(devices[d])
            trace.record("partitionTheWork", step=0, device=devices[d].name,
                         operations=[op_label(model, i) for i in range(len(model.operations))],
                         single=True)
            return
    _partition_compound(plan, source_index, devices, best, preference)


def _partition_compound(plan, source_index, devices, best, preference) -> None:
    model = plan.source_models[source_index]
    queues = [deque() for _ in range(len(devices) + 1)]  # + control-flow interpreter queue
    interpreter = len(devices)

    def name_of(d):
        if d == interpreter:
            return "NNAPI"
        return devices[d].name if 0 <= d < len(devices) else "{unknown}"

    def enqueue(op_index):
        d = best[op_index]
        _vlog(f"enqueueOnAppropriateDevice {op_index} onto {d} ({name_of(d)})")
        queues[d].append(op_index)

    # OperandTracker: count unknown inputs; consumers in ascending op order.
    counts, consumers = unknown_input_counts(model.operands, model.operations)
    for i, n in enumerate(counts):
        if n == 0:
            enqueue(i)

    def mark_processed(op_index):
        for out in model.operations[op_index].outputs:
            for c in consumers.get(out, ()):
                counts[c] -= 1
                if counts[c] == 0:
                    enqueue(c)

    while True:
        d = next((k for k in range(len(queues) - 1, -1, -1) if queues[k]), -1)
        _vlog(f"findNextDeviceToProcess: {d} ({name_of(d)})")
        if d < 0:
            break
        queue = queues[d]
        step = plan.create_new_step(devices[d], source_index) if d != interpreter else None
        done = []
        while queue:
            op_index = queue.popleft()
            if step is not None:
                step.add_operation(op_index)
            else:
                _add_control_flow(plan, source_index, op_index, devices, preference)
            mark_processed(op_index)
            done.append(op_label(model, op_index))
        if step is not None:
            trace.record("partitionTheWork", step=step.index, device=devices[d].name,
                         operations=done, single=False)


def _add_control_flow(plan, source_index, op_index, devices, preference) -> None:
    """Emit the interpreter's steps for one IF or WHILE (layout of ExecutionPlan.cpp):

    IF:    i: if then=i+1 else=j+1 | then-model steps | j: goto k | else-model steps | k: ...
    WHILE: i: while cond=i+1 body=j+1 exit=k+1 | cond steps | j: goto i | body steps |
           k: goto i | ...
    """
    model = plan.source_models[source_index]
    op = model.operations[op_index]

    def key(o):
        return (source_index, o)

    def io(index, ref, inputs):
        return [(index, o) for o in (ref.input_indexes if inputs else ref.output_indexes)]

    if op.type == OperationCode.IF:
        then_model = referenced_model(model, op, IF_THEN)
        else_model = referenced_model(model, op, IF_ELSE)
        then_index, else_index = plan.add_source_model(then_model), \
            plan.add_source_model(else_model)
        step = plan._append(IfStep(len(plan.steps), condition=key(op.inputs[IF_COND])))
        step.then_step = len(plan.steps)
        _partition_internal(plan, then_index, devices, preference)
        after_then = plan._append(GotoStep(len(plan.steps)))
        step.else_step = len(plan.steps)
        _partition_internal(plan, else_index, devices, preference)
        after_then.goto_step = len(plan.steps)
        step.outer_inputs = [key(o) for o in op.inputs[IF_FIRST_INPUT:]]
        step.outer_outputs = [key(o) for o in op.outputs]
        step.then_inputs, step.then_outputs = io(then_index, then_model, True), \
            io(then_index, then_model, False)
        step.else_inputs, step.else_outputs = io(else_index, else_model, True), \
            io(else_index, else_model, False)
        return
    cond_model = referenced_model(model, op, WHILE_COND)
    body_model = referenced_model(model, op, WHILE_BODY)
    cond_index, body_index = plan.add_source_model(cond_model), plan.add_source_model(body_model)
    step = plan._append(WhileStep(len(plan.steps)))
    step.cond_step = len(plan.steps)
    _partition_internal(plan, cond_index, devices, preference)
    plan._append(GotoStep(len(plan.steps), goto_step=step.index))
    step.body_step = len(plan.steps)
    _partition_internal(plan, body_index, devices, preference)
    plan._append(GotoStep(len(plan.steps), goto_step=step.index))
    step.exit_step = len(plan.steps)
    step.outer_inputs = [key(o) for o in op.inputs[WHILE_FIRST_INPUT:]]
    step.outer_outputs = [key(o) for o in op.outputs]
    step.cond_inputs = io(cond_index, cond_model, True)
    step.cond_output = io(cond_index, cond_model, False)[0]
    step.body_inputs = io(body_index, body_model, True)
    step.body_outputs = io(body_index, body_model, False)
