"""The API-coverage report: its arithmetic, and the docs page kept equal to what the code has."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.api_coverage import ModuleCoverage, measure, render_markdown, render_text
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
