"""benchmark_model's command-line flags (tflite-nnapi-delegate.md 7.1) and nnsim's own.

Flags are written ``--name=value`` (``--name value`` and a bare ``--name`` for a true boolean
are accepted too). Each flag has its upstream default and its LOG_TOOL_PARAM description.

Like benchmark_model (``Flags::Parse``), an argument that names no flag is not an error: it is
left "unconsumed" and reported in one ``WARN: Unconsumed cmdline flags: ...`` line, and a
repeated flag keeps its first value (the repeat is unconsumed). Real benchmark_model flags that
nnsim does not model (``UNMODELLED``: GPU/XNNPACK/Hexagon options, ``--input_layer*``, ...) are
parsed with their upstream type, so a value benchmark_model would refuse is still an error, and
are otherwise ignored with a warning. A value upstream cannot parse, and values nnsim refuses as
meaningless (``check_values``), are errors (exit code 2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from nnsim.tflite.vx import is_vx_library


class FlagError(Exception):
    """A bad flag or value (exit code 2)."""


@dataclass(frozen=True)
class Flag:
    name: str
    kind: type            # bool, int, float, str, list (repeatable str)
    default: object
    description: str      # LOG_TOOL_PARAM text
    help: str = ""


FLAGS = [
    # benchmark_model.cc
    Flag("num_runs", int, 50, "Min num runs", "minimum number of runs"),
    Flag("min_secs", float, 1.0, "Min runs duration (seconds)", "minimum run time"),
    Flag("max_secs", float, 150.0, "Max runs duration (seconds)", "maximum run time"),
    Flag("run_delay", float, -1.0, "Inter-run delay (seconds)", "delay between runs"),
    Flag("run_frequency", float, -1.0, "Number of prorated runs per second",
         "runs per second (overrides run_delay)"),
    Flag("num_threads", int, -1, "Num threads",
         "threads of the CPU kernels and NNAPI executions (-1: 1)"),
    Flag("benchmark_name", str, "", "Benchmark name", "benchmark name"),
    Flag("output_prefix", str, "", "Output prefix", "prefix of the output"),
    Flag("warmup_runs", int, 1, "Min warmup runs", "minimum number of warmup runs"),
    Flag("warmup_min_secs", float, 0.5, "Min warmup runs duration (seconds)",
         "minimum warmup time"),
    Flag("verbose", bool, False, "Log parameter values verbosely", "print every parameter"),
    Flag("dry_run", bool, False, "Run w/o invoking kernels", "initialise only, run nothing"),
    Flag("report_peak_memory_footprint", bool, False, "Report the peak memory footprint",
         "report the peak memory footprint"),
    # benchmark_tflite_model.cc
    Flag("graph", str, "", "Graph", "the .tflite model"),
    Flag("signature_to_run_for", str, "", "Signature to run", "signature key to run"),
    Flag("list_signatures", bool, False, "List signatures from the provided model",
         "list the model's signatures and exit"),
    Flag("input_layer_value_files", str, "", "Input value files",
         "input_name:file pairs separated by commas (.npy, or the tensor's raw bytes)"),
    Flag("allow_fp16", bool, False, "Allow fp16", "allow fp32 computation in fp16"),
    Flag("require_full_delegation", bool, False, "Require full delegation",
         "fail if any node stays on the CPU"),
    Flag("enable_op_profiling", bool, False, "Enable op profiling", "per-op timing tables"),
    Flag("op_profiling_output_mode", str, "stdout", "Op profiling output mode",
         "stdout or csv"),
    Flag("op_profiling_output_file", str, "", "Op profiling output file",
         "write the profiling tables to this file"),
    Flag("max_delegated_partitions", int, 0, "Max number of delegated partitions",
         "0 = unlimited (benchmark_model's default)"),
    Flag("min_nodes_per_partition", int, 0, "Min nodes per partition",
         "ignored by the NNAPI delegate"),
    Flag("delegate_serialize_dir", str, "", "Directory to be used by delegates for serializing "
         "any model data", "delegate/NNAPI compilation cache directory"),
    Flag("delegate_serialize_token", str, "", "Model-specific token/key for delegate to "
         "serialize.", "cache token"),
    # nnapi_delegate_provider.cc
    Flag("use_nnapi", bool, False, "Use NNAPI", "apply the NNAPI delegate"),
    Flag("nnapi_execution_preference", str, "", "NNAPI execution preference",
         "fast_single_answer, sustained_speed, low_power or undefined"),
    Flag("nnapi_execution_priority", str, "", "Model execution priority in nnapi",
         "default, low, medium or high"),
    Flag("nnapi_accelerator_name", str, "", "NNAPI accelerator name", "the NNAPI device to use"),
    Flag("disable_nnapi_cpu", bool, True, "Disable NNAPI cpu",
         "exclude nnapi-reference (ignored when an accelerator is named)"),
    Flag("nnapi_allow_fp16", bool, False, "Allow fp16 in NNAPI", "relax fp32 to fp16"),
    Flag("nnapi_use_burst_mode", bool, False, "use NNAPI Burst mode", "burst executions"),
    Flag("use_xnnpack", bool, False, "Use xnnpack", "accepted; nnsim has one CPU path"),
    # external_delegate_provider.cc
    Flag("external_delegate_path", str, "", "External delegate path",
         "external delegate library: libvx_delegate.so (the VX delegate on the board's NPU)"),
    Flag("external_delegate_options", str, "", "External delegate options",
         "its options, key:value pairs separated by ';'"),
    # nnsim
    Flag("board", str, "imx8mp", "Board", "nnsim board profile (imx8mp, vs680, ...)"),
    Flag("android_sdk", int, 0, "Android SDK", "emulated ro.build.version.sdk (default: the "
         "board's)"),
    Flag("setprop", list, [], "Set property", "KEY=VALUE emulated property (repeatable)"),
    Flag("timing", str, "simulated", "Timing", "simulated (the board's time) or host"),
    Flag("seed", int, 0, "Seed", "seed of the random inputs"),
    Flag("logcat", bool, False, "Logcat", "also print the board's logcat lines (as with "
         "--setprop=debug.nn.vlog=1)"),
    Flag("quiet", bool, False, "Quiet", "no progress lines on stderr during long runs"),
]
BY_NAME = {f.name: f for f in FLAGS}
# nnsim's own user-interface flags, not echoed in the LOG_TOOL_PARAM lines of stdout.
NOT_LOGGED = {"quiet"}
# The lowest --android_sdk nnsim emulates: Android 8.1, the first release with NNAPI (feature
# level 1; tflite-nnapi-delegate.md 2.1). Below it the NNAPI delegate does nothing at all
# (DoPrepare returns at once), so such a run is simply --use_nnapi=false. 0 = the board's SDK.
MIN_ANDROID_SDK, MAX_ANDROID_SDK = 27, 99

# Real benchmark_model flags (benchmark_model.cc, benchmark_tflite_model.cc and the delegate
# providers linked into the stock binary) that nnsim accepts but does not model, with their
# upstream types: benchmark_model consumes them, so nnsim does not call them "unconsumed".
UNMODELLED = {
    "use_caching": bool, "memory_footprint_check_interval_ms": int,
    "input_layer": str, "input_layer_shape": str, "input_layer_value_range": str,
    "max_profiling_buffer_entries": int, "allow_dynamic_profiling_buffer_increase": bool,
    "profiling_output_csv_file": str, "export_model_runtime_info": bool,
    "model_runtime_info_output_file": str, "print_preinvoke_state": bool,
    "print_postinvoke_state": bool, "release_dynamic_tensors": bool,
    "optimize_memory_for_large_tensors": int, "disable_delegate_clustering": bool,
    "enable_builtin_cast_constant_cache": bool, "output_filepath": str,
    "output_proto_filepath": str, "result_file_path": str, "enable_platform_tracing": bool,
    "tensor_name_display_length": int, "tensor_type_display_length": int,
    "alloc_type_display_length": int, "first_delegate_node_index": int,
    "last_delegate_node_index": int, "gpu_invoke_loop_times": int,
    "nnapi_allow_dynamic_dimensions": bool, "nnapi_support_library_path": str,
    "use_gpu": bool, "gpu_precision_loss_allowed": bool, "gpu_experimental_enable_quant": bool,
    "gpu_inference_for_sustained_speed": bool, "gpu_backend": str, "gpu_wait_type": str,
    "xnnpack_force_fp16": bool, "xnnpack_weight_cache_file_path": str,
    "use_hexagon": bool, "hexagon_lib_path": str, "hexagon_profiling": bool,
    "use_coreml": bool, "stable_delegate_settings_file": str,
}


@dataclass
class ParsedFlags:
    values: dict                      # by flag name (every FLAGS entry)
    given: set                        # FLAGS names set on the command line
    unconsumed: list = field(default_factory=list)   # arguments, as typed
    unmodelled: list = field(default_factory=list)   # arguments naming UNMODELLED flags
PREFERENCES = {"fast_single_answer": 1, "sustained_speed": 2, "low_power": 0, "undefined": -1}
PRIORITIES = {"default": 100, "low": 90, "medium": 100, "high": 110}


def _convert(name: str, kind: type, raw: str):
    """``raw`` as a value of ``kind``, or FlagError where benchmark_model's parser fails."""
    if kind is bool:
        low = raw.lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise FlagError(f"--{name} takes true or false, got {raw!r}")
    if kind in (str, list):
        return raw
    try:
        return kind(raw)
    except ValueError:
        raise FlagError(f"--{name} takes a{'n integer' if kind is int else ' number'}"
                        f", got {raw!r}") from None


