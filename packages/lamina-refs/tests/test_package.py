"""lamina-refs installs as its own distribution and imports without the layers above it."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import lamina_refs

_PROBE = (
    "import sys, lamina_refs; "
    "print(sorted(m for m in sys.modules if m in {'lamina_runtime', 'lamina', 'jax'}))"
)


def test_version_matches_the_distribution() -> None:
    assert lamina_refs.__version__ == importlib.metadata.version("lamina-refs")


def test_importing_it_loads_neither_the_runtime_nor_jax() -> None:
    # A fresh interpreter: other tests in this process may have imported them already.
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
