"""`jnp.unstack` and `lax.unstack` bind one `unstack` equation, as JAX 0.10.2 does: printed
jaxprs byte for byte (plain, under `grad`, `jvp` and `vmap`), values, derivatives against
finite differences, `vmap` against a Python loop, the lowered module's text, and JAX's errors.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType, SimpleNamespace
from typing import Any

import jax
import numpy as np
import pytest

import lamina
from lamina_core.testing import check_grads

pytestmark = pytest.mark.oracle

Api = Any
LAMINA: Api = SimpleNamespace(jax=lamina, jnp=lamina.numpy, lax=lamina.lax)
JAX: Api = SimpleNamespace(jax=jax, jnp=jax.numpy, lax=jax.lax)

X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4) / 7.0


pytestmark = pytest.mark.usefixtures("simplified_jax_constants")


def _weighted_sum(api: Api, parts: Any) -> Any:
    """A scalar that depends on every part differently, so each cotangent is distinct."""
    total = 0.0
    for i, p in enumerate(parts):
        total = total + (api.jnp.sin(p) * float(i + 1)).sum()
    return total


Program = Callable[[Api], Callable[..., Any]]

PROGRAMS: dict[str, Program] = {
    "jnp_axis0": lambda a: lambda x: a.jnp.unstack(x),
    "jnp_axis1": lambda a: lambda x: a.jnp.unstack(x, axis=1),
    "jnp_axis2": lambda a: lambda x: a.jnp.unstack(x, axis=2),
    "jnp_axis_neg1": lambda a: lambda x: a.jnp.unstack(x, axis=-1),
    "lax_axis1": lambda a: lambda x: a.lax.unstack(x, 1),
    "lax_axis_neg3": lambda a: lambda x: a.lax.unstack(x, -3),
    "grad": lambda a: a.jax.grad(lambda x: _weighted_sum(a, a.jnp.unstack(x, axis=1))),
    "grad_one_part_used": lambda a: a.jax.grad(lambda x: a.jnp.unstack(x, axis=2)[1].sum()),
    "jvp": lambda a: lambda x: a.jax.jvp(lambda y: a.jnp.unstack(y, axis=1), (x,), (x * 2.0,)),
    "vjp": lambda a: (
        lambda x: a.jax.vjp(lambda y: a.jnp.unstack(y, axis=0), x)[1]((x[0], x[1] * 3.0))
    ),
    "linearize": lambda a: lambda x: a.jax.linearize(lambda y: a.jnp.unstack(y), x)[1](x),
    "jit": lambda a: a.jax.jit(lambda x: a.jnp.unstack(x, axis=1)),
    "vmap_axis_before_batch": lambda a: a.jax.vmap(lambda x: a.jnp.unstack(x, axis=0), in_axes=1),
    "vmap_axis_after_batch": lambda a: a.jax.vmap(lambda x: a.jnp.unstack(x, axis=1), in_axes=0),
    "vmap_batch_last": lambda a: a.jax.vmap(lambda x: a.jnp.unstack(x, axis=0), in_axes=2),
    "vmap_out_axes": lambda a: a.jax.vmap(
        lambda x: a.jnp.unstack(x, axis=1), in_axes=0, out_axes=1
    ),
    "vmap_unbatched_operand": lambda a: (
        lambda x: a.jax.vmap(lambda y: [y * p for p in a.jnp.unstack(x[0], axis=0)])(x[1, 0])
    ),
    "vmap_of_grad": lambda a: a.jax.vmap(
        a.jax.grad(lambda x: _weighted_sum(a, a.jnp.unstack(x, axis=1))), in_axes=2
    ),
}


def _printed(api: Api, program: Program) -> str:
    return str(api.jax.make_jaxpr(program(api))(X))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_unstack_program_prints_and_computes_as_jax(name: str) -> None:
    program = PROGRAMS[name]
    ours, theirs = _printed(LAMINA, program), _printed(JAX, program)
    assert ours == theirs, f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
    got = jax.tree_util.tree_leaves(program(LAMINA)(X))
    want = jax.tree_util.tree_leaves(program(JAX)(X))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_jnp_unstack_binds_one_equation_with_the_canonical_axis() -> None:
    text = str(lamina.make_jaxpr(lambda a: lamina.numpy.unstack(a))(np.zeros((2, 3), np.float32)))
    assert text == "{ lambda ; a:f32[2,3]. let b:f32[3] c:f32[3] = unstack[axis=0] a in (b, c) }"
    neg = str(lamina.make_jaxpr(lambda a: lamina.numpy.unstack(a, axis=-1))(X))
    assert "unstack[axis=2]" in neg


DTYPE_PROGRAMS: dict[str, Program] = {
    "axis1": lambda api: lambda v: api.jnp.unstack(v, axis=1),
    "after_mul": lambda api: lambda v: api.jnp.unstack(v * 2),
    "weak": lambda api: lambda v: api.jnp.unstack(api.jnp.zeros(3) + 1.0),
}


@pytest.mark.parametrize("program", sorted(DTYPE_PROGRAMS))
@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.float16, np.complex64])
def test_unstack_keeps_dtype_and_weak_type_as_jax(program: str, dtype: Any) -> None:
    x = (np.arange(6) % 3).reshape(3, 2).astype(dtype)
    fn = DTYPE_PROGRAMS[program]
    assert str(lamina.make_jaxpr(fn(LAMINA))(x)) == str(jax.make_jaxpr(fn(JAX))(x))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_unstack_grad_matches_finite_differences(axis: int) -> None:
    check_grads(
        lambda x: _weighted_sum(LAMINA, lamina.numpy.unstack(x, axis=axis)),
        (X,),
        order=2,
        modes=("fwd", "rev"),
        atol=2e-2,
        rtol=2e-2,
    )


@pytest.mark.parametrize(("in_axis", "axis"), [(0, 0), (0, 1), (1, 0), (2, 0), (2, 1)])
def test_vmapped_unstack_equals_a_python_loop(in_axis: int, axis: int) -> None:
    def f(x: Any) -> Any:
        return lamina.numpy.unstack(x, axis=axis)

    batched = lamina.vmap(f, in_axes=in_axis)(X)
    rows = [f(np.take(X, i, axis=in_axis)) for i in range(X.shape[in_axis])]
    assert len(batched) == len(rows[0])
    for k, part in enumerate(batched):
        np.testing.assert_array_equal(np.asarray(part), np.stack([np.asarray(r[k]) for r in rows]))


@pytest.mark.parametrize("axis", [0, 1, 2, -2])
def test_lowered_unstack_text_equals_jax(axis: int) -> None:
    def program(api: ModuleType) -> Callable[..., Any]:
        return lambda x: api.numpy.unstack(x, axis=axis)

    ours = lamina.jit(program(lamina)).lower(X).as_text()
    theirs = jax.jit(program(jax)).lower(X).as_text()
    assert ours == theirs, f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"


def _error(fn: Callable[[], Any]) -> BaseException:
    with pytest.raises(Exception) as info:
        fn()
    return info.value


BAD_CALLS: dict[str, Callable[[Api], Any]] = {
    "axis_too_big": lambda a: a.jnp.unstack(X, axis=3),
    "axis_too_negative": lambda a: a.jnp.unstack(X, axis=-4),
    "float_axis": lambda a: a.jnp.unstack(X, axis=1.0),
    "scalar": lambda a: a.jnp.unstack(np.float32(1.0)),
    "python_list": lambda a: a.jnp.unstack([1.0, 2.0]),
    "traced_axis_too_big": lambda a: a.jax.make_jaxpr(lambda x: a.jnp.unstack(x, axis=5))(X),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_jnp_unstack_errors_as_jax(name: str) -> None:
    ours, theirs = _error(lambda: BAD_CALLS[name](LAMINA)), _error(lambda: BAD_CALLS[name](JAX))
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("args", [(X, 3), (X, -4), (np.float32(1.0), 0)])
def test_lax_unstack_errors_say_what_jax_says(args: tuple[Any, int]) -> None:
    """Lamina's lax errors name the op before JAX's text (the convention of `lax`'s checks)."""
    ours = _error(lambda: lamina.lax.unstack(*args))
    theirs = _error(lambda: jax.lax.unstack(*args))
    assert type(ours) is type(theirs)
    assert str(ours) == f"lax.unstack: {theirs}"


# --- iterating over a concrete array: chunks of 100 rows, each one `unstack` -------------------


@pytest.mark.parametrize("rows", [0, 1, 99, 100, 101, 250])
def test_iterating_a_concrete_array_gives_jax_rows(rows: int) -> None:
    data = np.arange(rows * 2, dtype=np.int32).reshape(rows, 2)
    ours = list(lamina.numpy.asarray(data))
    theirs = list(jax.numpy.asarray(data))
    assert [repr(r) for r in ours] == [repr(r) for r in theirs]
    assert all(type(r) is type(lamina.numpy.asarray(0)) for r in ours)


def test_iterating_a_weak_concrete_array_keeps_the_weak_type() -> None:
    ours = list(lamina.lax.broadcast(2.0, (3,)))
    theirs = list(jax.lax.broadcast(2.0, (3,)))
    assert [(r.weak_type, repr(r)) for r in ours] == [(r.weak_type, repr(r)) for r in theirs]


def test_iterating_concrete_keys_gives_jax_keys() -> None:
    ours = list(lamina.random.split(lamina.random.key(0), 3))
    theirs = list(jax.random.split(jax.random.key(0), 3))
    assert [repr(k) for k in ours] == [repr(k) for k in theirs]


def _iterate(api: Api) -> Callable[..., Any]:
    rows = api.jnp.ones((3, 2))  # concrete: made before tracing starts
    return lambda x: [r + x for r in rows]


def _grad_of_iterate(api: Api) -> Callable[..., Any]:
    rows = api.jnp.ones((3, 2))
    return api.jax.grad(lambda x: sum((r * x).sum() for r in rows))  # type: ignore[no-any-return]  # Api is Any


CLOSED_OVER: dict[str, Program] = {
    "iterate": _iterate,
    "grad": _grad_of_iterate,
    "vmap": lambda a: a.jax.vmap(_iterate(a)),
}


@pytest.mark.parametrize("name", sorted(CLOSED_OVER))
def test_iterating_a_closed_over_array_stages_unstack_as_jax(name: str) -> None:
    x = np.float32(1.5) if name != "vmap" else np.ones(2, np.float32)
    ours = str(lamina.make_jaxpr(CLOSED_OVER[name](LAMINA))(x))
    theirs = str(jax.make_jaxpr(CLOSED_OVER[name](JAX))(x))
    assert ours == theirs, f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
    assert "unstack[axis=0]" in ours


def test_iterating_a_long_closed_over_array_stages_chunks() -> None:
    """JAX 0.10.2 fails here (its chunk count becomes a tracer); Lamina stages the chunks."""
    long = lamina.numpy.ones((150, 2))
    text = str(lamina.make_jaxpr(lambda x: [r + x for r in long][-1])(np.float32(1)))
    assert text.count("dynamic_slice[slice_sizes=(100, 2)]") == 1
    assert text.count("dynamic_slice[slice_sizes=(50, 2)]") == 1
    assert text.count("unstack[axis=0]") == 2