def parse_command_line(argv) -> ParsedFlags:
    """Parse ``argv`` as benchmark_model does (module docstring), then ``check_values``."""
    values = {f.name: (list(f.default) if f.kind is list else f.default) for f in FLAGS}
    parsed = ParsedFlags(values, set())
    seen_unmodelled: set = set()
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        name, sep, raw = arg[2:].partition("=") if arg.startswith("--") else ("", "", "")
        flag = BY_NAME.get(name)
        kind = flag.kind if flag is not None else UNMODELLED.get(name)
        if kind is None:
            parsed.unconsumed.append(arg)
            continue
        taken = [arg]
        if not sep:
            if kind is bool and (i >= len(args) or args[i].startswith("--")):
                raw = "true"
            elif i < len(args):
                raw = args[i]
                taken.append(raw)
                i += 1
            else:
                raise FlagError(f"--{name} needs a value")
        value = _convert(name, kind, raw)   # a repeat that upstream cannot parse fails too
        if flag is None:
            # a repeat is unconsumed upstream (the first occurrence wins)
            (parsed.unconsumed if name in seen_unmodelled else parsed.unmodelled).extend(taken)
            seen_unmodelled.add(name)
        elif kind is list:
            values[name].append(value)
        elif name in parsed.given:
            parsed.unconsumed.extend(taken)
        else:
            values[name] = value
        if flag is not None:
            parsed.given.add(name)
    check_values(values)
    return parsed


