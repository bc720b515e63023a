# ruff: noqa: E501  (one case per line reads best)
"""vmap of contractions, gathers, scatters and sorts against JAX: `dot_general`, `gather`, the
scatters, `sort` and `top_k` through `lax` and through `jnp` (indexing, `.at[]` updates,
`take`, products, `einsum`), with the mapped axis first, inner, or on one operand only."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core.testing import Oracle, check_vmap, sweep

pytestmark = pytest.mark.oracle

f32, i32 = np.float32, np.int32


def arr(*shape: int, lo: float = -0.8, hi: float = 0.9) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return np.linspace(lo, hi, n).reshape(shape).astype(f32)


def shuffled(*shape: int, seed: int = 0) -> np.ndarray:
    """Distinct values in a scrambled order (sorts and top_k without ties)."""
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n) * 0.25 - 1.0).reshape(shape).astype(f32)


def ints(*shape: int, hi: int = 4, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, hi, shape).astype(i32)


def gdn(
    lax: Any, offset: Any = (1,), collapsed: Any = (0,), start: Any = (0,), **batching: Any
) -> Any:
    return lax.GatherDimensionNumbers(
        offset_dims=offset, collapsed_slice_dims=collapsed, start_index_map=start, **batching
    )


def sdn(
    lax: Any, window: Any = (1,), inserted: Any = (0,), to_operand: Any = (0,), **batching: Any
) -> Any:
    return lax.ScatterDimensionNumbers(
        update_window_dims=window,
        inserted_window_dims=inserted,
        scatter_dims_to_operand_dims=to_operand,
        **batching,
    )


IDX = ints(3, 2, 1, hi=5)  # three examples of two index vectors into 5 rows

# (name, program, args, in_axes, out_axes)
LAX_CASES: list[tuple[str, Any, tuple[Any, ...], Any, Any]] = [
    # dot_general
    ("B5 dot lhs mapped", lambda jnp, lax: lambda a, b: lax.dot(a, b), (arr(5, 3), arr(3, 4)), (0, None), 0),
    ("B6 dot rhs mapped at 1", lambda jnp, lax: lambda a, b: lax.dot(a, b), (arr(2, 3), arr(3, 5)), (None, 1), 0),
    ("dot both mapped", lambda jnp, lax: lambda a, b: lax.dot(a, b), (arr(3, 2, 4), arr(3, 4, 5)), (0, 0), 0),
    ("dot both mapped, inner axes", lambda jnp, lax: lambda a, b: lax.dot(a, b), (arr(2, 3, 4), arr(4, 5, 3)), (1, 2), 0),
    ("dot vectors both mapped", lambda jnp, lax: lambda a, b: lax.dot(a, b), (arr(3, 4), arr(4, 3)), (0, 1), 0),
    ("dot vectors rhs mapped", lambda jnp, lax: lambda a, b: lax.dot(a, b), (arr(4), arr(4, 3)), (None, 1), 0),
    ("dot matrix-vector lhs mapped at 2", lambda jnp, lax: lambda a, b: lax.dot(a, b), (arr(2, 4, 3), arr(4)), (2, None), 0),
    ("dot out_axes 1", lambda jnp, lax: lambda a, b: lax.dot(a, b), (arr(3, 2, 4), arr(4, 5)), (0, None), 1),
    ("dot_general batch dims both mapped", lambda jnp, lax: lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((0,), (1,)))), (arr(2, 3, 4), arr(4, 2, 3)), (1, 2), 0),
    ("dot_general batch dims lhs mapped", lambda jnp, lax: lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), (arr(2, 5, 4, 3), arr(2, 4, 6)), (3, None), 0),
    ("dot_general batch dims rhs mapped", lambda jnp, lax: lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), (arr(2, 5, 4), arr(2, 3, 4, 6)), (None, 1), 0),
    ("dot_general contract two dims", lambda jnp, lax: lambda a, b: lax.dot_general(a, b, (((0, 2), (1, 0)), ((), ()))), (arr(2, 3, 5, 4), arr(4, 2, 6)), (1, None), 0),
    ("dot_general int preferred f32", lambda jnp, lax: lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.float32), (ints(3, 2, 4), ints(4, 2)), (0, None), 0),
    ("dot_general precision highest", lambda jnp, lax: lambda a, b: lax.dot(a, b, precision=lax.Precision.HIGHEST), (arr(3, 4), arr(4, 3)), (1, 0), 0),
    ("batch_matmul lhs mapped", lambda jnp, lax: lambda a, b: lax.batch_matmul(a, b), (arr(2, 3, 4, 5), arr(2, 5, 6)), (1, None), 0),
    # sort and top_k
    ("sort mapped 0", lambda jnp, lax: lambda x: lax.sort(x), (shuffled(3, 5),), 0, 0),
    ("sort mapped 1 along 0", lambda jnp, lax: lambda x: lax.sort(x, dimension=0), (shuffled(4, 3, 2),), 1, 0),
    ("sort mapped 1 along 1", lambda jnp, lax: lambda x: lax.sort(x, dimension=1), (shuffled(4, 3, 2),), 1, 0),
    ("sort two operands mapped apart", lambda jnp, lax: lambda k, v: lax.sort((k, v), num_keys=1), (shuffled(3, 4), arr(4, 3)), (0, 1), 0),
    ("sort second operand unmapped", lambda jnp, lax: lambda k, v: lax.sort((k, v), num_keys=1), (shuffled(4, 3), arr(4)), (1, None), 0),
    ("sort first operand unmapped", lambda jnp, lax: lambda k, v: lax.sort((k, v), num_keys=1), (shuffled(2, 4), arr(2, 3, 4)), (None, 1), 0),
    ("sort two keys three operands", lambda jnp, lax: lambda a, b, c: lax.sort((a, b, c), num_keys=2), (ints(3, 6, hi=2), shuffled(6), ints(6, 3)), (0, None, 1), 0),
    ("sort_key_val", lambda jnp, lax: lambda k, v: lax.sort_key_val(k, v), (shuffled(5, 3), ints(3, 5)), (1, 0), 0),
    ("sort unstable ints", lambda jnp, lax: lambda x: lax.sort(x, is_stable=False), (ints(2, 3, 5, hi=9),), 1, 0),
    ("top_k mapped 0", lambda jnp, lax: lambda x: lax.top_k(x, 2), (shuffled(3, 5),), 0, 0),
    ("top_k mapped last", lambda jnp, lax: lambda x: lax.top_k(x, 3), (shuffled(4, 6, 3),), 2, 0),
    ("top_k along axis 0", lambda jnp, lax: lambda x: lax.top_k(x, 1, axis=0), (shuffled(4, 3, 2),), 1, 1),
    # gather
    ("gather operand mapped", lambda jnp, lax: lambda x, i: lax.gather(x, i, gdn(lax), (1, 4)), (arr(3, 5, 4), IDX[0]), (0, None), 0),
    ("gather operand mapped at 2", lambda jnp, lax: lambda x, i: lax.gather(x, i, gdn(lax), (1, 4)), (arr(5, 4, 3), IDX[0]), (2, None), 0),
    ("gather indices mapped", lambda jnp, lax: lambda x, i: lax.gather(x, i, gdn(lax), (1, 4)), (arr(5, 4), IDX), (None, 0), 0),
    ("gather indices mapped at 1", lambda jnp, lax: lambda x, i: lax.gather(x, i, gdn(lax), (1, 4)), (arr(5, 4), IDX.transpose(1, 0, 2)), (None, 1), 0),
    ("gather both mapped", lambda jnp, lax: lambda x, i: lax.gather(x, i, gdn(lax), (1, 4)), (arr(5, 3, 4), IDX.transpose(1, 0, 2)), (1, 1), 0),
    ("gather both mapped, unique sorted", lambda jnp, lax: lambda x, i: lax.gather(x, i, gdn(lax), (1, 4), unique_indices=True, indices_are_sorted=True), (arr(3, 5, 4), np.array([[[0], [3]], [[1], [2]], [[0], [4]]], i32)), (0, 0), 0),
    ("gather fill mode, operand mapped", lambda jnp, lax: lambda x, i: lax.gather(x, i, gdn(lax), (1, 4), mode="fill", fill_value=-1.0), (arr(3, 5, 4), np.array([[1], [7]], i32)), (0, None), 0),
    ("gather clip mode, indices mapped", lambda jnp, lax: lambda x, i: lax.gather(x, i, gdn(lax), (1, 4), mode="clip"), (arr(5, 4), np.array([[[9]], [[-2]], [[3]]], i32)), (None, 0), 0),
    ("gather with batching dims, both mapped", lambda jnp, lax: lambda x, i: lax.gather(x, i, gdn(lax, offset=(), collapsed=(1,), start=(1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,)), (1, 1)), (arr(2, 5, 3), ints(3, 2, 1, hi=5)), (2, 0), 0),
    ("gather with batching dims, operand mapped", lambda jnp, lax: lambda x, i: lax.gather(x, i, gdn(lax, offset=(), collapsed=(1,), start=(1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,)), (1, 1)), (arr(3, 2, 5), ints(2, 1, hi=5)), (0, None), 0),
    ("gather with batching dims, indices mapped", lambda jnp, lax: lambda x, i: lax.gather(x, i, gdn(lax, offset=(), collapsed=(1,), start=(1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,)), (1, 1)), (arr(2, 5), ints(2, 3, 1, hi=5)), (None, 1), 0),
    # scatters
    ("scatter-add indices and updates mapped", lambda jnp, lax: lambda x, i, u: lax.scatter_add(x, i, u, sdn(lax)), (arr(5, 4), IDX, arr(3, 2, 4)), (None, 0, 0), 0),
    ("scatter operand mapped", lambda jnp, lax: lambda x, i, u: lax.scatter(x, i, u, sdn(lax)), (arr(5, 3, 4), IDX[0], arr(2, 4)), (1, None, None), 0),
    ("scatter-mul all mapped", lambda jnp, lax: lambda x, i, u: lax.scatter_mul(x, i, u, sdn(lax)), (arr(3, 5, 4), IDX, arr(2, 4, 3)), (0, 0, 2), 0),
    ("scatter-max updates mapped, clip", lambda jnp, lax: lambda x, i, u: lax.scatter_max(x, i, u, sdn(lax), mode="clip"), (arr(5, 4), np.array([[1], [8]], i32), arr(2, 4, 3)), (None, None, 2), 0),
    ("scatter-min indices mapped only", lambda jnp, lax: lambda x, i, u: lax.scatter_min(x, i, u, sdn(lax)), (arr(5, 4), IDX, arr(2, 4, lo=-2.0)), (None, 0, None), 0),
    ("scatter-sub operand and updates mapped", lambda jnp, lax: lambda x, i, u: lax.scatter_sub(x, i, u, sdn(lax)), (arr(5, 4, 3), IDX[1], arr(3, 2, 4)), (2, None, 0), 0),
    ("scatter indices mapped at 1", lambda jnp, lax: lambda x, i, u: lax.scatter(x, i, u, sdn(lax), unique_indices=True), (arr(3, 5, 4), np.array([[[0], [1], [4]], [[2], [3], [0]]], i32), arr(3, 2, 4)), (0, 1, 0), 0),
    ("scatter-add with batching dims", lambda jnp, lax: lambda x, i, u: lax.scatter_add(x, i, u, sdn(lax, window=(), inserted=(1,), to_operand=(1,), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))), (arr(2, 5), ints(3, 2, 1, hi=5), arr(3, 2)), (None, 0, 0), 0),
    ("scatter-add with batching dims, operand mapped", lambda jnp, lax: lambda x, i, u: lax.scatter_add(x, i, u, sdn(lax, window=(), inserted=(1,), to_operand=(1,), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))), (arr(2, 5, 3), ints(2, 1, hi=5), arr(2)), (2, None, None), 0),
]  # fmt: skip


def _first_word(case_id: str) -> str:
    """`x[i]`, `take`, `jnp.asarray(x).at[i].set(v)`: the indexing form a case exercises."""
    return case_id.split(" ")[0]


def _transform(case_id: str) -> str:
    """`vmap of grad through sort`: the transformation under `vmap`."""
    return case_id.split(" ")[2]


@pytest.mark.parametrize(
    ("name", "program", "args", "in_axes", "out_axes"),
    sweep(LAX_CASES, [c[0] for c in LAX_CASES], kind=_first_word),
)
def test_lax_vmap_as_jax(
    oracle: Oracle, name: str, program: Any, args: Any, in_axes: Any, out_axes: Any
) -> None:
    check_vmap(oracle, program, *args, in_axes=in_axes, out_axes=out_axes)


ROWS = ints(3, 2, hi=5, seed=2)  # three examples of two row numbers into 5 rows

JNP_CASES: list[tuple[str, Any, tuple[Any, ...], Any, Any]] = [
    # indexing (gather)
    ("x[i] batched scalar index", lambda jnp, lax: lambda x, i: jnp.asarray(x)[i], (arr(5, 4), np.array([4, 0, 2], i32)), (None, 0), 0),
    ("x[i] batched operand and index", lambda jnp, lax: lambda x, i: jnp.asarray(x)[i], (arr(3, 5), np.array([1, -1, 3], i32)), (0, 0), 0),
    ("x[i] batched operand, unmapped index", lambda jnp, lax: lambda x, i: jnp.asarray(x)[i], (arr(5, 3, 2), i32(2)), (1, None), 0),
    ("x[idx] index array mapped", lambda jnp, lax: lambda x, i: jnp.asarray(x)[i], (arr(5, 4), ROWS), (None, 0), 0),
    ("x[idx] both mapped", lambda jnp, lax: lambda x, i: jnp.asarray(x)[i], (arr(5, 4, 3), ROWS.T), (2, 1), 0),
    ("x[:, idx] operand mapped", lambda jnp, lax: lambda x, i: jnp.asarray(x)[:, i], (arr(3, 4, 5), ROWS[0]), (0, None), 0),
    ("x[:, idx] index mapped", lambda jnp, lax: lambda x, i: jnp.asarray(x)[:, i], (arr(4, 5), ROWS), (None, 0), 0),
    ("x[i, j] two index arrays", lambda jnp, lax: lambda x, i, j: jnp.asarray(x)[i, j], (arr(5, 4), ROWS, ints(3, 2, hi=4, seed=3)), (None, 0, 0), 0),
    ("x[i, :, j] both mapped", lambda jnp, lax: lambda x, i, j: jnp.asarray(x)[i, :, j], (arr(3, 5, 2, 4), ROWS, ints(2, hi=4, seed=3)), (0, 0, None), 0),
    ("x[idx] with a slice after", lambda jnp, lax: lambda x, i: jnp.asarray(x)[i, 1:3], (arr(5, 3, 4), ROWS), (1, 0), 0),
    ("x[i] out_axes 1", lambda jnp, lax: lambda x, i: jnp.asarray(x)[i], (arr(5, 4), ROWS), (None, 0), 1),
    ("jnp.asarray(x).at[idx].get fill", lambda jnp, lax: lambda x, i: jnp.asarray(x).at[i].get(mode="fill", fill_value=0.0), (arr(5, 4), np.array([[0, 7], [2, -9], [4, 1]], i32)), (None, 0), 0),
    # index updates (scatter)
    ("jnp.asarray(x).at[i].set(v) operand mapped", lambda jnp, lax: lambda x, i, v: jnp.asarray(x).at[i].set(v), (arr(3, 5), i32(2), f32(9)), (0, None, None), 0),
    ("jnp.asarray(x).at[i].set(v) index mapped", lambda jnp, lax: lambda x, i, v: jnp.asarray(x).at[i].set(v), (arr(5, 4), np.array([0, 3, 4], i32), arr(4)), (None, 0, None), 0),
    ("jnp.asarray(x).at[i].set(v) value mapped", lambda jnp, lax: lambda x, i, v: jnp.asarray(x).at[i].set(v), (arr(5, 4), i32(1), arr(4, 3)), (None, None, 1), 0),
    ("jnp.asarray(x).at[i].set(v) all mapped", lambda jnp, lax: lambda x, i, v: jnp.asarray(x).at[i].set(v), (arr(5, 3, 4), np.array([0, 3, 4], i32), arr(3, 4)), (1, 0, 0), 0),
    ("jnp.asarray(x).at[idx].add(v) index mapped", lambda jnp, lax: lambda x, i, v: jnp.asarray(x).at[i].add(v), (arr(5, 4), ROWS, arr(2, 4)), (None, 0, None), 0),
    ("jnp.asarray(x).at[idx].add(v) all mapped", lambda jnp, lax: lambda x, i, v: jnp.asarray(x).at[i].add(v), (arr(3, 5), ROWS, arr(2, 3)), (0, 0, 1), 0),
    ("jnp.asarray(x).at[idx].add(1.0) repeated indices", lambda jnp, lax: lambda x, i: jnp.asarray(x).at[i].add(1.0), (arr(3, 5), np.array([[1, 1], [0, 4], [2, 2]], i32)), (0, 0), 0),
    ("jnp.asarray(x).at[idx].mul(v)", lambda jnp, lax: lambda x, i, v: jnp.asarray(x).at[i].multiply(v), (arr(5, 2, 3), ROWS, arr(2, 2)), (2, 0, None), 0),
    ("jnp.asarray(x).at[idx].min(v)", lambda jnp, lax: lambda x, i, v: jnp.asarray(x).at[i].min(v), (arr(5, 4), ROWS, arr(3, 2, 4, lo=-2.0)), (None, 0, 0), 0),
    ("jnp.asarray(x).at[idx].max(v)", lambda jnp, lax: lambda x, i, v: jnp.asarray(x).at[i].max(v), (arr(3, 5, 4), ROWS[0], arr(2, 4)), (0, None, None), 0),
    ("jnp.asarray(x).at[:, idx].set(v)", lambda jnp, lax: lambda x, i, v: jnp.asarray(x).at[:, i].set(v), (arr(4, 5), ROWS, arr(3, 4, 2)), (None, 0, 0), 0),
    ("jnp.asarray(x).at[i, j].add(v) two arrays", lambda jnp, lax: lambda x, i, j, v: jnp.asarray(x).at[i, j].add(v), (arr(5, 4), ROWS, ints(2, hi=4, seed=3), f32(2)), (None, 0, None, None), 0),
    ("jnp.asarray(x).at[idx].set drop mode", lambda jnp, lax: lambda x, i, v: jnp.asarray(x).at[i].set(v, mode="drop"), (arr(5, 4), np.array([[0, 7], [2, -9], [4, 1]], i32), arr(2, 4)), (None, 0, None), 0),
    ("x.at[idx].apply(sin)", lambda jnp, lax: lambda x, i: jnp.asarray(x).at[i].apply(jnp.sin), (arr(3, 5), ROWS), (0, 0), 0),
    ("x.at[idx].divide(v)", lambda jnp, lax: lambda x, i, v: jnp.asarray(x).at[i].divide(v), (arr(5, 4), ROWS, arr(3, 2, 4, lo=1.0, hi=2.0)), (None, 0, 0), 0),
    ("x.at[idx].power(2)", lambda jnp, lax: lambda x, i: jnp.asarray(x).at[i].power(2), (arr(5, 3), ROWS[2]), (1, None), 0),
    ("lax.scatter_apply operand mapped", lambda jnp, lax: lambda x, i: lax.scatter_apply(x, i, jnp.exp, sdn(lax, window=(), inserted=(0,), to_operand=(0,)), update_shape=(2,)), (arr(5, 3), IDX[0]), (1, None), 0),
    # take and take_along_axis
    ("take axis 0 index mapped", lambda jnp, lax: lambda x, i: jnp.take(x, i, axis=0), (arr(5, 4), ROWS), (None, 0), 0),
    ("take axis 1 operand mapped", lambda jnp, lax: lambda x, i: jnp.take(x, i, axis=1), (arr(3, 4, 5), ROWS[1]), (0, None), 0),
    ("take flattened both mapped", lambda jnp, lax: lambda x, i: jnp.take(x, i), (arr(4, 5, 3), ints(3, 4, hi=20)), (2, 0), 0),
    ("take clip mode", lambda jnp, lax: lambda x, i: jnp.take(x, i, axis=0, mode="clip"), (arr(5, 4), np.array([[0, 7], [2, -9], [4, 1]], i32)), (None, 0), 0),
    ("take fill mode", lambda jnp, lax: lambda x, i: jnp.take(x, i, axis=1, mode="fill", fill_value=-1.0), (arr(3, 2, 5), np.array([[0, 7], [2, 3], [4, 1]], i32)), (0, 0), 0),
    ("take_along_axis last", lambda jnp, lax: lambda x, i: jnp.take_along_axis(x, i, axis=-1), (arr(3, 4, 5), ints(3, 4, 2, hi=5)), (0, 0), 0),
    ("take_along_axis index mapped", lambda jnp, lax: lambda x, i: jnp.take_along_axis(x, i, axis=0), (arr(5, 4), ints(2, 4, 3, hi=5)), (None, 2), 0),
    ("take_along_axis of argsort", lambda jnp, lax: lambda x: jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1), (shuffled(4, 3, 5),), 1, 0),
    # sorting
    ("jnp.sort mapped 0", lambda jnp, lax: lambda x: jnp.sort(x), (shuffled(3, 6),), 0, 0),
    ("jnp.sort axis 0 mapped 1", lambda jnp, lax: lambda x: jnp.sort(x, axis=0), (shuffled(4, 3, 2),), 1, 0),
    ("jnp.sort descending", lambda jnp, lax: lambda x: jnp.sort(x, descending=True), (shuffled(5, 3),), 1, 0),
    ("jnp.argsort", lambda jnp, lax: lambda x: jnp.argsort(x), (shuffled(3, 6),), 0, 0),
    ("jnp.argsort axis 0 mapped 2", lambda jnp, lax: lambda x: jnp.argsort(x, axis=0), (shuffled(4, 2, 3),), 2, 0),
    ("jnp.argsort descending", lambda jnp, lax: lambda x: jnp.argsort(x, descending=True), (shuffled(3, 5),), 0, 1),
    ("lax.top_k of a jnp product", lambda jnp, lax: lambda x, w: lax.top_k(jnp.dot(x, w), 2), (arr(3, 4), shuffled(4, 5)), (0, None), 0),
    # products
    ("jnp.dot vector vector", lambda jnp, lax: lambda a, b: jnp.dot(a, b), (arr(3, 4), arr(4)), (0, None), 0),
    ("jnp.dot matrix vector", lambda jnp, lax: lambda a, b: jnp.dot(a, b), (arr(2, 4), arr(4, 3)), (None, 1), 0),
    ("jnp.dot 3d 2d", lambda jnp, lax: lambda a, b: jnp.dot(a, b), (arr(2, 3, 4, 5), arr(5, 2)), (1, None), 0),
    ("jnp.dot scalar", lambda jnp, lax: lambda a, b: jnp.dot(a, b), (arr(3), arr(2, 3)), (0, 1), 0),
    ("jnp.matmul vector vector", lambda jnp, lax: lambda a, b: jnp.matmul(a, b), (arr(3, 4), arr(4, 3)), (0, 1), 0),
    ("jnp.matmul vector matrix", lambda jnp, lax: lambda a, b: jnp.matmul(a, b), (arr(4), arr(3, 4, 2)), (None, 0), 0),
    ("jnp.matmul matrix vector", lambda jnp, lax: lambda a, b: jnp.asarray(a) @ b, (arr(2, 4, 3), arr(4)), (2, None), 0),
    ("jnp.matmul batched 3d 2d", lambda jnp, lax: lambda a, b: jnp.asarray(a) @ b, (arr(3, 2, 3, 4), arr(4, 5)), (0, None), 0),
    ("jnp.matmul broadcast batch 2d 3d", lambda jnp, lax: lambda a, b: jnp.matmul(a, b), (arr(3, 3, 4), arr(2, 4, 5)), (1, None), 0),
    ("jnp.matmul batched 3d 3d", lambda jnp, lax: lambda a, b: jnp.asarray(a) @ b, (arr(2, 3, 5, 4), arr(2, 4, 5, 3)), (1, 3), 0),
    ("jnp.matmul broadcast batch dims", lambda jnp, lax: lambda a, b: jnp.matmul(a, b), (arr(1, 2, 3, 4), arr(2, 1, 4, 3, 5)), (None, 3), 0),
    ("jnp.einsum matrix product", lambda jnp, lax: lambda a, b: jnp.einsum("ij,jk->ik", a, b), (arr(2, 3, 4), arr(4, 5)), (1, None), 0),
    ("jnp.einsum batch contraction", lambda jnp, lax: lambda a, b: jnp.einsum("bij,bjk->bki", a, b), (arr(2, 3, 4, 3), arr(3, 2, 4, 5)), (3, 0), 0),
    ("jnp.einsum trace and sum", lambda jnp, lax: lambda a: jnp.einsum("ii->", a), (arr(3, 4, 4),), 0, 0),
    ("jnp.einsum outer", lambda jnp, lax: lambda a, b: jnp.einsum("i,j->ij", a, b), (arr(4, 3), arr(5)), (1, None), 0),
    ("jnp.outer", lambda jnp, lax: lambda a, b: jnp.outer(a, b), (arr(3, 4), arr(5, 3)), (0, 1), 0),
    ("jnp.outer unmapped rhs", lambda jnp, lax: lambda a, b: jnp.outer(a, b), (arr(3, 4), arr(2, 2)), (0, None), 0),
    ("jnp.inner", lambda jnp, lax: lambda a, b: jnp.inner(a, b), (arr(3, 2, 4), arr(5, 4)), (0, None), 0),
    ("jnp.inner vectors", lambda jnp, lax: lambda a, b: jnp.inner(a, b), (arr(4, 3), arr(3, 4)), (1, 0), 0),
    ("jnp.tensordot axes 1", lambda jnp, lax: lambda a, b: jnp.tensordot(a, b, axes=1), (arr(2, 3, 4), arr(4, 5)), (1, None), 0),
    ("jnp.tensordot axes 2", lambda jnp, lax: lambda a, b: jnp.tensordot(a, b, axes=2), (arr(2, 3, 4, 3), arr(3, 4, 5, 3)), (3, 3), 0),
    ("jnp.tensordot axes pairs", lambda jnp, lax: lambda a, b: jnp.tensordot(a, b, axes=([0], [1])), (arr(4, 2), arr(3, 5, 4)), (None, 0), 0),
    ("jnp.vdot", lambda jnp, lax: lambda a, b: jnp.vdot(a, b), (arr(3, 2, 3), arr(6)), (0, None), 0),
    ("jnp.vdot both mapped", lambda jnp, lax: lambda a, b: jnp.vdot(a, b), (arr(4, 3), arr(3, 4)), (1, 0), 0),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "program", "args", "in_axes", "out_axes"),
    sweep(JNP_CASES, [c[0] for c in JNP_CASES], kind=_first_word),
)
def test_jnp_vmap_as_jax(
    oracle: Oracle, name: str, program: Any, args: Any, in_axes: Any, out_axes: Any
) -> None:
    check_vmap(oracle, program, *args, in_axes=in_axes, out_axes=out_axes)


def _api(oracle: Oracle, jnp: Any) -> Any:
    """JAX's transformations for JAX's programs, Lamina's for Lamina's."""
    return oracle.jax if jnp is oracle.jnp else lc


# Programs over the other transformations: `(name, program(oracle), args, in_axes)`.
NESTED_CASES: list[tuple[str, Any, tuple[Any, ...], Any]] = [
    ("vmap of vmap of x[i]", lambda o: lambda jnp, lax: _api(o, jnp).vmap(lambda x, i: x[i], in_axes=(1, 0)), (arr(3, 5, 2), ints(3, 2, hi=5)), (0, 0)),
    ("vmap of vmap of x.at[i].add", lambda o: lambda jnp, lax: _api(o, jnp).vmap(lambda x, i: x.at[i].add(1.0), in_axes=(0, None)), (arr(2, 3, 5), ints(3, hi=5)), (1, 0)),
    ("vmap of vmap of a dot", lambda o: lambda jnp, lax: _api(o, jnp).vmap(jnp.dot, in_axes=(None, 1)), (arr(3, 4), arr(4, 2, 3)), (0, 2)),
    ("vmap of vmap of sort", lambda o: lambda jnp, lax: _api(o, jnp).vmap(lambda k, v: lax.sort((k, v), num_keys=1), in_axes=(0, None)), (shuffled(2, 3, 4), arr(3, 4)), (1, 0)),
    ("vmap of vmap of take_along_axis", lambda o: lambda jnp, lax: _api(o, jnp).vmap(lambda x, i: jnp.take_along_axis(x, i, axis=0)), (arr(3, 2, 5), ints(3, 2, 2, hi=5)), (0, 0)),
    ("vmap of grad through x[i]", lambda o: lambda jnp, lax: _api(o, jnp).grad(lambda x, i: jnp.sum(x[i] ** 2)), (arr(3, 5, 2), ints(3, 2, hi=5)), (0, 0)),
    ("vmap of grad through a scatter", lambda o: lambda jnp, lax: _api(o, jnp).grad(lambda x, i: jnp.sum(jnp.sin(jnp.zeros(6).at[i].add(x)))), (arr(3, 2), ints(3, 2, hi=6)), (0, 0)),
    ("vmap of grad through a dot", lambda o: lambda jnp, lax: _api(o, jnp).grad(lambda w, x: jnp.sum(jnp.tanh(x @ w))), (arr(4, 2), arr(3, 5, 4)), (None, 0)),
    ("vmap of grad through sort", lambda o: lambda jnp, lax: _api(o, jnp).grad(lambda x: jnp.sort(x)[0] * 2.0 + jnp.sort(x)[-1]), (shuffled(3, 5),), 0),
    ("vmap of jvp through gather", lambda o: lambda jnp, lax: lambda x, t, i: _api(o, jnp).jvp(lambda y: jnp.take(y, i, axis=0), (x,), (t,)), (arr(3, 5), arr(5, 3), ints(3, 2, hi=5)), (0, 1, 0)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "program", "args", "in_axes"),
    sweep(NESTED_CASES, [c[0] for c in NESTED_CASES], kind=_transform),
)
def test_vmap_over_transformations_as_jax(
    oracle: Oracle, name: str, program: Any, args: Any, in_axes: Any
) -> None:
    check_vmap(oracle, program(oracle), *args, in_axes=in_axes)
