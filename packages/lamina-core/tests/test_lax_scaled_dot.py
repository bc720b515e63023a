"""`lax.scaled_dot` against `jax.lax.scaled_dot`: printed jaxprs, values of the NumPy reference
(its decomposition) bit for bit, `vmap`, and JAX's errors (values on XLA: lamina's
test_scaled_dot_xla.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core import lax as llax
from lamina_core.testing import sweep

jax = pytest.importorskip("jax")
jnp = jax.numpy
pytestmark = pytest.mark.oracle

_RS = np.random.RandomState(0)


def _f8(x: Any, dtype: Any = None) -> np.ndarray:
    return np.asarray(jnp.asarray(x, dtype or jnp.float8_e4m3fn))


def _scales(shape: tuple[int, ...]) -> np.ndarray:
    return _f8(2.0 ** _RS.randint(-3, 3, shape), jnp.float8_e8m0fnu)


A = _f8(_RS.randn(2, 4, 64))
B = _f8(_RS.randn(2, 64, 3))
SA, SB = _scales((2, 4, 2)), _scales((2, 2, 3))
A2, B2 = _f8(_RS.randn(5, 32)), _f8(_RS.randn(3, 32))
SA2, SB2 = _scales((5, 2)), _scales((3, 2))

Call = Callable[[Any], Any]  # lax module -> the function of the arrays

DN = (((1,), (1,)), ((), ()))


def _scaled(**kwargs: Any) -> Call:
    def make(L: Any) -> Callable[..., Any]:
        return lambda a, b, sa, sb: L.scaled_dot(a, b, lhs_scale=sa, rhs_scale=sb, **kwargs)

    return make


CASES: list[tuple[str, Call, tuple[Any, ...]]] = [
    ("scaled_dot_batched", _scaled(), (A, B, SA, SB)),
    ("scaled_dot_f32", _scaled(preferred_element_type=np.float32), (A, B, SA, SB)),
    ("scaled_dot_default_scales", lambda L: lambda a, b: L.scaled_dot(a, b), (A, B)),
    ("scaled_dot_one_scale", lambda L: lambda a, b, s: L.scaled_dot(a, b, rhs_scale=s), (A, B, SB)),
    (
        "scaled_dot_dimension_numbers",
        _scaled(dimension_numbers=DN, preferred_element_type=np.float32),
        (A2, B2, SA2, SB2),
    ),
    ("scaled_dot_f32_operands", lambda L: lambda a, b: L.scaled_dot(a, b), (np.float32(A), B)),
]


@pytest.mark.parametrize(("name", "call", "args"), sweep(CASES, [c[0] for c in CASES]))
def test_printed_and_values_equal_jax(name: str, call: Call, args: tuple[Any, ...]) -> None:
    ours = lamina_core.make_jaxpr(call(llax))(*args)
    assert str(ours) == str(jax.make_jaxpr(call(jax.lax))(*args))
    got = np.asarray(call(llax)(*args))
    want = np.asarray(jax.jit(call(jax.lax))(*args))
    assert got.dtype == want.dtype and got.shape == want.shape
    # NumPy sums float32 products in another order than XLA: to an ulp.
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-6)


def test_vmap_equals_jax() -> None:
    def f(L: Any) -> Callable[..., Any]:
        return lambda a, b, sa, sb: L.scaled_dot(a, b, lhs_scale=sa, rhs_scale=sb)

    args = (A, B[0], SA, SB[0])
    in_axes = (0, None, 0, None)
    ours = lamina_core.make_jaxpr(lamina_core.vmap(f(llax), in_axes=in_axes))(*args)
    assert str(ours) == str(jax.make_jaxpr(jax.vmap(f(jax.lax), in_axes=in_axes))(*args))
    got = np.asarray(lamina_core.vmap(f(llax), in_axes=in_axes)(*args))
    want = np.asarray(jax.vmap(f(jax.lax), in_axes=in_axes)(*args))
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


def _raised(f: Callable[[], Any]) -> tuple[type[BaseException], str]:
    try:
        f()
    except Exception as e:  # the oracle's exception, whatever its type
        return type(e), str(e)
    raise AssertionError("no error")


ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("rank_1", lambda L: L.scaled_dot(A[0, 0], A[0, 0])),
    ("ranks", lambda L: L.scaled_dot(A, B, lhs_scale=SA[0])),
    ("contracting_size", lambda L: L.scaled_dot(A, A)),
    ("scale_ratio", lambda L: L.scaled_dot(A, B, lhs_scale=_scales((2, 4, 64)))),
    ("scale_divisible", lambda L: L.scaled_dot(A, B, lhs_scale=_scales((2, 4, 3)))),
    ("scale_kept_dim", lambda L: L.scaled_dot(A, B, lhs_scale=_scales((2, 3, 2)))),
    ("batch_size", lambda L: L.scaled_dot(A, B[:1])),
    ("batch_count", lambda L: L.scaled_dot(A, B, dimension_numbers=(((2,), (1,)), ((0,), ())))),
    ("contract_count", lambda L: L.scaled_dot(A, B, dimension_numbers=(((2,), ()), ((0,), (0,))))),
]  # fmt: skip


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_jax_errors(name: str, call: Callable[[Any], Any]) -> None:
    kind, message = _raised(lambda: call(jax.lax))
    with pytest.raises(kind) as info:
        call(llax)
    assert str(info.value) == message
