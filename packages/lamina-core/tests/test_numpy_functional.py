"""`jax.numpy`'s functional tools (`vectorize`, `apply_along_axis`, `piecewise`,
`frompyfunc`, ...) and bit, sort, float, polynomial and gradient helpers, against JAX 0.10.2:
dtypes, shapes and values on ordinary and edge inputs, errors, jit and grad."""

from __future__ import annotations

import json
import operator
import subprocess
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
import lamina_core.numpy as lnp
from lamina_core.testing import Oracle, jitted, sweep
from lamina_core.trace._values import to_numpy

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jnp = jax.numpy

# Lamina's jax.numpy, under the names JAX exports them as.
L = types.SimpleNamespace(**{k: getattr(lnp, k) for k in lnp.__all__})

_RNG = np.random.default_rng(7)
_M = np.arange(12.0, dtype=np.float32).reshape(3, 4)
_T = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
_F = _RNG.standard_normal((3, 5)).astype(np.float32)
_V = _RNG.standard_normal(5).astype(np.float32)
_C = (_RNG.standard_normal((2, 4)) + 1j * _RNG.standard_normal((2, 4))).astype(np.complex64)
_DUPS = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5], np.int32)
_UINT = np.array([3, 0, 2, 0, 1, 7], np.uint8)
_NANS = np.array([3.0, np.nan, 1.0, -np.inf, 2.0, np.inf, 0.0, -0.0], np.float32)
# Lamina's reference `top_k` orders a negated NaN first where XLA orders it last, so the
# partitions are checked on infinities and signed zeros but not NaNs.
# The same holds for signed zeros, which XLA's `top_k` orders and the reference does not.
_INFS = np.array([3.0, 1.0, -np.inf, 2.0, np.inf, 0.0, 7.0, -5.0], np.float32)
_BITS = np.array([[1, 0, 1, 1, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0, 0, 0, 1]], np.int32)
_BYTES = np.array([[5, 255, 0], [128, 7, 64]], np.uint8)
_FLOATS = np.array(
    [0.0, -0.0, 1.0, -2.5, 0.75, 1e-40, -3e-42, 1.4e-45, 3.4e38, np.inf, -np.inf, np.nan],
    np.float32,
)
# XLA on CPU treats subnormal floats as zero in arithmetic; NumPy (Lamina's reference) does
# not, so `frexp` of subnormals is checked on its own below.
_NORMALS = np.delete(_FLOATS, [5, 6, 7])
_SUBNORMALS = np.array([1e-40, -3e-42, 1.4e-45, 1.1e-38], np.float32)
_DOUBLES16 = np.array([0.0, 1.0, -3.0, 6e-8, 65504.0, np.inf, np.nan], np.float16)
_PHASE = np.array([0.0, 3.0, 6.5, -0.5, 2.0 * np.pi, 9.0, 3.1], np.float32)

Case = tuple[str, Callable[..., Any], tuple[Any, ...]]


def _sq(x: Any) -> Any:
    return x * x


def _norm(x: Any) -> Any:
    return (x * x).sum()


def _add_mul(x: Any, y: Any) -> Any:
    return x + 2 * y


def _cross(a: Any, b: Any) -> Any:
    return a[0] * b[1] - a[1] * b[0]


def _two_out(x: Any) -> Any:
    return x.sum(), x.max()


