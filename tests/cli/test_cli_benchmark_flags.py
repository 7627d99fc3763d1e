"""`nnsim benchmark` flags and feedback (review D10): unknown flags warn as benchmark_model's
``Flags::Parse`` does, meaningless values are refused, long runs show progress on stderr, and
the memory lines say which process they measure."""
from __future__ import annotations

import io
import re

import pytest

from nnsim.tools import benchmark_progress
from .cliutil import MODELS, nnsim

needs_models = pytest.mark.skipif(not MODELS.is_dir(), reason=f"no shared models at {MODELS}")
D10_MODEL = MODELS / "mobilenet_v1_0.25_128_quant.tflite"
TINY = MODELS / "hello_world_int8.tflite"
FAST = ["--num_runs=3", "--min_secs=0", "--warmup_runs=1", "--warmup_min_secs=0"]
# Real benchmark_model flags nnsim does not model (review D10's list).
REAL_UNMODELLED = ["--use_gpu=false", "--input_layer=input", "--input_layer_shape=1,128,128,3",
                   "--input_layer_value_range=input,0,255", "--print_preinvoke_state=true",
                   "--enable_platform_tracing=true", "--gpu_backend=cl"]
# stdout lines whose numbers are this host's (wall clock, RSS), not the simulated board's
HOST_DEPENDENT = ("INFO: Initialized session in ", "INFO: Inference timings in us: ",
                  "INFO: Memory footprint delta ")


def _stable(stdout: str) -> list[str]:
    return [l for l in stdout.splitlines() if not l.startswith(HOST_DEPENDENT)]


@needs_models
def test_real_but_unmodelled_flags_are_accepted_with_a_warning_and_change_nothing():
    base = nnsim("benchmark", f"--graph={D10_MODEL}", *FAST)
    assert base.returncode == 0, base.stderr
    # the review's one-line reproduction, then every flag of its list at once
    for extra in (REAL_UNMODELLED[:1], REAL_UNMODELLED):
        r = nnsim("benchmark", f"--graph={D10_MODEL}", *FAST, *extra)
        assert r.returncode == 0, r.stderr
        assert "unknown flag" not in r.stderr and "Traceback" not in r.stderr
        # benchmark_model consumes these flags: no "Unconsumed" line, stdout as without them
        assert "Unconsumed" not in r.stdout
        assert _stable(r.stdout) == _stable(base.stdout)
        warnings = [l for l in r.stderr.splitlines() if l.startswith("nnsim: warning:")]
        assert warnings == ["nnsim: warning: benchmark_model flags nnsim does not model, "
                            "ignored: " + " ".join(extra)]


@needs_models
def test_unknown_flags_and_repeats_are_unconsumed_as_upstream():
    r = nnsim("benchmark", f"--graph={TINY}", *FAST, "--no_such_flag=1", "stray",
              "--num_runs=7", "--dry_run=true")
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    # BenchmarkModel::ParseFlags right after benchmark_main's STARTING!, on stdout (tool WARN);
    # args in command-line order, space-separated (Flags::ArgsToString); the first
    # --num_runs wins and the repeat is left unconsumed
    assert out[:2] == ["INFO: STARTING!",
                       "WARN: Unconsumed cmdline flags: --no_such_flag=1 stray --num_runs=7"]
    assert "INFO: Min num runs: [3]" in out
    assert "Unconsumed" not in r.stderr


@pytest.mark.parametrize("args", [["--use_gpu=maybe"], ["--num_runs=many"],
                                  ["--print_preinvoke_state=yes"],
                                  ["--memory_footprint_check_interval_ms=often"]])
def test_values_benchmark_model_cannot_parse_stay_errors(args):
    r = nnsim("benchmark", "--graph=x.tflite", *args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nnsim: error: --"), r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize("arg", ["--min_secs=-1", "--max_secs=0", "--max_secs=-5",
                                 "--warmup_min_secs=-0.5", "--min_secs=nan", "--min_secs=inf",
                                 "--android_sdk=5", "--android_sdk=26", "--android_sdk=-1",
                                 "--android_sdk=100", "--num_runs=-1", "--warmup_runs=-2",
                                 "--seed=-1"])
