"""Runs every ```python block in docs/ as a test, with its printed output checked.

The blocks of one page run in order in one namespace, like the cells of a notebook. A block's
printed output is written under the `print` as `#>` comment lines, in the style of pydantic's
docs:

    print(1 + 1)
    #> 2

`ruff format`, which formats the code blocks of Markdown files too, rewrites `#>` as `# >`; both
spellings mark output. When a block has such lines, everything it prints must equal them, line
for line (trailing whitespace and trailing blank lines aside); a block without any is only run.
The repository's root `conftest.py` uses the same evaluator for the READMEs.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from sybil import Example, Sybil
from sybil.parsers.markdown import CodeBlockParser

ROOT: Final = Path(__file__).resolve().parent.parent
OUTPUT_MARKS: Final = ("#>", "# >")

if str(ROOT) not in sys.path:
    # The development page's examples import `tools`, which is a folder of the checkout, not an
    # installed package (the noxfile does the same).
    sys.path.insert(0, str(ROOT))


def _output_line(line: str) -> str | None:
    stripped = line.strip()
    for mark in OUTPUT_MARKS:
        if stripped.startswith(mark):
            return stripped.removeprefix(mark).removeprefix(" ")
    return None


def expected_output(source: str) -> list[str] | None:
    """The text of the block's `#>` lines, or None when it has none."""
    marked = [text for text in map(_output_line, source.splitlines()) if text is not None]
    return _normalized(marked) if marked else None


def _normalized(lines: Sequence[str]) -> list[str]:
    trimmed = [line.rstrip() for line in lines]
    while trimmed and not trimmed[-1]:
        trimmed.pop()
    return trimmed


def evaluate_block(example: Example) -> str | None:
    """Run one block in its page's namespace; return a failure message, or None when it passes."""
    __tracebackhide__ = True  # a failure points at the Markdown, not at this function
    source = str(example.parsed)
    # Leading newlines make tracebacks point at the block's lines in the Markdown file.
    padding = "\n" * (example.line + example.parsed.line_offset)
    code = compile(padding + source, example.path, "exec", dont_inherit=True)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(code, example.namespace)
    finally:
        example.namespace.pop("__builtins__", None)
        sys.stdout.write(printed.getvalue())  # pytest shows it beside a failure
    expected = expected_output(source)
    if expected is None:
        return None
    actual = _normalized(printed.getvalue().splitlines())
    if actual == expected:
        return None
    return (
        "printed output differs from the block's #> lines\n"
        + "expected:\n"
        + "".join(f"  #> {line}\n" for line in expected)
        + "printed:\n"
        + "".join(f"  #> {line}\n" for line in actual)
    )


def markdown_examples(root: Path, patterns: Sequence[str]) -> Sybil:
    """A Sybil that runs the ```python blocks of the Markdown files under `root`."""
    return Sybil(
        parsers=[CodeBlockParser(language="python", evaluator=evaluate_block)],
        path=str(root),
        patterns=list(patterns),
    )


pytest_collect_file = markdown_examples(ROOT / "docs", ["*.md"]).pytest()
collect_readme = markdown_examples(ROOT, ["README.md"]).pytest()
"""For the root conftest.py, which decides which READMEs: the packages' and the root's."""
