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
from nnsim.runtime import vlog
from nnsim.runtime.cache import DeviceCache, cache_file_paths, derive_token_simple, derive_token_step
from nnsim.runtime.devices import DeviceManager
from nnsim.runtime.model import ModelBuilder, unknown_input_counts
from nnsim.runtime.operand import OperandTypeSpec
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
    """``getPerformance``: input 0's operand type selects the entry (float32 arithmetic)."""
    if device is DeviceManager.cpu_device():
        return 1.0
    caps = device.capabilities()
    op = model.operations[op_index]

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
    return [bool(ok) and op.min_feature_level <= device.feature_level
            for ok, op in zip(answer, model.operations)]


def find_best_device_for_each_operation(model, devices, preference: int) -> list[int]:
    can_do = [supported_by_device(d, model) for d in devices]
    cpu = DeviceManager.cpu_device()
    best_for_op = []
    for i, op in enumerate(model.operations):
        best, best_perf = -1, 0.0
        for d_index, device in enumerate(devices):
            if can_do[d_index][i]:
                perf = get_performance(preference, device, model, i)
                if best < 0 or perf < best_perf or (perf == best_perf and device is cpu):
                    best, best_perf = d_index, perf
            else:
                _vlog(f"Device {device.name} can't do operation {op_label(model, i)}")
        if best < 0:
            name = OperationCode(op.type).name
            vlog.log_error(TAG, f"No driver can do operation {name}")
            raise BadDataError(f"No driver can do operation {name}")
        _vlog(f"ModelBuilder::findBestDeviceForEachOperation({op_label(model, i)}) = {best} "
              f"({devices[best].name})")
        best_for_op.append(best)
    return best_for_op


# -- steps ----------------------------------------------------------------------------------------
class ExecutionStep:
    """One partition: a step model built from source operations, compiled on one device."""

    def __init__(self, plan: "ExecutionPlan", index: int, device):
        self.plan, self.index, self.device = plan, index, device
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
        source = self.plan.model.operands[src]
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
                self.plan.temporary_defining_step[src] = self.index
        elif lt == L.SUBGRAPH_INPUT:
            self.model_inputs.append((src, idx))
        elif lt == L.SUBGRAPH_OUTPUT:
            (self.outputs_as_inputs if as_input else self.model_outputs).append((src, idx))
        return idx

    def add_operation(self, op_index: int) -> None:
        model = self.plan.model
        op = model.operations[op_index]
        inputs = model.compiled_inputs[op_index] if model.compiled_inputs else op.inputs
        ins = [self._add_operand(i, True) for i in inputs]
        outs = [self._add_operand(o, False) for o in op.outputs]
        self.step_model.add_operation(op.type, ins, outs)
        self.source_operations.append(op_index)

    def record_temp_as_step_output(self, src: int) -> None:
        self.temps_as_outputs[src] = self.operand_map[src]

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
        model = self.plan.model
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
                                      [(MAIN_MODEL, i) for i in self.source_operations],
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
        self.steps: list[ExecutionStep] = []
        self.temporary_defining_step: dict[int, int] = {}
        self.cache_info = cache_info
        self.valid = False
        self.best_device_for_op: list[int] = []
        self.devices: list = []

    def reset(self) -> None:
        self.__init__(self.model, self.cache_info)

    def become_single_step(self, device) -> None:
        self.kind, self.device = self.SIMPLE, device

    def create_new_step(self, device) -> ExecutionStep:
        self.kind = self.COMPOUND
        step = ExecutionStep(self, len(self.steps), device)
        self.steps.append(step)
        return step

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
            for step in self.steps:
                for src, _ in step.temps_as_inputs:
                    definer = self.temporary_defining_step[src]
                    self.steps[definer].record_temp_as_step_output(src)
            for step in self.steps:
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
                _vlog(f"Step#{step.index}: execute on {step.device.name}")
                log_model_to_info(step.step_model)
        else:
            _vlog("EMPTY")

    def device_names_by_op(self) -> list[str]:
        """Name of the device each main-model operation runs on (for reports)."""
        if self.kind == self.SIMPLE:
            return [self.device.name] * len(self.model.operations)
        names = [""] * len(self.model.operations)
        for step in self.steps:
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
    _vlog(f"ModelBuilder::partitionTheWork: sourceModelIndex = {MAIN_MODEL}, deviceCount = "
          f"{len(devices)}, operationCount = {len(model.operations)}")
    best = find_best_device_for_each_operation(model, devices, preference)
    plan.best_device_for_op = best
    if len(set(best)) == 1:
        d = best[0]
        _vlog(f"ModelBuilder::partitionTheWork: only one best device: {d} = {devices[d].name}")
        plan.become_single_step(devices[d])
    else:
        _partition_compound(plan, model, devices, best)
    plan.finish(preference, priority)
    if vlog.vlog_is_on(vlog.COMPILATION):
        _vlog("ModelBuilder::partitionTheWork: source model: ")
        log_model_to_info(model)
        plan.dump()
    return plan


def _partition_compound(plan, model, devices, best) -> None:
    queues = [deque() for _ in range(len(devices) + 1)]  # + control-flow interpreter queue

    def name_of(d):
        if d == len(devices):
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
        step = plan.create_new_step(devices[d])
        queue = queues[d]
        while queue:
            op_index = queue.popleft()
            step.add_operation(op_index)
            mark_processed(op_index)
