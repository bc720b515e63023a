"""Every parameter of JAX 0.10.2's public functions is one of Lamina's, with JAX's meaning.

A walk over `jax.numpy`, `jax.random`, `jax`, `jax.lax` and `jax.nn` checks the names; the
rest checks what the added parameters do, against JAX: `device=`/`out_sharding=` of the array
creators, shape functions, `repeat` and `percentile` (printed jaxprs, result shardings over 8
devices, errors), the samplers' `out_sharding=` (drawn under `auto_axes`, as JAX's), `weights=`
of the quantiles (the `inverted_cdf` method), the ufuncs' refused `out=`/`where=`, and the
top-level API's
`device_put(src=, donate=, may_alias=)`, `local_devices(host_id=)`, `make_array_from_*(dtype=)`,
`vmap(sum_match=)`, `vjp(reduce_axes=)` and `new_ref(init_val=)`.
"""

from __future__ import annotations

import functools
import inspect
import os
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

os.environ.setdefault("JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS", "True")

import numpy as np
import pytest

import lamina
import lamina.nn
import lamina.numpy as lnp
import lamina.random as lrandom
from lamina.sharding import AxisType, NamedSharding, PartitionSpec

jax = pytest.importorskip("jax")
import jax.nn as jax_nn  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.random as jrandom  # noqa: E402

pytestmark = pytest.mark.oracle

# Untyped views of the two modules, for parameters their type stubs do not show (JAX's stub of
# `ravel_multi_index` has no `dtype`; mypy reads `lamina.numpy`'s creators from its star import).
LNP: Any = lnp
JNP: Any = jnp

_P = inspect.Parameter

# JAX parameters Lamina deliberately lacks, each with its reason.
_NOT_ADDED = {
    # Private (leading underscore): JAX's own hook for swapping in another dot_general.
    ("jax.numpy", "einsum", "_dot_general"),
}


def _params(f: Any) -> dict[str, inspect.Parameter] | None:
    try:
        return dict(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        return None


def _missing() -> list[tuple[str, str, str]]:
    pairs: list[tuple[str, ModuleType, ModuleType]] = [
        ("jax.numpy", jnp, lnp),
        ("jax.random", jrandom, lrandom),
        ("jax", jax, lamina),
        ("jax.lax", jax.lax, lamina.lax),
        ("jax.nn", jax_nn, lamina.nn),
    ]
    missing = []
    for label, jm, lm in pairs:
        for name in sorted(dir(jm)):
            if name.startswith("_"):
                continue
            jf, lf = getattr(jm, name), getattr(lm, name, None)
            if lf is None or not callable(jf) or isinstance(jf, type) or inspect.ismodule(jf):
                continue
            jp, lp = _params(jf), _params(lf)
            if jp is None or lp is None or list(jp) == ["new_val"]:
                continue  # no signature, or a config option's context manager
            if any(p.kind is _P.VAR_KEYWORD for p in lp.values()):
                continue  # Lamina takes any keyword
            for pname, p in jp.items():
                if p.kind in (_P.VAR_POSITIONAL, _P.VAR_KEYWORD) or pname in lp:
                    continue
                if (label, name, pname) not in _NOT_ADDED:
                    missing.append((label, name, pname))
    return missing


def test_every_jax_parameter_is_a_lamina_parameter() -> None:
    assert _missing() == []


# --- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["arctan2", "divide", "true_divide", "right_shift", "bitwise_right_shift", "polyval"]
)
def test_parameter_names_and_kinds_are_jaxs(name: str) -> None:
    def described(f: Any) -> list[tuple[str, Any]]:
        return [(p.name, p.kind) for p in inspect.signature(f).parameters.values()]

    assert described(getattr(lnp, name)) == described(getattr(jnp, name))


