"""Simulated NPU drivers: one final class, built from data around the shared executor
(npu-drivers.md 10.1).

:class:`SimulatedDriver` has the shape of AOSP's ``LimitedSupportDevice``: it is composed, never
subclassed. A device is

* identity: ``name``, ``version_string``, ``device_type``, ``feature_level`` (HAL version),
  ``number_of_cache_files_needed`` and ``log_tag`` (the vendor service's logcat tag, "" = no
  logging); ``feature_level``, ``number_of_cache_files_needed`` and ``log_tag`` may be
  zero-argument callables, re-read at every use (vsi-npu's follow its BSP property);
* ``rules``: a :class:`~nnsim.drivers.rules.SupportRules` (the table, global rules, veto and
  decision procedure);
* ``capabilities``: a callable of the properties (:class:`Props`) returning the
  :class:`~nnsim.drivers.base.Capabilities`;
* ``timing``: a :class:`~nnsim.drivers.timing.TimingModel` with the device's own parameters
  (the board profile's section for its name, :meth:`nnsim.drivers.profiles.Board.timing`);
* ``lifecycle``: optional :class:`Lifecycle` hooks (SyNAP's conversion at the first run, its
  compile cache and statistics, its frozen input shapes);
* ``vendor``: optional vendor state the parts share; its attributes read as the driver's own
  (``driver.bsp`` of vsi-npu, ``driver.compile_cache()`` of synap-npu), as
  ``LimitedSupportDevice`` forwards what it does not change to the device it wraps.

Call order. ``supported_operations_with_reasons(model)``: ``rules.disabled`` (a reason refuses
every operation, nothing is logged), the ``rules.log_frame`` line, ``rules.blocked_ops``,
``rules.veto``; then per operation the MetaModel slice (an operation newer than the HAL's
feature level is never sent to it) and ``rules.reasons``; then every reason and the frame's
"exit" line under ``log_tag``. ``prepare``: ``lifecycle.before_prepare``, then a
:class:`SimulatedPreparedModel` (``lifecycle.profiling``, ``timing.step_cost``), compiled at
once unless ``lifecycle.compile_at_first_execution``. Every execution:
``lifecycle.begin_execution``; the first one compiles (``lifecycle.first_run`` or the default
cost, the NNAPI cache files written, ``lifecycle.on_compiled``); the run itself on the shared
executor; its :class:`~nnsim.drivers.base.Timing`; ``lifecycle.end_execution``.

Simulated time: ``Timing.device_ns`` (hardware) and ``Timing.driver_ns`` (hardware + HAL/RPC +
transfers + the first-run graph compilation).

Compilation caching (nnapi-runtime.md 6.1): a driver asking for cache files writes the compiled
step model into them when it compiles (at the first execution) through the runtime's
``DeviceCache.store_model``; in a later compilation, in this or another process, the runtime
rebuilds the model from the files (``DeviceCache.load_model``) for ``prepare_from_cache``, and
the first execution then costs a cache load instead of a compilation.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from nnsim.drivers.base import (WORST, Capabilities, Driver, PerformanceInfo, PreparedModel,
                                SupportDecision, Timing)
from nnsim.drivers.rules import SupportRules
from nnsim.drivers.timing import NpuParams, StepCost, TimingModel
from nnsim.errors import OpFailedError
from nnsim.ops.base import OperationView
from nnsim.platform import vlog
from nnsim.platform.properties import getprop, getprop_int, register_property
from nnsim.types import DeviceType, FeatureLevel


class Props:
    """Read access to the emulated Android properties, as a driver's parts see them."""

    @staticmethod
    def get(key: str, default: str | None = None) -> str:
        return getprop(key, default)

    @staticmethod
    def get_int(key: str, default: int) -> int:
        return getprop_int(key, default)


PROPS = Props()


def register_properties(properties: dict) -> None:
    """Declare a driver module's vendor knobs ({name: (default, meaning)}) once, at import, so
    ``nnsim props`` lists them."""
    for key, (default, meaning) in properties.items():
        register_property(key, default, meaning)


def table_capabilities(performance: dict, relaxed: PerformanceInfo = WORST,
                       if_performance: PerformanceInfo = WORST,
                       while_performance: PerformanceInfo = WORST) -> Capabilities:
    """Capabilities from an OperandType -> PerformanceInfo table (an undeclared type is
    FLT_MAX), the relaxed fp32->fp16 entry (scalar and tensor alike), IF and WHILE."""
    return Capabilities(dict(performance), relaxed, relaxed, if_performance, while_performance)


