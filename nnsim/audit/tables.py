"""Records as people read them: the compare table, CSV/Parquet, the JSON summary, baselines.

A record is ``engine.evaluate``'s dict. ``csv_rows`` flattens it (nested values as JSON text);
``summary`` aggregates an audit (per board/delegate/SDK NPU coverage, the most common refusal
reasons with the fix ``explain`` suggests, failures); ``regressions`` compares with an older
summary (a combination that lost accelerator nodes, got slower, or stopped working).
"""
from __future__ import annotations

import csv
import io
import json
from collections import Counter

from nnsim.audit.engine import RECORD_FIELDS

__all__ = ["SHORT", "short", "record_key", "sort_records", "compare_table", "csv_text",
           "write_parquet", "summary", "regressions", "format_regressions"]

#: Short device names for narrow cells.
SHORT = {"TFLite CPU": "tflite-cpu", "nnapi-reference": "nnapi-ref", "NPU (VX delegate)": "vx-npu"}


def short(where: str) -> str:
    return "+".join(SHORT.get(p, p) for p in where.split("+"))


def record_key(r: dict) -> str:
    return f"{r['model']}|{r['board']}|{r['android_sdk']}|{r['delegate']}"


def sort_records(records, delegates=("nnapi", "vx", "cpu")) -> list:
    order = {d: i for i, d in enumerate(delegates)}
    return sorted(records, key=lambda r: (r["model"], r["board"], order.get(r["delegate"], 99),
                                          r["android_sdk"]))


