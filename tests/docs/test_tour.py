"""The guided tour (docs/tour/) runs: every command's output is the one the text shows."""
from __future__ import annotations

import pytest

from tests.docs.tour import MODELS, blocks, chapters, normalise, run

CASES = [(c, i) for c in chapters() for i in range(len(blocks(c)))]


def test_every_chapter_has_runnable_blocks():
    assert len(chapters()) >= 5
    for c in chapters():
        assert blocks(c), c.name
        assert all(b.expected is not None for b in blocks(c)), c.name


@pytest.mark.parametrize("chapter,index", CASES, ids=[f"{c.stem}-{i}" for c, i in CASES])
def test_block_output_matches_the_text(chapter, index):
    block = blocks(chapter)[index]
    if block.needs_models and not MODELS.is_dir():
        pytest.skip(f"no shared models at {MODELS}")
    assert normalise(run(block)) == normalise(block.expected), \
        f"{chapter.name} block {index} changed: run python -m tests.docs.regen_tour"


def test_a_changed_output_is_caught(tmp_path):
    chapter = tmp_path / "x.md"
    chapter.write_text("```python\nprint('a')\n```\n\n```text\nb\n```\n")
    block = blocks(chapter)[0]
    assert normalise(run(block)) != normalise(block.expected)


def test_a_chapter_is_one_session(tmp_path):
    """A later block sees what earlier Python blocks defined or wrote; their output is not
    part of its own."""
    chapter = tmp_path / "x.md"
    out = tmp_path / "out.txt"
    chapter.write_text(f"```python\nx = 2\nopen({str(out)!r}, 'w').write('7')\nprint('first')\n"
                       "```\n\n```text\nfirst\n```\n\n"
                       "```python\nprint(x * 3)\n```\n\n```text\n6\n```\n\n"
                       f"```sh\npython -c \"print(open({str(out)!r}).read())\"\n```\n\n"
                       "```text\n7\n```\n")
    out.unlink(missing_ok=True)
    assert [run(b) for b in blocks(chapter)[1:]] == ["6\n", "7\n"]
