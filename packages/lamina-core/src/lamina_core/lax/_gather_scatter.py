"""Gather and scatter: `gather`, `scatter`, `scatter-add`, `-sub`, `-mul`, `-min` and `-max`.

The primitives carry XLA's dimension numbers with JAX's names and the index vector always in
the last dimension of the indices. The scatters combine updates with the operand through an
`update_jaxpr` on scalars (None for `scatter`, which replaces), traced once per function and
scalar type and then shared, so two equations of one kind hold the same jaxpr and print it
once, as `let jaxpr = ... in`, as JAX's do. Out-of-bounds indices follow `GatherScatterMode`;
the NumPy references (in `_gather_scatter_refs`) reproduce XLA for each mode.
"""

from __future__ import annotations

import enum
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from lamina_core.config import config
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import (
    AbstractValue,
    DebugInfo,
    Jaxpr,
    Literal,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
    register_open_jaxpr_params,
    register_param_type,
)
from lamina_core.lax import _checks as c
from lamina_core.lax import _gather_scatter_checks as checks
from lamina_core.lax import _gather_scatter_refs as refs
from lamina_core.lax._elementwise import add, max, min, mul, sub
from lamina_core.lax._shape import canonical_shape
from lamina_core.lax._structural import full
from lamina_core.lax._types import Array
from lamina_core.trace import CHECKED_SCOPES, Tracer, insert_pvary, reference_impl, typeof


class GatherScatterMode(enum.Enum):
    """What gather and scatter do with indices whose window does not fit in the operand.

    `CLIP` moves the window inside; `FILL_OR_DROP` gathers the fill value for it, or drops
    the update; `PROMISE_IN_BOUNDS` leaves it to the backend (XLA clamps gathers and drops
    scatters). `ONE_HOT` exists for parity with JAX's enum and is not supported here.
    """

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s: str | GatherScatterMode | None) -> GatherScatterMode:
        """The mode for `s`: a mode, `'clip'`, `'fill'`/`'drop'`/None, `'promise_in_bounds'`."""
        if isinstance(s, GatherScatterMode):
            return s
        named = {
            "clip": GatherScatterMode.CLIP,
            None: GatherScatterMode.FILL_OR_DROP,
            "fill": GatherScatterMode.FILL_OR_DROP,
            "drop": GatherScatterMode.FILL_OR_DROP,
            "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS,
            "one_hot": GatherScatterMode.ONE_HOT,
        }
        mode = named.get(s)
        if mode is None:
            raise ValueError(f'Unknown gather mode "{s}"')
        return mode


@dataclass(frozen=True, slots=True)
class GatherDimensionNumbers:
    """How the dimensions of a gather's operand, indices and output correspond.

    The fields are XLA's; the index vector is always the last dimension of the indices.
    Values are kept as given (JAX prints them so), normally tuples of ints.
    """

    offset_dims: tuple[int, ...]
    """Output dimensions that index into a slice of the operand (ascending)."""
    collapsed_slice_dims: tuple[int, ...]
    """Operand dimensions of slice size 1 that the output does not keep (ascending)."""
    start_index_map: tuple[int, ...]
    """For each component of an index vector, the operand dimension it starts."""
    operand_batching_dims: tuple[int, ...] = ()
    """Operand dimensions paired with `start_indices_batching_dims` (ascending)."""
    start_indices_batching_dims: tuple[int, ...] = ()
    """Indices dimensions paired, in order, with `operand_batching_dims`."""


@dataclass(frozen=True, slots=True)
class ScatterDimensionNumbers:
    """How the dimensions of a scatter's operand, indices and updates correspond (XLA's)."""

    update_window_dims: Sequence[int]
    """Dimensions of the updates that are window dimensions (ascending)."""
    inserted_window_dims: Sequence[int]
    """Size-1 operand window dimensions the updates do not have (ascending)."""
    scatter_dims_to_operand_dims: Sequence[int]
    """For each component of an index vector, the operand dimension it starts."""
    operand_batching_dims: Sequence[int] = ()
    """Operand dimensions paired with `scatter_indices_batching_dims` (ascending)."""
    scatter_indices_batching_dims: Sequence[int] = ()
    """Indices dimensions paired, in order, with `operand_batching_dims`."""


for _cls in (GatherScatterMode, GatherDimensionNumbers, ScatterDimensionNumbers):
    register_param_type(_cls)  # so printed jaxprs read back (`ir.parse`)

