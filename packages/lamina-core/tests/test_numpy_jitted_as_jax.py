"""`jnp` functions that JAX 0.10.2 jits are jitted in Lamina too: under `make_jaxpr` each
prints byte-identically to JAX's (the outer `jit[name=...]` with the same static and traced
arguments, and the same equations inside); values equal JAX's; bad arguments raise JAX's
errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
import lamina_core.numpy as lnp
from lamina_core.testing import sweep
from lamina_core.values import to_numpy

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jnp = jax.numpy

_F32 = np.array([-np.inf, -2.5, -1.0, 0.0, np.nan, 0.5, 1.0, 3.0, np.inf], np.float32)
_M = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.0
_B3 = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
_C64 = _F32.astype(np.complex64)
_C64.imag = _F32[::-1]
_I32 = np.arange(6, dtype=np.int32) - 2

Call = Callable[[Any, Any], Any]

CASES: list[tuple[str, Call, Any]] = [
    ("nan_to_num", lambda n, x: n.nan_to_num(x), _F32),
    ("nan_to_num_complex", lambda n, x: n.nan_to_num(x), _C64),
    ("nan_to_num_int", lambda n, x: n.nan_to_num(x), _I32),
    ("nan_to_num_values", lambda n, x: n.nan_to_num(x, nan=1.0, posinf=3, neginf=-7.5), _F32),
    ("isclose", lambda n, x: n.isclose(x, x[::-1]), _F32),
    ("isclose_int_scalar", lambda n, x: n.isclose(x, 2), _I32),
    ("isclose_complex_equal_nan", lambda n, x: n.isclose(x, x, equal_nan=True), _C64),
    ("isclose_broadcast_tols", lambda n, x: n.isclose(x, x[0], 1e-3, atol=0.1), _M),
    ("allclose", lambda n, x: n.allclose(x, x), _F32),
    ("allclose_equal_nan", lambda n, x: n.allclose(x, x, 1e-3, 0.1, equal_nan=True), _F32),
    ("diff", lambda n, x: n.diff(x), _F32),
    ("diff_n2_prepend", lambda n, x: n.diff(x, n=2, axis=0, prepend=1.0), _M),
    ("diff_bool_append", lambda n, x: n.diff(x > 0, axis=1, append=x[:, :1] > 0), _M),
    ("diff_n0", lambda n, x: n.diff(x, 0), _M),
    ("tril", lambda n, x: n.tril(x), _M),
    ("tril_batched", lambda n, x: n.tril(x, -1), _B3),
    ("triu", lambda n, x: n.triu(x, 1), _M),
    ("triu_batched", lambda n, x: n.triu(x, k=2), _B3),
    ("diagonal", lambda n, x: n.diagonal(x), _M),
    ("diagonal_negative", lambda n, x: n.diagonal(x, -1, 1, 0), _M),
    ("diagonal_3d", lambda n, x: n.diagonal(x, 1, 0, 2), _B3),
    ("kron", lambda n, x: n.kron(x, x[:2]), _M),
    ("kron_ranks", lambda n, x: n.kron(x[0], n.ones((2, 2, 2), n.int32)), _M),
    ("rot90", lambda n, x: n.rot90(x), _M),
    ("rot90_k3", lambda n, x: n.rot90(x, 3, axes=(1, 0)), _M),
    ("rot90_k2", lambda n, x: n.rot90(x, 2, axes=(0, 2)), _B3),
    ("count_nonzero", lambda n, x: n.count_nonzero(x, axis=1), _M),
    ("count_nonzero_keepdims", lambda n, x: n.count_nonzero(x, keepdims=True), _B3),
]


@pytest.mark.parametrize(("call", "x"), sweep([c[1:] for c in CASES], [c[0] for c in CASES]))
def test_jaxpr_prints_as_jax(call: Call, x: Any) -> None:
    assert str(lc.make_jaxpr(lambda a: call(lnp, a))(x)) == str(
        jax.make_jaxpr(lambda a: call(jnp, a))(x)
    )


@pytest.mark.parametrize(("call", "x"), sweep([c[1:] for c in CASES], [c[0] for c in CASES]))
def test_values_match_jax(call: Call, x: Any) -> None:
    got = np.asarray(to_numpy(call(lnp, x)))
    want = np.asarray(call(jnp, x))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


INTERP = [
    ("default", {}),
    ("left_right_values", {"left": -1.0, "right": 9.0}),
    ("extrapolate", {"left": "extrapolate", "right": "extrapolate"}),
    ("period", {"period": 2.0}),
]


@pytest.mark.parametrize("kwargs", sweep([c[1] for c in INTERP], [c[0] for c in INTERP], False))
def test_interp_is_one_jitted_call_with_jaxs_values(kwargs: dict[str, Any]) -> None:
    x = np.linspace(-4.0, 4.0, 13, dtype=np.float32)
    xp = np.linspace(-3.0, 3.0, 6, dtype=np.float32)
    fp = xp**2
    got = np.asarray(to_numpy(lnp.interp(x, xp, fp, **kwargs)))
    np.testing.assert_allclose(got, jnp.interp(x, xp, fp, **kwargs), rtol=1e-6, atol=1e-6)
    jaxpr = lc.make_jaxpr(lambda a: lnp.interp(a, xp, fp, **kwargs))(x).jaxpr
    assert [e.primitive.name for e in jaxpr.eqns] == ["jit"]
    assert str(jaxpr.eqns[0].params["name"]) == "_interp"


def test_static_arguments_are_jaxs() -> None:
    assert lnp.tril.static_argnames == ("k",)
    assert lnp.diff.static_argnames == ("axis", "n")
    assert lnp.isclose.static_argnames == ("equal_nan",)
    assert lnp.diagonal.static_argnames == ("axis1", "axis2", "offset")
    assert lnp.nan_to_num.static_argnames == ()


@pytest.mark.parametrize(
    "call",
    [
        lambda n: n.tril(np.ones(3)),
        lambda n: n.triu(np.float32(1)),
        lambda n: n.diff(np.ones(3), n=-1),
        lambda n: n.diff(np.float32(1)),
        lambda n: n.diagonal(np.ones(3)),
        lambda n: n.rot90(np.ones(3)),
        lambda n: n.isclose([1.0], np.ones(1)),
        lambda n: n.nan_to_num([1.0]),
    ],
    ids=[
        "tril_1d",
        "triu_0d",
        "diff_negative",
        "diff_0d",
        "diagonal_1d",
        "rot90_1d",
        "isclose_list",
        "nan_to_num_list",
    ],
)
def test_errors_are_jaxs(call: Callable[[Any], Any]) -> None:
    with pytest.raises(Exception) as want:
        call(jnp)
    with pytest.raises(type(want.value)) as got:
        call(lnp)
    assert str(got.value) == str(want.value)


def test_unhashable_static_argument_is_jaxs_error() -> None:
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        jnp.rot90(np.ones((2, 2)), axes=[0, 1])
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        lnp.rot90(np.ones((2, 2)), axes=[0, 1])
