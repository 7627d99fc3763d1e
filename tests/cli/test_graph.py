"""``nnsim graph``: the dot file's structure, the HTML page, formats and errors.

Driven as a user would: in-process through a parser built from the command module (the lead
registers the command in cli.py), and as ``python -m nnsim graph`` subprocesses (xfail while the
command is not registered).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import logging
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nnsim.commands import graph as graph_cmd
from nnsim.commands.common import RunError, UsageError

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
DEEPLAB = SHARED / "models" / "deeplabv3_mnv2_pascal_quant.tflite"
SMALL = SHARED / "models" / "mobilenet_v1_0.25_128_quant.tflite"


# -- harnesses ------------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parser_for(module) -> _Parser:
    p = _Parser(prog=f"nnsim {module.NAME}", description=module.DESCRIPTION,
                epilog=module.EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    module.add_arguments(p)
    return p


@contextlib.contextmanager
def _restored_logging():
    names = ("nnsim.logcat", "nnsim.tflite")
    saved = {n: (list(logging.getLogger(n).handlers), logging.getLogger(n).level,
                 logging.getLogger(n).propagate) for n in names}
    try:
        yield
    finally:
        for n, (handlers, level, propagate) in saved.items():
            lg = logging.getLogger(n)
            lg.handlers, lg.level, lg.propagate = handlers, level, propagate


def run_inprocess(module, argv) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``nnsim <module> argv`` run in this process."""
    import nnsim
    from nnsim.drivers import boards
    from nnsim.runtime.devices import get_device_manager
    out, err = io.StringIO(), io.StringIO()
    current, drivers = boards._current[0], get_device_manager().drivers()
    nnsim.reset_props()                       # like a fresh process
    with _restored_logging(), contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            args = parser_for(module).parse_args([str(a) for a in argv])
            rc = module.run(args, out)
        except UsageError as e:
            print(f"nnsim: error: {e}", file=err)
            rc = 2
        except RunError as e:
            print(f"nnsim: error: {e}", file=err)
            rc = 1
        finally:
            boards._current[0] = current
            nnsim.reset_props()
            get_device_manager().set_drivers(drivers)
    return rc, out.getvalue(), err.getvalue()


def run_cli(*argv, env=None, timeout=600) -> subprocess.CompletedProcess:
    import os
    e = {k: v for k, v in os.environ.items() if not k.startswith("NNSIM_PROP_")}
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "nnsim", *map(str, argv)], cwd=ROOT, env=e,
                          capture_output=True, text=True, timeout=timeout)


_REGISTERED: dict = {}


def registered(command: str) -> bool:
    if command not in _REGISTERED:
        _REGISTERED[command] = run_cli(command, "--help", timeout=120).returncode == 0
    return _REGISTERED[command]


not_registered = pytest.mark.xfail(condition=not registered("graph"),
                                   reason="command not registered yet", strict=False)


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared model not found at {path}")
    return path


# -- the dot file ----------------------------------------------------------------------------------
NODE_RE = re.compile(r'^\s*n(\d+) \[shape=box style="([^"]+)" fillcolor="([^"]+)" '
                     r'label="(\d+): ([^"\\]+)\\n([^"]+)"')
LEGEND_RE = re.compile(r'^\s*legend_\d+ \[.*fillcolor="([^"]+)" label="([^"]+): (\d+) node\(s\)"')


def parse_dot(text: str) -> dict:
    nodes, legend, clusters, current = {}, {}, {}, None
    edges = []
    for line in text.splitlines():
        m = re.match(r"^\s*subgraph (cluster_\w+) \{", line)
        if m:
            current = m.group(1)
            clusters[current] = []
            continue
        if line.strip() == "}" and current is not None:
            current = None
            continue
        m = NODE_RE.match(line)
        if m:
            n = int(m.group(1))
            assert n not in nodes, f"node n{n} defined twice"
            nodes[n] = {"style": m.group(2), "fill": m.group(3), "op": m.group(5),
                        "where": m.group(6), "cluster": current}
            assert int(m.group(4)) == n
            if current:
                clusters[current].append(n)
            continue
        m = LEGEND_RE.match(line)
        if m:
            legend[m.group(2)] = (m.group(1), int(m.group(3)))
            continue
        m = re.match(r"^\s*([nt]\d+) -> ([nt]\d+)$", line)
        if m:
            edges.append((m.group(1), m.group(2)))
    defined = set(re.findall(r"^\s*([nt]\d+) \[", text, re.M))
    return {"nodes": nodes, "legend": legend, "clusters": clusters, "edges": edges,
            "defined": defined}