# Each case: (name, call(n, *arrays), arrays). Run eagerly and staged (make_jaxpr + evaluator).
CASES: list[Case] = [
    ("vectorize_scalar", lambda n, x, y: n.vectorize(_add_mul)(x, y), (_M, _V[:4])),
    ("vectorize_broadcast_ones", lambda n, x: n.vectorize(_sq)(x), (_M[:1, None],)),
    (
        "vectorize_signature",
        lambda n, x, y: n.vectorize(_cross, signature="(k),(k)->()")(x, y),
        (_F[:, :2], np.ones((4, 1, 2), np.float32)),
    ),
    (
        "vectorize_signature_reduce",
        lambda n, x: n.vectorize(_norm, signature="(n)->()")(x),
        (_T,),
    ),
    (
        "vectorize_two_outputs",
        lambda n, x: n.vectorize(_two_out, signature="(n)->(),()")(x),
        (_F,),
    ),
    (
        "vectorize_excluded",
        lambda n, x: n.vectorize(lambda a, p: a**p, excluded={1})(x, 3),
        (_M,),
    ),
    (
        "vectorize_excluded_kw",
        lambda n, x: n.vectorize(lambda a, *, s: a * s, excluded={"s"})(x, s=2.0),
        (_V,),
    ),
    ("apply_along_axis_0", lambda n, x: n.apply_along_axis(_norm, 0, x), (_T,)),
    ("apply_along_axis_last", lambda n, x: n.apply_along_axis(_norm, -1, x), (_T,)),
    (
        "apply_along_axis_vector_out",
        lambda n, x: n.apply_along_axis(lambda v: v[::-1] * 2, 1, x),
        (_T,),
    ),
    (
        "apply_along_axis_kwargs",
        lambda n, x: n.apply_along_axis(lambda v, p: (v**p).sum(), 1, x, p=2),
        (_M,),
    ),
    ("apply_over_axes_sum", lambda n, x: n.apply_over_axes(n.sum, x, [0, 2]), (_T,)),
    ("apply_over_axes_keep", lambda n, x: n.apply_over_axes(n.cumsum, x, [1]), (_M,)),
    (
        "piecewise",
        lambda n, x: n.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * 2]),
        (_F,),
    ),
    (
        "piecewise_constants_default",
        lambda n, x: n.piecewise(x, [x < -0.5, x > 0.5], [lambda v: v + 1, 7, -1.5]),
        (_F,),
    ),
    (
        "piecewise_int_overlap",
        lambda n, x: n.piecewise(x, [x > 2, x > 5], [lambda v: v * 10, lambda v: v * 100]),
        (_DUPS,),
    ),
    (
        "piecewise_scalar_conditions",
        lambda n, x: n.piecewise(x, np.array([False, True]), [lambda v: v, lambda v: v * 3]),
        (_DUPS,),
    ),
    (
        "piecewise_args",
        lambda n, x: n.piecewise(x, [x > 0], [lambda v, k: v * k], 4.0),
        (_V,),
    ),
    ("packbits", lambda n, x: n.packbits(x), (_BITS,)),
    ("packbits_axis", lambda n, x: n.packbits(x, axis=1), (_BITS,)),
    ("packbits_little", lambda n, x: n.packbits(x, axis=0, bitorder="little"), (_BITS,)),
    ("packbits_bool", lambda n, x: n.packbits(x > 0, axis=-1), (_BITS,)),
    ("packbits_uint", lambda n, x: n.packbits(x), (_UINT,)),
    ("unpackbits", lambda n, x: n.unpackbits(x), (_BYTES,)),
    ("unpackbits_axis", lambda n, x: n.unpackbits(x, axis=0), (_BYTES,)),
    ("unpackbits_little", lambda n, x: n.unpackbits(x, axis=1, bitorder="little"), (_BYTES,)),
    ("unpackbits_count_short", lambda n, x: n.unpackbits(x, axis=1, count=5), (_BYTES,)),
    ("unpackbits_count_long", lambda n, x: n.unpackbits(x, axis=1, count=30), (_BYTES,)),
    ("unpackbits_count_neg", lambda n, x: n.unpackbits(x, count=-3), (_BYTES,)),
    ("bitwise_count_int", lambda n, x: n.bitwise_count(x), (np.array([0, -1, 7, -8, 2**31 - 1]),)),
    ("bitwise_count_uint", lambda n, x: n.bitwise_count(x), (_BYTES,)),
    ("bitwise_count_bool", lambda n, x: n.bitwise_count(x), (np.array([True, False]),)),
    (
        "bitwise_count_int8_min",
        lambda n, x: n.bitwise_count(x),
        (np.array([-128, 127, -3], np.int8),),
    ),
    ("partition", lambda n, x: n.partition(x, 3), (_DUPS,)),
    ("partition_first_last", lambda n, x: (n.partition(x, 0), n.partition(x, -1)), (_DUPS,)),
    ("partition_axis0", lambda n, x: n.partition(x, 1, axis=0), (_F,)),
    ("partition_infs", lambda n, x: n.partition(x, 4), (_INFS,)),
    ("partition_uint_zeros", lambda n, x: n.partition(x, 2), (_UINT,)),
    ("partition_3d", lambda n, x: n.partition(x, 1, axis=1), (_T,)),
    ("argpartition", lambda n, x: n.argpartition(x, 3), (_DUPS,)),
    ("argpartition_axis0", lambda n, x: n.argpartition(x, 1, axis=0), (_F,)),
    ("argpartition_infs", lambda n, x: n.argpartition(x, 2), (_INFS,)),
    ("argpartition_uint", lambda n, x: n.argpartition(x, 3), (_UINT,)),
    ("argpartition_3d", lambda n, x: n.argpartition(x, -2, axis=2), (_T % 5,)),
    ("lexsort", lambda n, a, b: n.lexsort((a, b)), (_DUPS, _DUPS % 3)),
    ("lexsort_array_keys", lambda n, k: n.lexsort(k), (np.stack([_DUPS % 2, _DUPS % 4]),)),
    ("lexsort_axis0", lambda n, a, b: n.lexsort([a, b], axis=0), (_F > 0, _F)),
    ("lexsort_scalar", lambda n, a: n.lexsort([a]), (np.float32(2.0),)),
    ("sort_complex", lambda n, x: n.sort_complex(x), (_C,)),
    ("sort_complex_int", lambda n, x: n.sort_complex(x), (_DUPS,)),
    ("sort_complex_real", lambda n, x: n.sort_complex(x), (_F,)),
    ("matvec", lambda n, a, b: n.matvec(a, b), (_F, _V)),
    ("matvec_batched", lambda n, a, b: n.matvec(a, b), (np.ones((2, 1, 3, 4)), np.ones((5, 4)))),
    ("vecmat_complex", lambda n, a, b: n.vecmat(a, b), (_C[:, :2], _C.reshape(2, 2, 2))),
    ("vecmat_int", lambda n, a, b: n.vecmat(a, b), (_T[0, :, 0], _T[1, :, :])),
    ("vecdot", lambda n, a, b: n.vecdot(a, b), (_F, _V)),
    ("vecdot_axis", lambda n, a, b: n.vecdot(a, b, axis=0), (_M, _M[:, :1])),
    ("vecdot_complex", lambda n, a, b: n.vecdot(a, b), (_C, _C[::-1])),
    ("vecdot_mixed", lambda n, a, b: n.vecdot(a, b, axis=-2), (_T, _M[:, :1])),
    ("frexp", lambda n, x: n.frexp(x), (_NORMALS,)),
    ("frexp_f16", lambda n, x: n.frexp(x), (_DOUBLES16,)),
    ("frexp_int", lambda n, x: n.frexp(x), (_DUPS,)),
    ("spacing", lambda n, x: n.spacing(x), (_FLOATS,)),
    ("spacing_f16", lambda n, x: n.spacing(x), (_DOUBLES16,)),
    ("spacing_int", lambda n, x: n.spacing(x), (np.array([0, 1, -5]),)),
    ("i0", lambda n, x: n.i0(x), (np.array([0.0, -0.5, 1.0, 7.9, 8.0, 8.5, -20.0, 80.0]),)),
    ("i0_specials", lambda n, x: n.i0(x), (np.array([np.nan, np.inf, -np.inf, 1e-30]),)),
    ("i0_f16", lambda n, x: n.i0(x), (np.array([0.0, 1.5, -3.0, 9.0], np.float16),)),
    ("i0_int", lambda n, x: n.i0(x), (np.array([0, 1, 2, 10, -12]),)),
    ("kaiser", lambda n, b: n.kaiser(8, b), (np.float32(5.0),)),
    ("kaiser_odd", lambda n, b: n.kaiser(7, b), (np.float32(14.0),)),
    ("unwrap", lambda n, x: n.unwrap(x), (_PHASE,)),
    ("unwrap_discont", lambda n, x: n.unwrap(x, discont=4.0), (_PHASE,)),
    ("unwrap_period", lambda n, x: n.unwrap(x, period=4.0), (_PHASE,)),
    ("unwrap_axis0", lambda n, x: n.unwrap(x * 3, axis=0), (_F,)),
    ("unwrap_int", lambda n, x: n.unwrap(x, period=6), (np.array([0, 4, 9, 2, 14, 1]),)),
    ("unwrap_int_float_period", lambda n, x: n.unwrap(x), (np.array([0, 4, 9, 2, 14, 1]),)),
    ("gradient", lambda n, x: n.gradient(x), (_F,)),
    ("gradient_1d", lambda n, x: n.gradient(x), (_V,)),
    ("gradient_scalar_spacing", lambda n, x: n.gradient(x, 0.5, axis=1), (_F,)),
    ("gradient_two_spacings", lambda n, x: n.gradient(x, 2.0, 0.25), (_F,)),
    (
        "gradient_coordinates",
        lambda n, x, c: n.gradient(x, c, axis=-1),
        (_F, np.array([0.0, 0.5, 1.5, 1.75, 3.0], np.float32)),
    ),
    (
        "gradient_mixed_spacings",
        lambda n, x, c: n.gradient(x, 2.0, c),
        (_F, np.array([0.0, 0.5, 1.5, 1.75, 3.0], np.float32)),
    ),
    ("gradient_int", lambda n, x: n.gradient(x, axis=(0, 2)), (_T,)),
    ("gradient_no_axes", lambda n, x: n.gradient(x, axis=()), (_F,)),
    ("gradient_nonfinite", lambda n, x: n.gradient(x), (_NANS,)),
    ("polymul", lambda n, a, b: n.polymul(a, b), (np.array([1, 2, 3]), np.array([4, 5]))),
    ("poly", lambda n, z: n.poly(z), (np.array([1.0, 2.0, 3.0], np.float32),)),
    ("poly_int", lambda n, z: n.poly(z), (np.array([1, -2]),)),
    ("poly_complex", lambda n, z: n.poly(z), (_C[0],)),
    ("polymul_float", lambda n, a, b: n.polymul(a, b), (_V, _V[:3])),
    ("polymul_complex", lambda n, a, b: n.polymul(a, b), (_C[0], _V[:2])),
    ("polymul_short_first", lambda n, a, b: n.polymul(a, b), (_V[:2], _V)),
    (
        "polydiv",
        lambda n, a, b: n.polydiv(a, b),
        (np.array([1.0, -3.0, 0.0, 2.0], np.float32), np.array([1.0, 1.0], np.float32)),
    ),
    ("polydiv_int", lambda n, a, b: n.polydiv(a, b), (np.array([6, 5, 1]), np.array([2, 1]))),
    ("polydiv_short", lambda n, a, b: n.polydiv(a, b), (_V[:2], _V)),
]


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


