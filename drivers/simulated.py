"""Simulated NPU drivers: data around the shared executor (npu-drivers.md 10.1).

A :class:`SimulatedDriver` is a driver described by data:

* identity: ``name``, ``version_string``, ``device_type``, ``feature_level`` (HAL version);
* capabilities: ``performance`` (OperandType -> PerformanceInfo; an undeclared type is
  FLT_MAX), ``relaxed_performance``, ``if_performance``, ``while_performance``;
* a support table: OperationCode -> :class:`OpRule` (accepted operand-type signatures plus
  extra conditions, each condition returning the HAL's reason string when it refuses);
* global rules (applied to every operation) and a whole-model veto (``model_veto``);
* ``properties``: the vendor knobs it reads (registered with ``nnsim props``);
* a timing model (:mod:`nnsim.drivers.timing`, parameters from the board profile ``board``).

``supported_operations_with_reasons(model)`` answers per operation with the reasons worded as
the real HAL logs them ("reject CONVOLUTION_2D because ..."), and logs them under the vendor
service's logcat tag. ``prepare`` returns a :class:`SimulatedPreparedModel` that executes
through the shared CPU executor and reports simulated time: ``Timing.device_ns`` (hardware) and
``Timing.driver_ns`` (hardware + HAL/RPC + transfers + the first-run graph compilation).

Compilation caching (nnapi-runtime.md 6.1): a driver asking for cache files writes the
compiled step model into them when it compiles (at the first execution); the runtime hands the
files back to ``prepare_from_cache`` in a later compilation, in this or another process, and
the first execution then costs a cache load instead of a compilation.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from nnsim.drivers import timing as tm
from nnsim.drivers.base import (WORST, Capabilities, Driver, PerformanceInfo, PreparedModel,
                                SupportDecision, Timing)
from nnsim.errors import OpFailedError
from nnsim.ops.base import OperationView
from nnsim.runtime import vlog
from nnsim.runtime.properties import register_property
from nnsim.types import DeviceType, FeatureLevel, OperandLifeTime, OperandType

L = OperandLifeTime
T = OperandType
VALIDATOR, INLINE, DEFAULT, REJECT = "validator", "inline", "default", "reject"
_CONST = (L.CONSTANT_COPY, L.CONSTANT_REFERENCE, L.POINTER)


Check = Callable[[OperationView], "str | None"]


@dataclass(frozen=True)
class OpRule:
    """One row of a support table.

    ``kind``: VALIDATOR (checks stop at the first failure), INLINE / DEFAULT (the driver's
    common tail runs after ``checks``; all reasons are collected), REJECT (always refused).
    ``types``: accepted types of input ``type_index`` (None = any); ``pairs``: accepted
    (input, weight) type pairs; ``outputs``: accepted types of output 0; ``checks``: extra
    conditions returning a reason or None; ``label``: the op name used in reasons;
    ``source``: where the row comes from (a section of docs/reference/npu-drivers.md).
    """
    kind: str
    types: frozenset | None = None
    pairs: frozenset | None = None
    outputs: frozenset | None = None
    checks: tuple = ()
    label: str = ""
    reason: str = ""
    type_index: int = 0
    source: str = ""

    def check(self, view: OperationView, accumulate: bool = False) -> list[str]:
        label = self.label or view.name
        if self.kind == REJECT:
            return [self.reason or f"reject {label} because it is not supported"]
        if self.types is not None and view.input_type(self.type_index) not in self.types:
            return [f"reject {label} because input data type not support"]
        if self.pairs is not None and (view.input_type(0), view.input_type(1)) not in self.pairs:
            return [f"reject {label} because input data type not support"]
        if self.outputs is not None and view.outputs and view.output_type(0) not in self.outputs:
            return [f"reject {label} because output data type not support"]
        reasons = []
        for c in self.checks:
            r = c(view)
            if r:
                reasons.append(r)
                if not accumulate:
                    break
        return reasons


def types(*ts) -> frozenset:
    return frozenset(int(t) for t in ts)


# -- compilation cache contents -----------------------------------------------------------------------
CACHE_MAGIC = b"NNSIM-COMPILED-NETWORK 1\n"


def serialize_model(model) -> tuple[bytes, bytes]:
    """(structure, constant data) of a finished model; raises ValueError for control flow."""
    blob = bytearray()
    operands = []
    for o in model.operands:
        entry = {"type": int(o.type), "dims": [int(d) for d in o.dimensions], "scale": o.scale,
                 "zp": int(o.zero_point), "lifetime": int(o.lifetime)}
        if o.channel_quant is not None:
            entry["cq"] = [int(o.channel_quant.channelDim), list(o.channel_quant.scales)]
        if o.lifetime == L.SUBGRAPH:
            raise ValueError("models with control flow are not cached")
        if o.lifetime in _CONST and o.value is not None:
            data = bytes(o.value)
            entry["data"] = [len(blob), len(data)]
            blob += data
        operands.append(entry)
    struct = {"operands": operands,
              "operations": [[int(op.type), list(op.inputs), list(op.outputs)]
                             for op in model.operations],
              "inputs": list(model.input_indexes), "outputs": list(model.output_indexes),
              "relaxed": bool(model.relax_float32_to_float16)}
    return CACHE_MAGIC + json.dumps(struct, sort_keys=True).encode(), bytes(blob)


def deserialize_model(struct: bytes, data: bytes):
    """Rebuild the model through the public ModelBuilder API; ValueError if malformed."""
    from nnsim.runtime.model import ModelBuilder
    from nnsim.runtime.operand import OperandTypeSpec, SymmPerChannelQuantParams
    if not struct.startswith(CACHE_MAGIC):
        raise ValueError("not an nnsim compiled-network cache file")
    try:
        s = json.loads(struct[len(CACHE_MAGIC):])
        m = ModelBuilder()
        for k, o in enumerate(s["operands"]):
            m.add_operand(OperandTypeSpec(o["type"], tuple(o["dims"]), o["scale"], o["zp"]))
            if "cq" in o:
                m.set_operand_symm_per_channel_quant_params(
                    k, SymmPerChannelQuantParams(o["cq"][0], tuple(o["cq"][1])))
            if "data" in o:
                start, length = o["data"]
                if start + length > len(data):
                    raise ValueError("data cache file is truncated")
                m.set_operand_value(k, data[start:start + length])
            elif o["lifetime"] == L.NO_VALUE:
                m.set_operand_value(k, None)
        for code, ins, outs in s["operations"]:
            m.add_operation(code, ins, outs)
        m.identify_inputs_and_outputs(s["inputs"], s["outputs"])
        m.relax_computation_float32_to_float16(s["relaxed"])
        m.finish()
        return m
    except (KeyError, TypeError, IndexError, json.JSONDecodeError) as e:
        raise ValueError(f"malformed cache file: {e}") from None


def model_fingerprint(model) -> str:
    """SHA-256 of a model's structure and constants (the SyNAP compile-cache key)."""
    struct, data = serialize_model(model)
    return hashlib.sha256(struct + data).hexdigest()


