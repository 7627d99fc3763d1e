"""``nnsim ops``: the op matrix -- what nnsim and each simulated driver support, per operation.

Two tables (``nnsim.opmatrix``): TFLite builtins (the delegate's Validate rule, the NNAPI
operations the converter maps it to, nnsim's TFLite CPU kernel) and NNAPI operations (spec,
kernel modules with numpy references, vsi-npu / synap-npu support rule, timing class), then the
deliberate gaps with their reasons and any hole nothing explains.
"""
from __future__ import annotations

import json
import textwrap
from dataclasses import asdict

from nnsim import opmatrix

NAME = "ops"
HELP = "the op matrix: which layers implement each TFLite builtin and NNAPI operation"
DESCRIPTION = textwrap.fill(
    "Print, for every TFLite builtin and every NNAPI operation, which parts of nnsim implement "
    "it: the TFLite NNAPI delegate's validation rule and the NNAPI operations its converter "
    "maps the builtin to; nnsim's TFLite CPU kernel ('dedicated' class, or 'nnapi' = computed "
    "by its NNAPI lowering); the NNAPI operation spec; the support rule of the simulated "
    "vsi-npu and synap-npu drivers (VALIDATOR / INLINE / DEFAULT = accepted subject to the "
    "rule's conditions, REJECT or '-' = refused); and the timing model's class. Deliberate gaps "
    "are listed with their reason.")
EPILOG = """examples:
  nnsim ops                       # both tables, the gaps
  nnsim ops --table tflite        # TFLite builtins only
  nnsim ops --only-supported      # hide rows nothing implements
  nnsim ops --format json"""


def add_arguments(p) -> None:
    p.add_argument("--table", choices=("all", "tflite", "nnapi"), default="all",
                   help="which table to print (default: all)")
    p.add_argument("--only-supported", action="store_true",
                   help="hide rows that no layer of nnsim implements")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text tables (default) or JSON")


def _yes(flag) -> str:
    return "yes" if flag else "-"


def run(args, out) -> int:
    tfl = opmatrix.tflite_rows()
    nn = opmatrix.nnapi_rows()
    if args.only_supported:
        tfl = [r for r in tfl if r.delegate or r.converter or r.cpu]
        nn = [r for r in nn if r.spec or r.vsi_npu or r.synap_npu]
    gaps = [{"layer": layer, "operation": op, "reason": why}
            for (layer, op), why in sorted(opmatrix.GAPS.items())]
    holes = [{"layer": layer, "operation": op, "what": what}
             for layer, op, what in opmatrix.holes()]
    if args.format == "json":
        doc = {"gaps": gaps, "unexplained_holes": holes}
        if args.table in ("all", "tflite"):
            doc["tflite"] = [asdict(r) for r in tfl]
        if args.table in ("all", "nnapi"):
            doc["nnapi"] = [dict(asdict(r), kernels=[{"module": m, "numpy_reference": ref}
                                                      for m, ref in r.kernels]) for r in nn]
        print(json.dumps(doc, indent=2), file=out)
        return 0
    p = lambda line="": print(line, file=out)  # noqa: E731
    if args.table in ("all", "tflite"):
        p(f"TFLite builtins ({len(tfl)}):")
        p(f"  {'builtin':<34}{'delegate':<10}{'CPU kernel':<12}NNAPI operations (converter)")
        for r in tfl:
            p(f"  {r.builtin:<34}{_yes(r.delegate):<10}{r.cpu or '-':<12}"
              f"{', '.join(r.converter) or '-'}")
        p()
    if args.table in ("all", "nnapi"):
        p(f"NNAPI operations ({len(nn)}):")
        p(f"  {'operation':<34}{'code':>5}  {'spec':<6}{'vsi-npu':<11}{'synap-npu':<11}"
          f"{'timing':<12}kernels (* = numpy reference)")
        for r in nn:
            kernels = ", ".join(m + ("*" if ref else "") for m, ref in r.kernels)
            p(f"  {r.code:<34}{r.value:>5}  {_yes(r.spec):<6}{r.vsi_npu or '-':<11}"
              f"{r.synap_npu or '-':<11}{r.timing or '-':<12}{kernels or '-'}")
        p()
    p(f"deliberate gaps ({len(gaps)}):")
    for g in gaps:
        p(f"  {g['layer']:<10}{g['operation']:<34}{g['reason']}")
    p()
    if holes:
        p(f"unexplained holes ({len(holes)}):")
        for h in holes:
            p(f"  {h['layer']:<10}{h['operation']:<34}{h['what']}")
    else:
        p("no unexplained holes")
    return 0
