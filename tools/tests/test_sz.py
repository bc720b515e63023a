"""The module-size report, on generated modules."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from tools.sz import count_lines, report, scan
from tools.workspace import ROOT


def write_module(folder: Path, name: str, lines: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    body = "".join(f"x{i} = {i}\n\n# a comment\n" for i in range(lines))
    (folder / name).write_text('"""A module."""\n' + body)


def test_count_lines_skips_blank_and_comment_only_lines() -> None:
    assert count_lines('"""Doc."""\n\n# comment\nx = 1  # trailing\n    \n  # indented\n') == 2


def test_report_lists_largest_first_and_passes_under_the_hard_limit(tmp_path: Path) -> None:
    write_module(tmp_path / "a", "small.py", 10)
    write_module(tmp_path / "a" / "sub", "big.py", 550)
    out = io.StringIO()
    status = report(scan([tmp_path / "a"]), out, top=15)
    text = out.getvalue()
    assert status == 0
    assert text.index("big.py") < text.index("small.py")
    assert "   551  " in text  # 550 assignments and the docstring
    assert "warning: " in text
    assert "above the soft cap of 500" in text
    assert "error:" not in text


def test_report_fails_above_the_hard_limit(tmp_path: Path) -> None:
    write_module(tmp_path, "huge.py", 700)
    out = io.StringIO()
    assert report(scan([tmp_path]), out) == 1
    assert "above the hard limit of 600" in out.getvalue()


def test_report_shows_only_the_top_modules(tmp_path: Path) -> None:
    for i in range(20):
        write_module(tmp_path, f"m{i:02}.py", i + 1)
    out = io.StringIO()
    report(scan([tmp_path]), out, top=3)
    listed = [line for line in out.getvalue().splitlines() if line.endswith(".py")]
    assert [Path(line.split()[-1]).name for line in listed] == ["m19.py", "m18.py", "m17.py"]


@pytest.mark.parametrize("argv", [[], ["--top", "3"]])
def test_command_runs_over_the_packages(argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.sz", *argv], cwd=ROOT, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert "lines of code" in done.stdout
    assert "packages/lamina-core/src/lamina_core/" in done.stdout