@pytest.fixture(scope="module")
def blocklist(tmp_path_factory) -> Path:
    """vsi-npu refuses ADD (operation code 0): those go to nnapi-reference in the partition."""
    path = tmp_path_factory.mktemp("blk") / "blk.txt"
    path.write_text("0,\n")
    return path


def deeplab_args(out: Path, blocklist: Path) -> list:
    return [need(DEEPLAB), "-o", out, "--android_sdk", "29",
            "--setprop", f"vendor.NN_DBG_OP_BLK_LIST={blocklist}"]


@pytest.fixture(scope="module")
def deeplab_dot(tmp_path_factory, blocklist) -> str:
    out = tmp_path_factory.mktemp("graph") / "deeplab.dot"
    rc, stdout, stderr = run_inprocess(graph_cmd, deeplab_args(out, blocklist))
    assert rc == 0, stderr
    assert f"wrote {out}" in stdout
    return out.read_text()


def test_dot_has_every_node_once(deeplab_dot):
    g = parse_dot(deeplab_dot)
    assert sorted(g["nodes"]) == list(range(72))
    assert g["nodes"][71]["op"] == "ARG_MAX"
    for a, b in g["edges"]:   # every edge joins defined nodes
        assert a in g["defined"] and b in g["defined"]
    assert deeplab_dot.startswith("// nnsim graph: deeplabv3_mnv2_pascal_quant.tflite on imx8mp")
    assert deeplab_dot.rstrip().endswith("}")


def test_dot_colours_one_per_device(deeplab_dot):
    g = parse_dot(deeplab_dot)
    legend = g["legend"]
    assert set(legend) == {"vsi-npu", "nnapi-reference", "TFLite CPU"}
    assert legend["TFLite CPU"][0] == "#d0d0d0"
    assert len({c for c, _ in legend.values()}) == 3          # distinct colours
    for n, node in g["nodes"].items():
        assert node["fill"] == legend[node["where"]][0], f"n{n}"
    for where, (_, count) in legend.items():                  # legend counts add up
        assert count == sum(1 for node in g["nodes"].values() if node["where"] == where)
    # the blocked ADDs run on nnapi-reference inside the delegate; the rest of the NNAPI
    # nodes on vsi-npu; resize (SDK 29), the big average pool and ARG_MAX on the CPU.
    adds = {n for n, node in g["nodes"].items() if node["op"] == "ADD"}
    assert {n for n, node in g["nodes"].items() if node["where"] == "nnapi-reference"} == adds
    assert {n for n, node in g["nodes"].items() if node["where"] == "TFLite CPU"} == \
        {61, 64, 69, 70, 71}


def test_dot_one_cluster_per_partition(deeplab_dot):
    g = parse_dot(deeplab_dot)
    parts = {k: v for k, v in g["clusters"].items() if k.startswith("cluster_partition_")}
    assert sorted(parts) == ["cluster_partition_0", "cluster_partition_1",
                             "cluster_partition_2"]
    assert "cluster_legend" in g["clusters"]
    in_clusters = [n for nodes in parts.values() for n in nodes]
    assert len(in_clusters) == len(set(in_clusters)) == 67
    for n, node in g["nodes"].items():
        assert (node["cluster"] is None) == (node["where"] == "TFLite CPU"), f"n{n}"
    assert 62 in parts["cluster_partition_0"] and 60 in parts["cluster_partition_0"]
    assert parts["cluster_partition_1"] == [63]
    assert 'label="NNAPI partition 0 (delegate node 72): 62 nodes on vsi-npu, ' \
           'nnapi-reference"' in deeplab_dot


