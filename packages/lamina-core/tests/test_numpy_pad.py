"""`jnp.pad` against JAX 0.10.2: every mode on 1-D to 3-D arrays of integer, float, bool and
complex dtypes, the accepted forms of `pad_width`, pads wider than the array, the errors JAX
raises for bad arguments, and `pad` under `jit`, `grad` and `vmap`.

Each case is computed eagerly and from Lamina's jaxpr (run by the configured evaluator, so
`--lamina-execute=xla-jit` runs it on XLA) and compared with JAX's dtype, shape and values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
import lamina_core.numpy as lnp
from lamina_core.numpy import _pad as lnp_pad
from lamina_core.testing import Oracle, sweep
from lamina_core.trace._values import to_numpy

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jnp = jax.numpy

_V = np.array([1.0, 2.5, -3.0, 4.0, 0.5], np.float32)
_I = np.arange(1, 13, dtype=np.int32).reshape(3, 4) * np.array([1, -2, 3, 1], np.int32)
_T = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4) ** 1.5
_B = np.array([[True, False, False], [False, True, True]])
_C = (np.arange(6.0) - 2.0j * np.arange(6.0)[::-1]).astype(np.complex64).reshape(2, 3)
_ONE = np.array([3.0], np.float32)
_U8 = np.array([[250, 3, 7], [0, 255, 128]], np.uint8)
_E = np.zeros((0, 3), np.float32)


def _set_ends(row: Any, width: tuple[int, int], axis: int, kwargs: dict[str, Any]) -> Any:
    """A NumPy-style padding function (returning the row, as JAX wants)."""
    before, after = width
    row = row.at[:before].set(kwargs.get("low", -1))
    return row.at[row.shape[0] - after :].set(kwargs.get("high", 1) * (axis + 1))


def _ramp_row(row: Any, width: tuple[int, int], axis: int, kwargs: dict[str, Any]) -> Any:
    return row * 2 + axis


# (name, array, pad_width, keyword arguments of pad)
CASES: list[tuple[str, np.ndarray, Any, dict[str, Any]]] = [
    ("constant_int_width", _V, 2, {}),
    ("constant_pair", _V, (1, 3), {"constant_values": 9.5}),
    ("constant_per_axis", _I, ((1, 2), (0, 3)), {"constant_values": ((7, 8), (-1, -2))}),
    ("constant_pair_values", _T, 1, {"constant_values": (5.0, -5.0)}),
    ("constant_one_value", _I, ((2, 1),), {"constant_values": np.array([4])}),
    ("constant_float_value_int_array", _I, 1, {"constant_values": 2.7}),
    ("constant_width_array", _I, np.array([[0, 1], [2, 0]]), {}),
    ("constant_width_tuple_of_one", _T, (2,), {}),
    ("constant_zero_pads", _T, 0, {"constant_values": 3.0}),
    ("constant_bool", _B, 1, {"constant_values": True}),
    ("constant_complex", _C, (1, 2), {"constant_values": 1 + 2j}),
    ("constant_uint8", _U8, ((1, 0), (0, 2)), {"constant_values": 300 - 100}),
    ("constant_empty_axis", _E, ((1, 1), (0, 2)), {}),
    ("constant_numpy_int_widths", _V, (np.int64(2), np.int32(1)), {}),
    ("edge_1d", _V, (3, 1), {"mode": "edge"}),
    ("edge_3d", _T, ((1, 0), (0, 2), (3, 1)), {"mode": "edge"}),
    ("edge_bool", _B, 2, {"mode": "edge"}),
    ("edge_size_one", _ONE, 3, {"mode": "edge"}),
    ("wrap_1d", _V, (2, 3), {"mode": "wrap"}),
    ("wrap_wider_than_array", _V, (12, 7), {"mode": "wrap"}),
    ("wrap_2d_wider", _I, ((4, 7), (9, 1)), {"mode": "wrap"}),
    ("wrap_complex", _C, 4, {"mode": "wrap"}),
    ("wrap_empty_axis_unpadded", _E, ((0, 0), (2, 5)), {"mode": "wrap"}),
    ("reflect_1d", _V, 2, {"mode": "reflect"}),
    ("reflect_wider_than_array", _V, (11, 9), {"mode": "reflect"}),
    ("reflect_odd", _V, (3, 2), {"mode": "reflect", "reflect_type": "odd"}),
    ("reflect_odd_wider", _V, (13, 6), {"mode": "reflect", "reflect_type": "odd"}),
    ("reflect_2d_int_odd_wider", _I, ((5, 4), (6, 9)), {"mode": "reflect", "reflect_type": "odd"}),
    ("reflect_size_one", _ONE, (2, 3), {"mode": "reflect"}),
    ("reflect_size_one_odd", _ONE, 4, {"mode": "reflect", "reflect_type": "odd"}),
    ("reflect_3d", _T, ((1, 1), (2, 0), (0, 3)), {"mode": "reflect"}),
    ("reflect_complex_odd", _C, 3, {"mode": "reflect", "reflect_type": "odd"}),
    ("symmetric_1d", _V, 2, {"mode": "symmetric"}),
    ("symmetric_wider_than_array", _V, (12, 8), {"mode": "symmetric"}),
    ("symmetric_odd", _V, (4, 1), {"mode": "symmetric", "reflect_type": "odd"}),
    ("symmetric_odd_wider_2d", _I, ((7, 3), (2, 10)), {"mode": "symmetric", "reflect_type": "odd"}),
    ("symmetric_bool_wider", _B, (5, 4), {"mode": "symmetric"}),
    ("symmetric_uint8_odd", _U8, 2, {"mode": "symmetric", "reflect_type": "odd"}),
    ("linear_ramp_default", _V, (3, 2), {"mode": "linear_ramp"}),
    ("linear_ramp_ends", _V, 4, {"mode": "linear_ramp", "end_values": (10.0, -6.0)}),
    (
        "linear_ramp_int",
        _I,
        ((2, 3), (1, 4)),
        {"mode": "linear_ramp", "end_values": ((5, -7), (3, 20))},
    ),
    ("linear_ramp_int_float_end", _I, 2, {"mode": "linear_ramp", "end_values": 1.5}),
    ("linear_ramp_3d", _T, 2, {"mode": "linear_ramp", "end_values": ((1, 2), (3, 4), (5, 6))}),
    ("linear_ramp_complex", _C, 2, {"mode": "linear_ramp", "end_values": 1 + 1j}),
    ("maximum", _I, 2, {"mode": "maximum"}),
    ("maximum_stat_length", _T, (1, 2), {"mode": "maximum", "stat_length": 2}),
    (
        "minimum_per_axis",
        _I,
        ((1, 2), (3, 0)),
        {"mode": "minimum", "stat_length": ((1, 2), (2, 1))},
    ),
    ("minimum_bool", _B, 1, {"mode": "minimum"}),
    ("mean_float", _T, 1, {"mode": "mean"}),
    ("mean_int_rounds", _I, (2, 1), {"mode": "mean"}),
    ("mean_int_stat_length", _I, 2, {"mode": "mean", "stat_length": (2, 3)}),
    ("mean_stat_length_longer", _V, 3, {"mode": "mean", "stat_length": 50}),
    ("mean_complex", _C, 1, {"mode": "mean", "stat_length": 2}),
    ("mean_bool", _B, 1, {"mode": "mean"}),
    ("mean_uint8", _U8, 1, {"mode": "mean"}),
    ("median", _V, (2, 2), {"mode": "median"}),
    ("median_int_stat_length", _I, 2, {"mode": "median", "stat_length": ((2, 2), (3, 4))}),
    ("empty", _T, ((1, 0), (2, 2), (0, 1)), {"mode": "empty"}),
    ("empty_int", _I, 1, {"mode": "empty"}),
    ("callable_1d", _V, (2, 3), {"mode": _set_ends}),
    ("callable_2d_kwargs", _I, ((1, 2), (2, 1)), {"mode": _set_ends, "low": 5, "high": -3}),
    ("callable_3d", _T, 1, {"mode": _ramp_row}),
]


def _check(got: Any, want: Any, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    g, w = np.asarray(to_numpy(got)), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    if w.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


@pytest.mark.parametrize(("name", "x", "width", "kwargs"), sweep(CASES, [c[0] for c in CASES]))
def test_values_are_jaxs(
    oracle: Oracle, name: str, x: np.ndarray, width: Any, kwargs: dict[str, Any]
) -> None:
    want = jnp.pad(x, width, **kwargs)
    _check(lnp_pad.pad(x, width, **kwargs), want)
    closed = lc.make_jaxpr(lambda a: lnp_pad.pad(a, width, **kwargs))(x)
    (got,) = oracle.evaluate(closed, [x])
    _check(got, want)


def test_scalars_and_python_values() -> None:
    # A 0-d array is returned as it is, whatever the widths (even non-integral ones).
    for x, width in ((3, 2), (2.5, (1, 4)), (np.float32(1.0), 2.5)):
        _check(lnp_pad.pad(x, width), jnp.pad(x, width))
    _check(lnp_pad.pad(np.arange(3), 1, "reflect"), jnp.pad(np.arange(3), 1, "reflect"))
    # Widths given as (concrete) arrays of the library itself.
    widths = np.array([[0, 1], [2, 0]])
    _check(lnp_pad.pad(_I, lnp.asarray(widths)), jnp.pad(_I, jnp.asarray(widths)))


@pytest.mark.parametrize(
    "extra",
    [
        {"mode": "wrap"},
        pytest.param({"mode": "reflect"}, marks=pytest.mark.slow),
        {"mode": "reflect", "reflect_type": "odd"},
        pytest.param({"mode": "symmetric"}, marks=pytest.mark.slow),
        pytest.param({"mode": "symmetric", "reflect_type": "odd"}, marks=pytest.mark.slow),
    ],
    ids=["wrap", "reflect", "reflect_odd", "symmetric", "symmetric_odd"],
)
def test_wide_padssweep(extra: dict[str, str]) -> None:
    xs = [np.arange(1, size + 1, dtype=np.int32) ** 2 for size in (1, 2, 3)]
    widths = [(before, after) for before in range(0, 8, 3) for after in range(0, 8, 2)]
    # JAX's pads of every operand and width in one jitted program: one compilation where
    # `jnp.pad` compiles one per operand shape and width.
    wants = jax.jit(lambda *xs: [[jnp.pad(x, w, **extra) for w in widths] for x in xs])(*xs)
    for x, row in zip(xs, wants, strict=True):
        for width, want in zip(widths, row, strict=True):
            _check(lnp_pad.pad(x, width, **extra), want)


@pytest.mark.parametrize(
    "mode", ["constant", "edge", "wrap", "reflect", "linear_ramp", "mean", "median", "empty"]
)
def test_weak_types_are_jaxs(mode: str) -> None:
    def make(n: Any, p: Callable[..., Any]) -> Callable[[Any], Any]:
        return lambda a: p(n.add(n.full((4,), 2.5), a), (2, 1), mode=mode)

    ours_aval = lc.make_jaxpr(make(lnp, lnp_pad.pad))(2.0).out_avals[0]
    theirs_aval = jax.make_jaxpr(make(jnp, jnp.pad))(2.0).out_avals[0]
    assert theirs_aval.weak_type
    assert ours_aval.weak_type == theirs_aval.weak_type
    assert ours_aval.shape == theirs_aval.shape and ours_aval.dtype == theirs_aval.dtype


# (name, call, expected exception type, whether the message is compared whole)
ERRORS: list[tuple[str, Callable[[Any], Any], type[Exception], bool]] = [
    ("negative", lambda p: p(_V, -1), ValueError, True),
    ("negative_pair", lambda p: p(_I, ((0, 1), (2, -3))), ValueError, True),
    ("float_width", lambda p: p(_V, 2.0), TypeError, True),
    ("bool_width", lambda p: p(_V, True), TypeError, True),
    ("none_width", lambda p: p(_V, None), TypeError, True),
    ("string_width", lambda p: p(_V, "a"), TypeError, True),
    ("wrong_shape", lambda p: p(_V, ((1, 2), (3, 4))), ValueError, True),
    ("wrong_shape_3", lambda p: p(_I, (1, 2, 3)), ValueError, True),
    ("ragged", lambda p: p(_I, ((1, 2), (3,))), TypeError, True),
    ("unknown_mode", lambda p: p(_V, 2, mode="foo"), NotImplementedError, True),
    ("kwarg_for_edge", lambda p: p(_V, 2, mode="edge", constant_values=1), ValueError, True),
    ("kwarg_for_constant", lambda p: p(_V, 2, reflect_type="odd"), ValueError, True),
    ("kwarg_for_wrap", lambda p: p(_V, 2, mode="wrap", stat_length=1), ValueError, True),
    ("bad_constant_shape", lambda p: p(_V, 2, constant_values=(1, 2, 3)), ValueError, True),
    ("zero_stat_length", lambda p: p(_V, 2, mode="mean", stat_length=0), ValueError, True),
    (
        "zero_stat_length_side",
        lambda p: p(_V, 2, mode="maximum", stat_length=(2, 0)),
        ValueError,
        True,
    ),
    (
        "ragged_stat_length",
        lambda p: p(_I, 1, mode="mean", stat_length=((1, 2), (3,))),
        TypeError,
        True,
    ),
    ("float_stat_length", lambda p: p(_V, 2, mode="mean", stat_length=1.5), TypeError, True),
    ("empty_axis_edge", lambda p: p(_E, 1, mode="edge"), ValueError, True),
    ("empty_axis_reflect", lambda p: p(_E, ((1, 0), (0, 0)), mode="reflect"), ValueError, True),
    ("empty_axis_wrap", lambda p: p(_E, 1, mode="wrap"), ValueError, True),
    ("list_array", lambda p: p([1, 2], 1), TypeError, True),
    ("callable_on_scalar", lambda p: p(2.5, 3, _ramp_row), ValueError, True),
    (
        "bad_reflect_type",
        lambda p: p(_V, 2, mode="reflect", reflect_type="foo"),
        AssertionError,
        False,
    ),
    ("list_stat_length", lambda p: p(_V, 2, mode="mean", stat_length=[1, 2]), ValueError, False),
    (
        "list_end_values",
        lambda p: p(_V, 2, mode="linear_ramp", end_values=[1, 2]),
        ValueError,
        False,
    ),
]


@pytest.mark.parametrize(("name", "call", "kind", "whole"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_jaxs(
    name: str, call: Callable[[Any], Any], kind: type[Exception], whole: bool
) -> None:
    with pytest.raises(kind) as theirs:
        call(jnp.pad)
    with pytest.raises(kind) as ours:
        call(lnp_pad.pad)
    if whole:
        assert str(ours.value) == str(theirs.value)
    elif kind is ValueError:
        # JAX's hashing error ends in its own traceback text; the start names the argument.
        head = str(theirs.value).split(" The error was")[0]
        assert str(ours.value).startswith(head)


def test_traced_pad_width_is_a_concretization_error() -> None:
    with pytest.raises(jax.errors.ConcretizationTypeError) as theirs:
        jax.jit(lambda w: jnp.pad(_V, w))(2)
    with pytest.raises(lc.ConcretizationTypeError) as ours:
        lc.jit(lambda w: lnp_pad.pad(_V, w))(2)
    head = "Abstract tracer value encountered where concrete value is expected: "
    assert str(ours.value).startswith(head) and str(theirs.value).startswith(head)
    assert "pad_width argument of jnp.pad" in str(ours.value)


def test_under_jit() -> None:
    def make(p: Callable[..., Any]) -> Callable[..., Any]:
        def f(x: Any, c: Any, width: Any, mode: str) -> Any:
            if mode == "constant":
                return p(x, width, constant_values=c)
            return p(x, width, mode=mode)

        return f

    ours = lc.jit(make(lnp_pad.pad), static_argnums=(2, 3))
    theirs = jax.jit(make(jnp.pad), static_argnums=(2, 3))
    for width, mode in (
        (((1, 2), (3, 0)), "constant"),
        ((2, 5), "reflect"),
        (7, "symmetric"),
        (3, "wrap"),
        (2, "median"),
        (1, "linear_ramp"),
    ):
        x = _I.astype(np.float32)
        _check(ours(x, 2.5, width, mode), theirs(x, 2.5, width, mode))
    # A traced per-side constant_values is fine: it is not a static argument.
    ours2 = lc.jit(lambda x, c: lnp_pad.pad(x, 1, constant_values=c))
    theirs2 = jax.jit(lambda x, c: jnp.pad(x, 1, constant_values=c))
    c = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    _check(ours2(_I.astype(np.float32), c), theirs2(_I.astype(np.float32), c))


GRAD_CASES: list[tuple[str, Any, dict[str, Any]]] = [
    ("constant", ((1, 2), (2, 1)), {"constant_values": 1.5}),
    ("edge", (2, 3), {"mode": "edge"}),
    ("wrap_wide", (5, 9), {"mode": "wrap"}),
    ("reflect_wide", ((4, 5), (7, 2)), {"mode": "reflect"}),
    ("reflect_odd_wide", (6, 5), {"mode": "reflect", "reflect_type": "odd"}),
    ("symmetric_odd", 3, {"mode": "symmetric", "reflect_type": "odd"}),
    ("linear_ramp", 2, {"mode": "linear_ramp", "end_values": (1.0, -2.0)}),
    ("maximum", 2, {"mode": "maximum"}),
    ("minimum_stat_length", 2, {"mode": "minimum", "stat_length": 2}),
    ("mean", (1, 2), {"mode": "mean", "stat_length": (2, 3)}),
    ("median", 2, {"mode": "median"}),
    ("empty", 1, {"mode": "empty"}),
    ("callable", 1, {"mode": _ramp_row}),
]


@pytest.mark.parametrize(("name", "width", "kwargs"), GRAD_CASES, ids=[g[0] for g in GRAD_CASES])
def test_grad_is_jaxs(name: str, width: Any, kwargs: dict[str, Any]) -> None:
    x = np.array([[0.5, -1.25, 2.0, 3.5], [1.0, 4.0, -0.75, 0.25], [2.5, 0.0, 1.5, -3.0]])
    x = x.astype(np.float32)

    def make(n: Any, p: Callable[..., Any]) -> Callable[[Any], Any]:
        def loss(a: Any) -> Any:
            padded = p(a, width, **kwargs)
            weights = n.linspace(-1.0, 2.0, padded.size, dtype=np.float32).reshape(padded.shape)
            return n.sum(n.multiply(n.sin(padded), weights))

        return loss

    # Cotangents of repeated pad values add up in another order than JAX's.
    want = jax.jit(jax.grad(make(jnp, jnp.pad)))(x)
    _check(lc.grad(make(lnp, lnp_pad.pad))(x), want, rtol=1e-5, atol=1e-5)


def test_grad_through_constant_values() -> None:
    def make(n: Any, p: Callable[..., Any]) -> Callable[[Any, Any], Any]:
        return lambda a, c: n.sum(n.square(p(a, (2, 1), constant_values=c)))

    c = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    x = _I.astype(np.float32)
    ours = lc.grad(make(lnp, lnp_pad.pad), argnums=(0, 1))(x, c)
    theirs = jax.jit(jax.grad(make(jnp, jnp.pad), argnums=(0, 1)))(x, c)
    for g, w in zip(ours, theirs, strict=True):
        _check(g, w)


def test_under_vmap() -> None:
    modes: list[dict[str, Any]] = [
        {"mode": "reflect"},
        {"mode": "mean"},
        {"constant_values": 2.0},
        {"mode": _set_ends},
    ]
    for kwargs in modes:
        ours = lc.vmap(lambda a, kw=kwargs: lnp_pad.pad(a, (1, 2), **kw))(_T)
        theirs = jax.jit(jax.vmap(lambda a, kw=kwargs: jnp.pad(a, (1, 2), **kw)))(_T)
        _check(ours, theirs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"constant_values": 3.0},
        {"constant_values": (5.0,)},
        {"constant_values": (5.0, 6.0)},
        {"constant_values": ((1.0, 2.0), (3.0, 4.0))},
    ],
)
def test_constant_mode_prints_as_jax(kwargs: dict[str, Any]) -> None:
    # JAX hands its NumPy-scalar widths to lax.pad (`np.int64(1)` in the printed config) and
    # indexes the table of per-side values.
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)

    def make(pad: Callable[..., Any]) -> Callable[[Any], Any]:
        return lambda x: pad(x, ((0, 1), (2, 0)), **kwargs)

    assert str(lc.make_jaxpr(make(lnp_pad.pad))(x)) == str(jax.make_jaxpr(make(jnp.pad))(x))


# (name, array, pad_width, keyword arguments of pad), for the printed-jaxpr comparison.
PRINTED: list[Any] = [
    ("edge_2d", _I, ((1, 2), (0, 3)), {"mode": "edge"}),
    ("edge_float_1d", _V, (3, 0), {"mode": "edge"}),
    ("wrap_2d_wider", _I, ((4, 7), (9, 1)), {"mode": "wrap"}),
    ("wrap_1d", _V, (2, 3), {"mode": "wrap"}),
    ("reflect_wider", _V, (11, 9), {"mode": "reflect"}),
    ("reflect_2d_int", _I, ((1, 0), (2, 3)), {"mode": "reflect"}),
    ("reflect_odd_2d_wider", _I, ((5, 4), (6, 9)), {"mode": "reflect", "reflect_type": "odd"}),
    ("reflect_odd_size_one", _ONE, 4, {"mode": "reflect", "reflect_type": "odd"}),
    ("symmetric_wider", _V, (12, 8), {"mode": "symmetric"}),
    ("symmetric_odd_2d", _I, ((7, 3), (2, 10)), {"mode": "symmetric", "reflect_type": "odd"}),
    ("linear_ramp_2d", _T[0], ((1, 2), (0, 3)), {"mode": "linear_ramp"}),
    ("linear_ramp_int_ends", _I, 2, {"mode": "linear_ramp", "end_values": ((5, -7), (3, 20))}),
    ("maximum", _I, 2, {"mode": "maximum"}),
    ("minimum_stat_length", _I, 2, {"mode": "minimum", "stat_length": ((1, 2), (2, 1))}),
    ("mean_float", _T[0], 1, {"mode": "mean"}),
    ("mean_int_stat_length", _I, (2, 1), {"mode": "mean", "stat_length": (2, 3)}),
    ("median", _V, (2, 2), {"mode": "median"}),
    pytest.param(
        "median_stat_length",
        _I,
        2,
        {"mode": "median", "stat_length": ((2, 2), (3, 4))},
        marks=pytest.mark.slow,
    ),
    ("empty", _T, ((1, 0), (2, 2), (0, 1)), {"mode": "empty"}),
    ("callable_2d", _I, ((1, 2), (2, 1)), {"mode": _set_ends, "low": 5}),
    pytest.param("edge_3d", _T, ((1, 0), (0, 2), (3, 1)), {"mode": "edge"}, marks=pytest.mark.slow),
    pytest.param("wrap_complex", _C, 4, {"mode": "wrap"}, marks=pytest.mark.slow),
    pytest.param("symmetric_bool_wider", _B, (5, 4), {"mode": "symmetric"}, marks=pytest.mark.slow),
    pytest.param(
        "linear_ramp_3d",
        _T,
        2,
        {"mode": "linear_ramp", "end_values": ((1, 2), (3, 4), (5, 6))},
        marks=pytest.mark.slow,
    ),
    pytest.param("mean_uint8", _U8, 1, {"mode": "mean"}, marks=pytest.mark.slow),
    pytest.param("callable_3d", _T, 1, {"mode": _ramp_row}, marks=pytest.mark.slow),
]


def _printed_id(case: Any) -> str:
    return str((case.values if hasattr(case, "values") else case)[0])


@pytest.mark.parametrize(("name", "x", "width", "kwargs"), PRINTED, ids=map(_printed_id, PRINTED))
def test_modes_print_as_jax(name: str, x: np.ndarray, width: Any, kwargs: dict[str, Any]) -> None:
    # Every mode stages JAX's equations in JAX's order, with its NumPy-scalar widths.
    ours = lc.make_jaxpr(lambda a: lnp_pad.pad(a, width, **kwargs))(x)
    theirs = jax.make_jaxpr(lambda a: jnp.pad(a, width, **kwargs))(x)
    assert str(ours) == str(theirs)
