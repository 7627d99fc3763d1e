"""``python -m tests.docs.regen_tour [CHAPTER...]``: rewrite the tour's ```text blocks from real
runs (after a deliberate change of nnsim's output); review the diff before committing. A block
whose output differs only in what the test normalises (timestamps, host times) is left alone."""
from __future__ import annotations

import sys

from tests.docs.tour import MODELS, blocks, chapters, normalise, run


def regen(chapter) -> int:
    text = chapter.read_text()
    new = []                                 # (span, output), run in the chapter's order
    for b in blocks(chapter):
        if b.span is None:
            continue
        if b.needs_models and not MODELS.is_dir():
            print(f"{chapter.name}: skipped a block (no {MODELS})")
            continue
        out = run(b).rstrip() + "\n"
        if normalise(out) != normalise(b.expected):
            new.append((b.span, out))
    for (start, end), out in reversed(new):   # from the end: earlier offsets stay valid
        text = text[:start] + out + text[end:]
    chapter.write_text(text)
    return len(new)


def main(argv) -> int:
    for chapter in chapters():
        if argv and chapter.name not in argv and chapter.stem not in argv:
            continue
        print(f"{chapter.name}: {regen(chapter)} block(s) rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
