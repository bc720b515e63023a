"""The docs' example evaluator (docs/conftest.py): `#>` output lines and their checking."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from tools.workspace import ROOT

pytest.importorskip("sybil")  # installed by the docs and typecheck sessions, not by `test`


def load_docs_conftest() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "docs_conftest_under_test", ROOT / "docs" / "conftest.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Source(str):
    """What Sybil hands an evaluator: the block's text, knowing its line offset."""

    line_offset = 0


def fake_example(source: str, namespace: dict[str, Any]) -> Any:
    return SimpleNamespace(
        parsed=Source(source), line=1, path=str(Path("page.md")), namespace=namespace
    )


docs = load_docs_conftest()


def test_output_lines_in_both_spellings_are_expected_output() -> None:
    source = "print('a')\n#> a\nx = 1  # not output\n    # >   indented\n# >\n"
    assert docs.expected_output(source) == ["a", "  indented"]


def test_a_block_without_output_lines_is_only_run() -> None:
    assert docs.expected_output("print('anything')\n") is None
    namespace: dict[str, Any] = {}
    assert docs.evaluate_block(fake_example("x = 2\nprint(x)\n", namespace)) is None
    assert namespace["x"] == 2  # the next block of the page sees it


def test_printed_output_must_equal_the_output_lines() -> None:
    assert docs.evaluate_block(fake_example("print(1 + 1)\n#> 2\n", {})) is None
    failure = docs.evaluate_block(fake_example("print(1 + 2)\n#> 2\n", {}))
    assert failure is not None
    assert "expected:\n  #> 2\nprinted:\n  #> 3\n" in failure


def test_an_exception_in_a_block_propagates() -> None:
    with pytest.raises(ZeroDivisionError):
        docs.evaluate_block(fake_example("1 / 0\n", {}))