@dataclass(frozen=True)
class Lifecycle:
    """Optional hooks around preparation and execution (all None: a plain device).

    ``compile_at_first_execution``: the graph is compiled at the first execution (False: at
    prepare). ``before_prepare()``: raise an NnapiError to refuse ``prepare``.
    ``profiling()``: step-by-step execution (a per-layer overhead in the step cost).
    ``first_run(prepared) -> (kind, ns)``: the cost of the compilation, replacing the default
    ("compile", or "nnapi-cache" for a model from the NNAPI cache). ``on_compiled(prepared)``,
    ``begin_execution(prepared, inputs)`` (before every execution; raise to refuse it),
    ``end_execution(prepared, timing)`` (after it).
    """
    compile_at_first_execution: bool = True
    before_prepare: Callable[[], None] | None = None
    profiling: Callable[[], bool] | None = None
    first_run: Callable[["SimulatedPreparedModel"], tuple[str, float]] | None = None
    on_compiled: Callable[["SimulatedPreparedModel"], None] | None = None
    begin_execution: Callable[["SimulatedPreparedModel", Sequence], None] | None = None
    end_execution: Callable[["SimulatedPreparedModel", Timing], None] | None = None


# -- prepared model --------------------------------------------------------------------------------
class SimulatedPreparedModel(PreparedModel):
    """A step model prepared on a simulated NPU.

    ``cost`` is the steady-state :class:`~nnsim.drivers.timing.StepCost`. The first execution
    adds the graph compilation (``first_run_kind``: "compile", "nnapi-cache", or a driver's own
    kind such as "synap-cache"; ``first_run_ns``). ``last_timing`` is the Timing of the last
    execution; ``state`` holds what the lifecycle hooks keep per prepared model.
    """

    def __init__(self, driver: "SimulatedDriver", model, cache=None, from_cache: bool = False):
        super().__init__(driver, model)
        self.cache = cache
        self.from_cache = from_cache
        self.profiling = driver.profiling()
        self.cost: StepCost = driver.step_cost(model, self.profiling)
        self.compiled = False
        self.first_run_kind: str | None = None
        self.first_run_ns = 0
        self.last_timing: Timing | None = None
        self.state: dict = {}
        self.lock = threading.Lock()

    def execute(self, inputs: Sequence):
        driver: SimulatedDriver = self.driver
        first_ns = driver.begin_execution(self, inputs)
        start = time.perf_counter_ns()
        outputs = self.run_on_executor(inputs, log=False)   # the NPU, not CpuExecutor, runs it
        host = time.perf_counter_ns() - start
        timing = driver.execution_timing(self, host)
        if first_ns:
            timing.driver_ns = int(timing.driver_ns + first_ns)
        driver.end_execution(self, timing)
        self.last_timing = timing
        return outputs, timing


def _resolve(value):
    return value() if callable(value) else value


