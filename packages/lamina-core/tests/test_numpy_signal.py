"""`convolve`, `correlate`, `interp`, `bincount` and the histograms against JAX 0.10.2: values,
dtypes, shapes and result structure on ordinary and edge inputs, errors, and under `jit`,
`grad` and `vmap`."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core.numpy import _histograms as lnp_histograms
from lamina_core.numpy import _signal as lnp_signal
from lamina_core.testing import Oracle, sweep
from lamina_core.trace._values import to_numpy

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jnp = jax.numpy

lnp: Any = SimpleNamespace(
    **{name: getattr(m, name) for m in (lnp_signal, lnp_histograms) for name in m.__all__}
)

Call = Callable[[Any], Any]

_A = np.array([1, 2, 3, 2, 1])
_V = np.array([4, 1, 2])
_F6 = np.array([0.5, -1.0, 2.0, 3.5, 0.0, 1.25], np.float32)
_F4 = np.array([1.0, -2.0, 0.5, 4.0], np.float32)
_C3 = np.array([3 + 1j, 2, 4 - 3j], np.complex64)
_C4 = np.array([1, 2 - 3j, 4 + 5j, 2j], np.complex64)
_MODES = ("full", "same", "valid")


def _both_ways(name: str, a: Any, v: Any) -> list[tuple[str, Call]]:
    """`name` of `(a, v)` and of `(v, a)` in each mode (the longer input may come either first),
    ids ending in the operands' dtype."""

    def call(p: Any, q: Any, mode: str) -> Call:
        return lambda n: getattr(n, name)(p, q, mode)

    dtype = np.result_type(a, v).name
    cases: list[tuple[str, Call]] = []
    for mode in _MODES:
        cases.append((f"{name}_{mode}_{dtype}", call(a, v, mode)))
        cases.append((f"{name}_{mode}_swapped_{dtype}", call(v, a, mode)))
    return cases


def _convolution_kind(case_id: str) -> str:
    """Every mode and order of the float32 convolutions runs by default; of the integer and
    complex ones (other dtypes through the same kernel, complex conjugated by `correlate`) the
    first of each function; the rest with the slow tests."""
    name, dtype = case_id.split("_")[0], case_id.rsplit("_", 1)[-1]
    return name + dtype if dtype in ("int64", "complex64") else case_id


CONVOLUTIONS: list[tuple[str, Call]] = [
    *_both_ways("convolve", _F6, _F4),
    *_both_ways("correlate", _F6, _F4),
    *_both_ways("convolve", _A, _V),
    *_both_ways("correlate", _A, _V),
    *_both_ways("convolve", _C3, _C4),
    *_both_ways("correlate", _C3, _C4),
    ("convolve_default_mode", lambda n: n.convolve(_F6, _F4)),
    ("correlate_default_mode", lambda n: n.correlate(_F6, _F4)),
    ("correlate_real_with_complex", lambda n: n.correlate(_F6, _C3, "full")),
    ("convolve_length_one", lambda n: n.convolve(np.ones(1, np.float32), _F4, "same")),
    ("convolve_equal_lengths", lambda n: n.correlate(_F4, _F4[::-1], "same")),
    ("convolve_float16", lambda n: n.convolve(_F6.astype(np.float16), _F4.astype(np.float16))),
    ("convolve_float64_input", lambda n: n.convolve(_F6.astype(np.float64), _A)),
    ("convolve_bool", lambda n: n.convolve(np.array([True, False]), np.array([True, True]))),
    ("convolve_int_preferred_int", lambda n: n.convolve(_A, _V, preferred_element_type=np.int32)),
    (
        "convolve_int8_preferred_int32",
        lambda n: n.correlate(
            _A.astype(np.int8), _V.astype(np.int8), "full", preferred_element_type=np.int32
        ),
    ),
    (
        "convolve_int_preferred_float",
        lambda n: n.convolve(_A, _V, "same", preferred_element_type=np.float32),
    ),
    ("convolve_precision", lambda n: n.convolve(_F6, _F4, precision="highest")),
]