# -- prepared model ---------------------------------------------------------------------------------
class SimulatedPreparedModel(PreparedModel):
    """A step model prepared on a simulated NPU.

    ``cost`` is the steady-state :class:`~nnsim.drivers.timing.StepCost`. The first execution
    adds the graph compilation (``first_run_kind``: "compile", "nnapi-cache", or a driver's own
    kind such as "synap-cache"; ``first_run_ns``). ``last_timing`` is the Timing of the last
    execution.
    """

    def __init__(self, driver: "SimulatedDriver", model, cache=None, from_cache: bool = False):
        super().__init__(driver, model)
        self.cache = cache
        self.from_cache = from_cache
        self.profiling = driver.profiling()
        self.cost = driver.step_cost(model, self.profiling)
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


# -- the driver ----------------------------------------------------------------------------------------
class SimulatedDriver(Driver):
    """A driver made of data; see the module docstring. Subclasses fill the class attributes
    and may override ``check_operation`` (the per-op decision), ``model_veto`` and the
    execution hooks."""

    name = "simulated-npu"
    version_string = "nnsim simulated"
    device_type = DeviceType.DEVICE_ACCELERATOR
    feature_level = FeatureLevel.FEATURE_LEVEL_4
    number_of_cache_files_needed = (1, 1)
    performance: dict = {}
    relaxed_performance: PerformanceInfo = WORST
    if_performance: PerformanceInfo = WORST
    while_performance: PerformanceInfo = WORST
    support_table: dict = {}
    global_rules: tuple = ()
    properties: dict = {}           # name -> (default, meaning)
    log_tag = ""                    # logcat tag of the vendor service ("" = no logging)
    default_board = "imx8mp"
    compile_at_first_execution = True

    def __init__(self, board: str | None = None):
        self.board = board or self.default_board
        for key, (default, meaning) in self.properties.items():
            register_property(key, default, meaning)

    # -- capabilities -------------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        return Capabilities(dict(self.performance), self.relaxed_performance,
                            self.relaxed_performance, self.if_performance,
                            self.while_performance)

    # -- getSupportedOperations -----------------------------------------------------------------
    def model_veto(self, model) -> str | None:
        """A reason to refuse the whole model, or None."""
        return None

    def support_context(self, model):
        """Per-call state shared by the ``check_operation`` calls of one query (e.g. a block
        list read from a file); None by default."""
        return None

    def check_operation(self, view: OperationView, context=None) -> list[str]:
        """Reasons to refuse one operation (empty = supported): global rules, then the table."""
        reasons = [r for rule in self.global_rules for r in (rule(view) or ())]
        if reasons:
            return reasons
        rule = self.support_table.get(view.code)
        if rule is None:
            return [f"reject {view.name} because it is not supported by {self.name}"]
        return rule.check(view)

    def supported_operations_with_reasons(self, model) -> list[SupportDecision]:
        self.log_supported_begin()
        context = self.support_context(model)
        veto = self.model_veto(model)
        decisions = []
        log_lines = []
        for i in range(len(model.operations) if veto is None else 0):
            view = OperationView.of_model(model, i)
            if view.operation.min_feature_level > self.feature_level:
                decisions.append(SupportDecision(False, (
                    f"{view.name} needs feature level {view.operation.min_feature_level}; the "
                    f"{self.name} HAL (feature level {int(self.feature_level)}) never receives "
                    f"it (MetaModel slice)")))
                continue
            reasons = self.check_operation(view, context)
            log_lines.extend(reasons)
            decisions.append(SupportDecision(not reasons, "; ".join(reasons)))
        if veto is not None:
            decisions = [SupportDecision(False, veto) for _ in model.operations]
        self.log_supported_end(log_lines)
        return decisions

    def log_supported_begin(self) -> None:
        pass

    def log_supported_end(self, reasons: list[str]) -> None:
        if self.log_tag:
            for line in reasons:
                vlog.log_info(self.log_tag, line)

    # -- timing ------------------------------------------------------------------------------
    def timing_params(self) -> tm.NpuParams:
        from nnsim.drivers.boards import get_board
        return get_board(self.board).npu

    def profiling(self) -> bool:
        return False

    def step_cost(self, model, profiling: bool = False) -> tm.StepCost:
        return tm.npu_step_cost(model, self.timing_params(), profiling)

    def execution_timing(self, prepared, host_ns: int) -> Timing:
        cost = getattr(prepared, "cost", None) or self.step_cost(prepared.model)
        return Timing(host_ns=host_ns, device_ns=int(round(cost.device_ns)),
                      driver_ns=int(round(cost.driver_ns)))

    # -- prepare and the compilation cache ------------------------------------------------------
    def prepare(self, model, preference: int, priority: int, cache=None) -> PreparedModel:
        prepared = SimulatedPreparedModel(self, model, cache)
        if not self.compile_at_first_execution:
            self._compile(prepared)
        return prepared

    def prepare_from_cache(self, cache) -> PreparedModel | None:
        if not cache.model_files or not cache.data_files:
            return None
        try:
            with open(cache.model_files[0], "rb") as f:
                struct = f.read()
            with open(cache.data_files[0], "rb") as f:
                data = f.read()
            header, _, rest = struct.partition(b"\n")
            owner = json.loads(header)
            if owner != {"device": self.name, "version": self.version_string}:
                raise ValueError(f"written by {owner}")
            model = deserialize_model(rest, data)
        except (OSError, ValueError) as e:
            raise OpFailedError(f"{self.name}: cannot prepare from cache: {e}") from None
        prepared = SimulatedPreparedModel(self, model, None, from_cache=True)
        if not self.compile_at_first_execution:
            self._compile(prepared)
        return prepared

    def _write_cache(self, prepared: SimulatedPreparedModel) -> bool:
        cache = prepared.cache
        if cache is None or not cache.model_files or not cache.data_files:
            return False
        try:
            struct, data = serialize_model(prepared.model)
        except ValueError:
            return False
        owner = json.dumps({"device": self.name, "version": self.version_string},
                           sort_keys=True).encode()
        try:
            with open(cache.model_files[0], "wb") as f:
                f.write(owner + b"\n" + struct)
            with open(cache.data_files[0], "wb") as f:
                f.write(data)
        except OSError as e:
            vlog.log_error(self.log_tag or self.name, f"cannot write the compilation cache: {e}")
            return False
        return True

    def first_run_cost(self, prepared: SimulatedPreparedModel) -> tuple[str, float]:
        """(kind, ns) of turning the step model into a device network."""
        p = self.timing_params()
        if prepared.from_cache:
            return "nnapi-cache", tm.cache_load_ns(prepared.cost, p)
        return "compile", tm.compile_ns(prepared.cost, p)

    def _compile(self, prepared: SimulatedPreparedModel) -> float:
        kind, ns = self.first_run_cost(prepared)
        if not prepared.from_cache and self._write_cache(prepared):
            ns += tm.cache_store_ns(prepared.cost, self.timing_params())
        prepared.compiled, prepared.first_run_kind, prepared.first_run_ns = True, kind, int(ns)
        self.on_compiled(prepared)
        return ns

    # -- execution hooks ----------------------------------------------------------------------
    def begin_execution(self, prepared: SimulatedPreparedModel, inputs) -> float:
        """Called before every execution; returns the extra driver time of this run (the
        graph compilation on the first one)."""
        with prepared.lock:
            if prepared.compiled:
                return 0.0
            return self._compile(prepared)

    def on_compiled(self, prepared: SimulatedPreparedModel) -> None:
        pass

    def end_execution(self, prepared: SimulatedPreparedModel, timing: Timing) -> None:
        pass


