"""The compare and audit pages in a real headless Chromium: they load offline (no request but
the page itself), sort on a header click, filter, and hide the nodes placed alike.
Needs the playwright package and a Chromium (Debian's /usr/bin/chromium); skipped otherwise."""
from __future__ import annotations

import shutil

import pytest

from nnsim.audit.engine import Combination, error_record, is_accelerator
from nnsim.audit.html import audit_page, compare_page
from nnsim.audit.tables import summary

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("no chromium executable (Debian: apt-get install chromium)",
                allow_module_level=True)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _record(board, sdk, delegate, where, avg):
    r = error_record("m.tflite", Combination(board, sdk, delegate), "ok", "", "00")
    ops = ["CONV_2D", "ADD"]
    r.update(nodes=2, delegated_nodes=2, partitions=1, first_ms=avg * 10, avg_ms=avg,
             accelerator_nodes=sum(map(is_accelerator, where)),
             npu_coverage=sum(map(is_accelerator, where)) / 2,
             placement=[{"node": n, "op": op, "where": w}
                        for n, (op, w) in enumerate(zip(ops, where))],
             devices={}, op_classes={}, reasons=[])
    return r


RECORDS = [_record("imx8mp", 31, "nnapi", ["nnapi-reference", "vsi-npu"], 3.5),
           _record("imx8mp", 31, "vx", ["NPU (VX delegate)", "vsi-npu"], 1.25),
           _record("vs680", 30, "nnapi", ["synap-npu", "vsi-npu"], 2.0),
           error_record("m.tflite", Combination("vs680", 30, "vx"), "error", "boom", "00")]


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _open(browser, path):
    page = browser.new_page()
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    return page, requests


def _column(page, table, index):
    return page.eval_on_selector_all(
        f"#{table} tbody tr", f"rows => rows.filter(r => r.style.display !== 'none')"
                              f".map(r => r.cells[{index}].textContent.trim())")


def test_compare_page(browser, tmp_path):
    path = tmp_path / "compare.html"
    path.write_text(compare_page("m.tflite", RECORDS))
    page, requests = _open(browser, path)
    assert requests == [path.as_uri()]                 # nothing from the network
    assert page.title() == "nnsim compare m.tflite"
    avg = "#combos thead th:nth-child(9)"
    page.click(avg)
    assert _column(page, "combos", 8) == ["-", "1.25", "2.00", "3.50"]
    page.click(avg)
    assert _column(page, "combos", 8) == ["3.50", "2.00", "1.25", "-"]
    page.fill("input[data-table=combos]", "vx")
    assert _column(page, "combos", 2) == ["vx", "vx"]
    # the placement side by side: one column per working combination, one row per node
    assert _column(page, "placement", 1) == ["CONV_2D", "ADD"]
    assert _column(page, "placement", 2) == ["nnapi-ref", "vsi-npu"]
    colours = page.eval_on_selector_all("#placement tbody tr:first-child td.dev",
                                        "cells => cells.map(c => getComputedStyle(c)"
                                        ".backgroundColor)")
    assert len(set(colours)) == 3                      # three devices, three colours
    page.check("#differing")
    assert _column(page, "placement", 1) == ["CONV_2D"]  # ADD is on vsi-npu everywhere
    page.uncheck("#differing")
    assert _column(page, "placement", 1) == ["CONV_2D", "ADD"]
    page.close()


def test_audit_report(browser, tmp_path):
    other = [dict(r, model="a/other.tflite") for r in RECORDS[:2]]
    records = RECORDS + other
    data = summary(records, {})
    path = tmp_path / "report.html"
    path.write_text(audit_page(records, data, {"m.tflite": [("imx8mp", "graphs/m.html")]}))
    page, requests = _open(browser, path)
    assert requests == [path.as_uri()]
    page.click("#records thead th:nth-child(1)")
    assert _column(page, "records", 0) == ["a/other.tflite"] * 2 + ["m.tflite"] * 4
    assert page.get_attribute("#records tbody tr:last-child a", "href") == "graphs/m.html"
    assert _column(page, "failures", 3) == ["boom"]
    coverage = _column(page, "coverage", 4)
    assert coverage == ["50.0%", "100.0%", "100.0%"]   # imx8mp nnapi, imx8mp vx, vs680 nnapi
    page.close()
