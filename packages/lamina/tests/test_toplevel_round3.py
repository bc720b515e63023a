"""JAX's remaining top-level names (`NamedSharding`, `reshard`, `Shard`, `smap`,
`fwd_and_bwd`, `ds`, `memory`), the additions to `jax.sharding`, `print_saved_residuals`, and
the modules `monitoring`, `profiler`, `dlpack`, `ffi` and `lib`, each against JAX; and that
`import lamina` loads none of their modules."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import numpy as np
import pytest

import lamina
import lamina.numpy as lnp

pytestmark = pytest.mark.oracle

APIS = pytest.mark.parametrize("api", [jax, lamina], ids=["jax", "lamina"])
MULTIDEVICE = pytest.mark.skipif(
    len(lamina.devices()) < 4 or jax.device_count() < 4,
    reason="needs 4 devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)",
)
LAZY_MODULES = (
    "lamina._dslice",
    "lamina._smap",
    "lamina._fwd_and_bwd",
    "lamina._axis_casts",
    "lamina._sharding_types",
    "lamina._saved_residuals",
    "lamina.monitoring",
    "lamina.profiler",
    "lamina.dlpack",
    "lamina.ffi",
    "lamina.lib",
    "lamina_runtime.profiler",
    "lamina_runtime.dlpack",
    "lamina_runtime.ffi",
    "lamina_runtime._bridge_tools",
)


def test_import_lamina_loads_none_of_the_new_modules() -> None:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import lamina"],
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()}
    assert "lamina" in imported
    assert imported.isdisjoint(LAZY_MODULES), sorted(imported & set(LAZY_MODULES))


@pytest.mark.parametrize("name", ["ds", "fwd_and_bwd", "smap", "monitoring", "lib"])
def test_lazy_names_are_listed_by_dir(name: str) -> None:
    assert name in dir(lamina)
    assert name in lamina.__all__


def test_aliases_are_the_sharding_modules_objects() -> None:
    assert lamina.NamedSharding is lamina.sharding.NamedSharding
    assert lamina.reshard is lamina.sharding.reshard
    shard = lamina.device_put(lnp.arange(4.0)).addressable_shards[0]
    assert isinstance(shard, lamina.Shard)


def test_memory_space_names_as_jax() -> None:
    assert [s.name for s in lamina.memory.Space] == [s.name for s in jax.memory.Space]
    assert repr(lamina.memory.Space.Host) == repr(jax.memory.Space.Host)


# --- ds -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [(None,), (3,), (2, 5), (1, 4, 2), (0, 0)],
    ids=["none", "size", "start", "stride", "empty"],
)
def test_ds_builds_jax_slices(args: tuple[Any, ...]) -> None:
    got, want = lamina.ds(*args), jax.ds(*args)
    assert type(got).__name__ == type(want).__name__
    assert repr(got) == repr(want)


def test_ds_errors_as_jax() -> None:
    cases: list[tuple[Any, ...]] = [(1, 2, -1), (1, 2, 1.5)]
    for args in cases:
        with pytest.raises(ValueError) as want:
            jax.ds(*args)
        with pytest.raises(ValueError) as got:
            lamina.ds(*args)
        assert str(got.value) == str(want.value)


def test_ds_with_traced_start_is_a_pytree_leaf() -> None:
    def leaf_counts(api: Any) -> list[int]:
        counts: list[int] = []

        def f(i: Any) -> Any:
            counts.append(len(api.tree_util.tree_leaves(api.ds(i, 2))))
            moved = api.tree_util.tree_map(lambda x: x + 1, api.ds(i, 2))
            return moved.start

        counts.append(len(api.tree_util.tree_leaves(api.ds(3, 2))))
        counts.append(int(api.jit(f)(3)))
        return counts

    assert leaf_counts(lamina) == leaf_counts(jax) == [0, 1, 4]


# --- fwd_and_bwd --------------------------------------------------------------------------------


def _matmul(x: Any, w: Any) -> Any:
    return x @ w


@APIS
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
@pytest.mark.parametrize("jitted", [True, False])
def test_fwd_and_bwd_gives_vjp_values(api: Any, argnums: Any, jitted: bool) -> None:
    rng = np.random.default_rng(0)
    x, w, ct = (rng.standard_normal((3, 3)).astype(np.float32) for _ in range(3))
    fwd, bwd = api.fwd_and_bwd(_matmul, argnums=argnums, jitted=jitted)
    y, res = fwd(x, w)
    got = bwd(res, ct)
    want_x, want_w = ct @ w.T, x.T @ ct
    np.testing.assert_allclose(np.asarray(y), x @ w, rtol=1e-5)
    expected = {0: want_x, 1: want_w}
    if isinstance(argnums, int):
        np.testing.assert_allclose(np.asarray(got), expected[argnums], rtol=1e-5)
    else:
        for g, e in zip(got, (want_x, want_w), strict=True):
            np.testing.assert_allclose(np.asarray(g), e, rtol=1e-5)


def test_fwd_and_bwd_backward_compiles_once() -> None:
    x = lnp.ones((4, 4))
    fwd, bwd = lamina.fwd_and_bwd(_matmul, argnums=(0, 1))
    monitoring = lamina.monitoring
    compiles: list[str] = []

    def count(event: str, duration: float, **kwargs: Any) -> None:
        compiles.append(str(kwargs.get("fun_name")))

    monitoring.register_event_duration_secs_listener(count)
    try:
        for _ in range(3):
            _, res = fwd(x, x)
            bwd(res, x)
    finally:
        monitoring.unregister_event_duration_listener(count)
    assert len([c for c in compiles if "bwd" in c]) <= 1
    assert len(compiles) <= 2


@APIS
def test_fwd_and_bwd_has_aux(api: Any) -> None:
    fwd, bwd = api.fwd_and_bwd(lambda x: (x * x, x + 1), argnums=0, has_aux=True)
    y, res, aux = fwd(np.float32(3.0))
    assert float(y) == 9.0 and float(aux) == 4.0
    assert float(bwd(res, np.float32(1.0))) == 6.0


def test_vjp_pullback_is_a_pytree_of_its_residuals() -> None:
    _, pullback = lamina.vjp(lambda x, y: lnp.sum(lnp.sin(x) * y), lnp.ones(3), lnp.ones(3))
    leaves, tree = lamina.tree_util.tree_flatten(pullback)
    again = lamina.tree_util.tree_unflatten(tree, leaves)
    for a, b in zip(pullback(1.0), again(1.0), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert leaves


# --- print_saved_residuals ----------------------------------------------------------------------


def _printed(api: Any, f: Callable[..., Any], *args: Any) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        api.ad_checkpoint.print_saved_residuals(f, *args)
    return buf.getvalue()


def _residual_programs(api: Any, np_: Any) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    name = api.ad_checkpoint.checkpoint_name

    def two_args(x: Any, y: Any) -> Any:
        return np_.sum(np_.sin(x) * np_.cos(y))

    def named(d: Any) -> Any:
        return np_.sum(name(np_.sin(d["a"]), "foo") * np_.exp(d["b"]))

    def jitted(x: Any) -> Any:
        return api.jit(np_.sin)(x) * x

    return {
        "two_args": (two_args, (np_.ones(3), np_.ones(3))),
        "named": (named, ({"a": np_.ones(2), "b": np_.ones(2)},)),
        "jitted": (jitted, (2.0,)),
    }


@pytest.mark.parametrize("case", ["two_args", "named", "jitted"])
def test_print_saved_residuals_prints_as_jax(case: str) -> None:
    f_jax, args_jax = _residual_programs(jax, jnp)[case]
    f_lam, args_lam = _residual_programs(lamina, lnp)[case]
    # Source lines differ (two functions); compare what each residual is and where from.
    want = _printed(jax, f_jax, *args_jax).replace(str(f_jax.__code__.co_firstlineno), "L")
    got = _printed(lamina, f_lam, *args_lam)
    assert [line.split(" from ")[0] for line in got.splitlines()] == [
        line.split(" from ")[0] for line in want.splitlines()
    ]
    assert [line.split(":")[-1] for line in got.splitlines()] == [
        line.split(":")[-1] for line in want.splitlines()
    ]


# --- sharding -----------------------------------------------------------------------------------


def test_abstract_device_prints_as_jax() -> None:
    args: dict[str, Any] = dict(device_kind="cpu", num_cores=None, platform="cpu")
    got, want = lamina.sharding.AbstractDevice(**args), jax.sharding.AbstractDevice(**args)
    assert repr(got) == repr(want)
    assert got == lamina.sharding.AbstractDevice(**args)


def test_manual_axis_type_is_interned_and_checked_as_jax() -> None:
    for api in (jax, lamina):
        m = api.sharding.ManualAxisType
        assert m(varying=frozenset({"x"})) is m(varying=frozenset({"x"}))
        assert m(varying=frozenset({"x"})).update(reduced=frozenset({"y"})) is m(
            varying=frozenset({"x"}), reduced=frozenset({"y"})
        )
    jax_type: Any = jax.sharding.ManualAxisType  # untyped in JAX
    j = jax_type(varying=frozenset({"x"}), unreduced=frozenset({"y"}))
    lam = lamina.sharding.ManualAxisType(varying=frozenset({"x"}), unreduced=frozenset({"y"}))
    assert repr(lam) == repr(j)
    with pytest.raises(ValueError) as want:
        jax_type(varying=frozenset({"x"}), reduced=frozenset({"x"}))
    with pytest.raises(ValueError) as got:
        lamina.sharding.ManualAxisType(varying=frozenset({"x"}), reduced=frozenset({"x"}))
    assert str(got.value) == str(want.value)


def test_make_single_device_sharding_places_on_the_device() -> None:
    dev = lamina.devices()[0]
    s = lamina.sharding.make_single_device_sharding(dev)
    assert s == lamina.sharding.SingleDeviceSharding(dev)
    x = lamina.device_put(np.arange(3.0), s)
    assert x.devices() == {dev}


def test_use_abstract_mesh_is_the_context_mesh() -> None:
    mesh = lamina.sharding.AbstractMesh((1,), ("x",))
    with lamina.sharding.use_abstract_mesh(mesh):
        assert lamina.sharding.get_abstract_mesh() == mesh


@APIS
def test_explicit_axes_without_a_mesh_raises_as_jax(api: Any) -> None:
    f = api.sharding.explicit_axes(lambda x: x, in_sharding=api.P())
    with pytest.raises(ValueError, match="Context mesh cannot be empty"):
        f(np.ones(2))


@APIS
def test_auto_axes_without_a_mesh_runs_the_function(api: Any) -> None:
    f = api.sharding.auto_axes(lambda x: x * 2, out_sharding=api.P())
    assert float(f(np.float32(2.0))) == 4.0
    with pytest.raises(TypeError, match="Missing required keyword argument: 'out_sharding'"):
        api.sharding.auto_axes(lambda x: x)(1.0)


@MULTIDEVICE
def test_auto_and_explicit_axes_types_as_jax() -> None:
    def run(api: Any, np_: Any) -> list[str]:
        mesh = api.make_mesh((4,), ("x",), axis_types=(api.sharding.AxisType.Explicit,))
        seen: list[str] = []
        with api.set_mesh(mesh):
            x = api.device_put(np_.arange(8.0), api.P("x"))

            def body(y: Any) -> Any:
                seen.append(str(api.typeof(y)))
                return y * 2

            inner = api.sharding.auto_axes(body)

            def outer_body(y: Any) -> Any:
                return inner(y, out_sharding=api.P("x"))

            out = api.jit(outer_body)(x)
            seen.append(str(api.typeof(out)))
            seen.append(str(np.asarray(out)))
        return seen

    assert run(lamina, lnp) == run(jax, jnp)


@MULTIDEVICE
def test_smap_values_as_jax() -> None:
    def run(api: Any, np_: Any) -> Any:
        mesh = api.make_mesh((4,), ("x",), axis_types=(api.sharding.AxisType.Auto,))
        with api.set_mesh(mesh):
            f = api.smap(lambda a, b: a * 2 + b, in_axes=(0, None), out_axes=0, axis_name="x")
            return np.asarray(api.jit(f)(np_.arange(8.0), np_.float32(1.0)))

    np.testing.assert_array_equal(run(lamina, lnp), run(jax, jnp))


@APIS
def test_smap_checks_its_arguments_as_jax(api: Any) -> None:
    with pytest.raises(TypeError, match="smap axis_name should be a `str`"):
        api.smap(lambda x: x, in_axes=0, out_axes=0, axis_name=("x",))
    with pytest.raises(TypeError, match="smap in_axes must be an int, None"):
        api.smap(lambda x: x, in_axes=[0], out_axes=0, axis_name="x")
    with pytest.raises(TypeError, match="smap out_axes must be an int, None"):
        api.smap(lambda x: x, in_axes=0, out_axes="a", axis_name="x")


# --- monitoring, profiler, dlpack, ffi, lib -----------------------------------------------------


@pytest.fixture
def events() -> Iterator[list[tuple[str, ...]]]:
    seen: list[tuple[str, ...]] = []

    def on_event(event: str, **kwargs: Any) -> None:
        seen.append(("event", event, *map(str, kwargs.values())))

    def on_duration(event: str, duration: float, **kwargs: Any) -> None:
        seen.append(("duration", event, *map(str, kwargs.values())))

    def on_span(event: str, start: float, end: float, **kwargs: Any) -> None:
        assert end >= start
        seen.append(("span", event, *map(str, kwargs.values())))

    def on_scalar(event: str, value: float, **kwargs: Any) -> None:
        seen.append(("scalar", event, str(value)))

    m = lamina.monitoring
    m.register_event_listener(on_event)
    m.register_event_duration_secs_listener(on_duration)
    m.register_event_time_span_listener(on_span)
    m.register_scalar_listener(on_scalar)
    yield seen
    m.unregister_event_listener(on_event)
    m.unregister_event_duration_listener(on_duration)
    m.unregister_event_time_span_listener(on_span)
    m.unregister_scalar_listener(on_scalar)


def test_monitoring_calls_each_kind_of_listener(events: list[tuple[str, ...]]) -> None:
    m = lamina.monitoring
    m.record_event("/a", k="v")
    m.record_event_duration_secs("/b", 0.5, k=1)
    m.record_event_time_span("/c", 1.0, 2.0)
    m.record_scalar("/d", 3)
    assert events == [
        ("event", "/a", "v"),
        ("duration", "/b", "1"),
        ("span", "/c"),
        ("scalar", "/d", "3"),
    ]


def test_unregistering_an_unknown_listener_fails_as_jax() -> None:
    for api in (jax, lamina):
        with pytest.raises(AssertionError):
            api.monitoring.unregister_event_listener(lambda event: None)


def test_compiling_records_jaxs_backend_compile_event(events: list[tuple[str, ...]]) -> None:
    def scale_and_shift(x: Any) -> Any:
        return x * 3 + 1

    lamina.jit(scale_and_shift)(np.arange(5.0, dtype=np.float32) + 0.25)
    compile_events = [e for e in events if e[1] == "/jax/core/compile/backend_compile_duration"]
    assert [e[0] for e in compile_events] == ["duration", "span"]
    assert compile_events[0][2] == "jit(scale_and_shift)"


def test_profiler_traces_lamina_programs(tmp_path: Any) -> None:
    with lamina.profiler.trace(str(tmp_path)), lamina.profiler.TraceAnnotation("step"):
        lamina.jit(lambda x: x + 1)(np.ones(3)).block_until_ready()
    assert any(p.is_file() for p in tmp_path.rglob("*.xplane.pb"))
    profile = lamina.profiler.device_memory_profile()
    assert isinstance(profile, bytes)
    assert len(profile) > 0


def test_profiler_names_are_jaxs() -> None:
    assert sorted(n for n in dir(lamina.profiler) if not n.startswith("_")) == sorted(
        n for n in dir(jax.profiler) if not n.startswith("_")
    )


def test_from_dlpack_shares_numpy_memory_as_jax() -> None:
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = lamina.dlpack.from_dlpack(host)
    want = jax.dlpack.from_dlpack(host)
    assert isinstance(got, lamina.Array)
    assert str(lamina.typeof(got)) == str(jax.typeof(want))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    back = lamina.dlpack.from_dlpack(got)
    np.testing.assert_array_equal(np.asarray(back), host)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "bool", "complex64", "float8_e4m3fn"])
def test_dlpack_supported_dtypes_as_jax(dtype: str) -> None:
    import ml_dtypes  # noqa: F401  (registers bfloat16 and float8 with NumPy)

    dt = jnp.dtype(dtype)
    assert lamina.dlpack.is_supported_dtype(dt) == jax.dlpack.is_supported_dtype(dt)


def test_ffi_registration_goes_to_xla_and_names_match_jax() -> None:
    assert lamina.ffi.include_dir() == jax.ffi.include_dir()
    with pytest.raises(ValueError) as want:
        jax.ffi.register_ffi_type_id("t", object())
    with pytest.raises(ValueError) as got:
        lamina.ffi.register_ffi_type_id("t", object())
    assert str(got.value) == str(want.value)
    # `ffi_call` and the lowering helpers: test_ffi_call.py.
    assert sorted(n for n in dir(lamina.ffi) if not n.startswith("_")) >= sorted(
        n for n in dir(jax.ffi) if not n.startswith("_")
    )


def test_lib_names_the_jaxlib_version() -> None:
    jax_lib: Any = jax.lib  # its __version__ is not re-exported for type checkers
    assert lamina.lib.__version__ == jax_lib.__version__


@MULTIDEVICE
def test_smap_without_in_axes_on_auto_axes_raises_as_jax() -> None:
    def message(api: Any, np_: Any) -> str:
        mesh = api.make_mesh((4,), ("x",), axis_types=(api.sharding.AxisType.Auto,))
        with api.set_mesh(mesh), pytest.raises(TypeError) as err:
            api.smap(lambda a: a, out_axes=0, axis_name="x")(np_.arange(8.0))
        return str(err.value)

    assert message(lamina, lnp) == message(jax, jnp)