def test_dot_is_valid_graphviz(deeplab_dot, tmp_path):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz 'dot' not installed")
    src = tmp_path / "g.dot"
    src.write_text(deeplab_dot)
    proc = subprocess.run(["dot", "-Tsvg", str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "<svg" in proc.stdout and "cluster_partition_2" in proc.stdout


# -- html, svg, png --------------------------------------------------------------------------------
def test_html_is_self_contained(tmp_path, blocklist):
    out = tmp_path / "deeplab.html"
    rc, stdout, stderr = run_inprocess(graph_cmd, deeplab_args(out, blocklist))
    assert rc == 0, stderr
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    low = page.lower()
    for bad in ("http://", "https://", "<script", "src=", "<link", "url(http", "@import"):
        assert bad not in low, bad
    assert low.count("<svg") == 1
    for n, op in ((0, "CONV_2D"), (9, "ADD"), (61, "AVERAGE_POOL_2D"), (71, "ARG_MAX")):
        assert f">{n}: {op}</text>" in page
    assert "NNAPI partition 2 (vsi-npu)" in page
    for name in ("vsi-npu", "nnapi-reference", "TFLite CPU"):
        assert f"{name}: " in page


def test_svg_without_graphviz_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(graph_cmd.shutil, "which", lambda name: None)
    for ext in ("svg", "png"):
        rc, out, err = run_inprocess(graph_cmd, [need(SMALL), "-o", tmp_path / f"g.{ext}"])
        assert rc == 1
        assert len(err.strip().splitlines()) == 1
        assert "apt-get install graphviz" in err and "-o FILE.dot" in err
        assert not (tmp_path / f"g.{ext}").exists()


def test_svg_and_png_with_graphviz(tmp_path):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz 'dot' not installed")
    rc, _, err = run_inprocess(graph_cmd, [need(SMALL), "-o", tmp_path / "g.svg"])
    assert rc == 0, err
    assert "<svg" in (tmp_path / "g.svg").read_text()
    rc, _, err = run_inprocess(graph_cmd, [need(SMALL), "-o", tmp_path / "g.png",
                                           "--board", "vs680"])
    assert rc == 0, err
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_all_on_cpu_has_no_partition_cluster(tmp_path):
    out = tmp_path / "cpu.dot"
    rc, _, err = run_inprocess(graph_cmd, [need(SMALL), "-o", out, "--android_sdk", "26"])
    assert rc == 0, err
    g = parse_dot(out.read_text())
    assert not any(k.startswith("cluster_partition") for k in g["clusters"])
    assert set(g["legend"]) == {"TFLite CPU"} and len(g["nodes"]) == 31


def test_device_flag_and_board(tmp_path):
    # Only nnapi-reference left: the delegate (SDK >= 29) does not use NNAPI at all.
    out = tmp_path / "ref.dot"
    rc, _, err = run_inprocess(graph_cmd, [need(SMALL), "-o", out,
                                           "--device", "nnapi-reference"])
    assert rc == 0, err
    assert set(parse_dot(out.read_text())["legend"]) == {"TFLite CPU"}
    out = tmp_path / "vs680.dot"
    rc, stdout, err = run_inprocess(graph_cmd, [need(SMALL), "-o", out, "--board", "vs680"])
    assert rc == 0, err
    g = parse_dot(out.read_text())
    assert set(g["legend"]) == {"synap-npu"} and len(g["nodes"]) == 31
    assert sum(k.startswith("cluster_partition_") for k in g["clusters"]) == 1
    assert "synap-npu 31" in stdout


# -- errors and help -------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, needle", [
    (["-o", "x.pdf"], "unknown output format '.pdf'"),
    (["-o", "x"], "unknown output format"),
    (["-o", "x.dot", "--android_sdk", "abc"], "--android_sdk"),
    (["-o", "x.dot", "--android_sdk", "0"], "--android_sdk"),
    (["-o", "x.dot", "--board", "nosuchboard"], "unknown board 'nosuchboard'"),
    (["-o", "x.dot", "--device", "nosuch"], "no device 'nosuch'"),
    (["-o", "x.dot", "--setprop", "novalue"], "KEY=VALUE"),
    (["-o", "x.dot", "--bogus"], "unrecognized arguments"),
    ([], "-o/--output"),
])
def test_bad_flags_exit_2(argv, needle, tmp_path):
    rc, out, err = run_inprocess(graph_cmd, [need(SMALL), *argv])
    assert rc == 2, err
    assert err.startswith("nnsim: error: ") and len(err.strip().splitlines()) == 1
    assert needle in err