# -- the driver ------------------------------------------------------------------------------------
class SimulatedDriver(Driver):
    """A driver made of data; see the module docstring. Final: build one, do not subclass."""

    def __init__(self, name: str, *, rules: SupportRules,
                 capabilities: Callable[[Props], Capabilities], timing: TimingModel,
                 lifecycle: Lifecycle | None = None, version_string: str = "nnsim simulated",
                 device_type: int = DeviceType.DEVICE_ACCELERATOR,
                 feature_level: int | Callable[[], int] = FeatureLevel.FEATURE_LEVEL_4,
                 number_of_cache_files_needed: tuple | Callable[[], tuple] = (1, 1),
                 log_tag: str | Callable[[], str] = "", board: str = "", vendor=None):
        self.name = name
        self.version_string = version_string
        self.device_type = device_type
        self.rules = rules
        self.capabilities_of = capabilities
        self.timing = timing
        self.lifecycle = lifecycle or Lifecycle()
        self.board = board
        self.vendor = vendor
        self._feature_level = feature_level
        self._cache_files = number_of_cache_files_needed
        self._log_tag = log_tag

    def __init_subclass__(cls, **kwargs):
        raise TypeError("SimulatedDriver is final: describe a device with its parts "
                        "(rules, capabilities, timing, lifecycle) instead of subclassing")

    def __getattr__(self, attr: str):
        # only called for attributes the driver lacks: the vendor state's (``bsp``, ...)
        vendor = self.__dict__.get("vendor")
        if vendor is not None and not attr.startswith("_"):
            return getattr(vendor, attr)
        raise AttributeError(f"{type(self).__name__} {self.__dict__.get('name')!r} has no "
                             f"attribute {attr!r}")

    # -- identity -------------------------------------------------------------------------------
    @property
    def feature_level(self) -> int:
        return _resolve(self._feature_level)

    @property
    def number_of_cache_files_needed(self) -> tuple[int, int]:
        return _resolve(self._cache_files)

    @property
    def log_tag(self) -> str:
        return _resolve(self._log_tag)

    @property
    def support_table(self) -> dict:
        """The support table as it stands now (``nnsim ops``)."""
        return self.rules.current_table()

    @property
    def compile_at_first_execution(self) -> bool:
        return self.lifecycle.compile_at_first_execution

    def capabilities(self) -> Capabilities:
        return self.capabilities_of(PROPS)

    # -- getSupportedOperations -----------------------------------------------------------------
    def supported_operations_with_reasons(self, model) -> list[SupportDecision]:
        rules = self.rules
        disabled = rules.disabled() if rules.disabled is not None else None
        if disabled:
            return [SupportDecision(False, disabled) for _ in model.operations]
        tag = self.log_tag
        frame = rules.log_frame() if rules.log_frame is not None else ""
        if frame:
            vlog.log_info(tag, frame)
        blocked = rules.blocked_ops() if rules.blocked_ops is not None else frozenset()
        veto = rules.veto(model) if rules.veto is not None else None
        level = self.feature_level
        table = rules.current_table()
        decisions = []
        log_lines = []
        for i in range(len(model.operations) if veto is None else 0):
            view = OperationView.of_model(model, i)
            if view.operation.min_feature_level > level:
                decisions.append(SupportDecision(False, (
                    f"{view.name} needs feature level {view.operation.min_feature_level}; the "
                    f"{self.name} HAL (feature level {int(level)}) never receives "
                    f"it (MetaModel slice)")))
                continue
            reasons = rules.reasons(view, self.name, blocked, table)
            log_lines.extend(reasons)
            decisions.append(SupportDecision(not reasons, "; ".join(reasons)))
        if veto is not None:
            decisions = [SupportDecision(False, veto) for _ in model.operations]
        if tag:
            for line in log_lines:
                vlog.log_info(tag, line)
        if frame:
            vlog.log_info(tag, f"{frame} exit")
        return decisions

    # -- timing ------------------------------------------------------------------------------
    def timing_params(self) -> NpuParams:
        return self.timing.params

    def profiling(self) -> bool:
        hook = self.lifecycle.profiling
        return bool(hook()) if hook is not None else False

    def step_cost(self, model, profiling: bool = False) -> StepCost:
        return self.timing.step_cost(model, profiling)

    def execution_timing(self, prepared, host_ns: int) -> Timing:
        cost = getattr(prepared, "cost", None) or self.step_cost(prepared.model)
        return Timing(host_ns=host_ns, device_ns=int(round(cost.device_ns)),
                      driver_ns=int(round(cost.driver_ns)))

    # -- prepare and the compilation cache ------------------------------------------------------
    def prepare(self, model, preference: int, priority: int, cache=None) -> PreparedModel:
        if self.lifecycle.before_prepare is not None:
            self.lifecycle.before_prepare()
        prepared = SimulatedPreparedModel(self, model, cache)
        if not self.lifecycle.compile_at_first_execution:
            self._compile(prepared)
        return prepared

    def _owner(self) -> dict:
        return {"device": self.name, "version": self.version_string}

    def prepare_from_cache(self, cache) -> PreparedModel | None:
        if not cache.model_files or not cache.data_files:
            return None
        try:
            model = cache.load_model(self._owner())   # the runtime rebuilds the model
        except (OSError, ValueError) as e:
            raise OpFailedError(f"{self.name}: cannot prepare from cache: {e}") from None
        prepared = SimulatedPreparedModel(self, model, None, from_cache=True)
        if not self.lifecycle.compile_at_first_execution:
            self._compile(prepared)
        return prepared

    def _write_cache(self, prepared: SimulatedPreparedModel) -> bool:
        cache = prepared.cache
        if cache is None or not cache.model_files or not cache.data_files:
            return False
        try:
            cache.store_model(self._owner(), prepared.model)
        except ValueError:      # control flow: not cached
            return False
        except OSError as e:
            vlog.log_error(self.log_tag or self.name, f"cannot write the compilation cache: {e}")
            return False
        return True

    def _compile(self, prepared: SimulatedPreparedModel) -> float:
        """Turn the step model into a device network; returns the driver time it took."""
        if self.lifecycle.first_run is not None:
            kind, ns = self.lifecycle.first_run(prepared)
        elif prepared.from_cache:
            kind, ns = "nnapi-cache", self.timing.cache_load_ns(prepared.cost)
        else:
            kind, ns = "compile", self.timing.compile_ns(prepared.cost)
        if not prepared.from_cache and self._write_cache(prepared):
            ns += self.timing.cache_store_ns(prepared.cost)
        prepared.compiled, prepared.first_run_kind, prepared.first_run_ns = True, kind, int(ns)
        if self.lifecycle.on_compiled is not None:
            self.lifecycle.on_compiled(prepared)
        return ns

    # -- execution ------------------------------------------------------------------------------
    def begin_execution(self, prepared: SimulatedPreparedModel, inputs) -> float:
        """Before every execution; returns the extra driver time of this run (the graph
        compilation on the first one)."""
        if self.lifecycle.begin_execution is not None:
            self.lifecycle.begin_execution(prepared, inputs)
        with prepared.lock:
            if prepared.compiled:
                return 0.0
            return self._compile(prepared)

    def end_execution(self, prepared: SimulatedPreparedModel, timing: Timing) -> None:
        if self.lifecycle.end_execution is not None:
            self.lifecycle.end_execution(prepared, timing)
