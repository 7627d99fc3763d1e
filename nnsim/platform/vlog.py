"""``debug.nn.vlog`` and logcat emulation.

The mask is parsed exactly as ``initVLogMask()`` (nnapi-runtime.md 3.5): the value is split on
any of `` ,:``; ``1`` or ``all`` enable every tag; ``model``, ``compilation``, ``execution``,
``cpuexe``, ``manager``, ``driver``, ``memory`` enable one; anything else logs
``Unknown trace flag: <tok>`` at ERROR. Like upstream it is re-read at every Model_create.

Log lines go to Python ``logging``, one logger per logcat tag (``nnsim.logcat.<Tag>``); the
logcat tag is the upstream *file's* LOG_TAG (ExecutionPlan, ModelBuilder, GraphDump, ...), not
the VLOG tag. Only the CLI prints; it attaches :class:`LogcatFormatter`.
"""
from __future__ import annotations

import logging
import os
import re
import threading
import time

from nnsim.platform.properties import getprop

MODEL, COMPILATION, EXECUTION, CPUEXE, MANAGER, DRIVER, MEMORY = range(7)
_TAG_BITS = {"model": MODEL, "compilation": COMPILATION, "execution": EXECUTION,
             "cpuexe": CPUEXE, "manager": MANAGER, "driver": DRIVER, "memory": MEMORY}
_ALL = (1 << 7) - 1

_mask = 0
LOGGER_PREFIX = "nnsim.logcat."
# Per thread: True while nnsim runs NNAPI code that no board would run (the TFLite CPU path's
# one-node models), whose log lines must not appear in the emulated logcat.
_quiet = threading.local()


def parse_vlog_mask(value: str) -> tuple[int, list[str]]:
    """Return (mask, unknown tokens) for a ``debug.nn.vlog`` value."""
    mask, unknown = 0, []
    for tok in re.split(r"[ ,:]", value):
        if not tok:
            continue
        if tok in ("1", "all"):
            mask |= _ALL
        elif tok in _TAG_BITS:
            mask |= 1 << _TAG_BITS[tok]
        else:
            unknown.append(tok)
    return mask, unknown


def init_vlog_mask() -> int:
    """Re-read ``debug.nn.vlog`` (called from Model_create, as upstream)."""
    global _mask
    mask, unknown = parse_vlog_mask(getprop("debug.nn.vlog"))
    for tok in unknown:
        log_error("Utils", f"Unknown trace flag: {tok}")
    _mask = mask
    return mask


def vlog_is_on(tag: int) -> bool:
    return bool(_mask & (1 << tag)) and not getattr(_quiet, "on", False)


class silenced:
    """``with vlog.silenced(): ...`` drops every logcat line this thread emits meanwhile."""

    def __enter__(self):
        self._was = getattr(_quiet, "on", False)
        _quiet.on = True
        return self

    def __exit__(self, *exc):
        _quiet.on = self._was


def set_vlog_mask(mask: int) -> None:
    global _mask
    _mask = mask


def logger(tag: str) -> logging.Logger:
    return logging.getLogger(LOGGER_PREFIX + tag)


def log_info(tag: str, message: str) -> None:
    if not getattr(_quiet, "on", False):
        logger(tag).info(message)


def log_error(tag: str, message: str) -> None:
    if not getattr(_quiet, "on", False):
        logger(tag).error(message)


def log_warning(tag: str, message: str) -> None:
    if not getattr(_quiet, "on", False):
        logger(tag).warning(message)


def vlog(flag: int, tag: str, message: str) -> None:
    """``VLOG(flag) << message`` from a file whose LOG_TAG is ``tag``."""
    if _mask & (1 << flag) and not getattr(_quiet, "on", False):
        logger(tag).info(message)


_LEVEL_CHAR = {logging.DEBUG: "D", logging.INFO: "I", logging.WARNING: "W",
               logging.ERROR: "E", logging.CRITICAL: "F"}


class LogcatFormatter(logging.Formatter):
    """``logcat -v threadtime``: ``MM-DD HH:MM:SS.mmm  PID  TID I Tag     : message``."""

    def format(self, record: logging.LogRecord) -> str:
        tag = record.name[len(LOGGER_PREFIX):] if record.name.startswith(LOGGER_PREFIX) \
            else record.name
        stamp = time.strftime("%m-%d %H:%M:%S", time.localtime(record.created))
        millis = int(record.msecs)
        tid = getattr(record, "thread", 0) or 0
        return "%s.%03d %5d %5d %s %-8s: %s" % (
            stamp, millis, record.process or os.getpid(), tid % 100000,
            _LEVEL_CHAR.get(record.levelno, "I"), tag, record.getMessage())


class LogCapture(logging.Handler):
    """Collects ``(level_char, tag, message)`` tuples from every logcat logger (tests, CLI)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[tuple[str, str, str]] = []
        self._lock2 = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        tag = record.name[len(LOGGER_PREFIX):]
        with self._lock2:
            self.records.append((_LEVEL_CHAR.get(record.levelno, "I"), tag, record.getMessage()))

    def lines(self, tag: str | None = None) -> list[str]:
        return [m for (_, t, m) in self.records if tag is None or t == tag]

    def __enter__(self):
        root = logging.getLogger(LOGGER_PREFIX.rstrip("."))
        root.addHandler(self)
        self._old_level = root.level
        root.setLevel(logging.DEBUG)
        return self

    def __exit__(self, *exc):
        root = logging.getLogger(LOGGER_PREFIX.rstrip("."))
        root.removeHandler(self)
        root.setLevel(self._old_level)