def test_corrupt_and_missing_model_exit_1(tmp_path):
    junk = tmp_path / "junk.tflite"
    junk.write_bytes(b"\x00\x01garbage" * 50)
    rc, _, err = run_inprocess(graph_cmd, [junk, "-o", tmp_path / "g.dot"])
    assert rc == 1 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"nnsim: error: {junk}")
    rc, _, err = run_inprocess(graph_cmd, [tmp_path / "none.tflite", "-o", tmp_path / "g.dot"])
    assert rc == 1 and "no such file" in err
    assert not (tmp_path / "g.dot").exists()


def test_help_has_examples():
    text = parser_for(graph_cmd).format_help()
    assert "examples:" in text and "nnsim graph model.tflite -o model.html" in text
    for flag in ("--output", "--board", "--device", "--disallow-nnapi-cpu", "--setprop",
                 "--android_sdk"):
        assert flag in text
    assert graph_cmd.NAME == "graph" and graph_cmd.HELP


# -- as a user runs it -----------------------------------------------------------------------------
@not_registered
def test_cli_dot_and_html(tmp_path, blocklist):
    dot = tmp_path / "d.dot"
    proc = run_cli("graph", *deeplab_args(dot, blocklist))
    assert proc.returncode == 0, proc.stderr
    g = parse_dot(dot.read_text())
    assert sorted(g["nodes"]) == list(range(72))
    assert sum(k.startswith("cluster_partition_") for k in g["clusters"]) == 3
    html_out = tmp_path / "d.html"
    proc = run_cli("graph", need(SMALL), "-o", html_out)
    assert proc.returncode == 0, proc.stderr
    assert "http" not in html_out.read_text()


@not_registered
def test_cli_errors(tmp_path):
    proc = run_cli("graph", "--help")
    assert proc.returncode == 0 and "examples:" in proc.stdout
    proc = run_cli("graph", need(SMALL), "-o", tmp_path / "x.jpg")
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("nnsim: error:")
    assert len(proc.stderr.strip().splitlines()) == 1
    junk = tmp_path / "junk.tflite"
    junk.write_bytes(b"TFL3" + b"\xff" * 64)
    proc = run_cli("graph", junk, "-o", tmp_path / "x.dot")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1].startswith("nnsim: error:")
    assert "Traceback" not in proc.stderr
    proc = run_cli("graph", need(SMALL), "-o", tmp_path / "x.svg", env={"PATH": ""})
    assert proc.returncode == 1 and "apt-get install graphviz" in proc.stderr


# -- issue 12 item 7 (review D9): why, attributes, real shapes, split nodes, partition table -------
SSD = SHARED / "models" / "coco_ssd_mobilenet_v1_1.0_quant_2018_06_29_no_metadata.tflite"
TF2 = SHARED / "models" / "tf2_mobilenet_v2_1.0_224_ptq.tflite"


def _tooltip(dot: str, node: int) -> str:
    m = re.search(rf'^\s*n{node} \[.* tooltip="((?:[^"\\]|\\.)*)"\]$', dot, re.M)
    assert m, f"n{node} has no tooltip"
    return m.group(1).replace("\\n", "\n")


def _row(page: str, node: int) -> str:
    start = page.index(f'<tr id="node-{node}">')
    return page[start:page.index("</tr>", start)]


def test_dot_tooltips_say_why_and_show_attributes(deeplab_dot):
    pool = _tooltip(deeplab_dot, 61)
    assert "attributes: window=33x33, strides=1x1, padding=VALID, activation=NONE" in pool
    assert "why: refused by the TFLite NNAPI delegate: kUnsupportedOperandSize" in pool
    assert "fix: name the accelerator" in pool
    resize = _tooltip(deeplab_dot, 64)
    assert "align_corners=True" in resize and "kUnsupportedOperandValue" in resize
    add = _tooltip(deeplab_dot, 9)                            # blocked on vsi-npu by the list
    assert "why: vsi-npu: not supported: reject op because it blocked by debug blacklist" in add
    assert "NN_DBG_OP_BLK_LIST" in add
    conv = _tooltip(deeplab_dot, 0)
    assert re.search(r"in t\d+ '[^']*' uint8 1x513x513x3 scale=0\.0078125 zp=128", conv), conv
    assert "strides=2x2" in conv and "activation=RELU6" in conv


