"""``nnsim diff``: TFLite's ``inference_diff`` (``run_eval``) on the emulated board.

Spec: tflite-nnapi-delegate.md section 8. Two interpreters on the same model: the *reference*
(TFLite CPU kernels, no delegate) and the *test* (the NNAPI delegate on the board's devices).
Each run feeds both the same fresh truncated-Gaussian random inputs, invokes each 3 times
(latency per invocation), and records per output ``mean_i |test_i - ref_i|`` (float32). The
summary lines are the tool's, formatted as C++ streams do (``%g``):

    INFO: Num evaluation runs: 50
    INFO: Reference run latency: avg=84364.2(us), std_dev=12525(us)
    INFO: Test run latency: avg=7281.64(us), std_dev=2089(us)
    INFO: OutputDiff[0]: avg_error=1.96277e-05, std_dev=6.95767e-06

plus nnsim's ``INFO: OutputMaxAbsDiff[i]: max_abs_error=...`` after each ``OutputDiff`` line.
Latencies are host wall-clock times of the Python emulation, not the board's.
"""
from __future__ import annotations

import math
import struct
import sys
import textwrap
import time

import numpy as np

import nnsim
from nnsim.commands.argtypes import int_at_least, integer
from nnsim.commands.client import client_delegate, flag_bool, sdk_version, uses_vx
from nnsim.commands.common import RunError, UsageError, load_model_bytes
from nnsim.commands.graph import delegated_interpreter, quiet_logs, setup_board
from nnsim.errors import NnapiError
from nnsim.runtime.devices import get_device_manager
from nnsim.tflite import NnApiDelegate

NAME = "diff"
HELP = "compare the NNAPI-delegated model with the TFLite CPU reference (inference_diff)"
DESCRIPTION = textwrap.fill(
    "TFLite's inference_diff tool (run_eval) on the emulated board: a reference interpreter "
    "(TFLite CPU kernels, no delegate) and a test interpreter (the NNAPI delegate on the "
    "board's devices) get the same random inputs (truncated Gaussian: mean 0.5, std 1/3, "
    "resampled into [0,1), mapped to [0,255] for uint8, [-128,127] for int8, the full range "
    "for int32/int64, [-1,1] for float), each is invoked 3 times per run, and the mean "
    "absolute difference of every output is summarised over the runs in the tool's own "
    "format. Flags are inference_diff's and the NNAPI delegate provider's, given as "
    "--flag=value or --flag value; booleans take true/false/1/0. Unlike run_eval, "
    "--use_nnapi defaults to true. Latencies are host times of the emulation.")
EPILOG = """examples:
  nnsim diff model.tflite                                   # 50 runs, NNAPI on imx8mp
  nnsim diff model.tflite --num_runs=5 --board vs680
  nnsim diff model.tflite --use_nnapi=true --nnapi_accelerator_name=vsi-npu
  nnsim diff model.tflite --disable_nnapi_cpu=false --max_delegated_partitions=1
  nnsim diff --model_file=model.tflite --output_file_path=metrics.pb
  nnsim diff model.tflite --external_delegate_path=libvx_delegate.so   # the VX delegate"""

INVOCATIONS_PER_RUN = 3
PREFERENCES = {"low_power": 0, "fast_single_answer": 1, "sustained_speed": 2, "undefined": -1}
PRIORITIES = {"default": 100, "low": 90, "medium": 100, "high": 110}
KNOWN_DELEGATES = ("nnapi", "gpu", "hexagon", "xnnpack", "coreml")
FLT_MIN = float(np.finfo(np.float32).tiny)


