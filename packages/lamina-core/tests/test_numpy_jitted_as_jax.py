"""`jnp` functions that JAX 0.10.2 jits are jitted in Lamina too: under `make_jaxpr` each
prints byte-identically to JAX's (the outer `jit[name=...]` with the same static and traced
arguments, and the same equations inside); values equal JAX's; bad arguments raise JAX's
errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
import lamina_core.numpy as lnp
from lamina_core.testing import sweep
from lamina_core.trace._values import to_numpy

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jnp = jax.numpy

_F32 = np.array([-np.inf, -2.5, -1.0, 0.0, np.nan, 0.5, 1.0, 3.0, np.inf], np.float32)
_M = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.0
_B3 = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
_C64 = _F32.astype(np.complex64)
_C64.imag = _F32[::-1]
_I32 = np.arange(6, dtype=np.int32) - 2
_U8 = np.array([3, 0, 255, 7, 1, 9, 4, 2, 1, 5], np.uint8)

Call = Callable[[Any, Any], Any]

CASES: list[tuple[str, Call, Any]] = [
    ("nan_to_num", lambda n, x: n.nan_to_num(x), _F32),
    ("nan_to_num_complex", lambda n, x: n.nan_to_num(x), _C64),
    ("nan_to_num_int", lambda n, x: n.nan_to_num(x), _I32),
    ("nan_to_num_values", lambda n, x: n.nan_to_num(x, nan=1.0, posinf=3, neginf=-7.5), _F32),
    ("isclose", lambda n, x: n.isclose(x, x[::-1]), _F32),
    ("isclose_int_scalar", lambda n, x: n.isclose(x, 2), _I32),
    ("isclose_complex_equal_nan", lambda n, x: n.isclose(x, x, equal_nan=True), _C64),
    ("isclose_broadcast_tols", lambda n, x: n.isclose(x, x[0], 1e-3, atol=0.1), _M),
    ("allclose", lambda n, x: n.allclose(x, x), _F32),
    ("allclose_equal_nan", lambda n, x: n.allclose(x, x, 1e-3, 0.1, equal_nan=True), _F32),
    ("diff", lambda n, x: n.diff(x), _F32),
    ("diff_n2_prepend", lambda n, x: n.diff(x, n=2, axis=0, prepend=1.0), _M),
    ("diff_bool_append", lambda n, x: n.diff(x > 0, axis=1, append=x[:, :1] > 0), _M),
    ("diff_n0", lambda n, x: n.diff(x, 0), _M),
    ("tril", lambda n, x: n.tril(x), _M),
    ("tril_batched", lambda n, x: n.tril(x, -1), _B3),
    ("triu", lambda n, x: n.triu(x, 1), _M),
    ("triu_batched", lambda n, x: n.triu(x, k=2), _B3),
    ("diagonal", lambda n, x: n.diagonal(x), _M),
    ("diagonal_negative", lambda n, x: n.diagonal(x, -1, 1, 0), _M),
    ("diagonal_3d", lambda n, x: n.diagonal(x, 1, 0, 2), _B3),
    ("kron", lambda n, x: n.kron(x, x[:2]), _M),
    ("kron_ranks", lambda n, x: n.kron(x[0], n.ones((2, 2, 2), n.int32)), _M),
    ("rot90", lambda n, x: n.rot90(x), _M),
    ("rot90_k3", lambda n, x: n.rot90(x, 3, axes=(1, 0)), _M),
    ("rot90_k2", lambda n, x: n.rot90(x, 2, axes=(0, 2)), _B3),
    ("count_nonzero", lambda n, x: n.count_nonzero(x, axis=1), _M),
    ("count_nonzero_keepdims", lambda n, x: n.count_nonzero(x, keepdims=True), _B3),
    ("nansum", lambda n, x: n.nansum(x), _F32),
    ("nansum_axis_dtype", lambda n, x: n.nansum(x, axis=1, dtype=n.float32), _B3),
    ("nanprod_keepdims", lambda n, x: n.nanprod(x, axis=0, keepdims=True), _M),
    ("nanmax", lambda n, x: n.nanmax(x), _F32),
    ("nanmax_int", lambda n, x: n.nanmax(x, axis=2), _B3),
    ("nanmin_initial_where", lambda n, x: n.nanmin(x, initial=0.0, where=x > -2), _F32),
    ("nanmean", lambda n, x: n.nanmean(x), _F32),
    ("nanmean_int_axis", lambda n, x: n.nanmean(x, axis=(0, 2)), _B3),
    ("nanvar", lambda n, x: n.nanvar(x), _F32),
    ("nanvar_ddof_axis", lambda n, x: n.nanvar(x, axis=1, ddof=1, keepdims=True), _M),
    ("nanstd", lambda n, x: n.nanstd(x), _F32),
    ("nanstd_int", lambda n, x: n.nanstd(x, axis=0), _B3),
    ("nanargmax", lambda n, x: n.nanargmax(x), _F32),
    ("nanargmin_axis", lambda n, x: n.nanargmin(x, axis=1, keepdims=True), _M),
    ("nancumsum", lambda n, x: n.nancumsum(x), _F32),
    ("nancumprod_axis", lambda n, x: n.nancumprod(x, axis=1), _M),
    ("ptp", lambda n, x: n.ptp(x, axis=[0, 1]), _B3),
    ("median", lambda n, x: n.median(x), _F32),
    ("median_axis_keepdims", lambda n, x: n.median(x, axis=1, keepdims=True), _B3),
    ("median_axes", lambda n, x: n.median(x, axis=(2, 0)), _B3),
    ("nanmedian", lambda n, x: n.nanmedian(x), _F32),
    ("nanmedian_axis", lambda n, x: n.nanmedian(x, axis=0, keepdims=True), _M),
    ("quantile", lambda n, x: n.quantile(x, 0.3), _M),
    ("quantile_nearest_axis", lambda n, x: n.quantile(x, 0.7, axis=1, method="nearest"), _M),
    (
        "quantile_lower_keepdims",
        lambda n, x: n.quantile(x, 0.5, None, keepdims=True, method="lower"),
        _B3,
    ),
    ("nanquantile_axes", lambda n, x: n.nanquantile(x, 0.25, axis=(0, 2)), _B3),
    ("percentile", lambda n, x: n.percentile(x, 40), _F32),
    ("percentile_int_higher", lambda n, x: n.percentile(x, 75, axis=0, method="higher"), _B3),
    ("nanpercentile", lambda n, x: n.nanpercentile(x, 90.0, axis=-1), _M),
    ("cross", lambda n, x: n.cross(x[:, :3], x[:, 1:]), _M),
    ("cross_2d", lambda n, x: n.cross(x[0, :2, :2], x[1, :2, :2], axisa=0, axisb=0), _B3),
    ("cross_2_3_axis", lambda n, x: n.cross(x[:2, :3], x[1:, :3], axis=0), _M),
    ("trace", lambda n, x: n.trace(x), _M),
    ("trace_offset_axes", lambda n, x: n.trace(x, 1, 0, 2), _B3),
    ("trace_negative_dtype", lambda n, x: n.trace(x, -1, dtype=n.float32), _B3),
    ("fmax", lambda n, x: n.fmax(x, x[::-1]), _F32),
    ("fmin_broadcast", lambda n, x: n.fmin(x, x[0]), _M),
    ("fmin_int", lambda n, x: n.fmin(x, x[::-1]), _I32),
    ("frexp", lambda n, x: n.frexp(x), _F32),
    ("frexp_int", lambda n, x: n.frexp(x), _I32),
    ("ldexp", lambda n, x: n.ldexp(x, 3), _F32),
    ("ldexp_arrays", lambda n, x: n.ldexp(x, x[::-1]), _I32),
    ("modf", lambda n, x: n.modf(x), _F32),
    ("modf_int", lambda n, x: n.modf(x), _I32),
    ("average", lambda n, x: n.average(x), _M),
    ("average_weights_axes", lambda n, x: n.average(x, (2, 0), x[:, 0, :].T, True), _B3),
    ("cov", lambda n, x: n.cov(x), _M),
    ("cov_y_rowvar", lambda n, x: n.cov(x[0], x[1], rowvar=False), _B3),
    ("cov_weights", lambda n, x: n.cov(x, fweights=n.arange(4), aweights=x[0] + 6.0), _M),
    ("cov_bias_dtype", lambda n, x: n.cov(x[0], bias=True, dtype=n.float32), _I32),
    ("corrcoef_1d", lambda n, x: n.corrcoef(x[1]), _M),
    ("append", lambda n, x: n.append(x, x[0]), _M),
    ("append_axis_mixed", lambda n, x: n.append(x, x * 2.5, axis=1), _B3),
    ("ediff1d", lambda n, x: n.ediff1d(x), _M),
    ("ediff1d_ends", lambda n, x: n.ediff1d(x, to_end=x[0, :2], to_begin=7), _B3),
    ("rollaxis", lambda n, x: n.rollaxis(x, 2), _B3),
    ("rollaxis_start", lambda n, x: n.rollaxis(x, 0, -1), _B3),
    ("iscomplex", lambda n, x: n.iscomplex(x), _C64),
    ("iscomplex_real", lambda n, x: n.iscomplex(x), _M),
    ("isreal", lambda n, x: n.isreal(x), _C64),
    ("isreal_int", lambda n, x: n.isreal(x), _I32),
    ("argpartition", lambda n, x: n.argpartition(x, 3), _M),
    ("argpartition_axis0", lambda n, x: n.argpartition(x, -1, axis=0), _B3),
    ("partition", lambda n, x: n.partition(x, 2, axis=0), _M),
    ("partition_uint", lambda n, x: n.partition(x, 4), _U8),
    ("bitwise_count", lambda n, x: n.bitwise_count(x), _U8),
    ("bitwise_count_signed", lambda n, x: n.bitwise_count(x), _I32),
    ("gradient", lambda n, x: n.gradient(x), _F32[1:4]),
    ("gradient_spacing_axis", lambda n, x: n.gradient(x, 2.0, axis=1), _M),
    ("gradient_coordinates", lambda n, x: n.gradient(x, x[:, 0] * 2, x[0]), _M),
    ("gradient_axes", lambda n, x: n.gradient(x, axis=(0, -1)), _B3),
    ("lexsort", lambda n, x: n.lexsort((x, x[::-1])), _I32),
    ("lexsort_array_axis0", lambda n, x: n.lexsort(x, axis=0), _M),
    ("matvec", lambda n, x: n.matvec(x, x[0]), _M),
    ("matvec_batched", lambda n, x: n.matvec(x, x[:, 0]), _B3),
    ("vecmat", lambda n, x: n.vecmat(x[:, 0], x), _M),
    ("vecmat_complex", lambda n, x: n.vecmat(x[:3], n.outer(x[:3], x[3:])), _C64),
    ("packbits", lambda n, x: n.packbits(x), _U8),
    ("packbits_bool_axis_little", lambda n, x: n.packbits(x > 0, 0, "little"), _B3),
    ("unpackbits", lambda n, x: n.unpackbits(x), _U8),
    ("unpackbits_count_pad", lambda n, x: n.unpackbits(x, count=90), _U8),
    ("unpackbits_count_cut", lambda n, x: n.unpackbits(x, count=-3, bitorder="little"), _U8),
    ("unpackbits_axis", lambda n, x: n.unpackbits(x.reshape(2, 5), axis=1, count=11), _U8),
    ("sort_complex", lambda n, x: n.sort_complex(x), _C64),
    ("sort_complex_real", lambda n, x: n.sort_complex(x), _M),
    ("unwrap", lambda n, x: n.unwrap(x * 3), _M),
    ("unwrap_discont_period", lambda n, x: n.unwrap(x, 2.0, axis=0, period=3.0), _M),
    ("unwrap_int", lambda n, x: n.unwrap(x, period=4), _I32),
    ("poly", lambda n, x: n.poly(x), _M[0]),
    ("poly_int", lambda n, x: n.poly(x), _I32[:3]),
    ("poly_complex", lambda n, x: n.poly(x), _C64[:3]),
    ("poly_empty", lambda n, x: n.poly(x[:0]), _M[0]),
    ("poly_square", lambda n, x: n.poly(n.triu(x[:, 1:])), _M),
    ("polyadd", lambda n, x: n.polyadd(x, x[:3]), _M[0]),
    ("polyadd_longer_second", lambda n, x: n.polyadd(x[:3], x * 1.5), _I32),
    ("polysub", lambda n, x: n.polysub(x[:2], x), _M[1]),
    ("polyder", lambda n, x: n.polyder(x), _M[1]),
    ("polyder_m2_int", lambda n, x: n.polyder(x, 2), _I32),
    ("polyder_m0", lambda n, x: n.polyder(x, m=0), _I32),
    ("polyint", lambda n, x: n.polyint(x), _M[2]),
    ("polyint_m2_k", lambda n, x: n.polyint(x, 2, k=3.0), _M[2]),
    ("polyint_k_array", lambda n, x: n.polyint(x, 2, k=x[:2]), _I32),
    ("trapezoid", lambda n, x: n.trapezoid(x), _M[0]),
    ("trapezoid_x", lambda n, x: n.trapezoid(x, x * 2, axis=0), _M),
    ("trapezoid_x_1d", lambda n, x: n.trapezoid(x, x[0]), _M),
    ("trapezoid_dx_array", lambda n, x: n.trapezoid(x, dx=x[0, :3]), _M),
    ("trapezoid_dx_axis", lambda n, x: n.trapezoid(x, dx=0.5, axis=0), _B3),
    ("vander", lambda n, x: n.vander(x, 3), _M[0]),
    ("vander_increasing", lambda n, x: n.vander(x, increasing=True), _I32),
    ("diag", lambda n, x: n.diag(x, 1), _M[0]),
    ("diag_negative", lambda n, x: n.diag(x, -2), _I32),
    ("diag_2d", lambda n, x: n.diag(x, -1), _M),
]


@pytest.mark.parametrize(("call", "x"), sweep([c[1:] for c in CASES], [c[0] for c in CASES]))
def test_jaxpr_prints_as_jax(call: Call, x: Any) -> None:
    assert str(lc.make_jaxpr(lambda a: call(lnp, a))(x)) == str(
        jax.make_jaxpr(lambda a: call(jnp, a))(x)
    )


@pytest.mark.parametrize(("call", "x"), sweep([c[1:] for c in CASES], [c[0] for c in CASES]))
def test_values_match_jax(call: Call, x: Any) -> None:
    got_tree, want_tree = call(lnp, x), call(jnp, x)
    if isinstance(want_tree, list):  # gradient along several axes
        assert isinstance(got_tree, list)
        got_tree, want_tree = tuple(got_tree), tuple(want_tree)
    if not isinstance(want_tree, tuple):
        got_tree, want_tree = (got_tree,), (want_tree,)
    assert len(got_tree) == len(want_tree)
    for got_leaf, want_leaf in zip(got_tree, want_tree, strict=True):
        got = np.asarray(to_numpy(got_leaf))
        want = np.asarray(want_leaf)
        assert got.dtype == want.dtype
        # Summation orders of the reductions may differ by an ulp from XLA's.
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=0)


INTERP = [
    ("default", {}),
    ("left_right_values", {"left": -1.0, "right": 9.0}),
    ("extrapolate", {"left": "extrapolate", "right": "extrapolate"}),
    ("period", {"period": 2.0}),
]


@pytest.mark.parametrize("kwargs", sweep([c[1] for c in INTERP], [c[0] for c in INTERP], False))
def test_interp_is_one_jitted_call_with_jaxs_values(kwargs: dict[str, Any]) -> None:
    x = np.linspace(-4.0, 4.0, 13, dtype=np.float32)
    xp = np.linspace(-3.0, 3.0, 6, dtype=np.float32)
    fp = xp**2
    got = np.asarray(to_numpy(lnp.interp(x, xp, fp, **kwargs)))
    np.testing.assert_allclose(got, jnp.interp(x, xp, fp, **kwargs), rtol=1e-6, atol=1e-6)
    jaxpr = lc.make_jaxpr(lambda a: lnp.interp(a, xp, fp, **kwargs))(x).jaxpr
    assert [e.primitive.name for e in jaxpr.eqns] == ["jit"]
    assert str(jaxpr.eqns[0].params["name"]) == "_interp"


def test_static_arguments_are_jaxs() -> None:
    assert lnp.tril.static_argnames == ("k",)
    assert lnp.diff.static_argnames == ("axis", "n")
    assert lnp.isclose.static_argnames == ("equal_nan",)
    assert lnp.diagonal.static_argnames == ("axis1", "axis2", "offset")
    assert lnp.nan_to_num.static_argnames == ()
    for name in ("nansum", "nanmean", "nanvar", "nanstd", "nanprod"):
        assert getattr(lnp, name).static_argnames == ("axis", "dtype", "keepdims"), name
    for name in ("quantile", "nanquantile", "percentile", "nanpercentile"):
        want: tuple[str, ...] = ("axis", "keepdims", "method", "overwrite_input")
        if name == "percentile":  # JAX's percentile also takes a static out_sharding
            want = ("axis", "keepdims", "method", "out_sharding", "overwrite_input")
        assert getattr(lnp, name).static_argnames == want, name
    assert lnp.median.static_argnames == ("axis", "keepdims", "overwrite_input")
    assert lnp.cross.static_argnames == ("axis", "axisa", "axisb", "axisc")
    assert lnp.trace.static_argnames == ("axis1", "axis2", "dtype")
    assert lnp.cov.static_argnames == ("bias", "ddof", "dtype", "rowvar")
    assert lnp.corrcoef.static_argnames == ("dtype", "rowvar")
    assert lnp.fmax.static_argnames == lnp.frexp.static_argnames == ()
    assert lnp.argpartition.static_argnames == lnp.partition.static_argnames == ("axis", "kth")
    assert lnp.gradient.static_argnames == ("axis", "edge_order")
    assert lnp.lexsort.static_argnames == lnp.unwrap.static_argnames == ("axis",)
    assert lnp.trapezoid.static_argnames == ("axis",)
    assert lnp.packbits.static_argnames == ("axis", "bitorder")
    assert lnp.unpackbits.static_argnames == ("axis", "bitorder", "count")
    assert lnp.polyder.static_argnames == lnp.polyint.static_argnames == ("m",)
    assert lnp.vander.static_argnames == ("N", "increasing")
    for name in ("bitwise_count", "matvec", "vecmat", "sort_complex", "poly", "polyadd"):
        assert getattr(lnp, name).static_argnames == (), name


@pytest.mark.parametrize(
    "call",
    [
        lambda n: n.tril(np.ones(3)),
        lambda n: n.triu(np.float32(1)),
        lambda n: n.diff(np.ones(3), n=-1),
        lambda n: n.diff(np.float32(1)),
        lambda n: n.diagonal(np.ones(3)),
        lambda n: n.rot90(np.ones(3)),
        lambda n: n.isclose([1.0], np.ones(1)),
        lambda n: n.nan_to_num([1.0]),
        lambda n: n.nansum([1.0]),
        lambda n: n.nanmax(np.ones(3), where=np.ones(3)),
        lambda n: n.nanvar(np.ones(3), out=np.ones(())),
        lambda n: n.quantile(np.ones(3), 0.5, method="middle"),
        lambda n: n.quantile(np.ones(3), np.ones((2, 2))),
        lambda n: n.median(np.ones(3), overwrite_input=True),
        lambda n: n.quantile(np.ones((2, 2)), 0.5, axis=(0, 0)),
        lambda n: n.cross(np.ones(4), np.ones(3)),
        lambda n: n.trace(np.ones((2, 2)), axis1=1, axis2=-1),
        lambda n: n.ldexp(np.ones(3), 1.5),
        lambda n: n.frexp(np.ones(3, np.complex64)),
        lambda n: n.cov(np.ones((2, 2, 2))),
        lambda n: n.cov(np.ones((2, 3)), fweights=np.ones(3)),
        lambda n: n.cov(np.ones((2, 3)), aweights=np.ones(2)),
        lambda n: n.iscomplex([1.0]),
        lambda n: n.ediff1d(np.ones(3), to_begin=[1.0]),
        lambda n: n.packbits(np.ones(3, np.float32)),
        lambda n: n.unpackbits(np.ones(3, np.int32)),
        lambda n: n.unpackbits(np.ones(3, np.uint8), bitorder="middle"),
        lambda n: n.unwrap(np.ones(3, np.complex64)),
        lambda n: n.partition(np.ones(3, np.complex64), 1),
        lambda n: n.lexsort(()),
        lambda n: n.gradient(np.ones(1)),
        lambda n: n.gradient(np.ones(3), np.ones(2)),
        lambda n: n.polyder(np.ones(3), -1),
        lambda n: n.polyint(np.ones(3), 2, k=np.ones(3)),
        lambda n: n.poly(np.ones((2, 3))),
        lambda n: n.vander(np.ones((2, 2))),
        lambda n: n.vander(np.ones(2), -1),
        lambda n: n.diag(np.ones((2, 2, 2))),
    ],
    ids=[
        "tril_1d",
        "triu_0d",
        "diff_negative",
        "diff_0d",
        "diagonal_1d",
        "rot90_1d",
        "isclose_list",
        "nan_to_num_list",
        "nansum_list",
        "nanmax_where_not_bool",
        "nanvar_out",
        "quantile_method",
        "quantile_q_rank",
        "median_overwrite",
        "quantile_repeated_axis",
        "cross_size",
        "trace_same_axes",
        "ldexp_float_exponent",
        "frexp_complex",
        "cov_3d",
        "cov_float_fweights",
        "cov_aweights_count",
        "iscomplex_list",
        "ediff1d_list_end",
        "packbits_float",
        "unpackbits_int",
        "unpackbits_bitorder",
        "unwrap_complex",
        "partition_complex",
        "lexsort_no_keys",
        "gradient_too_short",
        "gradient_spacing_length",
        "polyder_negative",
        "polyint_k_length",
        "poly_not_square",
        "vander_2d",
        "vander_negative_n",
        "diag_3d",
    ],
)
def test_errors_are_jaxs(call: Callable[[Any], Any]) -> None:
    with pytest.raises(Exception) as want:
        call(jnp)
    with pytest.raises(type(want.value)) as got:
        call(lnp)
    assert str(got.value) == str(want.value)


def test_unhashable_static_argument_is_jaxs_error() -> None:
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        jnp.rot90(np.ones((2, 2)), axes=[0, 1])
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        lnp.rot90(np.ones((2, 2)), axes=[0, 1])
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        jnp.gradient(np.ones((2, 2)), axis=[0, 1])
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        lnp.gradient(np.ones((2, 2)), axis=[0, 1])
