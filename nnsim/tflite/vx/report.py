"""Summary lines for a VX delegate run (``nnsim run``, ``benchmark``, ``diff``)."""
from __future__ import annotations


def delegate_line(delegate, result) -> str:
    """``delegate: Vx Delegate (...) on the imx8mp NPU (...): 66 of 66 nodes in 1 partition``."""
    head = f"delegate: {delegate.describe()}"
    if result is None or not result.kernels:
        return f"{head}: no node delegated (every node on the TFLite CPU kernels)"
    return (f"{head}: {result.nodes_replaced} of {result.nodes_total} nodes in "
            f"{len(result.kernels)} partition(s) (TFLite's 'yielding {result.partitions} "
            f"partitions' also counts the runs of nodes left on its CPU)")


def first_invoke_lines(result) -> list[str]:
    """What each VX partition's first invoke did before running: compiled its graph, wrote
    the NBG cache file, or loaded it (nothing for other delegates' results)."""
    kernels = [k for k in (getattr(result, "kernels", None) or ()) if hasattr(k, "first_run")]
    lines = []
    for k in kernels:
        first = k.first_run
        if first is None:
            continue
        head = "VX delegate" + (f" partition {k.index}" if len(kernels) > 1 else "")
        ms = f"{first.ns / 1e6:.1f} ms"
        if first.kind == "compile":
            lines.append(f"{head}: the first inference built and compiled the graph ({ms}); "
                         f"allowed_cache_mode:true with cache_file_path keeps the binary (NBG)")
        elif first.kind == "nbg-store":
            lines.append(f"{head}: NBG cache miss: the first inference compiled the graph and "
                         f"wrote it to {first.path} ({ms}); a later run loads it")
        else:
            lines.append(f"{head}: NBG cache hit: the first inference loaded {first.path} "
                         f"({ms} instead of compiling)")
    return lines
