"""The runtime with a persistent cache: hits in a new runtime, recovery, settings, processes."""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lamina_runtime as lr
from lamina_core import config
from lamina_core import numpy as jnp
from lamina_mlir import LoweredModule
from lamina_runtime import CompilationCache, Runtime
from lamina_runtime.compilation_cache import ENTRY_SUFFIX, TEMP_SUFFIX, decode_entry

f32 = np.float32
CHILD = Path(__file__).with_name("cache_child.py")


def lowered(f: Any, *args: Any) -> LoweredModule:
    module: LoweredModule = lr.jit(f).lower(*args)._module
    return module


def run(runtime: Runtime, module: LoweredModule, *args: Any) -> np.ndarray:
    executable = runtime.compile(module)
    (out,) = executable.run(executable.put_consts(module.const_args.values), args)
    return np.asarray(out)


def closure(value: float) -> Any:
    const = np.full((16,), value, f32)
    return lambda x: jnp.sin(x) * const


def test_new_runtime_loads_from_the_cache_instead_of_compiling(cache_dir: Path) -> None:
    x = np.arange(16, dtype=f32)
    first = Runtime(CompilationCache(cache_dir))
    expected = run(first, lowered(closure(2.0), x), x)
    assert (first.compilations, first.persistent_hits) == (1, 0)
    assert len(list(cache_dir.glob(f"*{ENTRY_SUFFIX}"))) == 1

    second = Runtime(CompilationCache(cache_dir))  # as a new process would
    np.testing.assert_array_equal(run(second, lowered(closure(2.0), x), x), expected)
    assert (second.compilations, second.persistent_hits) == (0, 1)


def test_closure_over_new_constant_values_hits_the_cache(cache_dir: Path) -> None:
    x = np.arange(16, dtype=f32)
    run(Runtime(CompilationCache(cache_dir)), lowered(closure(2.0), x), x)
    fresh = Runtime(CompilationCache(cache_dir))
    out = run(fresh, lowered(closure(-3.0), x), x)
    assert fresh.compilations == 0
    np.testing.assert_allclose(out, np.sin(x) * -3.0, rtol=1e-6)


def test_corrupted_entry_is_recompiled_with_the_right_result(
    cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    x = np.arange(16, dtype=f32)
    module = lowered(closure(2.0), x)
    run(Runtime(CompilationCache(cache_dir)), module, x)
    (path,) = cache_dir.glob(f"*{ENTRY_SUFFIX}")
    path.write_bytes(path.read_bytes()[:-100])
    fresh = Runtime(CompilationCache(cache_dir))
    with caplog.at_level(logging.WARNING, logger="lamina.cache"):
        out = run(fresh, module, x)
    np.testing.assert_allclose(out, np.sin(x) * 2.0, rtol=1e-6)
    assert (fresh.compilations, fresh.persistent_hits) == (1, 0)
    assert "removing" in caplog.text
    assert Runtime(CompilationCache(cache_dir)).compile(module) is not None  # valid again


def test_entry_that_jaxlib_cannot_load_is_discarded(
    cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    x = np.arange(16, dtype=f32)
    module = lowered(closure(2.0), x)
    first = Runtime(CompilationCache(cache_dir))
    run(first, module, x)
    cache = CompilationCache(cache_dir)
    key = lr.compilation_key(module, [lr.devices()[0]], lr._bridge_executables.compile_options())
    cache.put(key, b"checksummed, but not an executable")
    fresh = Runtime(cache)
    with caplog.at_level(logging.WARNING, logger="lamina.cache"):
        out = run(fresh, module, x)
    np.testing.assert_allclose(out, np.sin(x) * 2.0, rtol=1e-6)
    assert fresh.compilations == 1
    assert "jaxlib could not load it" in caplog.text


def test_min_compile_time_skips_fast_compilations(cache_dir: Path) -> None:
    x = np.arange(16, dtype=f32)
    with config(jax_persistent_cache_min_compile_time_secs=1e9):
        run(Runtime(CompilationCache(cache_dir)), lowered(closure(2.0), x), x)
    assert list(cache_dir.iterdir()) == []


def test_default_runtime_follows_the_configuration(cache_dir: Path) -> None:
    x = np.arange(16, dtype=f32)
    runtime = Runtime()
    with config(jax_compilation_cache_dir=str(cache_dir), jax_compilation_cache_max_size=-1):
        cache = runtime.persistent_cache
        assert cache is not None
        assert (cache.root, cache.max_bytes) == (cache_dir, None)
        assert runtime.persistent_cache is cache  # reused while the settings hold
        assert Runtime(None).persistent_cache is None
        run(runtime, lowered(closure(5.0), x), x)
    assert len(list(cache_dir.iterdir())) == 1
    with config(jax_enable_compilation_cache=False):
        assert Runtime().persistent_cache is None


def test_runtime_clear_forgets_executables_in_memory_only(cache_dir: Path) -> None:
    x = np.arange(16, dtype=f32)
    runtime = Runtime(CompilationCache(cache_dir))
    module = lowered(closure(2.0), x)
    first = runtime.compile(module).loaded
    assert runtime.compile(module).loaded is first
    runtime.clear()
    assert runtime.compile(module).loaded is not first
    assert (runtime.compilations, runtime.persistent_hits) == (1, 1)


@pytest.mark.slow  # four fresh interpreters on two cores: about 10 s
def test_four_processes_racing_on_one_key_leave_one_valid_entry(cache_dir: Path) -> None:
    env = {
        **os.environ,
        "LAMINA_COMPILATION_CACHE_DIR": str(cache_dir),
        "LAMINA_CACHE_DIR": str(cache_dir),
    }
    go = cache_dir.parent / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, str(CHILD), "race", str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(4)
    ]
    for proc in procs:  # everyone imported and traced: now they compile together
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", proc.stderr
    go.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(out.split())
    child = load_child()
    f, args = child.program()
    expected = f"{float(np.asarray(lr.jit(f)(*args)).sum()):.6f}"
    assert {r[0] for r in results} == {expected}
    assert all(int(compiled) + int(hits) >= 1 for _, compiled, hits in results)
    entries = list(cache_dir.glob(f"*{ENTRY_SUFFIX}"))
    assert len(entries) == 1, entries
    assert list(cache_dir.glob(f"*{TEMP_SUFFIX}")) == []
    key = lr.compilation_key(
        lr.jit(f).lower(*args)._module, [lr.devices()[0]], lr._bridge_executables.compile_options()
    )
    assert entries[0] == CompilationCache(cache_dir).path(key)
    assert decode_entry(key, entries[0].read_bytes())


def load_child() -> Any:
    spec = importlib.util.spec_from_file_location("lamina_runtime_cache_child", CHILD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
