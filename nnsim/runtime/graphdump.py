"""GraphDump: the dot-format model dump of common/GraphDump.cpp (nnapi-runtime.md 4.2), byte-exact.

Each line goes to logcat tag ``GraphDump`` as its own INFO entry (or to a list if given).
"""
from __future__ import annotations

import struct

from nnsim.platform import vlog
from nnsim.types import GRAPHDUMP_SHORT_NAME, OperandLifeTime, OperandType, OperationCode

L = OperandLifeTime
_KIND = {L.CONSTANT_COPY: ": COPY", L.CONSTANT_REFERENCE: ": REF", L.NO_VALUE: ": NO",
         L.SUBGRAPH: ": SUBGRAPH", L.POINTER: ": POINTER"}


def _type_name(t: int) -> str:
    if t in GRAPHDUMP_SHORT_NAME:
        return GRAPHDUMP_SHORT_NAME[t]
    try:
        return OperandType(t).name
    except ValueError:
        return f"Extension OperandType {t}"


def _scalar_value(operand) -> str:
    """`` = <value>`` for COPY/POINTER FLOAT32/INT32/UINT32 scalars of exactly scalar size."""
    if operand.lifetime not in (L.CONSTANT_COPY, L.POINTER) or operand.value is None:
        return ""
    fmt = {OperandType.FLOAT32: "<f", OperandType.INT32: "<i", OperandType.UINT32: "<I"}.get(
        operand.type)
    if fmt is None or len(operand.value) != 4:
        return ""
    (v,) = struct.unpack(fmt, bytes(operand.value))
    if operand.type == OperandType.FLOAT32:
        return " = " + _cpp_float(v)
    return f" = {v}"


def _cpp_float(v: float) -> str:
    """C++ ostream default formatting of a float (6 significant digits, like %g)."""
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return "%g" % v


def graph_dump_lines(name: str, model) -> list[str]:
    lines = [f"// {name}", "digraph {"]
    refs = model.referenced_subgraphs()  # only the main graph is drawn, as upstream
    if refs:
        lines.append(f"// NOTE: {len(refs)} subgraphs omitted")
        lines.append("// TODO(b/147661714): Add subgraph support to GraphDump")
    in_pos = {idx: k for k, idx in enumerate(model.input_indexes)}
    out_pos = {idx: k for k, idx in enumerate(model.output_indexes)}
    for i, operand in enumerate(model.operands):
        io = i in in_pos or i in out_pos
        label = str(i)
        if i in in_pos:
            label += f" = input[{in_pos[i]}]"
        if i in out_pos:
            label += f" = output[{out_pos[i]}]"
        label += _KIND.get(operand.lifetime, "")
        label += "\\n" + _type_name(operand.type) + _scalar_value(operand)
        if operand.dimensions:
            label += "(" + "x".join(str(d) for d in operand.dimensions) + ")"
        style = "style=filled fillcolor=black fontcolor=white " if io else ""
        lines.append(f'    d{i} [{style}label="{label}"]')
    for i, op in enumerate(model.operations):
        n_in, n_out = len(op.inputs), len(op.outputs)
        ordering = ""
        if max(n_in, n_out) > 1:
            ordering = " ordering=in" if n_in >= n_out else " ordering=out"
        try:
            op_name = OperationCode(op.type).name
        except ValueError:
            op_name = str(op.type)
        lines.append(f'    n{i} [shape=box{ordering} label="{i}: {op_name}"]')
        for k, operand in enumerate(op.inputs):
            lines.append(f"    d{operand} -> n{i}" + (f" [label={k}]" if n_in > 1 else ""))
        for k, operand in enumerate(op.outputs):
            lines.append(f"    n{i} -> d{operand}" + (f" [label={k}]" if n_out > 1 else ""))
    lines.append("}")
    return lines


def graph_dump(name: str, model, out: list | None = None) -> list[str]:
    """Dump ``model``; to logcat (tag GraphDump) unless ``out`` collects the lines."""
    lines = graph_dump_lines(name, model)
    if out is not None:
        out.extend(lines)
    else:
        for line in lines:
            vlog.log_info("GraphDump", line)
    return lines
