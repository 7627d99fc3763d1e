"""ExecutionBuilder: ``ANeuralNetworksExecution`` (runtime/ExecutionBuilder.cpp, reference 3.4).

Runs a compilation's plan: SIMPLE on its one prepared model, COMPOUND step by step with
temporaries passed between steps. On a step failure, in partitioning mode 1 only, the step is
retried on the CPU (partial fallback) and then the whole model (full fallback).
"""
from __future__ import annotations

import threading
import time

import numpy as np

from nnsim.errors import (BadDataError, BadStateError, NnapiError, OutputInsufficientSizeError,
                          UnexpectedNullError)
from nnsim.platform import vlog
from nnsim.drivers.base import Timing
from nnsim.ops.control_flow import reset_loop_timeout_ns, set_loop_timeout_ns
from nnsim.runtime.control_flow import Interpreter
from nnsim.runtime.devices import DeviceManager
from nnsim.common.operand import OperandTypeSpec
from nnsim.platform.properties import getprop_int
from nnsim.types import (LOOP_TIMEOUT_DEFAULT_NS, LOOP_TIMEOUT_MAXIMUM_NS, DurationCode,
                         OperandType, ResultCode)

TAG = "ExecutionBuilder"
UINT64_MAX = 2**64 - 1


def _vlog(message: str) -> None:
    vlog.vlog(vlog.EXECUTION, TAG, message)


class _Argument:
    """One bound input or output: a typed ndarray view, or a memory region, or omitted."""

    def __init__(self, operand, type_spec, buffer, memory=None, offset=0, length=None,
                 writable=False):
        self.omitted = buffer is None and memory is None
        self.dims = tuple(operand.dimensions)
        if type_spec is not None:
            self.dims = _merge_dims(operand, type_spec)
        self.dtype = operand.dtype()
        self.memory, self.offset = memory, offset
        self.buffer = buffer
        self._view = None
        if memory is not None:
            self.length = length
        elif buffer is not None:
            if writable and not (isinstance(buffer, np.ndarray) and buffer.flags.writeable):
                if not isinstance(buffer, (bytearray, memoryview)):
                    raise BadDataError("ANeuralNetworksExecution_setOutput needs a writable buffer")
            self.length = buffer.nbytes if hasattr(buffer, "nbytes") else len(buffer)
        else:
            self.length = 0
        if not self.omitted and all(d > 0 for d in self.dims) and operand.type not in (
                OperandType.OEM_SCALAR,):
            needed = int(np.prod(self.dims, dtype=np.int64)) * self.dtype.itemsize \
                if self.dims else self.dtype.itemsize
            # ModelArgumentInfo::createFromPointer: a known size must match exactly; unknown
            # sizes are checked at compute time (OUTPUT_INSUFFICIENT_SIZE).
            if self.length != needed:
                raise BadDataError(f"Setting argument with invalid length: {self.length}, "
                                   f"expected length: {needed}")

    def raw(self) -> memoryview:
        if self.memory is not None:
            return self.memory.view(self.offset, self.length)
        if isinstance(self.buffer, np.ndarray):
            return memoryview(np.ascontiguousarray(self.buffer).reshape(-1).view(np.uint8))
        return memoryview(self.buffer).cast("B")

    def input_array(self) -> np.ndarray | None:
        """The bound input as an array of the operand's type and dimensions: a view of the
        caller's memory (kept across computes of a reusable execution when the buffer is a
        C-contiguous ndarray, so that the prepared model sees the same array each time)."""
        if self.omitted:
            return None
        if self._view is not None:
            return self._view
        arr = np.frombuffer(self.raw(), dtype=self.dtype)
        if self.dims:
            if arr.size != int(np.prod(self.dims)):
                raise BadDataError("input buffer does not match the input dimensions")
            arr = arr.reshape(self.dims)
        elif arr.size == 1:
            arr = arr.reshape(())
        else:
            raise BadDataError("input of unknown shape: pass an operand type with dimensions")
        if isinstance(self.buffer, np.ndarray) and self.buffer.flags.c_contiguous:
            self._view = arr   # shares the buffer's memory: later writes show through it
        return arr

    def write(self, value: np.ndarray) -> bool:
        """Copy ``value`` into the bound buffer; False if it does not fit."""
        buffer = self.buffer
        if (type(buffer) is np.ndarray and buffer.shape == value.shape
                and buffer.dtype == value.dtype and buffer.flags.c_contiguous):
            # the usual case, an output array of the operand's type and shape: one copy (the
            # byte views below cost six numpy calls of every execution)
            buffer[...] = value
            return True
        data = np.ascontiguousarray(value).reshape(-1).view(np.uint8)
        if data.nbytes > self.length:
            return False
        if isinstance(self.buffer, np.ndarray) and self.memory is None:
            # (checked first: reshape copies a non-contiguous array, np.shares_memory after
            # the copy took 2 us of every execution)
            if data.nbytes and not self.buffer.flags.c_contiguous:
                raise BadDataError("output ndarray must be contiguous to be filled in place")
            self.buffer.reshape(-1).view(np.uint8)[:data.nbytes] = data
        else:
            self.raw()[:data.nbytes] = data.tobytes()
        return True


