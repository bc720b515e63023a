"""`jax.numpy` functions added for breadth, against JAX 0.10.2: values, dtypes and shapes on
ordinary and edge inputs (NaNs, infinities, empty, integer and complex arrays), and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
import pytest

import lamina_core as lc
import lamina_core.numpy as lnp
from lamina_core.testing import jitted, sweep

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jnp = jax.numpy

_X = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [-2.0, np.inf, 0.0]], np.float32)
_M = np.arange(12.0, dtype=np.float32).reshape(3, 4)
_T = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
_A = np.array([1.0, np.inf, -np.inf, np.nan, 1e-9, 3.0], np.float32)
_B = np.array([1.0 + 1e-6, np.inf, np.inf, np.nan, 0.0, 3.1], np.float32)
_EDGES = np.array([0.0, 1.0, 2.5, 4.0, 10.0], np.float32)


def _sweep(cases: list[tuple[str, Callable[[Any], Any]]]) -> list[Any]:
    """Each function's first case in the default run, its other cases with the slow tests; a
    case's function is the first name its lambda uses (past a wrapping `tuple`)."""
    called = {
        name: next(n for n in cast(Any, call).__code__.co_names if n != "tuple")
        for name, call in cases
    }
    return sweep(cases, list(called), kind=called.__getitem__)


CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("isclose", lambda n: n.isclose(_A, _B)),
    ("isclose_equal_nan", lambda n: n.isclose(_A, _B, equal_nan=True)),
    ("isclose_tolerances", lambda n: n.isclose(_A, _B, rtol=0.1, atol=0.01)),
    ("isclose_ints", lambda n: n.isclose(np.arange(3), np.array([0, 2, 2]))),
    ("isclose_complex", lambda n: n.isclose(_A + 1j, _B + 1j)),
    ("allclose", lambda n: n.allclose(_M, _M + 1e-7)),
    ("array_equal", lambda n: n.array_equal(_A, _A)),
    ("array_equal_nan", lambda n: n.array_equal(_A, _A, equal_nan=True)),
    ("array_equal_shapes", lambda n: n.array_equal(_M, _M[:2])),
    ("array_equiv", lambda n: n.array_equiv(np.ones(3), np.ones((2, 3)))),
    ("fmax", lambda n: n.fmax(_A, _B)),
    ("fmin", lambda n: n.fmin(_A, _B)),
    ("tri", lambda n: n.tri(3, 5, 1)),
    ("tri_int", lambda n: n.tri(4, dtype=np.int32, k=-1)),
    ("tril", lambda n: n.tril(_T, 1)),
    ("triu", lambda n: n.triu(_M, -1)),
    ("diagonal", lambda n: n.diagonal(_T, 1, 1, 2)),
    ("diagonal_below", lambda n: n.diagonal(_M, -1)),
    ("diag_of_vector", lambda n: n.diag(np.array([1.0, 2.0, 3.0], np.float32), 1)),
    ("diag_of_matrix", lambda n: n.diag(_M, -2)),
    ("trace", lambda n: n.trace(_T, 0, 0, 2)),
    ("trace_int", lambda n: n.trace(np.arange(9).reshape(3, 3))),
    ("diff", lambda n: n.diff(_M, 2)),
    ("diff_prepend", lambda n: n.diff(_M, axis=0, prepend=0.0)),
    ("diff_bool", lambda n: n.diff(np.array([True, False, False, True]))),
    ("diff_append", lambda n: n.diff(np.arange(5), append=np.array([9, 10]))),
    ("ediff1d", lambda n: n.ediff1d(_M, to_end=np.array([7.0]), to_begin=0.0)),
    ("nansum", lambda n: n.nansum(_X, axis=1)),
    ("nanprod", lambda n: n.nanprod(_X, axis=0)),
    ("nanmax", lambda n: n.nanmax(_X, axis=1)),
    ("nanmin_keepdims", lambda n: n.nanmin(_X, axis=0, keepdims=True)),
    ("nanmean", lambda n: n.nanmean(_X, axis=1)),
    ("nanmean_int", lambda n: n.nanmean(np.arange(6).reshape(2, 3), axis=0)),
    ("count_nonzero", lambda n: n.count_nonzero(np.array([[0, 1, 2], [0, 0, 3]]), axis=0)),
    ("ptp", lambda n: n.ptp(np.arange(12).reshape(3, 4), axis=1)),
    ("nan_to_num", lambda n: n.nan_to_num(_X)),
    ("nan_to_num_values", lambda n: n.nan_to_num(_X, nan=-1.0, posinf=9.0)),
    (
        "nan_to_num_complex",
        lambda n: n.nan_to_num(np.array([complex(np.nan, np.inf)], np.complex64)),
    ),
    ("digitize", lambda n: n.digitize(np.array([0.2, 6.4, 3.0, 1.6], np.float32), _EDGES)),
    (
        "digitize_right",
        lambda n: n.digitize(np.array([1.0, 2.5, 11.0], np.float32), _EDGES, right=True),
    ),
    ("digitize_decreasing", lambda n: n.digitize(np.array([0.2, 6.4], np.float32), _EDGES[::-1])),
    ("logspace", lambda n: n.logspace(0, 2, 5)),
    ("logspace_base", lambda n: n.logspace(1.0, 3.0, 4, endpoint=False, base=2.0)),
    ("geomspace", lambda n: n.geomspace(1, 1000, 4)),
    ("geomspace_negative", lambda n: n.geomspace(-1.0, -100.0, 3)),
]


