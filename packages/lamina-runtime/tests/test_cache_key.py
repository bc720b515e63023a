"""Compilation cache keys: named components, each one changing the key, stable across processes."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import lamina_runtime as lr
from lamina_core import numpy as jnp
from lamina_mlir import LoweredModule
from lamina_runtime import _bridge, _bridge_devices, _bridge_executables
from lamina_runtime.cache_key import COMPONENT_NAMES, compilation_key, key_components, make_key

f32 = np.float32
CHILD = Path(__file__).with_name("cache_child.py")


def lowered(f: Any, *args: Any) -> LoweredModule:
    module: LoweredModule = lr.jit(f).lower(*args)._module
    return module


def key_of(f: Any, *args: Any) -> str:
    device = _bridge_devices.default_device()
    return compilation_key(
        lowered(f, *args), [device], _bridge_executables.compile_options()
    ).digest


def test_key_has_every_named_component_in_order() -> None:
    module = lowered(lambda x: x + 1.0, np.ones(3, f32))
    components = key_components(
        module, [_bridge_devices.default_device()], _bridge_executables.compile_options()
    )
    assert tuple(name for name, _ in components) == COMPONENT_NAMES


@pytest.mark.parametrize("name", COMPONENT_NAMES)
def test_each_component_changes_the_key(name: str) -> None:
    module = lowered(lambda x: x + 1.0, np.ones(3, f32))
    components = key_components(
        module, [_bridge_devices.default_device()], _bridge_executables.compile_options()
    )
    changed = [(n, v + b"!" if n == name else v) for n, v in components]
    assert make_key("m", changed).digest != make_key("m", components).digest


def test_components_are_length_prefixed_so_moving_bytes_between_them_changes_the_key() -> None:
    a = make_key("m", [("x", b"ab"), ("y", b"c")])
    b = make_key("m", [("x", b"a"), ("y", b"bc")])
    assert a.digest != b.digest


def test_key_ignores_debug_locations() -> None:
    x = np.ones(4, f32)
    first = lambda x: jnp.sin(x) * 2.0  # noqa: E731
    second = lambda x: jnp.sin(x) * 2.0  # noqa: E731  (another line: other locations)
    assert lowered(first, x).as_text(debug_info=True) != lowered(second, x).as_text(debug_info=True)
    assert key_of(first, x) == key_of(second, x)


def test_key_ignores_private_function_names() -> None:
    def calling(inner_name: str) -> Any:
        def inner(x: Any) -> Any:
            return jnp.sin(x) + 1.0

        inner.__name__ = inner.__qualname__ = inner_name
        inner_jit = lr.jit(inner)
        return lambda x: inner_jit(x) * jnp.argmax(x)

    x = np.ones(4, f32)
    a, b = calling("helper_a"), calling("helper_b")
    assert "@helper_a" in lowered(a, x).as_text() and "@helper_b" in lowered(b, x).as_text()
    assert key_of(a, x) == key_of(b, x)


def test_key_keeps_private_functions_apart() -> None:
    x = np.ones(4, f32)
    one = lr.jit(lambda x: jnp.sin(x))
    two = lr.jit(lambda x: jnp.cos(x))
    assert key_of(lambda x: one(x) + two(x), x) != key_of(lambda x: two(x) + one(x), x)


def test_constant_values_are_not_part_of_the_key() -> None:
    def closure(value: float, size: int = 64) -> Any:
        const = np.full((size,), value, f32)
        return lambda x: x * const

    x64 = np.ones(64, f32)
    assert key_of(closure(1.0), x64) == key_of(closure(2.0), x64)
    assert key_of(closure(1.0), x64) != key_of(closure(1.0, 32), np.ones(32, f32))


def test_key_changes_with_the_program() -> None:
    x = np.ones(4, f32)
    assert key_of(lambda x: x + 1.0, x) != key_of(lambda x: x - 1.0, x)
    assert key_of(lambda x: x + 1.0, x) != key_of(lambda x: x + 1.0, np.ones(5, f32))


def test_xla_flags_are_keyed_except_dumps_and_device_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    device, options = _bridge_devices.default_device(), _bridge_executables.compile_options()
    module = lowered(lambda x: x + 1.0, np.ones(3, f32))

    def flags_component(value: str | None) -> bytes:
        if value is None:
            monkeypatch.delenv("XLA_FLAGS", raising=False)
        else:
            monkeypatch.setenv("XLA_FLAGS", value)
        return compilation_key(module, [device], options).component("xla flags")

    none = flags_component(None)
    assert flags_component("--xla_dump_to=/tmp/x") == none
    assert flags_component("--xla_force_host_platform_device_count=8") == none
    assert flags_component("--xla_cpu_enable_fast_math=true") != none
    assert flags_component("--a=1 --b=2") == flags_component("--b=2 --a=1")


def test_compile_options_device_kind_and_count_come_from_the_compilation() -> None:
    device = _bridge_devices.default_device()
    module = lowered(lambda x: x + 1.0, np.ones(3, f32))
    base = compilation_key(module, [device], _bridge_executables.compile_options())
    other_options = compilation_key(
        module, [device], _bridge_executables.compile_options(device_ids=[0])
    )
    assert other_options.component("compile options") != base.component("compile options")
    fake = SimpleNamespace(client=device.client, device_kind="Lamina TPU v0")
    two = compilation_key(module, [fake, fake], _bridge_executables.compile_options())
    assert two.component("device kind") == b"Lamina TPU v0"
    assert two.component("device count") == b"2"
    assert base.component("device count") == b"1"
    assert base.component("jaxlib version") == _bridge.JAXLIB_VERSION.encode()
    assert base.component("lamina version") == lr.__version__.encode()


def test_file_stem_is_safe_for_file_systems() -> None:
    key = make_key("jit(f/../<g>)", [("module", b"")])
    assert key.file_stem == f"jit_f_g-{key.digest}"
    assert make_key("", []).file_stem.startswith("module-")


def test_same_program_in_two_processes_has_one_key() -> None:
    # Two fresh interpreters with different hash seeds, racing: the key must not depend on
    # object ids, set order or counters; and it must equal this process's key.
    procs = [
        subprocess.Popen(
            [sys.executable, str(CHILD), "key"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        )
        for seed in (1, 2)
    ]
    keys = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        keys.append(out.strip())
    assert keys[0] == keys[1] == load_child().program_key()


def load_child() -> Any:
    """The child script as a module of this process (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("lamina_runtime_cache_child", CHILD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