_XP = np.array([0.0, 1.0, 2.5, 4.0], np.float32)
_FP = np.array([1.0, -1.0, 3.0, 0.0], np.float32)
_X = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 2.5, 3.9, 4.0, 5.0, np.nan], np.float32)
INTERPOLATIONS: list[tuple[str, Call]] = [
    ("interp", lambda n: n.interp(_X, _XP, _FP)),
    ("interp_left_right", lambda n: n.interp(_X, _XP, _FP, left=-9, right=9.5)),
    ("interp_left_only", lambda n: n.interp(_X, _XP, _FP, left=np.float32(7.0))),
    (
        "interp_extrapolate",
        lambda n: n.interp(_X, _XP, _FP, left="extrapolate", right="extrapolate"),
    ),
    ("interp_extrapolate_right", lambda n: n.interp(_X, _XP, _FP, right="extrapolate")),
    (
        "interp_period_unsorted",
        lambda n: n.interp(_X, np.array([3.0, 0.5, 1.5, 2.0], np.float32), _FP, period=-2.0),
    ),
    ("interp_period_int", lambda n: n.interp(_X, _XP, _FP, period=3)),
    ("interp_ints", lambda n: n.interp(np.arange(6), np.arange(0, 10, 2), np.arange(5))),
    ("interp_scalar", lambda n: n.interp(1.5, np.arange(3), np.arange(3))),
    ("interp_complex_fp", lambda n: n.interp(_X, _XP, _FP + 1j * _FP, left=2j)),
    ("interp_repeated_xp", lambda n: n.interp(_X, np.array([0.0, 1.0, 1.0, 2.0]), _FP)),
    ("interp_one_point", lambda n: n.interp(_X, np.array([1.0]), np.array([3.0]))),
    (
        "interp_float16",
        lambda n: n.interp(_X.astype(np.float16), _XP.astype(np.float16), _FP.astype(np.float16)),
    ),
    ("interp_mixed", lambda n: n.interp(_X.astype(np.float16), _XP.astype(np.float16), _FP)),
    ("interp_2d_x", lambda n: n.interp(_X.reshape(2, 5), _XP, _FP)),
]

_H = np.array([1.0, 2.0, 3.0, 10.0, 11.0, 15.0, 19.0, 25.0], np.float32)
_IX = np.array([1, 3, -1, 3, 0, 7])
_S = np.stack([_H, _H[::-1], np.arange(8.0, dtype=np.float32)], axis=1)
COUNTS: list[tuple[str, Call]] = [
    ("bincount", lambda n: n.bincount(_IX)),
    ("bincount_weights", lambda n: n.bincount(_IX, np.arange(6.0))),
    ("bincount_minlength", lambda n: n.bincount(_IX, minlength=10)),
    ("bincount_length_drops", lambda n: n.bincount(_IX, length=4)),
    ("bincount_bool", lambda n: n.bincount(np.array([True, False, True]))),
    ("bincount_uint8", lambda n: n.bincount(np.array([1, 2], np.uint8))),
    ("bincount_empty", lambda n: n.bincount(np.array([], np.int32))),
    ("bincount_all_negative", lambda n: n.bincount(np.array([-3, -1], np.int32))),
    ("bincount_int8_weights", lambda n: n.bincount(_IX[:2], np.array([1, 2], np.int8))),
    ("bincount_complex_weights", lambda n: n.bincount(_IX[:2], np.array([1, 2j]))),
    ("histogram", lambda n: n.histogram(_H)),
    ("histogram_ints", lambda n: n.histogram(np.arange(5))),
    ("histogram_edges", lambda n: n.histogram(_H, bins=np.array([0, 10, 20, 30]))),
    ("histogram_float_edges", lambda n: n.histogram(_H, bins=np.array([0.0, 2.5, 11.0, 19.0]))),
    ("histogram_range", lambda n: n.histogram(_H, bins=4, range=(0, 32))),
    ("histogram_narrow_range", lambda n: n.histogram(_H, bins=4, range=(5, 12))),
    ("histogram_weights", lambda n: n.histogram(_H, bins=4, weights=np.arange(8.0))),
    ("histogram_density", lambda n: n.histogram(_H, bins=4, density=True)),
    (
        "histogram_weights_density",
        lambda n: n.histogram(_H, np.array([0, 10, 20, 30]), weights=np.arange(8), density=True),
    ),
    ("histogram_2d_input", lambda n: n.histogram(_H.reshape(2, 4), bins=3)),
    ("histogram_constant", lambda n: n.histogram(np.ones(4), bins=3)),
    ("histogram_nan", lambda n: n.histogram(np.array([1.0, np.nan, 3.0]), bins=3, range=(0, 4))),
    ("histogram_bin_edges", lambda n: n.histogram_bin_edges(_H, bins=5)),
    ("histogram_bin_edges_0d_bins", lambda n: n.histogram_bin_edges(np.arange(3), np.array(3))),
    ("histogram_bin_edges_f16", lambda n: n.histogram_bin_edges(np.arange(3, dtype="f2"), 3)),
    ("histogram_bin_edges_constant", lambda n: n.histogram_bin_edges(np.ones(3), bins=3)),
    ("histogram_bin_edges_array", lambda n: n.histogram_bin_edges(_H, np.array([1, 2, 4]))),
    ("histogram2d", lambda n: n.histogram2d(_H, _H[::-1])),
    ("histogram2d_pair", lambda n: n.histogram2d(_H, _H[::-1], bins=(3, 4))),
    ("histogram2d_shared_edges", lambda n: n.histogram2d(_H, _H, bins=np.array([0, 5, 10, 30]))),
    (
        "histogram2d_mixed_bins",
        lambda n: n.histogram2d(_H, _H[::-1], bins=[np.array([0, 5, 10, 30]), 3]),
    ),
    (
        "histogram2d_range_weights_density",
        lambda n: n.histogram2d(
            _H, _H[::-1], bins=3, range=[(0, 30), None], weights=np.arange(8), density=True
        ),
    ),
    ("histogram2d_int_weights", lambda n: n.histogram2d(_H, _H, weights=np.ones(8, np.int32))),
    ("histogram2d_ints", lambda n: n.histogram2d(np.arange(8), np.arange(8) % 3, bins=2)),
    ("histogramdd", lambda n: n.histogramdd(_S, bins=3)),
    ("histogramdd_bins", lambda n: n.histogramdd(_S, bins=[2, 3, np.array([0.0, 4.0, 8.0])])),
    (
        "histogramdd_density",
        lambda n: n.histogramdd(_S, bins=(2, 3, 4), density=True, weights=np.arange(8.0)),
    ),
    ("histogramdd_range", lambda n: n.histogramdd(_S, bins=2, range=[(0, 30), None, (2, 5)])),
]


