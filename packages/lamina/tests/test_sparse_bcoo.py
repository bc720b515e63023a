"""`lamina.experimental.sparse`'s BCOO against JAX 0.10.2's `jax.experimental.sparse`: the
same calls give equal buffers and dense values (with batch and dense dimensions), printed
jaxprs, gradients, vmapped results and errors; `sparsify` and the sparse-aware `grad`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import sparse as _jsparse

import lamina
import lamina.numpy as ljnp
from lamina.experimental import sparse as lsparse

pytestmark = pytest.mark.oracle

js: Any = _jsparse  # JAX's modules are untyped
ls: Any = lsparse


def sparse_array(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    return np.where(rng.random(shape) < 0.5, x, 0).astype(np.float32)


def both(fn: Callable[[Any, Any, Any], Any]) -> tuple[Any, Any]:
    """`fn(sparse_module, jax_like, jnp)` for JAX and for Lamina."""
    return fn(js, jax, jjnp), fn(ls, lamina, ljnp)


def assert_same_bcoo(a: Any, b: Any) -> None:
    assert type(b).__name__ == "BCOO"
    assert (a.shape, a.n_batch, a.n_dense, a.nse) == (b.shape, b.n_batch, b.n_dense, b.nse)
    assert (a.indices_sorted, a.unique_indices) == (b.indices_sorted, b.unique_indices)
    np.testing.assert_allclose(np.asarray(b.data), np.asarray(a.data), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(b.indices), np.asarray(a.indices))


# --- conversions --------------------------------------------------------------------------


@pytest.mark.parametrize(("n_batch", "n_dense"), [(0, 0), (1, 1)])
def test_fromdense_and_todense_agree_with_jax(n_batch: int, n_dense: int) -> None:
    x = sparse_array((2, 3, 4))
    j, m = both(lambda sp, _, __: sp.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense))
    assert_same_bcoo(j, m)
    assert repr(m) == repr(j)
    np.testing.assert_array_equal(np.asarray(m.todense()), x)


def test_fromdense_with_nse_pads_like_jax() -> None:
    x = sparse_array((3, 4), seed=1)
    j, m = both(lambda sp, _, __: sp.bcoo_fromdense(x, nse=9, index_dtype=np.int16))
    assert_same_bcoo(j, m)


@pytest.mark.parametrize(("n_batch", "n_dense"), [(0, 0), (1, 1)])
def test_jitted_roundtrip_jaxpr_and_values_equal_jax(n_batch: int, n_dense: int) -> None:
    x = sparse_array((2, 3, 4), seed=2)

    def make(sp: Any) -> Callable[[Any], Any]:
        return lambda a: sp.BCOO.fromdense(a, nse=5, n_batch=n_batch, n_dense=n_dense).todense()

    assert str(lamina.make_jaxpr(make(ls))(x)) == str(jax.make_jaxpr(make(js))(x))
    np.testing.assert_array_equal(np.asarray(lamina.jit(make(ls))(x)), jax.jit(make(js))(x))


def test_extract_with_duplicates_sums_into_the_first_like_jax() -> None:
    x = sparse_array((3, 4), seed=3)
    indices = np.array([[0, 1], [2, 3], [0, 1], [1, 1]], np.int32)
    data = np.ones(4, np.float32)
    for unique in (True, False):

        def extract(sp: Any, _: Any, __: Any, u: bool = unique) -> Any:
            return sp.bcoo_extract(sp.BCOO((data, indices), shape=(3, 4)), x, assume_unique=u)

        j, m = both(extract)
        assert_same_bcoo(j, m)


def test_todense_vmap_and_grad_agree_with_jax() -> None:
    x = sparse_array((3, 4, 5), seed=4)
    mats = [sp.BCOO.fromdense(x, n_batch=1) for sp in (js, ls)]
    outs = [j.vmap(lambda m: m.todense())(mat) for j, mat in zip((jax, lamina), mats, strict=True)]
    np.testing.assert_array_equal(np.asarray(outs[1]), np.asarray(outs[0]))
    w = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    grads = [
        j.grad(
            lambda d, mat=mat, sp=sp: (
                sp.BCOO((d, mat.indices), shape=mat.shape).todense() * w
            ).sum()
        )(mat.data)
        for j, sp, mat in zip((jax, lamina), (js, ls), mats, strict=True)
    ]
    np.testing.assert_allclose(np.asarray(grads[1]), np.asarray(grads[0]))


def test_fromdense_under_vmap_batches_like_jax() -> None:
    x = sparse_array((2, 3, 4), seed=5)
    j, m = both(lambda sp, jj, _: jj.vmap(lambda a: sp.BCOO.fromdense(a, nse=6))(x))
    assert_same_bcoo(j, m)


# --- transpose ----------------------------------------------------------------------------


@pytest.mark.parametrize(("n_batch", "n_dense"), [(1, 0), (0, 1)])
def test_transpose_agrees_with_jax(n_batch: int, n_dense: int) -> None:
    x = sparse_array((2, 3, 4), seed=6)
    perm = {(0, 0): (2, 0, 1), (1, 0): (0, 2, 1), (0, 1): (1, 0, 2), (1, 1): (0, 1, 2)}
    p = perm[(n_batch, n_dense)]
    j, m = both(
        lambda sp, _, __: sp.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense).transpose(p)
    )
    assert_same_bcoo(j, m)
    np.testing.assert_array_equal(np.asarray(m.todense()), x.transpose(p))


def test_transpose_of_batch_with_sparse_axis_raises_jax_error() -> None:
    x = sparse_array((2, 3), seed=7)
    with pytest.raises(NotImplementedError) as jerr:
        js.BCOO.fromdense(x, n_batch=1).transpose()
    with pytest.raises(NotImplementedError) as lerr:
        ls.BCOO.fromdense(x, n_batch=1).transpose()
    assert str(lerr.value) == str(jerr.value)


# --- dot_general --------------------------------------------------------------------------

DOT_CASES: list[Any] = [
    # (shape, n_batch, n_dense, rhs shape, dimension numbers)
    ((3, 4), 0, 0, (4, 2), (([1], [0]), ([], []))),
    ((2, 3, 4), 1, 0, (2, 4, 5), (([2], [1]), ([0], [0]))),
    ((2, 3, 4), 1, 1, (3,), (([1], [0]), ([], []))),
]


@pytest.mark.parametrize(("shape", "n_batch", "n_dense", "rhs_shape", "dims"), DOT_CASES)
def test_dot_general_sparse_dense_and_dense_sparse_agree_with_jax(
    shape: tuple[int, ...], n_batch: int, n_dense: int, rhs_shape: tuple[int, ...], dims: Any
) -> None:
    x = sparse_array(shape, seed=8)
    y = np.random.default_rng(9).standard_normal(rhs_shape).astype(np.float32)
    expected = np.asarray(jax.lax.dot_general(x, y, dims))
    mat = ls.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    out = ls.bcoo_dot_general(mat, y, dimension_numbers=dims)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)
    jitted = lamina.jit(lambda m, v: ls.bcoo_dot_general(m, v, dimension_numbers=dims))(mat, y)
    np.testing.assert_allclose(np.asarray(jitted), expected, rtol=1e-5, atol=1e-5)
    rdims = tuple(d[::-1] for d in dims)
    rout = ls.bcoo_dot_general(y, mat, dimension_numbers=rdims)
    jrout = js.bcoo_dot_general(
        y, js.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense), dimension_numbers=rdims
    )
    np.testing.assert_allclose(np.asarray(rout), np.asarray(jrout), rtol=1e-5, atol=1e-5)


def test_dot_general_jaxpr_and_its_grad_jaxpr_equal_jax() -> None:
    x = sparse_array((3, 4), seed=10)
    v = np.ones((4, 2), np.float32)
    dims: Any = (([1], [0]), ([], []))
    mat = js.BCOO.fromdense(x)
    data, indices = np.asarray(mat.data), np.asarray(mat.indices)

    def fn(sp: Any) -> Callable[[Any, Any, Any], Any]:
        def f(d: Any, w: Any, i: Any) -> Any:
            out = sp.bcoo_dot_general(sp.BCOO((d, i), shape=(3, 4)), w, dimension_numbers=dims)
            return out.sum()

        return f

    jf, lf = fn(js), fn(ls)
    assert str(lamina.make_jaxpr(lf)(data, v, indices)) == str(jax.make_jaxpr(jf)(data, v, indices))
    for argnums in (0, 1):
        assert str(lamina.make_jaxpr(lamina.grad(lf, argnums))(data, v, indices)) == str(
            jax.make_jaxpr(jax.grad(jf, argnums))(data, v, indices)
        )
        np.testing.assert_allclose(
            np.asarray(lamina.grad(lf, argnums)(data, v, indices)),
            np.asarray(jax.grad(jf, argnums)(data, v, indices)),
            rtol=1e-6,
        )


def test_dot_general_under_vmap_agrees_with_jax() -> None:
    x = sparse_array((2, 3, 4), seed=11)
    v = np.random.default_rng(12).standard_normal((2, 4)).astype(np.float32)
    j, m = both(
        lambda sp, jj, _: jj.vmap(lambda mat, w: mat @ w)(sp.BCOO.fromdense(x, n_batch=1), v)
    )
    np.testing.assert_allclose(np.asarray(m), np.asarray(j), rtol=1e-5)


def test_dot_general_sampled_agrees_with_jax() -> None:
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    b = np.arange(8, dtype=np.float32).reshape(2, 4)
    indices = np.array([[0, 1], [2, 3], [1, 0]], np.int32)
    dims: Any = (([1], [0]), ([], []))
    j, m = both(
        lambda sp, _, __: sp.bcoo_dot_general_sampled(a, b, indices, dimension_numbers=dims)
    )
    np.testing.assert_allclose(np.asarray(m), np.asarray(j))


# --- duplicates and sorting ---------------------------------------------------------------


@pytest.mark.slow  # compiles the sort-based deduplication: ~10 s on 2 shared cores
def test_sum_duplicates_and_sort_indices_agree_with_jax() -> None:
    data = np.array([1.0, 2.0, 3.0, 0.0, 5.0], np.float32)
    indices = np.array([[2, 1], [0, 3], [2, 1], [1, 1], [0, 0]], np.int32)
    for method in ("sort_indices", "sum_duplicates", "sum_duplicates_keep_zeros"):

        def go(sp: Any, _: Any, __: Any, method: str = method) -> Any:
            mat = sp.BCOO((data, indices), shape=(3, 4))
            if method == "sort_indices":
                return mat.sort_indices()
            return mat.sum_duplicates(remove_zeros=method == "sum_duplicates")

        j, m = both(go)
        assert_same_bcoo(j, m)


def test_sum_duplicates_under_jit_needs_nse_as_jax() -> None:
    x = sparse_array((3, 4), seed=13)
    j, m = both(
        lambda sp, jj, _: jj.jit(lambda mat: sp.bcoo_sum_duplicates(mat, nse=8))(
            sp.BCOO.fromdense(x)
        )
    )
    assert_same_bcoo(j, m)
    with pytest.raises(ValueError) as jerr:
        jax.jit(js.bcoo_sum_duplicates)(js.BCOO.fromdense(x))
    with pytest.raises(ValueError) as lerr:
        lamina.jit(ls.bcoo_sum_duplicates)(ls.BCOO.fromdense(x))
    assert str(lerr.value) == str(jerr.value)


# --- errors -------------------------------------------------------------------------------


def test_invalid_buffers_raise_jax_errors() -> None:
    data = np.ones(3, np.float32)
    indices = np.zeros((4, 2), np.int32)
    errors = []
    for sp in (js, ls):
        with pytest.raises(ValueError) as err:
            sp.BCOO((data, indices), shape=(3, 4))
        errors.append(str(err.value))
    assert errors[1] == errors[0]


def test_traced_nse_raises_concretization_error_as_jax() -> None:
    x = sparse_array((3, 4), seed=14)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda a: js.BCOO.fromdense(a).data)(x)
    with pytest.raises(lamina.errors.ConcretizationTypeError) as err:
        lamina.jit(lambda a: ls.BCOO.fromdense(a).data)(x)
    assert "you must pass a concrete" in str(err.value)


# --- sparsify, operators, autodiff --------------------------------------------------------


def test_sparsify_values_and_jaxpr_equal_jax() -> None:
    x = sparse_array((3, 4), seed=15)
    v = np.arange(4, dtype=np.float32)

    def make(jnp: Any) -> Callable[[Any, Any], Any]:
        return lambda m, w: -(jnp.sin(m) @ w) * 2.0

    j, m = both(lambda sp, _, jnp: sp.sparsify(make(jnp))(sp.BCOO.fromdense(x), v))
    np.testing.assert_allclose(np.asarray(m), np.asarray(j), rtol=1e-6)
    jm, lm = js.BCOO.fromdense(x), ls.BCOO.fromdense(x)
    assert str(lamina.make_jaxpr(ls.sparsify(make(ljnp)))(lm, v)) == str(
        jax.make_jaxpr(js.sparsify(make(jjnp)))(jm, v)
    )


def test_bcoo_operators_agree_with_jax() -> None:
    x = sparse_array((3, 4), seed=16)
    v = np.arange(4, dtype=np.float32)

    def go(sp: Any, jj: Any, __: Any) -> Any:
        def f(m: Any) -> Any:
            return (m @ v, (m * 3.0).todense(), (m + m).todense(), m.sum(1).todense())

        return jj.jit(f)(sp.BCOO.fromdense(x))

    for j, m in zip(*both(go), strict=True):
        np.testing.assert_allclose(np.asarray(m), np.asarray(j), rtol=1e-6)


def test_sparse_grad_and_value_and_grad_agree_with_jax() -> None:
    x = sparse_array((3, 4), seed=17)
    v = np.arange(4, dtype=np.float32)

    def f(m: Any, w: Any) -> Any:
        return (m @ w).sum()

    j, m = both(lambda sp, _, __: sp.grad(f)(sp.BCOO.fromdense(x), v))
    assert_same_bcoo(j, m)
    j2, m2 = both(lambda sp, _, __: sp.value_and_grad(f, argnums=(0, 1))(sp.BCOO.fromdense(x), v))
    np.testing.assert_allclose(np.asarray(m2[0]), np.asarray(j2[0]), rtol=1e-6)
    assert_same_bcoo(j2[1][0], m2[1][0])
    np.testing.assert_allclose(np.asarray(m2[1][1]), np.asarray(j2[1][1]), rtol=1e-6)
    j3, m3 = both(lambda sp, _, __: sp.jacfwd(lambda m: m @ v)(sp.BCOO.fromdense(x)))
    assert_same_bcoo(j3, m3)


def test_todense_primitive_jaxpr_and_grad_equal_jax() -> None:
    x = sparse_array((3, 4), seed=18)
    jm, lm = js.BCOO.fromdense(x), ls.BCOO.fromdense(x)
    assert str(lamina.make_jaxpr(ls.todense)(lm)) == str(jax.make_jaxpr(js.todense)(jm))
    indices = np.asarray(jm.indices)

    def loss(sp: Any) -> Callable[[Any], Any]:
        return lambda d: (sp.todense(sp.BCOO((d, indices), shape=(3, 4))) ** 2).sum()

    j, m = both(lambda sp, jj, _: jj.grad(loss(sp))(np.asarray(jm.data)))
    np.testing.assert_allclose(np.asarray(m), np.asarray(j), rtol=1e-6)


@pytest.mark.parametrize("k", [-1, 0, 2])
def test_eye_and_empty_agree_with_jax(k: int) -> None:
    j, m = both(lambda sp, _, __: sp.eye(3, 4, k=k))
    assert_same_bcoo(j, m)
    j, m = both(lambda sp, _, __: sp.empty((2, 3), n_batch=1, nse=2))
    assert_same_bcoo(j, m)


@pytest.mark.slow  # compiles the sort-based deduplication: ~10 s on 2 shared cores
def test_sparse_sparse_dot_general_agrees_with_jax() -> None:
    x, y = sparse_array((3, 4), seed=19), sparse_array((4, 2), seed=20)

    def go(sp: Any, _: Any, __: Any) -> Any:
        return sp.BCOO.fromdense(x) @ sp.BCOO.fromdense(y)

    j, m = both(go)
    assert_same_bcoo(j, m)


@pytest.mark.slow  # compiles the sort-based deduplication: ~10 s on 2 shared cores
def test_random_bcoo_agrees_with_jax() -> None:
    def go(sp: Any, jj: Any, __: Any) -> Any:
        return sp.random_bcoo(jj.random.key(0), (2, 3, 4), n_batch=1, nse=3, sorted_indices=True)

    j, m = both(go)
    assert_same_bcoo(j, m)


def test_shape_operations_agree_with_jax() -> None:
    x = sparse_array((2, 3, 4), seed=21)

    def go(sp: Any, jj: Any, __: Any) -> Any:
        def f(m: Any, m1: Any, i: Any) -> Any:
            return (
                sp.bcoo_slice(
                    m, start_indices=(0, 1, 0), limit_indices=(2, 3, 4), strides=(1, 1, 2)
                ),
                sp.bcoo_rev(m, (0, 2)),
                sp.bcoo_squeeze(m1, dimensions=(0,)),
                sp.bcoo_reshape(m, new_sizes=(2, 12)),
                sp.bcoo_concatenate([m, m], dimension=1),
                sp.bcoo_dynamic_slice(m, (i, 1, 1), (1, 2, 2)),
            )

        # One compiled program: eagerly each jnp operation would compile on its own.
        return jj.jit(f)(sp.BCOO.fromdense(x, n_batch=1), sp.BCOO.fromdense(x[:1]), 1)

    for j, m in zip(*both(go), strict=True):
        assert_same_bcoo(j, m)


def test_spsolve_and_its_gradient_agree_with_jax() -> None:
    a = np.array([[4.0, 1.0, 0.0], [0.0, 3.0, 1.0], [1.0, 0.0, 2.0]], np.float32)
    b = np.arange(1, 4, dtype=np.float32)
    nz = a.nonzero()
    indptr = np.concatenate([[0], np.cumsum(np.bincount(nz[0], minlength=3))]).astype(np.int32)
    args = (a[nz], nz[1].astype(np.int32), indptr)
    from jax.experimental.sparse import linalg as jax_linalg

    jl: Any = jax_linalg
    np.testing.assert_allclose(
        np.asarray(ls.linalg.spsolve(*args, b)), np.asarray(jl.spsolve(*args, b)), rtol=1e-6
    )
    np.testing.assert_allclose(
        np.asarray(lamina.grad(lambda v: ls.linalg.spsolve(*args, v).sum())(b)),
        np.asarray(jax.grad(lambda v: jl.spsolve(*args, v).sum())(b)),
        rtol=1e-6,
    )


def test_update_layout_and_multiply_sparse_agree_with_jax() -> None:
    x = sparse_array((2, 3, 4), seed=22)

    def go(sp: Any, jj: Any, __: Any) -> Any:
        def f(a: Any, b: Any, c: Any) -> Any:
            return (
                sp.bcoo_update_layout(a, n_batch=0, n_dense=0),
                sp.bcoo_update_layout(b, n_batch=1, n_dense=1, on_inefficient=None),
                sp.bcoo_multiply_sparse(c, b),
            )

        a = sp.BCOO.fromdense(x, n_batch=1, n_dense=1)
        return jj.jit(f)(a, sp.BCOO.fromdense(x), sp.BCOO.fromdense(x, n_batch=1))

    for j, m in zip(*both(go), strict=True):
        assert_same_bcoo(j, m)
    errors = []
    for sp in (js, ls):
        with pytest.raises(Exception) as err:
            sp.bcoo_update_layout(sp.BCOO.fromdense(x), n_batch=1)
        errors.append((type(err.value).__name__, str(err.value)))
    assert errors[1] == errors[0]


def test_indexing_gathers_like_jax() -> None:
    x = sparse_array((2, 3, 4), seed=23)

    def go(sp: Any, jj: Any, __: Any) -> Any:
        f = jj.jit(lambda m: (m[1], m[:, 1:], m[0, np.array([0, 2])]))
        return f(sp.BCOO.fromdense(x, n_batch=1))

    for j, m in zip(*both(go), strict=True):
        assert_same_bcoo(j, m)


def test_sparsify_through_cond_and_custom_jvp_agrees_with_jax() -> None:
    x = sparse_array((3, 4), seed=24)

    def go(sp: Any, jj: Any, jnp: Any) -> Any:
        def body(y: Any) -> Any:
            return jnp.sin(y) * 2.0

        f = jj.custom_jvp(body)
        f.defjvp(lambda p, t: (f(p[0]), t[0]))

        def g(p: Any, m: Any) -> Any:
            return jj.lax.cond(p, lambda m: f(m), lambda m: -m, m)

        return jj.jit(sp.sparsify(g))(True, sp.BCOO.fromdense(x))

    j, m = both(go)
    np.testing.assert_allclose(np.asarray(m.todense()), np.asarray(j.todense()), rtol=1e-6)


def test_sparsify_through_while_and_scan_agrees_with_jax() -> None:
    x = sparse_array((3, 4), seed=25)

    def go(sp: Any, jj: Any, __: Any) -> Any:
        def f(m: Any) -> Any:
            m = jj.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, m))[1]
            return jj.lax.scan(lambda c, _: (c * 3.0, None), m, None, length=2)[0]

        return jj.jit(sp.sparsify(f))(sp.BCOO.fromdense(x))

    j, m = both(go)
    np.testing.assert_allclose(np.asarray(m.todense()), np.asarray(j.todense()), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(m.todense()), x * 72.0, rtol=1e-6)


def test_conv_general_dilated_agrees_with_jax() -> None:
    x = np.array([[[0, 1.0, 0, 2, 0, 3]]], np.float32)
    k = np.array([[[1.0, 0, 2]]], np.float32)

    def go(sp: Any, jj: Any, __: Any) -> Any:
        def f(a: Any, b: Any) -> Any:
            return sp.bcoo_conv_general_dilated(a, b, window_strides=(1,), padding="SAME")

        return jj.jit(f)(sp.BCOO.fromdense(x), sp.BCOO.fromdense(k))

    j, m = both(go)
    assert_same_bcoo(j, m)
