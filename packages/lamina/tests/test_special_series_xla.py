"""sici, fresnel, owens_t, bessel_jn, hyp1f1, hyp2f1, sph_harm_y and nn.scaled_dot_general
(without configs) jitted on XLA against JAX 0.10.2: the same equations on the same compiler,
so the same bits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import lamina

pytestmark = pytest.mark.oracle

X = np.array([-np.inf, -30.0, -5.0, -0.0, 0.5, 1.7, 4.0, 7.9, 8.0, 20.0, 4e4, 2e9, np.nan])
H = np.array([0.0, 0.3, 1.0, 2.0, 5.0, -1.0, np.nan, 0.6])
A = np.array([0.2, 1.0, -0.5, 3.0, 0.7, 2.0, 1.0, np.inf])


def _cases(jx: Any) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    s = jx.scipy.special
    f32 = np.float32
    dn = (((1,), (0,)), ((), ()))
    return {
        "sici": (s.sici, (X.astype(f32),)),
        "fresnel": (s.fresnel, (X.astype(f32),)),
        "owens_t": (s.owens_t, (H.astype(f32), A.astype(f32))),
        "bessel_jn": (lambda z: s.bessel_jn(z, v=3, n_iter=30), (np.array([3.0, 10.0], f32),)),
        "hyp1f1": (
            s.hyp1f1,
            tuple(np.array(v, f32) for v in ([0.5, 2.0], [1.5, 3.0], [2.0, 150.0])),
        ),
        "hyp2f1": (
            s.hyp2f1,
            tuple(np.array(v, f32) for v in ([0.5, -2.0], [1.0, 3.0], [1.5, 4.0], [0.3, 0.5])),
        ),
        "sph_harm_y": (
            lambda n, m, t, p: s.sph_harm_y(n, m, t, p, n_max=3),
            (
                np.array([0, 1, 3]),
                np.array([0, -1, 2]),
                np.array([0.3, 1.0, 2.0], f32),
                np.array([0.1, 0.5, 1.0], f32),
            ),
        ),
        "scaled_dot_general": (
            lambda a, b: jx.nn.scaled_dot_general(a, b, dn),
            (np.arange(12, dtype=f32).reshape(3, 4), np.ones((4, 2), f32)),
        ),
    }


SLOW = {"hyp1f1", "hyp2f1", "sph_harm_y"}  # XLA compiles these (loops) slowly


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
        for n in _cases(jax)  # the names only
    ],
)
def test_jitted_bits(name: str) -> None:
    ours_f, args = _cases(lamina)[name]
    theirs_f, _ = _cases(jax)[name]
    got = jax.tree_util.tree_leaves(lamina.jit(ours_f)(*args))
    want = jax.tree_util.tree_leaves(jax.jit(theirs_f)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
