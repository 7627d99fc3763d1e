"""``nnsim run``: one inference with the NNAPI delegate on a board's devices, and where each
operation ran."""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

import nnsim
from nnsim.commands.argtypes import integer, positive_float
from nnsim.commands.client import (add_client_arguments, client_delegate, client_description,
                                   devices_line, sdk_version)
from nnsim.commands.common import (RunError, UsageError, apply_board, apply_setprops, fmt_ms,
                                   install_log_handlers, load_model_bytes)
from nnsim.commands.results import interpret_outputs, read_label_file
from nnsim.drivers.synap_npu import compile_cache_summary
from nnsim.errors import BuiltinError, ModelFileError
from nnsim.images import InputError, load_input, write_mask_png
from nnsim.limits import TensorTooLargeError
from nnsim.platform import sysfs
from nnsim.runtime.devices import get_device_manager
from nnsim.tflite import Interpreter
from nnsim.tflite.cpu_timing import cpu_node_ns
from nnsim.tflite.placement import device_summary, placements
from nnsim.tflite.vx.report import delegate_line, first_invoke_lines
from nnsim.tools.demo_model import demo_image_path, demo_labels_path
from nnsim.tools.warmup import compiling_alongside

NAME = "run"
HELP = "run a model once and show where each operation ran"
DESCRIPTION = ("Load a .tflite model, apply the NNAPI delegate for the board's devices, run one "
               "inference and report.")
EPILOG = """examples:
  nnsim run                                   # the built-in demo model on the default board
  nnsim run model.tflite --vlog               # plus the board's logcat lines
  nnsim run model.tflite --board vs680 --input photo.bmp
  nnsim run model.tflite --setprop debug.nn.partition=0"""


def add_arguments(p) -> None:
    p.add_argument("model", nargs="?", help="the .tflite model (default: the built-in demo, "
                                            "the uint8 MobileNet v1 0.25 224 on "
                                            "grace_hopper.bmp, with ImageNet labels)")
    p.add_argument("--vlog", action="store_true",
                   help="print the logcat stream of 'setprop debug.nn.vlog 1'")
    p.add_argument("--board", default="imx8mp", help="board profile (default: imx8mp)")
    p.add_argument("--device", action="append", metavar="NAME",
                   help="keep only this NNAPI device of the board (repeatable)")
    p.add_argument("--android_sdk", "--android-sdk", type=sdk_version, metavar="N",
                   help="emulated Android SDK version (default: the board's)")
    add_client_arguments(p)
    p.add_argument("--setprop", action="append", metavar="KEY=VALUE",
                   help="set an emulated Android property (repeatable)")
    p.add_argument("--input", metavar="FILE", help="input: .npy with the input's exact shape "
                                                   "and dtype, or an image (BMP/PPM built in; "
                                                   "JPEG/PNG with pip install 'nnsim[images]') "
                                                   "for [1,H,W,3] or [1,3,H,W] inputs (default: "
                                                   "random values; the demo's photo for the demo)")
    p.add_argument("--input_quantize", "--input-quantize", action="store_true",
                   help="quantize float input values with the input tensor's scale and zero "
                        "point (a float .npy for a uint8/int8 input; an image normalised with "
                        "--input_mean/--input_std)")
    p.add_argument("--input_mean", "--input-mean", type=float, default=127.5, metavar="M",
                   help="image preprocessing for float inputs: (pixel - M) / S (default 127.5)")
    p.add_argument("--input_std", "--input-std", type=positive_float, default=127.5,
                   metavar="S", help="see --input_mean (default 127.5: values in [-1, 1])")
    p.add_argument("--labels", metavar="FILE", help="class labels, one per line")
    p.add_argument("--output-dir", metavar="DIR", help="write every output as output_<i>.npy "
                                                       "(and a segmentation's class mask as "
                                                       "output_<i>_mask.png, with Pillow)")
    p.add_argument("--sysfs", action="store_true",
                   help="after the run, print the SyNAP NPU's sysfs statistics files "
                        "(inference_count, inference_time, networks, network_profile)")
    p.add_argument("--seed", type=_seed, default=0, help="seed of the random input (default 0)")
    p.add_argument("--top", type=int, default=5, help="top-k classes to print (default 5)")
    p.add_argument("--score_threshold", "--score-threshold", type=float, default=0.5,
                   metavar="T", help="detections to print: score >= T (default 0.5)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text (default) or json: placements per node, devices, simulated "
                        "first/steady times and the outputs, for scripts")


def _seed(text: str) -> int:
    value = integer(text)
    if not 0 <= value < 2 ** 63:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2^63-1, got {value}")
    return value