gather_p: Final = Primitive("gather")
scatter_p: Final = Primitive("scatter")
scatter_add_p: Final = Primitive("scatter-add")
scatter_sub_p: Final = Primitive("scatter-sub")
scatter_mul_p: Final = Primitive("scatter-mul")
scatter_min_p: Final = Primitive("scatter-min")
scatter_max_p: Final = Primitive("scatter-max")

SCATTERS: Final = (
    scatter_p,
    scatter_add_p,
    scatter_sub_p,
    scatter_mul_p,
    scatter_min_p,
    scatter_max_p,
)
for _scatter in SCATTERS:  # their update computations, read back by `ir.parse`
    register_open_jaxpr_params(_scatter.name, ["update_jaxpr"])


@abstract_eval_rules.register(gather_p)
def _gather_abstract_eval(
    operand: AbstractValue,
    indices: AbstractValue,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    unique_indices: bool,
    indices_are_sorted: bool,
    mode: GatherScatterMode,
    fill_value: Any,
) -> ShapedArray:
    x = c.array_aval("gather", operand)
    idx = c.array_aval("gather", indices)
    shape = checks.check_gather(x, idx, dimension_numbers, slice_sizes)
    return ShapedArray(shape, x.dtype, x.weak_type)


@impl_rules.register(gather_p)
def _gather_impl(
    operand: np.ndarray,
    indices: np.ndarray,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    unique_indices: bool,
    indices_are_sorted: bool,
    mode: GatherScatterMode,
    fill_value: Any,
) -> np.ndarray:
    if mode == GatherScatterMode.ONE_HOT:
        raise NotImplementedError("gather: mode ONE_HOT is not supported")
    dn = dimension_numbers
    fill = _default_fill(np.asarray(operand).dtype, fill_value)
    out_shape = checks.gather_shape(typeof(indices), dn, slice_sizes)  # type: ignore[arg-type]  # an array
    return refs.gather(
        operand,
        indices,
        offset_dims=dn.offset_dims,
        collapsed_slice_dims=dn.collapsed_slice_dims,
        start_index_map=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.start_indices_batching_dims,
        slice_sizes=slice_sizes,
        out_shape=out_shape,
        fill_value=fill if mode == GatherScatterMode.FILL_OR_DROP else None,
    )


def _default_fill(dtype: np.dtype, fill_value: Any) -> Any:
    """JAX's fill value for out-of-bounds gathers of `dtype`: NaN, the most negative integer,
    the largest unsigned integer, or True."""
    if fill_value is not None:
        return fill_value
    kind = c.kind_of(dtype)
    if kind in c.INEXACT:
        return np.nan
    if kind == "i":
        return int(dtypes.iinfo(dtype).min)
    if kind == "u":
        return int(dtypes.iinfo(dtype).max)
    if kind == "b":
        return True
    raise ValueError(f"Unsupported dtype for gather fill_value {dtype}")


# --- scatter --------------------------------------------------------------------------------


def _scatter_abstract_eval(
    operand: AbstractValue,
    indices: AbstractValue,
    updates: AbstractValue,
    *,
    update_jaxpr: Jaxpr | None,
    update_consts: Sequence[Any],
    dimension_numbers: ScatterDimensionNumbers,
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: GatherScatterMode,
) -> ShapedArray:
    x = c.array_aval("scatter", operand)
    idx = c.array_aval("scatter", indices)
    upd = c.array_aval("scatter", updates)
    checks.check_scatter(x, idx, upd, dimension_numbers)
    return ShapedArray(x.shape, x.dtype, x.weak_type)


_ACCUMULATE: Final[dict[Primitive, np.ufunc]] = {
    scatter_add_p: np.add,
    scatter_sub_p: np.subtract,
    scatter_mul_p: np.multiply,
    scatter_min_p: np.minimum,
    scatter_max_p: np.maximum,
}


def _scalar_combine(jaxpr: Jaxpr, consts: Sequence[Any]) -> refs.Combine:
    """`update_jaxpr` as a NumPy function of two scalars, run with the reference rules."""

    def combine(old: np.ndarray, new: np.ndarray) -> np.ndarray:
        env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts, strict=True))
        env.update(zip(jaxpr.invars, (old, new), strict=True))

        def read(atom: Any) -> Any:
            return atom.val if isinstance(atom, Literal) else env[atom]

        for eqn in jaxpr.eqns:
            out = reference_impl(eqn.primitive, [read(v) for v in eqn.invars], dict(eqn.params))
            outs = out if eqn.primitive.multiple_results else [out]
            env.update(zip(eqn.outvars, outs, strict=True))
        (result,) = jaxpr.outvars
        return np.asarray(read(result))

    return combine


