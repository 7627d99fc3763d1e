"""The C-shaped NNAPI: ``ANeuralNetworks*`` functions returning result codes.

Python shape (fixed; scripts and conformance tools are written against it):

* every ``ANEURALNETWORKS_*`` constant is a module-level int with the upstream value;
* a C function that returns a value through a pointer returns ``(code, value)``
  (``code, model = ANeuralNetworksModel_create()``); others return the code alone, with C's
  arguments in C's order and a Python sequence where C takes (count, pointer);
* buffers are bytes-like objects or numpy arrays; an output buffer is a writable ndarray that
  compute fills in place; ``None`` stands for NULL.

Like ``runtime/NeuralNetworks.cpp`` every entry point catches the runtime's errors and returns
their result code; nothing raises, whatever it is given (an unexpected Python error is OP_FAILED
and is logged; an argument of the wrong Python type is BAD_DATA).

Misuse that is undefined behaviour in C is flagged, as a debug build of the runtime would:

* ``None`` where C passes a pointer the runtime dereferences is ANEURALNETWORKS_UNEXPECTED_NULL,
  exactly where upstream's null checks fire; ``*_free(None)`` is valid and does nothing.
* Every ``*_free`` marks its object freed and returns a code (C's functions return void; here
  NO_ERROR). Any later use of a freed object -- or of an object that needs one which was freed
  (a compilation whose model was freed, an execution whose compilation or bound memory was
  freed, a burst whose compilation was freed, ...) -- and a second free return
  ANEURALNETWORKS_BAD_STATE with an ERROR line naming the function ("... passed a freed
  ANeuralNetworksModel"). On a device this is a crash or silent corruption, so the simulator
  uses one code, BAD_STATE, for all of it. ``Execution_free`` of an execution still computing
  is refused (ERROR line, BAD_STATE) and the execution stays usable, as upstream ignores it.
* ``setInput``/``setOutput`` take a C-contiguous buffer of exactly the operand's byte size (or
  ``length`` bytes); anything else is BAD_DATA at the call. An ndarray whose dtype differs from
  the operand's is accepted as C would (its bytes are reinterpreted), with one WARNING line per
  execution.
"""
from __future__ import annotations

import os

import numpy as np

from nnsim._capi import (_FREED, _bytes_like, _code, _device, _free, _index, _indexes, _need,
                         _size, _value)
from nnsim.drivers.base import Driver
from nnsim.errors import BadDataError, BadStateError, UnexpectedNullError
from nnsim.platform import vlog
from nnsim.runtime.compilation import CompilationBuilder
from nnsim.runtime.devices import get_device_manager
from nnsim.runtime.execution import UINT64_MAX, Burst, Event, Execution
from nnsim.runtime.memory import Memory
from nnsim.runtime.memory_desc import MemoryDesc
from nnsim.runtime.model import ModelBuilder, runtime_feature_level
from nnsim.runtime.plan import supported_by_device
from nnsim.common.operand import OperandTypeSpec, SymmPerChannelQuantParams
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
# -- model ------------------------------------------------------------------------------------------
@_value
def ANeuralNetworksModel_create():
    return ModelBuilder.create()


@_code
def ANeuralNetworksModel_free(model):
    _free(model, "ANeuralNetworksModel_free", ModelBuilder)


@_code
def ANeuralNetworksModel_finish(model):
    _need(model, "ANeuralNetworksModel_finish", ModelBuilder).finish()


@_code
def ANeuralNetworksModel_addOperand(model, operand_type):
    fn = "ANeuralNetworksModel_addOperand"
    _need(model, fn, ModelBuilder).add_operand(_need(operand_type, fn, OperandTypeSpec))


@_code
def ANeuralNetworksModel_setOperandValue(model, index, buffer, length=None):
    fn = "ANeuralNetworksModel_setOperandValue"
    _need(model, fn, ModelBuilder).set_operand_value(
        _index(index, fn), _bytes_like(buffer, fn),
        None if length is None else _size(length, fn, "length"))


@_code
def ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(model, index, params):
    fn = "ANeuralNetworksModel_setOperandSymmPerChannelQuantParams"
    _need(model, fn, ModelBuilder).set_operand_symm_per_channel_quant_params(
        _index(index, fn), _need(params, fn, SymmPerChannelQuantParams))


@_code
def ANeuralNetworksModel_setOperandValueFromMemory(model, index, memory, offset, length):
    fn = "ANeuralNetworksModel_setOperandValueFromMemory"
    _need(model, fn, ModelBuilder).set_operand_value_from_memory(
        _index(index, fn), _need(memory, fn, Memory), _size(offset, fn, "offset"),
        _size(length, fn, "length"))
    # The memory must outlive the model (C); remembered to flag a use after its free.
    model.__dict__.setdefault("_nnapi_memories", []).append(memory)


