"""Self-contained HTML pages (inline CSS and script, no network): ``nnsim compare --format html``
and the audit's ``report.html``.

Both have sortable tables (click a column header; ``data-sort`` holds the sort value) and a
filter box. The compare page puts the per-node placement of every combination side by side
(one column per combination, a cell per node coloured by device), with a switch that keeps
only the nodes whose placement differs. The audit report has the NPU coverage bars per board,
the most common refusal reasons with the fix ``nnsim explain`` suggests, the failures, links
to each model's ``nnsim graph`` page, and the regressions against a baseline.
"""
from __future__ import annotations

from html import escape

import nnsim
from nnsim.audit.tables import short

__all__ = ["compare_page", "audit_page", "device_colour"]

_PALETTE = {"TFLite CPU": "#d9d9d9", "nnapi-reference": "#f6c28b", "vsi-npu": "#8fd18f",
            "synap-npu": "#8cb8ea"}
_EXTRA = ["#c5a3e6", "#f2a6c4", "#a6e3da", "#e6d17a", "#b0c4de"]

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f2f2f2;cursor:pointer;white-space:nowrap;position:sticky;top:0}
th.asc::after{content:" \\25B2"}th.desc::after{content:" \\25BC"}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:inline-block;height:.8em;background:#4caf50;vertical-align:middle}
.barbox{display:inline-block;width:120px;background:#eee;margin-right:6px}
td.cov{white-space:nowrap}.err{color:#b00020}.muted{color:#777}.legend span{padding:2px 8px;margin-right:6px}
.grid td{white-space:nowrap;font-size:12px}.grid td.dev{text-align:center}
.controls{margin:.5em 0}.controls input[type=search]{width:22em}
code{background:#f6f6f6;padding:0 3px}
"""

SCRIPT = """
function sortTable(th){
  var table=th.closest('table'),idx=Array.prototype.indexOf.call(th.parentNode.children,th);
  var asc=!th.classList.contains('asc');
  table.querySelectorAll('th').forEach(function(h){h.classList.remove('asc','desc')});
  th.classList.add(asc?'asc':'desc');
  var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);
  rows.sort(function(a,b){
    var x=a.cells[idx].getAttribute('data-sort'),y=b.cells[idx].getAttribute('data-sort');
    var nx=parseFloat(x),ny=parseFloat(y),r;
    if(!isNaN(nx)&&!isNaN(ny)){r=nx-ny}else{r=(x||'').localeCompare(y||'')}
    return asc?r:-r});
  rows.forEach(function(r){body.appendChild(r)});
}
function filterTable(input){
  var table=document.getElementById(input.getAttribute('data-table')),q=input.value.toLowerCase();
  Array.prototype.forEach.call(table.tBodies[0].rows,function(r){
    r.style.display=r.textContent.toLowerCase().indexOf(q)>=0?'':'none'});
}
function onlyDiffering(box){
  var table=document.getElementById('placement');
  Array.prototype.forEach.call(table.tBodies[0].rows,function(r){
    r.style.display=(box.checked&&r.getAttribute('data-same')==='1')?'none':''});
}
document.addEventListener('DOMContentLoaded',function(){
  document.querySelectorAll('table.sortable th').forEach(function(th){
    th.addEventListener('click',function(){sortTable(th)})});
});
"""


def device_colour(where: str, extra: dict) -> str:
    parts = where.split("+")
    colours = []
    for p in parts:
        if p not in _PALETTE and p not in extra:
            extra[p] = _EXTRA[len(extra) % len(_EXTRA)]
        colours.append(_PALETTE.get(p) or extra[p])
    if len(colours) == 1:
        return f"background:{colours[0]}"
    stops = ",".join(f"{c} {100 * i // len(colours)}%,{c} {100 * (i + 1) // len(colours)}%"
                     for i, c in enumerate(colours))
    return f"background:linear-gradient(90deg,{stops})"


def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style>"
            f"<script>{SCRIPT}</script></head><body>\n{body}\n"
            f"<p class=\"muted\">nnsim {escape(nnsim.__version__)}: simulated boards; times are "
            f"the board timing model's (first inference cold: no compile cache).</p>"
            f"</body></html>\n")


def _td(text, sort=None, cls: str = "", style: str = "", title: str = "") -> str:
    sort_value = text if sort is None else sort
    attrs = f' data-sort="{escape(str(sort_value))}"'
    if cls:
        attrs += f' class="{cls}"'
    if style:
        attrs += f' style="{style}"'
    if title:
        attrs += f' title="{escape(title)}"'
    return f"<td{attrs}>{escape(str(text))}</td>"


def _num(v, digits: int = 2):
    return ("-", -1) if v is None else (f"{v:.{digits}f}", v)


def _bar(fraction) -> str:
    if fraction is None:
        return ""
    pct = 100 * fraction
    return (f'<span class="barbox"><span class="bar" style="width:{pct:.1f}%"></span></span>'
            f"{pct:.1f}%")


def _combo(r: dict) -> str:
    return f"{r['board']} sdk{r['android_sdk']} {r['delegate']}"


def _table(table_id: str, head: list, rows: list, filter_box: bool = True) -> str:
    parts = []
    if filter_box:
        parts.append(f'<div class="controls"><input type="search" placeholder="filter rows" '
                     f'data-table="{table_id}" oninput="filterTable(this)"></div>')
    parts.append(f'<table id="{table_id}" class="sortable"><thead><tr>'
                 + "".join(f"<th>{escape(h)}</th>" for h in head)
                 + "</tr></thead><tbody>" + "".join(f"<tr>{r}</tr>" for r in rows)
                 + "</tbody></table>")
    return "\n".join(parts)


def _record_cells(r: dict) -> str:
    first, first_sort = _num(r.get("first_ms"))
    avg, avg_sort = _num(r.get("avg_ms"))
    if r["status"] != "ok":
        delegated = parts = "-"
        cov = ""
    else:
        delegated, parts = f"{r['delegated_nodes']}/{r['nodes']}", str(r["partitions"])
        cov = _bar(r["npu_coverage"])
    top = r.get("top_reason") or ""
    return ("".join([_td(r["board"]), _td(r["android_sdk"]), _td(r["delegate"]),
                     _td(r["status"], cls="" if r["status"] == "ok" else "err"),
                     _td(delegated, r.get("delegated_nodes") or 0, "num"),
                     _td(parts, r.get("partitions") or 0, "num")])
            + f'<td class="cov" data-sort="{r.get("npu_coverage") or 0}">{cov}</td>'
            + _td(first, first_sort, "num") + _td(avg, avg_sort, "num")
            + _td(top if r["status"] == "ok" else r.get("error") or "", title=r.get("top_fix")
                  or ""))


RECORD_HEAD = ["board", "sdk", "delegate", "status", "delegated", "partitions", "on NPU",
               "first ms", "avg ms", "top fallback reason (hover: fix) / error"]


# -- nnsim compare --------------------------------------------------------------------------
def compare_page(model: str, records: list) -> str:
    extra: dict = {}
    rows = [_record_cells(r) for r in records]
    body = [f"<h1>nnsim compare: {escape(model)}</h1>",
            "<h2>Combinations</h2>", _table("combos", RECORD_HEAD, rows)]
    ok = [r for r in records if r["status"] == "ok" and r.get("placement")]
    if ok:
        body += ["<h2>Per-node placement</h2>", _legend(ok, extra),
                 '<div class="controls"><label><input type="checkbox" id="differing" '
                 'onchange="onlyDiffering(this)"> only the nodes placed differently</label> '
                 '<input type="search" placeholder="filter nodes" data-table="placement" '
                 'oninput="filterTable(this)"></div>', _placement_grid(ok, extra)]
    body.append("<h2>Fallback reasons</h2>")
    for r in records:
        body.append(_reasons_block(r))
    return _page(f"nnsim compare {model}", "\n".join(body))


def _legend(records: list, extra: dict) -> str:
    seen = []
    for r in records:
        for p in r["placement"]:
            if p["where"] not in seen:
                seen.append(p["where"])
    return '<p class="legend">' + "".join(
        f'<span style="{device_colour(w, extra)}">{escape(w)}</span>' for w in seen) + "</p>"


def _placement_grid(records: list, extra: dict) -> str:
    head = "<th>node</th><th>op</th>" + "".join(
        f"<th>{escape(_combo(r))}</th>" for r in records)
    rows = []
    n_nodes = max(len(r["placement"]) for r in records)
    for n in range(n_nodes):
        cells, places = [], []
        op = ""
        for r in records:
            p = r["placement"][n] if n < len(r["placement"]) else None
            if p is None:
                cells.append('<td data-sort=""></td>')
                continue
            op = p["op"]
            places.append(p["where"])
            cells.append(f'<td class="dev" data-sort="{escape(p["where"])}" '
                         f'style="{device_colour(p["where"], extra)}" '
                         f'title="{escape(p["where"])}">{escape(short(p["where"]))}</td>')
        same = "1" if len(set(places)) <= 1 else "0"
        rows.append(f'<tr data-same="{same}"><td data-sort="{n}">{n}</td>{_td(op)}'
                    + "".join(cells) + "</tr>")
    return (f'<table id="placement" class="sortable grid"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def _reasons_block(r: dict) -> str:
    if r["status"] != "ok":
        return (f"<details><summary>{escape(_combo(r))}: <span class=\"err\">"
                f"{escape(r['status'])}</span></summary><p class=\"err\">"
                f"{escape(r.get('error') or '')}</p></details>")
    if r["delegate"] == "cpu":
        return (f"<details><summary>{escape(_combo(r))}: no delegate, every node on the "
                f"TFLite CPU kernels</summary></details>")
    if not r["reasons"]:
        return (f"<details><summary>{escape(_combo(r))}: every node on an "
                f"accelerator</summary></details>")
    items = []
    for g in r["reasons"]:
        ops = ", ".join(f"{op} x{n}" for op, n in g["ops"].items())
        fix = f"<br>fix: {escape(g['fix'])}" if g["fix"] else ""
        items.append(f"<li><b>{g['nodes']} node(s)</b> ({escape(ops)}): "
                     f"{escape(g['reason'])}{fix}</li>")
    return (f"<details><summary>{escape(_combo(r))}: {len(r['reasons'])} reason(s)</summary>"
            f"<ul>{''.join(items)}</ul></details>")


# -- nnsim audit ----------------------------------------------------------------------------
def audit_page(records: list, summary: dict, graph_links: dict) -> str:
    t = summary["totals"]
    timing = summary.get("timing", {})
    body = [f"<h1>nnsim audit: {t['models']} model(s), {t['combinations']} combination(s)</h1>",
            f"<p>{t['ok']} ok, {t['failed']} failed "
            f"({escape(', '.join(f'{k} {v}' for k, v in t['by_status'].items()))})"
            + (f"; {timing.get('wall_s')} s on {escape(str(timing.get('scheduler')))} with "
               f"{timing.get('jobs')} job(s)" if timing else "") + "</p>"]
    if "regressions" in summary:
        body.append(_regressions(summary["regressions"]))
    body += ["<h2>NPU coverage per board</h2>", _coverage(summary["coverage"]),
             "<h2>Most common refusal reasons</h2>", _top_reasons(summary["reasons"])]
    if summary["failures"]:
        body += ["<h2>Failures</h2>", _table("failures", ["model", "combination", "status",
                                                          "error"],
                 ["".join([_td(f["model"]), _td(f["combination"]), _td(f["status"], cls="err"),
                           _td(f["error"])]) for f in summary["failures"]])]
    rows = []
    for r in records:
        links = " ".join(f'<a href="{escape(href)}">{escape(board)}</a>'
                         for board, href in graph_links.get(r["model"], []))
        diff = r.get("max_abs_diff")
        rows.append(f'<td data-sort="{escape(r["model"])}">{escape(r["model"])}</td>'
                    f'<td data-sort="">{links}</td>' + _record_cells(r)
                    + _td("-" if diff is None else f"{diff:g}", -1 if diff is None else diff,
                          "num"))
    body += ["<h2>Every combination</h2>",
             _table("records", ["model", "graph", *RECORD_HEAD, "max |diff| vs CPU"], rows)]
    return _page("nnsim audit", "\n".join(body))


def _coverage(coverage: list) -> str:
    rows = []
    for c in coverage:
        rows.append("".join([_td(c["board"]), _td(c["delegate"]), _td(c["android_sdk"]),
                             _td(c["models"], cls="num")])
                    + f'<td class="cov" data-sort="{c["npu_coverage"]}">'
                    f'{_bar(c["npu_coverage"])}</td>'
                    + _td(f"{c['accelerator_nodes']}/{c['nodes']}", c["accelerator_nodes"],
                          "num"))
    return _table("coverage", ["board", "delegate", "sdk", "models", "NPU coverage",
                               "nodes on an accelerator"], rows, filter_box=False)


def _top_reasons(reasons: list, limit: int = 25) -> str:
    if not reasons:
        return "<p>No fallback from the accelerators.</p>"
    rows = []
    for g in reasons[:limit]:
        ops = ", ".join(f"{op} x{n}" for op, n in g["ops"].items())
        rows.append("".join([_td(g["nodes"], cls="num"), _td(g["combinations"], cls="num"),
                             _td(g["models"], cls="num"), _td(g["reason"]), _td(ops),
                             _td(g["fix"] or "-")]))
    return _table("reasons", ["nodes", "combinations", "models", "reason", "ops",
                              "fix (nnsim explain)"], rows, filter_box=False)


def _regressions(found: list) -> str:
    if not found:
        return "<h2>Regressions</h2><p>None against the baseline.</p>"
    rows = ["".join([_td(f["model"]), _td(f"{f['board']} sdk{f['android_sdk']} "
                                          f"{f['delegate']}"),
                     _td("; ".join(f["regressions"]), cls="err")]) for f in found]
    return ("<h2>Regressions against the baseline</h2>"
            + _table("regressions", ["model", "combination", "what"], rows, filter_box=False))
