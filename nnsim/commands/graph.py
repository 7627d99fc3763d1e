"""``nnsim graph``: draw a model's graph with every node coloured by where it ran.

The TFLite nodes and the tensors between them; node colour = the NNAPI device the runtime chose
(TFLite CPU grey), one cluster per NNAPI delegate partition, a legend. ``.dot`` is written
directly; ``.svg``/``.png`` run Graphviz ``dot``; ``.html`` is a self-contained page laid out by
nnsim (inline SVG, no network, no script).
"""
from __future__ import annotations

import dataclasses
import logging
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import nnsim
from nnsim.commands.client import add_client_arguments, client_delegate, devices_line, sdk_version
from nnsim.commands.common import (RunError, UsageError, apply_board, apply_setprops,
                                   install_log_handlers, load_model_bytes)
from nnsim.errors import BuiltinError, ModelFileError, UnsupportedOperatorError
from nnsim.explain import explain
from nnsim.explain_vx import explain_vx
from nnsim.graphviz import build_view, to_dot, to_html
from nnsim.limits import TensorTooLargeError
from nnsim.tflite import Interpreter
from nnsim.tflite.reader import read_model

NAME = "graph"
HELP = "draw the model graph coloured by where each node ran (.dot/.svg/.png/.html)"
DESCRIPTION = textwrap.fill(
    "Apply the NNAPI delegate for the board's devices to a .tflite model (no inference is "
    "run) and draw its graph: every TFLite node coloured by where it runs (one colour per "
    "NNAPI device, TFLite CPU grey), the tensors between nodes, one dashed cluster per "
    "delegate partition, and a legend. The output format follows the file extension: .dot "
    "(Graphviz source, always available), .svg and .png (rendered by the Graphviz 'dot' "
    "program, which must be installed), .html (a self-contained page with an inline SVG "
    "laid out by nnsim; no network, no scripts).")
EPILOG = """examples:
  nnsim graph model.tflite -o model.html          # open in any browser, no Graphviz needed
  nnsim graph model.tflite -o model.dot           # Graphviz source
  nnsim graph model.tflite -o model.svg --board vs680
  nnsim graph model.tflite -o g.dot --android_sdk 29 --disallow-nnapi-cpu
  nnsim graph model.tflite -o g.html --setprop vendor.NN_DBG_OP_BLK_LIST=/tmp/blk.txt"""

FORMATS = (".dot", ".gv", ".svg", ".png", ".html", ".htm")
GRAPHVIZ_HINT = ("install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew "
                 "install graphviz) or write -o FILE.dot or -o FILE.html instead")


def add_arguments(p) -> None:
    p.add_argument("model", help="the .tflite model")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="output file; the extension picks the format: .dot (or .gv), .svg, "
                        ".png (these two need Graphviz 'dot'), .html; '-' writes dot to stdout")
    p.add_argument("--board", default="imx8mp", help="board profile (default: imx8mp)")
    p.add_argument("--device", action="append", metavar="NAME",
                   help="keep only this NNAPI device of the board (repeatable)")
    p.add_argument("--setprop", action="append", metavar="KEY=VALUE",
                   help="set an emulated Android property (repeatable; see 'nnsim props')")
    p.add_argument("--android_sdk", "--android-sdk", dest="android_sdk", type=sdk_version,
                   metavar="N", help="emulated Android SDK level the delegate sees (default: "
                                     "the board's ro.build.version.sdk)")
    add_client_arguments(p)


def quiet_logs(vlog: bool = False) -> None:
    """TFLite lines on stderr; logcat lines on stderr, warnings and errors only unless vlog."""
    install_log_handlers(sys.stderr)
    if not vlog:
        logging.getLogger("nnsim.logcat").setLevel(logging.WARNING)


def setup_board(args):
    """Board, --device, --setprop, --android_sdk; returns the Board."""
    board = apply_board(args.board, getattr(args, "device", None))
    apply_setprops(getattr(args, "setprop", None))
    if getattr(args, "android_sdk", None) is not None:
        nnsim.setprop("ro.build.version.sdk", str(args.android_sdk))
    return board


def check_model(data: bytes, display: str) -> None:
    """Parse the model once up front: a corrupt file is one RunError line, before any log."""
    try:
        read_model(data)
    except ModelFileError as e:
        raise RunError(f"{display}: {e.what}" + (f" at {e.where}" if e.where else "")) from None


