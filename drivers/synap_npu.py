"""``synap-npu``: Synaptics SyNAP's NNAPI HAL on VS640/VS680 (npu-drivers.md 4, 10.3).

Support rules: the VSI NNHAL rule set at the ``android-12.1.0_1.0.0`` level (an assumption,
10.3: SyNAP's NNHAL is VeriSilicon's NNRT/NNHAL 1.3.1, 4.1; RESIZE_NEAREST_NEIGHBOR runs on the
CPU in SyNAP's own example). Capabilities: the vsi-npu layout (2.2), int8 at FLT_MAX unless
``vendor.nnsim.synap.int8_perf`` says otherwise (10.3: "make it configurable").

SyNAP specifics (4.1, 10.3):

* no NPU work at prepare: the model is converted to the NPU format at the **first
  execution**; input shapes are frozen after it;
* the SyNAP compile cache (``vendor.SYNAP_CACHE_PATH``, default
  ``/data/vendor/synap/nnhal.cache`` under the nnsim state directory;
  ``vendor.SYNAP_CACHE_CAPACITY``, default 10000 entries, 0 disables; least recently used
  entries are evicted) makes a later conversion of the same model faster, in any process;
* NNAPI compilation caching only when ``vendor.npu.cache.model=1`` (1 model + 1 data file,
  the NNAPI cache file names of nnapi-runtime.md 6.1);
* ``vendor.NNAPI_SYNAP_DISABLE=1``: the driver supports nothing, so everything runs on the CPU
  and ``inference_count`` does not move;
* ``vendor.NNAPI_SYNAP_PROFILE=1``: step-by-step execution (slower) and a per-layer table in
  ``network_profile``;
* the sysfs statistics of 4.2 (:mod:`nnsim.platform.sysfs`).
"""
from __future__ import annotations

import weakref
from collections import Counter

import numpy as np

from nnsim.common.model_bytes import model_fingerprint
from nnsim.drivers.base import Capabilities, PerformanceInfo
from nnsim.drivers.profiles import get_board
from nnsim.drivers.simulated import (Lifecycle, Props, SimulatedDriver, SimulatedPreparedModel,
                                     register_properties, table_capabilities)
from nnsim.drivers.synap_cache import (DEFAULT_CACHE_CAPACITY, DEFAULT_CACHE_PATH, LOG_TAG,
                                       PROP_CACHE_CAPACITY, PROP_CACHE_PATH, SynapCompileCache)
from nnsim.drivers.vsi_npu import (B8, F16, F32, I8, I32, NO_CONTROL_FLOW, RELAXED, U8,
                                   VERSION_STRING, VsiHal, vsi_rules)
from nnsim.errors import OpFailedError
from nnsim.platform import sysfs, vlog
from nnsim.platform.properties import getprop_int
from nnsim.types import OperandType, OperationCode

NAME = "synap-npu"                       # 4.1 ("NNAPI accelerators available: [synap-npu,...]")
DEFAULT_BOARD = "vs680"
PROP_NNAPI_CACHE = "vendor.npu.cache.model"
PROP_DISABLE = "vendor.NNAPI_SYNAP_DISABLE"
PROP_PROFILE = "vendor.NNAPI_SYNAP_PROFILE"
PROP_INT8_PERF = "vendor.nnsim.synap.int8_perf"
SYNAP_BSP_LEVEL = "android-12.1.0_1.0.0"                # 10.3 (assumption)
PROPERTIES = {
    PROP_CACHE_PATH: (DEFAULT_CACHE_PATH, "synap-npu: SyNAP compile cache file (/data/... "
                                          "lives in the nnsim state directory)"),
    PROP_CACHE_CAPACITY: (str(DEFAULT_CACHE_CAPACITY), "synap-npu: compile cache capacity "
                                                       "in entries; 0 disables it"),
    PROP_NNAPI_CACHE: ("0", "synap-npu: 1 enables NNAPI compilation caching (1 model + 1 "
                            "data cache file)"),
    PROP_DISABLE: ("0", "synap-npu: 1 = every NNAPI model falls back to the CPU"),
    PROP_PROFILE: ("0", "synap-npu: 1 = step-by-step execution and a per-layer "
                        "network_profile"),
    PROP_INT8_PERF: ("", "nnsim: synap-npu execTime/powerUsage for "
                         "TENSOR_QUANT8_ASYMM_SIGNED (empty = FLT_MAX, as vsi-npu)"),
}
register_properties(PROPERTIES)   # once, at import: listed by `nnsim props`


# -- the knobs ------------------------------------------------------------------------------------
def disabled() -> bool:
    return getprop_int(PROP_DISABLE, 0) == 1


def disabled_reason() -> str | None:
    """``NNAPI_SYNAP_DISABLE=1``: every operation refused, without asking the HAL."""
    if disabled():
        return f"{PROP_DISABLE}=1: NNAPI on the NPU is disabled, the model falls back to CPU"
    return None


def refuse_prepare_when_disabled() -> None:
    if disabled():
        raise OpFailedError(f"{NAME}: {PROP_DISABLE}=1")


