"""Repository-wide pytest hook: README code examples are tests.

`pytest packages/lamina-core/README.md` (or `pytest README.md`) runs the file's fenced `python`
blocks with the evaluator of `docs/conftest.py`, printed output checked against `#>` lines.

pytest offers every file of every folder it walks through to this hook, READMEs included, even
when it was asked for `packages/<dist>/tests` only. So Sybil (a docs dependency) is imported
only when it is installed; without it a README is skipped unless it was asked for by name.
"""

from __future__ import annotations

import importlib.util
import os
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Final

import pytest

ROOT: Final = Path(__file__).resolve().parent

# Every test process has 8 CPU devices, as the acceptance suite's: sharded programs are tested
# beside the rest (measured: no cost to single-device tests). It must precede the first use of
# the XLA backend; a flag set by the caller wins.
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
    ).strip()


def _is_readme(path: Path) -> bool:
    if path.name != "README.md":
        return False
    return path.parent == ROOT or path.parent.parent == ROOT / "packages"


def _asked_for(path: Path, config: pytest.Config) -> bool:
    base = config.invocation_params.dir
    return any((base / arg.split("::")[0]).resolve() == path for arg in config.args)


@cache
def _docs_conftest() -> ModuleType:
    # Loaded by path under its own name: docs/ is not a package, and pytest imports the same
    # file as a conftest only when it collects docs/.
    spec = importlib.util.spec_from_file_location(
        "lamina_docs_conftest", ROOT / "docs" / "conftest.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not _is_readme(file_path):
        return None
    if importlib.util.find_spec("sybil") is None:
        if _asked_for(file_path, parent.config):
            raise pytest.UsageError(
                f"{file_path.relative_to(ROOT)}: running README examples needs sybil "
                "(the `docs` dependency group; `python3 ci/nox.py -s docs` installs it)"
            )
        return None
    collector: pytest.Collector | None = _docs_conftest().collect_readme(file_path, parent)
    return collector
