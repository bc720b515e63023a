"""`lamina.as_jax`: `jax` means Lamina, through each entry point, strictly, and Lamina's runtime
keeps working under the alias (it runs on real JAX's runtime pieces).

In-process tests install the alias in a fixture that always removes it; the entry points and a
cold start (nothing of the runtime used before the alias) run in child processes.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import importlib.util
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import jax  # real JAX: the test compares with it and checks it is restored
import jaxlib
import pytest
from jax.core import ShapedArray as JaxShapedArray

import lamina
import lamina.as_jax


def _jax_entries() -> dict[str, ModuleType]:
    return {n: m for n, m in sys.modules.items() if n == "jax" or n.startswith("jax.")}


@contextlib.contextmanager
def _installed() -> Iterator[None]:
    lamina.as_jax.install()
    try:
        yield
    finally:
        lamina.as_jax.uninstall()


@pytest.fixture
def alias() -> Iterator[None]:
    with _installed():
        yield


def _run_as_user(source: str) -> dict[str, Any]:
    """Run `source` as a user's module would (not one of the runtime's), return its names."""
    namespace: dict[str, Any] = {"__name__": "as_jax_user_code"}
    exec(compile(textwrap.dedent(source), "<as_jax user code>", "exec"), namespace)
    return namespace


def _lamina_has(jax_name: str) -> bool:
    try:
        return importlib.util.find_spec("lamina" + jax_name[3:]) is not None
    except ModuleNotFoundError:  # its parent is missing
        return False


# ---- the alias, in process --------------------------------------------------------------------


@pytest.mark.usefixtures("alias")
def test_jax_and_its_submodules_are_lamina_s() -> None:
    ns = _run_as_user("""
        import importlib
        import jax
        import jax.numpy as jnp
        import jax.numpy.linalg
        from jax import lax, tree_util
    """)
    assert ns["jax"] is lamina
    assert ns["jnp"] is lamina.numpy is sys.modules["jax.numpy"]
    assert sys.modules["jax.numpy.linalg"] is lamina.numpy.linalg
    assert (ns["lax"], ns["tree_util"]) == (lamina.lax, lamina.tree_util)
    assert importlib.import_module("jax.random") is lamina.random


@pytest.mark.usefixtures("alias")
def test_a_module_served_on_demand_keeps_its_own_spec() -> None:
    del sys.modules["jax.numpy.fft"]  # so that the finder serves it, not install()
    ns = _run_as_user("import jax.numpy.fft as fft")
    assert ns["fft"] is lamina.numpy.fft is sys.modules["jax.numpy.fft"]
    assert lamina.numpy.fft.__spec__ is not None
    assert lamina.numpy.fft.__spec__.name == "lamina.numpy.fft"


def test_a_module_lamina_lacks_is_an_error_naming_it_never_jax_s() -> None:
    real = _jax_entries()
    lacking = sorted(  # those whose parent Lamina has: the error is about them, not the parent
        n
        for n in real
        if "._" not in n and n != "jax" and not _lamina_has(n)
        if n.count(".") == 1 or _lamina_has(n.rpartition(".")[0])
    )
    assert lacking, "every public JAX module loaded here has a Lamina counterpart"
    with _installed():
        for name in [*lacking[:5], "jax.no_such_module"]:
            with pytest.raises(ModuleNotFoundError) as err:
                importlib.import_module(name)
            target = "lamina" + name[3:]
            assert str(err.value) == (
                f"lamina.as_jax: {name} is not provided by Lamina (no module {target})"
            )
            assert err.value.name == name
            assert name not in sys.modules
        with pytest.raises(ModuleNotFoundError, match=r"jax\.experimental\.pallas is not prov"):
            _run_as_user("import jax.experimental.pallas")


def test_jax_s_private_modules_are_refused_to_user_code() -> None:
    with _installed():
        for source in (
            "from jax._src import api",
            "import jax._src.api",
            "from jax._src.sharding_impls import NamedSharding",
        ):
            with pytest.raises(ModuleNotFoundError) as err:
                _run_as_user(source)
            assert "JAX's private modules are never served" in str(err.value), source
        # ...while real JAX's own modules keep them, under their names, for the runtime.
        assert sys.modules["jax._src.core"].__name__ == "jax._src.core"


@pytest.mark.usefixtures("alias")
def test_jaxlib_stays_jaxlib() -> None:
    ns = _run_as_user("import jaxlib, jaxlib.xla_client")
    assert ns["jaxlib"] is jaxlib
    assert sys.modules["jaxlib"].__name__ == "jaxlib"


def test_uninstall_restores_every_entry_it_replaced() -> None:
    before = _jax_entries()
    original_import = builtins.__import__
    meta_path = list(sys.meta_path)
    lamina.as_jax.install()
    lamina.as_jax.install()  # a second call changes nothing
    try:
        assert lamina.as_jax.is_installed()
        assert sys.modules["jax"] is lamina
        _run_as_user("import jax.numpy, jax.scipy")
    finally:
        lamina.as_jax.uninstall()
    lamina.as_jax.uninstall()  # nothing left to undo
    after = _jax_entries()
    assert not lamina.as_jax.is_installed()
    assert all(after.get(n) is m for n, m in before.items())
    assert not [n for n, m in after.items() if m.__name__.startswith("lamina")]
    assert builtins.__import__ is original_import
    assert sys.meta_path == meta_path
    assert _run_as_user("import jax")["jax"] is jax


# ---- the runtime under the alias ----------------------------------------------------------------


@pytest.mark.usefixtures("alias")
def test_the_runtime_works_under_the_alias(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ns = _run_as_user(f"""
        import numpy as np
        import jax, jax.numpy as jnp
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

        x = jnp.arange(4.0)
        print(x)
        print(repr(jax.jit(lambda a: a * 2)(x)))
        print(jax.grad(lambda a: (a ** 2).sum())(x))
        print(jax.vmap(lambda a: a + 1)(x), float(x.sum()), np.asarray(x).dtype)
        print(jax.random.normal(jax.random.key(0), (2,)).shape)
        out = jax.jit(lambda a: jax.pure_callback(
            lambda h: np.asarray(h) * 3, jax.ShapeDtypeStruct((4,), jnp.float32), a))(x)
        print(out)
        jax.jit(lambda a: jax.debug.print("debug {{}}", a))(x)
        ref = jax.new_ref(jnp.zeros(2))
        ref[...] = jnp.ones(2)
        print(ref[...])
        compiled = jax.jit(lambda a: a.sum()).lower(x).compile()
        jax.aot.save(compiled, {str(tmp_path / "f.lamina")!r})
        print(jax.aot.load({str(tmp_path / "f.lamina")!r})(x))
        mesh = Mesh(np.array(jax.devices()[:4]), ("i",))
        rows = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("i")))
        print(rows, [s.data.shape for s in rows.addressable_shards])
        print(jax.device_put(rows, NamedSharding(mesh, P())).sharding.spec)
    """)
    assert capsys.readouterr().out.splitlines() == [
        "[0. 1. 2. 3.]",
        "Array([0., 2., 4., 6.], dtype=float32)",
        "[0. 2. 4. 6.]",
        "[1. 2. 3. 4.] 6.0 float32",
        "(2,)",
        "[0. 3. 6. 9.]",
        "debug [0. 1. 2. 3.]",
        "[1. 1.]",
        "6.0",
        "[0. 1. 2. 3. 4. 5. 6. 7.] [(2,), (2,), (2,), (2,)]",
        "P()",
    ]
    # The arrays jaxlib makes itself (shards) carry real JAX's avals: its C++ holds the class.
    shard = ns["rows"]._buf.addressable_shards[0].data  # the device array under Lamina's
    assert type(shard.aval) is JaxShapedArray


# ---- the entry points, and a cold start, in child processes -------------------------------------

PROGRAM = """\
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"  # after the alias
import numpy as np
import jax, jax.numpy as jnp
import lamina_runtime
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