def profiling() -> bool:
    return getprop_int(PROP_PROFILE, 0) == 1


def cache_files() -> tuple[int, int]:
    """NNAPI compilation caching only with ``vendor.npu.cache.model=1``."""
    return (1, 1) if getprop_int(PROP_NNAPI_CACHE, 0) == 1 else (0, 0)


def compile_cache() -> SynapCompileCache:
    return SynapCompileCache.from_properties()


def synap_capabilities(props: Props) -> Capabilities:
    """The vsi-npu layout (2.2) with float always on; int8 from ``vendor.nnsim.synap.int8_perf``
    (FLT_MAX when empty, 10.3)."""
    perf = PerformanceInfo(0.9, 0.9)
    table = {int(t): perf for t in (U8, B8, I32, F32, F16)}
    raw = props.get(PROP_INT8_PERF).strip()
    if raw:
        try:
            table[int(I8)] = PerformanceInfo(float(raw), float(raw))
        except ValueError:
            vlog.log_error(LOG_TAG, f"{PROP_INT8_PERF}={raw!r} is not a number")
    return table_capabilities(table, RELAXED, NO_CONTROL_FLOW, NO_CONTROL_FLOW)


# -- the lifecycle: conversion at the first execution, frozen shapes, statistics (4.1, 4.2) ------
def first_run(prepared: SimulatedPreparedModel) -> tuple[str, float]:
    """Conversion cost of the first execution; what the SyNAP compile cache did is kept in
    ``prepared.state["synap_cache"]`` (``result``: hit, miss, disabled, unkeyed or
    nnapi-cache; ``path``; ``compile_ns`` without the cache, ``hit_ns`` with a hit, ``ns``
    this time; ``warnings``) for `nnsim run`."""
    timing = prepared.driver.timing
    compile_ns = timing.compile_ns(prepared.cost)
    note = prepared.state["synap_cache"] = {
        "compile_ns": compile_ns, "hit_ns": timing.synap_cache_hit_ns(prepared.cost),
        "warnings": []}
    if prepared.from_cache:
        note.update(result="nnapi-cache", ns=timing.cache_load_ns(prepared.cost))
        return "nnapi-cache", note["ns"]
    cache = compile_cache()
    note.update(path=str(cache.path), capacity=cache.capacity, ns=compile_ns,
                warnings=cache.warnings)  # the same list: load warnings come later
    try:
        key = model_fingerprint(prepared.model)
    except ValueError:
        note["result"] = "unkeyed"
        return "compile", compile_ns
    layers = len(prepared.cost.ops)
    hit = cache.lookup_or_insert(key, layers, describe_model(prepared.model))
    if cache.capacity <= 0:
        note["result"] = "disabled"
        return "compile", compile_ns
    # nnsim's wording: no source shows SyNAP's own log line for a cache hit or miss
    if hit:
        note.update(result="hit", ns=note["hit_ns"])
        vlog.log_info(LOG_TAG, f"SyNAP cache hit: model {key[:16]} ({layers} layers) "
                               f"in {cache.path}, conversion reuses it")
        return "synap-cache", note["ns"]
    note["result"] = "miss"
    vlog.log_info(LOG_TAG, f"SyNAP cache miss: model {key[:16]} ({layers} layers), "
                           f"converting it and storing it in {cache.path}")
    return "compile", compile_ns


def freeze_input_shapes(prepared: SimulatedPreparedModel, inputs) -> None:
    """Input sizes cannot change after the first inference (4.1)."""
    shapes = tuple(None if x is None else tuple(np.shape(x)) for x in inputs)
    with prepared.lock:
        frozen = prepared.state.setdefault("input_shapes", shapes)
    if frozen != shapes:
        raise OpFailedError(f"{NAME}: input shapes {shapes} differ from {frozen} of the "
                            f"first inference; SyNAP cannot change them after it")


def load_network(prepared: SimulatedPreparedModel) -> None:
    """The converted network appears in the sysfs statistics until the model is freed (4.2)."""
    cost = prepared.cost
    stats = sysfs.synap_statistics()
    net = stats.load_network(len(cost.ops), cost.io_buffers, cost.io_bytes, prepared.profiling)
    prepared.state["network"] = net
    weakref.finalize(prepared, stats.unload_network, net.nid)


