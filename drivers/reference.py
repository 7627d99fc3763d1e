"""``nnapi-reference``: the CPU device (runtime/Manager.cpp ``CpuDevice``, reference 5.1).

Type CPU, every PerformanceInfo {1.0, 1.0}, supports every operation nnsim registers (upstream:
every non-OEM, non-extension op, with no type or version check because validation already
happened at finish), no caching, preferred memory alignment and padding 64. Always the last
device of the list; the device of CPU fallback.
"""
from __future__ import annotations

from nnsim.drivers.base import (Capabilities, Driver, PerformanceInfo, SupportDecision, Timing,
                                op_name)
from nnsim.drivers.profiles import current_board, current_board_name
from nnsim.drivers.timing import cpu_step_cost
from nnsim.ops.registry import is_registered
from nnsim.platform.properties import runtime_feature_level
from nnsim.types import DeviceType, OperationCode


class ReferenceDriver(Driver):
    name = "nnapi-reference"
    version_string = "UNKNOWN"  # build::GetBuildNumber() of the updatable library
    device_type = DeviceType.DEVICE_CPU

    @property
    def feature_level(self) -> int:
        """The runtime's own feature level (CpuDevice reports it): follows the emulated
        Android version, FL5 (Android 12) by default."""
        return runtime_feature_level()

    def capabilities(self) -> Capabilities:
        return Capabilities.uniform(PerformanceInfo(1.0, 1.0))

    def supported_operations_with_reasons(self, model) -> list[SupportDecision]:
        out = []
        for op in model.operations:
            if op.type == OperationCode.OEM_OPERATION:
                out.append(SupportDecision(False, "OEM_OPERATION is not supported on the CPU"))
            elif not is_registered(op.type):
                out.append(SupportDecision(False, f"{op_name(op.type)} is not implemented "
                                                  f"in nnsim"))
            else:
                out.append(SupportDecision(True))
        return out

    def execution_timing(self, prepared, host_ns: int):
        """Simulated time on the current board's CPU (drivers/timing.py CPU cost model)."""
        return reference_cpu_timing(prepared, host_ns)


def reference_cpu_timing(prepared, host_ns: int) -> Timing:
    """``Timing`` of an nnapi-reference execution on the current board's CPU
    (:func:`nnsim.drivers.profiles.current_board`); the cost is cached on the prepared model."""
    key = current_board_name()   # (the board's name: resolved only when it changed)
    cached = getattr(prepared, "_nnsim_cpu_cost", None)
    if cached is None or cached[0] != key:
        cpu = current_board().cpu
        cached = (key, int(round(cpu_step_cost(prepared.model, cpu).driver_ns)))
        try:
            prepared._nnsim_cpu_cost = cached
        except AttributeError:
            pass
    return Timing(host_ns=host_ns, device_ns=cached[1], driver_ns=cached[1])


CPU_DEVICE = ReferenceDriver()
