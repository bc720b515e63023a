"""Eager calls of the `jnp` functions JAX jits run as one cached XLA executable in Lamina too:
the value is JAX's, the function is traced once, and from the second call on the call goes
through the runtime's jit dispatcher rather than tracing again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina
import lamina.numpy as lnp
from lamina_core.numpy import _cumulative, _matrix_parts, _nan_reductions, _signal, _statistics
from lamina_core.transforms._jit import Jitted

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jnp = jax.numpy

_X = np.array([-np.inf, -2.5, -1.0, 0.0, np.nan, 0.5, 1.0, 3.0, np.inf], np.float32)
_M = np.arange(16, dtype=np.float32).reshape(4, 4) - 5.0
_U8 = np.array([3, 0, 255, 7, 1, 9, 4, 2, 1, 5], np.uint8)
_C = (_M[0] + 1j * _M[1]).astype(np.complex64)

Call = Callable[[Any, Any], Any]

CASES: list[tuple[str, str, Call, Any]] = [
    ("nan_to_num", "nan_to_num", lambda n, x: n.nan_to_num(x), _X),
    ("isclose", "isclose", lambda n, x: n.isclose(x, x[::-1], equal_nan=True), _X),
    ("allclose", "allclose", lambda n, x: n.allclose(x, x + 1e-9), _M),
    ("diff", "diff", lambda n, x: n.diff(x, axis=0), _M),
    ("tril", "tril", lambda n, x: n.tril(x, -1), _M),
    ("triu", "triu", lambda n, x: n.triu(x), _M),
    ("diagonal", "diagonal", lambda n, x: n.diagonal(x, 1), _M),
    ("kron", "kron", lambda n, x: n.kron(x[:2], x[:2, :2]), _M),
    ("rot90", "rot90", lambda n, x: n.rot90(x), _M),
    ("count_nonzero", "count_nonzero", lambda n, x: n.count_nonzero(x, axis=0), _M),
    ("nansum", "nansum", lambda n, x: n.nansum(x), _X),
    ("nanprod", "nanprod", lambda n, x: n.nanprod(x, axis=1), _M),
    ("nanmax", "nanmax", lambda n, x: n.nanmax(x), _X),
    ("nanmin", "nanmin", lambda n, x: n.nanmin(x, axis=0, keepdims=True), _M),
    ("nanmean", "nanmean", lambda n, x: n.nanmean(x), _X),
    ("nanvar", "nanvar", lambda n, x: n.nanvar(x, ddof=1), _X),
    ("nanstd", "nanstd", lambda n, x: n.nanstd(x, axis=1), _M),
    ("median", "median", lambda n, x: n.median(x), _X),
    ("nanmedian", "nanmedian", lambda n, x: n.nanmedian(x), _X),
    ("quantile", "quantile", lambda n, x: n.quantile(x, 0.3, axis=0), _M),
    ("nanquantile", "nanquantile", lambda n, x: n.nanquantile(x, 0.3), _X),
    ("percentile", "percentile", lambda n, x: n.percentile(x, 40.0, method="nearest"), _M),
    ("nanpercentile", "nanpercentile", lambda n, x: n.nanpercentile(x, 40.0), _X),
    ("cross", "cross", lambda n, x: n.cross(x[:, :3], x[:, 1:]), _M),
    ("trace", "trace", lambda n, x: n.trace(x, 1), _M),
    ("fmax", "fmax", lambda n, x: n.fmax(x, x[::-1]), _X),
    ("fmin", "fmin", lambda n, x: n.fmin(x, 0.5), _X),
    ("ldexp", "ldexp", lambda n, x: n.ldexp(x, 3), _X),
    ("modf", "modf", lambda n, x: n.modf(x)[0], _X),
    ("frexp", "frexp", lambda n, x: n.frexp(x)[1], _X),
    ("cov", "cov", lambda n, x: n.cov(x), _M),
    ("corrcoef", "corrcoef", lambda n, x: n.corrcoef(x), _M),
    ("append", "append", lambda n, x: n.append(x, x[:1], axis=0), _M),
    ("ediff1d", "ediff1d", lambda n, x: n.ediff1d(x, to_begin=x[:2]), _X),
    ("rollaxis", "rollaxis", lambda n, x: n.rollaxis(x, 1), _M),
    ("iscomplex", "iscomplex", lambda n, x: n.iscomplex(x), _X),
    ("isreal", "isreal", lambda n, x: n.isreal(x), _M),
    ("argpartition", "argpartition", lambda n, x: n.argpartition(x, 2), _M),
    ("partition", "partition", lambda n, x: n.partition(x, 1, axis=0), _M),
    ("bitwise_count", "bitwise_count", lambda n, x: n.bitwise_count(x), _U8),
    ("gradient", "gradient", lambda n, x: n.gradient(x, 0.5, axis=1), _M),
    ("lexsort", "lexsort", lambda n, x: n.lexsort(x), _M),
    ("matvec", "matvec", lambda n, x: n.matvec(x, x[0]), _M),
    ("vecmat", "vecmat", lambda n, x: n.vecmat(x[0], x), _M),
    ("packbits", "packbits", lambda n, x: n.packbits(x), _U8),
    ("unpackbits", "unpackbits", lambda n, x: n.unpackbits(x, count=75), _U8),
    ("sort_complex", "sort_complex", lambda n, x: n.sort_complex(x), _C),
    ("unwrap", "unwrap", lambda n, x: n.unwrap(x * 2), _M),
    ("poly", "poly", lambda n, x: n.poly(x[0]), _M),
    ("polyadd", "polyadd", lambda n, x: n.polyadd(x[0], x[1, :2]), _M),
    ("polysub", "polysub", lambda n, x: n.polysub(x[0, :2], x[1]), _M),
    ("polyder", "polyder", lambda n, x: n.polyder(x[0], 2), _M),
    ("polyint", "polyint", lambda n, x: n.polyint(x[0], k=2.0), _M),
    ("trapezoid", "trapezoid", lambda n, x: n.trapezoid(x, axis=0), _M),
    ("vander", "vander", lambda n, x: n.vander(x[0], 3), _M),
]


@pytest.mark.parametrize(("name", "call", "x"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_eager_call_is_jaxs_value_and_traces_once(name: str, call: Call, x: Any) -> None:
    jitted = getattr(lnp, name)
    assert isinstance(jitted, Jitted)
    device_x = lamina.device_put(x)
    want = np.asarray(call(jnp, x))
    before = len(jitted._cache)
    results = [np.asarray(call(lnp, device_x)) for _ in range(3)]
    for got in results:
        assert got.dtype == want.dtype
        # Summation orders of the reductions may differ by an ulp from XLA's.
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=0)
    # At most one new trace for this signature (none if an earlier test made it), and the
    # dispatcher serves the repeated calls.
    assert len(jitted._cache) - before in (0, 1)
    assert jitted._toplevel is not None


def test_interp_eager_matches_jax_and_reuses_its_jit() -> None:
    x = lamina.device_put(np.linspace(-4.0, 4.0, 13, dtype=np.float32))
    xp = np.linspace(-3.0, 3.0, 6, dtype=np.float32)
    want = np.asarray(jnp.interp(np.asarray(x), xp, xp * 2))
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(lnp.interp(x, xp, xp * 2)), want, rtol=1e-6)
    jitted = _signal._interp_jits[("left", "right", "period")]
    assert jitted._toplevel is not None


# Functions that are not jitted themselves but, as in JAX, check their arguments and call one
# jitted helper: (id, the helper, call, operand).
HELPER_CASES: list[tuple[str, Jitted, Call, Any]] = [
    ("ptp", _nan_reductions._ptp, lambda n, x: n.ptp(x, axis=1), _M),
    ("nanargmax", _statistics._nanargmax, lambda n, x: n.nanargmax(x), _X),
    ("nanargmin", _statistics._nanargmin, lambda n, x: n.nanargmin(x, axis=0), _M),
    ("nancumsum", _cumulative._nancumsum_jit, lambda n, x: n.nancumsum(x), _X),
    ("nancumprod", _cumulative._nancumprod_jit, lambda n, x: n.nancumprod(x, axis=1), _M),
    ("diag", _matrix_parts._diag, lambda n, x: n.diag(x[0], 1), _M),
    ("diag_2d", _matrix_parts._diag, lambda n, x: n.diag(x, -1), _M),
]


@pytest.mark.parametrize(
    ("jitted", "call", "x"), [c[1:] for c in HELPER_CASES], ids=[c[0] for c in HELPER_CASES]
)
def test_eager_call_through_jitted_helper(jitted: Jitted, call: Call, x: Any) -> None:
    device_x = lamina.device_put(x)
    want = np.asarray(call(jnp, x))
    before = len(jitted._cache)
    for _ in range(3):
        got = np.asarray(call(lnp, device_x))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=0)
    assert len(jitted._cache) - before in (0, 1)
    assert jitted._toplevel is not None


def test_average_eager_matches_jax() -> None:
    x = lamina.device_put(_M)
    for kwargs in ({}, {"axis": 1, "weights": _M[0], "returned": True}):
        want = jnp.average(_M, **kwargs)
        for _ in range(2):
            got = lnp.average(x, **kwargs)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6)
