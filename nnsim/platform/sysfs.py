"""The emulated device file system: the nnsim state directory and SyNAP's sysfs statistics.

**State directory.** Files a board keeps across processes (the SyNAP compile cache
``/data/vendor/synap/nnhal.cache``, vsi-npu debug block lists under ``/data/...``) live under
``$NNSIM_STATE_DIR`` (default ``~/.local/state/nnsim``). :func:`device_path` maps a device
path starting with ``/data/`` or ``/vendor/`` into it; any other path is a host path and is
used as is.

**SyNAP statistics** (npu-drivers.md 4.2, SyNAP ``statistics.rst``). The NPU driver's sysfs
directory ``/sys/class/misc/synap/device/misc/synap/statistics/`` holds four files:

* ``inference_count``: total NPU inferences since boot, one integer;
* ``inference_time``: total NPU inference time in microseconds, one 64-bit integer;
* ``networks``: one line per *currently loaded* network,
  ``pid: 3628, nid: 38, inference_count: 22, inference_time: 40048, inference_last: 1843,
  iobuf_count: 2, iobuf_size: 151529, layers: 34``; empty when none is loaded;
* ``network_profile``: the same lines, each followed by a per-layer table when the network
  runs with profiling (``vendor.NNAPI_SYNAP_PROFILE=1``).

Writing anything to ``inference_count`` or ``inference_time`` clears both counters. Only NPU
inferences are counted (CPU work is invisible to the driver). The counters belong to the
emulated board, i.e. to this process; read them with :func:`read`, clear them with
:func:`write` or :func:`clear`.
"""
from __future__ import annotations

import itertools
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

SYNAP_STATISTICS_DIR = "/sys/class/misc/synap/device/misc/synap/statistics"  # Android (4.2)
SYNAP_STATISTICS_DIR_YOCTO = "/sys/class/misc/synap/statistics"
FILES = ("inference_count", "inference_time", "network_profile", "networks")
_DEVICE_ROOTS = ("/data/", "/vendor/")


def state_dir() -> Path:
    """The nnsim state directory (``$NNSIM_STATE_DIR``, default ``~/.local/state/nnsim``)."""
    env = os.environ.get("NNSIM_STATE_DIR")
    return Path(env) if env else Path.home() / ".local" / "state" / "nnsim"


def device_path(path: str) -> Path:
    """Host path of a device path: ``/data/...`` and ``/vendor/...`` go under the state
    directory; anything else is already a host path."""
    if any(path.startswith(root) for root in _DEVICE_ROOTS):
        return state_dir() / path.lstrip("/")
    return Path(path)


@dataclass
class LayerProfile:
    """One row of ``network_profile`` (kernel format ``|%4d |%9d |%8d |%9d |%9d |%3s | %s``)."""
    cycle: int
    time_us: int
    byte_rd: int
    byte_wr: int
    ot: str        # NN, SH, TP or -- (not executed)
    name: str


@dataclass
class Network:
    """A network loaded in the NPU driver (one converted SyNAP model)."""
    nid: int
    pid: int
    layers: int
    iobuf_count: int
    iobuf_size: int
    inference_count: int = 0
    inference_time: int = 0   # us
    inference_last: int = 0   # us
    profile: list[LayerProfile] | None = None

    def line(self) -> str:
        return (f"pid: {self.pid}, nid: {self.nid}, inference_count: {self.inference_count}, "
                f"inference_time: {self.inference_time}, inference_last: {self.inference_last}, "
                f"iobuf_count: {self.iobuf_count}, iobuf_size: {self.iobuf_size}, "
                f"layers: {self.layers}")


@dataclass
class SynapStatistics:
    """The statistics of one SyNAP NPU (the emulated kernel driver's state)."""
    inference_count: int = 0
    inference_time_us: int = 0
    networks: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _nids: itertools.count = field(default_factory=lambda: itertools.count(1), repr=False)

    def load_network(self, layers: int, iobuf_count: int, iobuf_size: int,
                     profiling: bool = False) -> Network:
        with self._lock:
            net = Network(next(self._nids), os.getpid(), layers, iobuf_count, iobuf_size,
                          profile=[] if profiling else None)
            self.networks[net.nid] = net
            return net

    def unload_network(self, nid: int) -> None:
        with self._lock:
            self.networks.pop(nid, None)

    def record_inference(self, net: Network, time_us: int,
                         profile: list[LayerProfile] | None = None) -> None:
        with self._lock:
            self.inference_count += 1
            self.inference_time_us += time_us
            net.inference_count += 1
            net.inference_time += time_us
            net.inference_last = time_us
            if profile is not None and net.profile is not None:
                net.profile = profile

    def clear(self) -> None:
        with self._lock:
            self.inference_count = 0
            self.inference_time_us = 0

    def read(self, name: str) -> str:
        with self._lock:
            if name == "inference_count":
                return f"{self.inference_count}\n"
            if name == "inference_time":
                return f"{self.inference_time_us}\n"
            nets = [self.networks[k] for k in sorted(self.networks)]
            if name == "networks":
                return "".join(n.line() + "\n" for n in nets)
            if name == "network_profile":
                out = []
                for n in nets:
                    out.append(n.line() + "\n")
                    if n.profile:
                        out.append("| lyr |    cycle | time_us |  byte_rd |  byte_wr | ot | name\n")
                        for j, p in enumerate(n.profile):
                            out.append("|%4d |%9d |%8d |%9d |%9d |%3s | %s\n" % (
                                j, p.cycle, p.time_us, p.byte_rd, p.byte_wr, p.ot, p.name))
                return "".join(out)
        raise FileNotFoundError(f"{SYNAP_STATISTICS_DIR}/{name}: No such file or directory")

    def write(self, name: str, data: str = "\n") -> None:
        """``echo > file``: inference_count / inference_time clear the counters."""
        if name in ("inference_count", "inference_time"):
            self.clear()
            return
        if name in FILES:
            raise PermissionError(f"{SYNAP_STATISTICS_DIR}/{name}: Permission denied")
        raise FileNotFoundError(f"{SYNAP_STATISTICS_DIR}/{name}: No such file or directory")


_STATS = SynapStatistics()


def synap_statistics() -> SynapStatistics:
    """The emulated SyNAP NPU's statistics (one NPU per board)."""
    return _STATS


def _name(path: str) -> str:
    path = path.rstrip("/")
    for root in (SYNAP_STATISTICS_DIR, SYNAP_STATISTICS_DIR_YOCTO):
        if path.startswith(root + "/"):
            return path[len(root) + 1:]
    if "/" in path:
        raise FileNotFoundError(f"{path}: No such file or directory")
    return path


def listdir() -> list[str]:
    """``ls $SYNAP_STAT_DIR``."""
    return list(FILES)


def read(path: str) -> str:
    """Content of a statistics file, by name (``"networks"``) or full sysfs path."""
    return _STATS.read(_name(path))


def write(path: str, data: str = "\n") -> None:
    """Write to a statistics file (``echo > inference_time`` clears the counters)."""
    _STATS.write(_name(path), data)


def clear() -> None:
    """Clear ``inference_count`` and ``inference_time``."""
    _STATS.clear()
