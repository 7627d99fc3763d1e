"""``nnsim benchmark``: TFLite's benchmark_model on a simulated board.

The line sequence, number formatting and op-profiling tables follow tflite-nnapi-delegate.md
7.2-7.4. Timing is the board's simulated time by default (``--timing=simulated``: delegate
partitions report the drivers' simulated in-driver time, CPU nodes the board CPU cost model);
``--timing=host`` reports the wall time measured on this machine. The run loop applies
benchmark_model's rule (at least N runs and at least min_secs, at most max_secs) on the clock
being reported, so run counts are the board's.
"""
from __future__ import annotations

import logging
import os
import resource
import sys
import time

import numpy as np

from nnsim.commands.common import apply_board, apply_setprops, install_log_handlers
from nnsim.errors import ModelFileError
from nnsim.platform.properties import setprop
from nnsim.runtime.devices import get_device_manager
from nnsim.tflite import tflog
from nnsim.tflite.cpu_timing import cpu_node_ns
from nnsim.tflite.delegate import NnApiDelegate
from nnsim.tflite.interpreter import Interpreter
from nnsim.tflite.reader import read_model
from nnsim.tflite.vx import load_vx_delegate
from nnsim.tflite.vx.options import split_cli_options
from nnsim.tools.benchmark_flags import FLAGS, NOT_LOGGED, PREFERENCES, PRIORITIES
from nnsim.tools.benchmark_progress import Progress
from nnsim.tools.stats import NodeStats, Stat, cpp_double, profile_csv, profile_report


class BenchmarkFailed(Exception):
    """benchmark_model's "Benchmarking failed." (exit code 1)."""


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    except (OSError, ValueError, IndexError):
        return 0.0


def _fmt_value(flag, value) -> str:
    if flag.kind is bool:
        return "1" if value else "0"
    if flag.kind is float:
        return cpp_double(value)
    if flag.kind is list:
        return ",".join(value)
    return str(value)


# After the memory lines, which describe the process running them: here the Python emulator,
# not the board (the upstream lines stay intact for the parsers that read them).
MEMORY_NOTE = ("nnsim: the memory figures above measure this host's emulator process "
               "(Python), not the simulated board.")


