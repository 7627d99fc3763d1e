"""NNAPI conformance vectors (V1_0, V1_1) on nnapi-reference: one test per spec file.

Models using an operation nnsim does not register are skipped (naming the operations); every
other model must pass within the AOSP TestHarness tolerances. ``python -m
tests.conformance.report`` prints the per-operation table; ``NNSIM_CTS_REPORT=1 pytest
tests/conformance`` prints it at the end of the run.
"""
import pytest

try:
    from . import cts_runner
except ImportError:  # collected as a rootless module (pytest's default "prepend" import mode)
    import cts_runner

FILES = cts_runner.spec_files()
RESULTS: list = []  # every ModelResult of this session, for the optional summary


@pytest.mark.skipif(not FILES, reason=f"conformance vectors not found in {cts_runner.CTS_DIR}")
@pytest.mark.parametrize("path", FILES or [None], ids=[cts_runner.spec_id(p) for p in FILES]
                         or ["no-vectors"])
def test_spec(path):
    results = cts_runner.run_spec(path)
    RESULTS.extend(results)
    failed = [r for r in results if r.status == cts_runner.FAIL]
    assert not failed, "\n".join(f"{r.name}: {r.message}" for r in failed)
    if all(r.status == cts_runner.NOT_IMPLEMENTED for r in results):
        missing = sorted({op for r in results for op in r.missing})
        pytest.skip("not implemented: " + ", ".join(missing))