def delegated_interpreter(data: bytes, display: str, delegates, *, num_threads=None,
                          tolerate_cpu=False, prepare_kernels=True):
    """An allocated Interpreter with ``delegates``; model errors become RunError.
    ``tolerate_cpu``: a node without a CPU kernel is not an error (nothing is run)."""
    interp = None
    try:
        # applied as benchmark_model / an app applies them: a failed delegate restores the
        # plan (delegation_error) instead of raising as the LiteRT constructor would
        interp = Interpreter(model_content=data, num_threads=num_threads)
        interp.prepare_kernels = prepare_kernels
        for delegate in delegates or ():
            interp.modify_graph_with_delegate(delegate)
        interp.allocate_tensors()
    except ModelFileError as e:
        raise RunError(f"{display}: {e.what}" + (f" at {e.where}" if e.where else "")) from None
    except UnsupportedOperatorError as e:
        if not (tolerate_cpu and interp is not None):
            raise RunError(f"{display}: {e}") from None
    except (BuiltinError, TensorTooLargeError) as e:   # shapes the graph cannot satisfy
        raise RunError(f"{display}: {e}") from None
    return interp


def run(args, out) -> int:
    path = Path(args.output)
    ext = path.suffix.lower()
    if args.output != "-" and ext not in FORMATS:
        raise UsageError(f"-o {args.output}: unknown output format {ext or '(no extension)'!r}; "
                         f"use .dot, .svg, .png or .html")
    if ext in (".svg", ".png") and shutil.which("dot") is None:
        raise RunError(f"writing {ext} needs the Graphviz 'dot' program, which is not "
                       f"installed: {GRAPHVIZ_HINT}")
    board = setup_board(args)
    quiet_logs()
    display, data = load_model_bytes(args.model)
    check_model(data, args.model)
    extra = {} if args.android_sdk is None else {"android_sdk_version": args.android_sdk}
    delegate = client_delegate(args, **extra)
    # nothing is run: no CPU kernel plan is built (packed filters, buffers)
    interp = delegated_interpreter(data, args.model, [delegate], tolerate_cpu=True,
                                   prepare_kernels=False)
    if interp.delegation_error:
        print(f"nnsim: warning: the delegate failed ({interp.delegation_error}); every "
              f"node is drawn on the TFLite CPU", file=sys.stderr)
    result = interp.delegation
    devices = [name for name, reason in delegate.candidate_devices() if reason is None]
    title = f"{display} on {board.name} ({devices_line(delegate, args)})"
    if hasattr(delegate, "describe"):   # the VX delegate
        title = f"{display}: {delegate.describe()}"
    shapes = prepared_shapes(interp)
    view = build_view(interp.model, result, title, devices, shapes,
                      explain_placement(interp, delegate, shapes))
    _write(args.output, ext, view, to_dot, to_html, out)
    if args.output != "-":
        counts = ", ".join(f"{k} {v}" for k, v in view.counts.items())
        print(f"wrote {args.output}: {display}, {len(view.nodes)} nodes; "
              f"{view.summary}; {counts}", file=out)
    return 0


def prepared_shapes(interp) -> dict:
    """tensor index -> shape after Prepare (a custom op's outputs are empty in the file)."""
    return {int(d["index"]): tuple(int(x) for x in d["shape"])
            for d in interp.get_tensor_details()}


def explain_placement(interp, delegate, shapes):
    """``nnsim explain``'s reasons and fixes for the placement the interpreter made (the
    delegate is not applied again), on the model with the shapes the delegate saw."""
    model = interp.model
    sg = model.main
    if any(shapes.get(t.index, tuple(t.shape)) != tuple(t.shape) for t in sg.tensors):
        tensors = tuple(dataclasses.replace(t, shape=shapes.get(t.index, tuple(t.shape)))
                        for t in sg.tensors)
        model = dataclasses.replace(model, subgraphs=(dataclasses.replace(sg, tensors=tensors),)
                                    + tuple(model.subgraphs[1:]))
    if hasattr(delegate, "describe"):   # the VX delegate
        return explain_vx(model, delegate, prepared=True,
                          delegate_error=interp.delegation_error or "")
    return explain(model, delegate, prepared=True,
                   delegate_error=interp.delegation_error or "")


def _write(output: str, ext: str, view, to_dot, to_html, out) -> None:
    if output == "-":
        out.write(to_dot(view))
        return
    try:
        if ext in (".html", ".htm"):
            Path(output).write_text(to_html(view), encoding="utf-8")
        elif ext in (".dot", ".gv"):
            Path(output).write_text(to_dot(view), encoding="utf-8")
        else:
            _render(to_dot(view), output, ext[1:])
    except OSError as e:
        raise RunError(f"cannot write {output}: {e.strerror or e}") from None


def _render(dot_text: str, output: str, fmt: str) -> None:
    exe = shutil.which("dot")
    if exe is None:
        raise RunError(f"writing .{fmt} needs the Graphviz 'dot' program: {GRAPHVIZ_HINT}")
    try:
        proc = subprocess.run([exe, f"-T{fmt}", "-o", output], input=dot_text.encode(),
                              capture_output=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RunError(f"Graphviz 'dot' failed: {e}") from None
    if proc.returncode != 0:
        first = (proc.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[0]
        raise RunError(f"Graphviz 'dot' failed (exit {proc.returncode}): {first}")