@pytest.mark.parametrize(("name", "call"), _sweep(CASES))
def test_values_are_jaxs(name: str, call: Callable[[Any], Any]) -> None:
    got, want = call(lnp), jitted(jax, lambda: call(jnp), ())()  # eager if JAX can't trace
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


CASES_SHAPES: list[tuple[str, Callable[[Any], Any]]] = [
    ("iscomplex", lambda n: n.iscomplex(np.array([1 + 1j, 2 + 0j, 3], np.complex64))),
    ("isreal", lambda n: n.isreal(np.array([1 + 1j, 2 + 0j], np.complex64))),
    ("iscomplex_of_reals", lambda n: n.iscomplex(_M)),
    ("rot90", lambda n: n.rot90(_M)),
    ("rot90_three_times", lambda n: n.rot90(_T, 3, (0, 2))),
    ("rot90_twice_back", lambda n: n.rot90(_M, -2)),
    ("permute_dims", lambda n: n.permute_dims(_T, (2, 0, 1))),
    ("matrix_transpose", lambda n: n.matrix_transpose(_T)),
    ("rollaxis", lambda n: n.rollaxis(_T, 2)),
    ("rollaxis_start", lambda n: n.rollaxis(_T, 0, 2)),
    ("append", lambda n: n.append(_M, _M)),
    ("append_axis", lambda n: n.append(_M, _M[:1], axis=0)),
    ("column_stack", lambda n: n.column_stack([np.arange(3.0), np.ones((3, 2))])),
    ("kron", lambda n: n.kron(np.eye(2, dtype=np.float32), _M)),
    ("kron_1d", lambda n: n.kron(np.arange(3), np.arange(1, 3))),
    ("cross", lambda n: n.cross(np.arange(6.0).reshape(2, 3), np.ones((2, 3)))),
    ("cross_2d", lambda n: n.cross(np.array([1.0, 2.0]), np.array([3.0, 4.0]))),
    ("vander", lambda n: n.vander(np.arange(1.0, 4.0))),
    ("vander_increasing", lambda n: n.vander(np.arange(3), 4, increasing=True)),
    ("select", lambda n: n.select([_M > 6, _M > 2], [_M, -_M], 0.5)),
    ("sinc", lambda n: n.sinc(np.array([0.0, 0.5, 1.5, -2.0], np.float32))),
]


@pytest.mark.parametrize(("name", "call"), _sweep(CASES_SHAPES))
def test_shape_functions_are_jaxs(name: str, call: Callable[[Any], Any]) -> None:
    test_values_are_jaxs(name, call)


