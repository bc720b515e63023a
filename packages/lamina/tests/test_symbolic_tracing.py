"""Tracing with symbolic dimensions (shape polymorphism) against JAX: `make_jaxpr` of
batch-polymorphic programs prints byte-identical jaxprs (`f32[b,3]`, `dim_as_value`,
gathers where JAX gathers), under `grad` and `vmap` too; `eval_shape` answers the same
types; comparisons the dimension algebra cannot decide raise JAX's error and text."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest

import lamina

pytestmark = pytest.mark.oracle

F32 = np.float32
Program = Callable[..., Any]
"""`(api, jnp, *args) -> outputs`: run once with JAX's modules and once with Lamina's."""

CASES: dict[str, tuple[Program, tuple[tuple[str, Any], ...]]] = {}


def case(name: str, *specs: tuple[str, Any]) -> Callable[[Program], Program]:
    def register(fn: Program) -> Program:
        CASES[name] = (fn, specs or (("b, 3", F32),))
        return fn

    return register


@case("elementwise")
def _elementwise(m: Any, jnp: Any, x: Any) -> Any:
    return jnp.tanh(jnp.sin(x)) * 2, m.nn.relu(x), x + jnp.ones((3,), F32), x.astype(np.int32)


@case("binary", ("b, 3", F32), ("b, 3", F32))
def _binary(m: Any, jnp: Any, x: Any, y: Any) -> Any:
    return x * y - y, jnp.where(x > 0, x, 0.0)


@case("broadcast_and_squeeze")
def _broadcast(m: Any, jnp: Any, x: Any) -> Any:
    wide = jnp.broadcast_to(x[:, None, :], (x.shape[0], 2, 3))
    return wide, jnp.squeeze(jnp.expand_dims(x, 1), 1), jnp.zeros((x.shape[0], 2))


@case("reshape")
def _reshape(m: Any, jnp: Any, x: Any) -> Any:
    return x.reshape(-1), x.reshape((x.shape[0] * 3,)), x.reshape((-1, 1, 3)), x.T


@case("reshape_two_variables", ("a, b", F32))
def _reshape_two(m: Any, jnp: Any, x: Any) -> Any:
    return x.reshape(-1), jnp.sum(x, 1)


@case("reshape_split", ("2*b, 3", F32))
def _reshape_split(m: Any, jnp: Any, x: Any) -> Any:
    return x.reshape((2, -1, 3))


@case("reductions")
def _reductions(m: Any, jnp: Any, x: Any) -> Any:
    return jnp.sum(x, axis=0), jnp.max(x, axis=1), jnp.min(x), jnp.argmax(x, axis=0)


@case("mean")
def _mean(m: Any, jnp: Any, x: Any) -> Any:
    return jnp.mean(x, axis=0), jnp.mean(x), x * x.shape[0]


@case("products", ("b, 3", F32), ("b, 3", F32))
def _products(m: Any, jnp: Any, x: Any, y: Any) -> Any:
    return x @ jnp.ones((3, 4), F32), x.T @ y


@case("joining")
def _joining(m: Any, jnp: Any, x: Any) -> Any:
    return jnp.concatenate([x, x], axis=0), jnp.concatenate([x, x], axis=1), jnp.stack([x, x])


@case("indexing")
def _indexing(m: Any, jnp: Any, x: Any) -> Any:
    return x[:, 1:], x[:, 0], x[..., 2], x[-1], x[1:], x[::2]


@case("iota")
def _iota(m: Any, jnp: Any, x: Any) -> Any:
    return jnp.arange(x.shape[0]), jnp.arange(x.shape[0], dtype=F32)


@case("normalizations")
def _normalizations(m: Any, jnp: Any, x: Any) -> Any:
    return m.nn.softmax(x), m.nn.softmax(x, axis=0), m.nn.logsumexp(x, axis=-1)


@case("mlp_grad", ("b, 3", F32), ("b", F32))
def _mlp_grad(m: Any, jnp: Any, x: Any, y: Any) -> Any:
    w, v = jnp.ones((3, 4), F32), jnp.ones((4,), F32)

    def loss(w: Any, x: Any, y: Any) -> Any:
        return jnp.mean((jnp.tanh(x @ w) @ v - y) ** 2)

    return m.grad(loss)(w, x, y)


@case("vmap_and_jit")
def _vmap(m: Any, jnp: Any, x: Any) -> Any:
    return m.vmap(lambda r: jnp.sum(r * r))(x), m.jit(lambda y: y * 2)(x), jnp.cumsum(x, 1)


@case("vjp")
def _vjp(m: Any, jnp: Any, x: Any) -> Any:
    return m.vjp(jnp.sin, x)[1](x)


@case("statistics")
def _statistics(m: Any, jnp: Any, x: Any) -> Any:
    return jnp.var(x, axis=0), jnp.std(x), jnp.linalg.norm(x, axis=1), jnp.sort(x, axis=0)


@case("one_hot", ("b", np.int32))
def _one_hot(m: Any, jnp: Any, x: Any) -> Any:
    return m.nn.one_hot(x, 4)


@case("take", ("b, 3", F32), ("b", np.int32))
def _take(m: Any, jnp: Any, x: Any, i: Any) -> Any:
    return jnp.take(x, i, axis=0), x[i], x[0]


@case("pad_tile_repeat_flip")
def _pad(m: Any, jnp: Any, x: Any) -> Any:
    padded = jnp.pad(x, ((1, 1), (0, 0)))
    return padded, jnp.tile(x, (2, 1)), jnp.repeat(x, 2, axis=0), jnp.flip(x, 0), x[::-1]


@case("control_flow")
def _control_flow(m: Any, jnp: Any, x: Any) -> Any:
    looped = m.lax.fori_loop(0, 3, lambda i, c: c * 2, x)
    chosen = m.lax.cond(True, lambda y: y + 1, lambda y: y - 1, x)
    scanned = m.lax.scan(lambda c, r: (c + r, r * 2), jnp.zeros(3, F32), x)
    return looped, chosen, scanned


@case("batched_products", ("b, 3, 4", F32), ("b, 4, 5", F32))
def _batched(m: Any, jnp: Any, x: Any, y: Any) -> Any:
    return jnp.matmul(x, y), jnp.einsum("bij,bjk->bik", x, y), jnp.einsum("bij,bij->b", x, x)


@case("vmap_over_static_axis")
def _vmap_static(m: Any, jnp: Any, x: Any) -> Any:
    return m.vmap(lambda c: c * 2, in_axes=1)(x), m.vmap(lambda r: jnp.outer(r, r))(x)


@case("value_and_grad_mlp", ("b, 4", F32))
def _value_and_grad(m: Any, jnp: Any, x: Any) -> Any:
    def loss(p: Any, x: Any) -> Any:
        h = m.nn.relu(x @ p["w1"] + p["b1"])
        return jnp.mean(m.nn.logsumexp(h @ p["w2"], axis=-1))

    params = {"w1": jnp.ones((4, 8), F32), "b1": jnp.zeros(8, F32), "w2": jnp.ones((8, 2), F32)}
    return m.value_and_grad(loss)(params, x)


@case("jvp")
def _jvp(m: Any, jnp: Any, x: Any) -> Any:
    return m.jvp(lambda y: jnp.sum(jnp.tanh(y), axis=0), (x,), (x,))


@case("creation")
def _creation(m: Any, jnp: Any, x: Any) -> Any:
    b = x.shape[0]
    return jnp.zeros(b), jnp.broadcast_to(1.0, (b, 3)), jnp.eye(b), m.lax.iota(np.int32, b)


@case("lax_slicing")
def _lax_slicing(m: Any, jnp: Any, x: Any) -> Any:
    sliced = m.lax.dynamic_slice_in_dim(x, 0, 2, axis=1), m.lax.slice_in_dim(x, 0, 2, axis=1)
    return sliced, x.at[:, 0].set(1.0), x.at[0].add(2.0), m.lax.top_k(x, 2)


@case("axes", ("b, 3, c", F32))
def _axes(m: Any, jnp: Any, x: Any) -> Any:
    return jnp.transpose(x, (2, 0, 1)), jnp.moveaxis(x, 0, -1), jnp.ravel(x), x.flatten()


ERRORS: dict[str, tuple[Program, tuple[tuple[str, Any], ...]]] = {}


def error_case(name: str, *specs: tuple[str, Any]) -> Callable[[Program], Program]:
    def register(fn: Program) -> Program:
        ERRORS[name] = (fn, specs or (("b, 3", F32),))
        return fn

    return register


@error_case("comparison")
def _comparison(m: Any, jnp: Any, x: Any) -> Any:
    return x if x.shape[0] > 2 else -x


@error_case("broadcast_static")
def _broadcast_static(m: Any, jnp: Any, x: Any) -> Any:
    return x + jnp.ones((4, 3), F32)


@error_case("broadcast_two_variables", ("a, 3", F32), ("b, 3", F32))
def _broadcast_two(m: Any, jnp: Any, x: Any, y: Any) -> Any:
    return x + y


@error_case("reshape_uneven")
def _reshape_uneven(m: Any, jnp: Any, x: Any) -> Any:
    return x.reshape((2, -1))


@error_case("constant_required")
def _constant_required(m: Any, jnp: Any, x: Any) -> Any:
    return jnp.zeros(int(x.shape[0]))


@error_case("slice_step")
def _slice_step(m: Any, jnp: Any, x: Any) -> Any:
    return x[:: x.shape[0] - 2]


@error_case("slice_start")
def _slice_start(m: Any, jnp: Any, x: Any) -> Any:
    return x[x.shape[0] - 2 :]


@error_case("arange_step")
def _arange_step(m: Any, jnp: Any, x: Any) -> Any:
    return jnp.arange(0, 10, x.shape[0] - 2)


def _structs(api: ModuleType, specs: tuple[tuple[str, Any], ...]) -> list[Any]:
    scope = api.export.SymbolicScope()
    return [api.ShapeDtypeStruct(api.export.symbolic_shape(s, scope=scope), d) for s, d in specs]


def _jaxpr(api: ModuleType, fn: Program, specs: tuple[tuple[str, Any], ...]) -> str:
    jnp = api.numpy
    return str(api.make_jaxpr(lambda *a: fn(api, jnp, *a))(*_structs(api, specs)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_jaxprs_print_as_jax(name: str) -> None:
    fn, specs = CASES[name]
    assert _jaxpr(lamina, fn, specs) == _jaxpr(jax, fn, specs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_eval_shape_answers_as_jax(name: str) -> None:
    fn, specs = CASES[name]

    def shapes(api: ModuleType) -> str:
        jnp = api.numpy
        out = api.eval_shape(lambda *a: fn(api, jnp, *a), *_structs(api, specs))
        leaves = api.tree_util.tree_leaves(out)
        return str([(tuple(map(str, o.shape)), str(o.dtype)) for o in leaves])

    assert shapes(lamina) == shapes(jax)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_undecidable_operations_raise_jax_s_errors(name: str) -> None:
    fn, specs = ERRORS[name]

    def outcome(api: ModuleType) -> tuple[str, str]:
        try:
            _jaxpr(api, fn, specs)
        except Exception as err:  # the class name and text are compared
            return type(err).__name__, str(err)
        raise AssertionError("no error")

    assert outcome(lamina) == outcome(jax)


def test_integer_shapes_are_unchanged() -> None:
    x = lamina.ShapeDtypeStruct((4, 3), F32)
    fn, _ = CASES["mean"]
    ours = str(lamina.make_jaxpr(lambda a: fn(lamina, lamina.numpy, a))(x))
    spec = jax.ShapeDtypeStruct((4, 3), F32)  # type: ignore[no-untyped-call]
    theirs = str(jax.make_jaxpr(lambda a: fn(jax, jax.numpy, a))(spec))
    assert ours == theirs
