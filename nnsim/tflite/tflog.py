"""TFLite runtime log lines (``TFLITE_LOG_PROD``): ``<SEVERITY>: <message>`` on stderr.

They go to the logger ``nnsim.tflite``; the CLI prints them. VERBOSE is below INFO, as on
Android where the minimum severity is VERBOSE (tflite-nnapi-delegate.md 6.6).
"""
from __future__ import annotations

import logging

VERBOSE = 5
logging.addLevelName(VERBOSE, "VERBOSE")
# Debug-build-only lines (e.g. the delegate's feature-level change): below what the CLI shows.
DEBUG_BUILD = 3
logging.addLevelName(DEBUG_BUILD, "DEBUG")
LOGGER = logging.getLogger("nnsim.tflite")
_once: set = set()


def log(level: int, message: str, once: bool = False) -> None:
    if once:
        if message in _once:
            return
        _once.add(message)
    LOGGER.log(level, message)


class TfliteFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        name = {logging.WARNING: "WARNING"}.get(record.levelno, record.levelname)
        return f"{name}: {record.getMessage()}"
