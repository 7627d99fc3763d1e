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
* the sysfs statistics of 4.2 (:mod:`nnsim.drivers.sysfs`).
"""
from __future__ import annotations

import json
import os
import threading
import weakref

import numpy as np

from nnsim.drivers import sysfs
from nnsim.drivers import timing as tm
from nnsim.drivers.base import PerformanceInfo, SupportDecision
from nnsim.drivers.simulated import model_fingerprint
from nnsim.drivers.vsi_npu import B8, F16, F32, I8, I32, U8, VERSION_STRING, VsiNpuDriver
from nnsim.errors import OpFailedError
from nnsim.runtime import vlog
from nnsim.runtime.properties import getprop, getprop_int, register_property

PROP_CACHE_PATH = "vendor.SYNAP_CACHE_PATH"
PROP_CACHE_CAPACITY = "vendor.SYNAP_CACHE_CAPACITY"
PROP_NNAPI_CACHE = "vendor.npu.cache.model"
PROP_DISABLE = "vendor.NNAPI_SYNAP_DISABLE"
PROP_PROFILE = "vendor.NNAPI_SYNAP_PROFILE"
PROP_INT8_PERF = "vendor.nnsim.synap.int8_perf"
DEFAULT_CACHE_PATH = "/data/vendor/synap/nnhal.cache"  # 4.1
DEFAULT_CACHE_CAPACITY = 10000                          # 4.1
SYNAP_BSP_LEVEL = "android-12.1.0_1.0.0"                # 10.3 (assumption)


class SynapCompileCache:
    """The SyNAP NNHAL compile cache: a file of model keys in least-recently-used order."""

    _lock = threading.Lock()

    def __init__(self, path: str, capacity: int):
        self.path = sysfs.device_path(path)
        self.capacity = capacity

    def _load(self) -> dict:
        try:
            raw = json.loads(self.path.read_text())
            if raw.get("format") == "nnsim-synap-cache 1":
                return raw
        except (OSError, ValueError):
            pass
        return {"format": "nnsim-synap-cache 1", "clock": 0, "entries": {}}

    def _store(self, raw: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(raw))
        os.replace(tmp, self.path)

    def lookup_or_insert(self, key: str, layers: int) -> bool:
        """True when ``key`` was cached (and refresh it); else insert it, evicting the least
        recently used entries beyond the capacity. A capacity of 0 disables the cache."""
        if self.capacity <= 0:
            return False
        with self._lock:
            raw = self._load()
            raw["clock"] += 1
            entries = raw["entries"]
            hit = key in entries
            entries[key] = {"used": raw["clock"], "layers": layers}
            while len(entries) > self.capacity:
                del entries[min(entries, key=lambda k: entries[k]["used"])]
            try:
                self._store(raw)
            except OSError as e:
                vlog.log_error("synap-npu", f"cannot write the SyNAP cache {self.path}: {e}")
            return hit

    def keys(self) -> list[str]:
        entries = self._load()["entries"]
        return sorted(entries, key=lambda k: entries[k]["used"])


class SynapNpuDriver(VsiNpuDriver):
    name = "synap-npu"                    # 4.1 ("NNAPI accelerators available: [synap-npu,...]")
    version_string = VERSION_STRING       # assumption: the VSI NNHAL string (4.1 provenance)
    default_board = "vs680"
    properties = {
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
    log_tag = "android.hardware.neuralnetworks@1.3-service-synap-npu"  # assumption

    def __init__(self, board: str | None = None, model_block_list=None):
        super().__init__(board, bsp=SYNAP_BSP_LEVEL, model_block_list=model_block_list)

    # -- identity and capabilities ------------------------------------------------------------------
    @property
    def number_of_cache_files_needed(self) -> tuple[int, int]:
        return (1, 1) if getprop_int(PROP_NNAPI_CACHE, 0) == 1 else (0, 0)

    @property
    def performance(self) -> dict:
        perf = PerformanceInfo(0.9, 0.9)
        table = {int(t): perf for t in (U8, B8, I32, F32, F16)}
        raw = getprop(PROP_INT8_PERF).strip()
        if raw:
            try:
                table[int(I8)] = PerformanceInfo(float(raw), float(raw))
            except ValueError:
                vlog.log_error(self.log_tag, f"{PROP_INT8_PERF}={raw!r} is not a number")
        return table

    # -- support ----------------------------------------------------------------------------------
    def support_context(self, model):
        return set()  # the vsi debug op block list is not a SyNAP knob

    def model_veto(self, model):
        return None   # no MODEL_BLOCK_LEVEL on SyNAP

    def disabled(self) -> bool:
        return getprop_int(PROP_DISABLE, 0) == 1

    def supported_operations_with_reasons(self, model) -> list[SupportDecision]:
        if self.disabled():
            reason = f"{PROP_DISABLE}=1: NNAPI on the NPU is disabled, the model falls back to CPU"
            return [SupportDecision(False, reason) for _ in model.operations]
        return super().supported_operations_with_reasons(model)

    # -- prepare / first execution -------------------------------------------------------------------
    def profiling(self) -> bool:
        return getprop_int(PROP_PROFILE, 0) == 1

    def prepare(self, model, preference, priority, cache=None):
        if self.disabled():
            raise OpFailedError(f"{self.name}: {PROP_DISABLE}=1")
        return super().prepare(model, preference, priority, cache)  # no NPU work here (4.1)

    def compile_cache(self) -> SynapCompileCache:
        return SynapCompileCache(getprop(PROP_CACHE_PATH) or DEFAULT_CACHE_PATH,
                                 getprop_int(PROP_CACHE_CAPACITY, DEFAULT_CACHE_CAPACITY))

    def first_run_cost(self, prepared) -> tuple[str, float]:
        p = self.timing_params()
        if prepared.from_cache:
            return "nnapi-cache", tm.cache_load_ns(prepared.cost, p)
        try:
            key = model_fingerprint(prepared.model)
        except ValueError:
            return "compile", tm.compile_ns(prepared.cost, p)
        if self.compile_cache().lookup_or_insert(key, len(prepared.cost.ops)):
            return "synap-cache", tm.synap_cache_hit_ns(prepared.cost, p)
        return "compile", tm.compile_ns(prepared.cost, p)

    def begin_execution(self, prepared, inputs) -> float:
        shapes = tuple(None if x is None else tuple(np.shape(x)) for x in inputs)
        with prepared.lock:
            frozen = prepared.state.setdefault("input_shapes", shapes)
        if frozen != shapes:  # input sizes cannot change after the first inference (4.1)
            raise OpFailedError(f"{self.name}: input shapes {shapes} differ from {frozen} of the "
                                f"first inference; SyNAP cannot change them after it")
        return super().begin_execution(prepared, inputs)

    def on_compiled(self, prepared) -> None:
        cost = prepared.cost
        stats = sysfs.synap_statistics()
        net = stats.load_network(len(cost.ops), cost.io_buffers, cost.io_bytes, prepared.profiling)
        prepared.state["network"] = net
        weakref.finalize(prepared, stats.unload_network, net.nid)

    def end_execution(self, prepared, timing) -> None:
        net = prepared.state.get("network")
        if net is None:
            return
        profile = None
        if prepared.profiling:
            p = self.timing_params()
            profile = [sysfs.LayerProfile(tm.cycles(c, p) if c.unit != "--" else 0,
                                          int(c.total_ns // 1000),
                                          c.stats.bytes_read + c.stats.weight_bytes
                                          if c.unit != "--" else 0,
                                          c.stats.bytes_written if c.unit != "--" else 0,
                                          c.unit, c.layer_name) for c in prepared.cost.ops]
        sysfs.synap_statistics().record_inference(net, int(timing.device_ns // 1000), profile)


for _key, (_default, _meaning) in SynapNpuDriver.properties.items():  # listed by `nnsim props`
    register_property(_key, _default, _meaning)
