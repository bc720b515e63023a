"""`lamina.random.multivariate_normal`, `orthogonal` and the `orthogonal` and
`delta_orthogonal` initializers on XLA against JAX 0.10.2: values bit for bit, eagerly and
under `jit`, for two keys (jaxprs and errors are tested in lamina-core's
test_random_linalg.py)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import numpy as np
import pytest
from jax._src import config as jax_config

import lamina
from lamina_core.testing import sweep

lr, jr = lamina.random, jax.random
li, ji = lamina.nn.initializers, jax.nn.initializers
pytestmark = pytest.mark.oracle

_A = np.random.RandomState(0).randn(3, 3)
_COV = _A @ _A.T + np.eye(3)
_MEAN = np.array([1.0, -2.0, 0.5])
_COVS = np.stack([_COV, 2 * np.eye(3)])

Draw = Callable[[Any, Any], Any]


def _mvn(mean: Any, cov: Any, *args: Any, **kwargs: Any) -> Draw:
    m, c = np.float32(mean), np.float32(cov)
    return lambda r, k: r.multivariate_normal(k, m, c, *args, **kwargs)


def _ortho(*args: Any, **kwargs: Any) -> Draw:
    return lambda r, k: r.orthogonal(k, *args, **kwargs)


def _init(make: Callable[[Any], Any], shape: tuple[int, ...], dtype: Any = None) -> Draw:
    return lambda r, k: make(li if r is lr else ji)(k, shape, dtype)


SAMPLERS: list[tuple[str, Draw]] = [
    ("multivariate_normal_cholesky", _mvn(_MEAN, _COV, (2,))),
    ("multivariate_normal_eigh", _mvn(_MEAN, _COV, (4,), method="eigh")),
    ("multivariate_normal_svd", _mvn(_MEAN, _COVS, method="svd")),
    ("multivariate_normal_broadcast", _mvn(_MEAN, _COVS, (5, 2))),
    ("multivariate_normal_f16", _mvn(_MEAN, _COV, (3,), np.float16)),
    ("orthogonal_square", _ortho(3)),
    ("orthogonal_batched", _ortho(4, (2,))),
    ("orthogonal_wide", _ortho(2, (3, 2), m=5)),
    ("orthogonal_tall", _ortho(5, (1,), m=3)),
    ("orthogonal_complex", _ortho(3, (2,), np.complex64)),
    ("initializers_orthogonal", _init(lambda m: m.orthogonal(), (3, 4))),
    ("initializers_orthogonal_axis0", _init(lambda m: m.orthogonal(2.0, 0), (5, 2, 3))),
    ("initializers_delta_orthogonal_3d", _init(lambda m: m.delta_orthogonal(), (3, 2, 4))),
    ("initializers_delta_orthogonal_4d", _init(lambda m: m.delta_orthogonal(0.5), (3, 3, 4, 4))),
    ("initializers_delta_orthogonal_5d", _init(lambda m: m.delta_orthogonal(), (2, 3, 3, 2, 3))),
]


# Eager draws compile every operation: with the slow tests, as is the second key.
@pytest.mark.parametrize(
    "jitted", [pytest.param(False, marks=pytest.mark.slow), True], ids=["eager", "jit"]
)
@pytest.mark.parametrize("seed", [0, pytest.param(1701, marks=pytest.mark.slow)])
@pytest.mark.parametrize(
    ("name", "draw"),
    sweep(SAMPLERS, [s[0] for s in SAMPLERS], kind=lambda i: "_".join(i.split("_")[:2])),
)
def test_values_equal_jax_bit_for_bit(name: str, draw: Draw, seed: int, jitted: bool) -> None:
    f_l = lamina.jit(partial(draw, lr)) if jitted else partial(draw, lr)
    f_j = jax.jit(partial(draw, jr)) if jitted else partial(draw, jr)
    got, expected = np.asarray(f_l(lr.key(seed))), np.asarray(f_j(jr.key(seed)))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.slow
def test_float64_values_equal_jax_bit_for_bit() -> None:
    with lamina.config(jax_enable_x64=True), jax_config.enable_x64(True):
        for r in (lr, jr):
            assert r.orthogonal(r.key(2), 3, (2,), np.float64).dtype == np.float64
        draws: list[Draw] = [
            lambda r, k: r.multivariate_normal(k, _MEAN, _COVS, (4, 2)),
            lambda r, k: r.orthogonal(k, 4, (2,), np.float64),
        ]
        for draw in draws:
            got = np.asarray(lamina.jit(partial(draw, lr))(lr.key(2)))
            np.testing.assert_array_equal(got, np.asarray(draw(jr, jr.key(2))))