@_code
def ANeuralNetworksModel_setOperandValueFromModel(model, index, value):
    fn = "ANeuralNetworksModel_setOperandValueFromModel"
    _need(model, fn, ModelBuilder).set_operand_value_from_model(
        _index(index, fn), _need(value, fn, ModelBuilder))


@_code
def ANeuralNetworksModel_addOperation(model, op_type, inputs, outputs):
    fn = "ANeuralNetworksModel_addOperation"
    _need(model, fn, ModelBuilder)
    inputs, outputs = _indexes(inputs, fn), _indexes(outputs, fn)
    model.add_operation(_index(op_type, fn, "operation type"), inputs, outputs)


@_code
def ANeuralNetworksModel_identifyInputsAndOutputs(model, inputs, outputs):
    fn = "ANeuralNetworksModel_identifyInputsAndOutputs"
    _need(model, fn, ModelBuilder)
    model.identify_inputs_and_outputs(_indexes(inputs, fn), _indexes(outputs, fn))


@_code
def ANeuralNetworksModel_relaxComputationFloat32toFloat16(model, allow):
    _need(model, "ANeuralNetworksModel_relaxComputationFloat32toFloat16",
          ModelBuilder).relax_computation_float32_to_float16(allow)


@_value
def ANeuralNetworksModel_getSupportedOperationsForDevices(model, devices):
    """Returns (code, list of bools in the order operations were added)."""
    fn = "ANeuralNetworksModel_getSupportedOperationsForDevices"
    _need(model, fn, ModelBuilder)
    _need(devices, fn, (list, tuple))
    if not model.finished or model.invalid:
        raise BadStateError(f"{fn} passed an unfinished model")
    if len(devices) == 0:
        raise BadDataError(f"{fn} passed an empty device list")
    supported = [False] * len(model.operations)
    for device in devices:
        for sorted_index, ok in enumerate(supported_by_device(_device(device, fn), model)):
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
    return CompilationBuilder(_need(model, "ANeuralNetworksCompilation_create", ModelBuilder))


@_value
def ANeuralNetworksCompilation_createForDevices(model, devices):
    fn = "ANeuralNetworksCompilation_createForDevices"
    _need(model, fn, ModelBuilder)
    devices = list(_need(devices, fn, (list, tuple)))
    for d in devices:
        _device(d, fn)
    return CompilationBuilder.create_for_devices(model, devices)


@_code
def ANeuralNetworksCompilation_free(compilation):
    _free(compilation, "ANeuralNetworksCompilation_free", CompilationBuilder)


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
    fn = "ANeuralNetworksCompilation_setCaching"
    if compilation is None or cache_dir is None or token is None:
        raise UnexpectedNullError(f"{fn} passed a nullptr")
    _need(compilation, fn, CompilationBuilder)
    if not isinstance(cache_dir, (str, os.PathLike)):
        raise BadDataError(f"{fn} needs a directory name, not {type(cache_dir).__name__}")
    _bytes_like(token, fn)
    if memoryview(token).nbytes != ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN:
        raise BadDataError(f"{fn} token must be {ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN} "
                           "bytes")
    compilation.set_caching(os.fspath(cache_dir), bytes(memoryview(token).cast("B")))


@_code
def ANeuralNetworksCompilation_finish(compilation):
    _need(compilation, "ANeuralNetworksCompilation_finish", CompilationBuilder).finish()


@_code
def ANeuralNetworksCompilation_addExtensionAttribute(compilation, ext, code, data):
    raise BadDataError("Extensions are not supported by nnsim")


def _preferred(compilation, index, inputs: bool, what: str):
    fn = f"ANeuralNetworksCompilation_getPreferredMemory{what}For{'Input' if inputs else 'Output'}"
    _need(compilation, fn, CompilationBuilder)
    index = _index(index, fn)
    if not compilation.is_valid:
        raise BadStateError(f"{fn} passed an invalid compilation")
    count = len(compilation.model.input_indexes if inputs else compilation.model.output_indexes)
    if index < 0 or index >= count:
        raise BadDataError(f"{fn} passed an invalid index {index}")
    plan = compilation.plan
    devices = [plan.device] if plan.kind == plan.SIMPLE else \
        [s.device for s in plan.execution_steps()]
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
_UINT32_MAX = 2**32 - 1


def _type_or_none(operand_type, fn: str):
    if operand_type is not None and not isinstance(operand_type, OperandTypeSpec):
        raise BadDataError(f"{fn} passed an operand type of the wrong type")
    return operand_type


def _length(length, fn: str):
    return None if length is None else _index(length, fn)


