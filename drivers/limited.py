"""Data-only drivers in the spirit of AOSP's sample drivers (driver/sample/LimitedSupportDevice.cpp).

``LimitedDriver(name, perf, supports)`` is a device whose capabilities are ``perf`` and whose
``getSupportedOperations`` answer is ``supports(model, op_index)``; it executes through the
shared CPU executor. Used by partitioning tests and for "what if" experiments. The AOSP sample
drivers are provided as factories with their upstream capabilities (nnapi-runtime.md 5.2).
"""
from __future__ import annotations

from typing import Callable

from nnsim.drivers.base import Capabilities, Driver, PerformanceInfo, SupportDecision, op_name
from nnsim.ops.registry import is_registered
from nnsim.types import DeviceType, FeatureLevel, OperandType, OperationCode

T = OperandType


def _supports_all(model, i) -> bool:
    return True


class LimitedDriver(Driver):
    def __init__(self, name: str, perf: Capabilities | PerformanceInfo | float,
                 supports: Callable | None = None, *,
                 device_type: int = DeviceType.DEVICE_ACCELERATOR,
                 feature_level: int = FeatureLevel.FEATURE_LEVEL_5,
                 version_string: str = "JUST_AN_EXAMPLE"):
        self.name = name
        if isinstance(perf, (int, float)):
            perf = PerformanceInfo(float(perf), float(perf))
        self._caps = perf if isinstance(perf, Capabilities) else Capabilities.uniform(perf)
        self._supports = supports or _supports_all
        self.device_type = device_type
        self.feature_level = feature_level
        self.version_string = version_string

    def capabilities(self) -> Capabilities:
        return self._caps

    def supported_operations_with_reasons(self, model):
        out = []
        for i, op in enumerate(model.operations):
            if not is_registered(op.type):
                out.append(SupportDecision(False, f"{op_name(op.type)} is not implemented"))
            elif self._supports(model, i):
                out.append(SupportDecision(True))
            else:
                out.append(SupportDecision(False, f"{self.name} does not claim "
                                                  f"{op_name(op.type)}"))
        return out


def _input0_is(*types):
    return lambda model, i: model.operands[model.operations[i].inputs[0]].type in types


def make_capabilities(default: PerformanceInfo, float32: PerformanceInfo,
                      relaxed: PerformanceInfo) -> Capabilities:
    """``makeCapabilities(default, float32, relaxed)`` of common/types/src/TypeUtils.cpp."""
    table = {int(t): default for t in T if t < 10000}
    table[int(T.TENSOR_FLOAT32)] = float32
    table[int(T.FLOAT32)] = float32
    return Capabilities(table, relaxed, relaxed, default, default)


def sample_all() -> LimitedDriver:
    """``nnapi-sample_all``: every op of a valid model, every entry {1.1, 1.1}."""
    return LimitedDriver("nnapi-sample_all", PerformanceInfo(1.1, 1.1))


def sample_float_fast() -> LimitedDriver:
    return LimitedDriver("nnapi-sample_float_fast", make_capabilities(
        PerformanceInfo(1.0, 1.0), PerformanceInfo(0.8, 1.2), PerformanceInfo(0.7, 1.1)),
        _input0_is(T.TENSOR_FLOAT32))


def sample_float_slow() -> LimitedDriver:
    return LimitedDriver("nnapi-sample_float_slow", make_capabilities(
        PerformanceInfo(1.0, 1.0), PerformanceInfo(1.3, 0.7), PerformanceInfo(1.2, 0.6)),
        _input0_is(T.TENSOR_FLOAT32))


def sample_minimal() -> LimitedDriver:
    ops = {OperationCode.ADD, OperationCode.CONCATENATION, OperationCode.CONV_2D}
    return LimitedDriver("nnapi-sample_minimal", make_capabilities(
        PerformanceInfo(1.0, 1.0), PerformanceInfo(0.4, 0.5), PerformanceInfo(0.4, 0.5)),
        lambda m, i: m.operations[i].type in ops and _input0_is(T.TENSOR_FLOAT32)(m, i))


def sample_quant() -> LimitedDriver:
    def supports(model, i):
        op = model.operations[i]
        k = 1 if op.type == OperationCode.SELECT else 0
        return model.operands[op.inputs[k]].type in (T.TENSOR_QUANT8_ASYMM,
                                                     T.TENSOR_QUANT8_ASYMM_SIGNED)
    return LimitedDriver("nnapi-sample_quant", PerformanceInfo(50.0, 1.0), supports)