def test_keyword_names_of_issubdtype_polyval_and_new_ref_work() -> None:
    assert lnp.issubdtype(arg1=np.float32, arg2=np.floating)
    assert jnp.issubdtype(arg1=np.float32, arg2=np.floating)
    p, x = np.array([1.0, 2.0, 3.0], np.float32), np.array([0.5, 2.0], np.float32)
    np.testing.assert_allclose(lnp.polyval(p=p, x=x), jnp.polyval(p=p, x=x))
    for r in (lrandom, jrandom):
        assert r.key_dtype(impl_spec="threefry2x32") == r.key(0).dtype

    def with_ref(api: Any) -> Callable[[Any], Any]:
        def f(v: Any) -> Any:
            ref = api.new_ref(init_val=v)
            return ref[...] * 2

        return f

    v = np.arange(3.0, dtype=np.float32)
    assert str(lamina.make_jaxpr(with_ref(lamina))(v)) == str(jax.make_jaxpr(with_ref(jax))(v))


# --- ufuncs' out= and where= -------------------------------------------------------------------


def _error(f: Callable[[], Any]) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        f()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("name", ["add", "negative", "logaddexp", "bitwise_xor", "maximum"])
@pytest.mark.parametrize("keyword", ["out", "where"])
def test_ufuncs_refuse_out_and_where_as_jax(name: str, keyword: str) -> None:
    nin = 1 if name == "negative" else 2
    args = [np.arange(3, dtype=np.int32)] * nin

    def call(n: Any) -> Callable[[], Any]:
        return lambda: getattr(n, name)(*args, **{keyword: np.zeros(3)})

    assert _error(call(lnp)) == _error(call(jnp))
    assert np.array_equal(
        getattr(lnp, name)(*args, out=None, where=None), getattr(jnp, name)(*args)
    )


@pytest.mark.parametrize("name", ["isposinf", "isneginf"])
def test_isposinf_isneginf_refuse_out_as_jax(name: str) -> None:
    x = np.array([1.0, np.inf, -np.inf], np.float32)
    assert _error(lambda: getattr(lnp, name)(x, np.zeros(3))) == _error(
        lambda: getattr(jnp, name)(x, np.zeros(3))
    )
    np.testing.assert_array_equal(getattr(lnp, name)(x, out=None), getattr(jnp, name)(x))


# --- ravel_multi_index(dtype=) -----------------------------------------------------------------

_IDX = (np.array([0, 3, 5], np.int32), np.array([1, 0, 19], np.int32))


@pytest.mark.parametrize("dtype", [None, np.int16, np.uint32])
def test_ravel_multi_index_dtype(dtype: Any) -> None:
    got = lnp.ravel_multi_index(_IDX, (6, 20), dtype=dtype)
    want = JNP.ravel_multi_index(_IDX, (6, 20), dtype=dtype)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    jaxpr = str(
        lamina.make_jaxpr(lambda a, b: lnp.ravel_multi_index((a, b), (6, 20), "clip", dtype=dtype))(
            *_IDX
        )
    )
    assert jaxpr == str(
        jax.make_jaxpr(lambda a, b: JNP.ravel_multi_index((a, b), (6, 20), "clip", dtype=dtype))(
            *_IDX
        )
    )


@pytest.mark.parametrize(
    ("dims", "dtype", "mode"),
    [((6, 20), np.float32, "clip"), ((30, 30), np.int8, "clip"), ((6, 20), None, "bad")],
)
def test_ravel_multi_index_errors_are_jaxs(dims: Any, dtype: Any, mode: str) -> None:
    assert _error(lambda: lnp.ravel_multi_index(_IDX, dims, mode, dtype=dtype)) == _error(
        lambda: JNP.ravel_multi_index(_IDX, dims, mode, dtype=dtype)
    )


# --- quantiles' weights= -----------------------------------------------------------------------

_RNG = np.random.default_rng(0)
_A = _RNG.normal(size=(3, 5)).astype(np.float32)
_AN = _A.copy()
_AN[1, 2] = np.nan
_W = _RNG.uniform(0, 2, size=(3, 5)).astype(np.float32)
_W_ROW = _RNG.uniform(0, 2, size=(5,)).astype(np.float32)
_W_BAD = _W.copy()
_W_BAD[2, 0] = -1
_QS = np.array([0.2, 0.7], np.float32)

