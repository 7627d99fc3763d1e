"""argparse ``type=`` functions the commands share: a bad value becomes argparse's one-line
usage error (exit 2), worded the same in every command."""
from __future__ import annotations

import argparse


def integer(text: str) -> int:
    """A base-10 integer."""
    try:
        return int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects an integer, got {text!r}") from None


def int_at_least(low: int, note: str = ""):
    """A base-10 integer >= ``low``; ``note`` follows the bound in the message (e.g.
    " (0 = no limit)")."""
    def parse(text: str) -> int:
        value = integer(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}{note}, got {value}")
        return value
    parse.__name__ = f"integer >= {low}"
    return parse


def positive_float(text: str) -> float:
    """A finite number > 0 (NaN refused too)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value
