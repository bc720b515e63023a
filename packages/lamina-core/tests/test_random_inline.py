"""JAX's `jit(inline=True)` samplers (`triangular`, `lognormal`), staged from a cached trace:
printed jaxprs equal JAX's whether the parameters are traced, constants or a mix, on the
first call and on repeated ones, and under vmap and jvp (where the kernel runs as a plain
function)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core import random as lr

jax = pytest.importorskip("jax")
jr = jax.random

_P = np.array([0.25, 0.5, 1.5], np.float32)

CASES: list[tuple[str, Callable[[Any], Callable[..., Any]], Callable[[Any], tuple[Any, ...]]]] = [
    (
        "triangular_traced_params",
        lambda r: lambda k, a, b, c: r.triangular(k, a, b, c, (3,)),
        lambda r: (r.key(0), np.float32(0.0), np.float32(0.4), np.float32(1.0)),
    ),
    (
        "triangular_mixed_params_twice",
        lambda r: lambda k, b: [r.triangular(k, 0.0, b, 1.0, (2, 3)) for _ in range(2)],
        lambda r: (r.key(1), _P),
    ),
    (
        "lognormal_traced_sigma_twice",
        lambda r: lambda k, s: (r.lognormal(k, s, (3,)), r.lognormal(k, s, (3,))),
        lambda r: (r.key(0), _P),
    ),
    (
        "lognormal_python_sigma_f16",
        lambda r: lambda k: r.lognormal(k, 0.5, shape=(2,), dtype=np.float16),
        lambda r: (r.key(2),),
    ),
    (
        "triangular_vmapped_keys",
        lambda r: (
            lambda ks: jax_or_lamina(r).vmap(lambda k: r.triangular(k, 0.0, 0.5, 1.0, (2,)))(ks)
        ),
        lambda r: (r.split(r.key(0), 3),),
    ),
    (
        "lognormal_jvp_sigma",
        lambda r: (
            lambda k, s, t: jax_or_lamina(r).jvp(lambda s: r.lognormal(k, s, (3,)), (s,), (t,))
        ),
        lambda r: (r.key(0), _P, np.ones(3, np.float32)),
    ),
]


def jax_or_lamina(r: Any) -> Any:
    """The top-level module of a random module: `jax` for `jax.random`, else `lamina_core`."""
    return jax if r is jr else lamina_core


@pytest.mark.parametrize(("name", "make", "args"), CASES, ids=[c[0] for c in CASES])
def test_inline_kernels_print_as_jax(name: str, make: Any, args: Any) -> None:
    expected = str(jax.make_jaxpr(make(jr))(*args(jr)))
    for _ in range(2):  # the first trace fills the kernel's cache, the second reuses it
        assert str(lamina_core.make_jaxpr(make(lr))(*args(lr))) == expected


def test_inline_kernel_values_match_jax_eagerly() -> None:
    got = lr.triangular(lr.key(3), 0.0, _P, 2.0, (3,))
    want = jr.triangular(jr.key(3), 0.0, _P, 2.0, (3,))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
