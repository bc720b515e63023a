"""Windowed reductions: `lax.reduce_window`, the generic `reduce_window_p` and the monoid
primitives `reduce_window_sum_p`, `reduce_window_max_p`, `reduce_window_min_p`.

As JAX, `reduce_window` binds a monoid primitive when the computation is `lax.add` from 0, or
`lax.max` / `lax.min` from their identities, and the generic primitive (its computation traced
to an open jaxpr and consts) otherwise, for one operand or a tree of them. Windows may be
strided and dilated, and the operand padded and base-dilated; the NumPy references pad (and
dilate) with the init value, as XLA does, and fold the window positions one at a time.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Final

import numpy as np

from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    Jaxpr,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    register_open_jaxpr_params,
)
from lamina_core.lax import _checks as c
from lamina_core.lax import _elementwise as ew
from lamina_core.lax._joining import _pad_impl
from lamina_core.lax._reduce_generic import (
    batched_fold,
    concrete_scalar,
    flatten_with_inits,
    max_identity,
    min_identity,
    split_operands,
    treedef_text,
    variadic_reduction_jaxpr,
)
from lamina_core.lax._shape import check_shapelike
from lamina_core.lax._types import Array
from lamina_core.trace import typeof
from lamina_core.tree import tree_util

reduce_window_p: Final = Primitive("reduce_window", multiple_results=True)
register_open_jaxpr_params(reduce_window_p.name, ["jaxpr"])  # read back by `ir.parse`
reduce_window_sum_p: Final = Primitive("reduce_window_sum")
reduce_window_max_p: Final = Primitive("reduce_window_max")
reduce_window_min_p: Final = Primitive("reduce_window_min")

Padding = tuple[tuple[int, int], ...]


# --- shapes -----------------------------------------------------------------------------------


def dilate_shape(shape: Sequence[int], dilation: Sequence[int]) -> tuple[int, ...]:
    """`shape` with `dilation - 1` holes between neighbouring elements."""
    if not np.all(np.greater(dilation, 0)):
        raise TypeError(f"All dilations must be positive, got {dilation}.")
    dilation = (1,) * (len(shape) - len(dilation)) + tuple(dilation)
    return tuple(
        d if k == 1 else max(0, 1 + k * (d - 1)) for d, k in zip(shape, dilation, strict=False)
    )


def _padtype_to_pads(
    in_shape: Sequence[int], window_shape: Sequence[int], strides: Sequence[int], padding: str
) -> list[tuple[int, int]]:
    """JAX's `padtype_to_pads` for the padding names: 'VALID', 'SAME', 'SAME_LOWER'."""
    name = padding.upper()
    if name not in ("VALID", "SAME", "SAME_LOWER"):
        raise RuntimeError(
            f"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got {padding}."
        )
    if name == "VALID":
        return [(0, 0)] * len(in_shape)
    shape, window, stride = np.asarray(in_shape), np.asarray(window_shape), np.asarray(strides)
    out_shape = -np.floor_divide(np.negative(shape), stride)
    sizes = [max(int(d), 0) for d in (out_shape - 1) * stride + window - shape]
    if name == "SAME":
        return [(s // 2, s - s // 2) for s in sizes]
    return [(s - s // 2, s // 2) for s in sizes]


def reduce_window_shape_tuple(
    operand_shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> tuple[int, ...]:
    """The shape `reduce_window` gives an operand of `operand_shape` with these windows."""
    if base_dilation is not None:
        operand_shape = dilate_shape(operand_shape, base_dilation)
    if window_dilation is not None:
        window_dimensions = dilate_shape(window_dimensions, window_dilation)
    padded = [d + lo + hi for d, (lo, hi) in zip(operand_shape, padding, strict=False)]
    return tuple(
        max((d - w) // s + 1, 0)
        for d, w, s in zip(padded, window_dimensions, window_strides, strict=False)
    )


def window_shape(
    aval: ShapedArray,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> tuple[int, ...]:
    """The output shape of a windowed reduction, with JAX's checks and messages."""
    name = "reduce_window"
    check_shapelike(name, "window_dimensions", window_dimensions, non_zero_shape=True)
    check_shapelike(name, "window_strides", window_strides, non_zero_shape=True)
    check_shapelike(name, "base_dilation", base_dilation)
    check_shapelike(name, "window_dilation", window_dilation)
    if aval.ndim != len(window_dimensions):
        raise TypeError(
            f"reduce_window got the wrong number of window_dimensions for operand: got operand "
            f"shape {aval.shape} with window_dimensions {window_dimensions}."
        )
    for arg, value in (
        ("window_strides", window_strides),
        ("base_dilation", base_dilation),
        ("window_dilation", window_dilation),
    ):
        if len(value) != len(window_dimensions):
            raise TypeError(
                f"reduce_window got inconsistent {arg} and window_dimensions: got {arg} {value} "
                f"and window_dimensions {window_dimensions}."
            )
    return reduce_window_shape_tuple(
        aval.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
    )


# --- windows on the host ----------------------------------------------------------------------


def pad_and_dilate(
    x: np.ndarray, fill: Any, padding: Sequence[tuple[int, int]], base_dilation: Sequence[int]
) -> np.ndarray:
    """`x` base-dilated and padded with `fill`, as XLA fills a windowed reduction's input."""
    config = [
        (int(lo), int(hi), int(b) - 1) for (lo, hi), b in zip(padding, base_dilation, strict=False)
    ]
    return np.asarray(_pad_impl(x, np.asarray(fill, x.dtype), padding_config=config))


def window_slices(
    padded: np.ndarray,
    out_shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    window_dilation: Sequence[int],
) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """For each window offset (row-major), its position in the padded operand and the
    elements at that offset of every window, shaped `out_shape`."""
    out = []
    for offset in itertools.product(*(range(int(w)) for w in window_dimensions)):
        starts = tuple(o * int(d) for o, d in zip(offset, window_dilation, strict=False))
        index = tuple(
            slice(s, s + (n - 1) * int(st) + 1, int(st))
            for s, n, st in zip(starts, out_shape, window_strides, strict=False)
        )
        out.append((starts, padded[index]))
    return out


def _host_fold(
    x: np.ndarray,
    fill: Any,
    combine: Callable[[np.ndarray, np.ndarray], np.ndarray],
    out_shape: tuple[int, ...],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> np.ndarray:
    acc = np.full(out_shape, fill, dtype=x.dtype)
    if 0 in out_shape:
        return acc
    padded = pad_and_dilate(x, fill, padding, base_dilation)
    for _, window in window_slices(
        padded, out_shape, window_dimensions, window_strides, window_dilation
    ):
        acc = combine(acc, window)
    return acc


def widen(x: np.ndarray) -> np.ndarray:
    """`x` in its accumulation type: narrow floats accumulate in float32, as on XLA's CPU."""
    return x.astype(np.float32) if c.kind_of(x.dtype) == "f" and x.dtype.itemsize < 4 else x


# --- reduce_window ----------------------------------------------------------------------------


@abstract_eval_rules.register(reduce_window_p)
def _reduce_window_abstract_eval(
    *avals: AbstractValue,
    jaxpr: Jaxpr,
    consts: tuple[Any, ...],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Padding,
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> list[ShapedArray]:
    arrays = [c.array_aval("reduce_window", a) for a in avals]
    operands, inits = split_operands(arrays)
    if any(o.dtype != i.dtype for o, i in zip(operands, inits, strict=True)):
        raise TypeError(
            "reduce_window got inconsistent dtypes for operands and init_values: got operand "
            f"dtypes {[o.dtype for o in operands]} and init_value dtypes "
            f"{[i.dtype for i in inits]}."
        )
    if any(i.shape != () for i in inits):
        raise TypeError(
            "reduce_window expected init_values to be scalars but init_values have shapes "
            f"{[i.shape for i in inits]}."
        )
    shape = window_shape(
        operands[0], window_dimensions, window_strides, padding, base_dilation, window_dilation
    )
    return [ShapedArray(shape, op.dtype) for op in operands]


@impl_rules.register(reduce_window_p)
def _reduce_window_impl(
    *args: np.ndarray,
    jaxpr: Jaxpr,
    consts: tuple[Any, ...],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Padding,
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> list[np.ndarray]:
    operands, inits = split_operands([np.asarray(a) for a in args])
    out_shape = reduce_window_shape_tuple(
        operands[0].shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    size = int(np.prod(out_shape, dtype=np.int64))
    accs = [np.full(size, i, dtype=x.dtype) for i, x in zip(inits, operands, strict=True)]
    if size:
        padded = [
            pad_and_dilate(x, i, padding, base_dilation)
            for x, i in zip(operands, inits, strict=True)
        ]
        per_operand = [
            [w.reshape(size) for _, w in window_slices(p, out_shape, window_dimensions,
                                                  window_strides, window_dilation)]
            for p in padded
        ]  # fmt: skip
        steps = [list(step) for step in zip(*per_operand, strict=True)]
        accs = batched_fold(ClosedJaxpr(jaxpr, list(consts)), accs, steps)
    return [a.astype(x.dtype).reshape(out_shape) for a, x in zip(accs, operands, strict=True)]


def _windowed_reduction(
    prim: Primitive,
    combine: Callable[[np.ndarray, np.ndarray], np.ndarray],
    identity: Callable[[np.dtype], Any],
    numbers_only: bool = False,
) -> None:
    def abstract_eval(
        x: AbstractValue,
        *,
        window_dimensions: Sequence[int],
        window_strides: Sequence[int],
        padding: Padding,
        base_dilation: Sequence[int],
        window_dilation: Sequence[int],
    ) -> ShapedArray:
        aval = c.array_aval(prim.name, x)
        if numbers_only and c.kind_of(aval.dtype) not in c.NUM:
            raise TypeError(
                f"operand to {prim.name} must have a number dtype, got {aval.dtype.name}"
            )
        shape = window_shape(
            aval, window_dimensions, window_strides, padding, base_dilation, window_dilation
        )
        return ShapedArray(shape, aval.dtype, aval.weak_type)

    def impl(
        x: np.ndarray,
        *,
        window_dimensions: Sequence[int],
        window_strides: Sequence[int],
        padding: Padding,
        base_dilation: Sequence[int],
        window_dilation: Sequence[int],
    ) -> np.ndarray:
        x = np.asarray(x)
        out_shape = reduce_window_shape_tuple(
            x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
        )
        wide = widen(x)
        out = _host_fold(
            wide,
            np.asarray(identity(x.dtype)).astype(wide.dtype),
            combine,
            out_shape,
            window_dimensions,
            window_strides,
            padding,
            base_dilation,
            window_dilation,
        )
        return out.astype(x.dtype)

    abstract_eval_rules.set(prim, abstract_eval)
    impl_rules.set(prim, impl)


def _sum_identity(dtype: np.dtype) -> Any:
    return np.array(0).astype(dtype)


_windowed_reduction(reduce_window_sum_p, np.add, _sum_identity, numbers_only=True)
_windowed_reduction(reduce_window_max_p, np.maximum, max_identity)
_windowed_reduction(reduce_window_min_p, np.minimum, min_identity)


def _bind_windowed(
    prim: Primitive,
    operand: Array,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Array:
    ones = (1,) * len(window_dimensions)
    return prim.bind(
        operand,
        window_dimensions=tuple(window_dimensions),
        window_strides=tuple(window_strides),
        padding=tuple(padding),
        base_dilation=ones if base_dilation is None else tuple(base_dilation),
        window_dilation=ones if window_dilation is None else tuple(window_dilation),
    )


_reduce_window_sum = partial(_bind_windowed, reduce_window_sum_p)
_reduce_window_max = partial(_bind_windowed, reduce_window_max_p)
_reduce_window_min = partial(_bind_windowed, reduce_window_min_p)


def _monoid_window_reducer(computation: Any, inits: Sequence[Any]) -> Callable[..., Any] | None:
    if len(inits) != 1:
        return None
    val = concrete_scalar(inits[0])
    if val is None:
        return None
    dtype = np.dtype(typeof(inits[0]).dtype)  # type: ignore[attr-defined]  # arrays
    if computation is ew.add:
        return _reduce_window_sum if val == 0 else None
    if computation is ew.max:
        return _reduce_window_max if val == max_identity(dtype) else None
    if computation is ew.min:
        return _reduce_window_min if val == min_identity(dtype) else None
    return None


def _shape_of(x: Any) -> tuple[int, ...]:
    return tuple(getattr(typeof(x), "shape", ()))


def reduce_window(
    operand: Any,
    init_value: Any,
    computation: Callable[[Any, Any], Any],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: str | Sequence[tuple[int, int]] = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """Reduce every window of `operand` (an array or a tree of arrays) with the monoid
    `computation` from the scalars `init_value`.

    `padding` is 'VALID', 'SAME', 'SAME_LOWER' or a `(low, high)` pair per dimension; windows
    may be strided and dilated, and the operand base-dilated (padded values and holes are the
    init value).

    Raises:
        ValueError: operands and init values of different structures, or no operand.
        TypeError: inconsistent window parameters or dtypes (JAX's messages).
    """
    flat_operands, flat_inits, operand_tree = flatten_with_inits(operand, init_value)
    if not flat_operands:
        raise ValueError("reduce_window must have at least one operand.")
    if isinstance(padding, str):
        dilated = (
            window_dimensions
            if window_dilation is None
            else dilate_shape(window_dimensions, window_dilation)
        )
        pads: Padding = tuple(
            _padtype_to_pads(_shape_of(flat_operands[0]), dilated, window_strides or [], padding)
        )
    else:
        pads = tuple((lo, hi) for lo, hi in padding)
    ones = (1,) * len(window_dimensions)
    strides = ones if window_strides is None else tuple(window_strides)
    base = ones if base_dilation is None else tuple(base_dilation)
    wdil = ones if window_dilation is None else tuple(window_dilation)
    monoid = _monoid_window_reducer(computation, flat_inits)
    if monoid is not None:
        out = monoid(flat_operands[0], window_dimensions, strides, pads, base, wdil)
        return tree_util.tree_unflatten(operand_tree, [out])
    init_avals = tuple(typeof(x) for x in flat_inits)
    closed, out_tree = variadic_reduction_jaxpr(
        "reduce_window comp", computation, init_avals, operand_tree
    )
    if operand_tree != out_tree:
        raise ValueError(
            "reduce_window output must have the same tree structure as the operands "
            f"{treedef_text(operand_tree)} vs. {treedef_text(out_tree)}"
        )
    out = reduce_window_p.bind(
        *flat_operands,
        *flat_inits,
        jaxpr=closed.jaxpr,
        consts=tuple(closed.consts),
        window_dimensions=tuple(window_dimensions),
        window_strides=strides,
        padding=pads,
        base_dilation=base,
        window_dilation=wdil,
    )
    return tree_util.tree_unflatten(out_tree, list(out))


__all__ = [
    "reduce_window",
    "reduce_window_max_p",
    "reduce_window_min_p",
    "reduce_window_p",
    "reduce_window_shape_tuple",
    "reduce_window_sum_p",
]
