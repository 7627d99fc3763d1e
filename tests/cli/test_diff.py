"""``nnsim diff``: inference_diff's statistics, random inputs, output format, flags and errors."""
from __future__ import annotations

import math
import re
import struct

import numpy as np
import pytest

from nnsim.commands import diff as diff_cmd
from tests.cli.test_graph import SHARED, need, parser_for, registered, run_cli, run_inprocess

MODELS = SHARED / "models"
QUANT = MODELS / "mobilenet_v1_0.25_128_quant.tflite"     # uint8, fully delegated to vsi-npu
TINY = MODELS / "hello_world_int8.tflite"                   # int8, 3 FULLY_CONNECTED

not_registered = pytest.mark.xfail(condition=not registered("diff"),
                                   reason="command not registered yet", strict=False)

NUM = r"-?(?:\d+(?:\.\d+)?(?:e[+-]\d+)?|nan|inf)"
LINES = [
    re.compile(r"^INFO: Num evaluation runs: (\d+)$"),
    re.compile(rf"^INFO: Reference run latency: avg=({NUM})\(us\), std_dev=(\d+)\(us\)$"),
    re.compile(rf"^INFO: Test run latency: avg=({NUM})\(us\), std_dev=(\d+)\(us\)$"),
    re.compile(rf"^INFO: OutputDiff\[0\]: avg_error=({NUM}), std_dev=({NUM})$"),
    re.compile(rf"^INFO: OutputMaxAbsDiff\[0\]: max_abs_error=({NUM}) \(nnsim: .*\)$"),
]


def check_format(stdout: str, runs: int) -> list:
    lines = stdout.strip().splitlines()
    assert len(lines) == len(LINES), stdout
    groups = []
    for line, rx in zip(lines, LINES):
        m = rx.match(line)
        assert m, line
        groups.append(m.groups())
    assert int(groups[0][0]) == runs
    return groups


# -- the tool's arithmetic ------------------------------------------------------------------------
def test_stat_int64_latency_matches_cpp():
    s = diff_cmd.Stat(integer=True)
    for v in (10, 20, 30):
        s.update(v)
    assert s.avg() == 20.0
    assert s.std_deviation() == int(math.sqrt((100 + 400 + 900) / 3 - 400))   # 8, truncated
    same = diff_cmd.Stat(integer=True)
    for v in (7, 7):
        same.update(v)
    assert same.std_deviation() == 0 and same.avg() == 7.0


def test_stat_float_errors_sum_in_float32():
    s = diff_cmd.Stat(integer=False)
    values = [0.1, 0.2, 0.4]
    for v in values:
        s.update(float(np.float32(v)))
    total = np.float32(0)
    for v in values:
        total = np.float32(total + np.float32(v))
    assert s.avg() == float(total) / 3
    var = sum(float(np.float32(v)) ** 2 for v in values) / 3 - s.avg() ** 2
    assert s.std_deviation() == float(np.float32(math.sqrt(var)))
    zero = diff_cmd.Stat(integer=False)
    zero.update(0.0)
    zero.update(0.0)
    assert zero.avg() == 0 and zero.std_deviation() == 0
    assert f"{zero.avg():g}, {zero.std_deviation():g}" == "0, 0"


def test_average_error_is_float32_mean_abs():
    ref = np.array([[0, 10, 255]], np.uint8)
    test = np.array([[1, 8, 250]], np.uint8)
    assert diff_cmd.average_error(ref, test) == np.float32(8 / 3)
    assert diff_cmd.average_error(ref, ref) == 0
    i8 = np.array([-128, 127], np.int8)
    assert diff_cmd.average_error(i8, i8[::-1].copy()) == np.float32(255)
    assert math.isnan(diff_cmd.average_error(np.zeros(0), np.zeros(0)))


@pytest.mark.parametrize("dtype, lo, hi", [
    (np.uint8, 0, 255), (np.int8, -128, 127), (np.float32, -1, 1), (np.float16, -1, 1),
    (np.int32, -2 ** 31, 2 ** 31 - 1), (np.int64, -2 ** 63, 2 ** 63 - 1)])
