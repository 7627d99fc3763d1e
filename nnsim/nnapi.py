"""The C-shaped NNAPI: ``ANeuralNetworks*`` functions returning result codes.

Python shape (fixed; scripts and conformance tools are written against it):

* every ``ANEURALNETWORKS_*`` constant is a module-level int with the upstream value;
* a C function that returns a value through a pointer returns ``(code, value)``
  (``code, model = ANeuralNetworksModel_create()``); others return the code alone, with C's
  arguments in C's order and a Python sequence where C takes (count, pointer);
* buffers are bytes-like objects or numpy arrays; an output buffer is a writable ndarray that
  compute fills in place; ``None`` stands for NULL.

Like ``runtime/NeuralNetworks.cpp`` every entry point catches the runtime's errors and returns
their result code; nothing raises (an unexpected Python error is OP_FAILED and is logged).
"""
from __future__ import annotations

import functools
import os

import numpy as np

from nnsim.errors import BadDataError, BadStateError, NnapiError, UnexpectedNullError
from nnsim.runtime import vlog
from nnsim.runtime.compilation import CompilationBuilder
from nnsim.runtime.devices import get_device_manager
from nnsim.runtime.execution import Burst, Event, Execution, UINT64_MAX
from nnsim.runtime.memory import Memory
from nnsim.runtime.model import ModelBuilder, runtime_feature_level
from nnsim.runtime.operand import OperandTypeSpec, SymmPerChannelQuantParams
from nnsim.types import (BYTE_SIZE_OF_CACHE_TOKEN, LOOP_TIMEOUT_DEFAULT_NS,
                         LOOP_TIMEOUT_MAXIMUM_NS, MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES,
                         DeviceType, DurationCode, FeatureLevel, FuseCode, OperandType,
                         OperationCode, PaddingCode, PreferenceCode, PriorityCode, ResultCode)

# -- constants --------------------------------------------------------------------------------------
for _enum in (OperandType, OperationCode, ResultCode, PreferenceCode, DurationCode, DeviceType,
              FuseCode, PaddingCode, FeatureLevel):
    for _m in _enum:
        globals()["ANEURALNETWORKS_" + _m.name] = int(_m)
for _m in PriorityCode.__members__:
    globals()["ANEURALNETWORKS_" + _m] = int(PriorityCode[_m])
ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN = BYTE_SIZE_OF_CACHE_TOKEN
ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES = MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES
del _enum, _m

ANeuralNetworksOperandType = OperandTypeSpec
ANeuralNetworksSymmPerChannelQuantParams = SymmPerChannelQuantParams
_NO_ERROR = int(ResultCode.NO_ERROR)


