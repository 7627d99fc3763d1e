"""``google-edgetpu`` (Pixel 4): an optional log-faithful device (npu-drivers.md 7, 10.5).

Capabilities: TENSOR_QUANT8_ASYMM {0.1, 0.1}, float and the other logged types {10.0, 10.0}
(7); support: every operation whose input[0] is uint8 (10.5); compiled at prepare, no NNAPI
compilation caching, feature level 3.
"""
from __future__ import annotations

from nnsim.drivers.base import PerformanceInfo
from nnsim.drivers.profiles import DEFAULT_BOARD, get_board
from nnsim.drivers.rules import VALIDATOR, OpRule, SupportRules
from nnsim.drivers.simulated import Lifecycle, SimulatedDriver, table_capabilities
from nnsim.ops.base import OperationView
from nnsim.types import FeatureLevel, OperandType as T

NAME = "google-edgetpu"
PERFORMANCE = {int(t): PerformanceInfo(10.0, 10.0) for t in (
    T.FLOAT32, T.INT32, T.UINT32, T.TENSOR_FLOAT32, T.TENSOR_INT32)}  # 7 (dump truncated)
PERFORMANCE[int(T.TENSOR_QUANT8_ASYMM)] = PerformanceInfo(0.1, 0.1)  # 7
RELAXED = PerformanceInfo(10.0, 10.0)  # 7


def quant8_only(view: OperationView) -> str | None:
    if view.input_type(0) != T.TENSOR_QUANT8_ASYMM:  # 10.5: quantized uint8 ops only
        return f"{view.name}: {NAME} supports only TENSOR_QUANT8_ASYMM operations"
    return None


def google_edgetpu(board: str | None = None) -> SimulatedDriver:
    """The device with the timing of ``board`` (default imx8mp; its NPU's parameters)."""
    board = board or DEFAULT_BOARD
    return SimulatedDriver(
        NAME, version_string="nnsim google-edgetpu", feature_level=FeatureLevel.FEATURE_LEVEL_3,
        number_of_cache_files_needed=(0, 0),
        rules=SupportRules(default_rule=OpRule(VALIDATOR, checks=(quant8_only,))),
        capabilities=lambda props: table_capabilities(PERFORMANCE, RELAXED),
        timing=get_board(board).timing(NAME), lifecycle=Lifecycle(compile_at_first_execution=False),
        board=board)
