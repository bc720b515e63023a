"""Four computations that used to raise, against JAX 0.10.2: the derivative of `random.gamma`
(and so of `loggamma`, `beta`, `dirichlet`), `jnp.repeat` with per-element or traced repeats,
`jnp.unique(axis=...)`, and `jnp.fill_diagonal` (whose `wrap=True` JAX rejects too): printed
jaxprs byte for byte, values, `grad`, `vmap` and error messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
import lamina_core.numpy as lnp
from lamina_core import random as lr

jax = pytest.importorskip("jax")
jnp = jax.numpy
jr = jax.random
pytestmark = pytest.mark.oracle

Make = Callable[[Any], Callable[..., Any]]
"""Builds the function under test from a namespace: JAX's or Lamina's."""


def _printed_alike(
    make_jax: Callable[..., Any], make_lamina: Callable[..., Any], *args: Any
) -> None:
    expected = str(jax.make_jaxpr(make_jax)(*args))
    got = str(lc.make_jaxpr(make_lamina)(*args))
    assert got == expected, f"\n--- lamina ---\n{got}\n--- jax ---\n{expected}"


def _values_alike(got: Any, expected: Any, rtol: float = 0.0) -> None:
    """Equal values (to `rtol`), shapes and dtypes."""
    got_leaves = jax.tree_util.tree_leaves(got)
    expected_leaves = jax.tree_util.tree_leaves(expected)
    assert len(got_leaves) == len(expected_leaves)
    for g, w in zip(got_leaves, expected_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=0, equal_nan=True)


def _raised(f: Callable[[], Any]) -> tuple[type[BaseException], str]:
    try:
        f()
    except Exception as e:  # the oracle's exception, whatever its type
        return type(e), str(e)
    raise AssertionError("no error")


def _same_error(call: Callable[[Any], Any], jax_ns: Any, lamina_ns: Any) -> None:
    kind, message = _raised(lambda: call(jax_ns))
    with pytest.raises(Exception) as info:  # the oracle's class, checked below by name
        call(lamina_ns)
    assert type(info.value).__name__ == kind.__name__
    assert str(info.value) == message


# --- the derivative of random.gamma ------------------------------------------------------

_A = np.array([0.3, 1.0, 2.5, 7.0], np.float32)
_A2 = np.array([[0.5, 2.0, 3.0], [1.5, 0.2, 4.0]], np.float32)
_WEIGHTS = np.array([1.0, -2.0, 0.5], np.float32)

# Keys are made inside each function: a key closed over prints as a constant.
GAMMA_GRADS: list[tuple[str, Callable[[Any, Any], Callable[..., Any]], Any]] = [
    ("gamma", lambda m, r: m.grad(lambda a: r.gamma(r.key(0), a).sum()), _A),
    ("loggamma", lambda m, r: m.grad(lambda a: r.loggamma(r.key(1), a).sum()), _A),
    ("gamma_shape", lambda m, r: m.grad(lambda a: r.gamma(r.key(2), a, (3,)).sum()), _A[2]),
    ("beta", lambda m, r: m.grad(lambda a: r.beta(r.key(3), a, 2.0).sum()), _A),
    (
        "dirichlet",
        lambda m, r: m.grad(lambda a: (r.dirichlet(r.key(4), a) * _WEIGHTS).sum()),
        _A[:3],
    ),
    (
        "float16",
        lambda m, r: m.grad(lambda a: r.gamma(r.key(5), a, dtype=np.float16).sum().astype(float)),
        _A,
    ),
    ("vmap_of_grad", lambda m, r: m.vmap(m.grad(lambda a: r.gamma(r.key(6), a).sum())), _A2),
    (
        "grad_of_vmap_over_keys",
        lambda m, r: m.grad(
            lambda a: m.vmap(lambda k, x: r.gamma(k, x))(r.split(r.key(7), 2), a).sum()
        ),
        _A2,
    ),
    (
        "jvp",
        lambda m, r: lambda a: m.jvp(lambda x: r.loggamma(r.key(8), x), (a,), (a,)),
        _A,
    ),
]


@pytest.mark.parametrize(("name", "make", "a"), GAMMA_GRADS, ids=[g[0] for g in GAMMA_GRADS])
def test_gamma_derivatives_print_and_evaluate_as_jax(name: str, make: Any, a: Any) -> None:
    _printed_alike(make(jax, jr), make(lc, lr), a)
    # float16 draws: NumPy rounds every operation to float16, XLA may keep float32 within a
    # fusion, a few float16 ulps apart.
    _values_alike(make(lc, lr)(a), make(jax, jr)(a), rtol=5e-3 if name == "float16" else 2e-5)


def test_gamma_gradient_is_the_implicit_reparameterization() -> None:
    # d sample / d a at a fixed CDF value: -(dP/da) / (dP/dx), P the regularized lower
    # incomplete gamma function; dP/da by central differences of SciPy's, in float64.
    special = pytest.importorskip("scipy.special")
    a = _A.astype(np.float64)
    samples = np.asarray(lr.gamma(lr.key(0), _A), np.float64)
    got = np.asarray(lc.grad(lambda a: lr.gamma(lr.key(0), a).sum())(_A), np.float64)
    step = 1e-6
    dp_da = (special.gammainc(a + step, samples) - special.gammainc(a - step, samples)) / (2 * step)
    dp_dx = np.exp((a - 1) * np.log(samples) - samples - special.gammaln(a))
    np.testing.assert_allclose(got, -dp_da / dp_dx, rtol=1e-3)


# --- jnp.repeat --------------------------------------------------------------------------

_X = np.arange(6.0, dtype=np.float32).reshape(2, 3)
_R = np.array([1, 0, 2], np.int32)

REPEATS: list[tuple[str, Make, tuple[Any, ...]]] = [
    ("per_element", lambda n: lambda x: n.repeat(x, np.array([1, 0, 2]), axis=1), (_X,)),
    ("per_element_axis0", lambda n: lambda x: n.repeat(x, np.array([2, 1]), axis=0), (_X,)),
    (
        "traced_padded",
        lambda n: lambda x, r: n.repeat(x, r, axis=1, total_repeat_length=5),
        (_X, _R),
    ),
    (
        "traced_cut",
        lambda n: lambda x, r: n.repeat(x, r, axis=-1, total_repeat_length=2),
        (_X, _R),
    ),
    ("scalar_with_total", lambda n: lambda x: n.repeat(x, 2, total_repeat_length=4), (_X,)),
    ("scalar_a", lambda n: lambda: n.repeat(3.0, np.array([4])), ()),
    ("scalar_a_with_total", lambda n: lambda: n.repeat(3.0, 2, total_repeat_length=5), ()),
    (
        "total_zero",
        lambda n: lambda x, r: n.repeat(x, r, axis=0, total_repeat_length=0),
        (_X, np.array([1, 1], np.int32)),
    ),
    (
        "empty_axis",
        lambda n: lambda x: n.repeat(x, np.array([], np.int32), axis=0),
        (np.zeros((0, 3), np.float32),),
    ),
    ("zero_d_repeats", lambda n: lambda x: n.repeat(x, np.array(2)), (_X,)),
    ("method", lambda n: lambda x, r: x.repeat(r, axis=1, total_repeat_length=4), (_X, _R)),
]


@pytest.mark.parametrize(("name", "make", "args"), REPEATS, ids=[r[0] for r in REPEATS])
def test_repeat_prints_and_evaluates_as_jax(name: str, make: Make, args: Any) -> None:
    _printed_alike(make(jnp), make(lnp), *args)
    # Under jit the arguments are arrays of each library, so the `method` case is one too.
    _values_alike(lc.jit(make(lnp))(*args), jax.jit(make(jnp))(*args))


def test_repeat_with_traced_repeats_under_grad_and_vmap_is_jaxs() -> None:
    def make(m: Any, n: Any) -> Any:
        def f(x: Any, r: Any) -> Any:
            return (n.repeat(x, r, axis=1, total_repeat_length=4) ** 2).sum()

        return m.grad(f)

    _printed_alike(make(jax, jnp), make(lc, lnp), _X, _R)
    _values_alike(make(lc, lnp)(_X, _R), make(jax, jnp)(_X, _R))

    def batched(m: Any, n: Any) -> Any:
        return m.vmap(lambda x, r: n.repeat(x, r, total_repeat_length=4))

    rs = np.array([[1, 2, 1], [0, 0, 3]], np.int32)
    _printed_alike(batched(jax, jnp), batched(lc, lnp), _X, rs)
    _values_alike(batched(lc, lnp)(_X, rs), batched(jax, jnp)(_X, rs))


REPEAT_ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("traced_without_total", lambda n: jax_or_lc_jit(n)(lambda r: n.repeat(_X, r, axis=1))(_R)),
    ("list_repeats", lambda n: n.repeat(_X, [1, 2, 3], axis=1)),
    ("scalar_a_vector_repeats", lambda n: n.repeat(2.0, np.array([1, 2]))),
]


def jax_or_lc_jit(n: Any) -> Callable[..., Any]:
    return jax.jit if n is jnp else lc.jit


@pytest.mark.parametrize(("name", "call"), REPEAT_ERRORS, ids=[e[0] for e in REPEAT_ERRORS])
def test_repeat_errors_are_jaxs(name: str, call: Callable[[Any], Any]) -> None:
    _same_error(call, jnp, lnp)


# --- jnp.unique(axis=...) ----------------------------------------------------------------

_ROWS = np.array([[1, 2], [0, 3], [1, 2], [0, 3], [5, 5]], np.int32)
_NAN_ROWS = np.array([[1.0, np.nan], [0, 3], [1, np.nan], [0, 3]], np.float32)
_EMPTY = np.zeros((0, 3), np.float32)

UNIQUE_EAGER: list[tuple[str, Callable[[Any], Any]]] = [
    ("axis0", lambda n: n.unique(_ROWS, axis=0)),
    ("axis1_everything", lambda n: n.unique(_ROWS, True, True, True, axis=1)),
    ("axis0_everything", lambda n: n.unique(_ROWS, True, True, True, axis=0)),
    ("negative_axis_inverse", lambda n: n.unique(_ROWS, axis=-1, return_inverse=True)),
    ("nan_rows_equal", lambda n: n.unique(_NAN_ROWS, axis=0, return_counts=True)),
    ("nan_rows_distinct", lambda n: n.unique(_NAN_ROWS, axis=0, equal_nan=False)),
    ("flat_everything", lambda n: n.unique(_NAN_ROWS, True, True, True)),
    ("empty_axis0", lambda n: n.unique(_EMPTY, True, True, True, axis=0)),
    ("empty_axis1", lambda n: n.unique(_EMPTY, True, True, True, axis=1)),
    ("axis0_size_truncated", lambda n: n.unique(_ROWS, True, True, True, axis=0, size=2)),
]


@pytest.mark.parametrize(("name", "call"), UNIQUE_EAGER, ids=[u[0] for u in UNIQUE_EAGER])
def test_unique_values_are_jaxs(name: str, call: Callable[[Any], Any]) -> None:
    _values_alike(call(lnp), call(jnp))


UNIQUE_SIZED: list[tuple[str, Make, Any]] = [
    ("axis0", lambda n: lambda x: n.unique(x, True, True, True, axis=0, size=5), _ROWS),
    (
        "axis0_fill",
        lambda n: lambda x: n.unique(x, True, True, True, axis=0, size=5, fill_value=-1),
        _ROWS,
    ),
    ("axis1_truncated", lambda n: lambda x: n.unique(x, axis=1, size=1), _ROWS),
    (
        "flat_fill",
        lambda n: lambda x: n.unique(x, True, True, True, size=6, fill_value=0.0),
        _NAN_ROWS,
    ),
    (
        "empty_fill",
        lambda n: lambda x: n.unique(x, True, True, True, axis=0, size=2, fill_value=1.0),
        _EMPTY,
    ),
    (
        "complex_nans",
        lambda n: lambda x: n.unique(x, axis=0, size=3),
        np.array([[1 + 1j], [np.nan * 1j], [1 + 1j]], np.complex64),
    ),
    ("nonzero_fill", lambda n: lambda x: n.nonzero(x, size=7, fill_value=-1), _ROWS),
    ("argwhere", lambda n: lambda x: n.argwhere(x, size=7), _ROWS),
    ("flatnonzero", lambda n: lambda x: n.flatnonzero(x, size=7), _ROWS),
]


@pytest.mark.parametrize(("name", "make", "x"), UNIQUE_SIZED, ids=[u[0] for u in UNIQUE_SIZED])
def test_sized_unique_prints_and_evaluates_as_jax(name: str, make: Make, x: Any) -> None:
    _printed_alike(make(jnp), make(lnp), x)
    _values_alike(make(lnp)(x), make(jnp)(x))
    _values_alike(lc.jit(make(lnp))(x), jax.jit(make(jnp))(x))


def test_sized_unique_along_an_axis_under_vmap_and_grad_is_jaxs() -> None:
    rows = _ROWS.astype(np.float32)
    stacked = np.stack([rows, rows[::-1] * 2])

    def batched(m: Any, n: Any) -> Any:
        return m.vmap(lambda x: n.unique(x, return_counts=True, axis=0, size=4, fill_value=0.0))

    _printed_alike(batched(jax, jnp), batched(lc, lnp), stacked)
    _values_alike(batched(lc, lnp)(stacked), batched(jax, jnp)(stacked))

    def grad(m: Any, n: Any) -> Any:
        return m.grad(lambda x: (n.unique(x, axis=0, size=3) ** 2).sum())

    _printed_alike(grad(jax, jnp), grad(lc, lnp), rows)
    _values_alike(grad(lc, lnp)(rows), grad(jax, jnp)(rows))


UNIQUE_ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("traced_without_size", lambda n: jax_or_lc_jit(n)(lambda x: n.unique(x, axis=0))(_ROWS)),
    ("empty_without_fill", lambda n: n.unique(_EMPTY, axis=0, size=2)),
    ("axis_out_of_range", lambda n: n.unique(_ROWS, axis=2)),
]


@pytest.mark.parametrize(("name", "call"), UNIQUE_ERRORS, ids=[e[0] for e in UNIQUE_ERRORS])
def test_unique_errors_are_jaxs(name: str, call: Callable[[Any], Any]) -> None:
    _same_error(call, jnp, lnp)


# --- jnp.fill_diagonal -------------------------------------------------------------------

FILLS: list[tuple[str, Make, tuple[Any, ...]]] = [
    (
        "scalar_wide",
        lambda n: lambda a: n.fill_diagonal(a, 5.0, inplace=False),
        (np.zeros((3, 4), np.float32),),
    ),
    (
        "scalar_tall",
        lambda n: lambda a: n.fill_diagonal(a, 2, inplace=False),
        (np.zeros((5, 3), np.float32),),
    ),
    (
        "short_values_repeat",
        lambda n: lambda a, v: n.fill_diagonal(a, v, inplace=False),
        (np.zeros((4, 4), np.float32), np.array([1.0, 2.0], np.float32)),
    ),
    (
        "long_values_cut",
        lambda n: lambda a, v: n.fill_diagonal(a, v, inplace=False),
        (np.zeros((3, 3), np.int32), np.arange(10, dtype=np.int32)),
    ),
    (
        "cube",
        lambda n: lambda a: n.fill_diagonal(a, 1, inplace=False),
        (np.zeros((2, 2, 2), np.float32),),
    ),
]


@pytest.mark.parametrize(("name", "make", "args"), FILLS, ids=[f[0] for f in FILLS])
def test_fill_diagonal_prints_and_evaluates_as_jax(name: str, make: Make, args: Any) -> None:
    _printed_alike(make(jnp), make(lnp), *args)
    _values_alike(make(lnp)(*args), make(jnp)(*args))


def test_fill_diagonal_under_grad_and_vmap_is_jaxs() -> None:
    a = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    v = np.array([1.0, 2.0], np.float32)

    def grad(m: Any, n: Any) -> Any:
        return m.grad(
            lambda a, v: (n.fill_diagonal(a, v, inplace=False) ** 2).sum(), argnums=(0, 1)
        )

    _printed_alike(grad(jax, jnp), grad(lc, lnp), a, v)
    _values_alike(grad(lc, lnp)(a, v), grad(jax, jnp)(a, v))

    def batched(m: Any, n: Any) -> Any:
        return m.vmap(lambda a, v: n.fill_diagonal(a, v, inplace=False))

    stacked, vs = np.stack([a, -a]), np.array([[7.0, 8.0], [9.0, 10.0]], np.float32)
    _printed_alike(batched(jax, jnp), batched(lc, lnp), stacked, vs)
    _values_alike(batched(lc, lnp)(stacked, vs), batched(jax, jnp)(stacked, vs))


FILL_ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("wrap", lambda n: n.fill_diagonal(np.zeros((5, 3)), 1.0, wrap=True, inplace=False)),
    ("inplace", lambda n: n.fill_diagonal(np.zeros((3, 3)), 1.0)),
    ("one_d", lambda n: n.fill_diagonal(np.zeros(3), 1.0, inplace=False)),
    ("unequal_cube", lambda n: n.fill_diagonal(np.zeros((2, 3, 3)), 1.0, inplace=False)),
    ("list_values", lambda n: n.fill_diagonal(np.zeros((2, 2)), [1.0], inplace=False)),
]


@pytest.mark.parametrize(("name", "call"), FILL_ERRORS, ids=[e[0] for e in FILL_ERRORS])
def test_fill_diagonal_errors_are_jaxs(name: str, call: Callable[[Any], Any]) -> None:
    _same_error(call, jnp, lnp)