print(jax.__name__, __name__, sys.argv[1:], sys.path[0] == os.path.dirname(__file__))
print(len(jax.devices()), jax.jit(jax.grad(lambda a: (a ** 2).sum()))(jnp.arange(3.0)))
rows = jax.device_put(jnp.arange(16.0), NamedSharding(Mesh(np.array(jax.devices()), "i"), P("i")))
print(rows.sum(), [s.data.shape for s in rows.addressable_shards][:2])
print(type(rows._buf.addressable_shards[0].data.aval).__module__)
print("runtime's module, hidden:", "jax.experimental.multihost_utils" in sys.modules)
print("compilations:", lamina_runtime.runtime().compilations > 0)
import lamina.as_jax
lamina.as_jax.uninstall()
import jax
print(jax.__name__, "jax.experimental.multihost_utils" in sys.modules)
"""


def _child(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"} | env
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=environ, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip


def test_python_m_lamina_as_jax_runs_a_script_cold(tmp_path: Path) -> None:
    """The script sets the device count after the alias is in: installing it starts nothing.
    A second run of the same script loads every executable from the persistent cache."""
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    cache = str(tmp_path / "cache")
    runs = [
        _child(["-m", "lamina.as_jax", str(script), "a", "-b"], Path.cwd(), LAMINA_CACHE_DIR=cache)
        for _ in range(2)
    ]
    first = runs[0]
    assert first.returncode == 0, first.stderr
    expected = [
        "lamina __main__ ['a', '-b'] True",
        "8 [0. 2. 4.]",
        "120.0 [(2,), (2,)]",
        "jax._src.core",
        "runtime's module, hidden: False",
        "compilations: True",
        "jax True",
    ]
    assert first.stdout.splitlines() == expected
    assert runs[1].stdout.splitlines() == [*expected[:5], "compilations: False", expected[6]]


def test_python_m_lamina_as_jax_m_runs_a_module(tmp_path: Path) -> None:
    (tmp_path / "user_main.py").write_text(
        "import sys, jax\nprint(jax.__name__, __name__, sys.argv[1:])\n"
    )
    done = _child(["-m", "lamina.as_jax", "-m", "user_main", "x", "--y"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "lamina __main__ ['x', '--y']\n"


def test_pytest_p_lamina_as_jax_installs_before_conftest_and_test_modules(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text("import jax\nassert jax.__name__ == 'lamina'\n")
    (tmp_path / "test_user.py").write_text(
        textwrap.dedent("""
            import sys
            import jax
            import jax.numpy as jnp

            def test_jax_is_lamina():
                assert jax is sys.modules["lamina"]

            def test_jit_and_grad():
                assert float(jax.jit(jax.grad(lambda x: x * x))(jnp.float32(3))) == 6.0
        """)
    )
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py"]
    done = _child([*args, "-p", "lamina.as_jax"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    without = _child(args, tmp_path)  # the conftest's assertion fails under real JAX
    assert without.returncode != 0


def test_python_m_lamina_as_jax_m_pytest_reaches_xdist_workers(tmp_path: Path) -> None:
    """`python -m lamina.as_jax -m pytest -n 2`: the tests run in two new interpreters, and
    `jax` is Lamina in them too (the alias is handed to pytest as its `-p` plugin)."""
    (tmp_path / "test_workers.py").write_text(
        textwrap.dedent("""
            import jax

            def test_one():
                assert jax.__name__ == "lamina"

            def test_two():
                assert jax.__name__ == "lamina"
        """)
    )
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "test_workers.py"]
    done = _child(["-m", "lamina.as_jax", *args], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_usage_errors() -> None:
    bare = _child(["-m", "lamina.as_jax"], Path.cwd())
    assert bare.returncode == 2
    assert bare.stderr.startswith("usage: python -m lamina.as_jax SCRIPT")
    unknown = _child(["-m", "lamina.as_jax", "--frobnicate"], Path.cwd())
    assert unknown.returncode == 2
    assert "unknown option --frobnicate" in unknown.stderr
