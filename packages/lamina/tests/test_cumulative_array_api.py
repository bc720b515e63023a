"""The array API's `jnp.cumulative_sum` and `jnp.cumulative_prod` as JAX 0.10.2 stages them:
`cumulative_sum` through its own `jit[name=_cumsum_with_promotion]` (narrow integers widen),
`cumulative_prod` with no `jit` of its own, `include_initial` as a `concatenate` after it.
Printed jaxprs byte for byte, values, dtypes and errors.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import jax
import numpy as np
import pytest

import lamina

pytestmark = pytest.mark.oracle

Api = Any
LAMINA: Api = SimpleNamespace(jax=lamina, jnp=lamina.numpy)
JAX: Api = SimpleNamespace(jax=jax, jnp=jax.numpy)

M = np.arange(6.0, dtype=np.float32).reshape(2, 3)
INPUTS: dict[str, np.ndarray] = {
    "f32": M,
    "i8": M.astype(np.int8),
    "u8": M.astype(np.uint8),
    "i32": M.astype(np.int32),
    "bool": M.astype(np.int32) % 2 == 1,
    "f16": M.astype(np.float16),
}
DTYPES: dict[str, Any] = {
    "none": None,
    "f32": np.float32,
    "bool": bool,
    "i16": np.int16,
    "f16_name": "float16",
}


pytestmark = pytest.mark.usefixtures("simplified_jax_constants")


def _outcome(api: Api, f: Callable[[Api], Callable[..., Any]], x: Any) -> tuple[str, Any, Any]:
    printed = str(api.jax.make_jaxpr(f(api))(x))
    value = np.asarray(f(api)(x))
    return printed, value.dtype, value.tolist()


def test_cumulative_sum_with_initial_prints_as_jax() -> None:
    def f(api: Api) -> Callable[..., Any]:
        return lambda a: api.jnp.cumulative_sum(a, axis=1, include_initial=True)

    assert _outcome(LAMINA, f, M) == _outcome(JAX, f, M)
    assert str(lamina.make_jaxpr(f(LAMINA))(M)) == (
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[2,3] = jit[\n"
        "      name=_cumsum_with_promotion\n"
        "      jaxpr={ lambda ; a:f32[2,3]. let\n"
        "          b:f32[2,3] = cumsum[axis=1 reverse=False] a\n"
        "        in (b,) }\n"
        "    ] a\n"
        "    c:f32[2,1] = broadcast_in_dim 0.0:f32[]\n"
        "    d:f32[2,4] = concatenate[dimension=1] c b\n"
        "  in (d,) }"
    )


CASES = [
    # Axis -2 repeats axis 1's checks through canonicalization: slow only.
    pytest.param(*case, marks=pytest.mark.slow) if case[-1] == -2 else case
    for case in itertools.product(
        ("cumulative_sum", "cumulative_prod"), (False, True), sorted(INPUTS), sorted(DTYPES),
        (1, -2),
    )
]  # fmt: skip


@pytest.mark.parametrize(("fn", "initial", "x", "dtype", "axis"), CASES)
def test_cumulative_prints_and_computes_as_jax(
    fn: str, initial: bool, x: str, dtype: str, axis: int
) -> None:
    def f(api: Api) -> Callable[..., Any]:
        return lambda a: getattr(api.jnp, fn)(
            a, axis=axis, dtype=DTYPES[dtype], include_initial=initial
        )

    assert _outcome(LAMINA, f, INPUTS[x]) == _outcome(JAX, f, INPUTS[x])


@pytest.mark.parametrize("fn", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("initial", [False, True])
def test_cumulative_of_a_vector_needs_no_axis_and_transforms_as_jax(fn: str, initial: bool) -> None:
    v = np.array([0.5, 1.5, -2.0, 3.0], np.float32)
    programs: list[Callable[[Api], Callable[..., Any]]] = [
        lambda api: lambda a: getattr(api.jnp, fn)(a, include_initial=initial),
        lambda api: api.jax.grad(lambda a: getattr(api.jnp, fn)(a, include_initial=initial).sum()),
        lambda api: api.jax.vmap(lambda a: getattr(api.jnp, fn)(a, include_initial=initial)),
    ]
    for program in programs:
        x = v if program is not programs[2] else np.stack([v, v * 2])
        assert _outcome(LAMINA, program, x) == _outcome(JAX, program, x)


def _error(fn: Callable[[], Any]) -> tuple[type[BaseException], str]:
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


BAD_CALLS: dict[str, Callable[[Api], Any]] = {
    "sum_scalar": lambda a: a.jnp.cumulative_sum(np.float32(1.0)),
    "prod_scalar": lambda a: a.jnp.cumulative_prod(np.float32(1.0)),
    "sum_no_axis_2d": lambda a: a.jnp.cumulative_sum(M),
    "prod_no_axis_2d": lambda a: a.jnp.cumulative_prod(M),
    "sum_axis_out_of_range": lambda a: a.jnp.cumulative_sum(M, axis=2),
    "prod_axis_out_of_range": lambda a: a.jnp.cumulative_prod(M, axis=-3),
    "sum_list": lambda a: a.jnp.cumulative_sum([1.0, 2.0]),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_cumulative_errors_as_jax(name: str) -> None:
    assert _error(lambda: BAD_CALLS[name](LAMINA)) == _error(lambda: BAD_CALLS[name](JAX))