def test_predicates_and_sizes_are_jaxs() -> None:
    for n_ in (lnp, jnp):
        assert n_.ndim(_T) == 3 and n_.shape(_M) == (3, 4)
        assert n_.size(_T, 1) == 3 and n_.size(_T) == 24
    for value in (1.0, _M, np.float32(1), np.array(1.0), "a"):
        assert lnp.isscalar(value) == jnp.isscalar(value)
    for value in (_M, _M + 1j):
        assert lnp.iscomplexobj(value) == jnp.iscomplexobj(value)
        assert lnp.isrealobj(value) == jnp.isrealobj(value)


SPLITS: list[tuple[str, Callable[[Any], Any]]] = [
    ("unstack", lambda n: n.unstack(_M, axis=1)),
    ("hsplit", lambda n: n.hsplit(_M, 2)),
    ("vsplit", lambda n: n.vsplit(_M, [1])),
    ("dsplit", lambda n: n.dsplit(_T, 2)),
    ("hsplit_1d", lambda n: n.hsplit(np.arange(6.0), 3)),
    ("modf", lambda n: n.modf(np.array([-1.5, 2.25, 3.0], np.float32))),
]


GRIDS: list[tuple[str, Callable[[Any], Any]]] = [
    ("xy", lambda n: n.meshgrid(np.arange(3.0), np.arange(4.0))),
    ("ij", lambda n: n.meshgrid(np.arange(3.0), np.arange(4.0), np.arange(2), indexing="ij")),
    ("sparse", lambda n: n.meshgrid(np.arange(3.0), np.arange(4.0), sparse=True)),
]


@pytest.mark.parametrize(("name", "call"), _sweep(GRIDS + SPLITS))
def test_meshgrid_is_jaxs(name: str, call: Callable[[Any], Any]) -> None:
    got, want = call(lnp), jitted(jax, lambda: call(jnp), ())()  # eager if JAX can't trace
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


ERRORS: list[Callable[[Any], Any]] = [
    lambda n: n.rot90(np.ones(3)),
    lambda n: n.vander(np.ones((2, 2))),
    lambda n: n.select([True], [1, 2]),
    lambda n: n.tril(np.ones(3)),
    lambda n: n.diag(np.ones((2, 2, 2))),
    lambda n: n.diff(np.ones(3), -1),
    lambda n: n.meshgrid(np.ones((2, 2))),
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_are_jaxs(call: Callable[[Any], Any]) -> None:
    with pytest.raises(ValueError) as expected:
        call(jnp)
    with pytest.raises(ValueError) as got:
        call(lnp)
    assert str(got.value) == str(expected.value)


def test_under_jit_and_grad() -> None:
    f = lc.jit(lambda x: lnp.nansum(lnp.tril(x)) + lnp.trace(x))
    np.testing.assert_allclose(f(_M), jnp.nansum(jnp.tril(_M)) + jnp.trace(_M))
    g = lc.grad(lambda x: lnp.nanmean(lnp.diff(x) ** 2))(np.array([1.0, 4.0, 2.0], np.float32))
    want = jax.grad(lambda x: jnp.nanmean(jnp.diff(x) ** 2))(np.array([1.0, 4.0, 2.0], np.float32))
    np.testing.assert_allclose(g, want, rtol=1e-6)


_RNG = np.random.default_rng(0)
_Q = _RNG.standard_normal((4, 5, 6)).astype(np.float32)
_QN = _Q.copy()
_QN[0, 1, 2] = np.nan
_QN[1, :, 3] = np.nan
_LEVELS = np.array([0.1, 0.5, 0.9], np.float32)
QUANTILES: list[tuple[str, Callable[[Any], Any]]] = [
    *[
        (f"quantile_{m}", lambda n, m=m: n.quantile(_Q, 0.3, axis=1, method=m))
        for m in ("linear", "lower", "higher", "midpoint", "nearest")
    ],
    *[
        (f"quantile_levels_{m}", lambda n, m=m: n.quantile(_Q, _LEVELS, (0, 2), method=m))
        for m in ("linear", "nearest")
    ],
    ("nanquantile", lambda n: n.nanquantile(_QN, 0.7, axis=2)),
    ("median", lambda n: n.median(_Q)),
    ("median_keepdims", lambda n: n.median(_Q, axis=0, keepdims=True)),
    ("median_with_nans", lambda n: n.median(_QN, axis=2)),
    ("nanmedian", lambda n: n.nanmedian(_QN, axis=1)),
    ("percentile", lambda n: n.percentile(_Q, 25.0, axis=-1)),
    ("nanpercentile", lambda n: n.nanpercentile(_QN, np.array([10.0, 90.0]), 1, keepdims=True)),
    ("quantile_ints", lambda n: n.quantile(np.arange(10), 0.33)),
]


@pytest.mark.parametrize(("name", "call"), _sweep(QUANTILES))
def test_quantiles_are_jaxs(name: str, call: Callable[[Any], Any]) -> None:
    got, want = call(lnp), jax.jit(lambda: call(jnp))()  # JAX's ops under one compile
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)


