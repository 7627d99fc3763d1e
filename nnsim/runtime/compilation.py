"""CompilationBuilder: ``ANeuralNetworksCompilation`` (runtime/CompilationBuilder.cpp, 3.1)."""
from __future__ import annotations

from nnsim.errors import BadDataError, BadStateError, NnapiError, UnexpectedNullError
from nnsim.platform import vlog
from nnsim.runtime import trace
from nnsim.runtime.cache import CacheInfo
from nnsim.runtime.devices import DeviceManager, get_device_manager
from nnsim.runtime.plan import ExecutionPlan, partition_the_work
from nnsim.types import (BYTE_SIZE_OF_CACHE_TOKEN, PreferenceCode, PriorityCode, ResultCode)

TAG = "CompilationBuilder"
PARTITIONING_NO = 0
PARTITIONING_WITH_FALLBACK = 1
PARTITIONING_WITHOUT_FALLBACK = 2


class CompilationBuilder:
    """A model compiled for a list of devices.

    ``explicit_device_list`` is True for ``createForDevices``: partitioning is then always
    mode 2 (no CPU fallback), and timeouts / timing measurement need exactly one device.
    """

    def __init__(self, model, devices=None, explicit_device_list: bool = False):
        if model is None:
            raise UnexpectedNullError("ANeuralNetworksCompilation_create passed a nullptr")
        if not model.finished or model.invalid:
            raise BadStateError("ANeuralNetworksCompilation_create passed an unfinished model")
        self.model = model
        self.devices = list(devices) if devices is not None else \
            get_device_manager().get_devices()
        self.explicit_device_list = explicit_device_list
        self.partitioning = PARTITIONING_WITHOUT_FALLBACK if explicit_device_list else \
            DeviceManager.partitioning()
        self.preference = PreferenceCode.PREFER_FAST_SINGLE_ANSWER
        self.priority = PriorityCode.PRIORITY_DEFAULT
        self.timeout_ns = None
        self.cache_info: CacheInfo | None = None
        self.finished = False
        self.plan: ExecutionPlan | None = None
        vlog.vlog(vlog.COMPILATION, TAG, "CompilationBuilder::CompilationBuilder")

    @classmethod
    def create_for_devices(cls, model, devices):
        if not devices:
            raise BadDataError("ANeuralNetworksCompilation_createForDevices no device specified")
        if len(set(id(d) for d in devices)) != len(devices):
            raise BadDataError("ANeuralNetworksCompilation_createForDevices duplicate devices")
        return cls(model, devices, explicit_device_list=True)

    def _check_not_finished(self, fn: str) -> None:
        if self.finished:
            raise BadStateError(f"{fn} can't modify after compilation finished")

    def set_preference(self, preference: int) -> None:
        self._check_not_finished("ANeuralNetworksCompilation_setPreference")
        if not isinstance(preference, int) or not 0 <= preference < 3:
            raise BadDataError(f"ANeuralNetworksCompilation_setPreference invalid preference "
                               f"{preference}")
        self.preference = PreferenceCode(preference)

    def set_priority(self, priority: int) -> None:
        self._check_not_finished("ANeuralNetworksCompilation_setPriority")
        if priority not in (90, 100, 110):
            raise BadDataError(f"ANeuralNetworksCompilation_setPriority invalid priority "
                               f"{priority}")
        self.priority = priority

    def set_timeout(self, duration_ns: int) -> None:
        self._check_not_finished("ANeuralNetworksCompilation_setTimeout")
        if not (self.explicit_device_list and len(self.devices) == 1):
            raise BadDataError("ANeuralNetworksCompilation_setTimeout called on an "
                               "ANeuralNetworksCompilation that was not created by "
                               "ANeuralNetworksCompilation_createForDevices with numDevices = 1")
        self.timeout_ns = duration_ns or None

    def set_caching(self, cache_dir: str, token: bytes) -> None:
        self._check_not_finished("ANeuralNetworksCompilation_setCaching")
        if cache_dir is None or token is None:
            raise UnexpectedNullError("ANeuralNetworksCompilation_setCaching passed a nullptr")
        token = bytes(token)
        if len(token) != BYTE_SIZE_OF_CACHE_TOKEN:
            raise BadDataError("ANeuralNetworksCompilation_setCaching token must be 32 bytes")
        if not cache_dir.endswith("/"):
            cache_dir += "/"
        self.cache_info = CacheInfo(cache_dir, token)

    def finish(self) -> None:
        if self.finished:
            raise BadStateError("ANeuralNetworksCompilation_finish called more than once")
        self.finished = True
        model = self.model
        fallback_error = None
        if self.partitioning != PARTITIONING_NO:
            try:
                self.plan = partition_the_work(model, self.devices, self.preference,
                                               self.priority, self.cache_info)
                return
            except NnapiError as e:
                if e.result_code in (ResultCode.UNEXPECTED_NULL, ResultCode.BAD_DATA):
                    self.plan = None
                    raise
                if self.partitioning != PARTITIONING_WITH_FALLBACK:
                    trace.record("no CPU fallback", reason=f"partitioning failed ({e}) and "
                                 "debug.nn.partition=2 forbids the CPU fallback")
                    self.plan = None
                    raise
                if model.has_oem_operation():
                    vlog.log_error(TAG, "Cannot fall back to CPU because of an OEM operation")
                    self.plan = None
                    raise
                fallback_error = e
        vlog.vlog(vlog.COMPILATION, TAG, "CompilationBuilder::finish with CPU fallback")
        trace.record("CPU fallback", device=DeviceManager.cpu_device().name,
                     reason=("debug.nn.partition=0: no partitioning" if fallback_error is None
                             else f"partitioning failed ({fallback_error}); "
                                  "debug.nn.partition=1 allows the CPU fallback"))
        plan = ExecutionPlan(model, self.cache_info)
        plan.devices = [DeviceManager.cpu_device()]
        plan.become_single_step(DeviceManager.cpu_device())
        try:
            plan.finish(self.preference, self.priority)
        finally:
            self.plan = plan

    @property
    def is_valid(self) -> bool:
        return self.finished and self.plan is not None and self.plan.valid

    @property
    def allows_cpu_fallback(self) -> bool:
        return self.partitioning == PARTITIONING_WITH_FALLBACK