def test_html_nodes_table_has_reasons_and_attributes(tmp_path, blocklist):
    out = tmp_path / "deeplab.html"
    rc, _, err = run_inprocess(graph_cmd, deeplab_args(out, blocklist))
    assert rc == 0, err
    page = out.read_text()
    row = _row(page, 71)
    assert "output_type=INT64" in row and "kUnsupportedOutputType" in row
    assert "output_type=tf.int32" in row
    row = _row(page, 61)
    assert "window=33x33" in row and "Large filter window" in row
    title = page[page.index("<title>node 61: AVERAGE_POOL_2D"):]
    title = title[:title.index("</title>")]
    assert "window=33x33" in title and "kUnsupportedOperandSize" in title
    assert '<a href="#node-71">71 ARG_MAX</a>' in page        # jump to the fallback nodes


def test_partition_table_lists_only_non_constant_inputs(tmp_path, blocklist):
    from nnsim.tflite.reader import read_model
    out = tmp_path / "deeplab.html"
    rc, _, err = run_inprocess(graph_cmd, deeplab_args(out, blocklist))
    assert rc == 0, err
    page = out.read_text()
    table = page[page.index("<h2>Delegate partitions"):page.index("<h2>Nodes")]
    rows = re.findall(r"<tr><td>(\d+)</td>(.*?)</tr>", table)
    assert [int(k) for k, _ in rows] == [0, 1, 2]
    sg = read_model(need(DEEPLAB).read_bytes()).main
    cells = re.findall(r"<td>(.*?)</td>", rows[0][1])
    inputs = cells[4]          # after delegate node, nodes, node ids, devices
    ids = [int(i) for i in re.findall(r"\bt(\d+)\b", inputs)]
    assert ids and all(sg.tensors[i].data is None for i in ids)
    m = re.search(r"\+ (\d+) constants", inputs)
    assert m and int(m.group(1)) > 50                          # weights, counted not listed
    assert cells[2] == "0-60, 62"                              # node ids as ranges


def test_ssd_postprocess_outputs_have_real_shapes(tmp_path):
    out = tmp_path / "ssd.dot"
    rc, _, err = run_inprocess(graph_cmd, [need(SSD), "-o", out])
    assert rc == 0, err
    dot = out.read_text()
    assert "scalar" not in dot
    tip = _tooltip(dot, 63)
    for k, shape in ((167, "1x10x4"), (168, "1x10"), (169, "1x10"), (170, "1")):
        assert re.search(rf"out t{k} '[^']*' float32 {shape}$", tip, re.M), (k, tip)
    assert "max_detections=10" in tip and "num_classes=90" in tip
    assert "kUnsupportedOperator" in tip
    out = tmp_path / "ssd.html"
    rc, _, err = run_inprocess(graph_cmd, [need(SSD), "-o", out])
    assert rc == 0, err
    page = out.read_text()
    assert "output[0] float32 1x10x4" in page and "output[3] float32 1<" in page
    assert "scalar" not in page


def test_split_node_counted_once_in_the_legend(tmp_path):
    out = tmp_path / "tf2.dot"
    rc, stdout, err = run_inprocess(graph_cmd, [need(TF2), "-o", out])
    assert rc == 0, err
    g = parse_dot(out.read_text())
    legend = g["legend"]
    assert legend["nnapi-reference+vsi-npu"][1] == 1
    assert sum(count for _, count in legend.values()) == len(g["nodes"]) == 68
    for n, node in g["nodes"].items():                        # each node under its own entry
        assert node["fill"] == legend[node["where"]][0], f"n{n}"
    for where, (_, count) in legend.items():
        assert count == sum(1 for node in g["nodes"].values() if node["where"] == where)
    assert "nnapi-reference+vsi-npu 1" in stdout
    page_out = tmp_path / "tf2.html"
    rc, _, err = run_inprocess(graph_cmd, [need(TF2), "-o", page_out])
    assert rc == 0, err
    assert "nnapi-reference+vsi-npu: 1 node(s)</li>" in page_out.read_text()