def test_quantile_errors() -> None:
    with pytest.raises(ValueError, match="method can only be"):
        lnp.quantile(_Q, 0.5, method="closest")
    with pytest.raises(ValueError, match="complex input"):
        lnp.median(_Q + 1j)
    with pytest.raises(ValueError, match="rank <= 1"):
        lnp.quantile(_Q, np.ones((2, 2)))


_S = _RNG.standard_normal((3, 5)).astype(np.float32)
_SN = _S.copy()
_SN[0, 1] = np.nan
_SN[2, :] = np.nan
_W = _RNG.random(5).astype(np.float32)
STATS: list[tuple[str, Callable[[Any], Any]]] = [
    ("average", lambda n: n.average(_S)),
    ("average_weights", lambda n: n.average(_S, axis=1, weights=_W)),
    ("average_full_weights", lambda n: n.average(_S, weights=np.abs(_S))),
    ("nanvar", lambda n: n.nanvar(_SN, axis=1)),
    ("nanstd_ddof", lambda n: n.nanstd(_SN, axis=0, ddof=1)),
    ("nanvar_all", lambda n: n.nanvar(_SN)),
    ("nanargmax", lambda n: n.nanargmax(_SN[:2], axis=1)),
    ("nanargmin", lambda n: n.nanargmin(_SN[:2])),
    ("nancumsum", lambda n: n.nancumsum(_SN, axis=1)),
    ("nancumprod", lambda n: n.nancumprod(_SN[:2])),
    ("cumulative_sum", lambda n: n.cumulative_sum(_S, axis=1, include_initial=True)),
    ("cumulative_prod", lambda n: n.cumulative_prod(np.arange(1, 5))),
    ("trapezoid", lambda n: n.trapezoid(_S)),
    ("trapezoid_x", lambda n: n.trapezoid(_S, np.linspace(0, 1, 5), axis=1)),
    ("trapezoid_dx", lambda n: n.trapezoid(_S, dx=0.5, axis=0)),
    ("cov", lambda n: n.cov(_S)),
    ("cov_columns_biased", lambda n: n.cov(_S, rowvar=False, bias=True)),
    ("cov_two", lambda n: n.cov(_S[0], _S[1])),
    ("cov_one", lambda n: n.cov(_S[0])),
    ("corrcoef", lambda n: n.corrcoef(_S)),
    ("corrcoef_two", lambda n: n.corrcoef(_S[0], _S[1])),
]


@pytest.mark.parametrize(("name", "call"), _sweep(STATS))
def test_statistics_are_jaxs(name: str, call: Callable[[Any], Any]) -> None:
    got, want = call(lnp), jax.jit(lambda: call(jnp))()  # JAX's ops under one compile
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


def test_average_returned_and_errors() -> None:
    got = lnp.average(_S, axis=0, returned=True)
    want = jnp.average(_S, axis=0, returned=True)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    with pytest.raises(ValueError, match="Axis must be specified"):
        lnp.average(_S, weights=_W)
    with pytest.raises(ValueError, match="non-scalar"):
        lnp.cumulative_sum(np.float32(1.0))