def _assert_same(got: Any, want: Any) -> None:
    """Same structure (tuple or list), and per array the same dtype, shape and values."""
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _assert_same(g, w)
        return
    g, w = np.asarray(to_numpy(got)), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    tol = 2e-3 if w.dtype.itemsize <= 2 else 1e-5
    np.testing.assert_allclose(g, w, rtol=tol, atol=1e-5)


@pytest.mark.parametrize(
    ("name", "call"), sweep(CONVOLUTIONS, [c[0] for c in CONVOLUTIONS], kind=_convolution_kind)
)
def test_convolutions_are_jaxs(name: str, call: Call) -> None:
    _assert_same(call(lnp), call(jnp))


@pytest.mark.parametrize(("name", "call"), sweep(INTERPOLATIONS, [c[0] for c in INTERPOLATIONS]))
def test_interpolations_are_jaxs(name: str, call: Call) -> None:
    _assert_same(call(lnp), call(jnp))


@pytest.mark.parametrize(("name", "call"), sweep(COUNTS, [c[0] for c in COUNTS]))
def test_counts_and_histograms_are_jaxs(name: str, call: Call) -> None:
    _assert_same(call(lnp), call(jnp))


ERRORS: list[tuple[type[Exception], Call]] = [
    (ValueError, lambda n: n.convolve(np.ones(0), np.ones(3))),
    (ValueError, lambda n: n.correlate(np.ones(2), np.ones(0, np.int32), "full")),
    (ValueError, lambda n: n.correlate(np.ones(3), np.ones(3), mode="foo")),
    (ValueError, lambda n: n.convolve(np.ones((3, 3)), np.ones(3))),
    (ValueError, lambda n: n.correlate(np.ones(3), np.ones((3, 1)))),
    (ValueError, lambda n: n.convolve(2.0, np.ones(3))),
    (ValueError, lambda n: n.convolve(np.ones(3), np.ones(2), precision="foo")),
    (TypeError, lambda n: n.convolve([1.0, 2.0], np.ones(3))),
    (ValueError, lambda n: n.interp(_X, _XP, _FP[:3])),
    (ValueError, lambda n: n.interp(_X, _XP.reshape(2, 2), _FP.reshape(2, 2))),
    (ValueError, lambda n: n.interp(_X, _XP, _FP, left="foo")),
    (ValueError, lambda n: n.interp(_X, _XP, _FP, right="nearest")),
    (ValueError, lambda n: n.interp(_X + 1j, _XP, _FP)),
    (ValueError, lambda n: n.interp(_X, _XP, _FP, period=np.ones(2))),
    (TypeError, lambda n: n.bincount(np.array([1.0, 2.0]))),
    (ValueError, lambda n: n.bincount(np.array([[1, 2]]))),
    (ValueError, lambda n: n.bincount(np.array([1, 2]), np.ones(3))),
    (ValueError, lambda n: n.bincount(np.array([1, 2]), 1.0)),
    (ValueError, lambda n: n.bincount(np.array([1, 2]), np.ones((2, 3), np.float16))),
    (TypeError, lambda n: n.bincount(np.array([1, 2]), minlength=2.5)),
    (ValueError, lambda n: n.histogram(_H, weights=np.ones(3))),
    (ValueError, lambda n: n.histogram(_H, range=(1, 2, 3))),
    (TypeError, lambda n: n.histogram(_H, bins=2.5)),
    (TypeError, lambda n: n.histogram(_H, bins="auto")),
    (TypeError, lambda n: n.histogram(_H, bins=[1, 2, 3])),
    (NotImplementedError, lambda n: n.histogram_bin_edges(_H, bins="auto")),
    (TypeError, lambda n: n.histogram_bin_edges(_H, bins=[1, 2, 3])),
    (ValueError, lambda n: n.histogramdd(_S[:, :2], bins=[3, 4, 5])),
    (ValueError, lambda n: n.histogramdd(_S[:, :2], range=[(1, 2)])),
    (ValueError, lambda n: n.histogramdd(_H)),
    (ValueError, lambda n: n.histogramdd(_S, weights=np.ones(3))),
]


