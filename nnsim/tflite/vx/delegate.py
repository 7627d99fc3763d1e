"""The VX delegate (tflite-vx-delegate, ``libvx_delegate.so``) on a simulated board's NPU.

Spec: npu-drivers.md section 3, read against ``delegate_main.cc`` / ``vx_delegate_adaptor.cc``
(HEAD 3f4759e). ``VxDelegate.prepare(model)`` is ``PrepareDelegate``: every node of the
execution plan goes through ``Delegate::SupportedOp`` (rules.py, with its log lines), and the
supported ones are handed to TFLite's ``ReplaceNodeSubsetsWithDelegateKernels``: nnsim's port of
``PartitionGraphIntoIndependentNodeSubsets`` (nnsim/tflite/partition.py, shared with the NNAPI
delegate), with no partition limit and no device query. One ``VxDelegateKernel`` per partition.

The VX delegate reaches the NPU through TIM-VX, not NNAPI: no NNAPI model, no ExecutionPlan,
no HAL. A kernel computes its nodes with nnsim's TFLite CPU kernels on this machine (so its
numerics are the CPU path's) and reports the board time of the invoke (timing.py): the first
invoke compiles the partition's graph, or loads / writes the NBG cache (nbg_cache.py).
"""
from __future__ import annotations

import logging
import time
import weakref
from dataclasses import dataclass

from nnsim.drivers.profiles import current_board
from nnsim.platform import sysfs
from nnsim.runtime.board import ensure_board
from nnsim.tflite import tflog
from nnsim.tflite.builtins import UnsupportedOperatorError, create_builtin
from nnsim.tflite.builtins._base import numpy_dtype
from nnsim.tflite.delegate import DelegateError, DelegationResult, NodeDecision
from nnsim.tflite.partition import PARTITION, partition_graph_into_independent_node_subsets
from nnsim.tflite.vx import nbg_cache
from nnsim.tflite.vx import timing as vt
from nnsim.tflite.vx.options import VxDelegateOptions, echo_lines
from nnsim.tflite.vx.rules import check_node

DELEGATE_NAME = "Vx Delegate"          # the kernel registration's custom_name
LIBRARY = "libvx_delegate.so"
PLACEMENT = "NPU (VX delegate)"        # where a delegated node runs, in placement reports


class VxInvokeError(RuntimeError):
    """A partition's invoke failed (``Node number N (Vx Delegate) failed to invoke.``)."""


@dataclass(frozen=True)
class VxRefusal:
    """Why the delegate refused a node: the refusing function and its log line. ``type.name``
    and ``message`` read like the NNAPI delegate's validation failures (nnsim explain)."""
    where: str
    message: str

    @property
    def type(self):
        return _Named(self.where)


@dataclass(frozen=True)
class _Named:
    name: str


@dataclass
class VxDelegationResult(DelegationResult):
    """The NNAPI delegate's result shape, plus what the VX delegate ran on."""
    board: str = ""
    delegate_name: str = DELEGATE_NAME


@dataclass
class FirstRun:
    """What the first invoke of a partition did before running: ``kind`` is "compile",
    "nbg-store" (compile, then write the cache file) or "nbg-load" (the cached binary)."""
    kind: str
    ns: float
    path: str = ""


