"""Run the guided tour's commands (docs/tour/*.md) and compare them with the text.

A runnable block is a ```sh block whose first line starts with ``nnsim`` or ``python``, or a
```python block; the ```text block right after it is its expected stdout. Only what changes
from run to run is normalised: logcat timestamps / PIDs / TIDs and host timings.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOUR = ROOT / "docs" / "tour"
MODELS = ROOT.parent / "shared" / "models"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
LOGCAT_HEAD = re.compile(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +\d+ +\d+ ", re.M)
HOST_TIME = re.compile(r"(host[^\n]*?)\d+(?:\.\d+)? ?(ms|us|s)\b")


@dataclass
class Block:
    chapter: Path
    kind: str            # "sh" or "python"
    code: str
    expected: str | None  # the following ```text block, None when missing
    span: tuple          # (start, end) of the text block's body in the chapter, or None

    @property
    def needs_models(self) -> bool:
        return "shared/models" in self.code


def blocks(chapter: Path) -> list[Block]:
    text = chapter.read_text()
    found = list(FENCE.finditer(text))
    out = []
    for i, m in enumerate(found):
        kind, body = m.group(1), m.group(2)
        runnable = kind == "python" or (kind == "sh" and body.lstrip().startswith(
            ("nnsim", "python")))
        if not runnable:
            continue
        nxt = found[i + 1] if i + 1 < len(found) else None
        if nxt is not None and nxt.group(1) == "text" and \
                text[m.end():nxt.start()].strip() == "":
            out.append(Block(chapter, kind, body, nxt.group(2), nxt.span(2)))
        else:
            out.append(Block(chapter, kind, body, None, None))
    return out


def run(block: Block) -> str:
    env = dict(os.environ)
    for k in [k for k in env if k.startswith("NNSIM_PROP_")]:
        del env[k]
    state = env.get("NNSIM_TOUR_STATE_DIR", str(Path(tempfile.gettempdir()) / "nnsim-tour-state"))
    env["NNSIM_STATE_DIR"] = state
    if block.kind == "python":
        argv = [sys.executable, "-c", block.code]
    else:
        argv = ["bash", "-c", "set -e\n" + block.code]
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    r = subprocess.run(argv, capture_output=True, text=True, cwd=str(ROOT), env=env,
                       timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"{block.chapter.name}: exit {r.returncode}\n{block.code}\n"
                           f"{r.stdout}\n{r.stderr}")
    return r.stdout.replace(state, "$NNSIM_STATE_DIR")


def normalise(text: str) -> str:
    text = LOGCAT_HEAD.sub("MM-DD hh:mm:ss.mmm  PID  TID ", text)
    return HOST_TIME.sub(r"\1N \2", text).rstrip() + "\n"


def chapters() -> list[Path]:
    return sorted(TOUR.glob("*.md"))
