"""The API-coverage report: its arithmetic, and the docs page kept equal to what the code has."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.api_coverage import (
    ONLY_IMPORTED,
    ModuleCoverage,
    imported_elsewhere,
    measure,
    render_markdown,
    render_text,
)
from tools.workspace import ROOT

pytest.importorskip("jax")
pytestmark = pytest.mark.oracle


def test_counts_and_percent() -> None:
    m = ModuleCoverage("numpy", frozenset({"a", "b", "c", "d"}), ("d",), absent=False)
    assert (m.present, m.percent) == (3, 75.0)
    text = render_text([m], missing=True)
    assert text.splitlines()[0].split()[:5] == ["jax.numpy", "3", "/", "4", "75.0%"]
    assert "missing: d" in text


def test_a_module_lamina_lacks_counts_every_name_missing() -> None:
    (m,) = measure(("numpy",))
    assert not m.absent and "sin" not in m.missing
    absent = ModuleCoverage("debug", frozenset({"print"}), ("print",), absent=True)
    assert "(no module yet)" in render_markdown([absent])


@pytest.mark.parametrize("module", sorted(ONLY_IMPORTED))
def test_names_left_uncounted_are_only_imported_by_jax(module: str) -> None:
    theirs = importlib.import_module(f"jax.{module}")
    defined_there = [n for n in ONLY_IMPORTED[module] if not imported_elsewhere(theirs, n)]
    assert not defined_there, f"jax.{module} defines these itself: count them"
    (m,) = measure((module,))
    assert not (ONLY_IMPORTED[module] & m.jax_names)


def test_docs_page_matches_the_code(tmp_path: Path) -> None:
    # In a fresh process: `dir(jax)` grows with every JAX submodule imported, and other tests
    # import some; the tool's own imports are the same every time.
    fresh = tmp_path / "api-coverage.md"
    subprocess.run(
        [sys.executable, "-m", "tools.api_coverage", "--write", str(fresh)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        check=True,
    )
    assert (ROOT / "docs" / "api-coverage.md").read_text() == fresh.read_text(), (
        "docs/api-coverage.md is stale: run "
        "`python -m tools.api_coverage --write docs/api-coverage.md`"
    )


def test_config_options_page_matches_the_code(tmp_path: Path) -> None:
    fresh = tmp_path / "config-options.md"
    subprocess.run(
        [sys.executable, "-m", "tools.config_options", "--write", str(fresh)],
        check=True,
        cwd=ROOT,
    )
    assert (ROOT / "docs" / "config-options.md").read_text() == fresh.read_text(), (
        "docs/config-options.md is stale: run "
        "`python -m tools.config_options --write docs/config-options.md`"
    )