def _frequency(value, fn: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise BadDataError(f"{fn} -- invalid frequency {value!r}")
    return float(value)


def _warn_dtype(execution, fn: str, index: int, buffer, is_input: bool) -> None:
    """C takes bytes, so a buffer of another dtype is reinterpreted; say so once per execution."""
    if not isinstance(buffer, np.ndarray) or getattr(execution, "_nnapi_dtype_warned", False):
        return
    model = execution.model
    operand = model.operands[(model.input_indexes if is_input else model.output_indexes)[index]]
    try:
        expected = operand.dtype()
    except (KeyError, ValueError):  # OEM types have no numpy dtype: nothing to compare
        return
    if buffer.dtype != expected:
        execution._nnapi_dtype_warned = True
        what = "input" if is_input else "output"
        type_name = OperandType(operand.type).name
        vlog.log_warning("NeuralNetworks",
                         f"{fn}: {what} {index} is a {buffer.dtype} array but the operand is "
                         f"{type_name} ({expected}); its bytes are reinterpreted as "
                         f"{expected}, as C would")


@_value
def ANeuralNetworksExecution_create(compilation):
    return Execution(_need(compilation, "ANeuralNetworksExecution_create", CompilationBuilder))


@_code
def ANeuralNetworksExecution_free(execution):
    fn = "ANeuralNetworksExecution_free"
    if isinstance(execution, Execution) and execution.started and not execution.completed:
        raise BadStateError(f"{fn} passed an in-flight ANeuralNetworksExecution and is "
                            "therefore ignored")
    _free(execution, fn, Execution)


@_code
def ANeuralNetworksExecution_setInput(execution, index, operand_type, buffer, length=None):
    fn = "ANeuralNetworksExecution_setInput"
    _need(execution, fn, Execution).set_input(
        _index(index, fn), _type_or_none(operand_type, fn), buffer, _length(length, fn))
    _warn_dtype(execution, fn, index, buffer, True)


@_code
def ANeuralNetworksExecution_setInputFromMemory(execution, index, operand_type, memory, offset,
                                                length):
    fn = "ANeuralNetworksExecution_setInputFromMemory"
    _need(execution, fn, Execution).set_input_from_memory(
        _index(index, fn), _type_or_none(operand_type, fn), _need(memory, fn, Memory),
        _index(offset, fn), _index(length, fn))


@_code
def ANeuralNetworksExecution_setOutput(execution, index, operand_type, buffer, length=None):
    fn = "ANeuralNetworksExecution_setOutput"
    _need(execution, fn, Execution).set_output(
        _index(index, fn), _type_or_none(operand_type, fn), buffer, _length(length, fn))
    _warn_dtype(execution, fn, index, buffer, False)


@_code
def ANeuralNetworksExecution_setOutputFromMemory(execution, index, operand_type, memory, offset,
                                                 length):
    fn = "ANeuralNetworksExecution_setOutputFromMemory"
    _need(execution, fn, Execution).set_output_from_memory(
        _index(index, fn), _type_or_none(operand_type, fn), _need(memory, fn, Memory),
        _index(offset, fn), _index(length, fn))


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
    for dep in _need(dependencies, fn, (list, tuple)):
        _need(dep, fn, Event).wait()
    return execution.start_compute()


@_code
def ANeuralNetworksExecution_burstCompute(execution, burst):
    fn = "ANeuralNetworksExecution_burstCompute"
    if execution is None or burst is None:
        raise UnexpectedNullError(f"{fn} passed a nullptr")
    _need(burst, fn, Burst).compute(_need(execution, fn, Execution))


@_value
def ANeuralNetworksExecution_getOutputOperandRank(execution, index):
    fn = "ANeuralNetworksExecution_getOutputOperandRank"
    return _need(execution, fn, Execution).get_output_operand_rank(_index(index, fn))


@_value
def ANeuralNetworksExecution_getOutputOperandDimensions(execution, index):
    fn = "ANeuralNetworksExecution_getOutputOperandDimensions"
    return list(_need(execution, fn, Execution).get_output_operand_dimensions(_index(index, fn)))


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
    fn = "ANeuralNetworksExecution_setLoopTimeout"
    _need(execution, fn, Execution).set_loop_timeout(_size(duration_ns, fn, "duration"))


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


@_code
def ANeuralNetworksEvent_free(event):
    if isinstance(event, Event) and not getattr(event, _FREED, False):
        event._done.wait()  # upstream free waits for the computation
    _free(event, "ANeuralNetworksEvent_free", Event)


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


@_code
def ANeuralNetworksBurst_free(burst):
    _free(burst, "ANeuralNetworksBurst_free", Burst)


# -- memory -------------------------------------------------------------------------------------------
@_value
def ANeuralNetworksMemory_createFromFd(size, protect, fd, offset):
    fn = "ANeuralNetworksMemory_createFromFd"
    size, offset = _size(size, fn, "size"), _size(offset, fn, "offset")
    protect = _index(protect, fn, "protection")
    if not isinstance(fd, (int, np.integer)) or not 0 <= fd < 2**31:
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


@_value
def ANeuralNetworksMemory_createFromBytes(data):
    """nnsim extension: shared memory initialised from a bytes-like object or ndarray;
    returns (code, memory). Its size is the object's byte size (an int is not a size)."""
    fn = "ANeuralNetworksMemory_createFromBytes"
    _need(data, fn)
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    try:
        view = memoryview(data)
    except TypeError:
        raise BadDataError(f"{fn} needs a bytes-like object or an ndarray, "
                           f"not {type(data).__name__}") from None
    if view.nbytes == 0:
        raise BadDataError(f"{fn} passed an empty buffer")
    return Memory.from_bytes(view.cast("B") if view.c_contiguous else view.tobytes())


@_value
def ANeuralNetworksMemory_createFromDesc(desc):
    return _need(desc, "ANeuralNetworksMemory_createFromDesc", MemoryDesc).allocate()


@_code
def ANeuralNetworksMemory_copy(src, dst):
    fn = "ANeuralNetworksMemory_copy"
    if src is None or dst is None:
        raise UnexpectedNullError(f"{fn} passed a nullptr")
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


@_code
def ANeuralNetworksMemory_free(memory):
    _free(memory, "ANeuralNetworksMemory_free", Memory)


@_value
def ANeuralNetworksMemoryDesc_create():
    return MemoryDesc()


@_code
def ANeuralNetworksMemoryDesc_free(desc):
    _free(desc, "ANeuralNetworksMemoryDesc_free", MemoryDesc)


@_code
def ANeuralNetworksMemoryDesc_addInputRole(desc, compilation, index, frequency):
    fn = "ANeuralNetworksMemoryDesc_addInputRole"
    if desc is None or compilation is None:
        raise UnexpectedNullError(f"{fn} passed a nullptr")
    _need(desc, fn, MemoryDesc).add_role(_need(compilation, fn, CompilationBuilder),
                                         _index(index, fn), _frequency(frequency, fn), True)


@_code
def ANeuralNetworksMemoryDesc_addOutputRole(desc, compilation, index, frequency):
    fn = "ANeuralNetworksMemoryDesc_addOutputRole"
    if desc is None or compilation is None:
        raise UnexpectedNullError(f"{fn} passed a nullptr")
    _need(desc, fn, MemoryDesc).add_role(_need(compilation, fn, CompilationBuilder),
                                         _index(index, fn), _frequency(frequency, fn), False)


@_code
def ANeuralNetworksMemoryDesc_setDimensions(desc, dimensions):
    fn = "ANeuralNetworksMemoryDesc_setDimensions"
    _need(desc, fn, MemoryDesc)
    if dimensions is None:
        dimensions = ()  # C: rank 0 with a null pointer is valid
    if not isinstance(dimensions, (list, tuple, np.ndarray)):
        raise BadDataError(f"{fn} needs a sequence of dimensions")
    dims = [_index(d, fn) for d in dimensions]
    if any(not 0 <= d <= _UINT32_MAX for d in dims):
        raise BadDataError(f"{fn} passed a dimension that is not a uint32_t")
    desc.set_dimensions(dims)


@_code
def ANeuralNetworksMemoryDesc_finish(desc):
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
    return _need(device, "ANeuralNetworksDevice_getName", Driver).name


@_value
def ANeuralNetworksDevice_getType(device):
    return int(_need(device, "ANeuralNetworksDevice_getType", Driver).device_type)


@_value
def ANeuralNetworksDevice_getVersion(device):
    d = _need(device, "ANeuralNetworksDevice_getVersion", Driver)
    return "UNKNOWN" if d.feature_level <= FeatureLevel.FEATURE_LEVEL_2 else d.version_string


@_value
def ANeuralNetworksDevice_getFeatureLevel(device):
    d = _need(device, "ANeuralNetworksDevice_getFeatureLevel", Driver)
    return int(min(runtime_feature_level(), d.feature_level))


@_code
def ANeuralNetworksDevice_wait(device):
    _need(device, "ANeuralNetworksDevice_wait", Driver)


@_value
def ANeuralNetworksDevice_getExtensionSupport(device, extension_name):
    _need(device, "ANeuralNetworksDevice_getExtensionSupport", Driver)
    _need(extension_name, "ANeuralNetworksDevice_getExtensionSupport", str)
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
