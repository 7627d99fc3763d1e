"""The VX delegate's NBG cache file (``allowed_cache_mode`` + ``cache_file_path``).

What tflite-vx-delegate does (``delegate_main.cc``, HEAD 3f4759e), per delegate kernel (one per
partition), at its ``Init``:

* the file at ``cache_file_path`` exists: the partition becomes one ``vsi-npu`` NBG operation
  read from the file, whatever graph it was compiled from (no check), and its first invoke
  loads the binary instead of compiling;
* it does not: the file is opened for appending (which creates it, empty), and the first
  invoke compiles the graph to a binary (``CompileToBinary``) and appends it.

There is one file per delegate, not per partition, so in a model with several VX partitions
the second partition's ``Init`` finds the (empty) file the first one created and loads it as
its NBG; nnsim reports that partition's first invoke as failed (**[inferred]**: an empty or
foreign NBG cannot be verified). nnsim also warns when a file's graph is not the partition's
(the real delegate would run the cached network).

The file lives on the board: ``/data/...`` and ``/vendor/...`` paths, and relative paths
(benchmark_model's working directory, ``/data/local/tmp``), are kept under the nnsim state
directory (``$NNSIM_STATE_DIR``, as the SyNAP compile cache); any other absolute path is a
host path. The content is nnsim's: a header line and the JSON description of the compiled
partition (board, graph fingerprint, nodes, weight bytes).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from nnsim.platform import sysfs

MAGIC = b"NNSIM-VX-NBG 1\n"
BOARD_CWD = "/data/local/tmp"


def host_path(cache_file_path: str) -> Path:
    """Where the board's ``cache_file_path`` is kept on this machine."""
    path = str(cache_file_path)
    if not path.startswith("/"):
        path = f"{BOARD_CWD}/{path}"
    return sysfs.device_path(path)


def fingerprint(sg, nodes) -> str:
    """SHA-256 of the partition's graph: its nodes, tensor shapes/types and constants."""
    h = hashlib.sha256()
    for n in nodes:
        op = sg.operators[n]
        h.update(f"{int(op.builtin)}:{op.custom_code}:{op.inputs}:{op.outputs};".encode())
        for i in list(op.inputs) + list(op.outputs):
            if i < 0:
                continue
            t = sg.tensors[i]
            h.update(f"{i}:{int(t.type)}:{tuple(t.shape)};".encode())
            if t.data is not None:
                h.update(memoryview(t.data).tobytes() if t.data.flags.c_contiguous
                         else t.data.tobytes())
    return h.hexdigest()


@dataclass
class NbgState:
    """What a partition's ``Init`` found at ``cache_file_path``."""
    path: Path
    present: bool            # the file existed: the partition runs the cached NBG
    size: int = 0
    graph: str = ""          # the fingerprint stored in the file ("" = empty / not nnsim's)
    board: str = ""


def open_at_init(cache_file_path: str) -> NbgState:
    """``Delegate::Init``: look at the file; create it (empty) when absent, as the
    delegate's ``std::ios::app`` open does."""
    path = host_path(cache_file_path)
    if path.exists():
        state = NbgState(path, True, path.stat().st_size)
        try:
            data = path.read_bytes()
        except OSError:
            return state
        if data.startswith(MAGIC):
            try:
                info = json.loads(data[len(MAGIC):])
                state.graph, state.board = str(info.get("graph", "")), str(info.get("board", ""))
            except (ValueError, AttributeError):
                pass
        return state
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    return NbgState(path, False)


def store(state: NbgState, graph: str, board: str, nodes, weight_bytes: int) -> None:
    """Append the compiled partition (the first invoke after a miss)."""
    info = {"graph": graph, "board": board, "nodes": list(nodes),
            "weight_bytes": int(weight_bytes)}
    with open(state.path, "ab") as f:
        f.write(MAGIC + json.dumps(info, sort_keys=True).encode() + b"\n")
        f.flush()
        os.fsync(f.fileno())