_QUANTILE_CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "scalar_q": (
        lambda n, a, w: n.quantile(a, 0.3, axis=1, method="inverted_cdf", weights=w),
        (_A, _W),
    ),
    "no_weights": (lambda n, a, q: n.quantile(a, q, axis=1, method="inverted_cdf"), (_A, _QS)),
    "vector_q_keepdims": (
        lambda n, a, w, q: n.quantile(
            a, q, axis=1, method="inverted_cdf", weights=w, keepdims=True
        ),
        (_A, _W, _QS),
    ),
    "weights_of_axis": (
        lambda n, a, w: n.quantile(a, 0.5, axis=1, method="inverted_cdf", weights=w),
        (_A, _W_ROW),
    ),
    "all_axes": (lambda n, a, w: n.quantile(a, 0.5, method="inverted_cdf", weights=w), (_A, _W)),
    "axis_tuple": (
        lambda n, a, w: n.quantile(
            a, 0.5, axis=(0, 1), method="inverted_cdf", weights=w, keepdims=True
        ),
        (_A, _W),
    ),
    "negative_weight": (
        lambda n, a, w: n.quantile(a, 0.5, axis=1, method="inverted_cdf", weights=w),
        (_A, _W_BAD),
    ),
    "nan_data": (
        lambda n, a, w: n.quantile(a, 0.4, axis=1, method="inverted_cdf", weights=w),
        (_AN, _W),
    ),
    "nanquantile": (
        lambda n, a, w: n.nanquantile(a, 0.4, axis=1, method="inverted_cdf", weights=w),
        (_AN, _W),
    ),
    "nanquantile_vector_keepdims": (
        lambda n, a, w, q: n.nanquantile(
            a, q, axis=0, method="inverted_cdf", weights=w, keepdims=True
        ),
        (_AN, _W, _QS),
    ),
    "percentile": (
        lambda n, a, w: n.percentile(a, 40.0, axis=1, method="inverted_cdf", weights=w),
        (_A, _W),
    ),
}


@pytest.mark.parametrize("case", sorted(_QUANTILE_CASES))
def test_weighted_quantiles_are_jaxs(case: str) -> None:
    f, args = _QUANTILE_CASES[case]
    got, want = f(lnp, *args), f(jnp, *args)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, equal_nan=True)
    assert str(lamina.make_jaxpr(lambda *x: f(lnp, *x))(*args)) == str(
        jax.make_jaxpr(lambda *x: f(jnp, *x))(*args)
    )


def test_weighted_quantile_under_grad_and_vmap() -> None:
    def total(n: Any) -> Callable[[Any, Any], Any]:
        return lambda a, w: n.quantile(a, 0.5, axis=1, method="inverted_cdf", weights=w).sum()

    np.testing.assert_allclose(lamina.grad(total(lnp))(_A, _W), jax.grad(total(jnp))(_A, _W))

    def per_row(api: Any, n: Any) -> Callable[[Any, Any], Any]:
        mapped: Callable[[Any, Any], Any] = api.vmap(
            lambda a, w: n.quantile(a, 0.5, method="inverted_cdf", weights=w)
        )
        return mapped

    np.testing.assert_allclose(per_row(lamina, lnp)(_A, _W), per_row(jax, jnp)(_A, _W))
    assert str(lamina.make_jaxpr(per_row(lamina, lnp))(_A, _W)) == str(
        jax.make_jaxpr(per_row(jax, jnp))(_A, _W)
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda n: n.quantile(_A, 0.5, weights=_W),
        lambda n: n.nanpercentile(_A, 50.0, weights=_W, method="midpoint"),
        lambda n: n.quantile(_A, 0.5, weights=_W.astype(np.complex64), method="inverted_cdf"),
        lambda n: n.quantile(_A, 0.5, weights=_W_ROW, method="inverted_cdf"),
        lambda n: n.quantile(_A, 0.5, axis=1, weights=_W[:2], method="inverted_cdf"),
    ],
)
def test_weighted_quantile_errors_are_jaxs(call: Callable[[Any], Any]) -> None:
    assert _error(lambda: call(lnp)) == _error(lambda: call(jnp))


