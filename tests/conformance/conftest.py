"""Prints the per-operation conformance table after the run when NNSIM_CTS_REPORT=1."""
import os


def pytest_terminal_summary(terminalreporter):
    if os.environ.get("NNSIM_CTS_REPORT") != "1":
        return
    import sys
    module = next((m for name, m in sys.modules.items()
                   if name.endswith("test_conformance") and hasattr(m, "RESULTS")), None)
    if module is None or not module.RESULTS:
        return
    terminalreporter.write_sep("=", "NNAPI conformance per operation (nnapi-reference)")
    terminalreporter.write_line(module.cts_runner.summary_table(module.RESULTS))
