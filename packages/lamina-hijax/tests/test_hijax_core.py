"""Hi types on lamina-core alone (the NumPy reference evaluator): seed 003's quantized array —
eager values, printed jaxprs (golden texts printed by JAX 0.10.2 for the same programs), the
to-lojax pass, grad, vmap with mapping specs, scan/while/cond carrying hi values, and the
errors of the API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lamina_core as lc
import lamina_core.numpy as jnp
from lamina_core.ir._avals import ShapedArray
from lamina_hijax import (
    HiPrimitive,
    HiType,
    MappingSpec,
    VJPHiPrimitive,
    call_hi_primitive_p,
    is_high,
    register_hitype,
    to_lojax,
)


@dataclass(frozen=True)
class QArray:
    qvalue: Any
    scale: Any


@dataclass(frozen=True)
class QArraySpec(MappingSpec):
    pass


@dataclass(frozen=True)
class QArrayTy(HiType):
    shape: tuple[int, ...]

    def lo_ty(self) -> list[Any]:
        return [
            ShapedArray(self.shape, np.dtype("int8")),
            ShapedArray(self.shape[:-1], np.dtype("float32")),
        ]

    def lower_val(self, q: Any) -> list[Any]:
        return [q.qvalue, q.scale]

    def raise_val(self, *lo: Any) -> QArray:
        return QArray(*lo)

    def to_tangent_aval(self) -> ShapedArray:
        return ShapedArray(self.shape, np.dtype("float32"))

    def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
        return f"q8[{','.join(map(str, self.shape))}]"

    def __repr__(self) -> str:
        return self.str_short()

    def dec_rank(self, size: int, spec: Any) -> QArrayTy:
        assert isinstance(spec, QArraySpec) and self.shape[0] == size
        return QArrayTy(self.shape[1:])

    def inc_rank(self, size: int, spec: Any) -> QArrayTy:
        assert isinstance(spec, QArraySpec)
        return QArrayTy((size, *self.shape))

    def leading_axis_spec(self) -> QArraySpec:
        return QArraySpec()


register_hitype(QArray, lambda q: QArrayTy(q.qvalue.shape))


class Quantize(VJPHiPrimitive):
    def __init__(self, x_aval: Any) -> None:
        if x_aval.dtype != np.dtype("float32"):
            raise TypeError(x_aval.dtype)
        self.in_avals = (x_aval,)
        self.out_aval = QArrayTy(x_aval.shape)
        self.params = {}
        super().__init__()

    def expand(self, x: Any) -> QArray:
        scale = jnp.max(jnp.abs(x), axis=-1) / 127.0
        qvalue = jnp.round(x / scale[..., None]).astype(jnp.int8)
        return QArray(qvalue, scale)

    def vjp_fwd(self, nzs_in: Any, x: Any) -> Any:
        return self(x), None

    def vjp_bwd_retval(self, res: Any, g: Any) -> Any:
        return (g,)

    def batch(self, axis_data: Any, args: Any, dims: Any) -> Any:
        (x,), (d,) = args, dims
        if d is None:
            return quantize(x), None
        return quantize(jnp.moveaxis(x, d, 0)), QArraySpec()


class Dequantize(VJPHiPrimitive):
    def __init__(self, q_aval: Any) -> None:
        self.in_avals = (q_aval,)
        self.out_aval = ShapedArray(q_aval.shape, np.dtype("float32"))
        self.params = {}
        super().__init__()

    def expand(self, qx: Any) -> Any:
        return qx.qvalue.astype("float32") * qx.scale[..., None]

    def vjp_fwd(self, nzs_in: Any, qx: Any) -> Any:
        return self(qx), None

    def vjp_bwd_retval(self, res: Any, g: Any) -> Any:
        return (g,)

    def jvp(self, primals: Any, tangents: Any) -> Any:
        return self(*primals), tangents[0]  # tangents of q8 arrays are f32 arrays

    def batch(self, axis_data: Any, args: Any, dims: Any) -> Any:
        (qx,), (d,) = args, dims
        if d is None:
            return dequantize(qx), None
        assert isinstance(d, QArraySpec)
        return dequantize(qx), 0


def quantize(x: Any) -> Any:
    return Quantize(lc.typeof(x))(x)


def dequantize(qx: Any) -> Any:
    return Dequantize(lc.typeof(qx))(qx)


X = np.array([[1.0, 2.0, 3.0], [4.0, -5.0, 6.0]], np.float32)
XS = np.arange(24.0, dtype=np.float32).reshape(4, 2, 3)


def _np_quantize(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = np.max(np.abs(x), axis=-1) / np.float32(127.0)
    return np.round(x / scale[..., None]).astype(np.int8), scale.astype(np.float32)


def _np_roundtrip(x: np.ndarray) -> np.ndarray:
    q, s = _np_quantize(x)
    return q.astype(np.float32) * s[..., None]  # type: ignore[no-any-return]


# --- eager and types ---------------------------------------------------------------------------


def test_eager_values_match_numpy() -> None:
    qx = quantize(X)
    assert isinstance(qx, QArray)
    q, s = _np_quantize(X)
    np.testing.assert_array_equal(np.asarray(qx.qvalue), q)
    np.testing.assert_allclose(np.asarray(qx.scale), s, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(dequantize(qx)), _np_roundtrip(X), rtol=1e-6)
    assert str(lc.typeof(qx)) == "q8[2,3]" and lc.typeof(qx).is_high


def test_primitive_identity_and_repr() -> None:
    a, b = Quantize(lc.typeof(X)), Quantize(lc.typeof(X))
    assert a == b and hash(a) == hash(b) and repr(a) == "Quantize[{}]"
    assert a != Dequantize(QArrayTy((2, 3)))


def test_input_types_checked() -> None:
    with pytest.raises(TypeError):
        quantize(np.ones((2, 3), np.int32))  # the seed's own check, in __init__
    prim = Dequantize(QArrayTy((2, 3)))
    with pytest.raises(TypeError, match=r"input type mismatch for Dequantize\[\{\}\]"):
        prim(quantize(np.ones((3, 3), np.float32)))


def test_subclass_must_set_its_types() -> None:
    class Incomplete(VJPHiPrimitive):
        def __init__(self) -> None:
            self.in_avals = ()
            super().__init__()

    with pytest.raises(AttributeError, match=r"subclass __init__ should set `self\.out_aval`"):
        Incomplete()


def test_hi_value_is_not_an_array() -> None:
    with pytest.raises(TypeError, match="sin requires ndarray or scalar arguments"):
        jnp.sin(quantize(X))


# --- printing (golden texts: JAX 0.10.2's for the same programs) -------------------------------

ROUNDTRIP = """\
{ lambda ; a:f32[2,3]. let
    b:q8[2,3] = call_hi_primitive[_prim=Quantize[{}]] a
    c:f32[2,3] = call_hi_primitive[_prim=Dequantize[{}]] b
  in (c,) }"""

GRAD_STRAIGHT_THROUGH = """\
{ lambda ; a:f32[2,3]. let
    b:q8[2,3] = call_hi_primitive[_prim=Quantize[{}]] a
    c:f32[2,3] = call_hi_primitive[_prim=Dequantize[{}]] b
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[2,3] = broadcast_in_dim 1.0:f32[]
  in (d,) }"""

GRAD_WRT_QARRAY = """\
{ lambda ; a:q8[2,3]. let
    b:f32[2,3] = call_hi_primitive[_prim=Dequantize[{}]] a
    c:f32[2,3] = integer_pow[y=2] b
    d:f32[2,3] = mul 2.0:f32[] b
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    e:f32[2,3] = broadcast_in_dim 1.0:f32[]
    f:f32[2,3] = mul e d
  in (f,) }"""

SCAN_OVER_QARRAYS = """\
{ lambda ; a:q8[4,2,3]. let
    b:f32[2,3] = broadcast_in_dim 0.0:f32[]
    c:f32[2,3] = scan[
      jaxpr={ lambda ; d:f32[2,3] e:q8[2,3]. let
          f:f32[2,3] = call_hi_primitive[_prim=Dequantize[{}]] e
          g:f32[2,3] = add d f
        in (g,) }
      length=4
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] b a
  in (c,) }"""

WHILE_CARRYING_QARRAY = """\
{ lambda ; a:q8[2,3]. let
    _:i32[] b:q8[2,3] = while[
      body_jaxpr={ lambda ; c:i32[] d:q8[2,3]. let
          e:i32[] = add c 1:i32[]
          f:f32[2,3] = call_hi_primitive[_prim=Dequantize[{}]] d
          g:f32[2,3] = mul f 2.0:f32[]
          h:q8[2,3] = call_hi_primitive[_prim=Quantize[{}]] g
        in (e, h) }
      body_nconsts=0
      cond_jaxpr={ lambda ; i:i32[] j:q8[2,3]. let
          k:bool[] = lt i 3:i32[]
        in (k,) }
      cond_nconsts=0
    ] 0:i32[] a
  in (b,) }"""

LOJAX_ROUNDTRIP = """\
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = abs a
    c:f32[2] = reduce_max[axes=(1,)] b
    d:f32[2] = div c 127.0:f32[]
    e:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] d
    f:f32[2,3] = div a e
    g:f32[2,3] = jit[
      name=round
      jaxpr={ lambda ; f:f32[2,3]. let
          g:f32[2,3] = round[rounding_method=1] f
        in (g,) }
    ] f
    h:i8[2,3] = convert_element_type[new_dtype=int8 weak_type=False] g
    i:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] h
    j:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] d
    k:f32[2,3] = mul i j
  in (k,) }"""

LOJAX_QARRAY_INPUT = """\
{ lambda ; a:i8[2,3] b:f32[2]. let
    c:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b
    e:f32[2,3] = mul c d
  in (e,) }"""


def _while(qx: Any) -> Any:
    def body(c: Any) -> Any:
        i, q = c
        return i + 1, quantize(dequantize(q) * 2.0)

    return lc.lax.while_loop(lambda c: c[0] < 3, body, (0, qx))[1]


def _scan_sum(qxs: Any) -> Any:
    return lc.lax.scan(lambda c, q: (c + dequantize(q), None), jnp.zeros((2, 3)), qxs, length=4)[0]


def test_printed_jaxprs_match_jax() -> None:
    qx = quantize(X)
    qxs = quantize(XS)
    assert str(lc.make_jaxpr(lambda x: dequantize(quantize(x)))(X)) == ROUNDTRIP
    grad_f = lc.grad(lambda x: jnp.sum(dequantize(quantize(x))))
    assert str(lc.make_jaxpr(grad_f)(X)) == GRAD_STRAIGHT_THROUGH
    grad_g = lc.grad(lambda q: jnp.sum(dequantize(q) ** 2))
    assert str(lc.make_jaxpr(grad_g)(qx)) == GRAD_WRT_QARRAY
    assert str(lc.make_jaxpr(_scan_sum)(qxs)) == SCAN_OVER_QARRAYS
    assert str(lc.make_jaxpr(_while)(qx)) == WHILE_CARRYING_QARRAY


def test_to_lojax_prints_as_jax_lowers() -> None:
    jaxpr = lc.make_jaxpr(lambda x: dequantize(quantize(x)))(X).jaxpr
    assert is_high(jaxpr)
    lo = to_lojax(jaxpr)
    assert str(lo) == LOJAX_ROUNDTRIP and not is_high(lo)
    assert to_lojax(jaxpr) is lo  # memoized
    lo_in = to_lojax(lc.make_jaxpr(dequantize)(quantize(X)).jaxpr)
    assert str(lo_in) == LOJAX_QARRAY_INPUT
    plain = lc.make_jaxpr(jnp.sin)(X).jaxpr
    assert not is_high(plain) and to_lojax(plain) is plain


def test_to_lojax_of_loops_and_branches_evaluates_as_the_hi_program() -> None:
    from lamina_core.trace._evaluate import eval_jaxpr

    qx, qxs = quantize(X), quantize(XS)
    for fun, arg, avals in [
        (_while, qx, QArrayTy((2, 3)).lo_ty()),
        (_scan_sum, qxs, QArrayTy((4, 2, 3)).lo_ty()),
    ]:
        jaxpr = lc.make_jaxpr(fun)(arg).jaxpr
        lo = to_lojax(jaxpr)
        assert [v.aval for v in lo.invars] == avals
        assert "call_hi_primitive" not in str(lo)
        got = eval_jaxpr(lo, (), arg.qvalue, arg.scale)
        expected = fun(arg)
        flat = got if not isinstance(expected, QArray) else [QArray(*got)]
        out = flat[0]
        if isinstance(expected, QArray):
            np.testing.assert_array_equal(np.asarray(out.qvalue), np.asarray(expected.qvalue))
        else:
            np.testing.assert_allclose(np.asarray(out), np.asarray(expected), rtol=1e-6)


def test_dead_hi_equations_are_dropped() -> None:
    from lamina_core.interpreters.dce import dce_jaxpr

    def f(x: Any) -> Any:
        quantize(x)  # unused
        return x * 2.0

    jaxpr = lc.make_jaxpr(f)(X).jaxpr
    assert any(e.primitive is call_hi_primitive_p for e in jaxpr.eqns)
    trimmed, _ = dce_jaxpr(jaxpr)
    assert not any(e.primitive is call_hi_primitive_p for e in trimmed.eqns)


# --- transformations ---------------------------------------------------------------------------


def test_grad_is_straight_through_and_tangent_type_is_f32() -> None:
    g = lc.grad(lambda x: jnp.sum(dequantize(quantize(x))))(X)
    np.testing.assert_array_equal(np.asarray(g), np.ones((2, 3)))
    qx = quantize(X)
    gq = lc.grad(lambda q: jnp.sum(dequantize(q) ** 2))(qx)
    assert not isinstance(gq, QArray) and str(lc.typeof(gq)) == "float32[2,3]"
    np.testing.assert_allclose(np.asarray(gq), 2 * _np_roundtrip(X), rtol=1e-6)


def test_forward_mode_needs_the_primitives_rules() -> None:
    with pytest.raises(NotImplementedError, match="must implement `jvp`"):
        lc.jvp(quantize, (X,), (X,))
    with pytest.raises(NotImplementedError, match="must implement `lin` and `linearized`"):
        lc.linearize(quantize, X)


def test_vmap_with_mapping_specs() -> None:
    qxs = lc.vmap(quantize, out_axes=QArraySpec())(XS)
    assert str(lc.typeof(qxs)) == "q8[4,2,3]"
    q, _ = _np_quantize(XS)
    np.testing.assert_array_equal(np.asarray(qxs.qvalue), q)
    back = lc.vmap(dequantize, in_axes=QArraySpec(), axis_size=4)(qxs)
    np.testing.assert_allclose(np.asarray(back), _np_roundtrip(XS), rtol=1e-6)
    moved = lc.vmap(quantize, in_axes=2, out_axes=QArraySpec())(np.moveaxis(XS, 0, 2))
    np.testing.assert_array_equal(np.asarray(moved.qvalue), q)
    via_jit = lc.vmap(lc.jit(dequantize), in_axes=QArraySpec(), axis_size=4)(qxs)
    np.testing.assert_allclose(np.asarray(via_jit), np.asarray(back), rtol=1e-6)


def test_vmap_errors() -> None:
    qxs = quantize(XS)
    with pytest.raises(ValueError, match="at least one non-None value in in_axes or axis_size"):
        lc.vmap(dequantize, in_axes=QArraySpec())(qxs)
    with pytest.raises(ValueError, match="got axis spec QArraySpec"):
        lc.vmap(lambda x: quantize(X), out_axes=QArraySpec())(XS)  # an unmapped result


def test_vmap_of_grad_matches_a_loop() -> None:
    def norm(x: Any) -> Any:
        return jnp.sum(dequantize(quantize(x)) ** 2)

    out = lc.vmap(lc.grad(norm))(XS)
    for i in range(4):
        np.testing.assert_allclose(np.asarray(out[i]), 2 * _np_roundtrip(XS[i]), rtol=1e-6)


def test_scan_needs_length_and_matches_a_loop() -> None:
    qxs = quantize(XS)
    with pytest.raises(ValueError, match="must provide `length` to `scan`"):
        lc.lax.scan(lambda c, q: (c, None), 0.0, qxs)
    np.testing.assert_allclose(
        np.asarray(_scan_sum(qxs)), sum(_np_roundtrip(XS[i]) for i in range(4)), rtol=1e-6
    )
    _, ys = lc.lax.scan(lambda c, x: (c, quantize(x)), 0.0, XS)
    assert str(lc.typeof(ys)) == "q8[4,2,3]"
    np.testing.assert_array_equal(np.asarray(ys.qvalue), _np_quantize(XS)[0])


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.floats(-100, 100, allow_nan=False, width=32).filter(lambda v: abs(v) > 1e-3),
        min_size=6,
        max_size=6,
    )
)
def test_roundtrip_error_is_at_most_half_a_step(values: list[float]) -> None:
    x = np.asarray(values, np.float32).reshape(2, 3)
    qx = quantize(x)
    err = np.abs(np.asarray(dequantize(qx)) - x)
    assert np.all(err <= np.asarray(qx.scale)[:, None] * 0.5 + 1e-5 * np.abs(x))


# --- an old-style hi primitive -----------------------------------------------------------------


class QScale(HiPrimitive):
    """`qx` with its scales multiplied by `c` (the represented array times `c`)."""

    def abstract_eval(self, q_aval: Any, c_aval: Any) -> tuple[Any, Any]:
        if not isinstance(q_aval, QArrayTy) or c_aval.shape != ():
            raise TypeError(f"qscale takes a q8 array and a scalar, got {q_aval}, {c_aval}")
        return q_aval, set()

    def to_lojax(self, qx: Any, c: Any) -> QArray:
        return QArray(qx.qvalue, qx.scale * c)

    def jvp(self, primals: Any, tangents: Any) -> Any:
        (qx, c), (tq, tc) = primals, tangents
        from lamina_core.interpreters.zeros import instantiate_zeros

        out = self.bind(qx, c)
        return out, instantiate_zeros(tq) * c + dequantize(qx) * instantiate_zeros(tc)


qscale_p = QScale("qscale")


def test_old_style_hi_primitive() -> None:
    qx = quantize(X)
    out = qscale_p.bind(qx, np.float32(2.0))
    np.testing.assert_allclose(np.asarray(dequantize(out)), 2 * _np_roundtrip(X), rtol=1e-6)
    text = str(lc.make_jaxpr(lambda q, c: dequantize(qscale_p.bind(q, c)))(qx, np.float32(2.0)))
    assert text == (
        "{ lambda ; a:q8[2,3] b:f32[]. let\n"
        "    c:q8[2,3] = qscale a b\n"
        "    d:f32[2,3] = call_hi_primitive[_prim=Dequantize[{}]] c\n"
        "  in (d,) }"
    )
    lo = to_lojax(lc.make_jaxpr(lambda q: dequantize(qscale_p.bind(q, 3.0)))(qx).jaxpr)
    assert "qscale" not in str(lo)
    # d/dc sum(dequantize(qscale(qx, c))) = sum(dequantize(qx))
    g = lc.grad(lambda c: jnp.sum(dequantize(qscale_p.bind(qx, c))))(np.float32(2.0))
    np.testing.assert_allclose(float(g), float(np.sum(_np_roundtrip(X))), rtol=1e-5)
    _, t = lc.jvp(
        lambda c: dequantize(qscale_p.bind(qx, c)), (np.float32(2.0),), (np.float32(1.0),)
    )
    np.testing.assert_allclose(np.asarray(t), _np_roundtrip(X), rtol=1e-6)


def test_vmap_of_array_rules_over_spec_mapped_values_says_so() -> None:
    qxs = quantize(XS)

    def total(qx: Any) -> Any:
        return lc.lax.scan(lambda c, r: (c + dequantize(r), None), jnp.zeros(3), qx, length=2)[0]

    with pytest.raises(NotImplementedError, match="vmap of 'scan' with a hi-typed operand"):
        lc.vmap(total, in_axes=QArraySpec(), axis_size=4)(qxs)