@pytest.mark.parametrize(("kind", "call"), ERRORS)
def test_errors_are_jaxs(kind: type[Exception], call: Call) -> None:
    with pytest.raises(kind) as expected:
        call(jnp)
    with pytest.raises(kind) as got:
        call(lnp)
    assert str(got.value) == str(expected.value)


_N = np.array([1, 2, 7], np.int32)
CONCRETE: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    (r"argument 'x' of jnp\.bincount\. To avoid", lambda x: lnp.bincount(x), (_N,)),
    (r"argument 'length' of jnp\.bincount", lambda x, k: lnp.bincount(x, length=k), (_N, 3)),
    (r"argument 'minlength' of jnp\.bincount", lambda x, k: lnp.bincount(x, minlength=k), (_N, 3)),
    ("bins argument of histogram_bin_edges", lambda a, b: lnp.histogram(a, bins=b), (_H, 3)),
]


@pytest.mark.parametrize(("message", "f", "args"), CONCRETE, ids=[c[0][:20] for c in CONCRETE])
def test_static_arguments_under_jit(message: str, f: Callable[..., Any], args: Any) -> None:
    with pytest.raises(lc.ConcretizationTypeError, match=message):
        lc.jit(f)(*args)


JITTED: list[tuple[str, Callable[[Any], Callable[..., Any]], tuple[Any, ...]]] = [
    ("convolve", lambda n: lambda a, v: n.convolve(a, v, "same"), (_F6, _F4)),
    ("correlate_complex", lambda n: lambda a, v: n.correlate(a, v, "full"), (_C3, _C4)),
    ("interp", lambda n: lambda x, xp, fp: n.interp(x, xp, fp, left=0.0), (_X, _XP, _FP)),
    ("interp_period", lambda n: lambda x, p: n.interp(x, _XP, _FP, period=p), (_X, 3.0)),
    ("bincount_length", lambda n: lambda x, w: n.bincount(x, w, length=5), (_N, _F6[:3])),
    ("histogram", lambda n: lambda a: n.histogram(a, bins=4), (_H,)),
    ("histogram_range", lambda n: lambda a, lo, hi: n.histogram(a, 4, (lo, hi)), (_H, 0.0, 32.0)),
    ("histogram2d", lambda n: lambda x, y, w: n.histogram2d(x, y, 3, weights=w), (_H, _H, _H)),
    ("histogramdd_density", lambda n: lambda s: n.histogramdd(s, 2, density=True), (_S,)),
]