def _assert_same(got: Any, want: Any, rtol: float = 1e-6) -> None:
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        assert g.shape == w.shape, (g.shape, w.shape)
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-30)


# Values that are computed with the very same floating operations as JAX's are compared
# exactly; the rest (reductions, convolution, transcendental functions) to a few ulps.
_EXACT = {"frexp", "frexp_f16", "frexp_int", "spacing", "spacing_f16", "spacing_int"}


def _rtol(name: str) -> float:
    return 0.0 if name in _EXACT else 2e-6


@pytest.mark.parametrize(("name", "call", "args"), sweep(CASES, [c[0] for c in CASES]))
def test_values_are_jaxs(name: str, call: Callable[..., Any], args: tuple[Any, ...]) -> None:
    want = jitted(jax, lambda *xs: call(jnp, *xs), args)(*args)
    _assert_same(call(L, *args), want, _rtol(name))


@pytest.mark.parametrize(("name", "call", "args"), sweep(CASES, [c[0] for c in CASES]))
def test_staged_values_are_jaxs(
    oracle: Oracle, name: str, call: Callable[..., Any], args: tuple[Any, ...]
) -> None:
    closed = lc.make_jaxpr(lambda *xs: call(L, *xs))(*args)
    got = oracle.evaluate(closed, list(args))
    want = jax.jit(lambda *xs: call(jnp, *xs))(*args)
    _assert_same([np.asarray(to_numpy(g)) for g in got], _leaves(want), _rtol(name))