def record_inference(prepared: SimulatedPreparedModel, timing) -> None:
    """One inference in the sysfs statistics (and its per-layer profile when profiling)."""
    net = prepared.state.get("network")
    if net is None:
        return
    profile = None
    if prepared.profiling:
        timing_model = prepared.driver.timing
        profile = [sysfs.LayerProfile(timing_model.cycles(c) if c.unit != "--" else 0,
                                      int(c.total_ns // 1000),
                                      c.stats.bytes_read + c.stats.weight_bytes
                                      if c.unit != "--" else 0,
                                      c.stats.bytes_written if c.unit != "--" else 0,
                                      c.unit, c.layer_name) for c in prepared.cost.ops]
    sysfs.synap_statistics().record_inference(net, int(timing.device_ns // 1000), profile)


LIFECYCLE = Lifecycle(before_prepare=refuse_prepare_when_disabled, profiling=profiling,
                      first_run=first_run, on_compiled=load_network,
                      begin_execution=freeze_input_shapes, end_execution=record_inference)


class SynapHal:
    """SyNAP's NNHAL state, read as the driver's own attributes (``SimulatedDriver.vendor``):
    VeriSilicon's HAL build at SyNAP's BSP level (``hal``), the knobs, the compile cache."""

    compile_cache = staticmethod(compile_cache)
    disabled = staticmethod(disabled)
    profiling = staticmethod(profiling)

    def __init__(self, model_block_list=None):
        self.hal = VsiHal(SYNAP_BSP_LEVEL, model_block_list, log_tag=LOG_TAG)  # tag: assumption

    @property
    def bsp(self) -> str:
        return self.hal.bsp

    @property
    def hal_version(self) -> str:
        return self.hal.hal_version


def synap_npu(board: str | None = None, model_block_list=None) -> SimulatedDriver:
    """The synap-npu HAL with the timing of ``board`` (default vs680): the VSI rule set without
    its block lists (not SyNAP knobs), NNAPI_SYNAP_DISABLE, conversion at the first execution
    (4.1, 10.3)."""
    board = board or DEFAULT_BOARD
    vendor = SynapHal(model_block_list)
    hal = vendor.hal
    return SimulatedDriver(
        NAME, version_string=VERSION_STRING,    # assumption: the VSI NNHAL string (4.1)
        number_of_cache_files_needed=cache_files, feature_level=lambda: hal.feature_level,
        log_tag=LOG_TAG, rules=vsi_rules(hal, block_lists=False, disabled=disabled_reason),
        capabilities=synap_capabilities, timing=get_board(board).timing(NAME),
        lifecycle=LIFECYCLE, board=board, vendor=vendor)


SynapNpuDriver = synap_npu   # the name earlier code and tests construct it by


def describe_model(model) -> str:
    """A short text naming a step model for ``nnsim cache show``: operation count and types,
    the input shapes and types (the cache key alone is a hash)."""
    def name(enum, value):
        try:
            return enum(value).name
        except ValueError:
            return str(value)
    ops = Counter(name(OperationCode, op.type) for op in model.operations)
    top = ", ".join(f"{k} x{v}" for k, v in ops.most_common(3))
    more = f", +{len(ops) - 3} more" if len(ops) > 3 else ""
    ins = []
    for i in model.input_indexes:
        o = model.operands[i]
        dims = "x".join(str(d) for d in o.dimensions) or "scalar"
        ins.append(f"{dims} {name(OperandType, o.type)}")
    n = len(model.operations)
    return f"{n} operation{'s' if n != 1 else ''} ({top}{more}); input {', '.join(ins)}"


def compile_cache_summary(delegate_result) -> tuple[list[str], list[str]]:
    """(summary lines, warnings) of what the SyNAP compile cache did at the first inference of
    each synap-npu partition of a TFLite delegate result (`nnsim run`)."""
    notes = []
    for kernel in getattr(delegate_result, "kernels", None) or ():
        plan = getattr(getattr(kernel, "compilation", None), "plan", None)
        if plan is None:
            continue
        prepared = [plan.prepared] + [s.prepared for s in plan.execution_steps()]
        notes += [pm.state["synap_cache"] for pm in prepared
                  if getattr(getattr(pm, "driver", None), "name", None) == NAME
                  and "synap_cache" in getattr(pm, "state", {})]
    lines, warnings = [], []
    for k, n in enumerate(notes):
        head = "SyNAP compile cache" + (f" (synap-npu partition {k})" if len(notes) > 1 else "")
        ms = lambda ns: f"{ns / 1e6:.1f} ms"  # noqa: E731
        result = n.get("result")
        if result == "hit":
            lines.append(f"{head}: hit in {n['path']}: the first inference's conversion took "
                         f"{ms(n['ns'])} instead of {ms(n['compile_ns'])} (saved "
                         f"{ms(n['compile_ns'] - n['ns'])})")
        elif result == "miss":
            lines.append(f"{head}: miss in {n['path']}: the first inference converted the "
                         f"model ({ms(n['ns'])}) and stored it; a later run saves "
                         f"{ms(n['compile_ns'] - n['hit_ns'])}")
        elif result == "disabled":
            lines.append(f"{head}: disabled ({PROP_CACHE_CAPACITY}={n['capacity']}): the "
                         f"first inference converted the model ({ms(n['ns'])})")
        elif result == "nnapi-cache":
            lines.append(f"{head}: not used; the model came from the NNAPI compilation cache "
                         f"({ms(n['ns'])} to load)")
        elif result == "unkeyed":
            lines.append(f"{head}: not used (the model cannot be keyed); the first inference "
                         f"converted it ({ms(n['ns'])})")
        warnings += [w for w in n["warnings"] if w not in warnings]
    return lines, warnings


