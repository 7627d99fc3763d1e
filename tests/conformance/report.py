"""Per-operation conformance table:
``python -m tests.conformance.report [-v] [--board B] [SPEC_FILTER]``.

Runs every vector of ../shared/cts on nnapi-reference (with ``--board B``: compiled for every
device of board B, its NPUs partitioning the work with nnapi-reference as fallback) and prints,
per operation, how many models pass, fail and use an operation nnsim does not implement; ``-v``
lists the failures.
"""
from __future__ import annotations

import sys
import time

from tests.conformance import cts_runner


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    if "--board" in argv:
        from nnsim.runtime.board import apply_board
        k = argv.index("--board")
        apply_board(argv[k + 1])
        cts_runner.ALL_DEVICES = True
        argv = argv[:k] + argv[k + 2:]
    filters = [a for a in argv if not a.startswith("-")]
    files = [p for p in cts_runner.spec_files()
             if not filters or any(f in cts_runner.spec_id(p) for f in filters)]
    if not files:
        print(f"no conformance vectors in {cts_runner.CTS_DIR}")
        return 0
    start = time.perf_counter()
    results = [r for path in files for r in cts_runner.run_spec(path)]
    print(cts_runner.summary_table(results))
    failed = [r for r in results if r.status == cts_runner.FAIL]
    if verbose:
        for r in failed:
            print(f"FAIL {r.spec} {r.name}: {r.message}")
    print(f"{len(files)} spec files, {len(results)} models in "
          f"{time.perf_counter() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
