"""Test modules imported by their path, and the guard of tests that need several devices.

Tests folders are not packages, and pytest's importlib mode puts none of them on `sys.path`:
a test module reaches a module of its folder (a corpus of programs, a harness), and the tools
reach a test module, by its file. The tools are not installed, so this is the one place both
can import the loader from.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_module(path: Path, name: str) -> ModuleType:
    """The Python file `path`, imported as the module `name` once per process (a later call
    for `name` gets the module the first made).

    The module is in `sys.modules` while it runs, since dataclasses look their module up there,
    and taken out again if it raises (a module-level `pytest.skip` among the reasons).
    """
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load_test_module(tests: Path, name: str) -> ModuleType:
    """The module `name.py` of the tests folder `tests`, as `_<distribution>_tests_<name>`:
    one module for every test module and tool that loads it."""
    dist = tests.resolve().parent.name.replace("-", "_")
    return load_module(tests / f"{name}.py", f"_{dist}_tests_{name}")


def skip_without_devices(needed: int, *available: int) -> None:
    """Skip the calling test module (at its top level) unless each of the `available` device
    counts (Lamina's, JAX's, ...) is at least `needed`."""
    __tracebackhide__ = True  # pytest reports the skip at the test module's line
    if min(available) < needed:
        import pytest  # only tests call this

        pytest.skip(
            f"needs {needed} devices (XLA_FLAGS=--xla_force_host_platform_device_count={needed})",
            allow_module_level=True,
        )