# --- top-level API ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"donate": True},
        {"may_alias": False},
        {"donate": (True, False)},
        {"may_alias": (None, True)},
    ],
)
def test_device_put_copy_semantics_stage_as_jax(kwargs: dict[str, Any]) -> None:
    def f(api: Any) -> Callable[[Any, Any], Any]:
        return lambda x, y: api.device_put((x, y), **kwargs)

    x = np.float32(1.0)
    assert str(lamina.make_jaxpr(f(lamina))(x, x)) == str(jax.make_jaxpr(f(jax))(x, x))
    np.testing.assert_array_equal(f(lamina)(x, 2 * x), f(jax)(x, 2 * x))


def test_device_put_src_and_refusals_are_jaxs() -> None:
    ld, jd = lamina.devices()[0], jax.devices()[0]
    got = lamina.make_jaxpr(lambda x: lamina.device_put(x, ld, src=ld))(1.0)
    assert str(got) == str(jax.make_jaxpr(lambda x: jax.device_put(x, jd, src=jd))(1.0))
    assert _error(lambda: lamina.device_put(1.0, donate=True, may_alias=True)) == _error(
        lambda: jax.device_put(1.0, donate=True, may_alias=True)
    )


def test_local_devices_host_id_warns_as_jax() -> None:
    def run(api: Any) -> tuple[list[int], list[tuple[type, str]]]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ids = [d.id for d in api.local_devices(host_id=0)]
        return ids, [(w.category, str(w.message)) for w in caught]

    assert run(lamina) == run(jax)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _error(lambda: lamina.local_devices(host_id=7)) == _error(
            lambda: jax.local_devices(host_id=7)
        )


def test_make_array_from_callback_dtype() -> None:
    data = np.arange(4, dtype=np.float32)

    def build(api: Any, dtype: Any) -> Any:
        sharding = api.sharding.SingleDeviceSharding(api.devices()[0])
        return api.make_array_from_callback((4,), sharding, lambda idx: data[idx], dtype=dtype)

    got, want = build(lamina, np.float32), build(jax, np.float32)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert _error(lambda: build(lamina, np.int32)) == _error(lambda: build(jax, np.int32))


def test_make_array_from_single_device_arrays_dtype() -> None:
    def build(api: Any, dtype: Any, arrays: bool = True) -> Any:
        device = api.devices()[0]
        sharding = api.sharding.SingleDeviceSharding(device)
        pieces = [api.device_put(np.arange(3, dtype=np.float32), device)] if arrays else []
        return api.make_array_from_single_device_arrays((3,), sharding, pieces, dtype=dtype)

    np.testing.assert_array_equal(build(lamina, np.float32), build(jax, np.float32))
    assert _error(lambda: build(lamina, np.int32)) == _error(lambda: build(jax, np.int32))
    assert _error(lambda: build(lamina, None, False)) == _error(lambda: build(jax, None, False))


def test_vmap_sum_match_sums_the_unmapped_output() -> None:
    def f(api: Any) -> Callable[[Any], Any]:
        mapped: Callable[[Any], Any] = api.vmap(
            lambda x: (x * 2, x + 1), out_axes=(0, None), sum_match=True
        )
        return mapped

    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    for got, want in zip(f(lamina)(x), f(jax)(x), strict=True):
        np.testing.assert_allclose(got, want)
    assert str(lamina.make_jaxpr(f(lamina))(x)) == str(jax.make_jaxpr(f(jax))(x))


def test_vjp_refuses_reduce_axes_as_jax() -> None:
    assert _error(lambda: lamina.vjp(lnp.sin, 1.0, reduce_axes=("i",))) == _error(
        lambda: jax.vjp(jnp.sin, 1.0, reduce_axes=("i",))
    )
    _, pullback = lamina.vjp(lnp.sin, 1.0, reduce_axes=())
    np.testing.assert_allclose(pullback(1.0), jax.vjp(jnp.sin, 1.0)[1](1.0))


# --- device= ------------------------------------------------------------------------------------

_PLACED: dict[str, Callable[[Any, Any], Any]] = {
    "arange": lambda n, d: n.arange(5, device=d),
    "array_scalar": lambda n, d: n.array(3.0, device=d),
    "asarray_array": lambda n, d: n.asarray(np.ones(3), device=d),
    "astype": lambda n, d: n.astype(np.arange(3, dtype=np.int32), "float32", device=d),
    "eye": lambda n, d: n.eye(3, 2, 1, device=d),
    "linspace": lambda n, d: n.linspace(0.0, 1.0, 5, device=d),
}