def add_arguments(p) -> None:
    p.add_argument("model", nargs="?", help="the .tflite model (or --model_file)")
    g = p.add_argument_group("inference_diff flags")
    g.add_argument("--model_file", metavar="PATH", help="the .tflite model (run_eval's flag)")
    g.add_argument("--num_runs", type=int_at_least(1), default=50, metavar="N",
                   help="runs of test and reference inference each (default 50)")
    g.add_argument("--num_interpreter_threads", type=int_at_least(1), default=1, metavar="N",
                   help="threads of the test interpreter (default 1)")
    g.add_argument("--delegate", default="", metavar="NAME",
                   help="delegate of the test interpreter: nnapi (the only one nnsim emulates)")
    g.add_argument("--output_file_path", metavar="FILE",
                   help="write the EvaluationStageMetrics proto (binary) to FILE")
    n = p.add_argument_group("NNAPI delegate provider flags")
    n.add_argument("--use_nnapi", type=flag_bool, default=True, metavar="BOOL",
                   help="apply the NNAPI delegate to the test interpreter (default true in "
                        "nnsim; false compares the CPU with itself)")
    n.add_argument("--nnapi_accelerator_name", default="", metavar="NAME",
                   help="use only this NNAPI device (then --disable_nnapi_cpu is ignored)")
    n.add_argument("--disable_nnapi_cpu", type=flag_bool, default=True, metavar="BOOL",
                   help="exclude nnapi-reference from the devices (default true)")
    n.add_argument("--nnapi_execution_preference", default="", metavar="PREF",
                   choices=list(PREFERENCES) + [""],
                   help="fast_single_answer, sustained_speed, low_power or undefined")
    n.add_argument("--nnapi_execution_priority", default="", metavar="PRIO",
                   choices=list(PRIORITIES) + [""], help="default, low, medium or high")
    n.add_argument("--nnapi_allow_fp16", type=flag_bool, default=False, metavar="BOOL",
                   help="relax float32 to float16 (default false)")
    n.add_argument("--nnapi_allow_dynamic_dimensions", type=flag_bool, default=False,
                   metavar="BOOL", help="allow dynamic dimensions (default false)")
    n.add_argument("--nnapi_use_burst_mode", type=flag_bool, default=False, metavar="BOOL",
                   help="use burst executions (default false)")
    n.add_argument("--max_delegated_partitions", type=integer, default=0, metavar="N",
                   help="keep the N largest partitions; 0 or less = no limit (default 0)")
    n.add_argument("--min_nodes_per_partition", type=integer, default=0, metavar="N",
                   help="accepted for compatibility; the NNAPI delegate ignores it")
    n.add_argument("--delegate_serialize_dir", default="", metavar="DIR",
                   help="with --delegate_serialize_token: NNAPI compilation cache directory")
    n.add_argument("--delegate_serialize_token", default="", metavar="TOKEN",
                   help="with --delegate_serialize_dir: the model token")
    x = p.add_argument_group("external delegate provider flags")
    x.add_argument("--external_delegate_path", metavar="LIB",
                   help="test interpreter: this external delegate instead of NNAPI "
                        "(libvx_delegate.so, the VX delegate on the board's NPU)")
    x.add_argument("--external_delegate_options", default="", metavar="'K:V;K:V'",
                   help="its options: key:value pairs separated by ';'")
    s = p.add_argument_group("nnsim flags")
    s.add_argument("--board", default="imx8mp", help="board profile (default: imx8mp)")
    s.add_argument("--device", action="append", metavar="NAME",
                   help="keep only this NNAPI device of the board (repeatable)")
    s.add_argument("--setprop", action="append", metavar="KEY=VALUE",
                   help="set an emulated Android property (repeatable)")
    s.add_argument("--android_sdk", "--android-sdk", dest="android_sdk", type=sdk_version,
                   metavar="N", help="emulated Android SDK level (default: the board's)")
    s.add_argument("--seed", type=int_at_least(0), default=0,
                   help="seed of the random inputs (default 0)")
    s.add_argument("--vlog", action="store_true",
                   help="print the logcat lines of 'setprop debug.nn.vlog 1' on stderr")


# -- the tool's statistics (tensorflow/core/util/stats_calculator.h Stat<T>) -----------------------
class Stat:
    """``Stat<ValueType, double>``: sum in ValueType, squared sum in double."""

    def __init__(self, integer: bool):
        self.integer = integer
        self.count = 0
        self.newest = 0
        self.sum = 0 if integer else np.float32(0)
        self.squared_sum = 0.0
        self.max = -(2 ** 63) if integer else FLT_MIN    # numeric_limits<T>::min()
        self.min = 2 ** 63 - 1 if integer else float(np.finfo(np.float32).max)

    def update(self, v) -> None:
        self.newest = v
        self.count += 1
        self.max = max(v, self.max)
        self.min = min(v, self.min)
        self.sum = self.sum + v if self.integer else np.float32(self.sum + np.float32(v))
        self.squared_sum += float(v) * float(v)

    def avg(self) -> float:
        return float(self.sum) / self.count if self.count else math.nan

    def std_deviation(self):
        if self.count == 0 or self.min == self.max:
            return 0
        variance = self.squared_sum / self.count - self.avg() * self.avg()
        root = math.sqrt(variance) if variance >= 0 else math.nan
        if self.integer:
            return int(root) if math.isfinite(root) else 0   # double -> int64 truncation
        return float(np.float32(root))


def average_error(ref: np.ndarray, test: np.ndarray) -> np.float32:
    """``CalculateAverageError``: float32 |test - ref| summed in order, / num_elements."""
    r = np.asarray(ref).astype(np.float32).ravel()
    t = np.asarray(test).astype(np.float32).ravel()
    if r.size == 0:
        return np.float32(math.nan)
    d = np.abs(t - r)
    total = np.cumsum(d, dtype=np.float32)[-1]
    return np.float32(total / np.float32(r.size))


