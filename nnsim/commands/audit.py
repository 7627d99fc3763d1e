"""``nnsim audit``: every model under some folders x boards x Android versions x delegates."""
from __future__ import annotations

import json
import re
import sys
import textwrap
import time
from pathlib import Path

import nnsim
from nnsim.audit.engine import Combination, error_record, model_digest, model_files
from nnsim.audit.html import audit_page
from nnsim.audit.scheduler import ResultCache, Task, code_digest, run_tasks
from nnsim.audit.tables import (csv_text, format_regressions, regressions, sort_records, summary,
                                write_parquet)
from nnsim.commands.common import RunError, UsageError
from nnsim.commands.compare import add_combination_arguments, combinations, limits

NAME = "audit"
HELP = "a model zoo across boards, Android versions and delegates: CSV, JSON, HTML report"
DESCRIPTION = textwrap.fill(
    "For every .tflite file under the paths and every combination of board, Android SDK and "
    "delegate: the placement (delegated nodes, partitions, device per op), the refusal reasons "
    "grouped, the simulated board time and, with --run, one inference checked against nnsim's "
    "TFLite CPU path. Each combination runs in a process of its own (a per-task timeout and "
    "memory cap; a model that cannot be loaded or run is a row with its error), on a local "
    "process pool or a Dask cluster (--scheduler). Results: OUT/audit.csv (and audit.parquet "
    "with pyarrow), OUT/summary.json, OUT/report.html, OUT/graphs/. Finished combinations are "
    "cached in OUT/cache (keyed by model hash, combination and nnsim version): an interrupted "
    "audit run again picks up where it stopped.")
EPILOG = """examples:
  nnsim audit ../shared/models --boards imx8mp,vs680 --android_sdk 29,31
  nnsim audit zoo/ --delegates nnapi,vx --run --jobs 8 --out audit-out
  nnsim audit zoo/ --scheduler tcp://scheduler:8786     # a Dask cluster (pip install 'nnsim[dask]')
  nnsim audit zoo/ --scheduler dask-local --jobs 2      # a local Dask cluster of 2 workers
  nnsim audit zoo/ --baseline last/summary.json         # exit 3 on a regression (for CI)

exit codes: 0 done, 1 no model found or an output that cannot be written, 2 bad flags,
3 regressions against --baseline."""

EXIT_REGRESSION = 3


