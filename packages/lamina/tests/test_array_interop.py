"""Lamina's arrays and tracers as JAX's `Array` behaves for downstream libraries (issue 35,
item 2): `isinstance(tracer, Array)` under transformations, NumPy's functions on arrays, and
Python's conversions (`round`, `math.floor`, `operator.index`, `format`, `complex`, `hash`),
with JAX's errors on tracers. Each case runs on both sides and compares."""

from __future__ import annotations

import enum
import math
import operator
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import lamina

# ---- isinstance ------------------------------------------------------------------------------


def _instance_checks(api: Any, transform: str) -> list[bool]:
    seen: list[bool] = []

    def probe(x: Any) -> Any:
        seen.extend([isinstance(x, api.Array), isinstance(x, api.numpy.ndarray)])
        return x.sum()

    x = api.numpy.ones(3)
    match transform:
        case "jit":
            api.jit(probe)(x)
        case "grad":
            api.grad(probe)(x)
        case "vmap":
            api.vmap(probe)(api.numpy.ones((2, 3)))
        case "jit of grad of vmap":
            api.jit(api.grad(lambda v: api.vmap(probe)(v).sum()))(api.numpy.ones((2, 3)))
    return seen


@pytest.mark.parametrize("transform", ["jit", "grad", "vmap", "jit of grad of vmap"])
def test_tracers_are_instances_of_array_and_ndarray_as_in_jax(transform: str) -> None:
    ours, theirs = _instance_checks(lamina, transform), _instance_checks(jax, transform)
    assert ours == theirs
    assert all(ours) and ours


def test_typed_key_tracers_are_arrays_and_ref_tracers_are_not_as_in_jax() -> None:
    def kinds(api: Any) -> list[bool]:
        seen: list[bool] = []

        def f(k: Any, x: Any) -> Any:
            seen.extend([isinstance(k, api.Array), isinstance(api.new_ref(x), api.Array)])
            return x

        api.jit(f)(api.random.key(0), 1.0)
        return seen

    assert kinds(lamina) == kinds(jax) == [True, False]


def test_host_values_are_not_arrays_and_subclasses_get_no_tracers() -> None:
    for value in [np.ones(3), 1.0, np.float32(1), [1.0]]:
        assert not isinstance(value, lamina.Array)
        assert isinstance(value, jax.Array) is False
    assert isinstance(lamina.numpy.ones(3), lamina.Array)
    assert not issubclass(type(lamina.jit(lambda x: x)), lamina.Array)


# ---- NumPy on arrays -------------------------------------------------------------------------

NUMPY_CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("np.isfinite", lambda jnp: np.isfinite(jnp.ones(3))),
    ("np.sin", lambda jnp: np.sin(jnp.arange(3.0))),
    ("np.add of two arrays", lambda jnp: np.add(jnp.ones(2), jnp.ones(2))),
    ("np.add.reduce", lambda jnp: np.add.reduce(jnp.arange(4.0))),
    ("np.isnan of a scalar", lambda jnp: np.isnan(jnp.float32(2.5))),
    ("np.asarray", lambda jnp: np.asarray(jnp.arange(3))),
    ("np.array of arrays", lambda jnp: np.array([jnp.ones(2), jnp.zeros(2)])),
    ("np.linalg.norm", lambda jnp: np.linalg.norm(jnp.ones(4))),
    ("np.float32 of a scalar", lambda jnp: np.float32(jnp.float32(1.5))),
    # NumPy's operators defer to the array's (which return arrays), as for JAX's.
    ("ndarray + array", lambda jnp: np.ones(3) + jnp.ones(3)),
    ("np scalar * array", lambda jnp: np.float32(2) * jnp.ones(2)),
    ("ndarray == array", lambda jnp: np.ones(2) == jnp.ones(2)),
    ("np.mean of an array", lambda jnp: np.mean(jnp.arange(4.0))),
]


@pytest.mark.parametrize(("name", "case"), NUMPY_CASES, ids=[n for n, _ in NUMPY_CASES])
def test_numpy_functions_take_arrays_as_for_jax(name: str, case: Callable[[Any], Any]) -> None:
    ours, theirs = case(lamina.numpy), case(jax.numpy)
    assert isinstance(ours, lamina.Array) == isinstance(theirs, jax.Array), name
    assert type(np.asarray(ours)) is type(np.asarray(theirs))
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype


def test_numpy_testing_compares_arrays() -> None:
    x = lamina.numpy.arange(3.0)
    np.testing.assert_allclose(x, lamina.numpy.arange(3.0))
    np.testing.assert_allclose(x, np.arange(3.0))
    np.testing.assert_array_equal(x, [0.0, 1.0, 2.0])
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(x, x + 1)


# ---- Python conversions ----------------------------------------------------------------------

CONVERSIONS: list[tuple[str, Callable[[Any], Any]]] = [
    ("round", round),
    ("round 1 digit", lambda x: round(x, 1)),
    ("math.floor", math.floor),
    ("math.ceil", math.ceil),
    ("math.trunc", math.trunc),
    ("operator.index", operator.index),
    ("format .3f", lambda x: f"{x:.3f}"),
    ("format empty", lambda x: f"{x}"),
    ("format d", lambda x: format(x, "5d")),
    ("complex", complex),
    ("float", float),
    ("int", int),
    ("bool", bool),
    ("hash", hash),
    ("tolist", lambda x: x.tolist()),
]
VALUES: list[tuple[str, Callable[[Any], Any]]] = [
    ("f32 scalar", lambda jnp: jnp.float32(2.5)),
    ("f32 0.1", lambda jnp: jnp.float32(0.1)),
    ("i32 scalar", lambda jnp: jnp.int32(7)),
    ("bool scalar", lambda jnp: jnp.bool_(True)),
    ("f32[3]", lambda jnp: jnp.arange(3.0)),
    ("i32[0]", lambda jnp: jnp.zeros(0, jnp.int32)),
]


