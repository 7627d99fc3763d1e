"""``nnsim run``: one inference with the NNAPI delegate on a board's devices, and where each
operation ran."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import nnsim
from nnsim.commands.common import (RunError, UsageError, apply_board, apply_setprops,
                                   default_labels, fmt_ms, install_log_handlers, load_model_bytes,
                                   read_labels)
from nnsim.errors import ModelFileError
from nnsim.report import device_summary, placements


def add_arguments(p) -> None:
    p.add_argument("model", nargs="?", help="the .tflite model (default: the built-in demo, "
                                            "the uint8 MobileNet v1 0.25 224 on "
                                            "grace_hopper.bmp, with ImageNet labels)")
    p.add_argument("--vlog", action="store_true",
                   help="print the logcat stream of 'setprop debug.nn.vlog 1'")
    p.add_argument("--board", default="imx8mp", help="board profile (default: imx8mp)")
    p.add_argument("--device", action="append", metavar="NAME",
                   help="keep only this NNAPI device of the board (repeatable)")
    p.add_argument("--android_sdk", "--android-sdk", type=int, metavar="N",
                   help="emulated Android SDK version (default: the board's)")
    p.add_argument("--disallow-nnapi-cpu", action="store_true",
                   help="TFLite's library default: do not hand operations to nnapi-reference")
    p.add_argument("--setprop", action="append", metavar="KEY=VALUE",
                   help="set an emulated Android property (repeatable)")
    p.add_argument("--input", metavar="FILE", help="input: .npy with the input's exact shape, "
                                                   "or an image (BMP/PPM) for [1,H,W,3] inputs "
                                                   "(default: random values; the demo's photo "
                                                   "for the demo)")
    p.add_argument("--labels", metavar="FILE", help="class labels, one per line")
    p.add_argument("--output-dir", metavar="DIR", help="write every output as OUTPUT_<i>.npy")
    p.add_argument("--sysfs", action="store_true",
                   help="after the run, print the SyNAP NPU's sysfs statistics files "
                        "(inference_count, inference_time, networks, network_profile)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input (default 0)")
    p.add_argument("--top", type=int, default=5, help="top-k classes to print (default 5)")


def run(args, out) -> int:
    board = apply_board(args.board, args.device)
    if args.android_sdk:
        nnsim.setprop("ro.build.version.sdk", str(args.android_sdk))
    apply_setprops(args.setprop)
    if args.vlog:
        nnsim.setprop("debug.nn.vlog", "1")
    install_log_handlers(out)
    from nnsim.tflite import Interpreter, NnApiDelegate
    name, data = load_model_bytes(args.model)
    try:
        interp = Interpreter(model_content=data)   # parses the model: errors before any delegate
        delegate = NnApiDelegate(disallow_nnapi_cpu=args.disallow_nnapi_cpu)
        interp.modify_graph_with_delegate(delegate)
        interp.allocate_tensors()
    except ModelFileError as e:
        raise RunError(f"{args.model or name}: {e.what}"
                       + (f" at {e.where}" if e.where else "")) from None
    for i, detail in enumerate(interp.get_input_details()):
        interp.set_tensor(detail["index"], _input_for(args, detail, i))
    start = time.perf_counter_ns()
    interp.invoke()
    host_ns = time.perf_counter_ns() - start
    result = delegate.result
    first = _simulated_ns(result, interp, board)
    steady = None
    if result is not None and result.kernels:
        interp.invoke()   # the steady state: what the board does after the first inference
        steady = _simulated_ns(result, interp, board)
    _print_summary(out, name, board, interp, interp.model, result, host_ns, args)
    p = lambda *a: print(*a, file=out)  # noqa: E731
    if first is None:
        p(f"time: host {fmt_ms(host_ns)}")
    else:
        p(f"time: host {fmt_ms(host_ns)}; simulated on {board.name}: first inference "
          f"{fmt_ms(first)}, then {fmt_ms(steady if steady is not None else first)} per "
          f"inference")
    if args.model is None:
        p("(the built-in demo: the TF-hosted uint8 MobileNet v1 0.25 224 on grace_hopper.bmp; "
          "pass a .tflite model to run your own)")
    if args.sysfs:
        _print_sysfs(out)
    return 0


def _print_sysfs(out) -> None:
    from nnsim.drivers import sysfs
    for name in sysfs.listdir():
        print(f"$ cat {sysfs.SYNAP_STATISTICS_DIR}/{name}", file=out)
        text = sysfs.read(name)
        print(text, end="" if text.endswith("\n") else "\n", file=out)


def _input_for(args, detail, index):
    source = args.input
    if source is None and args.model is None:
        from nnsim.tflite.demo_model import demo_image_path
        source = str(demo_image_path())
    if source:
        from nnsim.images import InputError, load_input
        try:
            return load_input(source, detail)
        except InputError as e:
            raise RunError(str(e)) from None
    rng = np.random.default_rng(args.seed + index)
    dtype = np.dtype(detail["dtype"])
    shape = tuple(int(d) for d in detail["shape"])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, int(info.max) + 1, shape, dtype=dtype)
    return rng.uniform(-1, 1, shape).astype(dtype)


def _print_summary(out, name, board, interp, model, result, host_ns, args) -> None:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    n_nodes = len(model.main.operators) if model is not None else 0
    p(f"model: {name} ({n_nodes} nodes)")
    p(f"board: {board.name} ({board.title}); devices: "
      f"{', '.join(d.name for d in _devices())}")
    if result is None or not result.kernels:
        p("delegate: no node delegated to NNAPI (every node on the TFLite CPU kernels)")
    else:
        p(f"delegate: {result.nodes_replaced} of {result.nodes_total} nodes to NNAPI in "
          f"{len(result.kernels)} partition(s), feature level {result.target_feature_level}")
    if model is not None:
        places = placements(model, result)
        p("where the operations ran:")
        for where, count in sorted(device_summary(places).items(), key=lambda kv: -kv[1]):
            ops = {}
            for pl in places:
                if pl.where == where:
                    ops[pl.op_name] = ops.get(pl.op_name, 0) + 1
            detail = ", ".join(f"{k} x{v}" for k, v in sorted(ops.items(), key=lambda kv: -kv[1]))
            p(f"  {where:<24} {count:>4} node(s): {detail}")
    for k, detail in enumerate(interp.get_output_details()):
        value = interp.get_tensor(detail["index"])
        p(f"output {k} '{detail['name']}': {value.dtype} {list(value.shape)}")
        _print_topk(p, value, detail, args)
        if args.output_dir:
            path = Path(args.output_dir)
            path.mkdir(parents=True, exist_ok=True)
            np.save(path / f"output_{k}.npy", value)


def _devices():
    from nnsim.runtime.devices import get_device_manager
    return get_device_manager().get_devices()


def _print_topk(p, value, detail, args) -> None:
    flat = value.reshape(-1)
    if value.ndim != 2 or value.shape[0] != 1 or flat.size < 2 or args.top <= 0:
        return
    scale, zp = detail.get("quantization", (0.0, 0))
    scores = (flat.astype(np.float64) - zp) * scale if scale else flat.astype(np.float64)
    labels = read_labels(Path(args.labels), flat.size) if args.labels else \
        default_labels(args.model, flat.size)
    if labels is None and args.model is None and not args.labels:
        from nnsim.tflite.demo_model import demo_labels_path
        labels = read_labels(demo_labels_path(), flat.size)
    top = np.argsort(-scores, kind="stable")[:args.top]
    items = [f"{i}{' ' + labels[i] if labels else ''} ({scores[i]:.3f})" for i in top]
    p(f"  top-{len(top)}: " + ", ".join(items))


def _simulated_ns(result, interp, board):
    """Board time of the last invoke: delegate partitions at the drivers' in-driver time
    (hardware, HAL and transfers; compilation on a first inference) plus the TFLite CPU
    nodes at the board CPU cost model. None when a driver reports no simulated time."""
    from nnsim.tflite.cpu_timing import cpu_node_ns
    total = 0.0
    for item in interp.plan_items():
        if item.kind == "node":
            total += cpu_node_ns(interp.model.main, item.index, board)
            continue
        ex = result.kernels[item.index].last_execution if result else None
        if ex is None:
            return None
        for _, timing in ex.step_report:
            ns = timing.driver_ns if timing.driver_ns is not None else timing.device_ns
            if ns is None:
                return None
            total += ns
    return total
