"""The SyNAP NNHAL compile cache file (npu-drivers.md 4.1, 10.3) as nnsim keeps it.

The file (``vendor.SYNAP_CACHE_PATH``, default ``/data/vendor/synap/nnhal.cache`` under the
nnsim state directory) is board state shared by every nnsim process, so it must never break a
run and never lose another process's entries:

* **Validated on load.** The content must be a JSON object with exactly the keys ``format``
  (:data:`CACHE_FORMAT`), ``clock`` (an integer >= 0) and ``entries`` (key -> ``{"used": int,
  "layers": int}`` plus the optional ``"model"`` (str) and ``"inserted"`` (Unix time)). Anything
  else (truncated or random bytes, invalid UTF-8, ``null``, a list, a missing or wrong key, a bad
  entry) is *set aside*: renamed to ``nnhal.cache.corrupt-<UTC time>``, with one warning line
  in the driver's log, and the cache starts empty. A 0-byte file is an empty cache (no warning).
* **Written atomically** (a temporary file in the same directory, then ``os.replace``), so a
  reader sees either the old or the new file, never a partial one.
* **Read-modify-write under an inter-process lock**: ``fcntl.flock`` on ``nnhal.cache.lock``
  beside the file (plus a thread lock), so concurrent runs keep every entry. Without ``fcntl``
  (not POSIX) only the thread lock remains. The lock file is never deleted: deleting it while
  another process holds it would let a third process lock a new file meanwhile.

The SyNAP cache's real on-disk format is not public; this JSON layout is nnsim's.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: only the in-process lock
    fcntl = None

from nnsim.platform import sysfs, vlog
from nnsim.platform.properties import getprop

CACHE_FORMAT = "nnsim-synap-cache 1"
DEFAULT_CACHE_PATH = "/data/vendor/synap/nnhal.cache"  # 4.1
DEFAULT_CACHE_CAPACITY = 10000                          # 4.1
PROP_CACHE_PATH = "vendor.SYNAP_CACHE_PATH"
PROP_CACHE_CAPACITY = "vendor.SYNAP_CACHE_CAPACITY"
LOG_TAG = "android.hardware.neuralnetworks@1.3-service-synap-npu"  # assumption (as the driver)
_TOP_KEYS = {"format", "clock", "entries"}
_ENTRY_REQUIRED = {"used", "layers"}
_ENTRY_OPTIONAL = {"model", "inserted"}
CORRUPT_INFIX = ".corrupt-"


class MalformedCache(ValueError):
    """The cache file's content is not a valid cache; the message says why."""


def empty_cache() -> dict:
    return {"format": CACHE_FORMAT, "clock": 0, "entries": {}}


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def parse_cache(data: bytes) -> dict:
    """The cache of a file's bytes; raises :class:`MalformedCache` naming the first problem."""
    if not data:
        return empty_cache()
    try:
        raw = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise MalformedCache("not UTF-8 text") from None
    except ValueError as e:
        raise MalformedCache(f"not JSON ({e.msg} at byte {e.pos})") from None
    if not isinstance(raw, dict):
        raise MalformedCache(f"a JSON {type(raw).__name__ if raw is not None else 'null'}, "
                             f"not an object")
    if set(raw) != _TOP_KEYS:
        missing, extra = sorted(_TOP_KEYS - set(raw)), sorted(set(raw) - _TOP_KEYS)
        raise MalformedCache("keys " + "; ".join(
            ([f"missing {', '.join(missing)}"] if missing else [])
            + ([f"unexpected {', '.join(extra)}"] if extra else [])))
    if raw["format"] != CACHE_FORMAT:
        raise MalformedCache(f"format {raw['format']!r}, expected {CACHE_FORMAT!r}")
    if not _is_int(raw["clock"]) or raw["clock"] < 0:
        raise MalformedCache(f"clock {raw['clock']!r} is not an integer >= 0")
    if not isinstance(raw["entries"], dict):
        raise MalformedCache("entries is not an object")
    for key, entry in raw["entries"].items():
        _check_entry(key, entry)
    return raw


def _check_entry(key: str, entry) -> None:
    where = f"entry {key[:20]!r}"
    if not isinstance(entry, dict):
        raise MalformedCache(f"{where} is not an object")
    keys = set(entry)
    if not _ENTRY_REQUIRED <= keys <= _ENTRY_REQUIRED | _ENTRY_OPTIONAL:
        raise MalformedCache(f"{where} has keys {sorted(keys)}")
    for name in ("used", "layers"):
        if not _is_int(entry[name]) or entry[name] < 0:
            raise MalformedCache(f"{where}: {name} {entry[name]!r} is not an integer >= 0")
    if "model" in entry and not isinstance(entry["model"], str):
        raise MalformedCache(f"{where}: model is not a string")
    if "inserted" in entry and (isinstance(entry["inserted"], bool)
                                or not isinstance(entry["inserted"], (int, float))):
        raise MalformedCache(f"{where}: inserted is not a number")


def parse_capacity(raw: str) -> tuple[int, str | None]:
    """(capacity, warning or None) of a ``vendor.SYNAP_CACHE_CAPACITY`` value: an integer
    (base 0, as base::GetIntProperty); unparsable -> the default, negative -> 0 (disabled),
    each with a warning (nnsim's: the real HAL's handling is not documented)."""
    text = raw.strip()
    if not text:
        return DEFAULT_CACHE_CAPACITY, None
    try:
        value = int(text, 0)
    except ValueError:
        return DEFAULT_CACHE_CAPACITY, (f"{PROP_CACHE_CAPACITY}={raw!r} is not an integer; "
                                        f"using the default capacity {DEFAULT_CACHE_CAPACITY}")
    if value < 0:
        return 0, f"{PROP_CACHE_CAPACITY}={raw!r} is negative; the SyNAP cache is disabled"
    return value, None