class Benchmark:
    def __init__(self, values: dict, given: set, out=None, err=None, unconsumed=(),
                 unmodelled=()):
        self.v, self.given = values, given
        self.unconsumed, self.unmodelled = list(unconsumed), list(unmodelled)
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.simulated = values["timing"] == "simulated"
        self.board = None
        self._cpu_node_ns: dict = {}

    def info(self, message: str = "") -> None:
        print(f"INFO: {message}" if message else "", file=self.out)

    def error(self, message: str) -> None:
        print(f"ERROR: {message}", file=self.err)

    # -- setup --------------------------------------------------------------------------------------
    def _log_params(self) -> None:
        self.info(f"Log parameter values verbosely: [{1 if self.v['verbose'] else 0}]")
        for flag in FLAGS:
            always = flag.name in ("graph", "signature_to_run_for")
            if always or self.v["verbose"] or flag.name in self.given:
                if flag.name == "verbose" or flag.name in NOT_LOGGED:
                    continue
                self.info(f"{flag.description}: [{_fmt_value(flag, self.v[flag.name])}]")

    def _delegate_options(self) -> dict:
        v = self.v
        opts = {"disallow_nnapi_cpu": True if v["nnapi_accelerator_name"] else
                v["disable_nnapi_cpu"],
                "allow_fp16": v["nnapi_allow_fp16"] or v["allow_fp16"],
                "use_burst_computation": v["nnapi_use_burst_mode"]}
        if v["nnapi_accelerator_name"]:
            opts["accelerator_name"] = v["nnapi_accelerator_name"]
        if v["max_delegated_partitions"] >= 0:
            opts["max_number_delegated_partitions"] = v["max_delegated_partitions"]
        if v["delegate_serialize_dir"] and v["delegate_serialize_token"]:
            opts["cache_dir"] = v["delegate_serialize_dir"]
            opts["model_token"] = v["delegate_serialize_token"]
        if v["nnapi_execution_preference"]:
            opts["execution_preference"] = PREFERENCES[v["nnapi_execution_preference"]]
        if v["nnapi_execution_priority"]:
            opts["execution_priority"] = PRIORITIES[v["nnapi_execution_priority"]]
        return opts

    # -- timing ------------------------------------------------------------------------------------
    def _item_us(self, interp, profile) -> list:
        """Per plan item time in microseconds (simulated or host) of the last invoke."""
        times = []
        for p in profile:
            if not self.simulated:
                times.append(p.host_ns / 1000.0)
                continue
            item = p.item
            if item.kind == "node":
                if item.index not in self._cpu_node_ns:
                    self._cpu_node_ns[item.index] = cpu_node_ns(interp.model.main, item.index,
                                                                self.board)
                times.append(self._cpu_node_ns[item.index] / 1000.0)
            elif getattr(interp.delegation.kernels[item.index], "last_simulated_ns",
                         None) is not None:   # a VX partition: its own board time
                times.append(interp.delegation.kernels[item.index].last_simulated_ns / 1000.0)
            else:
                ex = interp.delegation.kernels[item.index].last_execution
                ns = 0.0
                for _, t in (ex.step_report if ex is not None else ()):
                    step = t.driver_ns if t.driver_ns is not None else t.device_ns
                    ns += step if step is not None else (t.host_ns or 0)
                times.append(ns / 1000.0)
        return times

    def _invoke(self, interp) -> tuple[int, list]:
        interp.invoke()
        items = self._item_us(interp, interp.last_profile)
        if self.simulated:
            return int(round(sum(items))), items
        return int(sum(p.host_ns for p in interp.last_profile) / 1000), items

    def _run_loop(self, interp, min_runs, min_secs, max_secs, stat, per_item, label) -> None:
        """benchmark_model's run loop on the reported clock (module docstring); progress on
        stderr once it has taken a while (off with --quiet)."""
        v = self.v
        self.info(f"Running benchmark for at least {min_runs} iterations and at least "
                  f"{cpp_double(min_secs)} seconds but terminate if exceeding "
                  f"{cpp_double(max_secs)} seconds.")
        clock_us, run = 0.0, 0
        clock = "simulated" if self.simulated else "host"
        progress = Progress(label, min_runs, min_secs, max_secs, clock, self.err,
                            enabled=not v["quiet"])
        try:
            while (run < min_runs or clock_us < min_secs * 1e6) and clock_us <= max_secs * 1e6:
                if v["dry_run"]:
                    break
                us, items = self._invoke(interp)
                stat.update(us)
                if per_item is not None:
                    per_item.append(items)
                clock_us += us
                run += 1
                delay = 1.0 / v["run_frequency"] if v["run_frequency"] > 0 else v["run_delay"]
                if delay > 0:
                    if self.simulated:
                        clock_us += delay * 1e6   # the board idles between runs
                    else:
                        time.sleep(delay)
                progress.update(run, clock_us / 1e6)
        finally:
            progress.close()
        self.info(str(stat))
        self.info()

    # -- the benchmark ----------------------------------------------------------------------------------
    def run(self) -> int:
        v = self.v
        self.info("STARTING!")
        if self.unconsumed:   # BenchmarkModel::ParseFlags, a tool WARN (stdout)
            print(f"WARN: Unconsumed cmdline flags: {' '.join(self.unconsumed)}", file=self.out)
        if self.unmodelled:
            print(f"nnsim: warning: benchmark_model flags nnsim does not model, ignored: "
                  f"{' '.join(self.unmodelled)}", file=self.err)
        self._log_params()
        if not v["graph"]:
            self.error("Please specify the name of your TF Lite input file with --graph")
            raise BenchmarkFailed("no --graph")
        self.board = apply_board(v["board"])
        if v["android_sdk"]:
            setprop("ro.build.version.sdk", str(v["android_sdk"]))
        apply_setprops(v["setprop"])
        install_log_handlers(self.out, logcat=v["logcat"] or None)
        tflog.LOGGER.handlers = [h for h in tflog.LOGGER.handlers
                                 if not getattr(h, "_nnsim_cli", False)]
        handler = logging.StreamHandler(self.err)
        handler.setFormatter(tflog.TfliteFormatter())
        handler._nnsim_cli = True
        tflog.LOGGER.addHandler(handler)
        if self.simulated:
            self.info(f"Timing: simulated on board {self.board.name} ({self.board.title}); "
                      f"--timing=host for this machine's wall time")
        try:
            with open(v["graph"], "rb") as f:
                data = f.read()
        except OSError as e:
            self.error(f"Could not open '{v['graph']}': {e.strerror}")
            raise BenchmarkFailed("model") from None
        if not data:   # LiteRT's Interpreter refuses empty content before parsing it
            self.error(f"Failed to load model {v['graph']}: the file is empty (0 bytes)")
            raise BenchmarkFailed("model")
        self.info(f"Loaded model {v['graph']}")
        if v["list_signatures"] or v["signature_to_run_for"]:
            try:
                keys = [sig.key for sig in read_model(data).signatures]
            except ModelFileError as e:
                self.error(f"Failed to load model {v['graph']}: {e.what}")
                raise BenchmarkFailed("model") from None
            if v["list_signatures"]:
                self.info(f"The Model contains {len(keys)} signature key(s).")
                for k, key in enumerate(keys):
                    self.info(f"{k + 1}) {key}")
                return 0
            if v["signature_to_run_for"] not in keys:
                self.error(f"Signature {v['signature_to_run_for']} not found in the model; it "
                           f"has: {', '.join(keys) or '(none)'}")
                raise BenchmarkFailed("signature")
        if v["use_nnapi"]:
            names = ",".join(d.name for d in get_device_manager().get_devices())
            self.info(f"NNAPI accelerators available: [{names}]")
        elif v["nnapi_accelerator_name"]:
            print(f"WARN: `--use_nnapi=true` must be set for the provided NNAPI accelerator "
                  f"({v['nnapi_accelerator_name']}) to be used.", file=self.out)
        return self._benchmark(data)

    def _benchmark(self, data: bytes) -> int:
        v = self.v
        rss0 = _rss_mb()
        init_start = time.perf_counter_ns()
        delegates = []
        try:
            threads = v["num_threads"] if v["num_threads"] > 0 else None   # -1: TFLite's 1
            interp = Interpreter(model_content=data, num_threads=threads)
            if v["use_nnapi"]:  # created after the interpreter, as benchmark_model does
                delegates.append(NnApiDelegate(**self._delegate_options()))
            if v["external_delegate_path"]:
                delegates.append(self._external_delegate())
            if len(delegates) > 1:
                self.info(f"Going to apply {len(delegates)} delegates one after another.")
            for d in delegates:
                interp.modify_graph_with_delegate(d)
                text = f"delegate: {d.describe()}" if hasattr(d, "describe") else \
                    d.devices_text()
                self.info(f"nnsim: client: benchmark_model; {text}")
            t0 = time.perf_counter_ns()
            interp.allocate_tensors()
            t_alloc = time.perf_counter_ns() - t0
        except ModelFileError as e:
            self.error(f"Failed to load model {v['graph']}: {e.what}"
                       + (f" at {e.where}" if e.where else ""))
            raise BenchmarkFailed("model") from None
        init_ns = time.perf_counter_ns() - init_start
        if not self._report_delegation(interp, delegates):
            raise BenchmarkFailed("delegation")
        rss_init = _rss_mb()
        self.info(f"The input model file size (MB): {cpp_double(len(data) / 1e6)}")
        self.info(f"Initialized session in {cpp_double(init_ns / 1e6)}ms.")
        self._set_inputs(interp)
        warm, regular = Stat(), Stat()
        self._run_loop(interp, v["warmup_runs"], v["warmup_min_secs"], v["max_secs"], warm,
                       None, "warmup")
        per_item: list = []
        self._run_loop(interp, v["num_runs"], v["min_secs"], v["max_secs"], regular, per_item,
                       "benchmark")
        init_us = int(init_ns / 1000)
        first = warm.first if warm.count else 0
        self.info(f"Inference timings in us: Init: {init_us}, First inference: {first}, "
                  f"Warmup (avg): {cpp_double(warm.avg) if warm.count else 'nan'}, "
                  f"Inference (avg): {cpp_double(regular.avg) if regular.count else 'nan'}")
        self.info("Note: as the benchmark tool itself affects memory footprint, the following "
                  "is only APPROXIMATE to the actual memory footprint of the model at runtime. "
                  "Take the information at your discretion.")
        rss_end = _rss_mb()
        self.info(f"Memory footprint delta from the start of the tool (MB): "
                  f"init={cpp_double(rss_init - rss0)} overall={cpp_double(rss_end - rss0)}")
        if v["report_peak_memory_footprint"]:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
            self.info(f"Overall peak memory footprint (MB) via periodic monitoring: "
                      f"{cpp_double(peak)}")
        self.info(MEMORY_NOTE)
        if v["enable_op_profiling"]:
            modify_ns = delegates[0].prepare_ns if delegates else 0
            self._profiling(interp, per_item, regular, modify_ns, max(t_alloc - modify_ns, 0))
        return 0

    def _external_delegate(self):
        """The external delegate provider: libvx_delegate.so with the ';'-separated options
        (an option that does not parse: the library's ERROR line, benchmarking fails)."""
        v = self.v
        try:
            delegate = load_vx_delegate(v["external_delegate_path"],
                                        split_cli_options(v["external_delegate_options"]))
        except ValueError:
            self.error("Failed to apply EXTERNAL delegate.")
            self.error("Benchmarking failed.")
            raise BenchmarkFailed("external delegate") from None
        self.info("EXTERNAL delegate created.")
        return delegate

    def _report_delegation(self, interp, delegates) -> bool:
        if not delegates:
            return True
        name = getattr(delegates[0], "provider", "NNAPI")
        result = interp.delegation
        if result is None and getattr(interp, "delegation_error", None):
            self.error(f"Failed to apply {name} delegate.")
            self.error("Benchmarking failed.")
            return False
        kernels = len(result.kernels) if result else 0
        items = interp.plan_items()
        if kernels == 1 and len(items) == 1:
            self.info(f"Explicitly applied {name} delegate, and the model graph will be "
                      f"completely executed by the delegate.")
        elif kernels >= 1:
            self.info(f"Explicitly applied {name} delegate, and the model graph will be "
                      f"partially executed by the delegate w/ {kernels} delegate kernels.")
        else:
            self.info(f"Though {name} delegate is explicitly applied, the model graph will not "
                      f"be executed by the delegate.")
        if self.v["require_full_delegation"] and not (kernels == 1 and len(items) == 1):
            self.error("Disallowed CPU fallback detected.")
            self.error("Benchmarking failed.")
            return False
        return True

    def _input_files(self) -> dict:
        files = {}
        for pair in filter(None, self.v["input_layer_value_files"].split(",")):
            name, sep, path = pair.partition(":")
            if not sep or not name or not path:
                self.error(f"--input_layer_value_files expects name:file pairs, got {pair!r}")
                raise BenchmarkFailed("input files")
            files[name] = path
        return files

    def _load_input_file(self, path: str, detail: dict) -> np.ndarray:
        dtype, shape = np.dtype(detail["dtype"]), tuple(int(x) for x in detail["shape"])
        try:
            if path.endswith(".npy"):
                value = np.load(path, allow_pickle=False)
            else:
                value = np.fromfile(path, dtype=dtype)
        except (OSError, ValueError) as e:
            self.error(f"Could not read input file {path}: {e}")
            raise BenchmarkFailed("input files") from None
        if value.size != int(np.prod(shape)):
            self.error(f"Input file {path} has {value.size} values; input '{detail['name']}' "
                       f"needs {int(np.prod(shape))}")
            raise BenchmarkFailed("input files")
        return value.astype(dtype, copy=False).reshape(shape)

    def _set_inputs(self, interp) -> None:
        rng = np.random.default_rng(self.v["seed"])
        files = self._input_files()
        unknown = set(files) - {d["name"] for d in interp.get_input_details()}
        if unknown:
            self.error(f"--input_layer_value_files names unknown inputs: {', '.join(unknown)}")
            raise BenchmarkFailed("input files")
        for d in interp.get_input_details():
            if d["name"] in files:
                interp.set_tensor(d["index"], self._load_input_file(files[d["name"]], d))
                continue
            dtype, shape = np.dtype(d["dtype"]), tuple(int(x) for x in d["shape"])
            if dtype.kind in "iu":
                info = np.iinfo(dtype)
                value = rng.integers(info.min, int(info.max) + 1, shape, dtype=dtype)
            elif dtype == np.bool_:
                value = rng.integers(0, 2, shape).astype(bool)
            else:
                value = rng.uniform(-1, 1, shape).astype(dtype)
            interp.set_tensor(d["index"], value)

    def _profiling(self, interp, per_item, regular, modify_ns, alloc_ns) -> None:
        sg = interp.model.main
        items = interp.plan_items()
        nodes = []
        for order, item in enumerate(items):
            if item.kind == "node":
                outs = sg.operators[item.index].outputs
            else:
                outs = interp.delegation.kernels[item.index].output_tensors
            names = ", ".join(sg.tensors[o].name or "Unknown" for o in outs if o >= 0)
            ns = NodeStats(item.op_name,
                           f"[{names}]:{item.node_index}", order,
                           [int(run[order]) for run in per_item], 0.0, len(per_item))
            nodes.append(ns)
        init_nodes = [NodeStats("ModifyGraphWithDelegate", "ModifyGraphWithDelegate/0", 0,
                                [modify_ns // 1000], 0.0, 1),
                      NodeStats("AllocateTensors", "AllocateTensors/0", 1, [alloc_ns // 1000],
                                0.0, 1)]
        init_total = Stat()
        init_total.update(sum(n.sum_us for n in init_nodes))
        run_totals = Stat()
        for run in per_item:
            run_totals.update(int(sum(int(x) for x in run)))
        if self.v["op_profiling_output_mode"] == "csv":
            lines = profile_csv(init_nodes, 1) + profile_csv(nodes, max(len(per_item), 1))
        else:
            lines = ["INFO: Profiling Info for Benchmark Initialization:"]
            lines += profile_report(init_nodes, 1, init_total)
            lines.append("INFO: Operator-wise Profiling Info for Regular Benchmark Runs:")
            lines += profile_report(nodes, max(len(per_item), 1), run_totals)
        target = self.v["op_profiling_output_file"]
        if target:
            with open(target, "w") as f:
                f.write("\n".join(lines) + "\n")
        else:
            print("\n".join(lines), file=self.out)
