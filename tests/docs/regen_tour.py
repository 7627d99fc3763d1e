"""``python -m tests.docs.regen_tour [CHAPTER...]``: rewrite the tour's ```text blocks from real
runs (after a deliberate change of nnsim's output); review the diff before committing."""
from __future__ import annotations

import sys

from tests.docs.tour import MODELS, blocks, chapters, run


def regen(chapter) -> int:
    text = chapter.read_text()
    changed = 0
    for b in reversed(blocks(chapter)):     # from the end: earlier offsets stay valid
        if b.span is None:
            continue
        if b.needs_models and not MODELS.is_dir():
            print(f"{chapter.name}: skipped a block (no {MODELS})")
            continue
        out = run(b).rstrip() + "\n"
        if out != b.expected:
            text = text[:b.span[0]] + out + text[b.span[1]:]
            changed += 1
    chapter.write_text(text)
    return changed


def main(argv) -> int:
    for chapter in chapters():
        if argv and chapter.name not in argv and chapter.stem not in argv:
            continue
        print(f"{chapter.name}: {regen(chapter)} block(s) rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
