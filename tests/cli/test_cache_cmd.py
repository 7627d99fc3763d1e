"""``nnsim cache show|clear`` and the SyNAP compile cache as a CLI user meets it (review D7):
a malformed file never breaks a vs680 run, hits are visible in `run` and `--vlog`."""
from __future__ import annotations

import json

import pytest

from .cliutil import MODELS, logcat, nnsim

needs_models = pytest.mark.skipif(not MODELS.is_dir(), reason=f"no shared models at {MODELS}")
TAG = "android.hardware.neuralnetworks@1.3-service-synap-npu"
MODEL = MODELS / "hello_world_float.tflite"    # 3 FULLY_CONNECTED, all on synap-npu: fast


def env(tmp_path, **extra):
    return {"NNSIM_STATE_DIR": str(tmp_path / "state"), **extra}


def cache_file(tmp_path):
    return tmp_path / "state" / "data" / "vendor" / "synap" / "nnhal.cache"


def no_traceback(r):
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, r.stderr


def test_show_without_a_cache(tmp_path):
    r = nnsim("cache", "show", env=env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "SyNAP compile cache of board vs680",
        f"  path:     {cache_file(tmp_path)}",
        "  size:     no file",
        "  capacity: 10000 entries",
        "  entries:  0"]
    assert not (tmp_path / "state").exists()        # showing creates nothing


def test_bad_capacity_warns_and_board_without_synap(tmp_path):
    r = nnsim("cache", "show", "--setprop", "vendor.SYNAP_CACHE_CAPACITY=abc",
              env=env(tmp_path))
    assert r.returncode == 0
    assert r.stderr.splitlines() == [
        ("nnsim: warning: vendor.SYNAP_CACHE_CAPACITY='abc' is not an integer; using the "
         "default capacity 10000")]
    assert "  capacity: 10000 entries" in r.stdout
    r = nnsim("cache", "clear", "--board", "imx8mp", env=env(tmp_path))
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith("board imx8mp has no SyNAP NPU (synap-npu)")
    assert "boards with one: vs680" in r.stdout


@pytest.mark.parametrize("argv, needle", [
    ([], "the following arguments are required: action"),
    (["list"], "invalid choice: 'list'"),
    (["show", "--board", "nosuch"], "unknown board 'nosuch'"),
    (["show", "--setprop", "x"], "KEY=VALUE"),
])
def test_bad_flags_exit_2(argv, needle, tmp_path):
    r = nnsim("cache", *argv, env=env(tmp_path))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("nnsim: error: ") and len(r.stderr.strip().splitlines()) == 1
    assert needle in r.stderr


