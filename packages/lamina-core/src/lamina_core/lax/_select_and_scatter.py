"""The primitives of max/min pooling's derivatives: `select_and_gather_add_p`,
`select_and_scatter_add_p`, and the general `select_and_scatter_p`.

`select_and_gather_add` picks, per window, the tangent at the selected (largest for `ge`,
smallest for `le`) operand element; `select_and_scatter_add`, its transpose, adds each
window's value into the selected position of an operand-shaped zero. `select_and_scatter`
takes traced select and scatter computations; `select_and_scatter_add` lowers to it. The
NumPy references follow XLA: the first selected element in window order wins ties.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from lamina_core.ir import (
    AbstractValue,
    Jaxpr,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    register_open_jaxpr_params,
    register_param_decoder,
)
from lamina_core.lax import _checks as c
from lamina_core.lax import _elementwise as ew
from lamina_core.lax._joining import pad
from lamina_core.lax._reduce_generic import max_identity, min_identity, reduction_jaxpr
from lamina_core.lax._selection import select
from lamina_core.lax._shape import check_shapelike
from lamina_core.lax._slicing import slice as slice_
from lamina_core.lax._types import Array
from lamina_core.lax._windowed import (
    Padding,
    pad_and_dilate,
    reduce_window,
    reduce_window_shape_tuple,
    widen,
    window_shape,
    window_slices,
)
from lamina_core.trace import eval_jaxpr, to_numpy, typeof

select_and_scatter_p: Final = Primitive("select_and_scatter")
select_and_scatter_add_p: Final = Primitive("select_and_scatter_add")
select_and_gather_add_p: Final = Primitive("select_and_gather_add")
# Its select and scatter computations, read back by `ir.parse`:
register_open_jaxpr_params(select_and_scatter_p.name, ["select_jaxpr", "scatter_jaxpr"])


def _decode_select_prim(
    params: dict[str, Any], ins: Sequence[AbstractValue], outs: Sequence[AbstractValue]
) -> dict[str, Any]:
    # The comparison prints by its name (`select_prim=ge`): read back, it is that primitive.
    named = {p.name: p for p in (ew.ge_p, ew.le_p)}
    chosen = params["select_prim"]
    if isinstance(chosen, str):
        if chosen not in named:
            raise ValueError(f"select_prim must be ge or le, got {chosen}")
        chosen = named[chosen]
    return {**params, "select_prim": chosen}


for _prim in (select_and_scatter_add_p, select_and_gather_add_p):
    register_param_decoder(_prim.name)(_decode_select_prim)


def _selects_max(select_prim: Primitive) -> bool:
    if select_prim is ew.ge_p:
        return True
    if select_prim is ew.le_p:
        return False
    raise ValueError(f"select_prim must be ge or le, got {select_prim}")


@abstract_eval_rules.register(select_and_scatter_add_p)
def _select_and_scatter_add_abstract_eval(
    source: AbstractValue,
    operand: AbstractValue,
    *,
    select_prim: Primitive,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Padding,
) -> ShapedArray:
    s = c.array_aval("select_and_scatter_add", source)
    o = c.array_aval("select_and_scatter_add", operand)
    return ShapedArray(o.shape, s.dtype, s.weak_type and o.weak_type)


def _selected_positions(
    operand: np.ndarray,
    select_max: bool,
    out_shape: tuple[int, ...],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    window_dilation: Sequence[int],
) -> tuple[np.ndarray, np.ndarray]:
    """For each window of `operand` (already padded), the selected value and its flat index
    there: the first largest (smallest) element in window order, as XLA's selection keeps the
    current element while `select(current, new)` holds."""
    better = np.greater_equal if select_max else np.less_equal
    best: np.ndarray | None = None
    best_index = np.zeros(out_shape, np.int64)
    grids = np.meshgrid(*(np.arange(n) for n in out_shape), indexing="ij")
    for starts, values in window_slices(
        operand, out_shape, window_dimensions, window_strides, window_dilation
    ):
        coords = [s + g * int(st) for s, g, st in zip(starts, grids, window_strides, strict=True)]
        index = np.ravel_multi_index(coords, operand.shape) if coords else np.zeros((), np.int64)
        if best is None:
            best, best_index = values, np.asarray(index)
            continue
        keep = better(best, values)
        best = np.where(keep, best, values)
        best_index = np.where(keep, best_index, index)
    assert best is not None
    return best, best_index


@impl_rules.register(select_and_scatter_add_p)
def _select_and_scatter_add_impl(
    source: np.ndarray,
    operand: np.ndarray,
    *,
    select_prim: Primitive,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Padding,
) -> np.ndarray:
    source, operand = np.asarray(source), np.asarray(operand)
    select_max = _selects_max(select_prim)
    identity = max_identity(operand.dtype) if select_max else min_identity(operand.dtype)
    ones = (1,) * operand.ndim
    # As XLA on CPU: pad with the selection's identity, select without padding, crop.
    padded = pad_and_dilate(widen(operand), identity, padding, ones)
    wide_source = widen(source)
    out = np.zeros(padded.shape, wide_source.dtype)
    if source.size:
        _, index = _selected_positions(
            padded, select_max, source.shape, window_dimensions, window_strides, ones
        )
        flat = out.reshape(-1)
        if source.dtype == np.bool_:
            np.logical_or.at(flat, index.reshape(-1), wide_source.reshape(-1))
        else:
            np.add.at(flat, index.reshape(-1), wide_source.reshape(-1))
    crop = tuple(
        slice(int(lo), int(lo) + d) for (lo, _), d in zip(padding, operand.shape, strict=False)
    )
    return out[crop].astype(source.dtype)


@abstract_eval_rules.register(select_and_gather_add_p)
def _select_and_gather_add_abstract_eval(
    tangents: AbstractValue,
    operand: AbstractValue,
    *,
    select_prim: Primitive,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Padding,
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> ShapedArray:
    t = c.array_aval("select_and_gather_add", tangents)
    o = c.array_aval("select_and_gather_add", operand)
    if t.shape != o.shape:
        raise TypeError(
            "select_and_gather_add tangents and operand shapes must match, got "
            f"{t.shape} and {o.shape}."
        )
    shape = window_shape(
        o, window_dimensions, window_strides, padding, base_dilation, window_dilation
    )
    return ShapedArray(shape, t.dtype, t.weak_type and o.weak_type)


@impl_rules.register(select_and_gather_add_p)
def _select_and_gather_add_impl(
    tangents: np.ndarray,
    operand: np.ndarray,
    *,
    select_prim: Primitive,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Padding,
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> np.ndarray:
    tangents, operand = np.asarray(tangents), np.asarray(operand)
    select_max = _selects_max(select_prim)
    out_shape = reduce_window_shape_tuple(
        operand.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
    )
    # A reduction of (value, tangent) pairs from (-inf, 0) (or (inf, 0)), keeping the
    # accumulated pair while `select(acc, new)` holds, as JAX's variadic reduce_window.
    with np.errstate(invalid="ignore", over="ignore"):
        init = np.array(-np.inf if select_max else np.inf).astype(operand.dtype)
    keys = widen(operand)
    init_key = init.astype(keys.dtype)
    acc_key = np.full(out_shape, init_key, keys.dtype)
    acc = np.zeros(out_shape, tangents.dtype)
    if 0 in out_shape:
        return acc
    padded_keys = pad_and_dilate(keys, init_key, padding, base_dilation)
    padded = pad_and_dilate(tangents, 0, padding, base_dilation)
    better = np.greater_equal if select_max else np.less_equal
    key_windows = window_slices(padded_keys, out_shape, window_dimensions, window_strides,
                           window_dilation)  # fmt: skip
    windows = window_slices(padded, out_shape, window_dimensions, window_strides, window_dilation)
    for (_, k), (_, t) in zip(key_windows, windows, strict=True):
        keep = better(acc_key, k)
        acc_key = np.where(keep, acc_key, k)
        acc = np.where(keep, acc, t)
    return acc


@abstract_eval_rules.register(select_and_scatter_p)
def _select_and_scatter_abstract_eval(
    operand: AbstractValue,
    source: AbstractValue,
    init_value: AbstractValue,
    *,
    select_jaxpr: Jaxpr,
    select_consts: tuple[Any, ...],
    scatter_jaxpr: Jaxpr,
    scatter_consts: tuple[Any, ...],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Padding,
) -> ShapedArray:
    avals = [c.array_aval("select_and_scatter", a) for a in (operand, source, init_value)]
    check_shapelike("select_and_scatter", "window_dimensions", window_dimensions)
    check_shapelike("select_and_scatter", "window_strides", window_strides)
    if len(window_dimensions) != len(window_strides):
        raise TypeError(
            "select_and_scatter got inconsistent window_strides and window_dimensions: got "
            f"window_strides {window_strides} and window_dimensions {window_dimensions}."
        )
    return ShapedArray(avals[0].shape, avals[0].dtype, all(a.weak_type for a in avals))


def _scalar_call(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> np.ndarray:
    (out,) = eval_jaxpr(jaxpr, list(consts), *args)
    return np.asarray(to_numpy(out))


@impl_rules.register(select_and_scatter_p)
def _select_and_scatter_impl(
    operand: np.ndarray,
    source: np.ndarray,
    init_value: np.ndarray,
    *,
    select_jaxpr: Jaxpr,
    select_consts: tuple[Any, ...],
    scatter_jaxpr: Jaxpr,
    scatter_consts: tuple[Any, ...],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Padding,
) -> np.ndarray:
    operand, source = np.asarray(operand), np.asarray(source)
    out = np.full(operand.shape, init_value, operand.dtype)
    lows = [int(lo) for lo, _ in padding]
    # XLA's semantics, window by window: padding is never selected; the current element is
    # kept while `select(current, candidate)` holds; then the source value is scattered.
    for window in itertools.product(*(range(n) for n in source.shape)):
        chosen: tuple[int, ...] | None = None
        for offset in itertools.product(*(range(int(w)) for w in window_dimensions)):
            pos = tuple(
                i * int(s) + o - lo
                for i, s, o, lo in zip(window, window_strides, offset, lows, strict=True)
            )
            if any(not 0 <= p < d for p, d in zip(pos, operand.shape, strict=True)):
                continue
            if chosen is None or not bool(
                _scalar_call(select_jaxpr, select_consts, operand[chosen], operand[pos])
            ):
                chosen = pos
        if chosen is not None:
            out[chosen] = _scalar_call(scatter_jaxpr, scatter_consts, out[chosen], source[window])
    return out


def _select_and_scatter(
    operand: Array,
    select: Callable[[Any, Any], Any],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    source: Array,
    init_value: Array,
    scatter: Callable[[Any, Any], Any],
) -> Array:
    aval = typeof(init_value)
    select_jaxpr, select_consts = reduction_jaxpr(select, aval)
    scatter_jaxpr, scatter_consts = reduction_jaxpr(scatter, aval)
    return select_and_scatter_p.bind(
        operand,
        source,
        init_value,
        select_jaxpr=select_jaxpr,
        select_consts=select_consts,
        scatter_jaxpr=scatter_jaxpr,
        scatter_consts=scatter_consts,
        window_dimensions=tuple(window_dimensions),
        window_strides=tuple(window_strides),
        padding=tuple(padding),
    )


def _select_and_scatter_add(
    source: Array,
    operand: Array,
    select_prim: Primitive,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
) -> Array:
    return select_and_scatter_add_p.bind(
        source,
        operand,
        select_prim=select_prim,
        window_dimensions=tuple(window_dimensions),
        window_strides=tuple(window_strides),
        padding=tuple(padding),
    )


def _select_and_gather_add(
    tangents: Array,
    operand: Array,
    select_prim: Primitive,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> Array:
    return select_and_gather_add_p.bind(
        tangents,
        operand,
        select_prim=select_prim,
        window_dimensions=tuple(window_dimensions),
        window_strides=tuple(window_strides),
        padding=tuple(padding),
        base_dilation=tuple(base_dilation),
        window_dilation=tuple(window_dilation),
    )


def select_and_scatter_add_expanded(
    source: Array,
    operand: Array,
    *,
    select_prim: Primitive,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
) -> Array:
    """`select_and_scatter_add` as a `select_and_scatter` of the operand padded explicitly
    with the selection's identity, so padding wins no window with a real element in it, and
    cropped after: how JAX lowers it on CPU."""
    dtype = np.dtype(typeof(source).dtype)  # type: ignore[attr-defined]  # arrays
    shape = tuple(typeof(operand).shape)  # type: ignore[attr-defined]  # arrays
    identity = max_identity if _selects_max(select_prim) else min_identity
    padded = pad(operand, identity(dtype), [(lo, hi, 0) for lo, hi in padding])

    def choose(x: Any, y: Any) -> Any:
        return select_prim.bind(x, y)

    scatter = ew.bitwise_or if dtype == np.bool_ else ew.add
    zero = np.array(0, dtype)
    out = _select_and_scatter(
        padded,
        choose,
        window_dimensions,
        window_strides,
        [(0, 0)] * len(padding),
        source,
        zero,
        scatter,
    )
    starts = [lo for lo, _ in padding]
    stops = [lo + d for (lo, _), d in zip(padding, shape, strict=True)]
    return slice_(out, starts, stops)


def select_and_gather_add_variadic(
    tangents: Array,
    operand: Array,
    *,
    select_prim: Primitive,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> Array:
    """`select_and_gather_add` as a `reduce_window` of (operand, tangent) pairs that keeps
    the pair whose operand is selected: how JAX lowers it on CPU."""

    def keep_selected(x: Any, y: Any) -> tuple[Any, Any]:
        (kx, vx), (ky, vy) = x, y
        which = select_prim.bind(kx, ky)
        return select(which, kx, ky), select(which, vx, vy)

    dtype = np.dtype(typeof(operand).dtype)  # type: ignore[attr-defined]  # arrays
    start = -np.inf if _selects_max(select_prim) else np.inf
    inits = (np.array(start, dtype=dtype), np.array(0, dtype=dtype))
    _, out = reduce_window(
        (operand, tangents),
        inits,
        keep_selected,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    return out


__all__ = ["select_and_gather_add_p", "select_and_scatter_add_p", "select_and_scatter_p"]
