# ruff: noqa: E501  (one case per line reads best)
"""vmap's interpreter and API against JAX: where mapped axes go (JAX's printed jaxprs), eager
values, axes as pytree prefixes, `axis_size`, keyword arguments, nesting, and JAX's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core.testing import Oracle, check_vmap

pytestmark = pytest.mark.oracle

f32 = np.float32


def arr(*shape: int, lo: float = -0.8, hi: float = 0.9) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return np.linspace(lo, hi, n).reshape(shape).astype(f32)


CASES: list[tuple[str, Any, tuple[Any, ...], Any, Any]] = [
    ("B1 unmapped scalar", lambda jnp, lax: lambda x, y: jnp.sin(x) + y, (arr(3), 1.0), (0, None), 0),
    ("B2 axes 1 and 0", lambda jnp, lax: lambda x, y: jnp.sin(x) + y, (arr(2, 3), arr(3, 2)), (1, 0), 0),
    ("B3 out_axes 1", lambda jnp, lax: lambda x, y: jnp.sin(x) + y, (arr(3, 2), 1.0), (0, None), 1),
    ("B4 sum over axis 1", lambda jnp, lax: lambda x: jnp.sum(x, 0), (arr(2, 3),), 1, 0),
    ("B17 unmapped output", lambda jnp, lax: lambda x, y: (x * 2.0, y + 1.0), (arr(3), f32(1)), (0, None), 0),
    ("B21 unmapped vector", lambda jnp, lax: lambda x, y: x + y, (arr(4, 3), arr(4)), (1, None), 0),
    ("negative in_axes", lambda jnp, lax: lambda x: jnp.exp(x) * 2.0, (arr(2, 3),), -1, 0),
    ("negative out_axes", lambda jnp, lax: lambda x: jnp.exp(x), (arr(3, 2, 4),), 0, -1),
    ("out_axes per output", lambda jnp, lax: lambda x: (x, x * 2.0), (arr(3, 2),), 0, (1, 0)),
    ("unmapped output at 1", lambda jnp, lax: lambda x, y: (x, y), (arr(3), arr(2)), (0, None), (0, 1)),
    ("dict argument", lambda jnp, lax: lambda d: d["a"] * d["b"], ({"a": arr(3, 2), "b": arr(2)},), ({"a": 0, "b": None},), 0),
    ("list in_axes", lambda jnp, lax: lambda x, y: x - y, (arr(2, 3), arr(3)), [1, 0], 0),
    ("comparison and select", lambda jnp, lax: lambda x: jnp.where(x > 0, x, -x), (arr(3, 4),), 1, 0),
    ("integer_pow and max", lambda jnp, lax: lambda x, y: jnp.maximum(x**2, y), (arr(3, 2), arr(2)), (0, None), 0),
    ("reductions", lambda jnp, lax: lambda x: (jnp.max(x), jnp.argmin(x, axis=0), jnp.prod(x, 1)), (arr(3, 2, 4),), 1, 0),
    ("mean keepdims", lambda jnp, lax: lambda x: x - jnp.mean(x, axis=0, keepdims=True), (arr(3, 4, 2),), 2, 0),
    ("astype", lambda jnp, lax: lambda x: (x * 3).astype(jnp.int32), (arr(3, 2),), 0, 0),
    ("jit inside", lambda jnp, lax: lambda x, y: jnp.cos(x) * y, (arr(3, 2), arr(2)), (0, None), 0),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "program", "args", "in_axes", "out_axes"), CASES, ids=[c[0] for c in CASES]
)
def test_vmap_as_jax(
    oracle: Oracle, name: str, program: Any, args: Any, in_axes: Any, out_axes: Any
) -> None:
    check_vmap(oracle, program, *args, in_axes=in_axes, out_axes=out_axes)


def test_vmap_of_jit_stays_one_jit_equation(oracle: Oracle) -> None:
    check_vmap(
        oracle,
        lambda jnp, lax: (
            oracle.jax.jit(lambda x, y: jnp.sin(x) + y)
            if jnp is oracle.jnp
            else lc.jit(lambda x, y: jnp.sin(x) + y)
        ),
        arr(3),
        f32(2),
        in_axes=(0, None),
    )


def test_axis_size_without_mapped_inputs(oracle: Oracle) -> None:
    check_vmap(oracle, lambda jnp, lax: lambda x: x * 2.0, f32(3), in_axes=None, axis_size=4)


def test_nested_vmap(oracle: Oracle) -> None:
    x = arr(3, 4, 2)
    ours = lc.make_jaxpr(lc.vmap(lc.vmap(lambda v: lc.numpy.sum(v * v), in_axes=1)))(x)
    theirs = oracle.jax.make_jaxpr(
        oracle.jax.vmap(oracle.jax.vmap(lambda v: oracle.jnp.sum(v * v), in_axes=1))
    )(x)
    assert str(ours) == str(theirs)


def test_keyword_arguments_are_mapped_over_axis_0(oracle: Oracle) -> None:
    x, y = arr(3, 2), arr(3, 2)
    got = lc.vmap(lambda a, b: a * b, in_axes=(1,))(x.T, b=y)
    want = oracle.jax.vmap(lambda a, b: a * b, in_axes=(1,))(x.T, b=y)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))


def test_eager_results_are_arrays() -> None:
    out = lc.vmap(lambda x: x * 2.0)(arr(3))
    assert out.shape == (3,)
    np.testing.assert_allclose(np.asarray(out), arr(3) * 2.0)


def _error(f: Any) -> str:
    with pytest.raises(Exception) as info:
        f()
    return f"{type(info.value).__name__}: {info.value}"


ERRORS = [
    ("F3 inconsistent sizes", lambda v, np_: v(lambda x, y: x + y)(np_.ones(3, f32), np_.ones(4, f32))),
    ("F4 in_axes length", lambda v, np_: v(lambda x, y: x + y, in_axes=(0, 0, 0))(np_.ones(3, f32), np_.ones(3, f32))),
    ("three sizes", lambda v, np_: v(lambda x, y, z: x)(np_.ones(3, f32), np_.ones(4, f32), np_.ones(3, f32))),
    ("rank too small", lambda v, np_: v(lambda x: x, in_axes=1)(np_.ones(3, f32))),
    ("no mapped value", lambda v, np_: v(lambda x: x, in_axes=None)(np_.ones(3, f32))),
    ("no arguments", lambda v, np_: v(lambda: 1.0)()),
    ("bad in_axes type", lambda v, np_: v(lambda x: x, in_axes="a")(np_.ones(3, f32))),
    ("bad out_axes leaf", lambda v, np_: v(lambda x: x, out_axes=1.5)(np_.ones(3, f32))),
    ("mapped output with out_axes None", lambda v, np_: v(lambda x: x, out_axes=None)(np_.ones(3, f32))),
    ("in_axes not a prefix", lambda v, np_: v(lambda x: x, in_axes=((0, 0),))(np_.ones(3, f32))),
    ("python bool of a batched value", lambda v, np_: v(lambda x: 1.0 if x > 0 else 0.0)(np_.ones(3, f32))),
]  # fmt: skip


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_as_jax(oracle: Oracle, name: str, call: Any) -> None:
    ours = _error(lambda: call(lc.vmap, np))
    theirs = _error(lambda: call(oracle.jax.vmap, np))
    if name == "in_axes not a prefix":
        assert ours.split("\n")[0].split(",")[0] == theirs.split("\n")[0].split(";")[0]
    elif name == "python bool of a batched value":
        assert ours.split("\n")[0] == theirs.split("\n")[0]
    else:
        assert ours == theirs