@pytest.mark.parametrize(("name", "program", "args"), JITTED, ids=[c[0] for c in JITTED])
def test_under_jit_is_jaxs(
    oracle: Oracle, name: str, program: Callable[[Any], Callable[..., Any]], args: Any
) -> None:
    closed = lc.make_jaxpr(program(lnp))(*args)
    got = oracle.evaluate(closed, list(args))
    want = jax.tree_util.tree_leaves(jax.jit(program(jnp))(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        _assert_same(g, w)
    _assert_same(lc.jit(program(lnp))(*args), jax.jit(program(jnp))(*args))


def _conv_loss(n: Any, mode: str, op: str) -> Callable[[Any, Any], Any]:
    def loss(a: Any, v: Any) -> Any:
        out = getattr(n, op)(a, v, mode)
        return n.sum(n.sin(out) * n.arange(out.shape[0]))

    return loss


@pytest.mark.parametrize("op", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", _MODES)
def test_convolution_gradients_are_jaxs(op: str, mode: str) -> None:
    import lamina_core.numpy as lcnp

    ns: Any = SimpleNamespace(**vars(lnp), sum=lcnp.sum, sin=lcnp.sin, arange=lcnp.arange)
    for a, v in ((_F6, _F4), (_F4, _F6)):
        got = lc.grad(_conv_loss(ns, mode, op), argnums=(0, 1))(a, v)
        want = jax.jit(jax.grad(_conv_loss(jnp, mode, op), argnums=(0, 1)))(a, v)
        _assert_same(tuple(got), tuple(want))


@pytest.mark.parametrize(
    "kwargs", [{}, {"left": -2.0, "right": 5.0}, {"right": "extrapolate"}, {"period": 3.0}]
)
def test_interp_gradients_are_jaxs(kwargs: dict[str, Any]) -> None:
    import lamina_core.numpy as lcnp

    x = np.array([-1.0, 0.5, 1.0, 2.0, 3.9, 5.0], np.float32)

    def loss(n: Any, interp: Any) -> Callable[[Any, Any, Any], Any]:
        return lambda x, xp, fp: n.sum(interp(x, xp, fp, **kwargs) ** 2)

    got = lc.grad(loss(lcnp, lnp.interp), argnums=(0, 1, 2))(x, _XP, _FP)
    want = jax.jit(jax.grad(loss(jnp, jnp.interp), argnums=(0, 1, 2)))(x, _XP, _FP)
    _assert_same(tuple(got), tuple(want))


def test_under_vmap() -> None:
    rows = _F6.reshape(2, 3)
    got = lc.vmap(lambda a: lnp.correlate(a, _F4[:2], "full"))(rows)
    _assert_same(got, jax.jit(jax.vmap(lambda a: jnp.correlate(a, _F4[:2], "full")))(rows))
    got = lc.vmap(lambda x: lnp.interp(x, _XP, _FP, period=3.0))(_X[:6].reshape(2, 3))
    want = jax.jit(jax.vmap(lambda x: jnp.interp(x, _XP, _FP, period=3.0)))(_X[:6].reshape(2, 3))
    _assert_same(got, want)
    got = lc.vmap(lambda a: lnp.histogram(a, bins=3, range=(0.0, 30.0)))(_H.reshape(2, 4))
    want = jax.jit(jax.vmap(lambda a: jnp.histogram(a, bins=3, range=(0.0, 30.0))))(
        _H.reshape(2, 4)
    )
    _assert_same(got, want)


@pytest.mark.parametrize(
    ("op", "mode", "swap", "dtype"),
    [
        ("convolve", "full", False, np.float32),
        ("convolve", "valid", True, np.float32),
        ("correlate", "same", False, np.float32),
        ("correlate", "full", True, np.complex64),
    ],
)
def test_convolutions_print_as_jax(op: str, mode: str, swap: bool, dtype: Any) -> None:
    # JAX's jitted convolve/correlate around one `_conv` kernel on lax.conv_general_dilated.
    a = np.arange(6.0, dtype=dtype)
    v = np.array([1.0, 2.0, 0.5], dtype)
    args = (v, a) if swap else (a, v)

    def make(n: Any) -> Callable[..., Any]:
        return lambda x, y: getattr(n, op)(x, y, mode)

    assert str(lc.make_jaxpr(make(lnp))(*args)) == str(jax.make_jaxpr(make(jnp))(*args))