def _num(value, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _op_cell(per: dict) -> str:
    if not per:
        return ""
    if len(per) == 1:
        return short(next(iter(per)))
    return " ".join(f"{short(w)}:{n}" for w, n in sorted(per.items(), key=lambda kv: -kv[1]))


def compare_table(records: list) -> str:
    """One row per combination: delegated nodes, partitions, accelerator nodes, the device of
    every op type (a column each), simulated first/average ms and the top fallback reason
    (numbered, spelled out under the table with its fix)."""
    ops = Counter()
    for r in records:
        for op, per in (r.get("op_classes") or {}).items():
            ops[op] += sum(per.values())
    op_cols = [op for op, _ in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))]
    head = ["board", "sdk", "delegate", "delegated", "parts", "on NPU", *op_cols,
            "first ms", "avg ms", "top fallback"]
    reasons: dict = {}
    rows = []
    for r in records:
        if r.get("nodes") is None:   # nothing known but the error
            ref = reasons.setdefault(f"{r['status']}: {r['error']}", len(reasons) + 1)
            rows.append([r["board"], str(r["android_sdk"]), r["delegate"], "-", "-", "-",
                         *["" for _ in op_cols], "-", "-", f"[{ref}] {r['status']}"])
            continue
        top = ""
        if r["reasons"]:
            g = r["reasons"][0]
            ref = reasons.setdefault(g["reason"] + (f"\n      fix: {g['fix']}" if g["fix"]
                                                    else ""), len(reasons) + 1)
            top = f"[{ref}] {g['nodes']} node(s)"
        if r["status"] != "ok":      # placed, but the --run check failed
            ref = reasons.setdefault(f"{r['status']}: {r['error']}", len(reasons) + 1)
            top = f"{top}; [{ref}] {r['status']}".lstrip("; ")
        rows.append([r["board"], str(r["android_sdk"]), r["delegate"],
                     f"{r['delegated_nodes']}/{r['nodes']}", str(r["partitions"]),
                     f"{r['accelerator_nodes']}/{r['nodes']}",
                     *[_op_cell((r["op_classes"] or {}).get(op, {})) for op in op_cols],
                     _num(r["first_ms"], ".2f"), _num(r["avg_ms"], ".2f"), top])
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    right = {3, 4, 5, len(head) - 3, len(head) - 2}
    lines = []
    for row in [head, ["-" * w for w in widths], *rows]:
        cells = [c.rjust(w) if i in right else c.ljust(w)
                 for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    if reasons:
        lines += ["", "fallback reasons (the top one of each combination):"]
        for text, ref in sorted(reasons.items(), key=lambda kv: kv[1]):
            lines.append(f"  [{ref}] {text}")
    return "\n".join(lines)


def csv_text(records: list) -> str:
    """One row per record, the columns of RECORD_FIELDS; nested values as JSON."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(RECORD_FIELDS)
    for r in records:
        w.writerow([_csv_value(r.get(k)) for k in RECORD_FIELDS])
    return buf.getvalue()


def _csv_value(v):
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return v


def write_parquet(records: list, path) -> bool:
    """The CSV's table as Parquet when pyarrow is installed; False when it is not."""
    try:
        import pyarrow as pa   # optional (not a dependency): no Parquet file without it
        import pyarrow.parquet as pq   # optional, as above
    except ImportError:
        return False
    columns = {k: [_csv_value(r.get(k)) if isinstance(r.get(k), (dict, list)) else r.get(k)
                   for r in records] for k in RECORD_FIELDS}
    pq.write_table(pa.table(columns), str(path))
    return True


# -- the summary ----------------------------------------------------------------------------
def compact(r: dict) -> dict:
    """What a summary keeps of a record (no per-node placement)."""
    return {k: r.get(k) for k in RECORD_FIELDS}


def summary(records: list, config: dict) -> dict:
    ok = [r for r in records if r["status"] == "ok"]
    placed = [r for r in records if r.get("nodes") is not None]   # ok, or only --run failed
    coverage: dict = {}
    for r in placed:
        key = f"{r['board']}/{r['delegate']}/sdk{r['android_sdk']}"
        c = coverage.setdefault(key, {"board": r["board"], "delegate": r["delegate"],
                                      "android_sdk": r["android_sdk"], "models": 0,
                                      "nodes": 0, "accelerator_nodes": 0})
        c["models"] += 1
        c["nodes"] += r["nodes"] or 0
        c["accelerator_nodes"] += r["accelerator_nodes"] or 0
    for c in coverage.values():
        c["npu_coverage"] = round(c["accelerator_nodes"] / c["nodes"], 4) if c["nodes"] else 0.0
    reasons: dict = {}
    for r in placed:
        for g in r.get("reasons") or ():
            e = reasons.setdefault(g["reason"], {"reason": g["reason"], "combinations": 0,
                                                 "nodes": 0, "ops": Counter(), "fix": "",
                                                 "models": set()})
            e["combinations"] += 1
            e["nodes"] += g["nodes"]
            e["ops"].update(g["ops"])
            e["models"].add(r["model"])
            e["fix"] = e["fix"] or g["fix"]
    top = sorted(reasons.values(), key=lambda e: (-e["nodes"], -e["combinations"], e["reason"]))
    failures = [{"model": r["model"], "combination": f"{r['board']}/sdk{r['android_sdk']}/"
                                                     f"{r['delegate']}",
                 "status": r["status"], "error": r["error"]}
                for r in records if r["status"] != "ok"]
    return {
        "config": config,
        "totals": {"models": len({r["model"] for r in records}), "combinations": len(records),
                   "ok": len(ok), "failed": len(records) - len(ok),
                   "by_status": dict(sorted(Counter(r["status"] for r in records).items()))},
        "coverage": sorted(coverage.values(), key=lambda c: (c["board"], c["delegate"],
                                                             c["android_sdk"])),
        "reasons": [{"reason": e["reason"], "combinations": e["combinations"],
                     "nodes": e["nodes"], "models": len(e["models"]),
                     "ops": dict(sorted(e["ops"].items())), "fix": e["fix"]} for e in top],
        "failures": failures,
        "records": [compact(r) for r in records],
    }


# -- baselines ------------------------------------------------------------------------------
def regressions(old: dict, records: list, slower: float = 0.05) -> list:
    """What got worse since ``old`` (a summary): per combination present in both, fewer
    accelerator nodes, a simulated average more than ``slower`` (fraction) higher, or a
    combination that worked and now fails."""
    before = {record_key(r): r for r in old.get("records", [])}
    out = []
    for r in records:
        b = before.get(record_key(r))
        if b is None:
            continue
        what = []
        if b.get("status") == "ok" and r["status"] != "ok":
            what.append(f"now fails ({r['status']}: {r['error']})")
        elif b.get("status") == "ok" and r["status"] == "ok":
            if (r["accelerator_nodes"] or 0) < (b.get("accelerator_nodes") or 0):
                what.append(f"lost NPU coverage: {b['accelerator_nodes']} -> "
                            f"{r['accelerator_nodes']} of {r['nodes']} nodes on an accelerator")
            if b.get("avg_ms") and r["avg_ms"] and r["avg_ms"] > b["avg_ms"] * (1 + slower):
                what.append(f"slower: {b['avg_ms']:.3f} -> {r['avg_ms']:.3f} ms simulated "
                            f"average (+{100 * (r['avg_ms'] / b['avg_ms'] - 1):.1f}%)")
        if what:
            out.append({"model": r["model"], "board": r["board"],
                        "android_sdk": r["android_sdk"], "delegate": r["delegate"],
                        "regressions": what})
    return out


def format_regressions(found: list) -> list[str]:
    lines = []
    for f in found:
        for what in f["regressions"]:
            lines.append(f"REGRESSION {f['model']} {f['board']}/sdk{f['android_sdk']}/"
                         f"{f['delegate']}: {what}")
    return lines