def _merge_dims(operand, type_spec: OperandTypeSpec) -> tuple:
    if type_spec.type != operand.type or type_spec.scale != operand.scale or \
            type_spec.zeroPoint != operand.zero_point:
        raise BadDataError("ANeuralNetworksExecution_setInput/Output: operand type does not "
                           "match the model")
    given, declared = tuple(type_spec.dimensions), tuple(operand.dimensions)
    if not declared:
        return given
    if not given:
        return declared
    if len(given) != len(declared):
        raise BadDataError("ANeuralNetworksExecution_setInput/Output: rank does not match")
    for g, d in zip(given, declared):
        if d and g != d:
            raise BadDataError("Overriding a fully specified dimension is disallowed")
    return given


class Execution:
    """An execution of a finished, valid compilation."""

    def __init__(self, compilation):
        if compilation is None:
            raise UnexpectedNullError("ANeuralNetworksExecution_create passed a nullptr")
        if not compilation.is_valid:
            raise BadStateError("ANeuralNetworksExecution_create passed an invalid compilation")
        self.compilation = compilation
        self.model = compilation.model
        self.inputs: list = [None] * len(self.model.input_indexes)
        self.outputs: list = [None] * len(self.model.output_indexes)
        self.output_shapes: list = [tuple(self.model.operands[i].dimensions)
                                    for i in self.model.output_indexes]
        self.output_sufficient = [True] * len(self.outputs)
        self.reusable = False
        self.started = False
        self.completed = False
        self.measure_timing = False
        self.timing = None
        self.timeout_ns = None
        self.loop_timeout_ns = LOOP_TIMEOUT_DEFAULT_NS
        self.step_report: list[tuple[str, object]] = []  # (device name, Timing) per run step
        self._lock = threading.Lock()
        _vlog(f"ExecutionBuilder::ExecutionBuilder with {len(self.inputs)} inputs and "
              f"{len(self.outputs)} outputs")

    # -- binding -----------------------------------------------------------------------------------
    def _check_bindable(self, fn: str, index: int, count: int) -> None:
        if self.started and not (self.reusable and self.completed):
            raise BadStateError(f"{fn} called after the execution has started")
        if not isinstance(index, (int, np.integer)) or index < 0 or index >= count:
            raise BadDataError(f"{fn} bad index {index}, count {count}")

    def set_input(self, index: int, type_spec, buffer, length: int | None = None) -> None:
        fn = "ANeuralNetworksExecution_setInput"
        self._check_bindable(fn, index, len(self.inputs))
        if buffer is None and length:
            raise UnexpectedNullError(f"{fn} passed a nullptr")
        if self.inputs[index] is not None and not self.reusable:
            raise BadStateError(f"{fn} called when input {index} has already been set")
        operand = self.model.operands[self.model.input_indexes[index]]
        if buffer is not None:
            buffer = _host_buffer(fn, buffer, length, writable=False)
        self.inputs[index] = _Argument(operand, type_spec, buffer)

    def set_input_from_memory(self, index, type_spec, memory, offset, length) -> None:
        fn = "ANeuralNetworksExecution_setInputFromMemory"
        self._check_bindable(fn, index, len(self.inputs))
        if memory is None:
            raise UnexpectedNullError(f"{fn} passed a nullptr")
        memory.check_range(offset, length)
        operand = self.model.operands[self.model.input_indexes[index]]
        self.inputs[index] = _Argument(operand, type_spec, None, memory, offset, length)

    def set_output(self, index: int, type_spec, buffer, length: int | None = None) -> None:
        fn = "ANeuralNetworksExecution_setOutput"
        self._check_bindable(fn, index, len(self.outputs))
        if buffer is None:
            raise UnexpectedNullError(f"{fn} passed a nullptr")
        if self.outputs[index] is not None and not self.reusable:
            raise BadStateError(f"{fn} called when output {index} has already been set")
        operand = self.model.operands[self.model.output_indexes[index]]
        buffer = _host_buffer(fn, buffer, length, writable=True)
        self.outputs[index] = _Argument(operand, type_spec, buffer, writable=True)

    def set_output_from_memory(self, index, type_spec, memory, offset, length) -> None:
        fn = "ANeuralNetworksExecution_setOutputFromMemory"
        self._check_bindable(fn, index, len(self.outputs))
        if memory is None:
            raise UnexpectedNullError(f"{fn} passed a nullptr")
        memory.check_range(offset, length)
        operand = self.model.operands[self.model.output_indexes[index]]
        self.outputs[index] = _Argument(operand, type_spec, None, memory, offset, length,
                                        writable=True)

    def set_reusable(self, reusable: bool) -> None:
        if self.started:
            raise BadStateError("ANeuralNetworksExecution_setReusable called after compute")
        self.reusable = bool(reusable)

    def set_measure_timing(self, measure: bool) -> None:
        comp = self.compilation
        if not (comp.explicit_device_list and len(comp.devices) == 1):
            raise BadDataError("ANeuralNetworksExecution_setMeasureTiming called on an "
                               "ANeuralNetworksExecution created from an "
                               "ANeuralNetworksCompilation that was not created by "
                               "ANeuralNetworksCompilation_createForDevices with numDevices = 1")
        if self.started:
            raise BadStateError("ANeuralNetworksExecution_setMeasureTiming after compute")
        self.measure_timing = bool(measure)

    def set_timeout(self, duration_ns: int) -> None:
        comp = self.compilation
        if not (comp.explicit_device_list and len(comp.devices) == 1):
            raise BadDataError("ANeuralNetworksExecution_setTimeout needs a single-device "
                               "createForDevices compilation")
        self.timeout_ns = duration_ns or None

    def set_loop_timeout(self, duration_ns: int) -> None:
        """WHILE loop limit for this execution; above the maximum (15 s) it is clamped."""
        if self.started and not (self.reusable and self.completed):
            raise BadStateError("ANeuralNetworksExecution_setLoopTimeout called after the "
                                "execution has started.")
        duration_ns = int(duration_ns)
        if duration_ns > LOOP_TIMEOUT_MAXIMUM_NS:
            vlog.log_warning(TAG, "ANeuralNetworksExecution_setLoopTimeout input exceeds the "
                                  f"maximum allowed duration: {duration_ns} > "
                                  f"{LOOP_TIMEOUT_MAXIMUM_NS}")
            duration_ns = LOOP_TIMEOUT_MAXIMUM_NS
        self.loop_timeout_ns = duration_ns

    # -- compute ---------------------------------------------------------------------------------------
    def _start(self, api: str) -> None:
        with self._lock:
            if self.started and not self.completed:
                raise BadStateError("ANeuralNetworksExecution: execution has already been "
                                    "scheduled")
            if self.started and not self.reusable:
                raise BadStateError("ANeuralNetworksExecution: a non-reusable execution can "
                                    "only compute once")
            if None in self.inputs:
                raise BadDataError("ANeuralNetworksExecution starts compute when not all inputs "
                                   "specified")
            if None in self.outputs:
                raise BadDataError("ANeuralNetworksExecution starts compute when not all "
                                   "outputs specified")
            self.started, self.completed = True, False
        _vlog(f"ExecutionBuilder::compute ({api})")

    def compute(self, api: str = "synchronous API") -> None:
        self._start(api)
        try:
            self._compute_internal()
        finally:
            self.completed = True

    def start_compute(self) -> "Event":
        sync = getprop_int("debug.nn.syncexec-runtime", 0) == 1
        self._start("asynchronous API, non-threaded" if sync else "asynchronous API")
        event = Event()
        if sync:
            event._run(self)
        else:
            threading.Thread(target=event._run, args=(self,), daemon=True).start()
        return event

    def _compute_internal(self) -> None:
        # Devices running IF/WHILE themselves read the loop timeout (passed with each request
        # upstream) from the WHILE operation's context.
        token = set_loop_timeout_ns(self.loop_timeout_ns)
        try:
            self._compute_with_plan()
        finally:
            reset_loop_timeout_ns(token)

    def _compute_with_plan(self) -> None:
        inputs = [a.input_array() for a in self.inputs]
        plan = self.compilation.plan
        start = time.perf_counter_ns()
        self.step_report = []
        if plan.kind == plan.SIMPLE:
            _vlog("SimpleExecutionBuilder::computeInternal")
            outputs, timing = self._run_simple(plan, inputs)
        else:
            _vlog("CompoundExecutionBuilder::computeInternal (from plan, iteratively)")
            outputs, timing = self._run_compound(plan, inputs)
        timing.host_ns = time.perf_counter_ns() - start
        self.timing = timing
        self._deliver(outputs)

    def _run_simple(self, plan, inputs):
        try:
            outputs, timing = plan.prepared.execute(inputs)
            self.step_report.append((plan.device.name, timing))
            return outputs, timing
        except NnapiError as e:
            if e.result_code == ResultCode.OUTPUT_INSUFFICIENT_SIZE:
                raise
            if not self.compilation.allows_cpu_fallback or plan.device is DeviceManager.cpu_device():
                raise
            return self._cpu_fallback_full(inputs)

    def _cpu_fallback_full(self, inputs):
        _vlog("cpuFallbackFull")
        _vlog("Re-compile the model on CPU")
        cpu = DeviceManager.cpu_device()
        prepared = cpu.prepare(self.model, 1, 100, None)
        outputs, timing = prepared.execute(inputs)
        self.step_report = [(cpu.name, timing)]
        return outputs, timing

    def _run_compound(self, plan, inputs):
        """``ExecutionPlan::next`` loop: ExecutionSteps run on their devices; IF, WHILE and GOTO
        steps are interpreted here (control_flow.Interpreter). Values are keyed by (source
        model, operand)."""
        run = Interpreter(plan, self.loop_timeout_ns, _vlog)
        for k, idx in enumerate(self.model.input_indexes):
            run.env[(0, idx)] = inputs[k]
        total = Timing(host_ns=0, device_ns=0, driver_ns=0)
        while True:
            _vlog("looking for next StepExecutor")
            try:
                step = run.next_execution_step()
            except NnapiError as e:
                # A loop timeout in the interpreter ends the execution; other failures may
                # still fall back to the CPU.
                if e.result_code in (ResultCode.MISSED_DEADLINE_TRANSIENT,
                                     ResultCode.MISSED_DEADLINE_PERSISTENT) or \
                        not self.compilation.allows_cpu_fallback:
                    raise
                return self._cpu_fallback_full(inputs)
            if step is None:
                break
            _vlog(f"next: Step#{step.index}: execute on {step.device.name}")
            _vlog(f"StepExecutor::StepExecutor with {len(step.step_inputs)} inputs and "
                  f"{len(step.step_outputs)} outputs")
            step_inputs = [run.value(step.key(src)) for src, _ in step.step_inputs]
            try:
                outs, timing = step.prepared.execute(step_inputs)
                device = step.device
            except NnapiError as e:
                if e.result_code == ResultCode.OUTPUT_INSUFFICIENT_SIZE or \
                        not self.compilation.allows_cpu_fallback:
                    raise
                if step.device is DeviceManager.cpu_device():
                    return self._cpu_fallback_full(inputs)
                _vlog("cpuFallbackPartial")
                try:
                    cpu = DeviceManager.cpu_device()
                    outs, timing = cpu.prepare(step.step_model, 1, 100, None).execute(step_inputs)
                    device = cpu
                except NnapiError:
                    return self._cpu_fallback_full(inputs)
            self.step_report.append((device.name, timing))
            for (src, _), value in zip(step.step_outputs, outs):
                run.env[step.key(src)] = value
            for attr in ("host_ns", "device_ns", "driver_ns"):
                a, b = getattr(total, attr), getattr(timing, attr)
                setattr(total, attr, None if a is None or b is None else a + b)
        return [run.value((0, i)) for i in self.model.output_indexes], total

    def _deliver(self, outputs) -> None:
        insufficient = False
        for k, (arg, value) in enumerate(zip(self.outputs, outputs)):
            value = np.asarray(value)
            self.output_shapes[k] = tuple(value.shape)
            ok = arg.write(value)
            self.output_sufficient[k] = ok
            insufficient |= not ok
        if insufficient:
            raise OutputInsufficientSizeError("ANeuralNetworksExecution: output buffer too small")

    # -- queries --------------------------------------------------------------------------------------
    def _check_output_query(self, fn: str, index: int) -> None:
        if not self.completed:
            raise BadStateError(f"{fn} called before the execution has finished")
        if index < 0 or index >= len(self.outputs):
            raise BadDataError(f"{fn} bad index {index}")

    def get_output_operand_rank(self, index: int) -> int:
        self._check_output_query("ANeuralNetworksExecution_getOutputOperandRank", index)
        return len(self.output_shapes[index])

    def get_output_operand_dimensions(self, index: int) -> tuple:
        fn = "ANeuralNetworksExecution_getOutputOperandDimensions"
        self._check_output_query(fn, index)
        if len(self.output_shapes[index]) == 0:
            raise BadDataError(f"{fn} output {index} is a scalar")
        return self.output_shapes[index]

    def get_duration(self, code: int) -> int:
        if not self.completed:
            raise BadStateError("ANeuralNetworksExecution_getDuration before completion")
        if code not in tuple(DurationCode):
            raise BadDataError(f"ANeuralNetworksExecution_getDuration bad duration code {code}")
        if not self.measure_timing or self.timing is None:
            return UINT64_MAX
        if code == DurationCode.DURATION_ON_HARDWARE:
            v = self.timing.device_ns if self.timing.device_ns is not None else self.timing.host_ns
        elif code == DurationCode.DURATION_IN_DRIVER:
            v = self.timing.driver_ns if self.timing.driver_ns is not None else self.timing.host_ns
        else:
            return UINT64_MAX  # fenced durations: no fenced execution here
        vlog.vlog(vlog.EXECUTION, TAG, f"getDuration({code}): {v}")
        return UINT64_MAX if v is None else int(v)