# -- optional log-faithful device (npu-drivers.md 7, 10.5) -------------------------------------------
class EdgeTpuDriver(SimulatedDriver):
    """``google-edgetpu`` (Pixel 4): TENSOR_QUANT8_ASYMM {0.1, 0.1}, float and the other logged
    types {10.0, 10.0} (npu-drivers.md 7); supports ops whose input[0] is uint8 (10.5)."""

    name = "google-edgetpu"
    version_string = "nnsim google-edgetpu"
    feature_level = FeatureLevel.FEATURE_LEVEL_3
    number_of_cache_files_needed = (0, 0)
    performance = {int(t): PerformanceInfo(10.0, 10.0) for t in (
        T.FLOAT32, T.INT32, T.UINT32, T.TENSOR_FLOAT32, T.TENSOR_INT32)}  # 7 (dump truncated)
    performance[int(T.TENSOR_QUANT8_ASYMM)] = PerformanceInfo(0.1, 0.1)  # 7
    relaxed_performance = PerformanceInfo(10.0, 10.0)  # 7
    compile_at_first_execution = False

    def check_operation(self, view: OperationView, context=None) -> list[str]:
        if view.input_type(0) != T.TENSOR_QUANT8_ASYMM:  # 10.5: quantized uint8 ops only
            return [f"{view.name}: {self.name} supports only TENSOR_QUANT8_ASYMM operations"]
        return []


def google_edgetpu(board: str | None = None) -> EdgeTpuDriver:
    return EdgeTpuDriver(board)
