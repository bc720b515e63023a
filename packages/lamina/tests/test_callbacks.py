"""Host callbacks (`pure_callback`, `experimental.io_callback`, `debug.print/callback`) against
JAX 0.10.2: printed jaxprs, lowered text, values under jit and vmap, and errors."""

from __future__ import annotations

import gc
import io
import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import lamina
import lamina.numpy as ljnp

BACKENDS: list[tuple[Any, Any]] = [(jax, jjnp), (lamina, ljnp)]


def _sin(x: Any) -> Any:
    return np.sin(x)


def _program(lib: Any, np_: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        y = lib.pure_callback(_sin, lib.ShapeDtypeStruct(x.shape, x.dtype), x)
        lib.debug.print("x={x} y={}", y, x=x)
        return y * 2

    return f


def _both(make: Callable[[Any, Any], Callable[..., Any]]) -> tuple[Any, Any]:
    return make(jax, jjnp), make(lamina, ljnp)


def test_printed_jaxpr_matches_jax() -> None:
    jf, lf = _both(_program)
    x = np.ones(3, np.float32)
    assert str(lamina.make_jaxpr(lf)(x)) == str(jax.make_jaxpr(jf)(x))


def test_dce_keeps_io_callback_and_drops_unused_pure_callback() -> None:
    def make(lib: Any, np_: Any) -> Callable[[Any], Any]:
        def h(x: Any) -> Any:
            sd = lib.ShapeDtypeStruct(x.shape, x.dtype)
            lib.experimental.io_callback(_sin, sd, x)
            lib.pure_callback(_sin, sd, x)
            return x

        return h

    jf, lf = _both(make)
    x = np.ones(3, np.float32)
    assert str(lamina.make_jaxpr(lf)(x)) == str(jax.make_jaxpr(jf)(x))
    assert lamina.jit(lf).lower(x).as_text() == jax.jit(jf).lower(x).as_text()


def test_lowered_text_matches_jax() -> None:
    jf, lf = _both(_program)
    x = np.ones(3, np.float32)
    assert lamina.jit(lf).lower(x).as_text() == jax.jit(jf).lower(x).as_text()


@pytest.mark.parametrize("ordered", [False, True])
def test_ordered_lowered_text_matches_jax(ordered: bool) -> None:
    def make(lib: Any, np_: Any) -> Callable[[Any], Any]:
        def g(x: Any) -> Any:
            sd = lib.ShapeDtypeStruct(x.shape, x.dtype)
            y = lib.experimental.io_callback(_sin, sd, x, ordered=ordered)
            lib.experimental.io_callback(lambda: None, None, ordered=ordered)
            return y

        return g

    def make_print(lib: Any, np_: Any) -> Callable[[Any], Any]:
        def g(x: Any) -> Any:
            lib.debug.print("{}", x, ordered=ordered)
            return x + 1

        return g

    x = np.ones(3, np.float32)
    for maker in (make, make_print):
        jf, lf = _both(maker)
        assert lamina.jit(lf).lower(x).as_text() == jax.jit(jf).lower(x).as_text()
        np.testing.assert_allclose(np.asarray(lamina.jit(lf)(x)), np.asarray(jax.jit(jf)(x)))


def test_debug_print_under_jit_prints_runtime_values(capfd: pytest.CaptureFixture[str]) -> None:
    _, lf = _both(_program)
    x = np.arange(3, dtype=np.float32)
    out = lamina.jit(lf)(x)
    lamina.effects_barrier()
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin(x), rtol=1e-6)
    printed = capfd.readouterr().out
    assert f"x={x} y={np.sin(x)}" in printed


def test_ordered_prints_in_program_order(capfd: pytest.CaptureFixture[str]) -> None:
    def f(x: Any) -> Any:
        for i in range(5):
            lamina.debug.print("step {} {}", i, x, ordered=True)
        return x + 1

    lamina.jit(f)(np.float32(2.0))
    lamina.effects_barrier()
    assert capfd.readouterr().out == "".join(f"step {i} 2.0\n" for i in range(5))


def test_eager_debug_print(capsys: pytest.CaptureFixture[str]) -> None:
    lamina.debug.print("{a} and {b}", a=ljnp.ones(2), b=3)
    assert capsys.readouterr().out == "[1. 1.] and 3\n"


def test_debug_print_format_errors_match_jax() -> None:
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [((1,), {}), ((), {"y": 1})]
    for args, kwargs in cases:
        with pytest.raises(ValueError) as want:
            jax.debug.print("x", *args, **kwargs)
        with pytest.raises(ValueError) as got:
            lamina.debug.print("x", *args, **kwargs)
        assert str(got.value) == str(want.value)
    with pytest.raises(IndexError):
        lamina.debug.print("{} {}", 1)


def test_debug_callback_under_grad_and_vmap_matches_jax() -> None:
    def make(lib: Any, np_: Any) -> Callable[[Any], Any]:
        def g(x: Any) -> Any:
            lib.debug.print("x={}", x)
            return np_.sin(x)

        return g

    jf, lf = _both(make)
    assert str(lamina.make_jaxpr(lamina.grad(lf))(1.0)) == str(jax.make_jaxpr(jax.grad(jf))(1.0))
    xs = np.ones(2, np.float32)
    assert str(lamina.make_jaxpr(lamina.vmap(lf))(xs)) == str(jax.make_jaxpr(jax.vmap(jf))(xs))