@pytest.mark.parametrize("case", sorted(_PLACED))
def test_device_places_the_result_as_jax(case: str) -> None:
    got = _PLACED[case](lnp, lamina.devices()[-1])
    want = _PLACED[case](jnp, jax.devices()[-1])
    assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type)
    np.testing.assert_allclose(got, want)
    assert [d.id for d in got.devices()] == [d.id for d in want.devices()]


def test_device_is_in_the_creators_static_signatures() -> None:
    """Called through the typed module (not `LNP: Any`): CI's mypy run over this file fails if
    type checkers see lamina-core's creators, which have no `device=`."""
    device = lamina.devices()[-1]
    made = [
        lnp.zeros(2, device=device),
        lnp.ones_like(np.ones(2), device=device),
        lnp.full((2,), 1.0, device=device),
        lnp.arange(2, device=device),
        lnp.asarray([1.0, 2.0], device=device),
    ]
    assert all(x.devices() == {device} for x in made)


def test_device_and_out_sharding_together_are_refused_as_jax() -> None:
    got = _error(lambda: LNP.arange(4, device=lamina.devices()[0], out_sharding=PartitionSpec()))
    want = _error(
        lambda: jnp.arange(4, device=jax.devices()[0], out_sharding=jax.sharding.PartitionSpec())
    )
    assert got == want


# --- out_sharding=, over 8 devices -------------------------------------------------------------

needs_8 = pytest.mark.skipif(
    len(lamina.devices()) < 8 or jax.device_count() < 8,
    reason="needs 8 devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)",
)


def _sides(axis_type: str = "Explicit") -> list[tuple[Any, Any, Any, Any, Any, Any]]:
    """(api, numpy, random, P, NamedSharding, mesh) of Lamina and of JAX."""
    out = []
    for api, n, r, p, ns, at in (
        (lamina, lnp, lrandom, PartitionSpec, NamedSharding, AxisType),
        (
            jax,
            jnp,
            jrandom,
            jax.sharding.PartitionSpec,
            jax.sharding.NamedSharding,
            jax.sharding.AxisType,
        ),
    ):
        mesh = api.make_mesh((2, 4), ("x", "y"), axis_types=(getattr(at, axis_type),) * 2)
        out.append((api, n, r, p, ns, mesh))
    return out


_CREATED: dict[str, Callable[..., Any]] = {
    "zeros": lambda n, P, ns, m: n.zeros((8, 4), out_sharding=P("x", "y")),
    "ones_named": lambda n, P, ns, m: n.ones((8,), out_sharding=ns(m, P("x"))),
    "full_weak": lambda n, P, ns, m: n.full((8,), 2.0, out_sharding=P("x")),
    "full_like": lambda n, P, ns, m: n.full_like(
        np.ones((8, 2), np.float32), 3, out_sharding=P("y")
    ),
    "zeros_like": lambda n, P, ns, m: n.zeros_like(
        np.ones((8, 2), np.float32), out_sharding=P(None, "x")
    ),
    "empty": lambda n, P, ns, m: n.empty((8,), np.int32, out_sharding=P("x")),
    "arange": lambda n, P, ns, m: n.arange(8, out_sharding=P("x")),
    "arange_step": lambda n, P, ns, m: n.arange(2, 18, 2, out_sharding=P("x")),
}
# Made from host arrays: the constants print differently in JAX's legacy constants mode, so
# these compare values and placements only.
_CREATED_FROM_HOST: dict[str, Callable[..., Any]] = {
    "array": lambda n, P: n.array(np.arange(8.0), out_sharding=P("x")),
    "asarray_no_copy": lambda n, P: n.asarray(np.arange(8.0), out_sharding=P("x")),
    "asarray_copy": lambda n, P: n.asarray(np.arange(8.0), copy=True, out_sharding=P("x")),
}