def parse_flags(argv) -> tuple[dict, set]:
    """(values by flag name, names given on the command line); see ``parse_command_line``."""
    parsed = parse_command_line(argv)
    return parsed.values, parsed.given


def check_values(values: dict) -> None:
    """Refuse values with no meaning (FlagError, exit code 2).

    benchmark_model itself accepts all of these (a negative duration or count acts as 0, and
    --max_secs=0 silently ends each loop after one run whatever --num_runs says); nnsim refuses
    them because a sweep that passes one is almost always a typo whose result would mislead.
    """
    if values["timing"] not in ("simulated", "host"):
        raise FlagError(f"--timing takes simulated or host, got {values['timing']!r}")
    if values["op_profiling_output_mode"] not in ("stdout", "csv"):
        raise FlagError("--op_profiling_output_mode takes stdout or csv")
    if values["nnapi_execution_preference"] not in ("", *PREFERENCES):
        raise FlagError(f"--nnapi_execution_preference takes one of "
                        f"{', '.join(PREFERENCES)}")
    if values["nnapi_execution_priority"] not in ("", *PRIORITIES):
        raise FlagError(f"--nnapi_execution_priority takes one of {', '.join(PRIORITIES)}")
    for name in ("num_runs", "warmup_runs", "seed"):
        if values[name] < 0:
            raise FlagError(f"--{name} must not be negative, got {values[name]}")
    for name in ("min_secs", "warmup_min_secs"):
        if not (0 <= values[name] < math.inf):
            raise FlagError(f"--{name} must be a finite number of seconds >= 0, got "
                            f"{values[name]:g}")
    if not values["max_secs"] > 0:   # also NaN
        raise FlagError(f"--max_secs must be > 0 seconds (0 would stop each loop after one "
                        f"run whatever --num_runs says), got {values['max_secs']:g}")
    path = values["external_delegate_path"]
    if path:
        if not is_vx_library(path):
            raise FlagError(f"--external_delegate_path={path}: nnsim emulates one external "
                            f"delegate, libvx_delegate.so (the VX delegate)")
    sdk = values["android_sdk"]
    if sdk != 0 and not MIN_ANDROID_SDK <= sdk <= MAX_ANDROID_SDK:
        raise FlagError(f"--android_sdk must be {MIN_ANDROID_SDK}..{MAX_ANDROID_SDK} or 0 for "
                        f"the board's (NNAPI "
                        f"starts at Android 8.1 = SDK 27; below it the NNAPI delegate does "
                        f"nothing, as --use_nnapi=false), got {sdk}")