@dataclass
class LoadResult:
    """What :meth:`SynapCompileCache.load` found."""
    cache: dict
    problem: str | None = None        # why the file was malformed (or unreadable)
    set_aside: Path | None = None     # where the malformed file went
    warnings: list[str] = field(default_factory=list)


class SynapCompileCache:
    """The SyNAP NNHAL compile cache: a file of model keys in least-recently-used order."""

    _thread_lock = threading.Lock()

    def __init__(self, path: str, capacity: int):
        self.path = sysfs.device_path(path)
        self.capacity = capacity
        self.warnings: list[str] = []     # what this cache object warned about (run summary)

    @classmethod
    def from_properties(cls) -> SynapCompileCache:
        """The cache the properties name; an invalid capacity value is warned about."""
        capacity, warning = parse_capacity(getprop(PROP_CACHE_CAPACITY,
                                                   str(DEFAULT_CACHE_CAPACITY)))
        cache = cls(getprop(PROP_CACHE_PATH) or DEFAULT_CACHE_PATH, capacity)
        if warning:
            cache._warn(warning)
        return cache

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        vlog.log_warning(LOG_TAG, message)

    @contextlib.contextmanager
    def locked(self, create: bool = True):
        """Hold the thread lock and, where possible, the inter-process lock (``create``: make
        the cache's directory if needed; readers pass False and then lock only if it exists)."""
        with self._thread_lock:
            fd = None
            if fcntl is not None and (create or self.path.parent.is_dir()):
                try:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
                    fcntl.flock(fd, fcntl.LOCK_EX)
                except OSError:
                    # e.g. a read-only state directory: reading still works, writing will
                    # fail and be logged by the writer
                    if fd is not None:
                        os.close(fd)
                    fd = None
            try:
                yield
            finally:
                if fd is not None:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    os.close(fd)

    def load(self, set_aside: bool = True) -> LoadResult:
        """Read and validate the file (call inside :meth:`locked` when ``set_aside``). A
        malformed file is renamed aside with one warning when ``set_aside``; either way the
        result's cache is then empty."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return LoadResult(empty_cache())
        except OSError as e:
            message = f"cannot read the SyNAP cache {self.path}: {e.strerror or e}"
            if set_aside:
                self._warn(message)
            return LoadResult(empty_cache(), problem=message)
        try:
            return LoadResult(parse_cache(data))
        except MalformedCache as e:
            problem = str(e)
        if not set_aside:
            return LoadResult(empty_cache(), problem=problem)
        target = self._set_aside()
        if target is None:
            self._warn(f"malformed SyNAP cache {self.path} ({problem}); cannot set it aside, "
                       f"starting with an empty cache")
        else:
            self._warn(f"malformed SyNAP cache {self.path} ({problem}); set aside as "
                       f"{target.name}, starting with an empty cache")
        return LoadResult(empty_cache(), problem=problem, set_aside=target)

    def _set_aside(self) -> Path | None:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        base = self.path.name + CORRUPT_INFIX + stamp
        for n in range(1000):
            target = self.path.with_name(base if n == 0 else f"{base}.{n}")
            if target.exists():
                continue
            try:
                os.rename(self.path, target)
                return target
            except OSError:
                return None
        return None

    def set_aside_files(self) -> list[Path]:
        """Malformed cache files set aside earlier, oldest first."""
        if not self.path.parent.is_dir():
            return []
        return sorted(self.path.parent.glob(self.path.name + CORRUPT_INFIX + "*"))

    def _store(self, raw: dict) -> None:
        """Atomic write: a temporary file beside the cache, then os.replace."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", suffix=".tmp",
                                   dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(raw, f)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def lookup_or_insert(self, key: str, layers: int, model: str = "") -> bool:
        """True when ``key`` was cached (and refresh it); else insert it, evicting the least
        recently used entries beyond the capacity. A capacity of 0 disables the cache."""
        if self.capacity <= 0:
            return False
        with self.locked():
            raw = self.load().cache
            raw["clock"] += 1
            entries = raw["entries"]
            hit = key in entries
            entry = entries.get(key) or {"layers": layers, "model": model,
                                         "inserted": round(time.time(), 3)}
            entry["used"] = raw["clock"]
            entries[key] = entry
            while len(entries) > self.capacity:
                del entries[min(entries, key=lambda k: entries[k]["used"])]
            try:
                self._store(raw)
            except OSError as e:
                vlog.log_error(LOG_TAG, f"cannot write the SyNAP cache {self.path}: {e}")
            return hit

    def keys(self) -> list[str]:
        """Cached keys, least recently used first (a malformed file reads as empty and is
        left in place: only a writer sets it aside)."""
        with self.locked(create=False):
            entries = self.load(set_aside=False).cache["entries"]
        return sorted(entries, key=lambda k: entries[k]["used"])

    def clear(self, set_aside_too: bool = False) -> list[Path]:
        """Remove the cache file (and the set-aside files); returns the paths removed."""
        removed = []
        with self.locked(create=False):
            for p in [self.path] + (self.set_aside_files() if set_aside_too else []):
                try:
                    p.unlink()
                    removed.append(p)
                except FileNotFoundError:
                    pass
        return removed