# Functions that need concrete values (their output shapes depend on them).
EAGER_ONLY: list[Case] = [
    ("trim_zeros", lambda n, x: n.trim_zeros(x), (np.array([0, 0, 1, 0, 2, 0], np.int32),)),
    ("trim_zeros_f", lambda n, x: n.trim_zeros(x, "f"), (np.array([0.0, 0.0, 1.0, 0.0]),)),
    ("trim_zeros_b", lambda n, x: n.trim_zeros(x, trim="B"), (np.array([0, 3, 0, 0]),)),
    ("trim_zeros_none", lambda n, x: n.trim_zeros(x, trim=""), (np.array([0, 3, 0]),)),
    ("trim_zeros_all_zero", lambda n, x: n.trim_zeros(x), (np.zeros(4, np.float32),)),
    (
        "trim_zeros_2d",
        lambda n, x: n.trim_zeros(x),
        (np.pad(np.ones((2, 3), np.int32), ((1, 2), (0, 1))),),
    ),
    (
        "trim_zeros_2d_axis",
        lambda n, x: n.trim_zeros(x, axis=1),
        (np.pad(np.ones((2, 3), np.int32), ((1, 2), (2, 1))),),
    ),
    (
        "polymul_trim",
        lambda n, a, b: n.polymul(a, b, trim_leading_zeros=True),
        (np.array([0.0, 0.0, 1.0, 2.0]), np.array([0.0, 3.0])),
    ),
    ("polymul_empty", lambda n, a, b: n.polymul(a, b), (np.zeros(0), np.array([1.0, 2.0]))),
    (
        "polydiv_trim",
        lambda n, a, b: n.polydiv(a, b, trim_leading_zeros=True),
        (np.array([1.0, 3.0, 2.0], np.float32), np.array([1.0, 1.0], np.float32)),
    ),
    ("fromfunction", lambda n: n.fromfunction(lambda i, j: i * 10 + j, (3, 4)), ()),
    (
        "fromfunction_int",
        lambda n: n.fromfunction(lambda i, j, k: i - j * k, (2, 3, 2), dtype=int),
        (),
    ),
    ("fromfunction_1d", lambda n: n.fromfunction(lambda i: i**2, 5, dtype=np.int8), ()),
    ("kaiser_short", lambda n: (n.kaiser(0, 3.0), n.kaiser(1, 3.0)), ()),
    ("kaiser_python_beta", lambda n: n.kaiser(6, 8.6), ()),
    ("gradient_python_spacing", lambda n: n.gradient(np.arange(5) ** 2, 2), ()),
    ("lexsort_python_lists", lambda n: n.lexsort([np.array([1, 0, 1]), np.array([2, 2, 1])]), ()),
]


