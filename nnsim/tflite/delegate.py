"""The TFLite NNAPI delegate: ``StatefulNnApiDelegate::DoPrepare`` and ``NNAPIDelegateKernel``.

Spec: tflite-nnapi-delegate.md sections 1, 6.1-6.7. ``NnApiDelegate.prepare(model)`` decides
which TFLite nodes go to NNAPI (Validate per node, device selection, the devices'
getSupportedOperationsForDevices, PartitionGraphIntoIndependentNodeSubsets,
LimitDelegatedPartitions), logs "Replacing N out of M node(s) ...", and returns the new
execution plan: TFLite nodes that stay on the CPU and one delegate kernel per delegated
partition. Every refused node keeps its reasons for ``nnsim explain``.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from nnsim.errors import BadDataError, NnapiError
from nnsim.nnapi import ANeuralNetworksModel_getSupportedOperationsForDevices
from nnsim.platform.properties import getprop_int, register_property, runtime_feature_level
from nnsim.runtime import trace
from nnsim.runtime.board import ensure_board
from nnsim.runtime.compilation import CompilationBuilder
from nnsim.runtime.devices import get_device_manager
from nnsim.runtime.execution import Execution
from nnsim.runtime.plan import op_label
from nnsim.tflite import tflog
from nnsim.tflite.convert import ConvertOptions, build_nnapi_model
from nnsim.tflite.convert.builder import (ConvertError, UnwrittenOutputError,
                                          is_sparse_weight_node)
from nnsim.tflite.partition import (PARTITION, limit_delegated_partitions,
                                    partition_graph_into_independent_node_subsets)
from nnsim.tflite.validate import validate_node
from nnsim.types import ResultCode

NNAPI_CPU = "nnapi-reference"
DELEGATE_NAME = "TfLiteNnapiDelegate"
MIN_SDK_NNAPI, MIN_SDK_NNAPI12, MIN_SDK_NNAPI13 = 27, 29, 30
SDK_PROPERTY = "ro.build.version.sdk"
register_property(SDK_PROPERTY, "31", "Emulated Android SDK version (27..31+): what the TFLite "
                                      "NNAPI delegate reads as android_sdk_version")


class DelegateError(Exception):
    """Applying the delegate failed (the interpreter restores the original plan)."""


class _PartitionRefused(Exception):
    """A partition nnsim keeps on the CPU (``UnwrittenOutputError``): its nodes, and why."""

    def __init__(self, nodes, reason: str):
        super().__init__(reason)
        self.nodes, self.reason = set(nodes), reason


@dataclass
class NnApiDelegateOptions:
    """``StatefulNnApiDelegate::Options`` with the library defaults (6.1)."""
    execution_preference: int = -1
    accelerator_name: str | None = None
    cache_dir: str | None = None
    model_token: str | None = None
    disallow_nnapi_cpu: bool = True
    max_number_delegated_partitions: int = 3
    allow_fp16: bool = False
    execution_priority: int = 100
    max_compilation_timeout_duration_ns: int = 0
    max_execution_timeout_duration_ns: int = 0
    max_execution_loop_timeout_duration_ns: int = 0
    allow_dynamic_dimensions: bool = False
    use_burst_computation: bool = False
    max_execution_cache_size: int = 4
    # nnsim: the emulated ``ro.build.version.sdk``; None reads the property (board profile).
    android_sdk_version: int | None = None


@dataclass
class NodeDecision:
    """Why a node was or was not delegated (for ``nnsim explain``)."""
    node: int
    op_name: str
    validation_failures: list = field(default_factory=list)
    device_refusal: str = ""
    delegated: bool = False
    dropped_by_partition_limit: bool = False


@dataclass
class DelegationResult:
    """The execution plan after delegation: items are ``("node", i)`` or ``("delegate", k)``."""
    plan: list
    kernels: list
    nodes_replaced: int
    nodes_total: int
    partitions: int
    decisions: dict
    target_feature_level: int
    devices: list
    log_lines: list


class NnApiDelegateKernel:
    """One delegated partition: its NNAPI model, compilation and execution (NNAPIDelegateKernel)."""

    def __init__(self, delegate: "NnApiDelegate", model, subgraph_index: int, nodes: list,
                 input_tensors: list, output_tensors: list, node_index: int, converted=None):
        self.delegate, self.model, self.subgraph_index = delegate, model, subgraph_index
        self.nodes, self.input_tensors, self.output_tensors = nodes, input_tensors, output_tensors
        self.node_index = node_index          # index of the delegate node in the new plan
        self.converted = converted
        self.compilation = None
        self.last_execution = None
        self._cache_size = 0   # executions kept (see _execution); set by prepare
        # NNAPIExecutionCache: signature -> (reusable execution, input pool, output pool)
        self._executions: OrderedDict = OrderedDict()

    def init(self, target_feature_level: int) -> None:
        if self.converted is None:
            self.converted = self.delegate._convert(self.model, self.subgraph_index, self.nodes,
                                                    self.input_tensors, self.output_tensors,
                                                    target_feature_level)

    def prepare(self) -> None:
        opts, devices = self.delegate.options, self.delegate.target_devices
        nnapi_model = self.converted.nnapi_model
        try:
            if devices:
                comp = CompilationBuilder.create_for_devices(nnapi_model, devices)
            else:
                comp = CompilationBuilder(nnapi_model)
            if opts.execution_preference >= 0:
                comp.set_preference(opts.execution_preference)
            if opts.cache_dir and opts.model_token and self.delegate.sdk >= MIN_SDK_NNAPI12:
                comp.set_caching(opts.cache_dir, self._cache_token())
            if self.delegate.sdk >= MIN_SDK_NNAPI13:
                comp.set_priority(opts.execution_priority)
                if opts.max_compilation_timeout_duration_ns and devices and len(devices) == 1:
                    comp.set_timeout(opts.max_compilation_timeout_duration_ns)
            if trace.active():
                trace.record("NNAPI model", purpose="compilation", delegate_node=self.node_index,
                             nodes=list(self.nodes), op_nodes=_op_nodes(self.converted))
            comp.finish()
        except NnapiError as e:
            tflog.log(logging.ERROR, f"NN API returned error {ResultCode(e.result_code).name} "
                                     f"at line 0 while completing NNAPI compilation.")
            tflog.log(logging.ERROR, f"Node number {self.node_index} ({DELEGATE_NAME}) failed "
                                     f"to prepare.")
            raise DelegateError(str(e)) from e
        self.compilation = comp
        # nnapi_delegate.cc: executions are cached (reusable) only above runtime FL 30
        reusable = self.delegate.runtime_feature_level() > MIN_SDK_NNAPI13
        self._cache_size = int(opts.max_execution_cache_size) if reusable else 0

    def _cache_token(self) -> bytes:
        # Upstream tiles the partition's 64-bit fingerprint; any stable 32 bytes derived from
        # the user token and the partition serve the same purpose.
        key = f"{self.delegate.options.model_token}:{self.nodes}".encode()
        return hashlib.sha256(key).digest()

    def invoke(self, values: dict) -> None:
        """Read the partition inputs from ``values`` (tensor -> array) and write its outputs,
        with the Invoke type conversions of tflite-nnapi-delegate.md 3.6. The execution's
        outputs are the partition's output pool, whose arrays become the output tensors'
        values (the delegate copies them back)."""
        conv = self.converted
        inputs = conv.nnapi_inputs(values)
        ex, bound, out_pool = self._execution([a.shape for a in inputs])   # (ndarrays)
        for k, (tensor, arr) in enumerate(zip(conv.model_input_tensors, inputs)):
            _bind_input(ex, bound, k, arr, arr is values.get(tensor))
        try:
            ex.compute()
        except NnapiError as e:
            tflog.log(logging.ERROR, f"NN API returned error {ResultCode(e.result_code).name} "
                                     f"at line 0 while running computation.")
            tflog.log(logging.ERROR, f"Node number {self.node_index} ({DELEGATE_NAME}) failed "
                                     f"to invoke.")
            raise
        self.last_execution = ex
        values.update(conv.tflite_outputs(out_pool))

    def _execution(self, shapes: list) -> tuple:
        """``(execution, bound inputs, output pool)`` for inputs of these shapes.

        nnapi_delegate.cc ``Invoke``: when the runtime's feature level is above 30 and
        ``max_execution_cache_size`` > 0, executions are made reusable and kept in an LRU
        ``NNAPIExecutionCache`` keyed by the request's signature (here: the input shapes, the
        only dynamic part of a request, as nnsim has no buffer handles); a cached execution
        computes again without being created or its outputs bound. Otherwise every invoke
        creates, binds and frees a new execution."""
        key = tuple(map(tuple, shapes))
        reuse = self._cache_size > 0
        if reuse and key in self._executions:
            self._executions.move_to_end(key)
            return self._executions[key]
        model = self.converted.nnapi_model
        ex = Execution(self.compilation)
        if reuse:
            ex.set_reusable(True)
        out_pool = []
        for k, index in enumerate(model.output_indexes):
            operand = model.operands[index]
            buf = np.zeros(tuple(operand.dimensions), operand.dtype())
            ex.set_output(k, None, buf)
            out_pool.append(buf)
        # per input: the array bound to the execution, and the pool buffer of the input
        # when its values need a copy (a converted or non-contiguous value)
        inputs = [[None, np.zeros(shape, model.operands[index].dtype())]
                  for index, shape in zip(model.input_indexes, key)]
        entry = (ex, inputs, out_pool)
        if reuse:
            self._executions[key] = entry
            while len(self._executions) > self._cache_size:
                self._executions.popitem(last=False)
        return entry


def _bind_input(ex: Execution, bound: list, k: int, value, is_tensor: bool) -> None:
    """Input ``k`` of the execution: the TFLite tensor's own array (``is_tensor``: no
    conversion) when its type and layout are the operand's, so that a reused execution stays
    bound to it (a tensor keeps its buffer from invoke to invoke) and the prepared plans to
    their inputs; else a copy of the value's bytes in the input's pool buffer (as the
    delegate's memcpy into the shared input pool; a same-size dtype is reinterpreted, not
    converted). Either way the model reads the same values."""
    current, pool = bound[k]
    if (is_tensor and isinstance(value, np.ndarray) and value.dtype == pool.dtype
            and value.shape == pool.shape and value.flags.c_contiguous):
        if value is not current:
            ex.set_input(k, None, value)
            bound[k][0] = value
        return
    src = np.ascontiguousarray(value)
    if src.nbytes != pool.nbytes:
        raise BadDataError(f"Setting argument with invalid length: {src.nbytes}, expected "
                           f"length: {pool.nbytes}")
    pool.reshape(-1).view(np.uint8)[:] = src.reshape(-1).view(np.uint8)
    if current is not pool:
        ex.set_input(k, None, pool)
        bound[k][0] = pool


class NnApiDelegate:
    """``tflite::StatefulNnApiDelegate``. Options as keyword arguments or an options object."""

    def __init__(self, options: NnApiDelegateOptions | None = None, **kwargs):
        self.options = options or NnApiDelegateOptions()
        for key, value in kwargs.items():
            if not hasattr(self.options, key):
                raise ValueError(f"unknown NNAPI delegate option {key!r}")
            setattr(self.options, key, value)
        self.target_devices: list = []
        self.result: DelegationResult | None = None
        self.prepare_ns = 0
        ensure_board()   # a script that chose no board meets $NNSIM_BOARD or imx8mp
        tflog.log(logging.INFO, "Created TensorFlow Lite delegate for NNAPI.", once=True)

    @property
    def sdk(self) -> int:
        if self.options.android_sdk_version is not None:
            return int(self.options.android_sdk_version)
        return getprop_int(SDK_PROPERTY, 31)

    def runtime_feature_level(self) -> int:
        """``ANeuralNetworks_getRuntimeFeatureLevel()`` when present (SDK >= 31: that Android's
        runtime, FL5 .. FL7), else the SDK."""
        return runtime_feature_level(self.sdk) if self.sdk >= 31 else self.sdk

    def _should_use_target_devices(self, exclude_nnapi_reference: bool = False) -> bool:
        name = self.options.accelerator_name
        if exclude_nnapi_reference and name is not None and name == NNAPI_CPU:
            return False
        return (self.options.disallow_nnapi_cpu and self.sdk >= MIN_SDK_NNAPI12) or \
            name is not None

    def _convert(self, model, subgraph_index, nodes, inputs, outputs, target_feature_level):
        opts = ConvertOptions(target_feature_level=target_feature_level,
                              android_sdk_version=self.sdk, allow_fp16=self.options.allow_fp16)
        return build_nnapi_model(model, subgraph_index, list(nodes), list(inputs), list(outputs),
                                 opts)

    def candidate_devices(self) -> list[tuple[str, str | None]]:
        """The devices this delegate may hand operations to, as ``(name, None)``, and the
        others with the reason they are not candidates ``(name, reason)``, in the
        DeviceManager's order; devices ``debug.nn.enabled-devices`` hides are not listed."""
        devices = get_device_manager().get_devices()
        if self.sdk < MIN_SDK_NNAPI:
            return [(d.name, f"Android SDK {self.sdk} < 27 has no NNAPI") for d in devices]
        if not self._should_use_target_devices():
            # the runtime chooses among every device (createCompilation without a device list)
            return [(d.name, None) for d in devices]
        name = self.options.accelerator_name
        if name is not None:
            return [(d.name, None if d.name == name else f"accelerator_name={name}")
                    for d in devices]
        return [(d.name, "disallow_nnapi_cpu" if d.name == NNAPI_CPU else None)
                for d in devices]

    def devices_text(self, named=()) -> str:
        """``devices: vsi-npu, nnapi-reference (excluded: disallow_nnapi_cpu)``: every device
        of the board, each excluded one with the reason; ``named``: the devices a
        ``--device`` flag kept (the others are reported as excluded by it)."""
        listed = self.candidate_devices()
        shown = {name for name, _ in listed}
        parts = [f"{d.name} (excluded: --device)" for d in get_device_manager().drivers()
                 if d.name not in shown]   # hidden by debug.nn.enabled-devices
        for name, reason in listed:
            if named and name not in named:
                reason = "--device"
            parts.append(name if reason is None else f"{name} (excluded: {reason})")
        return "devices: " + ", ".join(parts)

    # -- DoPrepare ---------------------------------------------------------------------------------
    def prepare(self, model, subgraph_index: int = 0) -> DelegationResult | None:
        """Apply the delegate to one subgraph; None when nothing is delegated.
        ``prepare_ns`` records the host time it took (benchmark's ModifyGraphWithDelegate)."""
        start = time.perf_counter_ns()
        try:
            return self._prepare(model, subgraph_index)
        finally:
            self.prepare_ns = time.perf_counter_ns() - start

    def _prepare(self, model, subgraph_index: int) -> DelegationResult | None:
        sg = model.subgraphs[subgraph_index]
        plan = list(range(len(sg.operators)))
        sdk = self.sdk
        if sdk < MIN_SDK_NNAPI:
            return None
        target_fl = sdk
        all_devices = get_device_manager().get_devices()
        self.target_devices = []
        if sdk >= MIN_SDK_NNAPI12:
            if self._should_use_target_devices():
                devices = self._get_target_devices(all_devices)
                if not devices:
                    return None
                self.target_devices = devices
                target_fl = self._target_feature_level(devices)
            elif len(all_devices) <= 1:
                return None
        is_accelerator_specified = self._should_use_target_devices(exclude_nnapi_reference=True)
        if trace.active():
            listed = self.candidate_devices()
            trace.record("device selection", feature_level=target_fl,
                         devices=[name for name, why in listed if why is None],
                         excluded={name: why for name, why in listed if why is not None},
                         target_devices=[d.name for d in self.target_devices])
        decisions = {}
        supported = []
        for n in plan:
            op = sg.operators[n]
            failures = validate_node(model, sg, n, target_fl, is_accelerator_specified)
            decisions[n] = NodeDecision(n, op.name, list(failures))
            trace.record("Validate", node=n, op=op.name, supported=not failures,
                         reasons=[f"{f.type.name}: {f.message}" for f in failures])
            if not failures:
                supported.append(n)
        self._decisions = decisions
        if not supported:
            return self._result(plan, [], 0, len(plan), 1 if plan else 0, decisions, target_fl)
        cached = self._load_cached_nodes(model)
        prebuilt = {}
        if cached is not None:
            nodes_to_delegate = cached
        elif is_accelerator_specified and sdk >= MIN_SDK_NNAPI12:
            nodes_to_delegate, prebuilt = self._nodes_supported_by_accelerator(
                model, subgraph_index, plan, supported, target_fl, decisions)
        else:
            nodes_to_delegate = supported
        partitions = [s for s in self._preview(sg, plan, nodes_to_delegate)
                      if s.type == PARTITION]
        limited = limit_delegated_partitions(self.options.max_number_delegated_partitions,
                                             partitions, nodes_to_delegate)
        for n in set(nodes_to_delegate) - set(limited):
            decisions[n].dropped_by_partition_limit = True
        nodes_to_delegate = limited
        self._save_cached_nodes(model, nodes_to_delegate)
        if not nodes_to_delegate:
            return self._result(plan, [], 0, len(plan), 1, decisions, target_fl)
        while True:
            try:
                return self._replace_node_subsets(model, subgraph_index, plan,
                                                  nodes_to_delegate, decisions, target_fl,
                                                  prebuilt)
            except _PartitionRefused as refused:   # nnsim: on the CPU rather than unwritten
                for n in refused.nodes:
                    decisions[n].device_refusal = refused.reason
                nodes_to_delegate = [n for n in nodes_to_delegate if n not in refused.nodes]
                if not nodes_to_delegate:
                    return self._result(plan, [], 0, len(plan), 1, decisions, target_fl)

    def _get_target_devices(self, all_devices) -> list:
        name = self.options.accelerator_name
        if name is not None:
            for d in all_devices:
                if d.name == name:
                    return [d]
            names = ",".join(d.name for d in all_devices)
            message = (f"Could not find the specified NNAPI accelerator: {name}. Must be one "
                       f"of: {{{names}}}.")
            tflog.log(logging.ERROR, message)
            raise DelegateError(message)
        return [d for d in all_devices if d.name != NNAPI_CPU]

    def _target_feature_level(self, devices) -> int:
        runtime_fl = self.runtime_feature_level()
        phone_fl = runtime_feature_level(self.sdk)
        device_max = max(min(phone_fl, int(d.feature_level)) for d in devices)
        if 0 < device_max < runtime_fl:
            tflog.log(tflog.DEBUG_BUILD, f"Changing NNAPI Feature Level {runtime_fl} to supported "
                                     f"by target devices: {device_max}")
            return device_max
        return runtime_fl

    @staticmethod
    def _preview(sg, plan, nodes):
        def node_io(n):
            op = sg.operators[n]
            return op.inputs, op.outputs
        return partition_graph_into_independent_node_subsets(
            plan, node_io, nodes, sg.outputs, len(sg.tensors))

    def _nodes_supported_by_accelerator(self, model, subgraph_index, plan, supported,
                                        target_fl, decisions):
        """``GetNodesSupportedByAccelerator`` (6.3)."""
        sg = model.subgraphs[subgraph_index]
        result, prebuilt = [], {}
        for part in self._preview(sg, plan, supported):
            if part.type != PARTITION:
                continue
            try:
                converted = self._convert(model, subgraph_index, part.nodes,
                                          part.input_tensors, part.output_tensors, target_fl)
            except UnwrittenOutputError as e:
                for n in part.nodes:   # nnsim: on the CPU rather than unwritten (3.7)
                    decisions[n].device_refusal = str(e)
                continue
            except (NnapiError, ConvertError) as e:
                # BuildGraph failed (e.g. an operation NNAPI's validation refuses): DoPrepare
                # fails and the interpreter restores its plan (6.3)
                raise DelegateError(str(e)) from e
            if trace.active():
                trace.record("NNAPI model", purpose="getSupportedOperationsForDevices",
                             delegate_node=None, nodes=list(part.nodes),
                             op_nodes=_op_nodes(converted))
            code, ops_ok = ANeuralNetworksModel_getSupportedOperationsForDevices(
                converted.nnapi_model, self.target_devices)
            if code != ResultCode.NO_ERROR:
                raise DelegateError(f"getSupportedOperationsForDevices failed with {code}")
            node_ok = {n: True for n in part.nodes}
            reasons = _device_reasons(converted, self.target_devices)
            for k, ok in enumerate(ops_ok):
                n = converted.nnapi_to_tflite_node[k]
                if not ok:
                    node_ok[n] = False
                    if not decisions[n].device_refusal:
                        decisions[n].device_refusal = reasons.get(k, "refused by the device")
            kept = [n for n in part.nodes if node_ok[n]]
            trace.record("GetNodesSupportedByAccelerator", kept=kept,
                         refused=[n for n in part.nodes if not node_ok[n]])
            if len(kept) < len(part.nodes) and \
                    any(is_sparse_weight_node(sg, sg.operators[n]) for n in part.nodes):
                # "Only allow full model delegation for sparse model": the whole partition
                # stays on the CPU (6.3)
                for n in kept:
                    decisions[n].device_refusal = ("its partition has sparse weights (DENSIFY) "
                                                   "and a node the devices refuse")
                kept = []
            if len(kept) == len(part.nodes):
                prebuilt[part.nodes[0]] = converted
            result.extend(kept)
        return sorted(result, key=plan.index), prebuilt

    def _replace_node_subsets(self, model, subgraph_index, plan, nodes_to_delegate, decisions,
                              target_fl, prebuilt):
        sg = model.subgraphs[subgraph_index]
        subsets = self._preview(sg, plan, nodes_to_delegate)
        line = (f"Replacing {len(nodes_to_delegate)} out of {len(plan)} node(s) with delegate "
                f"({DELEGATE_NAME}) node, yielding {len(subsets)} partitions for the whole graph.")
        tflog.log(tflog.VERBOSE, line)
        trace.record("delegate partitions", partitions=[
            {"delegated": s.type == PARTITION, "nodes": list(s.nodes)} for s in subsets])
        new_plan, kernels = [], []
        next_node = len(sg.operators)
        for s in subsets:
            if s.type != PARTITION:
                new_plan.extend(("node", n) for n in s.nodes)
                continue
            kernel = NnApiDelegateKernel(self, model, subgraph_index, s.nodes, s.input_tensors,
                                         s.output_tensors, next_node,
                                         prebuilt.get(s.nodes[0]))
            next_node += 1
            new_plan.append(("delegate", len(kernels)))
            kernels.append(kernel)
            for n in s.nodes:
                decisions[n].delegated = True
        try:
            for kernel in kernels:
                try:
                    kernel.init(target_fl)
                except UnwrittenOutputError as e:
                    raise _PartitionRefused(kernel.nodes, str(e)) from None
                kernel.prepare()
        except (NnapiError, DelegateError) as e:
            # the interpreter (subgraph.cc) logs "Restored original execution plan ..."
            raise DelegateError(str(e)) from e
        return self._result(new_plan, kernels, len(nodes_to_delegate), len(plan), len(subsets),
                            decisions, target_fl, [line])

    def _result(self, plan, kernels, replaced, total, partitions, decisions, target_fl,
                lines=()):
        items = plan if plan and isinstance(plan[0], tuple) else [("node", n) for n in plan]
        self.result = DelegationResult(items, kernels, replaced, total, partitions, decisions,
                                       target_fl, list(self.target_devices), list(lines))
        return self.result

    # -- serialization cache (cache_dir + model_token, key "nnapi_" + accelerator) ----------------
    def _cache_path(self, model):
        o = self.options
        if not (o.cache_dir and o.model_token) or self.sdk < MIN_SDK_NNAPI12:
            return None
        key = f"nnapi_{o.accelerator_name or ''}:{o.model_token}:{len(model.main.operators)}"
        name = hashlib.sha256(key.encode()).hexdigest()[:32] + ".nodes.json"
        return os.path.join(o.cache_dir, name)

    def _load_cached_nodes(self, model):
        path = self._cache_path(model)
        if path and os.path.exists(path):
            try:
                with open(path) as f:
                    nodes = json.load(f)
                if isinstance(nodes, list) and all(isinstance(n, int) for n in nodes):
                    return nodes
            except (OSError, ValueError):
                pass
        return None

    def _save_cached_nodes(self, model, nodes) -> None:
        path = self._cache_path(model)
        if not path:
            return
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                json.dump(list(nodes), f)
        except OSError:
            tflog.log(logging.WARNING, "Could not save delegated nodes")


def _op_nodes(converted) -> dict:
    """``OPERATION:index`` (the runtime's label, sorted order) -> the TFLite node it came from."""
    model = converted.nnapi_model
    return {op_label(model, k): converted.nnapi_to_tflite_node[model.sorted_to_original[k]]
            for k in range(len(model.operations))}


def _device_reasons(converted, devices) -> dict:
    """NNAPI op index -> the first device's refusal reason, for explain."""
    reasons = {}
    model = converted.nnapi_model
    for d in devices:
        try:
            decisions = d.supported_operations_with_reasons(model)
        except Exception:  # a driver bug must not hide the delegate's answer
            continue
        for sorted_index, dec in enumerate(decisions):
            original = model.sorted_to_original[sorted_index]
            if not dec.supported and original not in reasons:
                reasons[original] = f"{d.name}: {dec.reason}"
    return reasons
