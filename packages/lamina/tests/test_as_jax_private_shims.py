"""`lamina.as_jax`'s stand-ins for the few JAX private paths libraries reach
(`lamina.as_jax._private`): served to import statements under exactly those names, wired to
Lamina's runtime (a wrapper of `jax._src.compiler.backend_compile_and_load` sees each
compilation), and gone with the alias; every other private path is still refused.

chex, which imports `jax._src.compiler` at import, runs in child processes: once under the
alias and once on real JAX, the same script, whose outputs must be equal.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lamina
import lamina.as_jax
import lamina_runtime
from lamina.as_jax import _private


@contextlib.contextmanager
def _installed() -> Iterator[None]:
    lamina.as_jax.install()
    try:
        yield
    finally:
        lamina.as_jax.uninstall()


def _run_as_user(source: str, **names: Any) -> dict[str, Any]:
    """Run `source` as a user's module would (not one of the runtime's), return its names."""
    namespace: dict[str, Any] = {"__name__": "as_jax_user_code", **names}
    exec(compile(textwrap.dedent(source), "<as_jax user code>", "exec"), namespace)
    return namespace


def test_each_served_path_is_lamina_s_module_in_every_import_form() -> None:
    real_compiler = sys.modules["jax._src.compiler"]
    with _installed():
        ns = _run_as_user("""
            import jax
            import jax._src.compiler
            import jax._src.xla_bridge as bridge
            from jax._src import compiler, dtypes, xla_bridge
            from jax._src.compiler import backend_compile, backend_compile_and_load
            import jax._src.dispatch
            from jax._src.traceback_util import api_boundary
        """)
        assert ns["jax"] is lamina
        assert ns["compiler"] is _private.compiler is ns["jax"]._src.compiler
        assert ns["bridge"] is ns["xla_bridge"] is _private.xla_bridge
        assert ns["backend_compile"] is _private.compiler.backend_compile
        assert ns["backend_compile_and_load"] is _private.compiler.backend_compile_and_load
        assert ns["dtypes"] is _private.dtypes
        assert ns["dtypes"].TypePromotionError is lamina.dtypes.TypePromotionError
        assert ns["jax"]._src.dispatch is _private.dispatch
        assert ns["api_boundary"] is _private.traceback_util.api_boundary
        # JAX's names in sys.modules stay real JAX's: its runtime looks them up there.
        assert sys.modules["jax._src.compiler"] is real_compiler
    assert not hasattr(lamina, "_src")


def test_other_private_paths_are_refused_by_import_and_by_attribute() -> None:
    with _installed():
        for source, name in (
            ("from jax._src import api", "jax._src.api"),
            ("from jax._src import compiler, api", "jax._src.api"),
            ("import jax._src.api", "jax._src.api"),
            ("from jax._src import state", "jax._src.state"),
            ("from jax._src.interpreters import pxla", "jax._src.interpreters"),
            ("from jax._src.sharding_impls import NamedSharding", "jax._src.sharding_impls"),
        ):
            with pytest.raises(ModuleNotFoundError) as err:
                _run_as_user(source)
            assert err.value.name == name, source
            assert str(err.value) == (
                f"lamina.as_jax: {name} is not provided by Lamina (JAX's private modules are "
                "never served, except jax._src.checkify, jax._src.compiler, jax._src.core, "
                "jax._src.dispatch, jax._src.dtypes, jax._src.state.types, "
                "jax._src.traceback_util, jax._src.tree_util, jax._src.xla_bridge)"
            )
        with pytest.raises(AttributeError, match=r"jax\._src\.api is not provided by Lamina"):
            _run_as_user("import jax\njax._src.api")
        with pytest.raises(AttributeError, match=r"jax\._src\.xla_bridge has no 'get_topology'"):
            _run_as_user("from jax._src import xla_bridge\nxla_bridge.get_topology")


def test_a_wrapper_of_backend_compile_and_load_sees_each_compilation_and_may_refuse_it() -> None:
    seen: list[str] = []
    x = np.arange(3, dtype=np.float32)
    with _installed(), lamina.config(jax_enable_compilation_cache=False):
        compiler = _private.compiler
        original = compiler.backend_compile_and_load

        def watching(backend: Any, *args: Any, **kwargs: Any) -> Any:
            seen.append(backend.platform)
            if len(seen) == 2:
                raise RuntimeError(f"no compiling for {backend.platform}")
            return original(backend, *args, **kwargs)

        compiler.backend_compile_and_load = watching  # as chex does
        try:
            first = lamina.jit(lambda v: v * 1.5 + 0.25)(x)
            with pytest.raises(RuntimeError, match="no compiling for cpu"):
                lamina.jit(lambda v: v * 2.5 - 0.75)(x)
            again = lamina.jit(lambda v: v * 2.5 - 0.75)(x)  # the refused one was not kept
            lamina.jit(lambda v: v * 1.5 + 0.25)(x)  # compiled already: not a compilation
        finally:
            compiler.backend_compile_and_load = original
    np.testing.assert_array_equal(np.asarray(first), x * 1.5 + 0.25)
    np.testing.assert_array_equal(np.asarray(again), x * 2.5 - 0.75)
    assert seen == [lamina.default_backend()] * 3


def test_a_wrapper_of_backend_compile_sees_compilations_too() -> None:
    seen: list[str] = []
    with _installed(), lamina.config(jax_enable_compilation_cache=False):
        compiler = _private.compiler
        original = compiler.backend_compile

        def watching(backend: Any, *args: Any, **kwargs: Any) -> Any:
            seen.append(backend.platform)
            return original(backend, *args, **kwargs)

        compiler.backend_compile = watching  # as older chex did
        try:
            lamina.jit(lambda v: v - 3.125)(np.ones(2, np.float32))
        finally:
            compiler.backend_compile = original
    assert seen == ["cpu"]


def test_compilations_are_not_routed_once_the_alias_is_gone() -> None:
    calls: list[object] = []
    with _installed():
        pass
    original = _private.compiler.backend_compile_and_load

    def watching(*args: Any) -> Any:
        calls.append(args)
        return original(*args)

    _private.compiler.backend_compile_and_load = watching  # type: ignore[assignment]
    try:
        with lamina.config(jax_enable_compilation_cache=False):
            out = lamina.jit(lambda v: v * 4.375)(np.ones(2, np.float32))
    finally:
        _private.compiler.backend_compile_and_load = original
    np.testing.assert_array_equal(np.asarray(out), [4.375, 4.375])
    assert calls == []


def test_backend_compile_and_load_refuses_what_the_runtime_did_not_hand_it() -> None:
    with pytest.raises(TypeError, match=r"hands it \(a lamina_runtime.CompileCall\), not str"):
        # The wrong type is the point.
        _private.compiler.backend_compile_and_load(None, "module {}", [], None, [])  # type: ignore[arg-type]


def test_backends_read_live_and_start_nothing() -> None:
    started = lamina_runtime.started_backends()
    assert _private.xla_bridge.backends_are_initialized() == bool(started)
    lamina.devices()  # starts them, if nothing had
    backends = _private.xla_bridge._backends
    assert sorted(backends) == ["cpu"]
    assert backends["cpu"] is lamina.devices("cpu")[0].client
    assert _private.xla_bridge.backends_are_initialized()


def test_equinox_s_paths_map_onto_lamina() -> None:
    """equinox catches `jax._src.dtypes.TypePromotionError`, decorates its API with
    `api_boundary`, marks its files with `register_exclusion` and runs `wait_for_tokens` at
    exit."""
    with _installed():
        ns = _run_as_user(
            """
            import jax.numpy as jnp
            from jax._src import dispatch, traceback_util
            from jax._src.dtypes import TypePromotionError

            traceback_util.register_exclusion("/a/library/module.py")

            @traceback_util.api_boundary
            def add(x, y):
                return x + y

            with jax.numpy_dtype_promotion("strict"):
                try:
                    add(jnp.ones(2, jnp.float32), jnp.ones(2, jnp.int32))
                except TypePromotionError as err:
                    caught = err
            total = add(jnp.ones(2), 1.5)
            dispatch.wait_for_tokens()
        """,
            jax=lamina,
        )
    assert type(ns["caught"]) is lamina.dtypes.TypePromotionError
    np.testing.assert_array_equal(np.asarray(ns["total"]), [2.5, 2.5])
    assert _private.traceback_util._exclude_paths[-1] == "/a/library/module.py"


# ---- chex, in child processes: under the alias and on real JAX -------------------------------

CHEX_PROGRAM = """
import os
import chex
import jax
import jax.numpy as jnp
from chex._src import fake
from chex._src.restrict_backends import RestrictedBackendError