class VxDelegateKernel:
    """One VX partition: a TIM-VX graph built and compiled at the first invoke."""

    name = DELEGATE_NAME

    def __init__(self, delegate, model, subgraph_index, nodes, input_tensors, output_tensors,
                 node_index, board, index):
        self.delegate, self.model, self.subgraph_index = delegate, model, subgraph_index
        self.nodes, self.input_tensors, self.output_tensors = nodes, input_tensors, output_tensors
        self.node_index, self.board, self.index = node_index, board, index
        self.converted = self.compilation = self.last_execution = None   # no NNAPI
        sg = model.subgraphs[subgraph_index]
        self.cost = vt.partition_cost(sg, nodes, input_tensors, output_tensors, board)
        self.first_run: FirstRun | None = None
        self.last_simulated_ns: float | None = None
        self.invokes = 0
        self._builtins = None
        self._network = None
        self.nbg = None
        opts = delegate.options
        if opts.allowed_cache_mode and opts.cache_file_path:
            self.nbg = nbg_cache.open_at_init(opts.cache_file_path)   # Delegate::Init

    # -- placement and time, without running ----------------------------------------------------
    def node_devices(self) -> dict:
        return {n: [PLACEMENT] for n in self.nodes}

    def steady_ns(self) -> float:
        return self.cost.steady_ns

    def first_run_estimate(self) -> FirstRun:
        """What the first invoke adds, from the cache state found at Init."""
        if self.nbg is not None and self.nbg.present:
            return FirstRun("nbg-load", vt.nbg_load_ns(self.cost, self.board), str(self.nbg.path))
        ns = vt.compile_ns(self.cost, self.board)
        if self.nbg is not None:
            return FirstRun("nbg-store", ns + vt.nbg_store_ns(self.cost, self.board),
                            str(self.nbg.path))
        return FirstRun("compile", ns)

    # -- invoke ----------------------------------------------------------------------------------
    def invoke(self, values: dict) -> None:
        extra = 0.0
        if self.first_run is None:
            self._first_invoke()
            extra = self.first_run.ns
        self._run_nodes(values)
        self.invokes += 1
        self.last_simulated_ns = self.cost.steady_ns + extra
        if self._network is not None:
            sysfs.synap_statistics().record_inference(self._network,
                                                      int(self.cost.device_ns // 1000))

    def _load_network(self) -> None:
        """On a SyNAP board the delegate runs its graph through the SyNAP driver ("optimized
        to call directly the SyNAP API", npu-drivers.md 4.1), so the driver's statistics count
        its inferences too ([inferred]; NNAPI_SYNAP_DISABLE does not stop it, 4.1)."""
        self._network = None
        if "synap-npu" not in self.board.devices:
            return
        stats = sysfs.synap_statistics()
        io = len(self.input_tensors) + len(self.output_tensors)
        self._network = stats.load_network(len(self.nodes), io, self.cost.io_bytes)
        weakref.finalize(self, stats.unload_network, self._network.nid)

    def _fail(self, why: str):
        tflog.log(logging.ERROR, why)
        tflog.log(logging.ERROR, f"Node number {self.node_index} ({DELEGATE_NAME}) failed to "
                                 f"invoke.")
        raise VxInvokeError(f"{DELEGATE_NAME} partition {self.index} failed to invoke: {why}")

    def _first_invoke(self) -> None:
        first = self.first_run_estimate()
        sg = self.model.subgraphs[self.subgraph_index]
        if first.kind == "nbg-load":
            if self.nbg.size == 0:
                self._fail("Failed to verify graph")   # an empty NBG (nbg_cache.py docstring)
            graph = nbg_cache.fingerprint(sg, self.nodes)
            if self.nbg.graph and self.nbg.graph != graph:
                tflog.log(logging.WARNING, (
                    f"nnsim: {self.nbg.path} holds the NBG of another graph; the VX delegate "
                    f"loads cache_file_path without checking and would run that network"))
        elif first.kind == "nbg-store":
            nbg_cache.store(self.nbg, nbg_cache.fingerprint(sg, self.nodes), self.board.name,
                            self.nodes, self.cost.weight_bytes)
        self.first_run = first
        self._load_network()

    def _run_nodes(self, values: dict) -> None:
        """The partition's values from nnsim's TFLite CPU kernels (numerics = the CPU path)."""
        steps = self._steps()
        for builtin, ins, outs, dtypes in steps:
            arrays = [None if i < 0 else values.get(i) for i in ins]
            results = builtin.eval(arrays)
            for o, value, dtype in zip(outs, results, dtypes):
                if o < 0:
                    continue
                if value.dtype != dtype:   # as the interpreter's own check of a CPU node
                    raise builtin.error(f"output tensor {o} came out {value.dtype.name}, the "
                                        f"model says {dtype.name}")
                values[o] = value

    def _steps(self):
        if self._builtins is None:
            sg = self.model.subgraphs[self.subgraph_index]
            steps = []
            for n in self.nodes:
                op = sg.operators[n]
                try:
                    builtin = create_builtin(self.model, self.subgraph_index, n)
                except UnsupportedOperatorError as e:
                    raise UnsupportedOperatorError(
                        f"{e} (nnsim computes the {DELEGATE_NAME} partition's values with its "
                        f"TFLite CPU kernels)") from None
                builtin.prepare([None if i < 0 else tuple(sg.tensors[i].shape)
                                 for i in op.inputs])
                dtypes = [None if o < 0 else numpy_dtype(sg.tensors[o].type) for o in op.outputs]
                steps.append((builtin, tuple(op.inputs), tuple(op.outputs), dtypes))
            self._builtins = steps
        return self._builtins


class VxDelegate:
    """``libvx_delegate.so`` as an external delegate; options as ``VxDelegateOptions`` or
    keyword arguments (already typed; ``nnsim.tflite.load_delegate`` parses strings)."""

    name = DELEGATE_NAME
    provider = "EXTERNAL"

    def __init__(self, options: VxDelegateOptions | None = None, library: str = LIBRARY,
                 **kwargs):
        self.options = options or VxDelegateOptions()
        for key, value in kwargs.items():
            if not hasattr(self.options, key):
                raise ValueError(f"unknown VX delegate option {key!r}")
            setattr(self.options, key, value)
        self.library = library
        self.result: VxDelegationResult | None = None
        self.prepare_ns = 0
        ensure_board()
        for line in echo_lines(self.options):   # CreateVxDelegateFromOptions
            tflog.log(logging.INFO, line)

    @property
    def board(self):
        return current_board()

    def describe(self) -> str:
        """``Vx Delegate (libvx_delegate.so, TIM-VX) on the imx8mp NPU (VeriSilicon ...)``."""
        board = self.board
        npu = f" ({board.npu_title})" if board.npu_title else ""
        return f"{DELEGATE_NAME} ({self.library}, TIM-VX) on the {board.name} NPU{npu}"

    def candidate_devices(self) -> list:
        """No NNAPI device: the delegate drives the NPU through TIM-VX."""
        return []

    def devices_text(self, named=()) -> str:
        """The device line of ``nnsim run``/``graph``/``diff``: no NNAPI device is used."""
        return ("devices: no NNAPI device (the VX delegate reaches the NPU through TIM-VX: no "
                "NNAPI runtime, no HAL); nodes it refuses run on the TFLite CPU kernels")

    # -- PrepareDelegate -------------------------------------------------------------------------
    def prepare(self, model, subgraph_index: int = 0) -> VxDelegationResult:
        start = time.perf_counter_ns()
        try:
            return self._prepare(model, subgraph_index)
        finally:
            self.prepare_ns = time.perf_counter_ns() - start

    def _prepare(self, model, subgraph_index: int) -> VxDelegationResult:
        sg = model.subgraphs[subgraph_index]
        board = self.board
        try:
            vt.vx_params(board)   # a board without VX timing fails here, before any log line
        except ValueError as e:
            raise DelegateError(str(e)) from None
        plan = list(range(len(sg.operators)))
        decisions, supported = {}, []
        for n in plan:
            verdict = check_node(sg, n)
            if verdict.level:
                tflog.log(verdict.level, verdict.message)
            refusals = [] if verdict.supported else [VxRefusal(verdict.where, verdict.message)]
            decisions[n] = NodeDecision(n, sg.operators[n].name, refusals)
            if verdict.supported:
                supported.append(n)
        if not supported:   # ReplaceNodeSubsetsWithDelegateKernels returns at once
            return self._result(plan, [], 0, len(plan), 0, decisions, board, [])

        def node_io(n):
            op = sg.operators[n]
            return op.inputs, op.outputs
        subsets = partition_graph_into_independent_node_subsets(
            plan, node_io, supported, sg.outputs, len(sg.tensors))
        line = (f"Replacing {len(supported)} out of {len(plan)} node(s) with delegate "
                f"({DELEGATE_NAME}) node, yielding {len(subsets)} partitions for the whole "
                f"graph.")
        tflog.log(tflog.VERBOSE, line)
        items, kernels = [], []
        for s in subsets:
            if s.type != PARTITION:
                items.extend(("node", n) for n in s.nodes)
                continue
            inputs = [t for t in s.input_tensors if sg.tensors[t].data is None]
            kernel = VxDelegateKernel(self, model, subgraph_index, list(s.nodes), inputs,
                                      list(s.output_tensors), len(plan) + len(kernels), board,
                                      len(kernels))
            items.append(("delegate", len(kernels)))
            kernels.append(kernel)
            for n in s.nodes:
                decisions[n].delegated = True
        return self._result(items, kernels, len(supported), len(plan), len(subsets),
                            decisions, board, [line])

    def _result(self, items, kernels, replaced, total, partitions, decisions, board, lines):
        if items and not isinstance(items[0], tuple):
            items = [("node", n) for n in items]
        self.result = VxDelegationResult(items, kernels, replaced, total, partitions, decisions,
                                         0, [], list(lines), board.name)
        return self.result
