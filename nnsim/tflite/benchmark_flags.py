"""benchmark_model's command-line flags (tflite-nnapi-delegate.md 7.1) and nnsim's own.

Flags are written ``--name=value`` (``--name value`` and a bare ``--name`` for a true boolean
are accepted too). Each flag has its upstream default and its LOG_TOOL_PARAM description.
"""
from __future__ import annotations

from dataclasses import dataclass


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
    Flag("num_threads", int, -1, "Num threads", "threads (nnsim kernels are single-threaded)"),
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
    # nnsim
    Flag("board", str, "imx8mp", "Board", "nnsim board profile (imx8mp, vs680, ...)"),
    Flag("android_sdk", int, 0, "Android SDK", "emulated ro.build.version.sdk (default: the "
         "board's)"),
    Flag("setprop", list, [], "Set property", "KEY=VALUE emulated property (repeatable)"),
    Flag("timing", str, "simulated", "Timing", "simulated (the board's time) or host"),
    Flag("seed", int, 0, "Seed", "seed of the random inputs"),
    Flag("logcat", bool, False, "Logcat", "also print the board's logcat lines (as with "
         "--setprop=debug.nn.vlog=1)"),
]
BY_NAME = {f.name: f for f in FLAGS}
PREFERENCES = {"fast_single_answer": 1, "sustained_speed": 2, "low_power": 0, "undefined": -1}
PRIORITIES = {"default": 100, "low": 90, "medium": 100, "high": 110}


def _convert(flag: Flag, raw: str):
    if flag.kind is bool:
        low = raw.lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise FlagError(f"--{flag.name} takes true or false, got {raw!r}")
    try:
        return flag.kind(raw)
    except ValueError:
        raise FlagError(f"--{flag.name} takes a{'n integer' if flag.kind is int else ' number'}"
                        f", got {raw!r}") from None


def parse_flags(argv) -> tuple[dict, set]:
    """(values by flag name, names given on the command line)."""
    values = {f.name: (list(f.default) if f.kind is list else f.default) for f in FLAGS}
    given: set = set()
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("--"):
            raise FlagError(f"unexpected argument {arg!r} (flags are --name=value)")
        name, sep, raw = arg[2:].partition("=")
        flag = BY_NAME.get(name)
        if flag is None:
            raise FlagError(f"unknown flag --{name} (see nnsim benchmark --help)")
        if not sep:
            if flag.kind is bool and (i + 1 >= len(args) or args[i + 1].startswith("--")):
                raw = "true"
            elif i + 1 < len(args):
                i += 1
                raw = args[i]
            else:
                raise FlagError(f"--{name} needs a value")
        if flag.kind is list:
            values[name].append(raw)
        else:
            values[name] = _convert(flag, raw)
        given.add(name)
        i += 1
    if values["timing"] not in ("simulated", "host"):
        raise FlagError(f"--timing takes simulated or host, got {values['timing']!r}")
    if values["op_profiling_output_mode"] not in ("stdout", "csv"):
        raise FlagError("--op_profiling_output_mode takes stdout or csv")
    if values["nnapi_execution_preference"] not in ("", *PREFERENCES):
        raise FlagError(f"--nnapi_execution_preference takes one of "
                        f"{', '.join(PREFERENCES)}")
    if values["nnapi_execution_priority"] not in ("", *PRIORITIES):
        raise FlagError(f"--nnapi_execution_priority takes one of {', '.join(PRIORITIES)}")
    for name in ("num_runs", "warmup_runs"):
        if values[name] < 0:
            raise FlagError(f"--{name} must not be negative")
    return values, given


def help_text() -> str:
    lines = ["usage: nnsim benchmark --graph=MODEL.tflite [--flag=value ...]", "",
             "benchmark_model's flags (defaults as upstream) plus nnsim's board flags:"]
    for f in FLAGS:
        default = ",".join(f.default) if f.kind is list else (
            str(f.default).lower() if f.kind is bool else str(f.default))
        lines.append(f"  --{f.name}={default!s:<14} {f.help}")
    lines += ["", "examples:",
              "  nnsim benchmark --graph=model.tflite --use_nnapi=true",
              "  nnsim benchmark --graph=mobilenet_v1_0.25_224_quant.tflite --use_nnapi=true "
              "--nnapi_accelerator_name=synap-npu --board=vs680",
              "  nnsim benchmark --graph=deeplab.tflite --use_nnapi=true --disable_nnapi_cpu=false "
              "--android_sdk=29 --enable_op_profiling=true",
              "  nnsim benchmark --graph=model.tflite --timing=host   # wall time on this machine"]
    return "\n".join(lines)