def test_random_inputs_truncated_gaussian(dtype, lo, hi):
    rng = np.random.default_rng(1)
    x = diff_cmd.random_input(rng, np.dtype(dtype), (4, 2500))
    assert x.dtype == np.dtype(dtype) and x.shape == (4, 2500)
    assert x.min() >= lo and x.max() <= hi
    # N(0.5, 1/3) truncated to [0, 1), mapped to [lo, hi]: mean ~ the middle of the range
    u = (x.astype(np.float64) - lo) / (float(hi) - lo)
    assert abs(u.mean() - 0.5) < 0.01
    assert 0.235 < u.std() < 0.26          # a truncated N(0.5, 1/3) on [0, 1): std 0.2476
    if np.dtype(dtype).kind in "iu":
        assert len(np.unique(x)) > 100


def test_random_input_uint8_truncates_like_a_cpp_cast():
    x = diff_cmd.random_input(np.random.default_rng(0), np.dtype(np.uint8), (100000,))
    assert x.max() <= 255 and (x == 0).any()
    b = diff_cmd.random_input(np.random.default_rng(0), np.dtype(bool), (10,))
    assert b.dtype == np.bool_


def test_flag_bool():
    for text, value in (("true", True), ("1", True), ("FALSE", False), ("0", False)):
        assert diff_cmd.flag_bool(text) is value
    with pytest.raises(Exception):
        diff_cmd.flag_bool("yes please")


# -- the command ----------------------------------------------------------------------------------
def test_bit_exact_quantized_model_shows_zero_error():
    rc, out, err = run_inprocess(diff_cmd, [need(QUANT), "--num_runs=2"])
    assert rc == 0, err
    g = check_format(out, 2)
    assert g[3] == ("0", "0") and g[4] == ("0",)
    assert "Replacing 31 out of 31 node(s) with delegate" in err    # really delegated
    assert float(g[1][0]) > 0 and float(g[2][0]) > 0


def test_flags_in_both_spellings_and_nnapi_off():
    rc, out, err = run_inprocess(diff_cmd, ["--model_file", need(TINY), "--num_runs", "2",
                                            "--use_nnapi", "0"])
    assert rc == 0, err
    check_format(out, 2)
    assert "Replacing" not in err
    rc, out, err = run_inprocess(diff_cmd, [need(TINY), "--num_runs=1", "--use_nnapi=true",
                                            "--nnapi_accelerator_name=vsi-npu",
                                            "--nnapi_execution_preference=sustained_speed",
                                            "--nnapi_execution_priority", "high",
                                            "--max_delegated_partitions=1",
                                            "--disable_nnapi_cpu=false", "--seed=3"])
    assert rc == 0, err
    assert check_format(out, 1)[3] == ("0", "0")
    assert "Replacing 3 out of 3 node(s)" in err