class Event:
    """``ANeuralNetworksEvent``: completion of an asynchronous execution."""

    def __init__(self):
        self._done = threading.Event()
        self.error: NnapiError | None = None

    def _run(self, execution: Execution) -> None:
        try:
            execution._compute_internal()
        except NnapiError as e:
            self.error = e
        except Exception as e:  # never lose a failure in a worker thread
            self.error = NnapiError(f"execution failed: {e}")
        finally:
            execution.completed = True
            self._done.set()

    def wait(self) -> None:
        self._done.wait()
        if self.error is not None:
            raise self.error


class Burst:
    """``ANeuralNetworksBurst``: reusable per-compilation context, one execution at a time."""

    def __init__(self, compilation):
        if compilation is None:
            raise UnexpectedNullError("ANeuralNetworksBurst_create passed a nullptr")
        if not compilation.is_valid:
            raise BadStateError("ANeuralNetworksBurst_create passed an invalid compilation")
        self.compilation = compilation
        self._busy = threading.Lock()

    def compute(self, execution: Execution) -> None:
        if execution.compilation is not self.compilation:
            raise BadDataError("ANeuralNetworksExecution_burstCompute burst and execution come "
                               "from different compilations")
        if not self._busy.acquire(blocking=False):
            raise BadStateError("ANeuralNetworksBurst is already being used in another call to "
                                "ANeuralNetworksExecution_burstCompute")
        try:
            execution.compute("synchronous API, burst")
        finally:
            self._busy.release()