def run(args, out) -> int:
    board = apply_board(args.board, args.device)
    if args.android_sdk:
        nnsim.setprop("ro.build.version.sdk", str(args.android_sdk))
    apply_setprops(args.setprop)
    if args.vlog:
        nnsim.setprop("debug.nn.vlog", "1")
    json_out = out if args.format == "json" else None
    if json_out is not None:   # stdout is the JSON document only: logcat lines to stderr
        out = io.StringIO()
    install_log_handlers(sys.stderr if json_out is not None else out)
    _check_output_dir(args.output_dir)   # before the inference, not after it
    labels = _labels(args)
    name, data = load_model_bytes(args.model)
    shown = args.model or name
    try:
        interp = Interpreter(model_content=data)   # parses the model: errors before any delegate
        delegate = client_delegate(args)
        interp.modify_graph_with_delegate(delegate)
        interp.allocate_tensors()
    except ModelFileError as e:
        raise RunError(f"{shown}: {e.what}"
                       + (f" at {e.where}" if e.where else "")) from None
    except (BuiltinError, TensorTooLargeError) as e:
        raise RunError(f"{shown}: {e}") from None
    for i, detail in enumerate(interp.get_input_details()):
        value = _input_for(args, detail, i)
        try:
            interp.set_tensor(detail["index"], value)
        except ValueError as e:   # LiteRT's words: a dtype or shape mismatch
            hint = ("; --input_quantize quantizes float values with the input's scale and zero "
                    "point" if np.asarray(value).dtype.kind == "f"
                    and np.dtype(detail["dtype"]).kind in "iu" else "")
            raise RunError(f"--input {args.input}: {e.args[0].strip()}{hint}") from None
    start = time.perf_counter_ns()
    with compiling_alongside(interp):   # a cold kernel cache: compile on two cores
        interp.invoke()
    host_ns = time.perf_counter_ns() - start
    result = delegate.result
    first = _simulated_ns(result, interp, board)
    steady = None
    if result is not None and result.kernels:
        interp.invoke()   # the steady state: what the board does after the first inference
        steady = _simulated_ns(result, interp, board)
    reports = _print_summary(out, name, board, interp, interp.model, result, host_ns, args,
                             delegate, labels)
    p = lambda *a: print(*a, file=out)  # noqa: E731
    if first is None:
        p(f"time: host {fmt_ms(host_ns)}")
    else:
        p(f"time: host {fmt_ms(host_ns)}; simulated on {board.name}: first inference "
          f"{fmt_ms(first)}, then {fmt_ms(steady if steady is not None else first)} per "
          f"inference")
    cache_lines, cache_warnings = compile_cache_summary(result)   # synap-npu partitions only
    cache_lines += first_invoke_lines(result)   # VX partitions only
    for line in cache_lines:
        p(line)
    for warning in cache_warnings:
        print(f"nnsim: warning: {warning}", file=sys.stderr)
    if args.model is None:
        p("(the built-in demo: the TF-hosted uint8 MobileNet v1 0.25 224 on grace_hopper.bmp; "
          "pass a .tflite model to run your own)")
    if args.sysfs:
        _print_sysfs(out)
    if json_out is not None:
        print(json.dumps(_json_report(name, board, interp, result, delegate, args, host_ns,
                                      first, steady, cache_lines, reports), indent=2),
              file=json_out)
    return 0


def _check_output_dir(path) -> None:
    """--output-dir must be a writable directory, or creatable: checked before the run."""
    if not path:
        return
    d = Path(path)
    if d.exists() and not d.is_dir():
        raise UsageError(f"--output-dir {path}: exists and is not a directory")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--output-dir {path}: cannot create it: {e.strerror or e}") from None
    if not os.access(d, os.W_OK | os.X_OK):
        raise UsageError(f"--output-dir {path}: not writable")


def _labels(args):
    """The --labels lines (a missing file is an error), or the demo's labels for the demo."""
    if args.labels:
        return read_label_file(args.labels)
    if args.model is None:
        return read_label_file(str(demo_labels_path()))
    return None


def _json_report(name, board, interp, result, delegate, args, host_ns, first, steady,
                 cache_lines, reports) -> dict:
    ms = lambda ns: None if ns is None else round(ns / 1e6, 6)  # noqa: E731
    places = placements(interp.model, result) if interp.model is not None else []
    return {
        "model": name, "board": board.name, "client": client_description(args),
        "devices": devices_line(delegate, args).removeprefix("devices: "),
        "delegate": None if result is None or not result.kernels else {
            "name": getattr(result, "delegate_name", "TfLiteNnapiDelegate"),
            "nodes_replaced": result.nodes_replaced, "nodes_total": result.nodes_total,
            "partitions": len(result.kernels),
            "feature_level": int(result.target_feature_level)},
        "placements": [{"node": pl.node, "op": pl.op_name,
                        "where": "TFLite CPU" if pl.partition is None else pl.where,
                        "partition": pl.partition} for pl in places],
        "time_ms": {"host": ms(host_ns), "simulated_first": ms(first),
                    "simulated_steady": ms(steady if steady is not None else first)},
        "cache": list(cache_lines),
        "outputs": [r["json"] for r in reports],
    }