@pytest.mark.parametrize(("name", "call", "args"), EAGER_ONLY, ids=[c[0] for c in EAGER_ONLY])
def test_concrete_values_are_jaxs(
    name: str, call: Callable[..., Any], args: tuple[Any, ...]
) -> None:
    _assert_same(call(L, *args), call(jnp, *args))


def _ufuncs(n: Any) -> tuple[Any, Any, Any]:
    add = n.frompyfunc(operator.add, nin=2, nout=1, identity=0)
    hyp = n.frompyfunc(lambda x, y: n.sqrt(x * x + y * y), 2, 1)
    sin = n.frompyfunc(n.sin, 1, 1)
    return add, hyp, sin


_X6 = np.arange(6, dtype=np.int32)
UFUNC_CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("call", lambda n: _ufuncs(n)[0](_M, _V[:4])),
    ("call_scalars", lambda n: _ufuncs(n)[0](np.int8(3), 4)),
    ("call_unary", lambda n: _ufuncs(n)[2](_T)),
    ("call_composite", lambda n: _ufuncs(n)[1](_M, 2.0)),
    ("outer", lambda n: _ufuncs(n)[0].outer(_X6[:3], _V)),
    ("outer_nd", lambda n: _ufuncs(n)[1].outer(_M[:2, :2], np.ones((1, 3), np.float32))),
    ("reduce", lambda n: _ufuncs(n)[0].reduce(_T)),
    ("reduce_axis_keepdims", lambda n: _ufuncs(n)[0].reduce(_T, axis=2, keepdims=True)),
    ("reduce_all", lambda n: _ufuncs(n)[1].reduce(_M, axis=None)),
    ("reduce_all_keepdims", lambda n: _ufuncs(n)[0].reduce(_M, axis=None, keepdims=True)),
    ("reduce_initial", lambda n: _ufuncs(n)[1].reduce(_M, axis=1, initial=2.0)),
    (
        "reduce_where",
        lambda n: _ufuncs(n)[0].reduce(_M, axis=1, where=np.array([True, False, True, False])),
    ),
    ("reduce_dtype", lambda n: _ufuncs(n)[0].reduce(_T, axis=1, dtype=np.float32)),
    ("reduce_empty", lambda n: _ufuncs(n)[0].reduce(np.zeros((0, 3), np.float32))),
    ("accumulate", lambda n: _ufuncs(n)[0].accumulate(_T, axis=1)),
    ("accumulate_composite", lambda n: _ufuncs(n)[1].accumulate(_M, axis=-1)),
    ("accumulate_dtype", lambda n: _ufuncs(n)[0].accumulate(_X6, dtype=np.float32)),
    ("accumulate_empty", lambda n: _ufuncs(n)[0].accumulate(np.zeros((2, 0), np.int32))),
    ("at_scalar", lambda n: _ufuncs(n)[0].at(_X6, 1, 10, inplace=False)),
    ("at_repeated", lambda n: _ufuncs(n)[0].at(_X6, np.array([0, 0, 2]), 5, inplace=False)),
    (
        "at_values",
        lambda n: _ufuncs(n)[0].at(_X6, np.array([4, 1, 4]), np.array([1, 2, 3]), inplace=False),
    ),
    ("at_unary", lambda n: _ufuncs(n)[2].at(_M, (np.array([0, 2]), 1), inplace=False)),
    (
        "at_rows",
        lambda n: _ufuncs(n)[0].at(_M, np.array([1, 1]), _F[:2, :4], inplace=False),
    ),
]