_SQ = np.arange(9.0, dtype=np.float32).reshape(3, 3)
_TWO = (np.array([1, 2]), np.array([3, 0]))
HELPERS: list[tuple[str, Callable[[Any], Any]]] = [
    ("indices", lambda n: n.indices((2, 3))),
    ("indices_sparse", lambda n: n.indices((2, 3), sparse=True)),
    ("indices_dtype", lambda n: n.indices((2, 2), dtype=np.int16)),
    ("tril_indices", lambda n: n.tril_indices(3)),
    ("triu_indices", lambda n: n.triu_indices(3, 1, 4)),
    ("tril_indices_from", lambda n: n.tril_indices_from(_M, -1)),
    ("triu_indices_from", lambda n: n.triu_indices_from(_M)),
    ("diag_indices", lambda n: n.diag_indices(3, 3)),
    ("diag_indices_from", lambda n: n.diag_indices_from(_SQ)),
    ("unravel_index", lambda n: n.unravel_index(np.array([0, 5, 11, -1, 20]), (3, 4))),
]
ARRAYS: list[tuple[str, Callable[[Any], Any]]] = [
    ("diagflat", lambda n: n.diagflat(np.array([[1.0, 2.0], [3.0, 4.0]]), 1)),
    ("fill_diagonal", lambda n: n.fill_diagonal(_M, 5.0, inplace=False)),
    ("fill_diagonal_values", lambda n: n.fill_diagonal(_SQ, np.array([7.0, 8.0]), inplace=False)),
    ("ravel_multi_index", lambda n: n.ravel_multi_index(_TWO, (3, 4))),
    ("ravel_multi_index_f", lambda n: n.ravel_multi_index(_TWO, (3, 4), order="F")),
    ("ravel_multi_index_clip", lambda n: n.ravel_multi_index(_TWO, (2, 2), mode="clip")),
    ("bartlett", lambda n: n.bartlett(5)),
    ("blackman", lambda n: n.blackman(6)),
    ("hamming", lambda n: n.hamming(7)),
    ("hanning", lambda n: n.hanning(4)),
    ("hamming_one", lambda n: n.hamming(1)),
    ("polyadd", lambda n: n.polyadd(np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0]))),
    ("polysub", lambda n: n.polysub(np.array([1, 2, 3]), np.array([1]))),
    ("polyder", lambda n: n.polyder(np.array([1.0, 2.0, 3.0, 4.0]), 2)),
    ("polyint", lambda n: n.polyint(np.array([3.0, 2.0, 1.0]))),
    ("polyint_constants", lambda n: n.polyint(np.array([1.0, 1.0]), 2, k=np.array([1.0, 2.0]))),
    ("copy", lambda n: n.copy(_M)),
    ("concat", lambda n: n.concat([_M, _M], axis=1)),
    ("ldexp", lambda n: n.ldexp(np.array([1.0, 2.5], np.float32), np.array([2, -1]))),
]


@pytest.mark.parametrize(("name", "call"), _sweep(HELPERS))
def test_index_helpers_are_jaxs(name: str, call: Callable[[Any], Any]) -> None:
    got, want = call(lnp), jitted(jax, lambda: call(jnp), ())()  # eager if JAX can't trace
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize(("name", "call"), _sweep(ARRAYS))
def test_array_helpers_are_jaxs(name: str, call: Callable[[Any], Any]) -> None:
    test_values_are_jaxs(name, call)


def test_dtype_predicates_are_jaxs() -> None:
    kinds: list[Any] = ["bool", "integral", "real floating", ("complex floating", "bool")]
    for kind in [*kinds, "numeric", "signed integer", "unsigned integer"]:
        for dtype in (np.int32, np.float32, np.bool_, np.complex64, np.uint8):
            assert lnp.isdtype(dtype, kind) == jnp.isdtype(dtype, kind)
    assert lnp.can_cast(np.int32, np.float32) == jnp.can_cast(np.int32, np.float32)
    assert lnp.can_cast(np.float32, np.int32) == jnp.can_cast(np.float32, np.int32)
    assert lnp.iterable([1]) and not lnp.iterable(1)
    with pytest.raises(NotImplementedError, match="inplace=False"):
        lnp.fill_diagonal(_M, 1.0)