@needs_8
@pytest.mark.parametrize("case", sorted(_CREATED))
def test_created_arrays_are_split_as_jax(case: str) -> None:
    results = []
    for api, n, _, P, ns, mesh in _sides():
        with api.set_mesh(mesh):
            jaxpr = str(
                api.make_jaxpr(lambda n=n, P=P, ns=ns, m=mesh: _CREATED[case](n, P, ns, m))()
            )
            value = _CREATED[case](n, P, ns, mesh)
        results.append((jaxpr, value))
    (ljaxpr, lvalue), (jjaxpr, jvalue) = results
    assert ljaxpr == jjaxpr
    assert (lvalue.dtype, lvalue.weak_type) == (jvalue.dtype, jvalue.weak_type)
    np.testing.assert_array_equal(lvalue, jvalue)
    assert repr(lvalue.sharding) == repr(jvalue.sharding)


@needs_8
@pytest.mark.parametrize("case", sorted(_CREATED_FROM_HOST))
def test_arrays_from_host_data_are_split_as_jax(case: str) -> None:
    values = []
    for api, n, _, P, _, mesh in _sides():
        with api.set_mesh(mesh):
            values.append(_CREATED_FROM_HOST[case](n, P))
    lvalue, jvalue = values
    assert (lvalue.dtype, lvalue.weak_type) == (jvalue.dtype, jvalue.weak_type)
    np.testing.assert_array_equal(lvalue, jvalue)
    assert repr(lvalue.sharding) == repr(jvalue.sharding)


_RESHAPED: dict[str, Callable[..., Any]] = {
    "reshape": lambda n, P, x: n.reshape(x, (16,), out_sharding=P("x")),
    "reshape_f": lambda n, P, x: n.reshape(x, (4, 4), order="F", out_sharding=P(None, "x")),
    "ravel": lambda n, P, x: n.ravel(x, out_sharding=P("x")),
    "broadcast_to": lambda n, P, x: n.broadcast_to(x, (4, 8, 2), out_sharding=P(None, "x")),
    "array_of_tracer": lambda n, P, x: n.array(x, out_sharding=P("x", None)),
    "repeat": lambda n, P, x: n.repeat(x, 2, axis=0, out_sharding=P("x")),
    "repeat_total": lambda n, P, x: n.repeat(
        # repeats made under the trace: a host array would print as JAX's constants mode has it
        x,
        n.arange(1, 3),
        axis=1,
        total_repeat_length=4,
        out_sharding=P("x", None),
    ),
    "percentile": lambda n, P, x: n.percentile(x, 30.0, axis=1, out_sharding=P("x")),
    "percentile_weighted": lambda n, P, x: n.percentile(
        x, 30.0, axis=1, method="inverted_cdf", weights=x, out_sharding=P("x")
    ),
}


@needs_8
@pytest.mark.parametrize("case", sorted(_RESHAPED))
def test_shape_functions_split_their_result_as_jax(case: str) -> None:
    results = []
    for api, n, _, P, ns, mesh in _sides():
        with api.set_mesh(mesh):
            x = api.device_put(np.arange(16.0, dtype=np.float32).reshape(8, 2), ns(mesh, P("x")))
            jaxpr = str(api.make_jaxpr(lambda x, n=n, P=P: _RESHAPED[case](n, P, x))(x))
            value = _RESHAPED[case](n, P, x)
        results.append((jaxpr, value))
    (ljaxpr, lvalue), (jjaxpr, jvalue) = results
    assert ljaxpr == jjaxpr
    np.testing.assert_array_equal(lvalue, jvalue)
    assert repr(lvalue.sharding) == repr(jvalue.sharding)


@needs_8
def test_bincount_with_a_replicated_out_sharding_is_jaxs() -> None:
    results = []
    for api, n, _, P, ns, mesh in _sides():
        with api.set_mesh(mesh):
            x = api.device_put(np.array([0, 1, 1, 3, 2, 7, 0, 1], np.int32), ns(mesh, P("x")))
            w = api.device_put(np.arange(8, dtype=np.float32), ns(mesh, P("x")))

            def f(x: Any, w: Any, n: Any = n, P: Any = P) -> Any:
                return n.bincount(x, w, length=5, out_sharding=P())

            results.append((str(api.make_jaxpr(f)(x, w)), f(x, w)))
    (ljaxpr, lvalue), (jjaxpr, jvalue) = results
    assert ljaxpr == jjaxpr
    np.testing.assert_array_equal(lvalue, jvalue)
    assert repr(lvalue.sharding) == repr(jvalue.sharding)