def _print_sysfs(out) -> None:
    if not any(d.name == "synap-npu" for d in get_device_manager().drivers()):
        print("(--sysfs: this board has no synap-npu, whose statistics the SyNAP sysfs files "
              "hold; try --board vs680)", file=out)
        return
    for name in sysfs.listdir():
        print(f"$ cat {sysfs.SYNAP_STATISTICS_DIR}/{name}", file=out)
        text = sysfs.read(name)
        print(text, end="" if text.endswith("\n") else "\n", file=out)


def _input_for(args, detail, index):
    source = args.input
    if source is None and args.model is None:
        source = str(demo_image_path())
    if source:
        try:
            return load_input(source, detail, mean=args.input_mean, std=args.input_std,
                              quantize=args.input_quantize)
        except InputError as e:
            raise RunError(str(e)) from None
    rng = np.random.default_rng(args.seed + index)
    dtype = np.dtype(detail["dtype"])
    shape = tuple(int(d) for d in detail["shape"])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, int(info.max) + 1, shape, dtype=dtype)
    return rng.uniform(-1, 1, shape).astype(dtype)


def _print_summary(out, name, board, interp, model, result, host_ns, args, delegate,
                   labels=None) -> list:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    n_nodes = len(model.main.operators) if model is not None else 0
    p(f"model: {name} ({n_nodes} nodes)")
    p(f"board: {board.name} ({board.title}); client: {client_description(args)}")
    p(devices_line(delegate, args))
    if hasattr(delegate, "describe"):   # the VX delegate
        p(delegate_line(delegate, result))
    elif result is None or not result.kernels:
        p("delegate: no node delegated to NNAPI (every node on the TFLite CPU kernels)")
    else:
        p(f"delegate: {result.nodes_replaced} of {result.nodes_total} nodes to NNAPI in "
          f"{len(result.kernels)} delegate partition(s), feature level "
          f"{result.target_feature_level} (TFLite's 'yielding {result.partitions} partitions' "
          f"also counts the runs of nodes left on its CPU)")
    if model is not None:
        places = placements(model, result)
        p("where the operations ran:")
        summary = sorted(device_summary(places).items(), key=lambda kv: -kv[1])
        width = max([24] + [len(where) + 1 for where, _ in summary])
        for where, count in summary:
            ops = {}
            for pl in places:
                if pl.where == where:
                    ops[pl.op_name] = ops.get(pl.op_name, 0) + 1
            detail = ", ".join(f"{k} x{v}" for k, v in sorted(ops.items(), key=lambda kv: -kv[1]))
            p(f"  {where:<{width}} {count:>4} node(s): {detail}")
        if any("nnapi-reference" in where for where, _ in summary):
            p("  (nnapi-reference is NNAPI's own CPU implementation, not an accelerator)")
    reports = interpret_outputs(interp, labels, args.model, args.top, args.score_threshold)
    for report in reports:
        for line in report["lines"]:
            p(line)
    if args.output_dir:
        _write_outputs(Path(args.output_dir), interp, reports)
    return reports


def _write_outputs(path: Path, interp, reports) -> None:
    try:
        for k, detail in enumerate(interp.get_output_details()):
            np.save(path / f"output_{k}.npy", interp.get_tensor(detail["index"]))
        for r in reports:
            if r["kind"] == "segmentation":
                mask = path / f"output_{r['outputs'][0]}_mask.png"
                try:
                    write_mask_png(mask, r["class_map"])
                except InputError as e:
                    print(f"nnsim: warning: {e}", file=sys.stderr)
    except OSError as e:
        raise RunError(f"--output-dir {path}: {e.strerror or e}") from None


def _devices():
    return get_device_manager().get_devices()


def _simulated_ns(result, interp, board):
    """Board time of the last invoke: delegate partitions at the drivers' in-driver time
    (hardware, HAL and transfers; compilation on a first inference) plus the TFLite CPU
    nodes at the board CPU cost model. None when a driver reports no simulated time."""
    total = 0.0
    for item in interp.plan_items():
        if item.kind == "node":
            total += cpu_node_ns(interp.model.main, item.index, board)
            continue
        kernel = result.kernels[item.index] if result else None
        if getattr(kernel, "last_simulated_ns", None) is not None:   # a VX partition
            total += kernel.last_simulated_ns
            continue
        ex = kernel.last_execution if kernel is not None else None
        if ex is None:
            return None
        for _, timing in ex.step_report:
            ns = timing.driver_ns if timing.driver_ns is not None else timing.device_ns
            if ns is None:
                return None
            total += ns
    return total
