"""`lax.reduce`, `lax.reduce_window` and the pooling-derivative primitives against JAX 0.10.2:
values and printed jaxprs (monoids recognised as JAX does, generic computations, tuples of
operands, padding, strides, dilations), errors with JAX's messages, derivatives (JAX's text
and values, finite differences) and batching (JAX's text and values, a Python loop)."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core.testing import Oracle, check_ad, check_jvp, check_vmap

pytestmark = pytest.mark.oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

_rng = np.random.default_rng(0)
X = _rng.standard_normal((4, 6)).astype(np.float32)
V = _rng.standard_normal(7).astype(np.float32)
B3 = _rng.standard_normal((3, 5, 4)).astype(np.float32)
INTS = _rng.integers(-9, 9, (4, 5)).astype(np.int32)
SMALL = B3[:2, :4, :2]
INF = np.float32(np.inf)


def window(
    init: Any, op: str, dims: Any, strides: Any = None, padding: Any = "VALID", **kw: Any
) -> Program:
    """`reduce_window` of one operand with `lax.<op>` from `init`."""

    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda x: lax.reduce_window(x, init, getattr(lax, op), dims, strides, padding, **kw)

    return program


def _mul_add(a: Any, b: Any) -> Any:
    return a * b + 1.0


FORWARD: dict[str, tuple[Program, Any]] = {
    "sum_1d": (window(0.0, "add", (3,)), V),
    "sum_1d_strided_same": (window(0.0, "add", (3,), (2,), "SAME"), V),
    "sum_2d_same": (window(0.0, "add", (2, 3), (2, 1), "SAME"), X),
    "max_2d_same_lower": (window(-INF, "max", (3, 2), (1, 2), "SAME_LOWER"), X),
    "min_int_explicit": (
        window(np.int32(np.iinfo(np.int32).max), "min", (2, 2), (1, 1), ((1, 0), (0, 2))),
        INTS,
    ),
    "max_dilated": (
        window(
            -INF,
            "max",
            (2, 2),
            (1, 2),
            ((0, 1), (1, 1)),
            base_dilation=(2, 1),
            window_dilation=(1, 2),
        ),
        X,
    ),
    "sum_dilated": (
        window(0.0, "add", (2, 3), (2, 1), "SAME", base_dilation=(1, 2), window_dilation=(2, 1)),
        X,
    ),
    "max_bool": (window(False, "max", (2, 2)), X > 0),
    "generic_mul": (window(1.0, "mul", (2, 2), (1, 1), "SAME"), X),
    "generic_max_not_identity": (window(0.0, "max", (2, 3), (1, 2), ((1, 1), (0, 0))), X),
    "generic_dilated": (
        window(1.0, "mul", (2, 2), (1, 1), "SAME", base_dilation=(2, 1), window_dilation=(1, 2)),
        X,
    ),
    "generic_custom": (
        lambda jnp, lax: (
            lambda x: lax.reduce_window(
                x, 0.0, lambda a, b: lax.max(a, b) + 0.0, (3,), (1,), "SAME"
            )
        ),
        V,
    ),
    "generic_pairs": (
        lambda jnp, lax: (
            lambda x: lax.reduce_window(
                (x, jnp.cos(x)),
                (-INF, np.float32(0)),
                lambda a, b: (
                    lax.select(a[0] >= b[0], a[0], b[0]),
                    lax.select(a[0] >= b[0], a[1], b[1]),
                ),
                (2, 2),
                (1, 1),
                "VALID",
            )
        ),
        X,
    ),
    "generic_dict": (
        lambda jnp, lax: (
            lambda x: lax.reduce_window(
                {"a": x, "b": x * 2},
                {"a": np.float32(0), "b": np.float32(1)},
                lambda u, v: {"a": u["a"] + v["a"], "b": u["b"] * v["b"]},
                (2, 1),
            )
        ),
        X,
    ),
    "reduce_custom": (
        lambda jnp, lax: lambda x: lax.reduce(x, np.float32(1), lambda a, b: a * b + 0.0, (0,)),
        X,
    ),
    "reduce_pairs": (
        lambda jnp, lax: (
            lambda x: lax.reduce(
                (x, x * 2),
                (np.float32(0), np.float32(1)),
                lambda a, b: (a[0] + b[0], a[1] * b[1]),
                (0, 2),
            )
        ),
        B3,
    ),
    "reduce_monoids": (
        lambda jnp, lax: (
            lambda x: (
                lax.reduce(x, 0.0, lax.add, (0,)),
                lax.reduce(x, 1.0, lax.mul, (1,)),
                lax.reduce(x, -INF, lax.max, (0, 1)),
                lax.reduce(x, INF, lax.min, (1,)),
                lax.reduce(x > 0, False, lax.bitwise_or, (0,)),
                lax.reduce(x > 0, True, lax.bitwise_and, (1,)),
            )
        ),
        X,
    ),
    "reduce_shared_computation": (
        lambda jnp, lax: (
            lambda x: (
                lax.reduce(x, np.float32(1), _mul_add, (0,)),
                lax.reduce(x, np.float32(1), _mul_add, (1,)),
                lax.reduce_window(x, np.float32(1), _mul_add, (2, 2)),
            )
        ),
        X,
    ),
    "weak_operands": (
        lambda jnp, lax: (
            lambda x: (
                lax.reduce(lax.broadcast(2.0, (3,)), 0.0, lax.add, (0,)),
                lax.reduce(lax.broadcast(2.0, (3,)), 1.0, lambda a, b: a * b, (0,)),
                lax.reduce_window(lax.broadcast(2.0, (3,)), 0.0, lax.add, (2,)),
                lax.reduce_window(lax.broadcast(2.0, (3,)), -np.inf, lax.max, (2,)),
            )
        ),
        X,
    ),
    "reduce_int_monoids": (
        lambda jnp, lax: (
            lambda x: (
                lax.reduce(x, np.int32(-1), lax.bitwise_and, (0,)),
                lax.reduce(x, np.int32(0), lax.bitwise_xor, (1,)),
                lax.reduce(x, np.int32(5), lax.add, (1,)),
            )
        ),
        INTS,
    ),
}


@pytest.mark.parametrize("case", sorted(FORWARD))
def test_values_and_jaxprs_are_jaxs(case: str, oracle: Oracle) -> None:
    program, arg = FORWARD[case]
    oracle.check(program, arg)


def test_reduce_window_shape_tuple_is_jaxs(oracle: Oracle) -> None:
    args = ((7, 5), (3, 2), (2, 1), ((1, 0), (0, 2)), (2, 1), (1, 2))
    assert lc.lax.reduce_window_shape_tuple(*args) == oracle.lax.reduce_window_shape_tuple(*args)
    assert lc.lax.reduce_window_shape_tuple(*args[:4]) == oracle.lax.reduce_window_shape_tuple(
        *args[:4]
    )


def _raises_as_jax(oracle: Oracle, program: Program, *args: Any) -> None:
    with pytest.raises(Exception) as theirs:
        program(oracle.jnp, oracle.lax)(*args)
    with pytest.raises(type(theirs.value)) as ours:
        program(lc.numpy, lc.lax)(*args)
    assert str(ours.value) == str(theirs.value)


ERRORS: dict[str, tuple[Program, Any]] = {
    "wrong_rank": (window(0.0, "add", (2,)), X),
    "strides_length": (window(0.0, "add", (2, 2), (1,)), X),
    "zero_window": (window(0.0, "add", (0, 2)), X),
    "negative_dilation": (window(0.0, "add", (2, 2), window_dilation=(1, -1)), X),
    "bad_padding": (window(0.0, "add", (2, 2), (1, 1), "FULL"), X),
    "same_without_strides": (window(0.0, "add", (2, 2), None, "SAME"), X),
    "sum_of_bools": (window(False, "add", (2, 2)), X > 0),
    "init_dtype": (window(np.int32(1), "mul", (2, 2)), X),
    "init_not_scalar": (window(np.ones(2, np.float32), "mul", (2, 2)), X),
    "no_operands": (lambda jnp, lax: lambda x: lax.reduce_window((), (), lax.add, (2,)), X),
    "tree_mismatch": (
        lambda jnp, lax: lambda x: lax.reduce_window((x, x), (0.0,), lax.add, (2, 2)),
        X,
    ),
    "output_tree": (
        lambda jnp, lax: (
            lambda x: lax.reduce_window(
                (x, x), (np.float32(0), np.float32(0)), lambda a, b: a[0] + b[0], (2, 2)
            )
        ),
        X,
    ),
    "reduce_tree_mismatch": (
        lambda jnp, lax: lambda x: lax.reduce([x], (0.0, 1.0), lax.add, (0,)),
        X,
    ),
    "reduce_init_not_scalar": (
        lambda jnp, lax: lambda x: lax.reduce(x, np.ones(2, np.float32), lax.mul, (0,)),
        X,
    ),
    "reduce_init_dtype": (
        lambda jnp, lax: lambda x: lax.reduce(x, np.int32(2), lax.mul, (0,)),
        X,
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_are_jaxs(case: str, oracle: Oracle) -> None:
    program, arg = ERRORS[case]
    _raises_as_jax(oracle, program, arg)


@pytest.mark.parametrize("fun", ["reduce", "reduce_window"])
def test_closing_over_a_tracer_is_jaxs_error(fun: str, oracle: Oracle) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        api: Any = lc if lax is lc.lax else oracle.jax
        window = (0,) if fun == "reduce" else (2, 2)
        reduce = getattr(lax, fun)
        jitted: Callable[..., Any] = api.jit(
            lambda x, y: reduce(x, np.float32(0), lambda a, b: a + b * y, window)
        )
        return jitted

    _raises_as_jax(oracle, program, X, np.float32(2))


AD: dict[str, tuple[Program, Any]] = {
    "max_pool": (window(-INF, "max", (2, 2), (2, 2), "SAME"), X),
    "max_pool_overlapping": (window(-INF, "max", (3, 2), (1, 1), "VALID"), X),
    "min_pool_padded": (window(INF, "min", (2, 3), (1, 2), ((1, 0), (1, 1))), X),
    "max_pool_base_dilated": (
        window(-INF, "max", (2, 2), (1, 1), "VALID", base_dilation=(2, 1)),
        X,
    ),
    "avg_pool": (window(0.0, "add", (2, 2), (2, 2), "SAME"), X),
    "sum_pool_dilated": (
        window(
            0.0,
            "add",
            (2, 2),
            (1, 2),
            ((1, 0), (0, 1)),
            base_dilation=(1, 2),
            window_dilation=(2, 1),
        ),
        X,
    ),
    "sum_1d": (window(0.0, "add", (3,), (2,), "SAME"), V),
}


@pytest.mark.parametrize("case", sorted(AD))
def test_derivatives_are_jaxs_and_numerically_right(case: str, oracle: Oracle) -> None:
    program, arg = AD[case]
    check_ad(oracle, program, arg)


def test_generic_derivatives(oracle: Oracle) -> None:
    x = (np.abs(X[:2, :3]) + 0.5).astype(np.float32)
    # JAX can only forward-differentiate the generic reduce_window (its jvp is not linear in
    # a transposable way); lax.reduce's jvp is a tree of reductions, so reverse mode works.
    generic = window(1.0, "mul", (2, 2), (1, 1), "SAME")
    check_ad(oracle, generic, x, kinds=("jvp",), order=0)
    check_jvp(generic(lc.numpy, lc.lax), [x])
    check_ad(oracle, FORWARD["generic_pairs"][0], x, kinds=("jvp",), order=0)
    check_ad(oracle, FORWARD["reduce_custom"][0], x, kinds=("jvp", "grad"), order=1)
    check_ad(oracle, FORWARD["reduce_pairs"][0], x[None], kinds=("grad",), order=1)


def test_max_pool_vjp_transposes_as_jax(oracle: Oracle) -> None:
    """The cotangent map of max pooling is linear in the cotangent: transposing it gives
    `select_and_gather_add`, and its jvp `select_and_scatter_add` again."""
    ct = _rng.standard_normal((2, 3)).astype(np.float32)

    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        api: Any = lc if lax is lc.lax else oracle.jax
        pool = window(-INF, "max", (2, 2), (2, 2), "SAME")(jnp, lax)
        return lambda c: api.vjp(pool, X)[1](c)[0]

    check_ad(oracle, program, ct, order=1)


VMAP: dict[str, tuple[Program, Any, Any]] = {
    "max_pool": (window(-INF, "max", (2, 2), (1, 2), "SAME"), B3, 0),
    "max_pool_axis1": (window(-INF, "max", (2, 2), (2, 1), "VALID"), B3, 1),
    "min_pool_axis2": (window(INF, "min", (2, 3), (1, 1), ((1, 0), (0, 1))), B3, 2),
    "avg_pool": (window(0.0, "add", (2, 2), (2, 2), "SAME"), B3, 1),
    "generic": (window(1.0, "mul", (2, 2), (1, 1), "SAME"), B3, 2),
    "generic_pairs": (FORWARD["generic_pairs"][0], B3, 1),
    "reduce": (FORWARD["reduce_custom"][0], B3, 1),
    "reduce_pairs": (
        lambda jnp, lax: (
            lambda x: lax.reduce(
                (x, x),
                (np.float32(0), np.float32(1)),
                lambda a, b: (a[0] + b[0], a[1] * b[1]),
                (1,),
            )
        ),
        B3,
        2,
    ),
}


@pytest.mark.parametrize("case", sorted(VMAP))
def test_vmap_is_jaxs_and_a_loop(case: str, oracle: Oracle) -> None:
    program, arg, axis = VMAP[case]
    check_vmap(oracle, program, arg, in_axes=axis, jitted=False)


def _pool_derivative(kind: str) -> Program:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        api: Any = lc if lax is lc.lax else pytest.importorskip("jax")
        pool = window(-INF, "max", (2, 2), (1, 2), "SAME")(jnp, lax)
        if kind == "grad":
            grad: Callable[..., Any] = api.grad(lambda x: (pool(x) * jnp.sin(pool(x))).sum())
            return grad
        return lambda x: api.jvp(pool, (x,), (jnp.cos(x),))[1]

    return program


@pytest.mark.parametrize(
    ("kind", "axis"),
    [
        ("grad", 2),
        ("jvp", 0),
        pytest.param("grad", 0, marks=pytest.mark.slow),
        pytest.param("jvp", 2, marks=pytest.mark.slow),
    ],
)
def test_vmap_of_pooling_derivatives(kind: str, axis: int, oracle: Oracle) -> None:
    # Batches select_and_scatter_add (grad) and select_and_gather_add (jvp).
    check_vmap(oracle, _pool_derivative(kind), SMALL, in_axes=axis, jitted=False)


def test_vmap_of_avg_pool_grad(oracle: Oracle) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        api: Any = lc if lax is lc.lax else oracle.jax
        pool = window(0.0, "add", (2, 3), (2, 1), "SAME")(jnp, lax)
        grad: Callable[..., Any] = api.grad(lambda x: (pool(x) ** 2).sum())
        return grad

    check_vmap(oracle, program, SMALL, in_axes=0, jitted=False)


def test_select_and_scatter_primitives_evaluate_as_jax(oracle: Oracle) -> None:
    jl, ll = oracle.lax, lc.lax
    source = _rng.standard_normal((2, 3)).astype(np.float32)
    params = {"window_dimensions": (2, 2), "window_strides": (2, 2), "padding": ((0, 0), (0, 0))}
    want = jl.select_and_scatter_add_p.bind(source, X, select_prim=oracle.lax.ge_p, **params)
    got = ll.select_and_scatter_add_p.bind(source, X, select_prim=ll.ge_p, **params)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    gathered = ll.select_and_gather_add_p.bind(
        np.cos(X), X, select_prim=ll.le_p, base_dilation=(1, 1), window_dilation=(1, 1), **params
    )
    expected = jl.select_and_gather_add_p.bind(
        np.cos(X), X, select_prim=jl.le_p, base_dilation=(1, 1), window_dilation=(1, 1), **params
    )
    np.testing.assert_allclose(np.asarray(gathered), np.asarray(expected))


def test_select_and_scatter_is_jaxs(oracle: Oracle) -> None:
    """The general primitive (JAX builds it only inside its CPU lowering of pooling's
    derivative): its printed equation and values, and no derivative or batching rule."""
    from jax._src.lax.windowed_reductions import _select_and_scatter as theirs

    from lamina_core.lax._select_and_scatter import _select_and_scatter as ours

    source = _rng.standard_normal((4, 2)).astype(np.float32)
    window = ((2, 2), (1, 3), ((1, 0), (0, 1)))
    zero: Any = np.float32(0)

    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        sas = ours if lax is lc.lax else theirs
        return lambda x, s: sas(x, lax.ge, *window, s, zero, lax.add)

    oracle.check(program, X, source)
    f = program(lc.numpy, lc.lax)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'select_and_scatter'"):
        lc.jvp(f, (X, source), (X, source))
    with pytest.raises(NotImplementedError, match="Batching rule for 'select_and_scatter'"):
        lc.vmap(f)(np.stack([X, X]), np.stack([source, source]))


@pytest.mark.slow
@pytest.mark.parametrize("op", ["add", "max", "min"])
@pytest.mark.parametrize("padding", ["VALID", "SAME", "SAME_LOWER", ((1, 1), (0, 2))])
@pytest.mark.parametrize("strides", [(1, 1), (2, 3)])
@pytest.mark.parametrize("dilations", [((1, 1), (1, 1)), ((2, 1), (1, 2))])
def test_window_sweep(op: str, padding: Any, strides: Any, dilations: Any, oracle: Oracle) -> None:
    init = {"add": 0.0, "max": -INF, "min": INF}[op]
    base, wdil = dilations
    program = window(init, op, (2, 3), strides, padding, base_dilation=base, window_dilation=wdil)
    oracle.check(program, X)
    check_vmap(oracle, program, B3, in_axes=1, jitted=False)
    if wdil == (1, 1) or op == "add":
        check_ad(oracle, program, X, order=1)