def test_debug_callback_sees_values() -> None:
    seen: list[Any] = []

    def f(x: Any) -> Any:
        lamina.debug.callback(lambda v, k: seen.append((np.asarray(v).tolist(), k)), x, k="s")
        return x * 2

    lamina.jit(f)(np.arange(2, dtype=np.float32))
    lamina.effects_barrier()
    lamina.vmap(f)(np.arange(2, dtype=np.float32))
    assert seen == [([0.0, 1.0], "s"), (0.0, "s"), (1.0, "s")]


@pytest.mark.parametrize(
    "method",
    ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized"],
)
def test_pure_callback_vmap_methods_match_jax(method: str) -> None:
    shapes: dict[str, list[tuple[tuple[int, ...], tuple[int, ...]]]] = {"jax": [], "lamina": []}

    def make(lib: Any, np_: Any) -> Callable[[Any, Any], Any]:
        key = "jax" if lib is jax else "lamina"

        def host(x: Any, y: Any) -> Any:
            shapes[key].append((np.shape(x), np.shape(y)))
            return (np.asarray(x) + np.asarray(y)).astype(np.float32)

        def f(x: Any, y: Any) -> Any:
            sd = lib.ShapeDtypeStruct(x.shape, x.dtype)
            return lib.pure_callback(host, sd, x, y, vmap_method=method)

        batched: Callable[[Any, Any], Any] = lib.vmap(f, in_axes=(0, None))
        return batched

    jf, lf = _both(make)
    x, y = np.arange(4, dtype=np.float32), np.float32(10)
    np.testing.assert_array_equal(np.asarray(lamina.jit(lf)(x, y)), np.asarray(jax.jit(jf)(x, y)))
    assert shapes["lamina"] == shapes["jax"]
    assert str(lamina.make_jaxpr(lf)(x, y)) == str(jax.make_jaxpr(jf)(x, y))


def test_pure_callback_errors_match_jax() -> None:
    jf, lf = _both(_program)
    with pytest.raises(ValueError) as want:
        jax.grad(lambda x: jf(x).sum())(np.ones(3, np.float32))
    with pytest.raises(ValueError) as got:
        lamina.grad(lambda x: lf(x).sum())(np.ones(3, np.float32))
    assert str(got.value) == str(want.value)
    for lib in (jax, lamina):
        with pytest.raises(NotImplementedError, match="vmap_method=None"):
            lib.vmap(
                lambda x, lib=lib: lib.pure_callback(_sin, lib.ShapeDtypeStruct((), x.dtype), x)
            )(np.ones(2, np.float32))
    jax_sd = jax.ShapeDtypeStruct((), np.float32)  # type: ignore[no-untyped-call]  # jax's stub
    with pytest.raises(ValueError) as want:
        jax.pure_callback(_sin, jax_sd, 1.0, vmap_method="bad")
    with pytest.raises(ValueError) as got:
        lamina.pure_callback(_sin, lamina.ShapeDtypeStruct((), np.float32), 1.0, vmap_method="bad")
    assert str(got.value) == str(want.value)


def test_io_callback_ordered_runs_in_order() -> None:
    log: list[int] = []

    def f(x: Any) -> Any:
        for i in range(4):
            lamina.experimental.io_callback(lambda i=i: log.append(i), None, ordered=True)
        return x

    lamina.jit(f)(np.float32(0))
    lamina.jit(f)(np.float32(1))
    assert log == [0, 1, 2, 3, 0, 1, 2, 3]
    with pytest.raises(ValueError, match=r"Cannot `vmap` ordered IO callback\."):
        lamina.vmap(
            lambda x: lamina.experimental.io_callback(
                _sin, lamina.ShapeDtypeStruct((), np.float32), x, ordered=True
            )
        )(np.ones(2, np.float32))


def test_callback_result_mismatch_raises() -> None:
    f = lamina.jit(
        lambda x: lamina.pure_callback(
            lambda v: v[:1], lamina.ShapeDtypeStruct((3,), np.float32), x
        )
    )
    with pytest.raises(Exception, match="Incorrect output shape for return value #0"):
        np.asarray(f(np.ones(3, np.float32)))


@pytest.mark.slow
def test_many_calls_leak_neither_threads_nor_memory() -> None:
    f = lamina.jit(
        lambda x: lamina.pure_callback(_sin, lamina.ShapeDtypeStruct((4,), np.float32), x) + 1
    )
    x = np.ones(4, np.float32)
    for _ in range(200):
        f(x).block_until_ready()
    gc.collect()
    threads = threading.active_count()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for _ in range(10_000):
        f(x).block_until_ready()
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert threading.active_count() <= threads
    assert grown < 2_000_000