def random_input(rng, dtype: np.dtype, shape) -> np.ndarray:
    """``GenerateRandomGaussianData``: N(0.5, 1/3) resampled into [0, 1), then
    ``min + (max - min) * float(r)`` in float and a C++ cast to the element type."""
    count = int(np.prod(shape, dtype=np.int64))
    r = rng.normal(0.5, 1.0 / 3, count)
    bad = (r < 0) | (r >= 1)
    while bad.any():
        r[bad] = rng.normal(0.5, 1.0 / 3, int(bad.sum()))
        bad = (r < 0) | (r >= 1)
    r32 = r.astype(np.float32)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        lo, hi = -1.0, 1.0
    elif dtype.kind == "b":
        lo, hi = 0.0, 1.0
    else:
        info = np.iinfo(dtype)
        lo, hi = float(info.min), float(info.max)
    values = np.float32(lo) + np.float32(np.float32(hi) - np.float32(lo)) * r32
    if dtype.kind == "f":
        return values.astype(dtype).reshape(shape)   # float16: IEEE round to nearest even
    if dtype.kind == "b":
        return (values != 0).reshape(shape)          # static_cast<bool>
    info = np.iinfo(dtype)
    wide = np.trunc(values.astype(np.float64))       # C++ float -> integer truncates
    return np.clip(wide, info.min, info.max).astype(dtype).reshape(shape)


SUPPORTED_INPUTS = ("uint8", "int8", "int32", "int64", "bool", "float32", "float16")


def _delegate_options(args, devices) -> dict:
    opts = {}
    name = args.nnapi_accelerator_name
    if name:
        names = [d.name for d in devices]
        if name not in names:
            raise UsageError(f"--nnapi_accelerator_name={name}: no such NNAPI device on this "
                             f"board; choose from {', '.join(names)}")
        opts["accelerator_name"] = name
    else:
        opts["disallow_nnapi_cpu"] = args.disable_nnapi_cpu
    if args.nnapi_allow_fp16:
        opts["allow_fp16"] = True
    if args.nnapi_allow_dynamic_dimensions:
        opts["allow_dynamic_dimensions"] = True
    if args.nnapi_use_burst_mode:
        opts["use_burst_computation"] = True
    if args.nnapi_execution_preference:
        opts["execution_preference"] = PREFERENCES[args.nnapi_execution_preference]
    if args.nnapi_execution_priority:
        opts["execution_priority"] = PRIORITIES[args.nnapi_execution_priority]
    if args.max_delegated_partitions >= 0:
        opts["max_number_delegated_partitions"] = args.max_delegated_partitions
    if args.delegate_serialize_dir and args.delegate_serialize_token:
        opts["cache_dir"] = args.delegate_serialize_dir
        opts["model_token"] = args.delegate_serialize_token
    if args.android_sdk is not None:
        opts["android_sdk_version"] = args.android_sdk
    return opts


def _check_args(args) -> str:
    if args.model and args.model_file and args.model != args.model_file:
        raise UsageError(f"two models given: {args.model} and --model_file={args.model_file}")
    path = args.model or args.model_file
    if not path:
        raise UsageError("a model is required: nnsim diff MODEL (or --model_file=MODEL)")
    if args.delegate and args.delegate != "nnapi":
        known = " (known to run_eval, but nnsim emulates only nnapi)" \
            if args.delegate in KNOWN_DELEGATES else ""
        raise UsageError(f"--delegate={args.delegate}: Unsupported TFLite delegate: "
                         f"{args.delegate}{known}")
    return path


