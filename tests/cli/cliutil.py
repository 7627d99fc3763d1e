"""Run ``python -m nnsim ...`` as a user would."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT.parent / "shared" / "models"
LOGCAT = re.compile(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +\d+ +\d+ ([VDIWEF]) (\S+) *: (.*)$")


def nnsim(*args, timeout=600, env=None):
    full_env = dict(os.environ)
    full_env.pop("NNSIM_PROP_DEBUG_NN_VLOG", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "nnsim", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=str(ROOT), env=full_env)


def logcat(stdout: str, tag: str) -> list[str]:
    """Messages of the logcat lines with ``tag``, in order (the line format is checked)."""
    out = []
    for line in stdout.splitlines():
        m = LOGCAT.match(line)
        if m and m.group(2) == tag:
            out.append(m.group(3))
    return out