def _host_buffer(fn: str, buffer, length, writable: bool):
    """The bytes C would read or write for (pointer, length): a C-contiguous ndarray or
    bytes-like object (writable for an output), cut to ``length`` bytes if that is smaller. A
    non-contiguous array, a non-buffer or a ``length`` past the end is BAD_DATA here, at the
    call, rather than a failure at compute."""
    if isinstance(buffer, np.ndarray):
        if not buffer.flags.c_contiguous:
            raise BadDataError(f"{fn} passed a non-contiguous ndarray (C reads a buffer's bytes "
                               "in order): pass np.ascontiguousarray(...)")
        if writable and not buffer.flags.writeable:
            raise BadDataError(f"{fn} needs a writable buffer")
        view = None
    else:
        try:
            view = memoryview(buffer)
        except TypeError:
            raise BadDataError(f"{fn} needs a bytes-like object or an ndarray, not "
                               f"{type(buffer).__name__}") from None
        if not view.c_contiguous:
            raise BadDataError(f"{fn} passed a non-contiguous buffer")
        if writable and view.readonly:
            raise BadDataError(f"{fn} needs a writable buffer")
    nbytes = buffer.nbytes if view is None else view.nbytes
    if length is None or length == nbytes:
        return buffer
    if length > nbytes:
        raise BadDataError(f"{fn} passed length {length} for a buffer of {nbytes} bytes")
    flat = buffer.reshape(-1).view(np.uint8) if view is None else view.cast("B")
    return memoryview(flat)[:length]
