"""The trace machinery and `make_jaxpr`: arguments, outputs, constants, and errors."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir._avals import ShapedArray

f32 = np.float32


def test_python_scalars_trace_as_weak_types() -> None:
    closed = lc.make_jaxpr(lambda x, n: x * n)(1.0, 2)
    a, b = closed.in_avals
    assert (a, b) == (
        ShapedArray((), np.dtype(f32), True),
        ShapedArray((), np.dtype(np.int32), True),
    )
    assert closed.out_avals[0] == ShapedArray((), np.dtype(f32), True)


def test_typeof_covers_scalars_arrays_and_tracers() -> None:
    assert lc.typeof(np.ones((2, 3), np.float64)) == ShapedArray((2, 3), np.dtype(f32))
    assert lc.typeof(True) == ShapedArray((), np.dtype(bool))
    seen = []
    lc.make_jaxpr(lambda x: seen.append(lc.typeof(x)))(np.ones(4, np.int8))
    assert seen == [ShapedArray((4,), np.dtype(np.int8))]


def test_x64_keeps_64_bit_types_in_scope() -> None:
    with lc.config(jax_enable_x64=True):
        text = str(lc.make_jaxpr(lambda x: x * 2.0)(np.float64(1)))
    assert text == "{ lambda ; a:f64[]. let b:f64[] = mul a 2.0:f64[] in (b,) }"
    assert str(lc.make_jaxpr(lambda x: x * 2.0)(np.float64(1))).startswith("{ lambda ; a:f32[]")


def test_static_argnames_and_kwargs() -> None:
    def f(x: Any, *, power: int, y: Any) -> Any:
        for _ in range(power):
            x = x * y
        return x

    closed = lc.make_jaxpr(f, static_argnames="power")(f32(1), power=2, y=f32(3))
    assert [e.primitive.name for e in closed.eqns] == ["mul", "mul"]
    assert len(closed.jaxpr.invars) == 2


def test_return_shape_gives_shape_dtype_structs() -> None:
    _, shapes = lc.make_jaxpr(lambda x: {"s": jnp.sum(x), "x": x}, return_shape=True)(
        np.ones((2, 3), f32)
    )
    assert shapes == {"s": lc.ShapeDtypeStruct((), f32), "x": lc.ShapeDtypeStruct((2, 3), f32)}


def test_shape_dtype_struct_arguments() -> None:
    closed = lc.make_jaxpr(jnp.sin)(lc.ShapeDtypeStruct((5,), np.float32))
    assert str(closed) == "{ lambda ; a:f32[5]. let b:f32[5] = sin a in (b,) }"


def test_one_numpy_array_used_twice_is_one_literal_value() -> None:
    c = np.arange(16.0, dtype=f32)
    closed = lc.make_jaxpr(lambda x: x * c + c)(np.ones(16, f32))
    literals = [v for e in closed.eqns for v in e.invars if isinstance(v, lc.Literal)]
    assert len(literals) == 2 and literals[0] is not literals[1]
    assert literals[0].val is literals[1].val is c


def test_float64_numpy_constant_is_canonicalized_once() -> None:
    c = np.arange(4.0)
    closed = lc.make_jaxpr(lambda x: x * c + c)(np.ones(4, f32))
    vals = [v.val for e in closed.eqns for v in e.invars if isinstance(v, lc.Literal)]
    assert vals[0] is vals[1] and vals[0].dtype == np.float32


def test_bool_of_a_tracer_names_the_function_and_line() -> None:
    def branchy(x: Any) -> Any:
        if x > 0:
            return x
        return -x

    with pytest.raises(lc.TracerBoolConversionError) as info:  # a ConcretizationTypeError
        lc.make_jaxpr(branchy)(f32(1))
    message = str(info.value)
    assert message.startswith("Attempted boolean conversion of traced array with shape bool[].")
    assert re.search(
        rf"tracing the function .*branchy at {re.escape(__file__)}:"
        rf"{branchy.__code__.co_firstlineno} for jit\. This concrete value was not "
        r"available in Python because it depends on the value of the argument x\.",
        message,
    )
    assert isinstance(info.value, lc.ConcretizationTypeError)


def test_int_of_a_tracer_is_a_concretization_error() -> None:
    with pytest.raises(lc.ConcretizationTypeError, match="`int` function"):
        lc.make_jaxpr(lambda x: int(x))(f32(1))


def test_leaked_tracer_is_reported_where_it_was_created() -> None:
    leaked: list[Any] = []

    def leak(x: Any) -> Any:
        y = jnp.sin(x)
        leaked.append(y)
        return y

    lc.make_jaxpr(leak)(f32(1))
    with pytest.raises(lc.UnexpectedTracerError) as info:
        jnp.cos(leaked[0])
    message = str(info.value)
    assert "to escape the scope of the transformation" in message and "'cos'" in message
    assert "wrapped in a DynamicJaxprTracer" in message
    assert f"{__file__}:{leak.__code__.co_firstlineno + 1}" in message
    with pytest.raises(lc.UnexpectedTracerError):
        lc.make_jaxpr(lambda x: x + leaked[0])(f32(1))


def test_tracers_of_an_enclosing_trace_are_captured_as_constvars() -> None:
    inner: list[lc.ClosedJaxpr] = []

    def outer(x: Any) -> Any:
        inner.append(lc.make_jaxpr(lambda y: y * x)(f32(2)))
        return x

    lc.make_jaxpr(outer)(f32(1))
    closed = inner[0]
    assert len(closed.jaxpr.constvars) == 1 and len(closed.consts) == 1
    assert isinstance(closed.consts[0], lc.Tracer)
    assert str(closed) == "{ lambda a:f32[]; b:f32[]. let c:f32[] = mul b a in (c,) }"


def test_tracer_properties_and_errors() -> None:
    seen: dict[str, Any] = {}

    def f(x: Any) -> Any:
        seen.update(shape=x.shape, ndim=x.ndim, size=x.size, dtype=x.dtype, len=len(x))
        with pytest.raises(TypeError, match="unhashable"):
            hash(x)
        return x

    lc.make_jaxpr(f)(np.ones((2, 3), f32))
    assert seen == {"shape": (2, 3), "ndim": 2, "size": 6, "dtype": np.dtype(f32), "len": 2}


def test_invalid_argument_type_is_a_clear_error() -> None:
    # JAX's text: make_jaxpr stages through jit, whose error names the argument's path.
    with pytest.raises(TypeError, match=r"Error interpreting argument to .* at path x"):
        lc.make_jaxpr(lambda x: x)("text")


def test_eager_ops_run_on_the_numpy_reference() -> None:
    out = jnp.sum(jnp.sin(np.ones(3, f32)) * 3.0)
    np.testing.assert_allclose(out, 3 * 3 * np.sin(1.0), rtol=1e-6)
    assert np.asarray(out).dtype == np.float32


def test_eval_jaxpr_reproduces_the_function() -> None:
    closed = lc.make_jaxpr(lambda x, y: (x * y + 1.0, jnp.exp(x)))(np.arange(3, dtype=f32), f32(2))
    a, b = lc.eval_jaxpr(closed.jaxpr, closed.consts, np.arange(3, dtype=f32), f32(2))
    np.testing.assert_allclose(a, np.arange(3) * 2 + 1.0)
    np.testing.assert_allclose(b, np.exp(np.arange(3)), rtol=1e-6)


def test_eval_jaxpr_under_a_trace_restages_the_equations() -> None:
    closed = lc.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(f32(1))
    again = lc.make_jaxpr(lambda x: lc.eval_jaxpr(closed, (), x)[0])(f32(1))
    assert str(again) == str(closed)


def test_missing_rule_names_the_primitive_and_interpretation() -> None:
    orphan = lc.Primitive("orphan")
    with pytest.raises(
        lc.MissingRuleError, match="no abstract evaluation rule for primitive 'orphan'"
    ):
        lc.make_jaxpr(lambda x: orphan.bind(x))(f32(1))


def test_rules_cannot_be_registered_twice() -> None:
    with pytest.raises(lc.DuplicateRuleError, match="'sin'"):
        lc.abstract_eval_rules.set(lax.sin_p, lambda x: x)