def _fields(data: bytes) -> list:
    """Decode one protobuf message: [(field number, value)] (bytes for length-delimited)."""
    out, pos = [], 0
    def varint():
        nonlocal pos
        shift = value = 0
        while True:
            b = data[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return value
    while pos < len(data):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            out.append((number, varint()))
        elif wire == 1:
            out.append((number, struct.unpack("<d", data[pos:pos + 8])[0]))
            pos += 8
        elif wire == 5:
            out.append((number, struct.unpack("<f", data[pos:pos + 4])[0]))
            pos += 4
        else:
            n = varint()
            out.append((number, data[pos:pos + n]))
            pos += n
    return out


def test_output_file_path_writes_the_metrics_proto(tmp_path):
    path = tmp_path / "metrics.pb"
    rc, out, err = run_inprocess(diff_cmd, [need(TINY), "--num_runs=2",
                                            f"--output_file_path={path}"])
    assert rc == 0, err
    top = dict(_fields(path.read_bytes()))
    assert top[1] == 2                                         # num_runs
    process = dict(_fields(top[2]))
    profiler = _fields(process[5])                             # inference_profiler_metrics
    ref, test = dict(_fields(profiler[0][1])), dict(_fields(profiler[1][1]))
    assert [n for n, _ in profiler] == [1, 2, 3]
    groups = check_format(out, 2)
    for latency, line in ((ref, groups[1]), (test, groups[2])):
        assert sorted(latency) == [1, 2, 3, 4, 5, 6]
        assert f"{latency[5]:g}" == line[0] and str(latency[6]) == line[1]
        assert latency[3] <= latency[5] <= latency[2]          # min <= avg <= max
    errors = dict(_fields(profiler[2][1]))
    assert errors == {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0}         # bit-exact: all zero


@pytest.mark.parametrize("argv, needle", [
    (["--num_runs=0"], "--num_runs"),
    (["--num_runs=x"], "--num_runs"),
    (["--use_nnapi=maybe"], "--use_nnapi: expects true/false/1/0"),
    (["--disable_nnapi_cpu", "yes"], "--disable_nnapi_cpu"),
    (["--delegate=gpu"], "Unsupported TFLite delegate: gpu"),
    (["--delegate=foo"], "Unsupported TFLite delegate: foo"),
    (["--nnapi_accelerator_name=nosuch"], "choose from vsi-npu, nnapi-reference"),
    (["--nnapi_execution_preference=fastest"], "--nnapi_execution_preference"),
    (["--nnapi_execution_priority=urgent"], "--nnapi_execution_priority"),
    (["--board=nosuch"], "unknown board"),
    (["--android_sdk=x"], "--android_sdk"),
    (["--model_file=other.tflite"], "two models given"),
    (["--frobnicate=1"], "unrecognized arguments"),
])
def test_bad_flags_exit_2(argv, needle):
    rc, out, err = run_inprocess(diff_cmd, [need(TINY), *argv])
    assert rc == 2, err
    assert err.startswith("nnsim: error: ") and len(err.strip().splitlines()) == 1
    assert needle in err
    assert out == ""


def test_no_model_exit_2():
    rc, _, err = run_inprocess(diff_cmd, ["--num_runs=1"])
    assert rc == 2 and "a model is required" in err


def test_corrupt_and_missing_model_exit_1(tmp_path):
    junk = tmp_path / "junk.tflite"
    junk.write_bytes(bytes(range(256)) * 4)
    rc, out, err = run_inprocess(diff_cmd, [junk, "--num_runs=1"])
    assert rc == 1 and out == ""
    assert err.startswith(f"nnsim: error: {junk}") and len(err.strip().splitlines()) == 1
    rc, _, err = run_inprocess(diff_cmd, [tmp_path / "missing.tflite"])
    assert rc == 1 and "no such file" in err


def test_help_lists_flags_and_examples():
    text = parser_for(diff_cmd).format_help()
    assert "examples:" in text
    for flag in ("--num_runs", "--use_nnapi", "--nnapi_accelerator_name", "--disable_nnapi_cpu",
                 "--max_delegated_partitions", "--board", "--output_file_path", "--delegate"):
        assert flag in text
    assert diff_cmd.NAME == "diff" and diff_cmd.HELP


# -- as a user runs it -----------------------------------------------------------------------------
@not_registered
def test_cli_diff(tmp_path):
    proc = run_cli("diff", need(QUANT), "--num_runs=2", "--use_nnapi=true")
    assert proc.returncode == 0, proc.stderr
    assert check_format(proc.stdout, 2)[3] == ("0", "0")
    proc = run_cli("diff", need(TINY), "--num_runs", "1", "--use_nnapi", "maybe")
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("nnsim: error:")
    assert len(proc.stderr.strip().splitlines()) == 1
    junk = tmp_path / "junk.tflite"
    junk.write_bytes(b"\x00" * 300)
    proc = run_cli("diff", junk)
    assert proc.returncode == 1 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    proc = run_cli("diff", "--help")
    assert proc.returncode == 0 and "examples:" in proc.stdout
