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

# Lamina's own tests show Lamina's frames: `jax_traceback_filtering`'s default (JAX's) would
# cut them from every failure's traceback. Tests of the filtering set it themselves.
os.environ.setdefault("LAMINA_TRACEBACK_FILTERING", "off")


def pytest_configure(config: pytest.Config) -> None:
    """With `LAMINA_ORACLE_CACHE_DIR` set (the nox sessions that run the oracle set it), JAX's
    own compilations go to a persistent cache there: sessions compare against the same JAX
    programs (the `xla` session reruns lamina-core's oracle corpus), and a program JAX has
    compiled once is loaded after that. Only JAX's config is touched; Lamina's cache options
    stay its own. Set here, before any test module compiles, so JAX turns its cache on."""
    path = os.environ.get("LAMINA_ORACLE_CACHE_DIR")
    xdist_controller = getattr(config.option, "numprocesses", None) and not os.environ.get(
        "PYTEST_XDIST_WORKER"
    )
    if not path or xdist_controller or importlib.util.find_spec("jax") is None:
        return
    import jax

    options = {
        "jax_compilation_cache_dir": path,
        "jax_persistent_cache_min_compile_time_secs": 0.0,
        "jax_persistent_cache_min_entry_size_bytes": 0,
    }
    for name, value in options.items():
        jax.config.update(name, value)  # type: ignore[no-untyped-call]


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