@needs_8
@pytest.mark.parametrize(
    ("axis_type", "call"),
    [
        ("Explicit", lambda api, n, P: n.zeros(8, out_sharding=api.devices()[0])),
        ("Explicit", lambda api, n, P: n.bincount(np.arange(8), length=8, out_sharding=P("x"))),
        ("Auto", lambda api, n, P: n.zeros(8, out_sharding=P("x"))),
        ("Auto", lambda api, n, P: n.broadcast_to(np.ones(2), (8, 2), out_sharding=P("x"))),
        (None, lambda api, n, P: n.ones(8, out_sharding=P("x"))),
        (
            "Explicit",
            lambda api, n, P: n.percentile(np.ones(8), 50.0, out_sharding=api.devices()[0]),
        ),
    ],
)
def test_out_sharding_refusals_are_jaxs(axis_type: str | None, call: Callable[..., Any]) -> None:
    errors = []
    for api, n, _, P, _, mesh in _sides(axis_type or "Explicit"):
        if axis_type is None:
            errors.append(_error(functools.partial(call, api, n, P)))
            continue
        with api.set_mesh(mesh):
            errors.append(_error(functools.partial(call, api, n, P)))
    (lkind, lmessage), (jkind, jmessage) = errors
    assert lkind.__name__ == jkind.__name__
    assert lmessage == jmessage


def _logits(r: Any, k: Any) -> Any:
    """Logits drawn from the key (not a constant: constants print by the constants mode)."""
    return r.normal(k, (8, 3))


_SAMPLED: dict[str, Callable[..., Any]] = {
    "normal": lambda r, P, k: r.normal(k, (8, 4), out_sharding=P("x", "y")),
    "normal_scalar": lambda r, P, k: r.normal(k),
    "uniform": lambda r, P, k: r.uniform(k, (8,), minval=-1.0, maxval=2.0, out_sharding=P("x")),
    "randint": lambda r, P, k: r.randint(k, (8, 4), 0, 10, out_sharding=P("x", None)),
    "bernoulli": lambda r, P, k: r.bernoulli(k, 0.3, (8,), out_sharding=P("y")),
    "permutation": lambda r, P, k: r.permutation(k, 8, out_sharding=P("x")),
    "bits": lambda r, P, k: r.bits(k, (8,), out_sharding=P("x")),
    "gamma": lambda r, P, k: r.gamma(k, 2.0, (8,), out_sharding=P("x")),
    "chisquare": lambda r, P, k: r.chisquare(k, 3.0, (8,), out_sharding=P("x")),
    "maxwell": lambda r, P, k: r.maxwell(k, (8,), out_sharding=P("x")),
    "geometric": lambda r, P, k: r.geometric(k, 0.3, (8,), out_sharding=P("x")),
    "categorical": lambda r, P, k: r.categorical(k, _logits(r, k), out_sharding=P("x")),
    "rademacher": lambda r, P, k: r.rademacher(k, (8,), out_sharding=P("x")),
    "orthogonal": lambda r, P, k: r.orthogonal(k, 2, (8,), out_sharding=P("x")),
}
_SAMPLED_EAGERLY = ("normal", "uniform", "bernoulli", "permutation")


@needs_8
@pytest.mark.parametrize("case", sorted(_SAMPLED))
def test_samplers_split_their_draws_as_jax(case: str) -> None:
    results = []
    for api, _, r, P, _, mesh in _sides():
        key = r.key(0)
        with api.set_mesh(mesh):
            jaxpr = str(api.make_jaxpr(lambda k, r=r, P=P: _SAMPLED[case](r, P, k))(key))
            value = _SAMPLED[case](r, P, key) if case in _SAMPLED_EAGERLY else None
        results.append((jaxpr, value))
    (ljaxpr, lvalue), (jjaxpr, jvalue) = results
    assert ljaxpr == jjaxpr
    if lvalue is not None and jvalue is not None:
        np.testing.assert_array_equal(lvalue, jvalue)
        assert repr(lvalue.sharding) == repr(jvalue.sharding)