def help_text() -> str:
    lines = ["usage: nnsim benchmark --graph=MODEL.tflite [--flag=value ...]", "",
             "benchmark_model's flags (defaults as upstream) plus nnsim's board flags:"]
    column = []
    for f in FLAGS:
        default = ",".join(f.default) if f.kind is list else (
            str(f.default).lower() if f.kind is bool else str(f.default))
        column.append(f"--{f.name}={default}")
    width = max(map(len, column))
    lines += [f"  {c:<{width}}  {f.help}" for c, f in zip(column, FLAGS)]
    lines += ["", "Other benchmark_model flags (--use_gpu, --input_layer, --input_layer_shape, "
              "--print_preinvoke_state, ...)",
              "are accepted and ignored with a warning (nnsim does not model them); an unknown "
              "flag is reported",
              "as benchmark_model does (WARN: Unconsumed cmdline flags: ...) and the run goes on.",
              "nnsim refuses meaningless values: negative counts or durations, --max_secs <= 0, "
              f"--android_sdk outside {MIN_ANDROID_SDK}..{MAX_ANDROID_SDK}.",
              "Long runs print progress on stderr (a tqdm bar if tqdm is installed, "
              "pip install 'nnsim[progress]'); --quiet turns it off.",
              "", "examples:",
              "  nnsim benchmark --graph=model.tflite --use_nnapi=true",
              "  nnsim benchmark --graph=mobilenet_v1_0.25_224_quant.tflite --use_nnapi=true "
              "--nnapi_accelerator_name=synap-npu --board=vs680",
              "  nnsim benchmark --graph=deeplab.tflite --use_nnapi=true --disable_nnapi_cpu=false "
              "--android_sdk=29 --enable_op_profiling=true",
              "  nnsim benchmark --graph=model.tflite --timing=host   # wall time on this machine",
              "  nnsim benchmark --graph=mobilenet_v1_0.25_224_quant.tflite --board=vs680 "
              "--external_delegate_path=libvx_delegate.so",
              "  nnsim benchmark --graph=model.tflite --external_delegate_path=libvx_delegate.so "
              "--external_delegate_options='allowed_cache_mode:true;cache_file_path:model.nb'"]
    return "\n".join(lines)
