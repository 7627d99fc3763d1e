"""benchmarks/python_overhead.py: its call count against hand-counted calls, and a run that
leaves the compiled programs in place."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("python_overhead",
                                               ROOT / "benchmarks" / "python_overhead.py")
python_overhead = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(python_overhead)


def _leaf():
    return 1


def _twice():
    return _leaf() + _leaf() + len([1])


def _fails():
    _leaf()
    raise ValueError


def test_count_calls_counts_each_callee_not_the_function_itself():
    calls = python_overhead.count_calls(_twice)
    leaf = [k for k in calls if k.endswith(" _leaf")]
    assert len(leaf) == 1 and calls[leaf[0]] == 2 and calls["C len"] == 1
    assert sum(calls.values()) == 3
    with pytest.raises(ValueError):   # the profile is removed when the function raises
        python_overhead.count_calls(_fails)
    assert sys.getprofile() is None
    assert python_overhead.count_calls(_twice) == calls


def test_run_restores_the_compiled_programs(shared_dir, capsys):
    from nnsim.kernels import program
    model = shared_dir / "models" / "mobilenet_v1_0.25_224_1_default_1.tflite"
    if not model.is_file():
        pytest.skip(f"{model} not found")
    run = program.Program.run
    assert python_overhead.main([str(model), "--invokes", "3", "--rounds", "1"]) == 0
    assert program.Program.run is run
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["CPU", "NNAPI"]
