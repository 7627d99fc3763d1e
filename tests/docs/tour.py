"""Run the guided tour's commands (docs/tour/*.md) and compare them with the text.

A runnable block is a ```sh block whose first line starts with ``nnsim`` or ``python``, or a
```python block; the ```text block right after it is its expected stdout. A chapter reads top
to bottom like one session: before a block runs, the chapter's earlier ```python blocks run
again with their output discarded, so a Python block may use what an earlier one defined and a
command may read a file an earlier one wrote. Only what changes from run to run is normalised:
logcat timestamps / PIDs / TIDs and host timings.
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
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.DOTALL | re.MULTILINE)
LOGCAT_HEAD = re.compile(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +\d+ +\d+ ", re.MULTILINE)
HOST_TIME = re.compile(r"(host[^\n]*?)\d+(?:\.\d+)? ?(ms|us|s)\b")


@dataclass
class Block:
    chapter: Path
    kind: str            # "sh" or "python"
    code: str
    expected: str | None  # the following ```text block, None when missing
    span: tuple          # (start, end) of the text block's body in the chapter, or None
    setup: tuple = ()    # the chapter's earlier ```python blocks, run first, output discarded

    @property
    def needs_models(self) -> bool:
        return any("shared/models" in code for code in (self.code, *self.setup))


def blocks(chapter: Path) -> list[Block]:
    text = chapter.read_text()
    found = list(FENCE.finditer(text))
    out, setup = [], ()
    for i, m in enumerate(found):
        kind, body = m.group(1), m.group(2)
        runnable = kind == "python" or (kind == "sh" and body.lstrip().startswith(
            ("nnsim", "python")))
        if not runnable:
            continue
        nxt = found[i + 1] if i + 1 < len(found) else None
        if nxt is not None and nxt.group(1) == "text" and \
                text[m.end():nxt.start()].strip() == "":
            out.append(Block(chapter, kind, body, nxt.group(2), nxt.span(2), setup))
        else:
            out.append(Block(chapter, kind, body, None, None, setup))
        if kind == "python":
            setup += (body,)
    return out


# Runs the earlier blocks with stdout discarded, then the block itself, in one interpreter.
SESSION = """import contextlib, io, sys
_tour_globals = {"__name__": "__main__"}
for _tour_i, _tour_src in enumerate(sys.argv[1:]):
    _tour_code = compile(_tour_src, f"<tour block {_tour_i}>", "exec")
    if _tour_i < len(sys.argv) - 2:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(_tour_code, _tour_globals)
    else:
        exec(_tour_code, _tour_globals)
"""


def run(block: Block) -> str:
    env = dict(os.environ)
    for k in [k for k in env if k.startswith("NNSIM_PROP_")]:
        del env[k]
    state = env.get("NNSIM_TOUR_STATE_DIR", str(Path(tempfile.gettempdir()) / "nnsim-tour-state"))
    env["NNSIM_STATE_DIR"] = state
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    if block.kind == "python":
        r = _subprocess([sys.executable, "-c", SESSION, *block.setup, block.code], env)
    else:
        if block.setup:
            _check(block, _subprocess([sys.executable, "-c", SESSION, *block.setup, ""], env))
        r = _subprocess(["bash", "-c", "set -e\n" + block.code], env)
    _check(block, r)
    return r.stdout.replace(state, "$NNSIM_STATE_DIR")


def _subprocess(argv, env):
    return subprocess.run(argv, check=False, capture_output=True, text=True, cwd=str(ROOT),
                          env=env, timeout=300)


def _check(block: Block, r) -> None:
    if r.returncode != 0:
        raise RuntimeError(f"{block.chapter.name}: exit {r.returncode}\n{block.code}\n"
                           f"{r.stdout}\n{r.stderr}")


def normalise(text: str) -> str:
    text = LOGCAT_HEAD.sub("MM-DD hh:mm:ss.mmm  PID  TID ", text)
    return HOST_TIME.sub(r"\1N \2", text).rstrip() + "\n"


def chapters() -> list[Path]:
    return sorted(TOUR.glob("*.md"))
