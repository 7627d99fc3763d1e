"""benchmark_model's statistics and op-profiling tables, formatted byte-for-byte.

Spec: tflite-nnapi-delegate.md 7.2 (Stat lines) and 7.3-7.4 (profile_summarizer.cc,
stats_calculator.cc, profile_summary_formatter.cc; current LiteRT/tsl layout: node type width
40, no [start] column, StatWithPercentiles).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


def cpp_double(v: float) -> str:
    """``std::ostream << double`` with default precision 6 (``%g``)."""
    return "%g" % v


class Stat:
    """``StatWithPercentiles<int64_t>``: samples in microseconds."""

    def __init__(self):
        self.values: list[int] = []

    def update(self, v) -> None:
        self.values.append(int(v))

    @property
    def count(self) -> int:
        return len(self.values)

    @property
    def first(self) -> int:
        return self.values[0]

    @property
    def newest(self) -> int:
        return self.values[-1]

    @property
    def sum(self) -> int:
        return sum(self.values)

    @property
    def avg(self) -> float:
        return self.sum / self.count if self.values else math.nan

    def std_deviation(self) -> int:
        # variance = int64(squared_sum / count - avg^2) (population); std = int64(sqrt(variance))
        if not self.values:
            return 0
        sq = sum(v * v for v in self.values)
        avg = self.avg
        variance = int(sq / self.count - avg * avg)
        return int(math.sqrt(variance)) if variance > 0 else 0

    def percentile(self, p: int) -> int:
        s = sorted(self.values)
        return s[min(len(s) - 1, len(s) * p // 100)]

    def __str__(self) -> str:
        if not self.values:
            return "count=0"
        if all(v == self.values[0] for v in self.values):
            text = f"count={self.count} curr={self.newest}"
            if self.count > 1:
                text += "(all same)"
        else:
            text = (f"count={self.count} first={self.first} curr={self.newest} "
                    f"min={min(self.values)} max={max(self.values)} avg={cpp_double(self.avg)} "
                    f"std={self.std_deviation()}")
        return text + (f" p5={self.percentile(5)} median={self.percentile(50)} "
                       f"p95={self.percentile(95)}")


@dataclass
class NodeStats:
    """One profiled node: ``type`` (op name or TfLiteNnapiDelegate), ``name``
    (``[out tensor names]:node_index``), run order, and its per-run times in microseconds."""
    type: str
    name: str
    run_order: int
    times_us: list = field(default_factory=list)
    mem_kb: float = 0.0
    times_called: int = 0

    @property
    def first_us(self) -> float:
        return float(self.times_us[0]) if self.times_us else 0.0

    @property
    def sum_us(self) -> int:
        return int(sum(self.times_us))

    @property
    def avg_us(self) -> float:
        return self.sum_us / len(self.times_us) if self.times_us else 0.0


def _title(title: str) -> str:
    return "=" * 30 + " " + title + " " + "=" * 30


def _node_table(title: str, nodes: list[NodeStats], run_total_sum: int, num_runs: int) -> list:
    lines = [_title(title),
             "\t" + "\t".join([f"{'[node type]':>40}", f"{'[first]':>9}", f"{'[avg ms]':>9}",
                               f"{'[%]':>8}", f"{'[cdf%]':>8}", f"{'[mem KB]':>10}",
                               f"{'[times called]':>9}", "[Name]"])]
    cdf = 0
    for n in nodes:
        cdf += n.sum_us
        pct = n.sum_us * 100.0 / run_total_sum if run_total_sum else 0.0
        cum = cdf * 100.0 / run_total_sum if run_total_sum else 0.0
        lines.append("\t" + "\t".join([
            f"{n.type:>40}", f"{n.first_us / 1000.0:9.3f}", f"{n.avg_us / 1000.0:9.3f}",
            f"{pct:7.3f}%", f"{cum:7.3f}%", f"{n.mem_kb:10.3f}",
            f"{n.times_called // max(num_runs, 1):>9}", n.name]))
    lines.append("")
    return lines


def _summary_by_type(nodes: list[NodeStats], num_runs: int) -> list:
    by_type: dict[str, list] = {}
    for n in nodes:
        entry = by_type.setdefault(n.type, [0, 0, 0.0, 0])
        entry[0] += 1
        entry[1] += int(n.sum_us / max(num_runs, 1))
        entry[2] += n.mem_kb
        entry[3] += n.times_called // max(num_runs, 1)
    total = sum(v[1] for v in by_type.values())
    rows = sorted(by_type.items(), key=lambda kv: (kv[1][1], kv[0]), reverse=True)
    lines = [_title("Summary by node type"),
             "\t" + "\t".join([f"{'[Node type]':>40}", f"{'[count]':>9}", f"{'[avg ms]':>10}",
                               f"{'[avg %]':>11}", f"{'[cdf %]':>11}", f"{'[mem KB]':>10}",
                               f"{'[times called]':>10}"])]
    cdf = np.float32(0)
    for typ, (count, time_us, mem, times) in rows:
        pct = np.float32(time_us) / np.float32(total) * np.float32(100) if total else \
            np.float32(0)
        cdf = np.float32(cdf + pct)
        lines.append("\t" + "\t".join([
            f"{typ:>40}", f"{count:>9}", f"{np.float32(time_us) / np.float32(1000):10.3f}",
            f"{float(pct):10.3f}%", f"{float(cdf):10.3f}%", f"{mem:10.3f}", f"{times:>9}"]))
    lines.append("")
    return lines


def profile_report(nodes: list[NodeStats], num_runs: int, run_totals: Stat,
                   top_n: int = 10) -> list[str]:
    """``GetOutputString()`` + the short summary for one subgraph's regular runs."""
    run_total_sum = sum(n.sum_us for n in nodes)
    lines = _node_table("Run Order", sorted(nodes, key=lambda n: n.run_order), run_total_sum,
                        num_runs)
    top = sorted(nodes, key=lambda n: n.avg_us, reverse=True)[:top_n]
    lines += _node_table("Top by Computation Time", top, run_total_sum, num_runs)
    lines.append(f"Number of nodes executed: {len(nodes)}")
    lines += _summary_by_type(nodes, num_runs)
    lines += [f"Timings (microseconds): {run_totals}", "Memory (bytes): count=0",
              f"{len(nodes)} nodes observed", ""]
    return lines


def profile_csv(nodes: list[NodeStats], num_runs: int) -> list[str]:
    """``--op_profiling_output_mode=csv``: the run-order rows and the per-type summary
    (commas inside names become tabs)."""
    total = sum(n.sum_us for n in nodes)
    lines = ["node type, first, avg_ms, %, cdf%, mem KB, times called, name"]
    cdf = 0
    for n in sorted(nodes, key=lambda n: n.run_order):
        cdf += n.sum_us
        pct = n.sum_us * 100.0 / total if total else 0.0
        cum = cdf * 100.0 / total if total else 0.0
        lines.append(", ".join([n.type, f"{n.first_us / 1000.0:.3f}", f"{n.avg_us / 1000.0:.3f}",
                                f"{pct:.3f}%", f"{cum:.3f}%", f"{n.mem_kb:.3f}",
                                str(n.times_called // max(num_runs, 1)),
                                n.name.replace(",", "\t")]))
    lines.append("")
    lines.append("node type, count, avg_ms, avg %, cdf %, mem KB, times called")
    for row in _summary_by_type(nodes, num_runs)[2:-1]:
        lines.append(", ".join(f.strip() for f in row.strip("\t").split("\t")))
    lines.append("")
    return lines
