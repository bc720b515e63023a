"""Array methods and properties that mirror `jax.Array`'s (on tracers; the umbrella's tests run
them on device arrays): printed jaxprs and values against JAX, bit-level `view`/`byteswap`
against NumPy, and JAX's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
import lamina_core.numpy as lnp
from lamina_core.testing import Oracle

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle

F = np.arange(12.0, dtype=np.float32).reshape(3, 4) - 5.5
I32 = np.arange(5, dtype=np.int32) * 257
C = (F + 2j * F[::-1]).astype(np.complex64)

Program = Callable[[Any, Any], Callable[..., Any]]
METHODS: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "argpartition": (lambda jnp, lax: lambda x: x.argpartition(1), (F,)),
    "diagonal": (lambda jnp, lax: lambda x: x.diagonal(1), (F,)),
    "ptp": (lambda jnp, lax: lambda x: x.ptp(axis=1, keepdims=True), (F,)),
    "take": (lambda jnp, lax: lambda x: x.take(jnp.array([0, 5, 11])), (F,)),
    "trace": (lambda jnp, lax: lambda x: x.trace(offset=-1), (F,)),
    "mT": (lambda jnp, lax: lambda x: x.mT, (F,)),
    "byteswap_f32": (lambda jnp, lax: lambda x: x.byteswap(), (F,)),
    "byteswap_c64": (lambda jnp, lax: lambda x: x.byteswap(), (C,)),
    "byteswap_u8": (lambda jnp, lax: lambda x: x.astype(jnp.uint8).byteswap(), (I32,)),
    "view_same_width": (lambda jnp, lax: lambda x: x.view(jnp.int32), (F,)),
    "view_narrower": (lambda jnp, lax: lambda x: x.view(jnp.uint8), (F,)),
    "view_wider": (lambda jnp, lax: lambda x: x.view(jnp.float32), (F.astype(np.float16),)),
    "view_from_complex": (lambda jnp, lax: lambda x: x.view(jnp.float32), (C,)),
    "view_to_complex": (lambda jnp, lax: lambda x: x.view(jnp.complex64), (F,)),
    "view_to_bool": (
        lambda jnp, lax: lambda x: x.view(jnp.bool_),
        (np.array([1, 0, 1], np.int8),),
    ),
    "view_from_bool": (lambda jnp, lax: lambda x: x.view(jnp.int8), (F > 0,)),
    "view_0d": (lambda jnp, lax: lambda x: x[0, 0].view(jnp.int32), (F,)),
    "view_none": (lambda jnp, lax: lambda x: x.view(), (F,)),
}


# Methods whose jaxprs are their functions' own (checked in those functions' tests, or
# differing from JAX's there): values, under `jit`.
EAGER: dict[str, tuple[Callable[[Any], Callable[..., Any]], tuple[Any, ...]]] = {
    "choose": (
        lambda jnp: lambda i, a, b: i.choose([a, b], mode="clip"),
        (I32[:4] % 3, F[0], F[1]),
    ),
    "compress_flat_size": (
        lambda jnp: lambda x: x.compress(np.ravel(F) > 0, size=8, fill_value=-1.0),
        (F,),
    ),
    "nonzero_size": (lambda jnp: lambda x: x.nonzero(size=4, fill_value=-1), (F > 0,)),
    "searchsorted": (lambda jnp: lambda a, v: a.searchsorted(v, side="right"), (I32, I32 - 1)),
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_method_prints_and_computes_as_jax(oracle: Oracle, name: str) -> None:
    program, args = METHODS[name]
    oracle.check(program, *args)


@pytest.mark.parametrize("name", sorted(EAGER))
def test_method_computes_as_jax(name: str) -> None:
    program, args = EAGER[name]
    ours = lc.jit(program(lnp))(*args)
    theirs = jax.jit(program(jax.numpy))(*args)
    for got, want in zip(
        lc.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs), strict=True
    ):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize(
    ("dtype", "to"), [(np.float32, np.uint8), (np.int16, np.int8), (np.uint8, np.uint16)]
)
def test_view_and_byteswap_agree_with_numpy(dtype: Any, to: Any) -> None:
    x = (np.arange(8) * 37).astype(dtype)
    np.testing.assert_array_equal(lc.jit(lambda v: v.view(to))(x), x.view(to))
    np.testing.assert_array_equal(lc.jit(lambda v: v.byteswap())(x), x.byteswap())


def test_sizes_are_static_properties() -> None:
    def f(x: Any) -> Any:
        assert (x.nbytes, x.itemsize) == (F.nbytes, F.itemsize)
        return x

    lc.make_jaxpr(f)(F)
    assert lnp.asarray(F, dtype=lnp.int8).nbytes == 12


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.flat,
        lambda x: x[0, 0].view(np.int16),
        lambda x: x[:, :3].astype(np.int8).view(np.int16),
        lambda x: x.view(np.int32, type=np.ndarray),
    ],
    ids=["flat", "view_0d_width", "view_last_axis", "view_type"],
)
def test_errors_are_jax_errors(call: Callable[[Any], Any]) -> None:
    with pytest.raises(Exception) as theirs:
        jax.make_jaxpr(call)(F)
    with pytest.raises(type(theirs.value)) as ours:
        lc.make_jaxpr(call)(F)
    assert str(ours.value) == str(theirs.value)