print("before any operation:", sorted(jax._src.xla_bridge._backends))
fake.set_n_cpu_devices(2)  # allowed: no backend has started
print("devices:", len(jax.devices()), sorted(jax._src.xla_bridge._backends))
try:
    fake.set_n_cpu_devices(3)
except RuntimeError as err:
    print("set_n_cpu_devices:", err)


def cube(side):
    return jnp.sum(jnp.ones((side, side)) * side)


for restriction in ({"forbidden": ["cpu"]}, {"allowed": ["tpu", "gpu"]}):
    try:
        with chex.restrict_backends(**restriction):
            jax.jit(lambda: cube(9))()
    except RestrictedBackendError as err:
        print("refused:", err)
for restriction in ({"allowed": ["cpu"]}, {"forbidden": ["tpu", "gpu"]}):
    with chex.restrict_backends(**restriction):
        print("allowed:", jax.jit(lambda: cube(5))())
print("lifted:", jax.jit(lambda: cube(9))())
"""


def _child(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # A fresh persistent cache: a program found there would be no compilation to refuse.
    environ = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    environ |= {"LAMINA_CACHE_DIR": str(cwd), "LAMINA_COMPILATION_CACHE_DIR": str(cwd)}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=environ, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip


@pytest.mark.oracle
@pytest.mark.skipif(importlib.util.find_spec("chex") is None, reason="chex is not installed")
def test_chex_imports_and_its_restrict_backends_and_device_count_work_as_on_jax(
    tmp_path: Path,
) -> None:
    script = tmp_path / "chex_program.py"
    script.write_text(CHEX_PROGRAM)
    on_lamina = _child(["-m", "lamina.as_jax", str(script)], tmp_path)
    on_jax = _child([str(script)], tmp_path)
    assert on_jax.returncode == 0, on_jax.stderr
    assert on_lamina.returncode == 0, on_lamina.stderr
    assert on_lamina.stdout == on_jax.stdout
    refused = "refused: Compiling a JAX program for cpu is forbidden by restrict_backends()."
    assert on_lamina.stdout.count(refused) == 2, on_lamina.stdout
    assert "devices: 2 ['cpu']" in on_lamina.stdout
