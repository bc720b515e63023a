"""tools.downstream's report: pytest's JUnit XML read back, and a Lamina run compared with a JAX
run (the suites themselves run in the `downstream` nox session only)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tools.downstream import compare, parse_junit
from tools.downstream.report import NOT_RUN, Outcome, cause_of

TESTS = """
import pytest

def test_ok():
    pass

def test_value():
    raise ValueError("boom\\nsecond line")

@pytest.fixture
def broken():
    raise TypeError("in setup")

def test_setup(broken):
    pass

def test_skipped():
    pytest.skip("not here")

class TestGroup:
    def test_assert(self):
        assert 1 == 2
"""

ON_LAMINA = """
def test_ok():
    raise KeyError("k")

def test_value():
    pass
"""
"""The same tests as a library's run on Lamina might end: `test_ok` broken, `test_value` fixed,
the others not run at all."""


def _junit(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    """Run pytest on `files` (as the runner does: collection errors do not stop it)."""
    folder = tmp_path / name
    folder.mkdir()
    for file, source in files.items():
        (folder / file).write_text(textwrap.dedent(source))
    junit = tmp_path / f"{name}.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "--continue-on-collection-errors", f"--junitxml={junit}", "--rootdir", str(folder), "."],
        cwd=folder, capture_output=True, check=False,
    )  # fmt: skip
    return junit


def test_outcomes_and_causes_are_read_from_junit(tmp_path: Path) -> None:
    run = parse_junit(_junit(tmp_path, "one", {"test_a.py": TESTS, "test_b.py": "import nope\n"}))
    assert run.outcomes == {
        "test_a::test_ok": Outcome("passed"),
        "test_a::test_value": Outcome("failed", "ValueError: boom"),
        "test_a::test_setup": Outcome("failed", "TypeError: in setup"),
        "test_a::test_skipped": Outcome("skipped"),
        "test_a.TestGroup::test_assert": Outcome("failed", "AssertionError: assert 1 == 2"),
    }
    assert run.collection_errors == {"test_b": "ModuleNotFoundError: No module named 'nope'"}
    assert run.outcome("test_b::test_x") == Outcome(
        NOT_RUN, "(collection) ModuleNotFoundError: No module named 'nope'"
    )
    assert run.outcome("test_c::test_y") == Outcome(NOT_RUN, "(not in the run)")


def test_only_what_passes_on_jax_counts(tmp_path: Path) -> None:
    on_jax = parse_junit(_junit(tmp_path, "jax", {"test_a.py": TESTS}))
    on_lamina = parse_junit(_junit(tmp_path, "lamina", {"test_a.py": ON_LAMINA}))
    report = compare("demo", on_jax, on_lamina)
    assert (report.counted, report.passed) == (1, 0)  # test_ok only: the rest fail on JAX too
    assert report.failing == {"test_a::test_ok": "KeyError: 'k'"}
    assert report.causes == [("KeyError: 'k'", 1)]
    assert report.lamina_only == ["test_a::test_value"]
    assert report.render().splitlines()[0] == (
        "demo: 0 of 1 tests passing on JAX pass on Lamina (0.0%)"
    )


def test_a_cause_is_the_type_and_the_first_line() -> None:
    assert cause_of("assert 1 == 2", "x.py:3: in f\n    ...\nx.py:4: AssertionError") == (
        "AssertionError: assert 1 == 2"
    )
    assert cause_of('failed on setup with "OSError: gone\nmore"', "") == "OSError: gone"
    assert cause_of("collection failure", "tb\nE   ImportError: no jax.X\nE   more") == (
        "ImportError: no jax.X"
    )