def _scatter_impl_rule(prim: Primitive) -> Callable[..., np.ndarray]:
    def impl(
        operand: np.ndarray,
        indices: np.ndarray,
        updates: np.ndarray,
        *,
        update_jaxpr: Jaxpr | None,
        update_consts: Sequence[Any],
        dimension_numbers: ScatterDimensionNumbers,
        indices_are_sorted: bool,
        unique_indices: bool,
        mode: GatherScatterMode,
    ) -> np.ndarray:
        if mode == GatherScatterMode.ONE_HOT:
            raise NotImplementedError(f"{prim.name}: mode ONE_HOT is not supported")
        dn = dimension_numbers
        accumulate = _ACCUMULATE.get(prim)
        combine = None
        if accumulate is None and update_jaxpr is not None:
            combine = _scalar_combine(update_jaxpr, update_consts)
        return refs.scatter(
            operand,
            indices,
            updates,
            update_window_dims=tuple(dn.update_window_dims),
            inserted_window_dims=tuple(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=tuple(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=tuple(dn.operand_batching_dims),
            scatter_indices_batching_dims=tuple(dn.scatter_indices_batching_dims),
            clip=mode == GatherScatterMode.CLIP,
            accumulate=accumulate,
            combine=combine,
        )

    return impl


for _prim in SCATTERS:
    abstract_eval_rules.set(_prim, _scatter_abstract_eval)
    impl_rules.set(_prim, _scatter_impl_rule(_prim))


# --- update computations --------------------------------------------------------------------


class UpdateJaxprs:
    """Traced update computations, one per (function, scalar type, tracing configuration).

    Identity is intended: it owns the memo. Sharing one jaxpr between equations is what makes
    them print it once, as JAX's cached `_reduction_jaxpr` does.
    """

    def __init__(self, max_size: int = 4096) -> None:
        self._memo: dict[tuple[Any, ...], tuple[Jaxpr, tuple[Any, ...]]] = {}
        self._max_size = max_size

    def get(
        self, computation: Callable[[Any, Any], Any], aval: ShapedArray
    ) -> tuple[Jaxpr, tuple[Any, ...]]:
        key = (computation, aval, config.trace_context())
        found = self._memo.get(key)
        if found is None:
            found = self._trace(computation, aval)
            if len(self._memo) >= self._max_size:
                # Bounded, as JAX's cache is: the memo holds user functions alive.
                del self._memo[next(iter(self._memo))]
            self._memo[key] = found
        return found

    @staticmethod
    def _trace(
        computation: Callable[[Any, Any], Any], aval: ShapedArray
    ) -> tuple[Jaxpr, tuple[Any, ...]]:
        name = getattr(computation, "__name__", type(computation).__name__)
        closed = trace_to_jaxpr(
            lambda x, y: [computation(x, y)], (aval, aval), DebugInfo("reduction_jaxpr", name)
        )
        if any(isinstance(v, Tracer) for v in closed.consts):
            raise NotImplementedError(
                "Reduction computations can't close over Tracers. Please open an issue at "
                "https://github.com/jax-ml/jax."
            )
        return closed.jaxpr, tuple(closed.consts)


update_jaxprs: Final = UpdateJaxprs()


def _scalar_aval(operand: Array) -> ShapedArray:
    """The strongly typed scalar type of `operand`'s elements (JAX's `typeof(_const(x, 0))`)."""
    aval = typeof(operand)
    return ShapedArray((), aval.dtype)  # type: ignore[attr-defined]  # an array


# --- lax functions --------------------------------------------------------------------------


def gather(
    operand: Array,
    start_indices: Array,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: str | GatherScatterMode | None = None,
    fill_value: Any = None,
) -> Array:
    """XLA's gather: slices of `operand` of `slice_sizes`, started at `start_indices`.

    The mode defaults to `PROMISE_IN_BOUNDS`; in fill mode, `fill_value` defaults to NaN for
    inexact types, the most negative signed integer, the largest unsigned one, or True.
    """
    parsed = GatherScatterMode.from_any(
        GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode
    )
    if parsed == GatherScatterMode.FILL_OR_DROP:
        fill_value = _default_fill(typeof(operand).dtype, fill_value)  # type: ignore[attr-defined]  # an array
    else:
        fill_value = None
    if CHECKED_SCOPES[0]:
        operand, start_indices = insert_pvary(operand, start_indices)
    return gather_p.bind(
        operand,
        start_indices,
        dimension_numbers=dimension_numbers,
        slice_sizes=canonical_shape(slice_sizes),
        unique_indices=bool(unique_indices),
        indices_are_sorted=bool(indices_are_sorted),
        mode=parsed,
        fill_value=fill_value,
    )


def _bind_scatter(
    prim: Primitive,
    operand: Array,
    scatter_indices: Array,
    updates: Array,
    dimension_numbers: ScatterDimensionNumbers,
    computation: Callable[[Any, Any], Any] | None,
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: str | GatherScatterMode | None,
) -> Array:
    jaxpr: Jaxpr | None = None
    consts: tuple[Any, ...] = ()
    if computation is not None:
        jaxpr, consts = update_jaxprs.get(computation, _scalar_aval(operand))
    if CHECKED_SCOPES[0]:
        operand, scatter_indices, updates = insert_pvary(operand, scatter_indices, updates)
    return prim.bind(
        operand,
        scatter_indices,
        updates,
        update_jaxpr=jaxpr,
        update_consts=consts,
        dimension_numbers=dimension_numbers,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=GatherScatterMode.from_any(mode),
    )


def _scatter_function(prim: Primitive, computation: Callable[[Any, Any], Any], what: str) -> Any:
    def scatter_op(
        operand: Array,
        scatter_indices: Array,
        updates: Array,
        dimension_numbers: ScatterDimensionNumbers,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | GatherScatterMode | None = None,
    ) -> Array:
        return _bind_scatter(
            prim,
            operand,
            scatter_indices,
            updates,
            dimension_numbers,
            computation,
            indices_are_sorted,
            unique_indices,
            mode,
        )

    name = prim.name.replace("-", "_")
    scatter_op.__name__ = scatter_op.__qualname__ = name
    scatter_op.__doc__ = (
        f"XLA's scatter combining `updates` into `operand` by {what}; repeated indices combine "
        f"in turn. The mode defaults to `FILL_OR_DROP` (out-of-bounds updates are dropped)."
    )
    return scatter_op


scatter_add = _scatter_function(scatter_add_p, add, "addition")
scatter_sub = _scatter_function(scatter_sub_p, sub, "subtraction")
scatter_mul = _scatter_function(scatter_mul_p, mul, "multiplication")
scatter_min = _scatter_function(scatter_min_p, min, "minimum")
scatter_max = _scatter_function(scatter_max_p, max, "maximum")


def scatter(
    operand: Array,
    scatter_indices: Array,
    updates: Array,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Array:
    """XLA's scatter where `updates` replace the operand's elements (in an unspecified order
    for repeated indices)."""
    return _bind_scatter(
        scatter_p,
        operand,
        scatter_indices,
        updates,
        dimension_numbers,
        None,
        indices_are_sorted,
        unique_indices,
        mode,
    )


class _ApplyComputations:
    """The update computation for each unary function given to `scatter_apply`, kept (weakly)
    so a function applied twice gives the same jaxpr. Identity is intended: it owns the memo."""

    def __init__(self) -> None:
        self._memo: weakref.WeakKeyDictionary[Any, Callable[[Any, Any], Any]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self, func: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
        try:
            found = self._memo.get(func)
        except TypeError:  # not weakly referenceable: no sharing
            return lambda x, _: func(x)
        if found is None:
            # A weak reference: the computation must not keep `func`, the key, alive.
            ref = weakref.ref(func)
            found = self._memo[func] = lambda x, _: ref()(x)  # type: ignore[misc]  # alive while traced
        return found


_apply_computations: Final = _ApplyComputations()


def scatter_apply(
    operand: Array,
    scatter_indices: Array,
    func: Callable[[Any], Any],
    dimension_numbers: ScatterDimensionNumbers,
    *,
    update_shape: Sequence[int] = (),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Array:
    """`operand` with `func` applied at the scattered positions (again for each repeat)."""
    dtype = typeof(operand).dtype  # type: ignore[attr-defined]  # an array
    unused = full(update_shape, 0, dtype)
    computation = _apply_computations.get(func)
    jaxpr, consts = update_jaxprs.get(
        computation, ShapedArray((), dtype, dtypes.is_weakly_typed(operand))
    )
    return scatter_p.bind(
        operand,
        scatter_indices,
        unused,
        update_jaxpr=jaxpr,
        update_consts=consts,
        dimension_numbers=dimension_numbers,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=GatherScatterMode.from_any(mode),
    )


__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "ScatterDimensionNumbers",
    "gather",
    "gather_p",
    "scatter",
    "scatter_add",
    "scatter_add_p",
    "scatter_apply",
    "scatter_max",
    "scatter_max_p",
    "scatter_min",
    "scatter_min_p",
    "scatter_mul",
    "scatter_mul_p",
    "scatter_p",
    "scatter_sub",
    "scatter_sub_p",
]
