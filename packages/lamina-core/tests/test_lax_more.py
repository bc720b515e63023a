"""The smaller `jax.lax` names against JAX 0.10.2: `mulhi`, the total-order comparisons, `empty`,
`copy`, `stage`, `dce_sink`, `broadcast_like`, tokens, `rng_bit_generator`/`rng_uniform`,
`approx_max_k`/`approx_min_k`, `device_put_p`, `composite`, `platform_dependent`, `pcast` and the
dot types. Printed jaxprs (also of derivatives and batching), values, errors; the rules three
ways (JAX's values, JAX's printed jaxpr, finite differences / a Python loop)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import lax as ll
from lamina_core import numpy as lnp

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jl = jax.lax
jnp = jax.numpy

_rng = np.random.default_rng(0)
F = _rng.standard_normal((2, 8)).astype(np.float32)


def _both(f: Any, g: Any, *args: Any) -> None:
    assert str(lc.make_jaxpr(f)(*args)) == str(jax.make_jaxpr(g)(*args))


def _same(got: Any, want: Any) -> None:
    got_leaves, want_leaves = lc.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for a, b in zip(got_leaves, want_leaves, strict=True):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _errors_alike(ours: Any, theirs: Any, kind: type[Exception] = TypeError) -> None:
    with pytest.raises(kind) as want:
        theirs()
    with pytest.raises(kind) as got:
        ours()
    assert str(got.value) == str(want.value)


# --- mulhi and the total-order comparisons ----------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.uint32])
def test_mulhi_values_are_jaxs(dtype: Any) -> None:
    info = np.iinfo(dtype)
    x = _rng.integers(info.min, info.max, 64, dtype=dtype, endpoint=True)
    y = _rng.integers(info.min, info.max, 64, dtype=dtype, endpoint=True)
    x[:2], y[:2] = info.min, info.max
    _same(ll.mulhi(x, y), jl.mulhi(x, y))


def test_mulhi_of_64_bit_integers_is_the_high_word() -> None:
    x = np.array([2**63 - 1, -(2**63), -3, 7], np.int64)
    y = np.array([2**62 + 5, 3, -(2**40), -1], np.int64)
    from lamina_core.lax._misc_prims import _mulhi_reference

    want = [(int(a) * int(b)) >> 64 for a, b in zip(x, y, strict=True)]
    np.testing.assert_array_equal(_mulhi_reference(x, y), np.array(want, np.int64))
    u = np.array([2**64 - 1, 2**63], np.uint64)
    np.testing.assert_array_equal(_mulhi_reference(u, u), np.array([2**64 - 2, 2**62], np.uint64))


def test_mulhi_jaxprs_and_errors_are_jaxs() -> None:
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    _both(ll.mulhi, jl.mulhi, i, i)
    _both(lc.vmap(ll.mulhi, (0, None)), jax.vmap(jl.mulhi, (0, None)), i, i[0])
    batched = lc.vmap(ll.mulhi, (0, None))(i * 70000, i[0] * 90000)
    for row, got in zip(i, np.asarray(batched), strict=True):
        np.testing.assert_array_equal(got, np.asarray(ll.mulhi(row * 70000, i[0] * 90000)))
    _errors_alike(lambda: ll.mulhi(F, F), lambda: jl.mulhi(F, F))
    _errors_alike(lambda: ll.mulhi(i, i.astype(np.int16)), lambda: jl.mulhi(i, i.astype(np.int16)))


TOTAL = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -np.inf, np.inf, 2.0], np.float32)


@pytest.mark.parametrize("name", ["eq_to_p", "le_to_p", "lt_to_p"])
def test_total_order_comparisons_are_jaxs(name: str) -> None:
    x, y = TOTAL, TOTAL[::-1].copy()
    ours, theirs = getattr(ll, name), getattr(jl, name)
    for a, b in ((x, y), (y, x), (x, x)):
        _same(ours.bind(a, b), theirs.bind(a, b))
    ints = np.array([3, -1, 4], np.int32)
    _same(ours.bind(ints, ints[::-1].copy()), theirs.bind(ints, ints[::-1].copy()))
    _both(lambda a, b: ours.bind(a, b), lambda a, b: theirs.bind(a, b), x, y)
    _both(
        lc.vmap(lambda a, b: ours.bind(a, b), (0, None)),
        jax.vmap(lambda a, b: theirs.bind(a, b), (0, None)),
        np.stack([x, y]),
        y,
    )


def test_eq_to_of_complex_compares_both_parts_in_total_order() -> None:
    # XLA's CPU backend cannot run this comparison, so JAX is no oracle here.
    z = np.array([complex(0.0, 1), complex(-0.0, 1), complex(np.nan, 2)], np.complex64)
    w = np.array([complex(-0.0, 1), complex(-0.0, 1), complex(np.nan, 2)], np.complex64)
    from lamina_core.lax._misc_prims import _eq_to_reference

    np.testing.assert_array_equal(_eq_to_reference(z, w), [False, True, True])


# --- empty, copy, stage, dce_sink, broadcast_like ---------------------------------------------


def test_empty_prints_batches_and_is_zeros() -> None:
    _both(lambda: ll.empty((2, 3), np.float32), lambda: jl.empty((2, 3), np.float32))
    _both(lambda: ll.empty(4, np.int32), lambda: jl.empty(4, np.int32))
    x = np.ones((2, 3), np.float32)
    _both(
        lc.vmap(lambda r: ll.empty((3,), np.float32) + r),
        jax.vmap(lambda r: jl.empty((3,), np.float32) + r),
        x,
    )
    out = ll.empty((2, 3), np.float32)
    assert out.shape == (2, 3) and np.asarray(out).dtype == np.float32


def test_copy_is_staged_by_jnp_array_as_in_jax() -> None:
    x = np.ones(3, np.float32)
    _both(lambda v: lnp.array(v), lambda v: jnp.array(v), x)
    _both(lambda v: lnp.copy(v), lambda v: jnp.copy(v), x)
    _both(lambda v: lnp.array(v, dtype=np.float32), lambda v: jnp.array(v, dtype=np.float32), x)
    _both(lambda v: lnp.asarray(v), lambda v: jnp.asarray(v), x)
    _both(lc.grad(lambda v: lnp.array(v) * 2.0), jax.grad(lambda v: jnp.array(v) * 2.0), 1.0)
    _both(lc.vmap(ll.copy_p.bind), jax.vmap(jl.copy_p.bind), x)
    np.testing.assert_array_equal(np.asarray(ll.copy_p.bind(x)), x)


def test_stage_lifts_constants_and_is_the_identity_on_tracers() -> None:
    _both(lambda a: ll.stage(a) * 2, lambda a: jl.stage(a) * 2, np.ones(3, np.float32))
    _both(lambda a: ll.stage(2), lambda a: jl.stage(2), 1.0)
    _both(lambda a: ll.stage(2.5) * a, lambda a: jl.stage(2.5) * a, 1.0)
    assert lc.typeof(ll.stage(3)).weak_type  # type: ignore[attr-defined]
    _same(ll.stage(np.arange(3.0, dtype=np.float32)), jl.stage(np.arange(3.0, dtype=np.float32)))
    assert lc.typeof(ll.stage(3)).dtype == np.int32  # type: ignore[attr-defined]
    _both(lc.grad(lambda a: ll.stage(a) * 2.0), jax.grad(lambda a: jl.stage(a) * 2.0), 1.0)


def test_dce_sink_prints_differentiates_and_batches_as_jax() -> None:
    _both(
        lambda a: ll.dce_sink(a, prevent_mlir_dce=True),
        lambda a: jl.dce_sink(a, prevent_mlir_dce=True),
        1.0,
    )

    def sink_then_double(api: Any) -> Any:
        def f(a: Any) -> Any:
            api.dce_sink(a)
            return a * 2.0

        return f

    _both(lc.grad(sink_then_double(ll)), jax.grad(sink_then_double(jl)), 1.0)
    _both(lc.vmap(sink_then_double(ll)), jax.vmap(sink_then_double(jl)), np.ones(3, np.float32))
    _both(lambda a: ll.dce_sink({"x": a, "y": [a]}), lambda a: jl.dce_sink({"x": a, "y": [a]}), 1.0)
    ll.dce_sink(np.ones(2))


def test_broadcast_like_is_jaxs() -> None:
    a, b = np.arange(3, dtype=np.int32), np.zeros((2, 3), np.float32)
    _same(ll.broadcast_like(a, b), jl.broadcast_like(a, b))
    _both(ll.broadcast_like, jl.broadcast_like, a, b)


# --- tokens -----------------------------------------------------------------------------------


def test_tokens_print_as_jaxs() -> None:
    def program(api: Any) -> Any:
        return lambda x: (api.after_all(api.create_token(), api.create_token(x)), x)

    _both(program(ll), program(jl), 1.0)
    _both(lambda: ll.after_all(), lambda: jl.after_all())
    token, x = program(ll)(1.0)
    from lamina_core.lax._tokens import Token

    assert isinstance(token, Token)
    assert x == 1.0
    _errors_alike(lambda: ll.after_all(1.0), lambda: jl.after_all(1.0))


# --- rng_bit_generator, rng_uniform -----------------------------------------------------------

KEYS = [
    np.array([1, 2, 3, 4], np.uint32),
    np.array([2**32 - 1, 7, 2**32 - 1, 2**32 - 1], np.uint32),
]


_RBG_FAST = {
    (0, (2, 3), np.uint32),
    (1, (7, 1, 3), np.uint8),
    (2, (), np.uint16),
    (2, (5,), np.uint32),
}
"""The parameter sets run by default; the others are `slow`."""


@pytest.mark.parametrize(
    ("algorithm", "shape", "dtype"),
    [
        pytest.param(a, s, d, marks=() if (a, s, d) in _RBG_FAST else pytest.mark.slow)
        for a in (0, 1, 2)
        for s in ((2, 3), (), (5,), (7, 1, 3))
        for d in (np.uint32, np.uint8, np.uint16)
    ],
)
def test_rng_bit_generator_reference_is_xlas(algorithm: int, shape: Any, dtype: Any) -> None:
    from lamina_core.lax._rng import _rng_bit_generator_reference

    alg_ours, alg_theirs = ll.RandomAlgorithm(algorithm), jl.RandomAlgorithm(algorithm)
    for key in KEYS:
        ours = _rng_bit_generator_reference(
            key, shape=shape, dtype=np.dtype(dtype), algorithm=alg_ours
        )
        theirs = jax.jit(lambda k: jl.rng_bit_generator(k, shape, dtype, alg_theirs))(key)
        _same(ours, list(theirs))


def test_rng_bit_generator_prints_and_batches_as_jax() -> None:
    key = KEYS[0]
    for alg in range(3):
        _both(
            lambda k, a=alg: ll.rng_bit_generator(k, (2, 3), np.uint8, ll.RandomAlgorithm(a)),
            lambda k, a=alg: jl.rng_bit_generator(k, (2, 3), np.uint8, jl.RandomAlgorithm(a)),
            key,
        )
    keys = np.arange(8, dtype=np.uint32).reshape(2, 4)
    _both(
        lc.vmap(lambda k: ll.rng_bit_generator(k, (3,))),
        jax.vmap(lambda k: jl.rng_bit_generator(k, (3,))),
        keys,
    )
    _same(
        lc.vmap(lambda k: ll.rng_bit_generator(k, (3,)))(keys),
        jax.vmap(lambda k: jl.rng_bit_generator(k, (3,)))(keys),
    )
    assert str(ll.RandomAlgorithm.RNG_PHILOX) == str(jl.RandomAlgorithm.RNG_PHILOX)
    _errors_alike(
        lambda: ll.rng_bit_generator(key, (2,), np.int32),
        lambda: jl.rng_bit_generator(key, (2,), np.int32),
    )


def test_rng_uniform_prints_as_jax_and_stays_in_range() -> None:
    _both(lambda: ll.rng_uniform(0.0, 1.0, (2,)), lambda: jl.rng_uniform(0.0, 1.0, (2,)))
    lo, hi = np.float32(-2.0), np.float32(3.0)
    values = np.asarray(ll.rng_uniform(lo, hi, (100,)))
    assert values.dtype == np.float32 and values.shape == (100,)
    assert np.all((values >= lo) & (values < hi))
    ints = np.asarray(ll.rng_uniform(np.int32(0), np.int32(5), (50,)))
    assert ints.dtype == np.int32 and np.all((ints >= 0) & (ints < 5))
    for a, b in ((np.float32(0), np.int32(1)), (np.zeros(2, np.float32), np.float32(1))):
        _errors_alike(
            lambda a=a, b=b: ll.rng_uniform(a, b, (2,)),
            lambda a=a, b=b: jl.rng_uniform(a, b, (2,)),
            ValueError,
        )


# --- approx_max_k / approx_min_k --------------------------------------------------------------


@pytest.mark.parametrize("name", ["approx_max_k", "approx_min_k"])
def test_approx_top_k_is_exact_top_k_as_jax_on_cpu(name: str) -> None:
    ours, theirs = getattr(ll, name), getattr(jl, name)
    ties = np.array([[3.0, 1, 4, 1, 5, 9, 2, 6], [5, 3, 5, 8, 9, 7, 9, 3]], np.float32)
    for x in (ties, F):
        _same(ours(x, 3), jax.jit(lambda v: theirs(v, 3))(x))
        _same(ours(x.T, 2, reduction_dimension=0), theirs(x.T, 2, reduction_dimension=0))
    _both(lambda v: ours(v, 3), lambda v: theirs(v, 3), F)
    _both(lc.vmap(lambda v: ours(v, 3)), jax.vmap(lambda v: theirs(v, 3)), F)
    batched = lc.vmap(lambda v: ours(v, 3))(F)
    for i, row in enumerate(F):
        _same([b[i] for b in batched], ours(row, 3))


def test_approx_top_k_derivatives_are_jaxs() -> None:
    def loss(api: Any, n: Any) -> Any:
        return lambda v: n.sum(api.approx_max_k(v, 3)[0] ** 2)

    _both(lc.grad(loss(ll, lnp)), jax.grad(loss(jl, jnp)), F)
    np.testing.assert_allclose(
        np.asarray(lc.grad(loss(ll, lnp))(F)), np.asarray(jax.grad(loss(jl, jnp))(F)), rtol=1e-6
    )
    eps, f = 1e-3, loss(ll, lnp)
    direction = _rng.standard_normal(F.shape).astype(np.float32)
    fd = (float(f(F + eps * direction)) - float(f(F - eps * direction))) / (2 * eps)
    _, tangent = lc.jvp(f, (F,), (direction,))
    np.testing.assert_allclose(float(tangent), fd, rtol=1e-2)


def test_approx_top_k_errors_are_jaxs() -> None:
    cases: list[tuple[Any, int]] = [(F, 0), (F, 9), (F.astype(np.int32), 2), (np.float32(1), 1)]
    for x, k in cases:
        kind = TypeError if np.ndim(x) == 0 else ValueError
        _errors_alike(
            lambda x=x, k=k: ll.approx_max_k(x, k), lambda x=x, k=k: jl.approx_max_k(x, k), kind
        )


# --- device_put_p, composite, platform_dependent, pcast ---------------------------------------


def test_device_put_primitive_transposes_and_batches_as_jaxs() -> None:
    from lamina_core.lax._device_put import stage_device_put

    def ours(x: Any, y: Any) -> Any:
        return stage_device_put([x, y])

    def theirs(x: Any, y: Any) -> Any:
        return list(jax.device_put((x, y)))

    _both(ours, theirs, 1.0, 2.0)
    _both(
        lc.grad(lambda x: stage_device_put([x])[0] * 2.0),
        jax.grad(lambda x: jax.device_put(x) * 2.0),
        1.0,
    )
    v = np.ones(3, np.float32)
    _both(lc.vmap(lambda x: stage_device_put([x])[0]), jax.vmap(jax.device_put), v)


def test_composite_prints_as_jax_and_has_no_derivative() -> None:
    def build(api: Any, n: Any) -> tuple[Any, Any]:
        tanh = api.composite(lambda x: n.tanh(x), name="my.tanh")
        scale = api.composite(lambda x, *, alpha: x * alpha, name="my.scale", version=2)
        return tanh, scale

    (t1, s1), (t2, s2) = build(ll, lnp), build(jl, jnp)
    x = np.ones(3, np.float32)
    _both(t1, t2, x)
    _both(lambda v: s1(v, alpha=2.0), lambda v: s2(v, alpha=2.0), x)
    _same(t1(x), t2(x))
    _errors_alike(
        lambda: lc.grad(lambda v: t1(v).sum())(x),
        lambda: jax.grad(lambda v: t2(v).sum())(x),
        ValueError,
    )
    pair = ll.composite(lambda a, b: {"s": a + b}, name="my.pair")
    _same(pair(x, x), {"s": x + x})


def test_platform_dependent_takes_the_cpu_branch() -> None:
    x = np.ones(3, np.float32)
    want = jl.platform_dependent(x, cpu=jnp.sin, default=jnp.cos)
    got = ll.platform_dependent(x, cpu=lnp.sin, default=lnp.cos)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    got = ll.platform_dependent(x, tpu=lnp.sin, default=lnp.cos)
    np.testing.assert_allclose(np.asarray(got), np.cos(x), rtol=1e-6)
    _errors_alike(
        lambda: ll.platform_dependent(x, gpu=lnp.sin),
        lambda: jl.platform_dependent(x, gpu=jnp.sin),
        ValueError,
    )
    not_callable: Any = 1
    _errors_alike(
        lambda: ll.platform_dependent(x, cpu=not_callable),
        lambda: jl.platform_dependent(x, cpu=not_callable),
    )


def test_pcast_without_axes_is_the_identity() -> None:
    x = np.ones(3, np.float32)
    _both(lambda v: ll.pcast(v, (), to="varying"), lambda v: jl.pcast(v, (), to="varying"), x)
    _errors_alike(
        lambda: ll.pcast(x, {"i"}, to="varying"), lambda: jl.pcast(x, {"i"}, to="varying")
    )
    _errors_alike(
        lambda: ll.pcast(x, ("i",), to="varying"),
        lambda: jl.pcast(x, ("i",), to="varying"),
        ValueError,
    )
    with pytest.raises(ValueError, match="Got unexpected `to` value"):
        ll.pcast(x, ("i",), to="bad")


# --- types ------------------------------------------------------------------------------------


def test_dot_types_are_jaxs() -> None:
    assert [p.name for p in ll.DotAlgorithmPreset] == [p.name for p in jl.DotAlgorithmPreset]
    for ours, theirs in zip(ll.DotAlgorithmPreset, jl.DotAlgorithmPreset, strict=True):
        assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))
        assert ours.accumulation_type == theirs.accumulation_type
        assert ours.supported_lhs_types == theirs.supported_lhs_types
    assert ll.DotAlgorithm._fields == jl.DotAlgorithm._fields
    assert ll.DotAlgorithm(np.float32, np.float32, np.float32).lhs_component_count == 1
    dims: tuple[Any, ...] = ((([1], [1]), ([], [])), [0], [0])
    assert repr(ll.RaggedDotDimensionNumbers(*dims)) == repr(jl.RaggedDotDimensionNumbers(*dims))
    assert ll.RaggedDotDimensionNumbers(*dims) == ll.RaggedDotDimensionNumbers(*dims)
    assert [r.name for r in ll.RandomAlgorithm] == [r.name for r in jl.RandomAlgorithm]


def test_dot_general_takes_the_default_dot_algorithm_preset() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = a.T.copy()
    for ours, theirs in ((ll.DotAlgorithmPreset.DEFAULT, jl.DotAlgorithmPreset.DEFAULT),
                         ("DEFAULT", "DEFAULT")):  # fmt: skip
        _both(
            lambda x, y, p=ours: ll.dot(x, y, precision=p),
            lambda x, y, p=theirs: jl.dot(x, y, precision=p),
            a,
            b,
        )
        _both(
            lc.grad(lambda x, y, p=ours: lnp.sum(ll.dot(x, y, precision=p))),
            jax.grad(lambda x, y, p=theirs: jnp.sum(jl.dot(x, y, precision=p))),
            a,
            b,
        )
        np.testing.assert_allclose(np.asarray(ll.dot(a, b, precision=ours)), a @ b)
    with pytest.raises(NotImplementedError, match="DEFAULT only"):
        ll.dot(a, b, precision=ll.DotAlgorithmPreset.F32_F32_F32)