def _outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    """What `fn()` gives, in a form both sides can be compared by: a value, or an error's
    class and first line (JAX's class names are the same)."""
    try:
        out = fn()
    except Exception as err:
        # JAX's array class is named jaxlib._jax.ArrayImpl in Python's messages.
        first = str(err).split("\n")[0].replace("jaxlib._jax.ArrayImpl", "Array")
        return type(err).__name__, first
    if type(out).__name__.endswith("Tracer"):  # JAX's and Lamina's tracer classes differ
        return "tracer", f"{out.shape} {out.dtype}"
    if isinstance(out, (jax.Array, lamina.Array)):
        return "array", f"{np.asarray(out)!r} {out.dtype} weak={out.weak_type}"
    return type(out).__name__, repr(out)


@pytest.mark.parametrize(("what", "convert"), CONVERSIONS, ids=[n for n, _ in CONVERSIONS])
@pytest.mark.parametrize(("kind", "make"), VALUES, ids=[n for n, _ in VALUES])
def test_python_conversions_of_arrays_as_jax(
    what: str, convert: Callable[[Any], Any], kind: str, make: Callable[[Any], Any]
) -> None:
    ours = _outcome(lambda: convert(make(lamina.numpy)))
    theirs = _outcome(lambda: convert(make(jax.numpy)))
    assert ours == theirs, (what, kind)


def _traced_outcome(api: Any, transform: str, convert: Callable[[Any], Any], x: Any) -> Any:
    """`convert` applied to a tracer under `transform`: the outcome, and a tracer result's
    type (shape and dtype)."""
    found: list[tuple[str, str]] = []

    def f(t: Any) -> Any:
        found.append(_outcome(lambda: convert(t)))
        return t.sum() if hasattr(t, "sum") else t

    match transform:
        case "jit":
            api.jit(f)(x)
        case "grad":
            api.grad(f)(x)
        case "vmap":
            api.vmap(f)(api.numpy.stack([x, x]))
    return found[0]


@pytest.mark.parametrize(("what", "convert"), CONVERSIONS, ids=[n for n, _ in CONVERSIONS])
@pytest.mark.parametrize("transform", ["jit", "grad", "vmap"])
@pytest.mark.parametrize(("kind", "value"), [("f32", 2.5), ("f32[3]", [1.0, 2.0, 3.0])])
def test_python_conversions_of_tracers_raise_jaxs_errors(
    what: str, convert: Callable[[Any], Any], transform: str, kind: str, value: Any
) -> None:
    x_ours, x_theirs = lamina.numpy.asarray(value), jax.numpy.asarray(value)
    ours = _traced_outcome(lamina, transform, convert, x_ours)
    theirs = _traced_outcome(jax, transform, convert, x_theirs)
    # The tracer classes are named differently; messages naming them compare by their start.
    if ours[0] == "TypeError" and "Tracer" in theirs[1]:
        assert (
            ours[1].split("Tracer")[0].rsplit(" ", 1)[0]
            == theirs[1].split("Tracer")[0].rsplit(" ", 1)[0]
        ), (what, transform, kind)
    else:
        assert ours == theirs, (what, transform, kind)


@pytest.mark.parametrize("transform", ["jit", "vmap"])
def test_integer_tracer_index_and_numpy_conversion_raise_jaxs_error_classes(transform: str) -> None:
    for convert in (operator.index, np.asarray, np.isfinite):
        ours = _traced_outcome(lamina, transform, convert, lamina.numpy.int32(3))
        theirs = _traced_outcome(jax, transform, convert, jax.numpy.int32(3))
        assert ours[0] == theirs[0]
        assert ours[1].split(" traced array")[0] == theirs[1].split(" traced array")[0]


# ---- subclasses of Python scalars (IntEnum members) ------------------------------------------


class _Mode(enum.IntEnum):
    SUM = 1
    MAX = 2


class _Ratio(float):
    pass


@pytest.mark.parametrize(
    "program",
    [
        lambda api: api.jit(lambda x: x + _Mode.MAX)(api.numpy.int8(3)),
        lambda api: api.numpy.asarray(_Mode.SUM),
        lambda api: api.numpy.add(_Mode.MAX, 1.5),
        lambda api: api.numpy.asarray(_Ratio(2.5)) * api.numpy.float16(2),
        lambda api: api.numpy.full((2,), _Mode.MAX),
    ],
    ids=["jit-add", "asarray", "add-float", "float-subclass", "full"],
)
def test_scalar_subclasses_are_the_scalars_they_extend(program: Callable[[Any], Any]) -> None:
    """An IntEnum member is an int to jnp, weakly typed, as in JAX (Lamina refused it)."""
    expected, actual = program(jax), program(lamina)
    assert (actual.dtype, actual.weak_type) == (expected.dtype, expected.weak_type)
    np.testing.assert_array_equal(np.asarray(actual), np.asarray(expected))


def test_a_scalar_subclass_prints_as_its_value() -> None:
    def f(x: Any) -> Any:
        return x * _Mode.MAX

    assert str(lamina.make_jaxpr(f)(1.0)) == str(jax.make_jaxpr(f)(1.0))
