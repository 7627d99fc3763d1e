"""Model graphs for ``nnsim graph``: Graphviz dot text and a self-contained HTML page.

:func:`build_view` turns a TFLite model and the NNAPI delegate's result into a neutral
:class:`GraphView` (operator nodes with where they ran, the non-constant tensors between them,
the delegate partitions, one colour per device). :func:`to_dot` writes it as dot (one cluster per
delegate partition, a legend cluster); :func:`to_html` lays it out itself in simple layered form
as an inline SVG, with no network access and no script.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

from nnsim.explain import choice_text, perf_text
from nnsim.tflite.placement import TFLITE_CPU, node_attributes, placements, quant_text

CPU_COLOUR = "#d0d0d0"
# Light fills that keep black text readable; assigned to devices in discovery order.
PALETTE = ("#8ecae6", "#ffb703", "#90d26d", "#f4a3a8", "#c9a0dc", "#f6e27f", "#7fd1c7",
           "#f7b267", "#b5c7f2", "#e0c097")
PARTITION_COLOUR = "#1d4e89"
PARTITION_TINTS = ("#1d4e89", "#2a9d8f", "#9b5de5", "#e76f51")   # shaded regions in the HTML
IO_COLOUR = "#000000"


@dataclass
class GNode:
    index: int
    op_name: str
    where: str                   # "TFLite CPU", a device name, or "a+b" when split
    devices: list                # NNAPI devices of the node's NNAPI operations
    partition: int | None
    inputs: list                 # non-constant input tensor indices
    outputs: list
    constants: list              # constant input tensor indices
    attrs: list = field(default_factory=list)     # "window=33x33", "align_corners=True", ...
    reasons: list = field(default_factory=list)   # why it ran there (explain's reasons)
    fixes: list = field(default_factory=list)     # explain's fixes


@dataclass
class GTensor:
    index: int
    name: str
    type_name: str
    shape: tuple
    role: str | None = None      # "input" / "output" of the model
    position: int = 0            # k of input[k] / output[k]
    producer: int | None = None
    consumers: list = field(default_factory=list)
    quant: str = ""              # "scale=… zp=…" of a quantized tensor

    @property
    def detail(self) -> str:
        """dtype, shape and quantization, as tooltips show them."""
        return f"{self.type_name} {self.shape_text}" + (f" {self.quant}" if self.quant else "")

    @property
    def shape_text(self) -> str:
        return "x".join(str(d) for d in self.shape) if self.shape else "scalar"


@dataclass
class GPartition:
    index: int
    delegate_node: int
    nodes: list
    devices: list
    input_tensors: list          # non-constant inputs of the partition
    output_tensors: list
    constants: int = 0           # constant inputs (weights, biases) of the partition


@dataclass
class GraphView:
    title: str
    summary: str
    nodes: list
    tensors: dict                # index -> GTensor (non-constant tensors only)
    constants: dict              # index -> GTensor (constant tensors, for tooltips)
    partitions: list
    colours: dict                # device name or TFLite CPU -> fill colour
    counts: dict                 # where a node ran (a device, "a+b" when split, or TFLite
                                 # CPU) -> TFLite nodes: each node counted once
    delegate: str = "NNAPI"      # whose partitions these are ("VX" for the VX delegate)

    def node_colours(self, node: GNode) -> list:
        if node.partition is None:
            return [self.colours[TFLITE_CPU]]
        names = sorted(set(node.devices), key=self.order) or ["NNAPI"]
        return [self.colours[n] for n in names]

    def where_colours(self, where: str) -> list:
        """The fill colours of a legend entry ("a+b" for nodes split across devices)."""
        if where in self.colours:
            return [self.colours[where]]
        names = sorted(where.split("+"), key=self.order)
        return [self.colours[n] for n in names if n in self.colours]

    def order(self, name: str) -> int:
        keys = list(self.colours)
        return keys.index(name) if name in keys else len(keys)


def _tensor(t, role=None, position=0, shapes=None) -> GTensor:
    type_name = getattr(t.type, "name", str(t.type)).lower()
    shape = tuple(shapes[t.index]) if shapes and shapes.get(t.index) is not None else \
        tuple(t.shape)
    return GTensor(t.index, t.name or f"tensor {t.index}", type_name, shape, role, position,
                   quant=quant_text(t))


def node_reasons(e, refuser: str = "TFLite NNAPI delegate") -> tuple[list, list]:
    """(reasons, fixes) of a node from its ``nnsim.explain.NodeExplanation``."""
    reasons = [f"refused by the {refuser}: {r}" for r in e.delegate_refusals]
    if e.not_delegated:
        reasons.append(f"not delegated: {e.not_delegated}")
    ran = e.ran_on.split("+")
    for v in e.devices:
        if not v.supported:
            reasons.append(f"{v.device}: not supported: {v.reason}")
    choice = choice_text(e)
    if choice:
        reasons.append(choice)
    else:
        reasons.extend(f"{v.device}: supported (exec time {perf_text(v.perf)}), not chosen"
                       for v in e.devices if v.supported and v.device not in ran)
    return reasons, list(e.fixes)


def build_view(model, result, title: str, device_names=(), shapes=None,
               explanation=None) -> GraphView:
    """The graph of subgraph 0; ``result`` is the DelegationResult (None = all on the CPU);
    ``device_names`` (the board's devices in discovery order) fixes the colour order;
    ``shapes`` (tensor index -> shape after Prepare) overrides the file's shapes, which are
    empty for outputs a custom op sizes at Prepare; ``explanation`` (an
    ``nnsim.explain.Explanation``) gives each node its reasons and fixes."""
    sg = model.subgraphs[0]
    places = placements(model, result)
    explained = {e.node: e for e in explanation.nodes} if explanation is not None else {}
    refuser = getattr(explanation, "delegate", "TFLite NNAPI delegate")
    label = "VX" if getattr(result, "delegate_name", "") == "Vx Delegate" else "NNAPI"
    tensors, constants = {}, {}
    for k, i in enumerate(sg.inputs):
        tensors[i] = _tensor(sg.tensors[i], "input", k, shapes)
    for k, i in enumerate(sg.outputs):
        if i in tensors:
            continue
        tensors[i] = _tensor(sg.tensors[i], "output", k, shapes)
    nodes = []
    for p, op in zip(places, sg.operators):
        ins, consts = [], []
        for i in op.inputs:
            if i < 0:
                continue
            t = sg.tensors[i]
            if t.data is not None:
                consts.append(i)
                constants.setdefault(i, _tensor(t, shapes=shapes))
                continue
            ins.append(i)
            tensors.setdefault(i, _tensor(t, shapes=shapes)).consumers.append(p.node)
        outs = [o for o in op.outputs if o >= 0]
        for o in outs:
            tensors.setdefault(o, _tensor(sg.tensors[o], shapes=shapes)).producer = p.node
        reasons, fixes = node_reasons(explained[p.node], refuser) if p.node in explained \
            else ([], [])
        nodes.append(GNode(p.node, p.op_name, p.where, list(dict.fromkeys(p.devices)),
                           p.partition, ins, outs, consts, node_attributes(op), reasons, fixes))
    partitions = []
    for k, kernel in enumerate(result.kernels if result is not None else ()):
        devs = []
        for n in kernel.nodes:
            devs.extend(d for d in nodes[n].devices if d not in devs)
        inputs = [i for i in kernel.input_tensors if i >= 0 and sg.tensors[i].data is None]
        partitions.append(GPartition(k, kernel.node_index, list(kernel.nodes), devs, inputs,
                                     list(kernel.output_tensors),
                                     len(kernel.input_tensors) - len(inputs)))
    used = {d for n in nodes for d in n.devices} | {"NNAPI" for n in nodes
                                                   if n.partition is not None and not n.devices}
    colours = {}
    for name in list(device_names) + sorted(used - set(device_names)):
        if name in used and name not in colours:
            colours[name] = PALETTE[len(colours) % len(PALETTE)]
    counts = {name: 0 for name in colours}       # colour order first, then split entries
    for n in nodes:
        where = n.where if n.partition is None or n.devices else "NNAPI"
        counts[where] = counts.get(where, 0) + 1
    if TFLITE_CPU in counts:
        colours[TFLITE_CPU] = CPU_COLOUR
        counts[TFLITE_CPU] = counts.pop(TFLITE_CPU)   # the CPU entry last
    delegated = sum(1 for n in nodes if n.partition is not None)
    summary = (f"{delegated} of {len(nodes)} nodes delegated to {label} in "
               f"{len(partitions)} partition(s)")
    return GraphView(title, summary, nodes, tensors, constants, partitions, colours, counts,
                     label)


# -- dot ------------------------------------------------------------------------------------------
def _q(text: str) -> str:
    """A dot double-quoted string; ``\\n`` in ``text`` (a real newline) becomes a dot line break."""
    text = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\r", "").replace("\n", "\\n") + '"'


def _short(name: str, limit: int = 40) -> str:
    return name if len(name) <= limit else "..." + name[-(limit - 3):]


def node_tooltip(view: GraphView, n: GNode) -> str:
    lines = [f"node {n.index}: {n.op_name}", f"runs on: {n.where}"]
    if n.partition is not None:
        p = view.partitions[n.partition]
        lines.append(f"{view.delegate} partition {n.partition} (delegate node "
                     f"{p.delegate_node})")
    if n.attrs:
        lines.append("attributes: " + ", ".join(n.attrs))
    lines.extend(f"why: {r}" for r in n.reasons)
    lines.extend(f"fix: {f}" for f in n.fixes)
    for label, indices, table in (("in", n.inputs, view.tensors),
                                  ("const", n.constants, view.constants),
                                  ("out", n.outputs, view.tensors)):
        for i in indices:
            t = table[i]
            lines.append(f"{label} t{i} '{_short(t.name, 60)}' {t.detail}")
    return "\n".join(lines)


def _fill(colours: list) -> tuple[str, str]:
    """(dot fillcolor, style): one colour, or stripes for a node split across devices."""
    if len(colours) > 1:
        share = 1.0 / len(colours)
        return ":".join(f"{c};{share:.3f}" for c in colours), "striped"
    return colours[0], "filled,rounded"


def _node_attrs(view: GraphView, n: GNode) -> str:
    fill, style = _fill(view.node_colours(n))
    label = f"{n.index}: {n.op_name}\n{n.where}"
    return (f"shape=box style={_q(style)} fillcolor={_q(fill)} label={_q(label)} "
            f"tooltip={_q(node_tooltip(view, n))}")


def _tensor_attrs(t: GTensor, boundary: bool) -> str:
    label = f"{_short(t.name)}\n{t.type_name} {t.shape_text}"
    tip = f"t{t.index} {t.name}\n{t.detail}"
    if t.role:
        label = f"{t.role}[{t.position}] {label}"
        return (f"shape=ellipse style=filled fillcolor={_q(IO_COLOUR)} fontcolor=white "
                f"label={_q(label)} tooltip={_q(tip)}")
    extra = f" color={_q(PARTITION_COLOUR)} penwidth=2" if boundary else ""
    return f"shape=ellipse fontsize=8 label={_q(label)}{extra} tooltip={_q(tip)}"


def to_dot(view: GraphView) -> str:
    """Graphviz dot text: operators as boxes (fill = device), tensors as ellipses, one
    ``cluster_partition_<k>`` per delegate partition, and a ``cluster_legend``."""
    out = [f"// nnsim graph: {view.title}", f"// {view.summary}", "digraph nnsim {"]
    w = out.append
    w(f"    graph [rankdir=TB fontname=Helvetica labelloc=t "
      f"label={_q(view.title + chr(10) + view.summary)}]")
    w("    node [fontname=Helvetica fontsize=10]")
    w("    edge [color=\"#555555\" arrowsize=0.6]")
    inside: dict = {}
    boundary = set()
    for p in view.partitions:
        boundary.update(p.input_tensors)
        boundary.update(p.output_tensors)
    for t in view.tensors.values():
        if t.role or t.index in boundary or t.producer is None:
            continue
        part = view.nodes[t.producer].partition
        if part is not None and all(view.nodes[c].partition == part for c in t.consumers):
            inside.setdefault(part, []).append(t.index)
    for p in view.partitions:
        devs = ", ".join(p.devices) or "NNAPI"
        w(f"    subgraph cluster_partition_{p.index} {{")
        label = (f"{view.delegate} partition {p.index} (delegate node {p.delegate_node}): "
                 f"{len(p.nodes)} nodes on {devs}")
        w(f"        label={_q(label)}")
        w(f"        style=\"dashed,rounded\" color={_q(PARTITION_COLOUR)} penwidth=2 "
          f"fontcolor={_q(PARTITION_COLOUR)}")
        for n in p.nodes:
            w(f"        n{n} [{_node_attrs(view, view.nodes[n])}]")
        for i in inside.get(p.index, ()):
            w(f"        t{i} [{_tensor_attrs(view.tensors[i], False)}]")
        w("    }")
    for n in view.nodes:
        if n.partition is None:
            w(f"    n{n.index} [{_node_attrs(view, n)}]")
    placed = {i for lst in inside.values() for i in lst}
    for t in view.tensors.values():
        if t.index not in placed:
            w(f"    t{t.index} [{_tensor_attrs(t, t.index in boundary)}]")
    for n in view.nodes:
        for i in n.inputs:
            w(f"    t{i} -> n{n.index}")
        for o in n.outputs:
            w(f"    n{n.index} -> t{o}")
    w("    subgraph cluster_legend {")
    w("        label=\"Legend\" style=rounded color=\"#888888\"")
    for k, (name, count) in enumerate(view.counts.items()):
        fill, style = _fill(view.where_colours(name))
        w(f"        legend_{k} [shape=box style={_q(style)} fillcolor={_q(fill)} "
          f"label={_q(f'{name}: {count} node(s)')}]")
    if view.partitions:
        w(f"        legend_partition [shape=box style=\"dashed,rounded\" "
          f"color={_q(PARTITION_COLOUR)} penwidth=2 "
          f"label={_q(view.delegate + ' delegate partition')}]")
    w("        legend_io [shape=ellipse style=filled fillcolor=\"#000000\" fontcolor=white "
      "label=\"model input / output\"]")
    w("    }")
    w("}")
    return "\n".join(out) + "\n"


# -- html (layered layout, inline SVG) -------------------------------------------------------------
BOX_W, BOX_H, IO_H, GAP_X, GAP_Y, MARGIN = 190, 38, 30, 26, 44, 20
GUTTER = 70          # room on the left for edges that skip layers


@dataclass
class _Item:
    key: tuple                  # ("n", node) / ("i", tensor) / ("o", tensor)
    layer: int
    rank: tuple
    x: float = 0.0
    y: float = 0.0
    w: float = BOX_W
    h: float = BOX_H


def _layout(view: GraphView) -> dict:
    items: dict = {}
    for t in view.tensors.values():
        if t.role == "input":
            items[("i", t.index)] = _Item(("i", t.index), 0, (-1, t.position), h=IO_H)
    for n in view.nodes:   # TFLite node order is a topological order
        preds = [("n", view.tensors[i].producer) if view.tensors[i].producer is not None
                 else ("i", i) for i in n.inputs]
        layer = 1 + max((items[p].layer for p in preds if p in items), default=0)
        part = n.partition if n.partition is not None else len(view.partitions)
        items[("n", n.index)] = _Item(("n", n.index), layer, (part, n.index))
    for t in view.tensors.values():
        if t.role == "output" and t.producer is not None:
            layer = items[("n", t.producer)].layer + 1
            items[("o", t.index)] = _Item(("o", t.index), layer, (len(view.partitions) + 1,
                                                                  t.position), h=IO_H)
    layers: dict = {}
    for it in items.values():
        layers.setdefault(it.layer, []).append(it)
    widest = max((len(v) for v in layers.values()), default=1)
    width = widest * (BOX_W + GAP_X) - GAP_X + 2 * MARGIN + 2 * GUTTER
    for layer, row in sorted(layers.items()):
        row.sort(key=lambda it: it.rank)
        row_w = len(row) * (BOX_W + GAP_X) - GAP_X
        x0 = (width - row_w) / 2
        for k, it in enumerate(row):
            it.x = x0 + k * (BOX_W + GAP_X)
            it.y = MARGIN + 40 + layer * (BOX_H + GAP_Y) + (BOX_H - it.h) / 2
    return items


def _svg(view: GraphView) -> str:
    items = _layout(view)
    width = max((it.x + it.w for it in items.values()), default=BOX_W) + MARGIN
    height = max((it.y + it.h for it in items.values()), default=BOX_H) + MARGIN
    e = html.escape
    parts = [f'<svg width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} '
             f'{height:.0f}" role="img" aria-label="model graph">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
             'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/>'
             '</marker></defs>']
    for p in view.partitions:                          # shaded regions, one rect per layer
        rows: dict = {}
        for n in p.nodes:
            it = items[("n", n)]
            lo, hi = rows.get(it.layer, (it.x, it.x + it.w))
            rows[it.layer] = (min(lo, it.x), max(hi, it.x + it.w))
        first = True
        for layer in sorted(rows):
            lo, hi = rows[layer]
            y = MARGIN + 40 + layer * (BOX_H + GAP_Y) - 8
            h = BOX_H + 16 + (GAP_Y - 16 if layer + 1 in rows else 0)
            tint = PARTITION_TINTS[p.index % len(PARTITION_TINTS)]
            parts.append(f'<rect class="partition p{p.index}" x="{lo - 8:.0f}" y="{y:.0f}" '
                         f'width="{hi - lo + 16:.0f}" height="{h:.0f}" fill="{tint}"/>')
            if first:
                parts.append(f'<text class="plabel" x="{lo - 6:.0f}" y="{y - 3:.0f}" '
                             f'fill="{tint}">{view.delegate} partition {p.index} '
                             f'({", ".join(p.devices) or "NNAPI"})</text>')
                first = False
    left: dict = {}
    for it in items.values():
        left[it.layer] = min(left.get(it.layer, it.x), it.x)
    router = _Router(left)
    for n in view.nodes:                               # edges under the nodes
        dst = items[("n", n.index)]
        for i in n.inputs:
            t = view.tensors[i]
            src = items[("n", t.producer)] if t.producer is not None else items.get(("i", i))
            if src is not None:
                parts.append(_edge(src, dst, t, router))
    for t in view.tensors.values():
        if ("o", t.index) in items:
            parts.append(_edge(items[("n", t.producer)], items[("o", t.index)], t, router))
    for key, it in items.items():
        if key[0] == "n":
            parts.append(_svg_node(view, view.nodes[key[1]], it))
        else:
            t = view.tensors[key[1]]
            label = f"{t.role}[{t.position}] {t.type_name} {t.shape_text}"
            parts.append(f'<g class="io"><title>{e(f"t{t.index} {t.name} {t.detail}")}</title>'
                         f'<ellipse cx="{it.x + it.w / 2:.0f}" cy="{it.y + it.h / 2:.0f}" '
                         f'rx="{it.w / 2:.0f}" ry="{it.h / 2:.0f}"/><text x="{it.x + it.w / 2:.0f}"'
                         f' y="{it.y + it.h / 2 + 4:.0f}">{e(label)}</text></g>')
    parts.append("</svg>")
    return "\n".join(parts)


class _Router:
    """Lanes left of the nodes for edges that skip layers (so they do not cross boxes)."""

    def __init__(self, left: dict):
        self.left, self.count = left, 0

    def lane(self, layer_from: int, layer_to: int) -> float:
        self.count += 1
        edge = min(self.left[k] for k in range(layer_from + 1, layer_to) if k in self.left)
        return edge - 12 - 9 * (self.count % 6)


def _edge(src: _Item, dst: _Item, t: GTensor, router: _Router) -> str:
    x1, y1 = src.x + src.w / 2, src.y + src.h
    x2, y2 = dst.x + dst.w / 2, dst.y
    if dst.layer - src.layer > 1:
        g = GAP_Y / 2
        side = router.lane(src.layer, dst.layer)
        d = (f"M{x1:.0f},{y1:.0f} C{x1:.0f},{y1 + g:.0f} {side:.0f},{y1:.0f} {side:.0f},"
             f"{y1 + 2 * g:.0f} L{side:.0f},{y2 - 2 * g:.0f} C{side:.0f},{y2:.0f} {x2:.0f},"
             f"{y2 - g:.0f} {x2:.0f},{y2:.0f}")
    else:
        dy = max(20.0, (y2 - y1) / 2)
        d = (f"M{x1:.0f},{y1:.0f} C{x1:.0f},{y1 + dy:.0f} {x2:.0f},{y2 - dy:.0f} {x2:.0f},"
             f"{y2:.0f}")
    tip = html.escape(f"t{t.index} '{t.name}' {t.detail}")
    return (f'<path class="edge" d="{d}" marker-end="url(#arrow)"><title>{tip}</title>'
            f'</path>')


def _svg_node(view: GraphView, n: GNode, it: _Item) -> str:
    colours = view.node_colours(n)
    e = html.escape
    out = [f'<g class="node"><title>{e(node_tooltip(view, n))}</title>']
    share = it.w / len(colours)
    for k, c in enumerate(colours):
        out.append(f'<rect x="{it.x + k * share:.0f}" y="{it.y:.0f}" width="{share:.0f}" '
                   f'height="{it.h:.0f}" fill="{c}"/>')
    out.append(f'<rect class="frame" x="{it.x:.0f}" y="{it.y:.0f}" width="{it.w:.0f}" '
               f'height="{it.h:.0f}" rx="4"/>')
    cx = it.x + it.w / 2
    out.append(f'<text x="{cx:.0f}" y="{it.y + 16:.0f}">{e(f"{n.index}: {n.op_name}")}</text>')
    out.append(f'<text class="where" x="{cx:.0f}" y="{it.y + 30:.0f}">{e(n.where)}</text></g>')
    return "".join(out)


_CSS = """
body { font-family: Helvetica, Arial, sans-serif; margin: 1em; color: #222; }
h1 { font-size: 1.3em; } .summary { margin: .3em 0 1em; }
.legend span.sw { display: inline-block; width: 1.2em; height: .9em; border: 1px solid #555;
  vertical-align: middle; margin-right: .3em; }
.legend li { list-style: none; margin: .15em 0; }
.graph { overflow: auto; border: 1px solid #ccc; max-height: 80vh; }
svg text { font-size: 11px; text-anchor: middle; font-family: Helvetica, Arial, sans-serif; }
svg text.where { font-size: 9px; fill: #333; }
svg text.plabel { text-anchor: start; font-size: 10px; font-weight: bold; }
svg rect.partition { fill-opacity: .09; stroke: none; }
svg rect.frame { fill: none; stroke: #333; }
svg .node:hover rect.frame { stroke-width: 3; }
svg path.edge { fill: none; stroke: #777; stroke-width: 1.2; }
svg path.edge:hover { stroke: #d62728; stroke-width: 2.5; }
svg .io ellipse { fill: #000; } svg .io text { fill: #fff; font-size: 10px; }
table { border-collapse: collapse; margin-top: 1em; font-size: .85em; }
td, th { border: 1px solid #ccc; padding: .15em .5em; text-align: left; vertical-align: top; }
td .fix { color: #1d4e89; }
"""


def _swatches(colours: list) -> str:
    return "".join(f'<span class="sw" style="background:{c}"></span>' for c in colours)


def _tensor_list(view: GraphView, indices: list, constants: int = 0) -> str:
    """``t5 uint8 1x56x56x24, ...`` (+ N constants) for the tables."""
    def one(i):
        t = view.tensors.get(i)
        return f"t{i}" if t is None else f"t{i} {t.type_name} {t.shape_text}"
    text = ", ".join(one(i) for i in indices)
    if constants:
        text += f"{' ' if text else ''}+ {constants} constant{'s' if constants > 1 else ''}"
    return text


def _node_ranges(nodes: list) -> str:
    """``0-60, 62`` for a sorted list of node ids."""
    out, start, prev = [], None, None
    for n in sorted(nodes):
        if start is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            out.append(f"{start}-{prev}" if prev != start else str(start))
        start = prev = n
    if start is not None:
        out.append(f"{start}-{prev}" if prev != start else str(start))
    return ", ".join(out)


def to_html(view: GraphView) -> str:
    """A self-contained page: legend, the layered graph as inline SVG, and a node table."""
    e = html.escape
    legend = "".join(f'<li>{_swatches(view.where_colours(name))}{e(name)}: {count} '
                     f'node(s)</li>' for name, count in view.counts.items())
    if view.partitions:
        legend += ('<li><span class="sw" style="background:rgba(29,78,137,.15)"></span>shaded '
                   f'region: {"an" if view.delegate == "NNAPI" else "a"} {view.delegate} delegate '
                   f'partition (one delegate node)</li>')
    rows = []
    for n in view.nodes:
        part = "" if n.partition is None else str(n.partition)
        why = "".join(f"<div>{e(r)}</div>" for r in n.reasons)
        why += "".join(f'<div class="fix">fix: {e(f)}</div>' for f in n.fixes)
        rows.append(f'<tr id="node-{n.index}"><td>{n.index}</td><td>{e(n.op_name)}</td>'
                    f"<td>{_swatches(view.node_colours(n))}{e(n.where)}</td>"
                    f"<td>{part}</td><td>{e(', '.join(n.attrs))}</td><td>{why}</td>"
                    f"<td>{e(_tensor_list(view, n.inputs, len(n.constants)))}</td>"
                    f"<td>{e(_tensor_list(view, n.outputs))}</td></tr>")
    parts_rows = "".join(
        f"<tr><td>{p.index}</td><td>{p.delegate_node}</td><td>{len(p.nodes)}</td>"
        f"<td>{e(_node_ranges(p.nodes))}</td><td>{e(', '.join(p.devices) or 'NNAPI')}</td>"
        f"<td>{e(_tensor_list(view, p.input_tensors, p.constants))}</td>"
        f"<td>{e(_tensor_list(view, p.output_tensors))}</td></tr>"
        for p in view.partitions)
    parts_table = ("<h2>Delegate partitions</h2><table><tr><th>partition</th><th>delegate node"
                   "</th><th>nodes</th><th>node ids</th><th>devices</th><th>inputs</th>"
                   f"<th>outputs</th></tr>{parts_rows}</table>") if view.partitions else ""
    off = [n for n in view.nodes if n.partition is None or "nnapi-reference" in n.devices]
    jump = ("<p>Not on an accelerator: " + ", ".join(
        f'<a href="#node-{n.index}">{n.index} {e(n.op_name)}</a>' for n in off) + "</p>"
            if off else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{e(view.title)}</title>
<style>{_CSS}</style></head><body>
<h1>{e(view.title)}</h1>
<div class="summary">{e(view.summary)}</div>
<ul class="legend">{legend}</ul>
<div class="graph">
{_svg(view)}
</div>
{jump}
{parts_table}
<h2>Nodes</h2>
<table><tr><th>node</th><th>op</th><th>runs on</th><th>partition</th><th>attributes</th>
<th>why / fix</th><th>inputs</th><th>outputs</th></tr>
{"".join(rows)}
</table>
<p>Generated by nnsim graph. Hover a node for its attributes, why it runs there and its
tensors; hover an edge for its tensor.</p>
</body></html>
"""