def test_show_a_host_path_and_a_malformed_file(tmp_path):
    path = tmp_path / "my.cache"
    path.write_bytes(b"null")
    r = nnsim("cache", "show", "--setprop", f"vendor.SYNAP_CACHE_PATH={path}",
              env=env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert f"  path:     {path}" in r.stdout and "  size:     4 bytes" in r.stdout
    assert ("  malformed: a JSON null, not an object; the next run sets it aside and starts "
            "empty") in r.stdout
    assert path.read_bytes() == b"null"             # show changes nothing


# D7: each of these broke every vs680 run with a traceback; truncated, random bytes and
# invalid UTF-8 were silently rewritten
D7_CONTENTS = {
    "null": b"null\n",
    "list": b"[]\n",
    "no clock": b'{"format":"nnsim-synap-cache 1"}\n',
    "clock x": b'{"format":"nnsim-synap-cache 1","clock":"x","entries":{}}\n',
    "entries list": b'{"format":"nnsim-synap-cache 1","clock":0,"entries":[]}\n',
    "entry of the wrong type": b'{"format":"nnsim-synap-cache 1","clock":0,"entries":{"a":5}}',
    "truncated": b'{"format":"nnsim-synap-cache 1","clock":0,"ent',
    "invalid utf-8": b"\xff\xfe\x00garbage",
}


@needs_models
@pytest.mark.parametrize("name", list(D7_CONTENTS))
def test_run_sets_a_malformed_cache_aside(name, tmp_path):
    path = cache_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(D7_CONTENTS[name])
    r = nnsim("run", MODEL, "--board", "vs680", env=env(tmp_path))
    assert r.returncode == 0, r.stderr
    no_traceback(r)
    warnings = [ln for ln in r.stderr.splitlines() if ln.startswith("nnsim: warning: ")]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"nnsim: warning: malformed SyNAP cache {path} (")
    aside = sorted(path.parent.glob("nnhal.cache.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == D7_CONTENTS[name]
    assert f"set aside as {aside[0].name}, starting with an empty cache" in warnings[0]
    assert f"SyNAP compile cache: miss in {path}: " in r.stdout
    assert len(json.loads(path.read_text())["entries"]) == 1


@needs_models
@pytest.mark.parametrize("tool", ["benchmark", "diff"])
def test_benchmark_and_diff_survive_a_malformed_cache(tool, tmp_path):
    path = cache_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"null")
    argv = (["benchmark", f"--graph={MODEL}", "--use_nnapi=true", "--board=vs680",
             "--num_runs=2", "--warmup_runs=1"] if tool == "benchmark" else
            ["diff", f"--model_file={MODEL}", "--board=vs680", "--num_runs=2"])
    r = nnsim(*argv, env=env(tmp_path))
    assert r.returncode == 0, r.stderr
    no_traceback(r)
    assert len(list(path.parent.glob("nnhal.cache.corrupt-*"))) == 1
    assert len(json.loads(path.read_text())["entries"]) == 1


@needs_models
def test_hits_are_visible_and_show_clear(tmp_path):
    path = cache_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"[]")
    cold = nnsim("run", MODEL, "--board", "vs680", "--vlog", env=env(tmp_path))
    warm = nnsim("run", MODEL, "--board", "vs680", "--vlog", env=env(tmp_path))
    assert cold.returncode == 0 and warm.returncode == 0, cold.stderr + warm.stderr
    cold_log, warm_log = logcat(cold.stdout, TAG), logcat(warm.stdout, TAG)
    malformed = [m for m in cold_log if m.startswith("malformed SyNAP cache")]
    assert len(malformed) == 1
    assert [m for m in cold_log if m.startswith("SyNAP cache ")] == [
        m for m in cold_log if m.startswith("SyNAP cache miss: model ")
        and m.endswith(f"(3 layers), converting it and storing it in {path}")]
    hits = [m for m in warm_log if m.startswith("SyNAP cache ")]
    assert len(hits) == 1 and hits[0].startswith("SyNAP cache hit: model ")
    assert hits[0].endswith(f"(3 layers) in {path}, conversion reuses it")
    assert warm.stderr.count("nnsim: warning:") == 0

    def first_ms(r):
        line = next(ln for ln in r.stdout.splitlines() if ln.startswith("time: "))
        return float(line.split("first inference ")[1].split(" ms")[0])

    def summary(r):
        return next(ln for ln in r.stdout.splitlines() if ln.startswith("SyNAP compile cache"))
    miss, hit = summary(cold), summary(warm)
    saved = float(miss.split("a later run saves ")[1].removesuffix(" ms"))
    assert miss.startswith(f"SyNAP compile cache: miss in {path}: the first inference converted "
                           f"the model (")
    assert hit.startswith(f"SyNAP compile cache: hit in {path}: the first inference's "
                          f"conversion took ")
    assert hit.endswith(f"(saved {saved:.1f} ms)")
    # the summary's saving is what the first inference's simulated time really lost
    assert first_ms(cold) - first_ms(warm) == pytest.approx(saved, abs=0.11)

    r = nnsim("cache", "show", env=env(tmp_path))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert f"  size:     {path.stat().st_size} bytes" in lines
    assert "  entries:  1 (least recently used first)" in lines
    entry = lines[lines.index("  entries:  1 (least recently used first)") + 1]
    assert entry.endswith("3 operations (FULLY_CONNECTED x3); input 1x1 TENSOR_FLOAT32")
    assert "  inserted 20" in entry
    assert "  set aside: 1 malformed file(s) ('nnsim cache clear --all' removes them)" in lines
    doc = json.loads(nnsim("cache", "show", "--format", "json", env=env(tmp_path)).stdout)
    assert doc["board"] == "vs680" and doc["path"] == str(path) and doc["capacity"] == 10000
    assert len(doc["entries"]) == 1 and doc["entries"][0]["layers"] == 3
    assert len(doc["entries"][0]["key"]) == 64 and len(doc["set_aside"]) == 1

    r = nnsim("cache", "clear", env=env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        f"removed {path}",
        "1 malformed file(s) set aside earlier remain; --all removes them"]
    assert not path.exists()
    aside = sorted(path.parent.glob("nnhal.cache.corrupt-*"))
    r = nnsim("cache", "clear", "--all", env=env(tmp_path))
    assert r.stdout.splitlines() == [f"removed {p}" for p in aside] and len(aside) == 1
    assert list(path.parent.glob("nnhal.cache.corrupt-*")) == []
    r = nnsim("cache", "clear", "--all", env=env(tmp_path))
    assert r.stdout.splitlines() == [f"nothing to remove: {path} does not exist"]
    again = nnsim("run", MODEL, "--board", "vs680", env=env(tmp_path))
    assert f"SyNAP compile cache: miss in {path}" in again.stdout   # cleared means cold


@needs_models
def test_run_warns_about_a_bad_capacity(tmp_path):
    r = nnsim("run", MODEL, "--board", "vs680", "--setprop", "vendor.SYNAP_CACHE_CAPACITY=abc",
              env=env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert ("nnsim: warning: vendor.SYNAP_CACHE_CAPACITY='abc' is not an integer; using the "
            "default capacity 10000") in r.stderr.splitlines()
    r = nnsim("run", MODEL, "--board", "vs680", "--setprop", "vendor.SYNAP_CACHE_CAPACITY=0",
              env=env(tmp_path))
    assert "SyNAP compile cache: disabled (vendor.SYNAP_CACHE_CAPACITY=0)" in r.stdout
    r = nnsim("run", MODEL, env=env(tmp_path))      # imx8mp: no SyNAP line at all
    assert r.returncode == 0 and "SyNAP" not in r.stdout