def run(args, out) -> int:
    path = _check_args(args)
    setup_board(args)
    if args.vlog:
        nnsim.setprop("debug.nn.vlog", "1")
    quiet_logs(args.vlog)
    use_nnapi = args.use_nnapi or args.delegate == "nnapi"
    options = _delegate_options(args, get_device_manager().get_devices())
    if not use_nnapi and args.nnapi_accelerator_name:
        print(f"WARN: `--use_nnapi=true` must be set for the provided NNAPI accelerator "
              f"({args.nnapi_accelerator_name}) to be used.", file=sys.stderr)
    display, data = load_model_bytes(path)
    reference = delegated_interpreter(data, path, [], num_threads=1)
    if uses_vx(args):   # nnsim applies one delegate per graph: the external one
        delegates = [client_delegate(args)]
    else:
        delegates = [NnApiDelegate(**options)] if use_nnapi else []
    test = delegated_interpreter(data, path, delegates, num_threads=args.num_interpreter_threads)
    if test.delegation_error:
        raise RunError(f"Failed to apply delegate 0: {test.delegation_error}")
    if delegates:   # stdout stays inference_diff's own lines
        text = delegates[0].devices_text(args.device or ())
        if hasattr(delegates[0], "describe"):   # the VX delegate: which NPU it drives
            text = f"delegate: {delegates[0].describe()}; {text}"
        print(f"nnsim: client: inference_diff; {text}", file=sys.stderr)
    inputs = reference.get_input_details()
    for k, d in enumerate(inputs):
        if np.dtype(d["dtype"]).name not in SUPPORTED_INPUTS:
            raise RunError(f"{display}: input {k} '{d['name']}' is {np.dtype(d['dtype']).name}; "
                           f"inference_diff supports {'/'.join(SUPPORTED_INPUTS)} inputs")
    outputs = reference.get_output_details()
    for k, d in enumerate(outputs):
        if np.dtype(d["dtype"]).kind not in "biuf":
            raise RunError(f"{display}: output {k} '{d['name']}' is {np.dtype(d['dtype']).name}; "
                           f"only numeric outputs can be compared")
    rng = np.random.default_rng(args.seed)
    ref_latency, test_latency = Stat(True), Stat(True)
    errors = [Stat(False) for _ in outputs]
    max_abs = [0.0 for _ in outputs]
    for run_index in range(args.num_runs):
        values = [random_input(rng, d["dtype"], tuple(int(x) for x in d["shape"]))
                  for d in inputs]
        test_out = _run_stage(test, values, test_latency, run_index)
        ref_out = _run_stage(reference, values, ref_latency, run_index)
        for k, (r, t) in enumerate(zip(ref_out, test_out)):
            errors[k].update(float(average_error(r, t)))
            if r.size:
                diff = np.abs(t.astype(np.float32).ravel() - r.astype(np.float32).ravel())
                max_abs[k] = max(max_abs[k], float(np.max(diff)))
    num_runs = ref_latency.count // INVOCATIONS_PER_RUN
    if args.output_file_path:
        _write_metrics(args.output_file_path, num_runs, ref_latency, test_latency, errors)
    p = lambda line: print(f"INFO: {line}", file=out)  # noqa: E731
    p(f"Num evaluation runs: {num_runs}")
    p(f"Reference run latency: avg={ref_latency.avg():g}(us), "
      f"std_dev={ref_latency.std_deviation()}(us)")
    p(f"Test run latency: avg={test_latency.avg():g}(us), "
      f"std_dev={test_latency.std_deviation()}(us)")
    for k, e in enumerate(errors):
        p(f"OutputDiff[{k}]: avg_error={e.avg():g}, std_dev={e.std_deviation():g}")
        p(f"OutputMaxAbsDiff[{k}]: max_abs_error={max_abs[k]:g} (nnsim: the largest "
          f"|test - ref| of any element in any run)")
    return 0


def _run_stage(interp, values, latency: Stat, run_index: int) -> list:
    """``TfliteInferenceStage::Run``: set the inputs, invoke 3 times, time each invoke."""
    for d, v in zip(interp.get_input_details(), values):
        interp.set_tensor(d["index"], v)
    for _ in range(INVOCATIONS_PER_RUN):
        start_us = time.perf_counter_ns() // 1000
        try:
            interp.invoke()
        except (NnapiError, RuntimeError, ValueError) as e:
            raise RunError(f"TFLite interpreter failed to invoke at run {run_index}: "
                           f"{e}") from None
        latency.update(time.perf_counter_ns() // 1000 - start_us)
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


# -- EvaluationStageMetrics (proto2 wire format, evaluation_config/stages.proto) ------------------
def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, wire: int, payload: bytes) -> bytes:
    return _varint((number << 3) | wire) + payload


def _message(number: int, body: bytes) -> bytes:
    return _field(number, 2, _varint(len(body)) + body)


def _latency(stat: Stat, last: int) -> bytes:
    body = b"".join(_field(n, 0, _varint(int(v))) for n, v in
                    ((1, last), (2, stat.max), (3, stat.min), (4, stat.sum)))
    body += _field(5, 1, struct.pack("<d", stat.avg()))
    return body + _field(6, 0, _varint(int(stat.std_deviation())))


def _write_metrics(path: str, num_runs: int, ref: Stat, test: Stat, errors) -> None:
    profiler = _message(1, _latency(ref, ref.newest))
    profiler += _message(2, _latency(test, test.newest))
    for e in errors:
        avg = e.avg()
        body = _field(1, 5, struct.pack("<f", e.max if avg != 0 else 0.0))
        body += _field(2, 5, struct.pack("<f", e.min))
        body += _field(3, 1, struct.pack("<d", avg))
        body += _field(4, 5, struct.pack("<f", e.std_deviation()))
        profiler += _message(3, body)
    data = _field(1, 0, _varint(num_runs)) + _message(2, _message(5, profiler))
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise RunError(f"cannot write {path}: {e.strerror or e}") from None
