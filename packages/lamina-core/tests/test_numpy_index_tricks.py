"""`r_`, `c_`, `mgrid`, `ogrid`, `s_`, `index_exp`, `ix_`, `mask_indices`, `block`, `resize`,
`delete`, `insert`, `extract`, `compress`, `choose`, `place`, `put` and `put_along_axis`
against JAX 0.10.2: dtypes, shapes and values, eagerly and staged (array arguments traced,
computed by the configured evaluator), JAX's error messages, and their behaviour under `jit`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
import lamina_core.numpy as lnp
from lamina_core.numpy import _index_tricks as lit
from lamina_core.testing import Oracle, sweep
from lamina_core.trace._tracing import ConcretizationTypeError
from lamina_core.trace._values import to_numpy

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jnp = jax.numpy


class _Lamina:
    """Lamina's `jnp` with this module's functions, which are not exported yet."""

    def __getattr__(self, name: str) -> Any:
        return getattr(lit, name) if name in lit.__all__ else getattr(lnp, name)


L = _Lamina()

_V = np.arange(6, dtype=np.float32)
_M = np.arange(12, dtype=np.float32).reshape(3, 4)
_I = np.arange(12).reshape(3, 4)
_T = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
_B3 = np.array([True, False, True])
_COL = np.array([7.0, 8.0, 9.0], np.float32)

Case = tuple[str, Callable[..., Any], tuple[Any, ...]]

CONCAT: list[Case] = [
    ("r_mixed", lambda n: n.r_[1:4, 5, np.array([6, 7])], ()),
    ("r_complex_step", lambda n: n.r_[0:1:5j], ()),
    ("r_float_slice", lambda n: n.r_[1.0:3], ()),
    ("r_open_start", lambda n: n.r_[:3], ()),
    ("r_negative_step", lambda n: n.r_[-1:-5:-1], ()),
    ("r_complex_and_scalar", lambda n: n.r_[0:10:3j, 2], ()),
    ("r_bools", lambda n: n.r_[True, False], ()),
    ("r_weak_float", lambda n: n.r_[1, 2.5], ()),
    ("r_int8", lambda n: n.r_[np.int8(3), np.int8(4)], ()),
    ("r_int64_input", lambda n: n.r_[np.arange(3), 7], ()),
    ("r_matrices", lambda n: n.r_[_M, _M], ()),
    ("r_directive_axis_ndmin", lambda n: n.r_["0,2", [1, 2, 3], [4, 5, 6]], ()),
    ("r_directive_trans1d_0", lambda n: n.r_["0,2,0", [1, 2, 3], [4, 5, 6]], ()),
    ("r_directive_trans1d_1", lambda n: n.r_["1,2,0", [1, 2, 3], [4, 5, 6]], ()),
    ("r_directive_3d", lambda n: n.r_["0,3,1", np.ones((2, 2), np.float32), _M[:2, :2]], ()),
    ("r_directive_3d_trans_neg", lambda n: n.r_["2,3,-2", [1, 2], [3, 4]], ()),
    ("r_directive_extra_fields", lambda n: n.r_["1,2,0,5", [1, 2], [3, 4]], ()),
    ("r_directive_last_axis", lambda n: n.r_["-1", _M, _M[:, :1]], ()),
    ("r_row", lambda n: n.r_["r", [1, 2, 3], 4], ()),
    ("r_column", lambda n: n.r_["c", [1, 2, 3]], ()),
    ("r_traced", lambda n, x, y: n.r_[x, 0, y, 1:3], (_V, _COL)),
    ("c_vectors", lambda n: n.c_[np.array([1, 2, 3]), np.array([4, 5, 6])], ()),
    ("c_matrices", lambda n: n.c_[_M, _M], ()),
    ("c_numpy_doc", lambda n: n.c_[np.array([[1, 2, 3]]), 0, 0, np.array([[4, 5, 6]])], ()),
    ("c_slices", lambda n: n.c_[0:1:3j, np.arange(3)], ()),
    ("c_directive", lambda n: n.c_["0", [1, 2], [3]], ()),
    ("c_traced", lambda n, x: n.c_[x, x], (_COL,)),
    ("mgrid_mixed", lambda n: n.mgrid[0:3, 0:2.0], ()),
    ("mgrid_ints", lambda n: n.mgrid[0:4, 1:3], ()),
    ("mgrid_1d_complex", lambda n: n.mgrid[0:1:3j], ()),
    ("mgrid_1d_step", lambda n: n.mgrid[-2:2:2], ()),
    ("mgrid_empty", lambda n: n.mgrid[()], ()),
    ("mgrid_one_tuple", lambda n: n.mgrid[0:3,], ()),
    ("mgrid_3d_complex", lambda n: n.mgrid[0:4, 1:3, 0:1:2j], ()),
    ("ogrid_ints", lambda n: n.ogrid[0:3, 0:2], ()),
    ("ogrid_1d", lambda n: n.ogrid[0:5:2], ()),
    ("ogrid_promoted", lambda n: n.ogrid[0:1:4j, 0:3], ()),
]

INDEXING: list[Case] = [
    ("ix_", lambda n, a, b: n.ix_(a, b), (np.array([0, 2]), np.array([1, 2, 3]))),
    ("ix_float_and_empty", lambda n: n.ix_(np.array([], np.float32), _COL, np.arange(2)), ()),
    ("ix_applied", lambda n, x: x[n.ix_(np.array([0, 2]), np.array([3, 1]))], (_M,)),
    ("mask_indices_triu", lambda n: n.mask_indices(4, n.triu), ()),
    ("mask_indices_tril_k", lambda n: n.mask_indices(4, n.tril, -1), ()),
    ("mask_indices_size", lambda n: n.mask_indices(3, n.triu, 1, size=5), ()),
    ("block_2x2", lambda n, x: n.block([[x, x], [x, x]]), (_M,)),
    ("block_flat", lambda n: n.block([np.ones(2, np.float32), 3.0, np.arange(2)]), ()),
    ("block_scalars", lambda n: n.block([[1, 2], [3, 4]]), ()),
    ("block_scalar", lambda n: n.block(np.float32(5)), ()),
    ("block_int64", lambda n: n.block(np.arange(3)), ()),
    (
        "block_uneven",
        lambda n: n.block([[np.ones((2, 2)), np.zeros((2, 1))], [np.zeros((1, 3))]]),
        (),
    ),
    ("block_3d", lambda n, t: n.block([[[t]], [[t]]]), (_T,)),
    ("resize_grow", lambda n, x: n.resize(x, (2, 7)), (_M,)),
    ("resize_int", lambda n: n.resize(np.arange(3), 7), ()),
    ("resize_empty_input", lambda n: n.resize(np.array([], np.float32), (2, 2)), ()),
    ("resize_to_empty", lambda n, x: n.resize(x, 0), (_I,)),
    ("resize_shrink", lambda n, x: n.resize(x, (2, 2)), (_T,)),
]

EDITS: list[Case] = [
    ("delete_flat", lambda n, x: n.delete(x, 1), (_M,)),
    ("delete_axis", lambda n, x: n.delete(x, 1, axis=1), (_M,)),
    ("delete_negative", lambda n, x: n.delete(x, -1, axis=0), (_I,)),
    ("delete_numpy_int", lambda n, x: n.delete(x, np.int64(2)), (_V,)),
    ("delete_slice", lambda n, x: n.delete(x, slice(0, 3, 2), axis=1), (_M,)),
    ("delete_slice_reversed", lambda n, x: n.delete(x, slice(None, None, -2)), (_V,)),
    ("delete_repeated", lambda n: n.delete(_V, np.array([0, 2, 2, -1])), ()),
    ("delete_mask", lambda n: n.delete(_M, _B3, axis=0), ()),
    ("delete_nothing", lambda n: n.delete(np.arange(5), np.array([], np.int32)), ()),
    (
        "delete_unique_traced",
        lambda n, x, i: n.delete(x, i, assume_unique_indices=True),
        (_V, np.array([1, -1])),
    ),
    (
        "delete_unique_axis",
        lambda n, t, i: n.delete(t, i, axis=2, assume_unique_indices=True),
        (_T, np.array([3, 0], np.int32)),
    ),
    ("insert_scalar", lambda n, x: n.insert(x, 2, 9.0), (_V,)),
    ("insert_many", lambda n, x, i, v: n.insert(x, i, v), (_V, np.array([1, 3, 0]), _COL)),
    ("insert_negative", lambda n, x: n.insert(x, -2, np.array([7.0, 8.0])), (_V,)),
    ("insert_column", lambda n, x, v: n.insert(x, 1, v, axis=1), (_M, _COL)),
    ("insert_row", lambda n, x: n.insert(x, 1, 5.0, axis=0), (_M,)),
    ("insert_slice", lambda n, x: n.insert(x, slice(None, None, 2), 0.0, axis=1), (_M,)),
    ("insert_broadcast", lambda n, x: n.insert(x, np.array([0, 4]), _I[:, :1], axis=1), (_I,)),
    ("insert_casts", lambda n: n.insert(np.arange(4), 1, 2.7), ()),
    ("insert_empty_float", lambda n, x: n.insert(x, np.array([], np.float32), 5.0), (_V,)),
    ("insert_out_of_range", lambda n, x: n.insert(x, np.array([10, -10]), 1.0), (_V,)),
    ("insert_traced_index", lambda n, x, i: n.insert(x, i, -1.0, axis=0), (_M, np.int32(2))),
    ("extract", lambda n: n.extract(_M > 5, _M), ()),
    ("extract_size", lambda n, c, x: n.extract(c, x, size=4), (_M > 5, _M)),
    ("extract_fill", lambda n, c, x: n.extract(c, x, size=8, fill_value=-1), (_I % 3 == 0, _I)),
    ("compress_axis0", lambda n: n.compress(_B3, _M, axis=0), ()),
    ("compress_short_condition", lambda n: n.compress(np.array([0, 1]), _M, axis=1), ()),
    ("compress_long_condition", lambda n: n.compress(np.array([1, 0, 1, 0, 0]), _I, axis=0), ()),
    ("compress_flat", lambda n: n.compress(np.array([1, 0, 0, 1]), _M), ()),
    (
        "compress_size",
        lambda n, c, x: n.compress(c, x, axis=1, size=2, fill_value=-1),
        (np.array([False, True, False, False]), _M),
    ),
    ("compress_size_3d", lambda n, c, t: n.compress(c, t, axis=-1, size=3), (_B3, _T[..., :3])),
    ("choose_list", lambda n: n.choose(np.array([0, 1, 2, 1]), [_V[:4], -_V[:4], 2 * _V[:4]]), ()),
    (
        "choose_array",
        lambda n: n.choose(np.array([[0, 1], [1, 0]]), np.arange(8).reshape(2, 2, 2)),
        (),
    ),
    (
        "choose_wrap",
        lambda n, a: n.choose(a, [_V[:4], np.ones(4, np.float32)], mode="wrap"),
        (np.array([3, -1, 4, 0]),),
    ),
    (
        "choose_clip",
        lambda n, a: n.choose(a, [np.arange(4), np.arange(4) * 10], mode="clip"),
        (np.array([5, -3, 1, 0]),),
    ),
    (
        "choose_broadcast",
        lambda n: n.choose(np.array([[0], [1], [2]]), [0, _V[:4], np.int8(3)]),
        (),
    ),
    (
        "place",
        lambda n, x, m: n.place(x, m, np.array([-1.0, -2.0], np.float32), inplace=False),
        (_M, _M > 4),
    ),
    (
        "place_int_mask",
        lambda n, x: n.place(x, np.array([0, 2, 0, 1, 0, 0]), np.arange(5), inplace=False),
        (_V,),
    ),
    ("place_empty", lambda n: n.place(np.zeros((0, 2)), np.zeros((0, 2)), 1.0, inplace=False), ()),
    (
        "put",
        lambda n, x, i: n.put(x, i, np.array([-1.0, -2.0, -3.0]), inplace=False),
        (_M, np.array([0, 5, 11])),
    ),
    ("put_repeat_v", lambda n, x: n.put(x, np.array([1, 3, 4]), 7, inplace=False), (_I,)),
    (
        "put_cut_v",
        lambda n, x: n.put(x, np.array([1, 2]), np.array([5.0, 6.0, 7.0]), inplace=False),
        (_V,),
    ),
    (
        "put_out_of_bounds",
        lambda n, x: n.put(x, np.array([20, -2, -30]), 1.0, inplace=False),
        (_V,),
    ),
    (
        "put_clip",
        lambda n, x: n.put(x, np.array([20, -5]), np.array([1.0, 2.0]), "clip", inplace=False),
        (_M,),
    ),
    (
        "put_wrap",
        lambda n, x: n.put(x, np.array([13, -1]), np.array([1.0, 2.0]), "wrap", inplace=False),
        (_M,),
    ),
    ("put_empty_ind", lambda n, x: n.put(x, np.array([], np.int32), 1, inplace=False), (_V,)),
    (
        "put_along_axis_1",
        lambda n, x, i: n.put_along_axis(x, i, 99.0, axis=1, inplace=False),
        (_M, np.array([[0], [1], [3]])),
    ),
    (
        "put_along_axis_0",
        lambda n, x, i, v: n.put_along_axis(x, i, v, 0, False),
        (_M, np.array([[2, 1, 0, 2]]), np.array([[5.0, 6.0, 7.0, 8.0]], np.float32)),
    ),
    (
        "put_along_axis_none",
        lambda n, x: n.put_along_axis(x, np.array([0, 11, -1]), -5, None, inplace=False),
        (_I,),
    ),
    (
        "put_along_axis_negative_axis",
        lambda n, t, i: n.put_along_axis(t, i, 0, axis=-1, inplace=False),
        (_T, np.array([[[1], [2], [3]], [[0], [0], [0]]])),
    ),
    (
        "put_along_axis_mode",
        lambda n, x: n.put_along_axis(
            x, np.array([[0, 4]]), 1.0, axis=1, inplace=False, mode="clip"
        ),
        (_M[:1],),
    ),
]


def _compare(got: Any, want: Any) -> None:
    gots = lc.tree_util.tree_leaves(got)
    wants = jax.tree_util.tree_leaves(want)
    assert len(gots) == len(wants)
    for g, w in zip(gots, wants, strict=True):
        g, w = np.asarray(to_numpy(g)), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-6)


EDGES: list[Case] = [
    ("r_float_step", lambda n: n.r_[0:1:0.25], ()),
    ("r_float64_scalar", lambda n: n.r_[np.array(1.0, np.float64), 2], ()),
    ("r_complex", lambda n: n.r_[1 + 2j, 3], ()),
    ("r_directive_ndmin3", lambda n: n.r_["1,3", _M, _M], ()),
    ("r_directive_trans1d_last", lambda n: n.r_["0,3,-1", [1, 2], [3, 4]], ()),
    ("r_directive_trans1d_big", lambda n: n.r_["0,3,5", [1, 2], [3, 4]], ()),
    ("c_3d", lambda n, t: n.c_[t, t], (_T,)),
    ("c_scalars", lambda n: n.c_[np.float32(1), 2], ()),
    ("mgrid_float_step", lambda n: n.mgrid[0:1:0.25, 0:2], ()),
    ("ogrid_1d_complex", lambda n: n.ogrid[0:1:3j], ()),
    ("ix_none", lambda n: n.ix_(), ()),
    ("ix_uint8", lambda n: n.ix_(np.array([0, 1], np.uint8)), ()),
    ("mask_indices_empty", lambda n: n.mask_indices(0, n.triu), ()),
    ("block_single", lambda n, v: n.block([v]), (_V,)),
    ("block_nested_single", lambda n, v: n.block([[[v]]]), (_V,)),
    ("block_row_of_matrices", lambda n, x: n.block([x, x]), (_M,)),
    ("resize_scalar", lambda n: n.resize(3, (2, 2)), ()),
    ("resize_zero_dim", lambda n, x: n.resize(x, (0, 3)), (_M,)),
    ("delete_zero_d_index", lambda n, v: n.delete(v, np.array(2)), (_V,)),
    ("delete_2d_indices", lambda n: n.delete(_V, np.array([[0, 1]])), ()),
    (
        "delete_unique_out_of_range",
        lambda n, v: n.delete(v, np.array([10]), assume_unique_indices=True),
        (_V,),
    ),
    (
        "delete_unique_repeated",
        lambda n, v: n.delete(v, np.array([-1, -1]), assume_unique_indices=True),
        (_V,),
    ),
    ("delete_bool_scalar", lambda n, v: n.delete(v, True), (_V,)),
    (
        "insert_one_index_many_values",
        lambda n, v: n.insert(v, np.array([1]), np.array([1.0, 2.0])),
        (_V,),
    ),
    ("insert_row_vector", lambda n, x: n.insert(x, 1, np.array([[1.0, 2.0, 3.0]]), axis=1), (_M,)),
    ("insert_flattened", lambda n, x: n.insert(x, 0, np.array([1.0, 2.0, 3.0, 4.0])), (_M,)),
    ("insert_into_empty", lambda n: n.insert(np.zeros((0,), np.float32), 0, 1.0), ()),
    (
        "insert_slice_rows",
        lambda n, x: n.insert(x, slice(1, 3), np.arange(2.0).reshape(2, 1), axis=0),
        (_M,),
    ),
    ("compress_empty_condition", lambda n: n.compress(np.array([], bool), _M), ()),
    (
        "compress_size_zero",
        lambda n, c, x: n.compress(c, x, axis=0, size=0),
        (np.array([1, 1]), _M),
    ),
    ("compress_float_condition", lambda n: n.compress(np.array([2.5, 0.0, -1]), _M, axis=0), ()),
    ("extract_scalar", lambda n: n.extract(np.array(True), 3.0), ()),
    ("extract_short_condition", lambda n: n.extract(np.ones(3, bool), np.arange(4.0)), ()),
    ("choose_scalar", lambda n: n.choose(1, [1, 2.5]), ()),
    (
        "choose_uint8_wrap",
        lambda n, a: n.choose(a, np.array([[1, 2], [3, 4]], np.uint8), mode="wrap"),
        (np.array([0, 1]),),
    ),
    (
        "place_everywhere",
        lambda n, x: n.place(x, np.ones(12, bool), np.array([1.0]), inplace=False),
        (_M,),
    ),
    (
        "place_casts",
        lambda n: n.place(
            np.arange(4), np.array([1, 0, 1, 0]), np.array([2.9, 5.1]), inplace=False
        ),
        (),
    ),
    (
        "put_bool_indices",
        lambda n, x: n.put(x, np.array([True, False]), 5, inplace=False),
        (np.arange(4),),
    ),
    (
        "put_negative_indices",
        lambda n, x: n.put(x, np.array([-5, -1, -7, 9, 3], np.int32), np.arange(5), inplace=False),
        (_I[:2, :3],),
    ),
    (
        "put_uint8_indices",
        lambda n, x: n.put(x, np.array([250, 3], np.uint8), 1, inplace=False),
        (_I[:2, :3],),
    ),
    (
        "put_2d_clip",
        lambda n: n.put(
            np.arange(4), np.array([[1, 2]]), np.array([[5, 6]]), inplace=False, mode="clip"
        ),
        (),
    ),
    (
        "put_along_axis_dropped",
        lambda n, x: n.put_along_axis(x, np.array([[5]]), 1.0, 1, False),
        (_M,),
    ),
    (
        "put_along_axis_drop_negative",
        lambda n, x: n.put_along_axis(x, np.array([[-1]]), 1.0, 1, False, mode="drop"),
        (_M,),
    ),
]

ALL = CONCAT + INDEXING + EDITS + EDGES
# `choose(mode="raise")` of a NumPy constant: JAX stages the constant when tracing and so
# refuses it; Lamina keeps it concrete and checks it.
EAGER_ONLY = {"choose_list", "choose_array", "choose_broadcast", "choose_scalar"}


@pytest.mark.parametrize(("name", "call", "args"), sweep(ALL, [c[0] for c in ALL]))
@pytest.mark.filterwarnings("ignore:scatter inputs have incompatible types:FutureWarning")
def test_values_are_jaxs(
    oracle: Oracle, name: str, call: Callable[..., Any], args: tuple[Any, ...]
) -> None:
    refused: str = ""
    theirs: Any = None
    if name not in EAGER_ONLY:
        try:
            theirs = jax.make_jaxpr(lambda *xs: call(jnp, *xs))(*args)
        except Exception as err:
            refused = type(err).__name__
    # JAX's values under one jit where JAX stages the call (op by op, eagerly, it compiles
    # each operation), else eagerly.
    staged = oracle.jit(lambda *xs: call(jnp, *xs))
    want = call(jnp, *args) if theirs is None else staged(*args)
    _compare(call(L, *args), want)
    if name in EAGER_ONLY:
        return
    if refused:
        # Some results need concrete values (an unknown size): then staging fails alike.
        with pytest.raises(Exception) as got:
            lc.make_jaxpr(lambda *xs: call(L, *xs))(*args)
        assert type(got.value).__name__ == refused
        return
    closed = lc.make_jaxpr(lambda *xs: call(L, *xs))(*args)
    # Staged results have JAX's types, weak types included.
    assert [str(a) for a in closed.out_avals] == [str(a) for a in theirs.out_avals]
    _compare(list(oracle.evaluate(closed, list(args))), want)


def test_aliases_and_lengths() -> None:
    assert lit.s_ is np.s_
    assert lit.index_exp is np.index_exp
    assert lit.index_exp[1:2, ...] == jnp.index_exp[1:2, ...]
    assert lit.s_[::2, 1] == jnp.s_[::2, 1]
    assert len(lit.r_) == len(jnp.r_) == 0 and len(lit.c_) == len(jnp.c_) == 0
    assert lit.ogrid[()] == jnp.ogrid[()] == []
    assert type(lit.r_).__name__ == type(jnp.r_).__name__ == "RClass"
    assert type(lit.c_).__name__ == type(jnp.c_).__name__ == "CClass"


ERRORS: list[tuple[type[Exception], Callable[[Any], Any]]] = [
    (ValueError, lambda n: n.r_["0,x", [1]]),
    (ValueError, lambda n: n.r_[[1], "r"]),
    (ValueError, lambda n: n.r_["r"]),
    (TypeError, lambda n: n.r_[[1, 2], [[3]]]),
    (IndexError, lambda n: n.r_[()]),
    (AttributeError, lambda n: n.mgrid[0:3, 1]),
    (TypeError, lambda n: n.mgrid[1]),
    (ValueError, lambda n: n.compress(np.array([1, 0, 1]), 5.0)),
    (TypeError, lambda n: n.block([[_M], [_V]])),
    (TypeError, lambda n: n.resize(_M, 2.0)),
    (IndexError, lambda n: n.delete(_V, np.array([10]))),
    (ValueError, lambda n: n.insert(_V, np.array([True]), 1.0)),
    (ValueError, lambda n: n.insert(_V, np.array([1, 2]), np.array([1.0, 2.0, 3.0]))),
    (ValueError, lambda n: n.extract(np.ones(5, bool), np.arange(4.0))),
    (IndexError, lambda n: n.choose(np.array([0, 1]), [], mode="wrap")),
    (ValueError, lambda n: n.choose(np.array([0, 1]), [np.ones(3), np.ones(2)], mode="wrap")),
    (TypeError, lambda n: n.put(_V, np.array([1.0]), 5, inplace=False)),
    (TypeError, lambda n: n.put_along_axis(_M, np.array([[0.0]]), 1.0, 1, False)),
    (AssertionError, lambda n: n.put_along_axis(_M, np.array([[0]]), 1.0, 2, False)),
    (AssertionError, lambda n: n.put_along_axis(_M, np.array([[0]]), 1.0, -3, False)),
    (ValueError, lambda n: n.ix_(np.ones((2, 2)))),
    (NotImplementedError, lambda n: n.ix_(np.array([True]))),
    (TypeError, lambda n: n.ix_([1, 2])),
    (ValueError, lambda n: n.block(())),
    (ValueError, lambda n: n.block([])),
    (ValueError, lambda n: n.block([[1.0], 2.0])),
    (ValueError, lambda n: n.resize(_M, (-1, 2))),
    (ValueError, lambda n: n.delete(_V, 10)),
    (ValueError, lambda n: n.delete(_M, 0, axis=2)),
    (ValueError, lambda n: n.delete(_V, np.array([True]))),
    (ValueError, lambda n: n.delete(_V, 1.5)),
    (TypeError, lambda n: n.delete(_V, [1, 2])),
    (ValueError, lambda n: n.insert(_V, np.ones((2, 2), np.int32), 1.0)),
    (ValueError, lambda n: n.insert(_V, np.array([1.5]), 1.0)),
    (ValueError, lambda n: n.insert(_V, 1, 1.0, axis=1)),
    (TypeError, lambda n: n.insert(_V, 1, [1.0])),
    (TypeError, lambda n: n.extract([True], _V)),
    (ValueError, lambda n: n.compress(np.ones((2, 2)), _M)),
    (ValueError, lambda n: n.compress(np.array([0, 0, 0, 1]), _M, axis=0)),
    (ValueError, lambda n: n.compress(_B3, _M, axis=1, size=4)),
    (NotImplementedError, lambda n: n.compress(_B3, _M, out=np.zeros(3))),
    (ValueError, lambda n: n.choose(np.array([0, 3]), [_V[:2], _V[2:4]])),
    (ValueError, lambda n: n.choose(np.array([0.0]), [_V])),
    (ValueError, lambda n: n.choose(np.array([0]), [_V], mode="bogus")),
    (ValueError, lambda n: n.place(_V, _V > 2, 1.0)),
    (ValueError, lambda n: n.place(_V, _M > 2, 1.0, inplace=False)),
    (ValueError, lambda n: n.place(_V, _V > 2, np.array([]), inplace=False)),
    (ValueError, lambda n: n.put(_V, 0, 1.0)),
    (NotImplementedError, lambda n: n.put(_V, 0, 1.0, mode="raise", inplace=False)),
    (ValueError, lambda n: n.put(_V, 0, 1.0, mode="nearest", inplace=False)),
    (ValueError, lambda n: n.put_along_axis(_M, np.zeros((3, 1), np.int32), 1.0, 1)),
    (ValueError, lambda n: n.put_along_axis(_M, np.zeros(3, np.int32), 1.0, 1, False)),
    (
        ValueError,
        lambda n: n.put_along_axis(_M, np.zeros((3, 1), np.int32), np.ones(4), 1, False),
    ),
]


@pytest.mark.parametrize(("kind", "call"), ERRORS)
def test_errors_are_jaxs(kind: type[Exception], call: Callable[[Any], Any]) -> None:
    with pytest.raises(kind) as expected:
        call(jnp)
    with pytest.raises(kind) as got:
        call(L)
    assert str(got.value) == str(expected.value)


def _same_concretization_error(make: Callable[[Any], Callable[..., Any]], *args: Any) -> None:
    """Both libraries refuse the traced value under `jit` with the same message."""
    with pytest.raises(jax.errors.ConcretizationTypeError) as expected:
        jax.jit(make(jnp))(*args)
    with pytest.raises(ConcretizationTypeError) as got:
        lc.jit(make(L))(*args)
    assert str(got.value) == str(expected.value)


def test_choose_raise_mode_needs_concrete_indices() -> None:
    _same_concretization_error(lambda n: lambda a: n.choose(a, [_V[:2], _V[2:4]]), np.arange(2))


def test_delete_repeated_indices_need_concrete_values() -> None:
    _same_concretization_error(lambda n: lambda x, i: n.delete(x, i), _V, np.array([1, 1]))


def test_grid_slices_need_concrete_bounds() -> None:
    _same_concretization_error(lambda n: lambda s: n.r_[0:s], 3)
    _same_concretization_error(lambda n: lambda s: n.mgrid[0:4:s], 2)


def test_under_jit() -> None:
    """Static indices and sizes under `jit`, matching JAX's jitted results."""
    cases: list[tuple[Callable[[Any], Callable[..., Any]], tuple[Any, ...]]] = [
        (lambda n: lambda x: n.delete(x, np.array([0, 0, 3]), axis=1), (_M,)),
        (lambda n: lambda x: n.delete(x, slice(1, None)), (_V,)),
        (lambda n: lambda x, v: n.insert(x, np.array([2, 2]), v, axis=0), (_M, _M[:1])),
        (lambda n: lambda c, x: n.compress(c, x, size=2, fill_value=9), (_V > 3, _V)),
        (lambda n: lambda c, x: n.extract(c, x, size=3), (_M > 9, _M)),
        (lambda n: lambda a: n.choose(a, [_V, -_V], mode="clip"), (np.array([1, 0, 2, 1, 0, 1]),)),
        (lambda n: lambda x, m: n.place(x, m, np.array([0.5]), inplace=False), (_M, _M < 3)),
        (lambda n: lambda x, i: n.put(x, i, 0.0, inplace=False, mode="wrap"), (_V, np.array([7]))),
    ]
    # JAX's values of every case from one jitted program (one compilation, not one per case).
    makes = [make for make, _ in cases]
    wants = jax.jit(lambda *every: [m(jnp)(*a) for m, a in zip(makes, every, strict=True)])(
        *(args for _, args in cases)
    )
    for (make, args), want in zip(cases, wants, strict=True):
        _compare(lc.jit(make(L))(*args), want)


def test_grad_through_edits() -> None:
    def loss(n: Any) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            y = n.insert(n.delete(x, np.array([1]), assume_unique_indices=True), 0, x[2])
            z = n.put(y, np.array([3]), 0.0, inplace=False)
            return n.sum(n.compress(z > 1.0, z, size=2) ** 2) + n.sum(n.block([[y, z]]))

        return f

    # JAX's side jitted: op by op, its eager grad compiles each of some forty ops (~15 s).
    _compare(lc.grad(loss(L))(_V), jax.jit(jax.grad(loss(jnp)))(_V))


def test_vmap_of_put_along_axis_and_choose() -> None:
    idx = np.array([[0], [2], [1]])

    def f(n: Any) -> Callable[[Any], Any]:
        def g(row: Any) -> Any:
            placed = n.put_along_axis(row, idx[:1, 0], -1.0, axis=0, inplace=False)
            return n.choose(np.array([0, 1, 1, 0]), [placed, row[::-1]], mode="wrap")

        return g

    _compare(lc.vmap(f(L))(_M), jax.vmap(f(jnp))(_M))