@pytest.mark.parametrize(("name", "call"), UFUNC_CASES, ids=[c[0] for c in UFUNC_CASES])
def test_ufuncs_are_jaxs(name: str, call: Callable[[Any], Any]) -> None:
    _assert_same(call(L), jitted(jax, lambda: call(jnp), ())())


def test_ufunc_attributes_are_jaxs() -> None:
    for n in (L, jnp):
        add = n.frompyfunc(operator.add, 2, 1, identity=0)
        assert (add.nin, add.nout, add.nargs, add.identity) == (2, 1, 2, 0)
        assert repr(add) == "<jnp.ufunc 'add'>"
        assert add == n.frompyfunc(operator.add, 2, 1, identity=0)
        assert hash(add) == hash(n.frompyfunc(operator.add, 2, 1, identity=0))
        assert add != n.frompyfunc(operator.add, 2, 1)
    assert isinstance(L.frompyfunc(operator.add, 2, 1), lnp.ufunc)


ERRORS: list[tuple[type[Exception], Callable[[Any], Any]]] = [
    (TypeError, lambda n: n.packbits(np.ones(3, np.float32))),
    (ValueError, lambda n: n.packbits(_BITS, bitorder="middle")),
    (TypeError, lambda n: n.unpackbits(_BITS)),
    (ValueError, lambda n: n.unpackbits(_BYTES, bitorder="x")),
    (ValueError, lambda n: n.partition(_DUPS, 11)),
    (ValueError, lambda n: n.argpartition(_F, 1, axis=2)),
    (NotImplementedError, lambda n: n.partition(_C, 1)),
    (NotImplementedError, lambda n: n.argpartition(_C, 1)),
    (TypeError, lambda n: n.lexsort([])),
    (ValueError, lambda n: n.lexsort([_DUPS, _V])),
    (ValueError, lambda n: n.vecdot(_F, _M)),
    (ValueError, lambda n: n.matvec(_F, _M)),
    (TypeError, lambda n: n.frexp(_C)),
    (ValueError, lambda n: n.spacing(_C)),
    (ValueError, lambda n: n.i0(_C)),
    (ValueError, lambda n: n.unwrap(_C)),
    (ValueError, lambda n: n.gradient(np.ones((1, 3)))),
    (TypeError, lambda n: n.gradient(_F, 1.0, 2.0, 3.0)),
    (ValueError, lambda n: n.gradient(_F, np.ones(4), axis=1)),
    (ValueError, lambda n: n.gradient(_F, np.ones((5, 1)), axis=1)),
    (NotImplementedError, lambda n: n.gradient(_F, edge_order=1)),
    (ValueError, lambda n: n.piecewise(_V, [_V > 0], [1, 2, 3])),
    (ValueError, lambda n: n.apply_along_axis(_norm, 2, _M)),
    (ValueError, lambda n: n.apply_over_axes(lambda x, a: x.sum(), _T, [0])),
    (ValueError, lambda n: n.vectorize(_cross, signature="(k),(k)")(_M, _M)),
    (ValueError, lambda n: n.vectorize(_cross, signature="(k,j),(k)->()")(_V, _V)),
    (ValueError, lambda n: n.vectorize(_cross, signature="(k),(k)->()")(_V, _M)),
    (ValueError, lambda n: n.vectorize(_norm, signature="(n)->(n)")(_M)),
    (TypeError, lambda n: n.vectorize(_norm, signature="(n)->(),()")(_M)),
    (TypeError, lambda n: n.vectorize(_cross, signature="(k),(k)->()")(_V)),
    (TypeError, lambda n: n.vectorize(_sq, excluded={1.5})),
    (ValueError, lambda n: n.vectorize(_sq, excluded={-1})),
    (ValueError, lambda n: n.frompyfunc(n.sin, 1, 1).reduce(_V)),
    (ValueError, lambda n: n.frompyfunc(n.sin, 1, 1).outer(_V, _V)),
    (ValueError, lambda n: n.frompyfunc(n.sin, 1, 1).accumulate(_V)),
    (ValueError, lambda n: n.frompyfunc(operator.add, 2, 1).reduce(np.zeros(0))),
    (ValueError, lambda n: n.frompyfunc(operator.add, 2, 1).reduce(_V, where=_V > 0)),
    (
        ValueError,
        lambda n: n.frompyfunc(operator.add, 2, 1, identity=0).reduce(_V, where=np.ones(5)),
    ),
    (NotImplementedError, lambda n: n.frompyfunc(operator.add, 2, 1).at(_V, 0, 1.0)),
    (
        ValueError,
        lambda n: n.frompyfunc(operator.add, 2, 1).at(_M, np.array([1, 1]), _V[:4], inplace=False),
    ),
    (NotImplementedError, lambda n: n.frompyfunc(operator.add, 2, 1)(_V, _V, out=_V)),
    (TypeError, lambda n: n.frompyfunc(operator.add, 2, 1).at(_V, [0, 1], 1.0, inplace=False)),
    (TypeError, lambda n: n.frompyfunc(operator.add, 2, 1).at(_V, [[0]], 1.0, inplace=False)),
]