_NZ = np.array([[0, 3, 0], [1, 0, 2]], np.int32)
_SA = np.array([5, 1, 3, 3, 7, 1], np.int32)
_SB = np.array([3, 9, 1, 8, 8], np.int32)
_DUP = np.array([3.0, 1.0, np.nan, 1.0, 2.0, np.nan, 3.0], np.float32)
SELECTIONS: list[tuple[str, Callable[[Any], Any]]] = [
    ("nonzero", lambda n: n.nonzero(_NZ)),
    ("nonzero_size", lambda n: n.nonzero(_NZ, size=5)),
    ("nonzero_fill", lambda n: n.nonzero(_NZ, size=5, fill_value=-1)),
    ("nonzero_truncated", lambda n: n.nonzero(_NZ, size=2)),
    ("flatnonzero", lambda n: n.flatnonzero(_NZ)),
    ("argwhere", lambda n: n.argwhere(_NZ)),
    ("argwhere_size", lambda n: n.argwhere(_NZ, size=4, fill_value=9)),
    ("unique", lambda n: n.unique(_DUP)),
    ("unique_ints", lambda n: n.unique(_NZ)),
    ("unique_everything", lambda n: n.unique(_DUP, True, True, True)),
    ("unique_size", lambda n: n.unique(_DUP, size=6)),
    ("unique_size_fill", lambda n: n.unique(_DUP, size=6, fill_value=-1.0)),
    ("unique_truncated", lambda n: n.unique(_DUP, size=2, return_counts=True)),
    ("unique_nans_distinct", lambda n: n.unique(_DUP, equal_nan=False)),
    ("unique_values", lambda n: n.unique_values(_DUP)),
    ("unique_counts", lambda n: tuple(n.unique_counts(_NZ))),
    ("unique_inverse", lambda n: tuple(n.unique_inverse(_NZ))),
    ("unique_all", lambda n: tuple(n.unique_all(_DUP))),
    ("isin", lambda n: n.isin(_NZ, np.array([1, 2]))),
    ("isin_invert", lambda n: n.isin(_DUP, np.array([1.0, np.nan]), invert=True)),
    ("union1d", lambda n: n.union1d(_SA, _SB)),
    ("union1d_size", lambda n: n.union1d(_SA, _SB, size=9, fill_value=-1)),
    ("setdiff1d", lambda n: n.setdiff1d(_SA, _SB)),
    ("setdiff1d_size", lambda n: n.setdiff1d(_SA, _SB, size=4, fill_value=0)),
    ("intersect1d", lambda n: n.intersect1d(_SA, _SB)),
    ("intersect1d_indices", lambda n: n.intersect1d(_SA, _SB, return_indices=True)),
    ("intersect1d_size", lambda n: n.intersect1d(_SA, _SB, size=3, fill_value=-2)),
    ("setxor1d", lambda n: n.setxor1d(_SA, _SB)),
    ("setxor1d_size", lambda n: n.setxor1d(_SA, _SB, size=6, fill_value=0)),
]


@pytest.mark.parametrize(("name", "call"), _sweep(SELECTIONS))
def test_selections_are_jaxs(name: str, call: Callable[[Any], Any]) -> None:
    test_index_helpers_are_jaxs(name, call)


def test_selections_under_jit_need_a_size() -> None:
    f = lc.jit(lambda x: lnp.unique(x, size=4, fill_value=0.0, return_counts=True))
    got, want = f(_DUP), jnp.unique(_DUP, size=4, fill_value=0.0, return_counts=True)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    with pytest.raises(lc.ConcretizationTypeError, match=r"size argument of jnp\.nonzero"):
        lc.jit(lnp.nonzero)(_NZ)


def test_select_prints_as_jax() -> None:
    # JAX 0.10.2 stacks the conditions behind an all-False row and picks with argmax/select_n.
    x = np.arange(5.0, dtype=np.float32)

    def make(n: Any) -> Callable[[Any], Any]:
        return lambda x: n.select([x < 1, x > 3], [x.astype(int), x * 2], 1)

    assert str(lc.make_jaxpr(make(lnp))(x)) == str(jax.make_jaxpr(make(jnp))(x))
    np.testing.assert_array_equal(np.asarray(make(lnp)(x)), np.asarray(make(jnp)(x)))
