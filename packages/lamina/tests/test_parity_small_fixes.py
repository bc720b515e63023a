"""Small differences from JAX 0.10.2, each checked against JAX: weak bools promoted to a strong
bool by the `jnp` binary functions; array operators deferring (`NotImplemented`) to operands
they do not take (a sparse matrix's `__rmatmul__`, a user type's reflected operator); the key
dtype's name where Lamina prints a dtype (`ShapeDtypeStruct`); `bcoo_reduce_sum`'s constants
in either constants mode; composite attributes lowered as JAX converts them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import jax
import jax.experimental.sparse as _jsparse
import numpy as np
import pytest

import lamina
import lamina.experimental.sparse as lsparse

pytestmark = pytest.mark.oracle
jsparse: Any = _jsparse  # JAX's sparse API is untyped
jax_config: Any = jax.config  # its `update` is untyped

Api = Any
LAMINA: Api = SimpleNamespace(jax=lamina, jnp=lamina.numpy, sparse=lsparse)
JAX: Api = SimpleNamespace(jax=jax, jnp=jax.numpy, sparse=jsparse)

M = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], np.float32)


def _jaxprs_equal(fn: Callable[[Api], Callable[..., Any]], *args: Any) -> None:
    got = str(lamina.make_jaxpr(fn(LAMINA))(*args))
    want = str(jax.make_jaxpr(fn(JAX))(*args))
    assert got == want


# --- weak bools promote to a strong bool -----------------------------------------------------

BoolCase = Callable[[Any, Any], Any]
BOOL_CASES: dict[str, BoolCase] = {
    "and_python": lambda m, x: m.logical_and(x > 0, True),
    "or_numpy": lambda m, x: m.logical_or(x > 0, np.True_),
    "and_0d_array": lambda m, x: m.logical_and(x > 0, np.array(True)),
    "xor_two_weak": lambda m, x: m.logical_xor(x > 0, x > 1),
    "and_python_first": lambda m, x: m.logical_and(True, x > 0),
    "bitwise_and_two_weak": lambda m, x: m.bitwise_and(x > 0, x < 2),
    "equal_two_weak": lambda m, x: m.equal(x > 0, x > 1),
    "operator_and": lambda m, x: (x > 0) & (x > 1),
    "not_one_weak": lambda m, x: m.logical_not(x > 0),
    "dot_two_weak": lambda m, x: m.dot(x > 0, x > 1),
    "vdot_two_weak": lambda m, x: m.vdot(x > 0, x > 1),
}


@pytest.mark.parametrize("name", list(BOOL_CASES))
@pytest.mark.parametrize("x", [1.0, True, np.ones(3, np.float32)], ids=["float", "bool", "f32"])
def test_weak_bool_promotion_jaxpr_equals_jax(name: str, x: Any) -> None:
    case = BOOL_CASES[name]
    _jaxprs_equal(lambda api: lambda v: case(api.jnp, v), x)


_RS = np.random.RandomState(0)
_Q, _ = np.linalg.qr(_RS.randn(12, 12))
SYM = ((_Q * np.linspace(1.0, 10.0, 12)) @ _Q.T).astype(np.float32)
X0 = _RS.randn(12, 2).astype(np.float32)


@pytest.mark.xfail(
    strict=True,
    reason="jnp.diagonal of a square matrix: JAX stages `platform_dependent(mosaic=...)` "
    "(platform_index and a two-branch cond); Lamina's platform_dependent calls the CPU branch",
)
def test_lobpcg_jaxpr_equals_jax() -> None:
    # Its weak bools (`logical_and` of comparisons) now promote as JAX's do; what still
    # differs is only the `diagonal` it calls.
    _jaxprs_equal(lambda api: api.sparse.linalg.lobpcg_standard, SYM, X0)


# --- operators defer to operands they do not take --------------------------------------------


def test_array_matmul_sparse_defers_to_rmatmul() -> None:
    y = np.arange(4, dtype=np.float32).reshape(2, 2)
    got = LAMINA.jnp.asarray(y) @ lsparse.BCOO.fromdense(M)
    want = JAX.jnp.asarray(y) @ jsparse.BCOO.fromdense(M)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    got_jaxpr = lamina.make_jaxpr(lambda a, b: a @ b)(y, lsparse.BCOO.fromdense(M))
    want_jaxpr = jax.make_jaxpr(lambda a, b: a @ b)(y, jsparse.BCOO.fromdense(M))
    assert str(got_jaxpr) == str(want_jaxpr)


class Reflected:
    """A type the array operators do not take, with reflected operators of its own."""

    def __radd__(self, other: Any) -> str:
        return f"radd {type(other).__name__ in ('Array', 'ArrayImpl')}"

    def __rmatmul__(self, other: Any) -> str:
        return "rmatmul"

    def __gt__(self, other: Any) -> str:  # `array < self` falls back to it
        return "gt"

    def __rsub__(self, other: Any) -> str:
        return f"rsub {other.shape}"


REFLECTED_CASES: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda x, r: x + r,
    "matmul": lambda x, r: x @ r,
    "less": lambda x, r: x < r,
    "sub": lambda x, r: x - r,
}


@pytest.mark.parametrize("name", list(REFLECTED_CASES))
def test_operator_defers_to_reflected(name: str) -> None:
    op = REFLECTED_CASES[name]
    assert op(LAMINA.jnp.ones(3), Reflected()) == op(JAX.jnp.ones(3), Reflected())


def test_traced_operator_defers_to_reflected() -> None:
    seen: dict[str, Any] = {}

    def fn(api: Api) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            seen[api.jax.__name__] = x - Reflected()
            return x

        return f

    lamina.make_jaxpr(fn(LAMINA))(np.ones(2, np.float32))
    jax.make_jaxpr(fn(JAX))(np.ones(2, np.float32))
    assert seen["lamina"] == seen["jax"] == "rsub (2,)"


class ViaJaxArray:
    """Not an array, but convertible to one (`__jax_array__`)."""

    def __init__(self, jnp: Any) -> None:
        self.jnp = jnp

    def __jax_array__(self) -> Any:
        return self.jnp.arange(3.0)


def test_operator_converts_jax_array_operand() -> None:
    got = LAMINA.jnp.ones(3) * ViaJaxArray(LAMINA.jnp)
    want = JAX.jnp.ones(3) * ViaJaxArray(JAX.jnp)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def _outcome(thunk: Callable[[], Any]) -> tuple[str, str]:
    try:
        return "value", repr(thunk())
    except TypeError as e:
        return type(e).__name__, str(e)


# Refused with JAX's own text (containers), or deferred to Python (its text names the array
# type, `jaxlib._jax.ArrayImpl` in JAX, so only the start is compared).
REFUSED_CASES: dict[str, Callable[[Any], Any]] = {
    "add_list": lambda x: x + [1.0, 2.0, 3.0],  # noqa: RUF005  # the operator under test
    "list_add": lambda x: [1.0, 2.0, 3.0] + x,  # noqa: RUF005  # the operator under test
    "mul_tuple": lambda x: x * (1, 2, 3),
    "eq_dict": lambda x: x == {1: 2},
    "set_ne": lambda x: {1} != x,
    "eq_none": lambda x: x == None,  # noqa: E711  # the operator itself is under test
    "ne_object": lambda x: x != "s",
}
DEFERRED_CASES: dict[str, Callable[[Any], Any]] = {
    "matmul_list": lambda x: x @ [1.0, 2.0, 3.0],
    "add_none": lambda x: x + None,
    "object_and": lambda x: object() & x,
    "less_tuple": lambda x: x < (1, 2, 3),
}


@pytest.mark.parametrize("name", list(REFUSED_CASES))
def test_operator_refusal_equals_jax(name: str) -> None:
    case = REFUSED_CASES[name]
    assert _outcome(lambda: case(LAMINA.jnp.ones(3))) == _outcome(lambda: case(JAX.jnp.ones(3)))


@pytest.mark.parametrize("name", list(DEFERRED_CASES))
def test_operator_deferral_error_equals_jax(name: str) -> None:
    case = DEFERRED_CASES[name]
    got = _outcome(lambda: case(LAMINA.jnp.ones(3)))
    want = _outcome(lambda: case(JAX.jnp.ones(3)))
    assert got[0] == want[0] == "TypeError"
    assert got[1].split("'")[0] == want[1].split("'")[0]


def test_traced_refusal_names_tracer_as_jax() -> None:
    def fn(api: Api) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            return x + [1.0]  # noqa: RUF005  # the operator under test

        return f

    with pytest.raises(TypeError) as got:
        lamina.make_jaxpr(fn(LAMINA))(1.0)
    with pytest.raises(TypeError) as want:
        jax.make_jaxpr(fn(JAX))(1.0)
    assert str(got.value) == str(want.value)


# --- the key dtype's name where Lamina prints a dtype ----------------------------------------

KEY_CASES: dict[str, Callable[[Api], Any]] = {
    "struct": lambda a: a.jax.ShapeDtypeStruct((2,), a.jax.random.key(0).dtype),
    "key_dtype": lambda a: a.jax.ShapeDtypeStruct((), a.jax.random.key_dtype()),
    "eval_shape": lambda a: a.jax.eval_shape(a.jax.random.split, a.jax.random.key(1)),
    "rbg": lambda a: a.jax.ShapeDtypeStruct((3,), a.jax.random.key(0, impl="rbg").dtype),
}


@pytest.mark.parametrize("name", list(KEY_CASES))
def test_key_dtype_printed_as_jax(name: str) -> None:
    got, want = KEY_CASES[name](LAMINA), KEY_CASES[name](JAX)
    assert (str(got), repr(got)) == (str(want), repr(want))


# --- bcoo_reduce_sum's constants, in either constants mode -----------------------------------


@pytest.fixture(params=[False, True], ids=["constvars", "simplified"])
def constants_mode(request: pytest.FixtureRequest) -> Iterator[bool]:
    """Both libraries in one constants mode (JAX's default is off; Lamina's, on)."""
    option = "jax_use_simplified_jaxpr_constants"
    mode: bool = request.param
    old = (getattr(lamina.config, option), getattr(jax_config, option))
    lamina.config.update(option, mode)
    jax_config.update(option, mode)
    try:
        yield mode
    finally:
        lamina.config.update(option, old[0])
        jax_config.update(option, old[1])


SUM_CASES: dict[str, Callable[[Api], Callable[..., Any]]] = {
    "sparsify_sum": lambda a: a.sparse.sparsify(lambda m: m.sum()),
    "method_sum": lambda a: lambda m: m.sum(),
    "sum_axis": lambda a: lambda m: m.sum(axis=0).todense(),
}


@pytest.mark.parametrize("name", list(SUM_CASES))
def test_bcoo_reduce_sum_constants_equal_jax(name: str, constants_mode: bool) -> None:
    fn = SUM_CASES[name]
    got = lamina.make_jaxpr(fn(LAMINA))(lsparse.BCOO.fromdense(M))
    want = jax.make_jaxpr(fn(JAX))(jsparse.BCOO.fromdense(M))
    assert str(got) == str(want)
    assert bool(want.jaxpr.constvars) is not constants_mode  # the mode took effect


# --- composite attributes --------------------------------------------------------------------

COMPOSITE_ATTRIBUTES: dict[str, Any] = {
    "f32_scalar": np.float32(1.5),
    "i8_scalar": np.int8(3),
    "bool_scalar": np.bool_(True),
    "dtype": np.dtype("float32"),
    "tuple": (1, 2),
    "array": np.arange(3, dtype=np.int32),
    "python": 2,
}


def _composite_line(lib: Any, name: str, value: Any) -> str:
    op = lib.lax.composite(lambda x, **_: x + 1, name="my.op")
    text: str = lib.jit(lambda x: op(x, **{name: value})).lower(np.ones(2, np.float32)).as_text()
    return next(line.strip() for line in text.splitlines() if '"my.op"' in line)


@pytest.mark.parametrize("name", list(COMPOSITE_ATTRIBUTES))
def test_composite_attribute_lowered_as_jax(name: str) -> None:
    value = COMPOSITE_ATTRIBUTES[name]
    assert _composite_line(lamina, name, value) == _composite_line(jax, name, value)
