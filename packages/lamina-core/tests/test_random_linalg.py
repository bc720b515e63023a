"""`random.multivariate_normal`, `random.orthogonal` and the `orthogonal` and `delta_orthogonal`
initializers against JAX 0.10.2: printed jaxprs, values on the NumPy reference evaluator (its
factorizations are NumPy's, so to a few ulps; bit for bit on XLA is tested in lamina's
test_random_linalg_xla.py), `vmap`, and JAX's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core import random as lr
from lamina_core.nn import initializers as li
from lamina_core.testing import sweep

jax = pytest.importorskip("jax")
jr = jax.random
ji = jax.nn.initializers
pytestmark = pytest.mark.oracle

_A = np.random.RandomState(0).randn(3, 3).astype(np.float32)
_COV = _A @ _A.T + np.eye(3, dtype=np.float32)
_MEAN = np.array([1.0, -2.0, 0.5], np.float32)
_COVS = np.stack([_COV, 2 * np.eye(3, dtype=np.float32)])
_SINGULAR = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 2.0]], np.float32)


def _printed_jax(f: Callable[..., Any], *args: Any) -> str:
    from jax._src import config as jax_config

    with jax_config.use_simplified_jaxpr_constants(True):
        return str(jax.make_jaxpr(f)(*args))


Draw = Callable[[Any, Any], Any]


def _mvn(*args: Any, **kwargs: Any) -> Draw:
    return lambda r, k: r.multivariate_normal(k, *args, **kwargs)


def _ortho(*args: Any, **kwargs: Any) -> Draw:
    return lambda r, k: r.orthogonal(k, *args, **kwargs)


CASES: list[tuple[str, Draw]] = [
    ("multivariate_normal_cholesky", _mvn(_MEAN, _COV, (2,))),
    ("multivariate_normal_eigh", _mvn(_MEAN, _COV, (4,), method="eigh")),
    ("multivariate_normal_svd", _mvn(_MEAN, _SINGULAR, method="svd")),
    ("multivariate_normal_batched", _mvn(_MEAN, _COVS)),
    ("multivariate_normal_broadcast", _mvn(_MEAN, _COVS, (5, 2))),
    ("multivariate_normal_int_mean", _mvn(np.arange(3), _COV, (2,))),
    ("multivariate_normal_f16", _mvn(_MEAN, _COV, (2,), np.float16)),
    ("orthogonal_square", _ortho(3, (2,))),
    ("orthogonal_wide", _ortho(2, (3, 2), m=5)),
    ("orthogonal_tall", _ortho(5, (1,), m=3)),
    ("orthogonal_complex", _ortho(3, (2,), np.complex64)),
]


@pytest.mark.parametrize(("name", "draw"), sweep(CASES, [c[0] for c in CASES]))
def test_printed_as_jax(name: str, draw: Draw) -> None:
    expected = _printed_jax(lambda k: draw(jr, k), jr.key(0))
    assert str(lamina_core.make_jaxpr(lambda k: draw(lr, k))(lr.key(0))) == expected


@pytest.mark.parametrize("seed", [0, 1701])
@pytest.mark.parametrize(("name", "draw"), sweep(CASES, [c[0] for c in CASES]))
def test_values_equal_jax_on_the_reference_evaluator(name: str, draw: Draw, seed: int) -> None:
    got = np.asarray(draw(lr, lr.key(seed)))
    expected = np.asarray(draw(jr, jr.key(seed)))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    # A singular covariance's factor takes the square root of a rounding-sized eigenvalue.
    tol = 2e-2 if got.dtype == np.float16 else 1e-3 if "svd" in name else 2e-5
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_orthogonal_is_orthogonal() -> None:
    q = np.asarray(lr.orthogonal(lr.key(5), 4, (3,)))
    np.testing.assert_allclose(
        q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), q.shape), atol=1e-5
    )
    wide = np.asarray(lr.orthogonal(lr.key(5), 2, m=4))
    np.testing.assert_allclose(wide @ wide.T, np.eye(2), atol=1e-5)


@pytest.mark.slow
def test_under_vmap_equal_jax() -> None:
    keys_l, keys_j = lr.split(lr.key(3), 3), jr.split(jr.key(3), 3)
    got = lamina_core.vmap(lambda k: lr.multivariate_normal(k, _MEAN, _COV))(keys_l)
    expected = jax.vmap(lambda k: jr.multivariate_normal(k, _MEAN, _COV))(keys_j)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-5, atol=1e-5)
    got = lamina_core.vmap(lambda k: lr.orthogonal(k, 3, (2,)))(keys_l)
    expected = jax.vmap(lambda k: jr.orthogonal(k, 3, (2,)))(keys_j)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-5, atol=1e-5)


def _raised(f: Callable[[], Any]) -> tuple[type[BaseException], str]:
    try:
        f()
    except Exception as e:  # the oracle's exception, whatever its type
        return type(e), str(e)
    raise AssertionError("no error")


ERRORS: list[tuple[str, Draw]] = [
    ("bad_method", lambda r, k: r.multivariate_normal(k, _MEAN, _COV, method="qr")),
    ("int_dtype", lambda r, k: r.multivariate_normal(k, _MEAN, _COV, dtype=np.int32)),
    ("scalar_mean", lambda r, k: r.multivariate_normal(k, 1.0, _COV)),
    ("vector_cov", lambda r, k: r.multivariate_normal(k, _MEAN, _MEAN)),
    ("cov_shape", lambda r, k: r.multivariate_normal(k, _MEAN, np.eye(2, dtype=np.float32))),
    ("unequal_shape", lambda r, k: r.multivariate_normal(k, _MEAN, _COVS, ())),
    ("batched_key", lambda r, k: r.orthogonal(r.split(k), 3)),
]


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_jax_errors(name: str, call: Draw) -> None:
    kind, message = _raised(lambda: call(jr, jr.key(0)))
    with pytest.raises(kind) as info:
        call(lr, lr.key(0))
    assert str(info.value) == message


def test_orthogonal_traced_n_is_an_error() -> None:
    with pytest.raises(lamina_core.ConcretizationTypeError, match=r"jax\.random\.orthogonal"):
        lamina_core.jit(lambda k, n: lr.orthogonal(k, n))(lr.key(0), 3)


INITS: list[tuple[str, Callable[[Any], Any], tuple[int, ...], Any]] = [
    ("orthogonal", lambda m: m.orthogonal(), (3, 4), None),
    ("orthogonal_column_axis", lambda m: m.orthogonal(2.0, column_axis=0), (5, 2, 3), None),
    ("orthogonal_empty", lambda m: m.orthogonal(), (4, 0), None),
    ("orthogonal_default_dtype", lambda m: m.orthogonal(dtype=np.float32), (6, 2), None),
    ("delta_orthogonal_3d", lambda m: m.delta_orthogonal(), (3, 2, 4), None),
    ("delta_orthogonal_4d", lambda m: m.delta_orthogonal(0.5), (3, 3, 4, 4), np.float32),
    ("delta_orthogonal_5d", lambda m: m.delta_orthogonal(), (2, 3, 3, 2, 3), None),
]


@pytest.mark.parametrize(("name", "make", "shape", "dtype"), sweep(INITS, [c[0] for c in INITS]))
def test_initializers_equal_jax(name: str, make: Any, shape: tuple[int, ...], dtype: Any) -> None:
    for seed in (0, 7):
        got = np.asarray(make(li)(lr.key(seed), shape, dtype))
        want = np.asarray(make(ji)(jr.key(seed), shape, dtype))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


INIT_ERRORS: list[tuple[str, Callable[[Any], Any], tuple[int, ...]]] = [
    ("orthogonal_1d", lambda m: m.orthogonal(), (3,)),
    ("delta_orthogonal_2d", lambda m: m.delta_orthogonal(), (3, 3)),
    ("delta_orthogonal_fan_in", lambda m: m.delta_orthogonal(), (3, 4, 2)),
]


@pytest.mark.parametrize(("name", "make", "shape"), INIT_ERRORS, ids=[e[0] for e in INIT_ERRORS])
def test_initializer_errors_are_jax_errors(name: str, make: Any, shape: tuple[int, ...]) -> None:
    kind, message = _raised(lambda: make(ji)(jr.key(0), shape))
    with pytest.raises(kind) as info:
        make(li)(lr.key(0), shape)
    assert str(info.value) == message
    with pytest.raises(NotImplementedError):
        make(li)(lr.key(0), (2, 3, 3), out_sharding=object())