@pytest.mark.parametrize(("kind", "call"), ERRORS)
def test_errors_are_jaxs(kind: type[Exception], call: Callable[[Any], Any]) -> None:
    with pytest.raises(kind) as expected:
        call(jnp)
    with pytest.raises(kind) as got:
        call(L)
    assert str(got.value) == str(expected.value)


_FREXP_CHILD = """
import json, sys
import numpy as np
import lamina_core as lc
import lamina_core.numpy as L
from lamina_core.trace._evaluate import eval_jaxpr
x = np.array(json.loads(sys.argv[1]), np.float32)
closed = lc.make_jaxpr(L.frexp)(x)
print(json.dumps([np.asarray(v).tolist() for v in eval_jaxpr(closed.jaxpr, closed.consts, x)]))
"""


def test_frexp_of_subnormals(oracle: Oracle, request: pytest.FixtureRequest) -> None:
    if request.config.getoption("--lamina-execute") == "reference":
        # In a fresh process: in the full parallel run some native library leaves a worker's
        # FPU flushing subnormals, which NumPy's arithmetic (the reference evaluator) then
        # cannot see.
        child = subprocess.run(
            [sys.executable, "-c", _FREXP_CHILD, json.dumps(_SUBNORMALS.tolist())],
            capture_output=True,
            text=True,
            check=True,
        )
        mantissas, exponents = json.loads(child.stdout)
        got: Any = [np.array(mantissas, np.float32), np.array(exponents, np.int32)]
        want: Any = np.frexp(_SUBNORMALS)  # IEEE arithmetic, as NumPy computes
        want = (want[0], want[1].astype(np.int32))
    else:
        closed = lc.make_jaxpr(L.frexp)(_SUBNORMALS)
        got = [np.asarray(to_numpy(g)) for g in oracle.evaluate(closed, [_SUBNORMALS])]
        want = jax.jit(jnp.frexp)(_SUBNORMALS)
    _assert_same(got, want, rtol=0.0)


def test_concrete_inputs_are_required_where_jax_requires_them() -> None:
    with pytest.raises(lc.ConcretizationTypeError, match="`filt` argument of trim_zeros"):
        lc.jit(L.trim_zeros)(np.array([0.0, 1.0]))
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(jnp.trim_zeros)(np.array([0.0, 1.0]))


_G = np.array([-3.0, -0.4, 0.0, 0.3, 2.0, 9.5], np.float32)


def _grad_pair(
    make: Callable[[Any], Callable[..., Any]], *args: Any, argnums: int = 0
) -> tuple[Any, Any]:
    got = lc.grad(make(L), argnums=argnums)(*args)
    want = jitted(jax, jax.grad(make(jnp), argnums=argnums), args)(*args)
    return got, want