def test_host_callback_executables_skip_every_cache(tmp_path: Path) -> None:
    from lamina_runtime import CompilationCache, Runtime
    from lamina_runtime.compilation_cache import ENTRY_SUFFIX

    def module(fun: Callable[[Any], Any]) -> Any:
        sd = lamina.ShapeDtypeStruct((2,), np.float32)
        return lamina.jit(lambda x: lamina.pure_callback(fun, sd, x)).lower(np.ones(2, np.float32))

    runtime = Runtime(CompilationCache(tmp_path))
    x = np.arange(2, dtype=np.float32)
    outs = []
    for fun in (np.sin, np.cos):  # the same module text, other functions
        lowered = module(fun)._module
        executable = runtime.compile(lowered)
        (out,) = executable.run(executable.put_consts(lowered.const_args.values), [x])
        outs.append(np.asarray(out))
    np.testing.assert_allclose(outs[0], np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(outs[1], np.cos(x), rtol=1e-6)
    assert (runtime.compilations, runtime.persistent_hits) == (2, 0)
    assert list(tmp_path.glob(f"*{ENTRY_SUFFIX}")) == []


def test_breakpoint_opens_pdb_with_runtime_values(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("p y\nc\n"))

    def f(x: Any) -> Any:
        y = x * 2
        lamina.debug.breakpoint()
        return y

    out = lamina.jit(f)(np.arange(3, dtype=np.float32))
    lamina.effects_barrier()
    assert "array([0., 2., 4.], dtype=float32)" in capsys.readouterr().out
    np.testing.assert_array_equal(np.asarray(out), [0, 2, 4])
    with pytest.raises(ValueError, match="mutually exclusive"):
        lamina.debug.breakpoint(ordered=True, token=np.float32(1))


def test_debug_namespace_names() -> None:
    names = {
        "DebugEffect", "OrderedDebugEffect", "breakpoint", "callback", "inspect_array_sharding",
        "log", "print", "visualize_array_sharding", "visualize_sharding",
    }  # fmt: skip
    assert names <= set(lamina.debug.__all__)
    assert "pure_callback" in lamina.__all__
    assert "io_callback" in lamina.experimental.__all__


@pytest.mark.parametrize(
    ("spec", "shape"), [(("x", "y"), (8, 4)), (("x",), (8, 4)), ((None, "y"), (8, 4))]
)
def test_visualize_array_sharding_prints_as_jax(
    spec: tuple[Any, ...], shape: tuple[int, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    # Drawn with rich, as JAX's: the oracle dependencies bring it (tests_all); a package's own
    # session, without them, skips this.
    pytest.importorskip("rich")
    texts = []
    libs: list[tuple[Any, Any, Any]] = [
        (jax, jax.sharding.PartitionSpec, jax.sharding.NamedSharding),
        (lamina, lamina.sharding.PartitionSpec, lamina.sharding.NamedSharding),
    ]
    for lib, P, Named in libs:
        mesh = lib.make_mesh((4, 2), ("x", "y"))
        x = lib.device_put(np.zeros(shape, np.float32), Named(mesh, P(*spec)))
        lib.debug.visualize_array_sharding(x)
        texts.append(capsys.readouterr().out)
    assert texts[1] == texts[0]
    assert "CPU 0" in texts[1]


def test_inspect_array_sharding() -> None:
    seen: list[Any] = []
    x = lamina.numpy.ones(3)
    lamina.debug.inspect_array_sharding({"a": x}, callback=seen.append)
    assert seen == [x.sharding]
    with pytest.raises(NotImplementedError, match="concrete arrays only"):
        lamina.jit(lambda v: lamina.debug.inspect_array_sharding(v, callback=print))(x)


def test_visualize_sharding_takes_one_or_two_dimensions() -> None:
    pytest.importorskip("rich")  # as JAX, the missing library is reported first
    x = lamina.numpy.ones(3)
    with pytest.raises(ValueError, match="only works for shapes with 1 and 2 dimensions"):
        lamina.debug.visualize_sharding((2, 2, 2), x.sharding)


def test_io_callback_vmap_matches_jax() -> None:
    def make(lib: Any, np_: Any) -> Callable[..., Any]:
        io = jax.experimental.io_callback if lib is jax else lamina.experimental.io_callback

        def f(x: Any, y: Any) -> Any:
            return io(np.add, lib.ShapeDtypeStruct((), np.float32), x, y)

        batched: Callable[..., Any] = lib.vmap(f, in_axes=(0, None))
        return batched

    jf, lf = _both(make)
    x, y = np.arange(3, dtype=np.float32), np.float32(1)
    assert str(lamina.make_jaxpr(lf)(x, y)) == str(jax.make_jaxpr(jf)(x, y))
    np.testing.assert_array_equal(np.asarray(lamina.jit(lf)(x, y)), x + 1)


def test_eager_callbacks_return_device_arrays_as_jax() -> None:
    sd = lamina.ShapeDtypeStruct((2,), np.float32)
    out = lamina.pure_callback(np.sin, sd, ljnp.ones(2))
    assert isinstance(out, lamina.Array)
    np.testing.assert_allclose(np.asarray(out), np.sin(np.ones(2)), rtol=1e-6)
    out = lamina.experimental.io_callback(np.cos, sd, ljnp.ones(2))
    assert isinstance(out, lamina.Array)
