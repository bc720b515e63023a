"""The callback primitives (`pure_callback`, `io_callback`, `debug_callback`, `debug_print`) on
core alone: printed jaxprs against JAX, effects and DCE, NumPy reference evaluation, and the
jvp/transpose/batching rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import numpy as jnp
from lamina_core.callbacks._callbacks import (
    io_callback,
    io_effect,
    ordered_io_effect,
    pure_callback,
)
from lamina_core.callbacks._debugging import (
    debug_callback,
    debug_effect,
    debug_print,
    ordered_debug_effect,
)
from lamina_core.interpreters.dce import dce_jaxpr
from lamina_core.transforms._vmap import vmap

jax = pytest.importorskip("jax")  # the oracle: this package's own session runs without it
jjnp = jax.numpy
jax_io_callback = pytest.importorskip("jax.experimental").io_callback

f32 = np.float32


def _sin(x: Any) -> Any:
    return np.sin(x)


def _jax_sd(shape: tuple[int, ...]) -> Any:
    return jax.ShapeDtypeStruct(shape, np.float32)


def _pair(lamina_f: Callable[..., Any], jax_f: Callable[..., Any], *args: Any) -> tuple[str, str]:
    return str(lc.make_jaxpr(lamina_f)(*args)), str(jax.make_jaxpr(jax_f)(*args))


def test_pure_and_io_callback_print_as_jax() -> None:
    def lf(x: Any) -> Any:
        io_callback(_sin, lc.ShapeDtypeStruct((3,), f32), x)
        return pure_callback(_sin, lc.ShapeDtypeStruct((3,), f32), x, vmap_method="sequential")

    def jf(x: Any) -> Any:
        jax_io_callback(_sin, _jax_sd((3,)), x)
        return jax.pure_callback(_sin, _jax_sd((3,)), x, vmap_method="sequential")

    got, want = _pair(lf, jf, np.ones(3, f32))
    assert got == want


def test_debug_print_and_callback_print_as_jax() -> None:
    def lf(x: Any) -> Any:
        debug_print("{a} {}", x, a=2, ordered=True)
        debug_callback(print, x)
        return x

    def jf(x: Any) -> Any:
        jax.debug.print("{a} {}", x, a=2, ordered=True)
        jax.debug.callback(print, x)
        return x

    got, want = _pair(lf, jf, f32(1))
    assert got == want


def test_effects_and_dce() -> None:
    def f(x: Any) -> Any:
        pure_callback(_sin, lc.ShapeDtypeStruct((), f32), x)
        io_callback(_sin, lc.ShapeDtypeStruct((), f32), x)
        io_callback(_sin, lc.ShapeDtypeStruct((), f32), x, ordered=True)
        debug_print("{}", x)
        debug_print("{}", x, ordered=True)
        return x

    closed = lc.make_jaxpr(f)(f32(1))
    assert closed.jaxpr.effects == frozenset(
        {io_effect, ordered_io_effect, debug_effect, ordered_debug_effect}
    )
    jaxpr, _ = dce_jaxpr(closed.jaxpr)
    names = [e.primitive.name for e in jaxpr.eqns]
    assert names == ["io_callback", "io_callback", "debug_print", "debug_print"]


def test_reference_evaluation_calls_the_function(capsys: pytest.CaptureFixture[str]) -> None:
    out = pure_callback(lambda x, y: (x + y, x * y), (lc.ShapeDtypeStruct((2,), f32),) * 2,
                        jnp.ones(2), y=np.full(2, 3, f32))  # fmt: skip
    np.testing.assert_array_equal(np.asarray(out[0]), [4, 4])
    np.testing.assert_array_equal(np.asarray(out[1]), [3, 3])
    debug_print("{} {x}", 1, x=jnp.arange(2))
    debug_print("no placeholders", jnp.ones(1), skip_format_check=True)
    assert capsys.readouterr().out == "1 [0 1]\nno placeholders [1.]\n"


def test_result_checks() -> None:
    with pytest.raises(RuntimeError, match="Incorrect output dtype for return value #0"):
        pure_callback(lambda x: x.astype(np.int32), lc.ShapeDtypeStruct((2,), f32), jnp.ones(2))
    with pytest.raises(RuntimeError, match="Mismatched number of outputs from callback"):
        pure_callback(lambda x: (x, x), lc.ShapeDtypeStruct((2,), f32), jnp.ones(2))


def test_jvp_errors_match_jax() -> None:
    def msg(f: Callable[[], Any]) -> str:
        with pytest.raises(ValueError) as err:
            f()
        return str(err.value)

    lsd, jsd = lc.ShapeDtypeStruct((), f32), _jax_sd(())
    assert msg(lambda: lc.jvp(lambda x: pure_callback(_sin, lsd, x), (f32(1),), (f32(1),))) == msg(
        lambda: jax.jvp(lambda x: jax.pure_callback(_sin, jsd, x), (f32(1),), (f32(1),))
    )
    assert msg(lambda: lc.jvp(lambda x: io_callback(_sin, lsd, x), (f32(1),), (f32(1),))) == msg(
        lambda: jax.jvp(lambda x: jax_io_callback(_sin, jsd, x), (f32(1),), (f32(1),))
    )


def test_debug_print_under_jvp_grad_vmap_prints_as_jax() -> None:
    def lf(x: Any) -> Any:
        debug_print("x={}", x)
        return jnp.sin(x)

    def jf(x: Any) -> Any:
        jax.debug.print("x={}", x)
        return jjnp.sin(x)

    got, want = _pair(lc.grad(lf), jax.grad(jf), f32(1))
    assert got == want
    got, want = _pair(lambda x: lc.jvp(lf, (x,), (x,)), lambda x: jax.jvp(jf, (x,), (x,)), f32(1))
    assert got == want
    got, want = _pair(vmap(lf), jax.vmap(jf), np.ones(3, f32))
    assert got == want


@pytest.mark.parametrize(
    "method", ["sequential", "expand_dims", "broadcast_all", "legacy_vectorized"]
)
def test_pure_callback_vmap_jaxpr_and_values(method: str) -> None:
    def host(x: Any, y: Any) -> Any:
        return (np.asarray(x) * np.asarray(y)).astype(np.float32)

    def lf(x: Any, y: Any) -> Any:
        return pure_callback(host, lc.ShapeDtypeStruct((), f32), x, y, vmap_method=method)

    def jf(x: Any, y: Any) -> Any:
        return jax.pure_callback(host, _jax_sd(()), x, y, vmap_method=method)

    x, y = np.arange(3, dtype=f32), f32(2)
    got, want = _pair(vmap(lf, in_axes=(0, None)), jax.vmap(jf, in_axes=(0, None)), x, y)
    assert got == want
    np.testing.assert_array_equal(np.asarray(vmap(lf, in_axes=(0, None))(x, y)), x * y)


def test_vmap_errors() -> None:
    with pytest.raises(NotImplementedError, match="Got vmap_method=None"):
        vmap(lambda x: pure_callback(_sin, lc.ShapeDtypeStruct((), f32), x))(np.ones(2, f32))
    with pytest.raises(ValueError, match="vmap_method must be on of the allowed methods"):
        pure_callback(_sin, lc.ShapeDtypeStruct((), f32), f32(1), vmap_method="loop")
    with pytest.raises(ValueError, match=r"Cannot `vmap` ordered IO callback\."):
        vmap(lambda x: io_callback(_sin, lc.ShapeDtypeStruct((), f32), x, ordered=True))(
            np.ones(2, f32)
        )


def test_debug_callback_per_batch_element() -> None:
    seen: list[Any] = []
    vmap(lambda x: debug_callback(lambda v: seen.append(float(np.asarray(v))), x))(
        np.arange(3, dtype=f32)
    )
    assert seen == [0.0, 1.0, 2.0]
    with pytest.raises(TypeError, match=r"first argument to jax\.debug\.callback must be callable"):
        debug_callback(3)  # type: ignore[arg-type]  # the error under test


@pytest.mark.parametrize("saveable", [False, True])
def test_debug_print_under_remat_grad_prints_as_jax(saveable: bool) -> None:
    from lamina_core import checkpoint_policies as lcp

    def lf(x: Any) -> Any:
        debug_print("x={}", x)
        return jnp.sin(jnp.sin(x))

    def jf(x: Any) -> Any:
        jax.debug.print("x={}", x)
        return jjnp.sin(jjnp.sin(x))

    lp = lcp.everything_saveable if saveable else None
    jp = jax.checkpoint_policies.everything_saveable if saveable else None
    got, want = _pair(
        lc.grad(lc.checkpoint(lf, policy=lp)), jax.grad(jax.checkpoint(jf, policy=jp)), f32(1)
    )
    assert got == want
