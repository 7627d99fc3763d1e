"""The driver contract (mirrors the HAL ``IDevice`` / ``IPreparedModel``).

A :class:`Driver` describes one NNAPI device: identity, capabilities, which operations of a model
it supports, and how to prepare a model. Execution lives on the :class:`PreparedModel` it
returns, as in NNAPI. Simulated NPUs are data around the shared CPU executor
(:mod:`nnsim.ops.executor`); no driver forks the executor.

Thread safety: drivers and prepared models may be used from the thread that runs an
asynchronous execution; they must not keep per-execution state on ``self``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from nnsim.ops.executor import ExecutorStatePool
from nnsim.types import FLT_MAX, DeviceType, FeatureLevel, OperandType, OperationCode


@dataclass(frozen=True)
class PerformanceInfo:
    """Ratio to the CPU on the same work; smaller is better."""
    exec_time: float = 1.0
    power_usage: float = 1.0


WORST = PerformanceInfo(FLT_MAX, FLT_MAX)


@dataclass(frozen=True)
class Capabilities:
    """``Capabilities``: a missing operand type looks up as FLT_MAX (OperandPerformanceTable)."""
    operand_performance: Mapping[int, PerformanceInfo] = field(default_factory=dict)
    relaxed_float32_to_float16_scalar: PerformanceInfo = WORST
    relaxed_float32_to_float16_tensor: PerformanceInfo = WORST
    if_performance: PerformanceInfo = WORST
    while_performance: PerformanceInfo = WORST

    def lookup(self, operand_type: int) -> PerformanceInfo:
        return self.operand_performance.get(int(operand_type), WORST)

    @classmethod
    def uniform(cls, perf: PerformanceInfo, types=None) -> "Capabilities":
        types = list(OperandType) if types is None else types
        return cls({int(t): perf for t in types if t < 10000}, perf, perf, perf, perf)


@dataclass
class Timing:
    """Durations of one execution in nanoseconds (``None`` = not available).

    ``host_ns`` is the wall time measured on this machine; ``device_ns`` is the time the
    simulated device would take on the board (the timing model), ``driver_ns`` adds the
    driver-side overheads (``DURATION_IN_DRIVER``).
    """
    host_ns: int | None = None
    device_ns: int | None = None
    driver_ns: int | None = None


@dataclass
class SupportDecision:
    """One operation's answer from ``Driver.supported_operations_with_reasons``."""
    supported: bool
    reason: str = ""


class PreparedModel:
    """A model compiled for one device. ``execute`` returns outputs and :class:`Timing`."""

    def __init__(self, driver: "Driver", model):
        self.driver = driver
        self.model = model
        self._executor_states = None

    def run_on_executor(self, inputs: Sequence, log: bool = True) -> list[np.ndarray]:
        """Run the model on the shared CPU executor, keeping the operations' plans (packed
        filters, multipliers, buffers) across executions, as a prepared model does;
        ``log=False``: without the CpuExecutor vlog lines (a device that is not the CPU)."""
        if self._executor_states is None:
            self._executor_states = ExecutorStatePool(self.model)
        return self._executor_states.run(inputs, log=log)

    def execute(self, inputs: Sequence[np.ndarray]) -> tuple[list[np.ndarray], Timing]:
        start = time.perf_counter_ns()
        outputs = self.run_on_executor(inputs)
        host = time.perf_counter_ns() - start
        return outputs, self.driver.execution_timing(self, host)

    def configure_execution_burst(self):
        """Return a burst context, or None to use the normal path (CPU)."""
        return None


class Driver:
    """Base driver. Subclasses set the identity attributes, answer
    ``supported_operations_with_reasons`` (nothing is claimed by default) and override what
    else differs."""

    name: str = "unnamed"
    version_string: str = "UNKNOWN"
    device_type: int = DeviceType.DEVICE_ACCELERATOR
    feature_level: int = FeatureLevel.FEATURE_LEVEL_5
    # (model cache files, data cache files); (0, 0) = no compilation caching
    number_of_cache_files_needed: tuple[int, int] = (0, 0)
    preferred_memory_alignment: int = 64
    preferred_memory_padding: int = 64

    def capabilities(self) -> Capabilities:
        return Capabilities()

    def supported_operations_with_reasons(self, model) -> list[SupportDecision]:
        """One decision per operation of ``model`` (a finished ModelBuilder), in its order."""
        raise NotImplementedError(f"{type(self).__name__} must say which operations it supports")

    def supported_operations(self, model) -> list[bool]:
        return [d.supported for d in self.supported_operations_with_reasons(model)]

    def prepare(self, model, preference: int, priority: int, cache=None) -> PreparedModel:
        """Compile ``model``; raise an NnapiError (e.g. OpFailedError) on failure."""
        return PreparedModel(self, model)

    def prepare_from_cache(self, cache) -> PreparedModel | None:
        return None

    def execution_timing(self, prepared: PreparedModel, host_ns: int) -> Timing:
        """Simulated timing of one execution; the base reports the host time only."""
        return Timing(host_ns=host_ns, device_ns=None, driver_ns=None)

    @property
    def is_caching_supported(self) -> bool:
        return any(n > 0 for n in self.number_of_cache_files_needed)

    def __repr__(self) -> str:
        return f"<Driver {self.name}>"


def op_name(code: int) -> str:
    try:
        return OperationCode(code).name
    except ValueError:
        return str(code)