def test_nonsense_values_are_refused_in_one_line(arg):
    r = nnsim("benchmark", f"--graph={TINY}", arg)
    assert r.returncode == 2, (arg, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    name = arg.split("=")[0]
    assert len(lines) == 1 and lines[0].startswith(f"nnsim: error: {name} "), r.stderr
    assert r.stdout == ""   # refused before STARTING!, as a flag parse failure upstream


@needs_models
def test_boundary_values_are_accepted():
    r = nnsim("benchmark", f"--graph={TINY}", "--android_sdk=27", "--min_secs=0",
              "--warmup_min_secs=0", "--num_runs=0", "--warmup_runs=0", "--max_secs=0.001")
    assert r.returncode == 0, r.stderr
    assert "INFO: Android SDK: [27]" in r.stdout


@needs_models
def test_long_runs_show_progress_on_stderr_only_and_quiet_turns_it_off():
    # wall-clock timing makes a 3 s loop on any machine; stderr is a pipe: plain lines
    long_run = [f"--graph={TINY}", "--timing=host", "--num_runs=1", "--min_secs=3",
                "--warmup_runs=1", "--warmup_min_secs=0"]
    r = nnsim("benchmark", *long_run)
    assert r.returncode == 0, r.stderr
    progress = [l for l in r.stderr.splitlines() if l.startswith("nnsim benchmark: ")]
    # (a slow first warmup run, e.g. JIT compilation on a loaded machine, may add warmup lines)
    regular = [l for l in progress if not l.startswith("nnsim benchmark: warmup: ")]
    assert regular, r.stderr
    assert all(re.match(r"nnsim benchmark: benchmark: run \d+ \(at least 1\), [\d.e+-]+ s of "
                        r"host time \(at least 3 s\), \d+ s elapsed, \d+% done$", l)
               for l in regular), progress
    assert "nnsim benchmark" not in r.stdout
    q = nnsim("benchmark", *long_run, "--quiet")
    assert q.returncode == 0, q.stderr
    assert "nnsim benchmark" not in q.stderr and "nnsim benchmark" not in q.stdout
    # --quiet is nnsim's UI flag: not echoed among benchmark_model's parameter lines
    assert "Quiet" not in q.stdout
    assert [l for l in _stable(q.stdout) if not l.startswith("INFO: count=")] == \
        [l for l in _stable(r.stdout) if not l.startswith("INFO: count=")]


@needs_models
def test_memory_lines_stay_intact_and_are_followed_by_the_host_note():
    r = nnsim("benchmark", f"--graph={TINY}", *FAST, "--report_peak_memory_footprint=true")
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    delta = next(i for i, l in enumerate(out) if l.startswith("INFO: Memory footprint delta"))
    assert re.match(r"INFO: Memory footprint delta from the start of the tool \(MB\): "
                    r"init=[\d.e+-]+ overall=[\d.e+-]+$", out[delta])
    assert re.match(r"INFO: Overall peak memory footprint \(MB\) via periodic monitoring: "
                    r"[\d.e+]+$", out[delta + 1])
    assert out[delta + 2] == ("INFO: nnsim: the memory figures above measure this host's "
                              "emulator process (Python), not the simulated board.")


def test_help_columns_are_aligned():
    r = nnsim("benchmark", "--help")
    assert r.returncode == 0
    rows = [l for l in r.stdout.splitlines() if re.match(r"  --\w+=", l)]
    assert len(rows) > 30
    starts = {re.match(r"  --\S*\s+", l).end() for l in rows}
    assert len(starts) == 1, starts


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_uses_tqdm_on_a_terminal_and_plain_lines_without_it(monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(benchmark_progress, "DELAY_S", 0.0)
    monkeypatch.setattr(benchmark_progress, "TQDM_EVERY_S", 0.0)
    monkeypatch.setattr(benchmark_progress, "PLAIN_EVERY_S", 0.0)
    tty = _Tty()
    p = benchmark_progress.Progress("benchmark", 50, 1.0, 150.0, "simulated", tty)
    p.update(25, 0.2)   # 25/50 runs but only 0.2 of 1 s: 20% done
    assert p._bar is not None and p._bar.n == 200
    p.update(60, 0.5)   # runs met, time half: 50%
    assert p._bar.n == 500
    p.close()
    assert "nnsim benchmark: benchmark" in tty.getvalue()
    # without tqdm (no nnsim[progress] extra): plain lines, even on a terminal
    monkeypatch.setattr(benchmark_progress, "_tqdm", lambda: None)
    tty = _Tty()
    p = benchmark_progress.Progress("warmup", 1, 0.5, 150.0, "simulated", tty)
    p.update(3, 0.125)
    p.close()
    assert tty.getvalue() == ("nnsim benchmark: warmup: run 3 (at least 1), 0.125 s of "
                              "simulated time (at least 0.5 s), 0 s elapsed, 25% done\n")
    # --quiet: nothing at all
    tty = _Tty()
    p = benchmark_progress.Progress("warmup", 1, 0.5, 150.0, "simulated", tty, enabled=False)
    p.update(3, 0.125)
    p.close()
    assert tty.getvalue() == ""


def test_progress_fraction_follows_the_loop_rule():
    p = benchmark_progress.Progress("b", 10, 2.0, 4.0, "host", io.StringIO())
    assert p.fraction(5, 2.0) == 0.5      # time met, runs half
    assert p.fraction(10, 1.0) == 0.5     # runs met, time half
    assert p.fraction(1, 3.0) == 0.75     # max_secs (4 s) ends it first
    assert p.fraction(20, 5.0) == 1.0
    assert benchmark_progress.Progress("b", 0, 0.0, 1.0, "host", io.StringIO()).fraction(0, 0) \
        == 1.0
