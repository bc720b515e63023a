"""Oracle tests for `lax.gather` and the scatters.

Each program prints JAX 0.10.2's jaxpr byte for byte (dimension numbers, modes, fill values,
shared update jaxprs) and the NumPy references compute XLA's numbers: clamped gathers, filled
or dropped out-of-bounds windows, repeated indices that accumulate, batching dimensions.
Ill-formed dimension numbers raise JAX's exception with JAX's message.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import hypothesis.strategies as st
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings

import lamina_core
from lamina_core import lax as llax
from lamina_core.testing import Oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
I32 = np.dtype(np.int32)
U8 = np.dtype(np.uint8)
BOOL = np.dtype(bool)
SETTINGS = settings(derandomize=True, max_examples=20, deadline=None)

pytestmark = pytest.mark.oracle


def data(shape: tuple[int, ...], dtype: np.dtype = F32) -> np.ndarray:
    values = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    out: np.ndarray = (
        values % 3 == 0 if dtype == BOOL else (values - 5 if dtype.kind == "i" else values)
    )
    return out.astype(dtype)


def idx(rows: Any, dtype: Any = np.int32) -> np.ndarray:
    return np.array(rows, dtype)


def _p(fn: Callable[[ModuleType], Callable[..., Any]]) -> Program:
    """A program that only needs `lax`."""
    return lambda jnp, lax: fn(lax)


def gather(dnums: dict[str, Any], sizes: tuple[int, ...], **kwargs: Any) -> Program:
    def program(lax: ModuleType) -> Callable[..., Any]:
        dn = lax.GatherDimensionNumbers(**dnums)
        return lambda x, i: lax.gather(x, i, dn, sizes, **kwargs)

    return _p(program)


ROWS = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,)}
POINTS = {"offset_dims": (), "collapsed_slice_dims": (0, 1), "start_index_map": (0, 1)}
WINDOWS = {"offset_dims": (1, 2), "collapsed_slice_dims": (), "start_index_map": (0, 1)}
COLUMNS = {"offset_dims": (0,), "collapsed_slice_dims": (1,), "start_index_map": (1,)}
BATCHED = {
    "offset_dims": (),
    "collapsed_slice_dims": (1,),
    "start_index_map": (1,),
    "operand_batching_dims": (0,),
    "start_indices_batching_dims": (0,),
}

X = data((3, 4))
GATHERS: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "rows": (gather(ROWS, (1, 4)), (X, idx([[2], [0], [1]]))),
    "rows_partial": (gather(ROWS, (1, 2)), (X, idx([[1]]))),
    "points": (gather(POINTS, (1, 1)), (X, idx([[0, 1], [2, 3], [1, 0]]))),
    "windows": (gather(WINDOWS, (2, 2)), (X, idx([[0, 0], [1, 2]]))),
    "columns": (gather(COLUMNS, (3, 1)), (X, idx([[3], [0]]))),
    "batched": (gather(BATCHED, (1, 1)), (X, idx([[3], [0], [2]]))),
    "index_batch_2d": (gather(ROWS, (1, 4)), (X, idx([[[0], [1]], [[2], [2]]]))),
    "offset_dim_last": (
        gather(
            {"offset_dims": (2,), "collapsed_slice_dims": (0,), "start_index_map": (0,)}, (1, 4)
        ),
        (X, idx([[[0], [1]], [[2], [2]]])),
    ),
    "clamped_out_of_bounds": (gather(ROWS, (1, 4)), (X, idx([[7], [-3]]))),
    "clip": (gather(WINDOWS, (2, 2), mode="clip"), (X, idx([[5, 5], [-1, 0]]))),
    "fill": (gather(WINDOWS, (2, 2), mode="fill"), (X, idx([[2, 0], [1, 2], [0, 3]]))),
    "fill_value": (gather(ROWS, (1, 4), mode="fill", fill_value=-1.5), (X, idx([[3], [0]]))),
    "fill_int_default": (gather(ROWS, (1, 4), mode="fill"), (data((3, 4), I32), idx([[3]]))),
    "fill_uint_default": (gather(ROWS, (1, 4), mode="fill"), (data((3, 4), U8), idx([[3]]))),
    "fill_bool_default": (gather(ROWS, (1, 4), mode="fill"), (data((3, 4), BOOL), idx([[3]]))),
    "fill_batched": (gather(BATCHED, (1, 1), mode="fill"), (X, idx([[4], [0], [-1]]))),
    "promise": (gather(ROWS, (1, 4), mode="promise_in_bounds"), (X, idx([[1]]))),
    "mode_enum": (
        _p(
            lambda lax: (
                lambda x, i: lax.gather(
                    x,
                    i,
                    lax.GatherDimensionNumbers((1,), (0,), (0,)),
                    (1, 4),
                    mode=lax.GatherScatterMode.CLIP,
                )
            )
        ),
        (X, idx([[9]])),
    ),
    "flags": (
        gather(ROWS, (1, 4), unique_indices=True, indices_are_sorted=True),
        (X, idx([[0], [1]])),
    ),
    "int8_indices": (gather(ROWS, (1, 4)), (X, idx([[1], [-1]], np.int8))),
    "uint32_indices": (gather(ROWS, (1, 4)), (X, idx([[1], [2]], np.uint32))),
    "empty_indices": (gather(ROWS, (1, 4)), (X, np.zeros((0, 1), np.int32))),
    "empty_window": (gather(ROWS, (1, 0)), (X, idx([[1]]))),
    "scalar_index_vector": (
        gather(
            {"offset_dims": (0,), "collapsed_slice_dims": (0,), "start_index_map": (0,)}, (1, 4)
        ),
        (X, idx([2])),
    ),
    "weak_operand": (
        _p(
            lambda lax: (
                lambda i: lax.gather(
                    lax.full((3, 4), 2.0), i, lax.GatherDimensionNumbers((1,), (0,), (0,)), (1, 4)
                )
            )
        ),
        (idx([[1]]),),
    ),
}


@pytest.mark.parametrize("name", GATHERS)
def test_gather_matches_jax(oracle: Oracle, name: str) -> None:
    program, args = GATHERS[name]
    oracle.check(program, *args)


@pytest.mark.parametrize("dtype", [F32, BF16, I32, BOOL], ids=str)
def test_gather_of_each_dtype_matches_jax(oracle: Oracle, dtype: np.dtype) -> None:
    oracle.check(gather(WINDOWS, (2, 2), mode="fill"), data((3, 4), dtype), idx([[0, 1], [2, 3]]))


# --- scatters ---------------------------------------------------------------------------------

S_ROWS = {
    "update_window_dims": (1,),
    "inserted_window_dims": (0,),
    "scatter_dims_to_operand_dims": (0,),
}
S_POINTS = {
    "update_window_dims": (),
    "inserted_window_dims": (0, 1),
    "scatter_dims_to_operand_dims": (0, 1),
}
S_WINDOWS = {
    "update_window_dims": (1, 2),
    "inserted_window_dims": (),
    "scatter_dims_to_operand_dims": (0, 1),
}
S_BATCHED = {
    "update_window_dims": (),
    "inserted_window_dims": (1,),
    "scatter_dims_to_operand_dims": (1,),
    "operand_batching_dims": (0,),
    "scatter_indices_batching_dims": (0,),
}


def scatter(kind: str, dnums: dict[str, Any], **kwargs: Any) -> Program:
    def program(lax: ModuleType) -> Callable[..., Any]:
        dn = lax.ScatterDimensionNumbers(**dnums)
        op = getattr(lax, kind)
        return lambda x, i, u: op(x, i, u, dn, **kwargs)

    return _p(program)


def ones(shape: tuple[int, ...], dtype: np.dtype = F32, value: float = 1.0) -> np.ndarray:
    return np.full(shape, value).astype(dtype)


KINDS = ["scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max"]
SCATTERS: dict[str, tuple[Program, tuple[Any, ...]]] = {}
for _kind in KINDS:
    SCATTERS[f"{_kind}_rows"] = (
        scatter(_kind, S_ROWS),
        (X, idx([[2], [0]]), ones((2, 4), value=3)),
    )
    SCATTERS[f"{_kind}_points"] = (
        scatter(_kind, S_POINTS),
        (data((3, 4), I32), idx([[0, 1], [2, 3]]), np.array([7, -7], np.int32)),
    )
    SCATTERS[f"{_kind}_windows_dropped"] = (
        scatter(_kind, S_WINDOWS),
        (X, idx([[0, 0], [2, 3], [1, 2]]), ones((3, 2, 2), value=2)),
    )
    SCATTERS[f"{_kind}_clip"] = (
        scatter(_kind, S_WINDOWS, mode="clip"),
        (X, idx([[5, 5], [-2, 1]]), ones((2, 2, 2), value=0.5)),
    )
    SCATTERS[f"{_kind}_batched"] = (
        scatter(_kind, S_BATCHED),
        (X, idx([[3], [0], [1]]), np.array([10.0, 20.0, 30.0], np.float32)),
    )
for _kind in KINDS[1:]:
    SCATTERS[f"{_kind}_repeated"] = (
        scatter(_kind, S_ROWS),
        (data((3, 4), I32), idx([[1], [1], [0]]), data((3, 4), I32)),
    )
SCATTERS.update(
    {
        "promise_in_bounds": (
            scatter("scatter_add", S_ROWS, mode="promise_in_bounds"),
            (X, idx([[1]]), ones((1, 4))),
        ),
        "flags": (
            scatter("scatter", S_ROWS, indices_are_sorted=True, unique_indices=True),
            (X, idx([[0], [2]]), ones((2, 4))),
        ),
        "bf16_add": (
            scatter("scatter_add", S_ROWS),
            (data((3, 4), BF16), idx([[1]]), ones((1, 4), BF16)),
        ),
        "bool_max": (
            scatter("scatter_max", S_POINTS),
            (data((3, 4), BOOL), idx([[0, 1]]), np.array([True])),
        ),
        "bool_set": (
            scatter("scatter", S_POINTS),
            (data((3, 4), BOOL), idx([[0, 0]]), np.array([True])),
        ),
        "scalar_update": (
            _p(
                lambda lax: (
                    lambda x, i: lax.scatter_add(
                        x, i, 5.0, lax.ScatterDimensionNumbers((), (0, 1), (0, 1))
                    )
                )
            ),
            (X, idx([1, 2])),
        ),
        "int8_indices": (
            scatter("scatter_add", S_ROWS),
            (X, idx([[1], [-1]], np.int8), ones((2, 4))),
        ),
        "empty_updates": (
            scatter("scatter_add", S_ROWS),
            (X, np.zeros((0, 1), np.int32), ones((0, 4))),
        ),
        "two_of_a_kind_share_the_update_jaxpr": (
            _p(
                lambda lax: (
                    lambda x, i, u: lax.scatter_add(
                        lax.scatter_add(x, i, u, lax.ScatterDimensionNumbers((1,), (0,), (0,))),
                        i,
                        u,
                        lax.ScatterDimensionNumbers((1,), (0,), (0,)),
                    )
                )
            ),
            (X, idx([[0]]), ones((1, 4))),
        ),
    }
)


@pytest.mark.parametrize("name", SCATTERS)
def test_scatter_matches_jax(oracle: Oracle, name: str) -> None:
    program, args = SCATTERS[name]
    oracle.check(program, *args)


def test_scatter_apply_matches_jax(oracle: Oracle) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        dn = lax.ScatterDimensionNumbers((1,), (0,), (0,))

        def f(x: Any, i: Any) -> Any:
            once = lax.scatter_apply(x, i, jnp.exp, dn, update_shape=(2, 4))
            return lax.scatter_apply(once, i, jnp.exp, dn, update_shape=(2, 4), mode="clip")

        return f

    closed = oracle.check(program, data((3, 4)) / 10, idx([[1], [1]]))
    assert str(closed).startswith("let jaxpr = { lambda ; a:f32[] b:f32[]. let c:f32[] = exp a")


def test_update_jaxpr_closing_over_a_tracer_is_refused() -> None:
    def f(x: Any, y: Any) -> Any:
        dn = llax.ScatterDimensionNumbers((1,), (0,), (0,))
        return llax.scatter_apply(x, idx([[0]]), lambda v: v + y, dn, update_shape=(1, 4))

    with pytest.raises(NotImplementedError, match="can't close over Tracers"):
        lamina_core.make_jaxpr(f)(X, np.float32(1))


def test_gather_and_scatter_evaluate_eagerly() -> None:
    dn = llax.GatherDimensionNumbers((1,), (0,), (0,))
    np.testing.assert_array_equal(llax.gather(X, idx([[2], [0]]), dn, (1, 4)), X[[2, 0]])
    sdn = llax.ScatterDimensionNumbers((1,), (0,), (0,))
    added = llax.scatter_add(X, idx([[1], [1]]), np.ones((2, 4), np.float32), sdn)
    np.testing.assert_array_equal(added, X + np.array([[0], [2], [0]], np.float32))


# --- hypothesis: random windows, indices and modes ----------------------------------------------


@st.composite
def gather_cases(
    draw: st.DrawFn,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any], tuple[int, ...], str]:
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    rank = len(shape)
    start_map = tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1))))
    collapsed = tuple(d for d in start_map if draw(st.booleans()))
    sizes = tuple(1 if d in collapsed else draw(st.integers(0, shape[d])) for d in range(rank))
    batch = draw(st.integers(0, 3))
    indices = np.array(
        [[draw(st.integers(-2, shape[d] + 1)) for d in start_map] for _ in range(batch)],
        np.int32,
    ).reshape(batch, len(start_map))
    offset = tuple(range(1, 1 + rank - len(collapsed)))
    dnums = {"offset_dims": offset, "collapsed_slice_dims": collapsed, "start_index_map": start_map}
    mode = draw(st.sampled_from(["clip", "fill", "promise_in_bounds"]))
    return data(shape), indices, dnums, sizes, mode


@SETTINGS
@given(case=gather_cases())
def test_random_gather_matches_jax(
    oracle: Oracle, case: tuple[np.ndarray, np.ndarray, dict[str, Any], tuple[int, ...], str]
) -> None:
    x, indices, dnums, sizes, mode = case
    oracle.check(gather(dnums, sizes, mode=mode), x, indices)


@SETTINGS
@given(case=gather_cases(), kind=st.sampled_from(KINDS[1:]))
def test_random_scatter_matches_jax(
    oracle: Oracle,
    case: tuple[np.ndarray, np.ndarray, dict[str, Any], tuple[int, ...], str],
    kind: str,
) -> None:
    x, indices, g, sizes, mode = case
    dnums = {
        "update_window_dims": g["offset_dims"],
        "inserted_window_dims": g["collapsed_slice_dims"],
        "scatter_dims_to_operand_dims": g["start_index_map"],
    }
    window = tuple(s for d, s in enumerate(sizes) if d not in g["collapsed_slice_dims"])
    updates = data((indices.shape[0], *window)) / 4 + 1
    oracle.check(scatter(kind, dnums, mode=mode), x, indices, updates)


# --- errors -------------------------------------------------------------------------------------


def same_error(oracle: Oracle, program: Program, *args: Any) -> str:
    with pytest.raises(Exception) as theirs:
        oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(*args)
    with pytest.raises(Exception) as ours:
        lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    assert type(ours.value).__name__ == type(theirs.value).__name__, ours.value
    assert str(ours.value) == str(theirs.value)
    return str(ours.value)


ERRORS: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "gather_float_indices": (gather(ROWS, (1, 4)), (X, np.zeros((1, 1), np.float32))),
    "gather_index_map_length": (gather(ROWS, (1, 4)), (X, idx([[0, 1]]))),
    "gather_collapse_size": (gather(ROWS, (2, 4)), (X, idx([[0]]))),
    "gather_slice_too_big": (gather(ROWS, (1, 5)), (X, idx([[0]]))),
    "gather_slice_count": (gather(ROWS, (1,)), (X, idx([[0]]))),
    "gather_offset_unsorted": (
        gather(
            {"offset_dims": (2, 1), "collapsed_slice_dims": (), "start_index_map": (0,)}, (1, 4)
        ),
        (X, idx([[0]])),
    ),
    "gather_offset_out_of_bounds": (
        gather(
            {"offset_dims": (1, 5), "collapsed_slice_dims": (), "start_index_map": (0,)}, (1, 4)
        ),
        (X, idx([[0]])),
    ),
    "gather_start_map_out_of_range": (
        gather(
            {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (3,)}, (1, 4)
        ),
        (X, idx([[0]])),
    ),
    "gather_batching_shape": (gather(BATCHED, (1, 1)), (X, idx([[0], [1]]))),
    "gather_unknown_mode": (gather(ROWS, (1, 4), mode="wrap"), (X, idx([[0]]))),
    "scatter_dtype_mismatch": (scatter("scatter_add", S_ROWS), (X, idx([[0]]), ones((1, 4), I32))),
    "scatter_float_indices": (
        scatter("scatter", S_ROWS),
        (X, np.zeros((1, 1), np.float32), ones((1, 4))),
    ),
    "scatter_updates_rank": (scatter("scatter", S_ROWS), (X, idx([[0]]), ones((4,)))),
    "scatter_window_too_big": (scatter("scatter_mul", S_ROWS), (X, idx([[0]]), ones((1, 5)))),
    "scatter_batch_mismatch": (scatter("scatter_min", S_ROWS), (X, idx([[0], [1]]), ones((3, 4)))),
    "scatter_window_size": (
        scatter("scatter_max", {**S_ROWS, "inserted_window_dims": ()}),
        (X, idx([[0]]), ones((1, 4))),
    ),
    "scatter_index_map_length": (scatter("scatter", S_ROWS), (X, idx([[0, 1]]), ones((1, 4)))),
    "scatter_batching_counts": (
        scatter("scatter_add", {**S_BATCHED, "scatter_indices_batching_dims": ()}),
        (X, idx([[0], [1], [2]]), ones((3,))),
    ),
}


@pytest.mark.parametrize("name", ERRORS)
def test_ill_formed_gather_or_scatter_raises_jax_error(oracle: Oracle, name: str) -> None:
    program, args = ERRORS[name]
    same_error(oracle, program, *args)