def _code(fn):
    """Return NO_ERROR / the error's result code (tuple-returning functions: (code, value))."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            result = fn(*args, **kwargs)
        except NnapiError as e:
            if str(e):
                vlog.log_error("NeuralNetworks", str(e))
            code = int(e.result_code)
            return (code, None) if getattr(wrapper, "returns_value", False) else code
        except Exception as e:  # never let a Python error escape a C-shaped entry point
            vlog.log_error("NeuralNetworks", f"{fn.__name__}: {type(e).__name__}: {e}")
            code = int(ResultCode.OP_FAILED)
            return (code, None) if getattr(wrapper, "returns_value", False) else code
        if getattr(wrapper, "returns_value", False):
            return _NO_ERROR, result
        return _NO_ERROR
    return wrapper


def _value(fn):
    wrapped = _code(fn)
    wrapped.returns_value = True
    return wrapped


def _need(obj, fn: str, cls=None):
    if obj is None:
        raise UnexpectedNullError(f"{fn} passed a nullptr")
    if cls is not None and not isinstance(obj, cls):
        raise BadDataError(f"{fn} passed an object of the wrong type")
    return obj


# -- model ------------------------------------------------------------------------------------------
@_value
def ANeuralNetworksModel_create():
    return ModelBuilder.create()


def ANeuralNetworksModel_free(model) -> None:
    return None


@_code
def ANeuralNetworksModel_finish(model):
    _need(model, "ANeuralNetworksModel_finish", ModelBuilder).finish()


@_code
def ANeuralNetworksModel_addOperand(model, operand_type):
    fn = "ANeuralNetworksModel_addOperand"
    _need(model, fn, ModelBuilder).add_operand(_need(operand_type, fn))


@_code
def ANeuralNetworksModel_setOperandValue(model, index, buffer, length=None):
    _need(model, "ANeuralNetworksModel_setOperandValue", ModelBuilder).set_operand_value(
        index, buffer, length)


@_code
def ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(model, index, params):
    fn = "ANeuralNetworksModel_setOperandSymmPerChannelQuantParams"
    _need(model, fn, ModelBuilder).set_operand_symm_per_channel_quant_params(
        index, _need(params, fn))


@_code
def ANeuralNetworksModel_setOperandValueFromMemory(model, index, memory, offset, length):
    fn = "ANeuralNetworksModel_setOperandValueFromMemory"
    _need(model, fn, ModelBuilder).set_operand_value_from_memory(
        index, _need(memory, fn, Memory), offset, length)


@_code
def ANeuralNetworksModel_setOperandValueFromModel(model, index, value):
    fn = "ANeuralNetworksModel_setOperandValueFromModel"
    _need(model, fn, ModelBuilder).set_operand_value_from_model(index, _need(value, fn))


@_code
def ANeuralNetworksModel_addOperation(model, op_type, inputs, outputs):
    _need(model, "ANeuralNetworksModel_addOperation", ModelBuilder).add_operation(
        op_type, inputs, outputs)


@_code
def ANeuralNetworksModel_identifyInputsAndOutputs(model, inputs, outputs):
    _need(model, "ANeuralNetworksModel_identifyInputsAndOutputs",
          ModelBuilder).identify_inputs_and_outputs(inputs, outputs)


@_code
def ANeuralNetworksModel_relaxComputationFloat32toFloat16(model, allow):
    _need(model, "ANeuralNetworksModel_relaxComputationFloat32toFloat16",
          ModelBuilder).relax_computation_float32_to_float16(allow)


@_value
def ANeuralNetworksModel_getSupportedOperationsForDevices(model, devices):
    """Returns (code, list of bools in the order operations were added)."""
    fn = "ANeuralNetworksModel_getSupportedOperationsForDevices"
    _need(model, fn, ModelBuilder)
    _need(devices, fn)
    if not model.finished or model.invalid:
        raise BadStateError(f"{fn} passed an unfinished model")
    if len(devices) == 0:
        raise BadDataError(f"{fn} passed an empty device list")
    from nnsim.runtime.plan import supported_by_device
    supported = [False] * len(model.operations)
    for device in devices:
        for sorted_index, ok in enumerate(supported_by_device(_need(device, fn), model)):
            if ok:
                supported[model.sorted_to_original[sorted_index]] = True
    return supported


@_value
def ANeuralNetworksModel_getExtensionOperandType(model, extension_name, operand_code_within):
    raise BadDataError("Extensions are not supported by nnsim")


@_value
def ANeuralNetworksModel_getExtensionOperationType(model, extension_name, op_code_within):
    raise BadDataError("Extensions are not supported by nnsim")


@_code
def ANeuralNetworksModel_setOperandExtensionData(model, index, data, length=None):
    raise BadDataError("Extensions are not supported by nnsim")


# -- compilation ------------------------------------------------------------------------------------
@_value
def ANeuralNetworksCompilation_create(model):
    return CompilationBuilder(_need(model, "ANeuralNetworksCompilation_create"))


@_value
def ANeuralNetworksCompilation_createForDevices(model, devices):
    fn = "ANeuralNetworksCompilation_createForDevices"
    _need(model, fn)
    _need(devices, fn)
    known = get_device_manager().get_devices()
    for d in devices:
        if d is None:
            raise UnexpectedNullError(f"{fn} passed a nullptr device")
        if d not in known:
            raise BadDataError(f"{fn} passed an unknown device")
    return CompilationBuilder.create_for_devices(model, list(devices))


def ANeuralNetworksCompilation_free(compilation) -> None:
    return None


@_code
def ANeuralNetworksCompilation_setPreference(compilation, preference):
    _need(compilation, "ANeuralNetworksCompilation_setPreference",
          CompilationBuilder).set_preference(preference)


@_code
def ANeuralNetworksCompilation_setPriority(compilation, priority):
    _need(compilation, "ANeuralNetworksCompilation_setPriority",
          CompilationBuilder).set_priority(priority)


@_code
def ANeuralNetworksCompilation_setTimeout(compilation, duration_ns):
    _need(compilation, "ANeuralNetworksCompilation_setTimeout",
          CompilationBuilder).set_timeout(duration_ns)


@_code
def ANeuralNetworksCompilation_setCaching(compilation, cache_dir, token):
    _need(compilation, "ANeuralNetworksCompilation_setCaching",
          CompilationBuilder).set_caching(cache_dir, token)


@_code
def ANeuralNetworksCompilation_finish(compilation):
    _need(compilation, "ANeuralNetworksCompilation_finish", CompilationBuilder).finish()


@_code
def ANeuralNetworksCompilation_addExtensionAttribute(compilation, ext, code, data):
    raise BadDataError("Extensions are not supported by nnsim")


def _preferred(compilation, index, inputs: bool, what: str):
    fn = f"ANeuralNetworksCompilation_getPreferredMemory{what}For{'Input' if inputs else 'Output'}"
    _need(compilation, fn, CompilationBuilder)
    if not compilation.is_valid:
        raise BadStateError(f"{fn} passed an invalid compilation")
    count = len(compilation.model.input_indexes if inputs else compilation.model.output_indexes)
    if index < 0 or index >= count:
        raise BadDataError(f"{fn} passed an invalid index {index}")
    plan = compilation.plan
    devices = [plan.device] if plan.kind == plan.SIMPLE else [s.device for s in plan.steps]
    attr = "preferred_memory_alignment" if what == "Alignment" else "preferred_memory_padding"
    return max(getattr(d, attr) for d in devices)


@_value
def ANeuralNetworksCompilation_getPreferredMemoryAlignmentForInput(compilation, index):
    return _preferred(compilation, index, True, "Alignment")


@_value
def ANeuralNetworksCompilation_getPreferredMemoryPaddingForInput(compilation, index):
    return _preferred(compilation, index, True, "Padding")


@_value
def ANeuralNetworksCompilation_getPreferredMemoryAlignmentForOutput(compilation, index):
    return _preferred(compilation, index, False, "Alignment")


@_value
def ANeuralNetworksCompilation_getPreferredMemoryPaddingForOutput(compilation, index):
    return _preferred(compilation, index, False, "Padding")


# -- execution --------------------------------------------------------------------------------------
@_value
def ANeuralNetworksExecution_create(compilation):
    return Execution(_need(compilation, "ANeuralNetworksExecution_create", CompilationBuilder))


def ANeuralNetworksExecution_free(execution) -> None:
    return None


@_code
def ANeuralNetworksExecution_setInput(execution, index, operand_type, buffer, length=None):
    _need(execution, "ANeuralNetworksExecution_setInput", Execution).set_input(
        index, operand_type, buffer, length)


@_code
def ANeuralNetworksExecution_setInputFromMemory(execution, index, operand_type, memory, offset,
                                                length):
    _need(execution, "ANeuralNetworksExecution_setInputFromMemory",
          Execution).set_input_from_memory(index, operand_type, memory, offset, length)


@_code
def ANeuralNetworksExecution_setOutput(execution, index, operand_type, buffer, length=None):
    _need(execution, "ANeuralNetworksExecution_setOutput", Execution).set_output(
        index, operand_type, buffer, length)


@_code
def ANeuralNetworksExecution_setOutputFromMemory(execution, index, operand_type, memory, offset,
                                                 length):
    _need(execution, "ANeuralNetworksExecution_setOutputFromMemory",
          Execution).set_output_from_memory(index, operand_type, memory, offset, length)


@_code
def ANeuralNetworksExecution_compute(execution):
    _need(execution, "ANeuralNetworksExecution_compute", Execution).compute()


@_value
def ANeuralNetworksExecution_startCompute(execution):
    return _need(execution, "ANeuralNetworksExecution_startCompute", Execution).start_compute()


@_value
def ANeuralNetworksExecution_startComputeWithDependencies(execution, dependencies, duration_ns):
    fn = "ANeuralNetworksExecution_startComputeWithDependencies"
    _need(execution, fn, Execution)
    for dep in _need(dependencies, fn):
        _need(dep, fn, Event).wait()
    return execution.start_compute()


@_code
def ANeuralNetworksExecution_burstCompute(execution, burst):
    fn = "ANeuralNetworksExecution_burstCompute"
    _need(burst, fn, Burst).compute(_need(execution, fn, Execution))


@_value
def ANeuralNetworksExecution_getOutputOperandRank(execution, index):
    return _need(execution, "ANeuralNetworksExecution_getOutputOperandRank",
                 Execution).get_output_operand_rank(index)


@_value
def ANeuralNetworksExecution_getOutputOperandDimensions(execution, index):
    return list(_need(execution, "ANeuralNetworksExecution_getOutputOperandDimensions",
                      Execution).get_output_operand_dimensions(index))


@_code
def ANeuralNetworksExecution_setMeasureTiming(execution, measure):
    _need(execution, "ANeuralNetworksExecution_setMeasureTiming",
          Execution).set_measure_timing(measure)


@_value
def ANeuralNetworksExecution_getDuration(execution, duration_code):
    return _need(execution, "ANeuralNetworksExecution_getDuration",
                 Execution).get_duration(duration_code)


@_code
def ANeuralNetworksExecution_setTimeout(execution, duration_ns):
    _need(execution, "ANeuralNetworksExecution_setTimeout", Execution).set_timeout(duration_ns)


@_code
def ANeuralNetworksExecution_setLoopTimeout(execution, duration_ns):
    _need(execution, "ANeuralNetworksExecution_setLoopTimeout",
          Execution).set_loop_timeout(duration_ns)


@_code
def ANeuralNetworksExecution_enableInputAndOutputPadding(execution, enable):
    ex = _need(execution, "ANeuralNetworksExecution_enableInputAndOutputPadding", Execution)
    if ex.started or any(a is not None for a in ex.inputs + ex.outputs):
        raise BadStateError("ANeuralNetworksExecution_enableInputAndOutputPadding must be "
                            "called before any input or output is set")
    ex.padding_enabled = bool(enable)


@_code
def ANeuralNetworksExecution_setReusable(execution, reusable):
    _need(execution, "ANeuralNetworksExecution_setReusable", Execution).set_reusable(reusable)


@_code
def ANeuralNetworksExecution_addExtensionAttribute(execution, ext, code, data):
    raise BadDataError("Extensions are not supported by nnsim")


# -- events and bursts --------------------------------------------------------------------------------
@_code
def ANeuralNetworksEvent_wait(event):
    _need(event, "ANeuralNetworksEvent_wait", Event).wait()


def ANeuralNetworksEvent_free(event) -> None:
    if isinstance(event, Event):
        event._done.wait()  # upstream free waits for the computation


@_value
def ANeuralNetworksEvent_createFromSyncFenceFd(sync_fence_fd):
    if not isinstance(sync_fence_fd, int) or sync_fence_fd < 0:
        raise BadDataError("ANeuralNetworksEvent_createFromSyncFenceFd passed an invalid fd")
    raise BadDataError("ANeuralNetworksEvent_createFromSyncFenceFd: sync fences do not exist "
                       "outside Android")


@_value
def ANeuralNetworksEvent_getSyncFenceFd(event):
    _need(event, "ANeuralNetworksEvent_getSyncFenceFd", Event)
    raise BadDataError("ANeuralNetworksEvent_getSyncFenceFd: the event has no sync fence")


@_value
def ANeuralNetworksBurst_create(compilation):
    return Burst(_need(compilation, "ANeuralNetworksBurst_create", CompilationBuilder))


def ANeuralNetworksBurst_free(burst) -> None:
    return None


# -- memory -------------------------------------------------------------------------------------------
@_value
def ANeuralNetworksMemory_createFromFd(size, protect, fd, offset):
    if not isinstance(fd, int) or fd < 0:
        raise BadDataError("ANeuralNetworksMemory_createFromFd passed an invalid fd")
    try:
        os.fstat(fd)
    except OSError:
        raise BadDataError("ANeuralNetworksMemory_createFromFd passed an invalid fd") from None
    return Memory.create_from_fd(size, protect, fd, offset)


@_value
def ANeuralNetworksMemory_createFromAHardwareBuffer(ahwb):
    if ahwb is None:
        raise UnexpectedNullError("ANeuralNetworksMemory_createFromAHardwareBuffer passed a "
                                  "nullptr")
    raise BadDataError("ANeuralNetworksMemory_createFromAHardwareBuffer: AHardwareBuffer does "
                       "not exist outside Android")


def ANeuralNetworksMemory_createFromBytes(data):
    """nnsim extension: shared memory initialised from bytes; returns (code, memory)."""
    return _NO_ERROR, Memory.from_bytes(data)


@_value
def ANeuralNetworksMemory_createFromDesc(desc):
    from nnsim.runtime.memory_desc import MemoryDesc
    return _need(desc, "ANeuralNetworksMemory_createFromDesc", MemoryDesc).allocate()


@_code
def ANeuralNetworksMemory_copy(src, dst):
    fn = "ANeuralNetworksMemory_copy"
    _need(src, fn, Memory)
    _need(dst, fn, Memory)
    if src is dst:
        return
    if src.size != dst.size:
        raise BadDataError(f"{fn} -- incompatible memory sizes")
    if getattr(src, "initialized", True) is False:
        raise BadDataError(f"{fn} -- uninitialized source memory")
    dst.view(0, dst.size)[:] = src.view(0, src.size)
    dst.initialized = True


def ANeuralNetworksMemory_free(memory) -> None:
    return None


@_value
def ANeuralNetworksMemoryDesc_create():
    from nnsim.runtime.memory_desc import MemoryDesc
    return MemoryDesc()


def ANeuralNetworksMemoryDesc_free(desc) -> None:
    return None


@_code
def ANeuralNetworksMemoryDesc_addInputRole(desc, compilation, index, frequency):
    from nnsim.runtime.memory_desc import MemoryDesc
    _need(desc, "ANeuralNetworksMemoryDesc_addInputRole", MemoryDesc).add_role(
        compilation, index, frequency, True)


@_code
def ANeuralNetworksMemoryDesc_addOutputRole(desc, compilation, index, frequency):
    from nnsim.runtime.memory_desc import MemoryDesc
    _need(desc, "ANeuralNetworksMemoryDesc_addOutputRole", MemoryDesc).add_role(
        compilation, index, frequency, False)


@_code
def ANeuralNetworksMemoryDesc_setDimensions(desc, dimensions):
    from nnsim.runtime.memory_desc import MemoryDesc
    _need(desc, "ANeuralNetworksMemoryDesc_setDimensions", MemoryDesc).set_dimensions(dimensions)


@_code
def ANeuralNetworksMemoryDesc_finish(desc):
    from nnsim.runtime.memory_desc import MemoryDesc
    _need(desc, "ANeuralNetworksMemoryDesc_finish", MemoryDesc).finish()


# -- devices ------------------------------------------------------------------------------------------
@_value
def ANeuralNetworks_getDeviceCount():
    return len(get_device_manager().get_devices())


@_value
def ANeuralNetworks_getDevice(dev_index):
    devices = get_device_manager().get_devices()
    if not isinstance(dev_index, (int, np.integer)) or not 0 <= dev_index < len(devices):
        raise BadDataError(f"ANeuralNetworks_getDevice passed an invalid device index "
                           f"{dev_index}")
    return devices[dev_index]


@_value
def ANeuralNetworksDevice_getName(device):
    return _need(device, "ANeuralNetworksDevice_getName").name


@_value
def ANeuralNetworksDevice_getType(device):
    return int(_need(device, "ANeuralNetworksDevice_getType").device_type)


@_value
def ANeuralNetworksDevice_getVersion(device):
    d = _need(device, "ANeuralNetworksDevice_getVersion")
    return "UNKNOWN" if d.feature_level <= FeatureLevel.FEATURE_LEVEL_2 else d.version_string


@_value
def ANeuralNetworksDevice_getFeatureLevel(device):
    d = _need(device, "ANeuralNetworksDevice_getFeatureLevel")
    return int(min(runtime_feature_level(), d.feature_level))


@_code
def ANeuralNetworksDevice_wait(device):
    _need(device, "ANeuralNetworksDevice_wait")


@_value
def ANeuralNetworksDevice_getExtensionSupport(device, extension_name):
    _need(device, "ANeuralNetworksDevice_getExtensionSupport")
    _need(extension_name, "ANeuralNetworksDevice_getExtensionSupport")
    return False


def ANeuralNetworks_getDefaultLoopTimeout() -> int:
    return LOOP_TIMEOUT_DEFAULT_NS


def ANeuralNetworks_getMaximumLoopTimeout() -> int:
    return LOOP_TIMEOUT_MAXIMUM_NS


def ANeuralNetworks_getRuntimeFeatureLevel() -> int:
    """The emulated Android's runtime feature level (``ro.build.version.sdk``; FL5 unset)."""
    return runtime_feature_level()


__all__ = [n for n in dir() if n.startswith(("ANeuralNetworks", "ANEURALNETWORKS_"))] + [
    "UINT64_MAX"]