def add_arguments(p) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help=".tflite files or folders "
                                                            "(searched recursively)")
    add_combination_arguments(p, "nnapi,vx,cpu")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on a Dask cluster: tcp://host:8786, or dask-local for a "
                        "LocalCluster of --jobs workers (pip install 'nnsim[dask]')")
    p.add_argument("--out", default="nnsim-audit", metavar="DIR",
                   help="output folder (default: nnsim-audit)")
    p.add_argument("--baseline", metavar="OLD.json",
                   help="an earlier audit's summary.json: report regressions (lost NPU "
                        "coverage, slower, failing) and exit 3 when there are any")
    p.add_argument("--slower", type=float, default=0.05, metavar="FRACTION",
                   help="with --baseline: a simulated average this much higher is a "
                        "regression (default 0.05 = 5%%)")
    p.add_argument("--fresh", action="store_true",
                   help="ignore cached results (they are still written for the next run)")
    p.add_argument("--no-graphs", "--no_graphs", dest="graphs", action="store_false",
                   help="do not draw each model's graph page (OUT/graphs/)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def graph_file(model: str, board: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model.replace("/", "__"))
    return f"graphs/{slug}.{board}.html"


def run(args, out) -> int:
    baseline = _read_baseline(args.baseline) if args.baseline else None
    try:
        models = model_files(args.paths)
    except FileNotFoundError as e:
        raise RunError(str(e)) from None
    if not models:
        raise RunError(f"no .tflite file under {', '.join(args.paths)}")
    outdir = Path(args.out)
    try:
        (outdir / "graphs").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RunError(f"--out {args.out}: {e.strerror or e}") from None
    combos = combinations(args)
    tasks, records = [], []
    for path, name in models:
        try:
            digest = model_digest(Path(path).read_bytes())
        except OSError as e:
            records += [error_record(name, c, "error", f"cannot read the model: "
                                                       f"{e.strerror or e}") for c in combos]
            continue
        tasks += [Task(path, name, digest, c, args.run) for c in combos]
        if args.graphs:
            boards = dict.fromkeys(c.board for c in combos)
            for b in boards:
                sdk = max(c.android_sdk for c in combos if c.board == b)
                tasks.append(Task(path, name, digest, Combination(b, sdk, "nnapi"),
                                  kind="graph"))
    cache = ResultCache(outdir / "cache", code_digest())
    if args.fresh:
        cache.get = lambda task: None
    start = time.perf_counter()
    counts = {"computed": 0, "cached": 0}
    bar = _progress_bar(len(tasks), args.quiet)

    def progress(task, value, cached):
        counts["cached" if cached else "computed"] += 1
        if bar is not None:
            bar.update(1)
            if isinstance(value, dict) and value.get("status") not in (None, "ok",
                                                                       "unavailable"):
                bar.set_postfix_str(f"last failure: {task.name}", refresh=False)

    graphs = {}
    try:
        for task, value in run_tasks(tasks, jobs=args.jobs, limits=limits(args),
                                     scheduler=args.scheduler, cache=cache, progress=progress):
            if task.kind == "graph":
                if value is not None:
                    graphs[(task.name, task.combo.board)] = value
            else:
                records.append(value)
    except RuntimeError as e:   # Dask missing or unreachable
        raise RunError(str(e)) from None
    except OSError as e:
        if "connect" in str(e).lower() or "timed out" in str(e).lower():
            raise RunError(f"--scheduler {args.scheduler}: {e}") from None
        raise
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - start
    return _write_results(args, out, outdir, records, graphs, baseline, wall, counts, len(combos))


def _progress_bar(total: int, quiet: bool):
    if quiet:
        return None
    try:
        import tqdm   # optional (the progress extra): no bar without it
    except ImportError:
        print("nnsim: note: no progress bar without tqdm (pip install 'nnsim[progress]')",
              file=sys.stderr)
        return None
    tqdm.tqdm.monitor_interval = 0   # no monitor thread: tasks fork from this process
    return tqdm.tqdm(total=total, unit="task", file=sys.stderr, dynamic_ncols=True,
                     mininterval=0.5, desc="nnsim audit")


def _read_baseline(path: str) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise UsageError(f"--baseline {path}: {e.strerror or e}") from None
    except ValueError as e:
        raise UsageError(f"--baseline {path}: not JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("records"), list):
        raise UsageError(f"--baseline {path}: not an nnsim audit summary.json (no records)")
    return data


def _write_results(args, out, outdir, records, graphs, baseline, wall, counts, n_combos) -> int:
    records = sort_records(records, args.delegates)
    links = {}
    for (model, board), page in sorted(graphs.items()):
        rel = graph_file(model, board)
        (outdir / rel).write_text(page, encoding="utf-8")
        links.setdefault(model, []).append((board, rel))
    config = {"paths": list(args.paths), "boards": sorted({r["board"] for r in records}),
              "delegates": list(args.delegates), "android_sdk": args.android_sdk,
              "run": bool(args.run), "nnsim_version": nnsim.__version__}
    data = summary(records, config)
    found = regressions(baseline, records, args.slower) if baseline is not None else []
    if baseline is not None:
        data["regressions"] = found
    data["timing"] = {"wall_s": round(wall, 3), "computed_tasks": counts["computed"],
                      "cached_tasks": counts["cached"], "jobs": args.jobs,
                      "scheduler": args.scheduler or "local",
                      "combinations_per_s": round(len(records) / wall, 3) if wall else None}
    written = [outdir / "audit.csv", outdir / "summary.json", outdir / "report.html"]
    (outdir / "audit.csv").write_text(csv_text(records), encoding="utf-8")
    if write_parquet(records, outdir / "audit.parquet"):
        written.insert(1, outdir / "audit.parquet")
    (outdir / "summary.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    (outdir / "report.html").write_text(audit_page(records, data, links), encoding="utf-8")
    t = data["totals"]
    print(f"audited {t['models']} model(s) x {n_combos} combination(s): {t['ok']} ok, "
          f"{t['failed']} failed ({', '.join(f'{k} {v}' for k, v in t['by_status'].items())}); "
          f"{wall:.1f} s, {counts['computed']} task(s) computed, {counts['cached']} cached",
          file=out)
    for c in data["coverage"]:
        print(f"  {c['board']:<8} {c['delegate']:<6} sdk {c['android_sdk']}: NPU coverage "
              f"{100 * c['npu_coverage']:5.1f}% ({c['accelerator_nodes']}/{c['nodes']} nodes, "
              f"{c['models']} model(s))", file=out)
    print("wrote " + ", ".join(str(p) for p in written) + f", {len(graphs)} graph page(s)",
          file=out)
    if found:
        for line in format_regressions(found):
            print(line, file=out)
        print(f"{len(found)} combination(s) regressed against {args.baseline}", file=out)
        return EXIT_REGRESSION
    if baseline is not None:
        print(f"no regression against {args.baseline}", file=out)
    return 0