GRADS: list[tuple[str, Callable[[Any], Callable[..., Any]], tuple[Any, ...]]] = [
    ("i0", lambda n: lambda x: n.i0(x).sum(), (_G,)),
    ("i0_at_zero", lambda n: lambda x: n.i0(x), (np.float32(0.0),)),
    ("kaiser_beta", lambda n: lambda b: n.kaiser(6, b).sum(), (np.float32(4.0),)),
    ("unwrap", lambda n: lambda x: (n.unwrap(x) ** 2).sum(), (_PHASE,)),
    ("gradient", lambda n: lambda x: (n.gradient(x) ** 2).sum(), (_V,)),
    (
        "gradient_coordinates",
        lambda n: lambda c: (n.gradient(_V, c) ** 2).sum(),
        (np.array([0.0, 0.5, 1.5, 1.75, 3.0], np.float32),),
    ),
    ("vecdot", lambda n: lambda a: n.vecdot(a, _F).sum(), (_V,)),
    ("vecdot_complex", lambda n: lambda a: n.vecdot(a, _C).real.sum(), (_V[:4],)),
    ("polymul", lambda n: lambda a: n.polymul(a, _V[:3]).sum(), (_V,)),
    ("polymul_sq", lambda n: lambda a: (n.polymul(a, a) ** 2).sum(), (_V[:3],)),
    ("polydiv", lambda n: lambda a: n.polydiv(a, _V[:2])[0].sum(), (_V,)),
    ("frexp", lambda n: lambda x: n.frexp(x)[0].sum(), (_G,)),
    ("piecewise", lambda n: lambda x: n.piecewise(x, [x > 0], [n.sin, n.cos]).sum(), (_G,)),
    ("vectorize", lambda n: lambda x: n.vectorize(_norm, signature="(n)->()")(x).sum(), (_F,)),
    ("apply_along_axis", lambda n: lambda x: n.apply_along_axis(_norm, 1, x).sum(), (_F,)),
    ("matvec", lambda n: lambda a: n.matvec(a, _V).sum(), (_F,)),
    ("partition", lambda n: lambda x: (n.partition(x, 2) * _G).sum(), (_G[::-1].copy(),)),
    ("spacing_free", lambda n: lambda x: (n.sort_complex(x).real * _G).sum(), (_G[::-1].copy(),)),
]


@pytest.mark.parametrize(("name", "make", "args"), GRADS, ids=[g[0] for g in GRADS])
def test_grads_are_jaxs(
    name: str, make: Callable[[Any], Callable[..., Any]], args: tuple[Any, ...]
) -> None:
    got, want = _grad_pair(make, *args)
    _assert_same(got, want, rtol=2e-5)


def test_under_jit() -> None:
    def program(n: Any) -> Callable[..., Any]:
        def f(x: Any, b: Any) -> Any:
            m, e = n.frexp(x)
            packed = n.packbits(x > 0)
            return (
                m,
                e,
                n.unpackbits(packed, count=6),
                n.partition(x, 2),
                n.argpartition(x, 3),
                n.gradient(x, 0.5),
                n.unwrap(x * 4),
                n.i0(x),
                n.spacing(x),
                n.kaiser(5, b),
                n.vecdot(x, x),
                n.lexsort((x, x > 0)),
            )

        return f

    got = lc.jit(program(L))(_G, np.float32(3.0))
    want = jax.jit(program(jnp))(_G, np.float32(3.0))
    _assert_same(got, want, rtol=2e-6)


def test_vmap_of_functions() -> None:
    def program(n: Any) -> Callable[..., Any]:
        return lambda x: (n.partition(x, 1), n.frexp(x), n.i0(x), n.gradient(x), n.unwrap(x))

    got = lc.vmap(program(L))(_F)
    want = jax.vmap(program(jnp))(_F)
    _assert_same(got, want, rtol=2e-6)


def test_i0_and_kaiser_print_as_jax() -> None:
    # exp(|x|) * lax.bessel_i0e(|x|) under JAX's custom_jvp, in a jit named after the function.
    x = np.array([0.0, 1.5, -3.0, 10.0], np.float32)
    assert str(lc.make_jaxpr(L.i0)(x)) == str(jax.make_jaxpr(jnp.i0)(x))
    assert str(lc.make_jaxpr(lc.grad(L.i0))(1.5)) == str(jax.make_jaxpr(jax.grad(jnp.i0))(1.5))
    assert str(lc.make_jaxpr(lambda b: L.kaiser(5, b))(3.0)) == str(
        jax.make_jaxpr(lambda b: jnp.kaiser(5, b))(3.0)
    )
