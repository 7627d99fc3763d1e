"""Progress of ``nnsim benchmark``'s run loops on stderr (never stdout: stdout is
benchmark_model's line sequence).

A loop that ends within ``DELAY_S`` of wall time shows nothing. A longer one shows a tqdm bar
when tqdm is importable (the optional extra ``nnsim[progress]``) and stderr is a terminal, and
otherwise one plain line every ``PLAIN_EVERY_S`` seconds, which also reads well in a log file.
Emulating a board is far slower than the board, so a run that takes one simulated second can
take half a minute here: this says why the tool is quiet.
"""
from __future__ import annotations

import time

DELAY_S = 2.0
PLAIN_EVERY_S = 2.0
TQDM_EVERY_S = 0.1
_STEPS = 1000   # tqdm bar resolution


def _tqdm():
    try:
        from tqdm import tqdm   # the optional extra nnsim[progress]: imported only when used
    except ImportError:
        return None
    return tqdm


class Progress:
    """Progress of one run loop: at least ``min_runs`` runs and ``min_secs`` seconds of the
    reported clock (``clock``: "simulated" or "host"), stopping past ``max_secs``."""

    def __init__(self, label: str, min_runs: int, min_secs: float, max_secs: float, clock: str,
                 stream, enabled: bool = True):
        self.label, self.min_runs, self.clock, self.stream = label, min_runs, clock, stream
        self.min_secs, self.max_secs = min_secs, max_secs
        self.enabled = enabled
        self.start = self._last = time.monotonic()
        isatty = getattr(stream, "isatty", None)
        self._tqdm = _tqdm() if enabled and isatty is not None and isatty() else None
        self._bar = None

    def fraction(self, run: int, secs: float) -> float:
        """How far the loop is: both minimums must be met, unless max_secs ends it first."""
        by_runs = run / self.min_runs if self.min_runs > 0 else 1.0
        by_secs = secs / self.min_secs if self.min_secs > 0 else 1.0
        return min(1.0, max(min(by_runs, by_secs), secs / self.max_secs))

    def update(self, run: int, secs: float) -> None:
        """After ``run`` runs that took ``secs`` seconds of the reported clock."""
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < DELAY_S:
            return
        if self._tqdm is not None:
            if now - self._last < TQDM_EVERY_S and self._bar is not None:
                return
            self._last = now
            if self._bar is None:
                self._bar = self._tqdm(total=_STEPS, desc=f"nnsim benchmark: {self.label}",
                                       file=self.stream, leave=False,
                                       bar_format="{desc}: {percentage:3.0f}%|{bar}| "
                                                  "{postfix} [{elapsed}<{remaining}]")
            self._bar.n = int(self.fraction(run, secs) * _STEPS)
            self._bar.set_postfix_str(f"run {run}, {secs:.3g} s {self.clock}")
            return
        if now - self._last >= PLAIN_EVERY_S:
            self._last = now
            print(f"nnsim benchmark: {self.label}: run {run} (at least {self.min_runs}), "
                  f"{secs:.3g} s of {self.clock} time (at least {self.min_secs:g} s), "
                  f"{now - self.start:.0f} s elapsed, "
                  f"{100 * self.fraction(run, secs):.0f}% done", file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()   # leave=False: the bar line is erased
            self._bar = None
