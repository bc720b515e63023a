"""Differentiation rules of `dot_general`, as JAX's: bilinear, each operand's transpose a
`dot_general` of the cotangent with the other operand, then a `transpose` to the operand's
axis order (and a conversion when a preferred element type changed the dtype)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import defbilinear
from lamina_core.ir import NamedSharding, PartitionSpec, spec_of
from lamina_core.lax._linalg import dot_general, dot_general_p
from lamina_core.lax._shape import transpose
from lamina_core.lax._structural import _convert_element_type
from lamina_core.trace import typeof


def _remaining(original: Sequence[int], *removed: Sequence[int]) -> list[int]:
    gone = {int(i) for group in removed for i in group}
    return [i for i in original if i not in gone]


def _ranges_like(*xs: Sequence[Any]) -> list[range]:
    out, start = [], 0
    for x in xs:
        out.append(range(start, start + len(x)))
        start += len(x)
    return out


def _argsort(values: Sequence[int]) -> list[int]:
    """The positions of `values` (distinct axes) in increasing order of value."""
    return sorted(range(len(values)), key=values.__getitem__)


def _transpose_lhs(
    ct: Any,
    x: Any,
    y: Any,
    *,
    dimension_numbers: Any,
    precision: Any,
    preferred_element_type: Any,
    out_sharding: Any,
    swap_ans: bool = False,
) -> Any:
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_aval = x.aval
    y_ndim = len(typeof(y).shape)  # type: ignore[attr-defined]
    x_kept = _remaining(range(x_aval.ndim), x_contract, x_batch)
    y_kept = _remaining(range(y_ndim), y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((ans_y, y_kept), (ans_batch, y_batch))
    # Plain Python on these few distinct axes (NumPy's argsort costs more than the sort).
    x_contract_sorted_by_y = [x_contract[i] for i in _argsort(y_contract)]
    unsorted_axes = list(x_batch) + x_kept + x_contract_sorted_by_y
    out_axes = _argsort(unsorted_axes)
    mesh = getattr(x_aval, "mesh", None)
    ds = None
    if mesh is not None and mesh.has_explicit:  # JAX: the cotangent is typed as `x`
        x_spec = spec_of(x_aval)
        ds = NamedSharding(mesh, PartitionSpec(*(x_spec[o] for o in unsorted_axes)))
    out = dot_general(
        ct,
        y,
        dims,
        precision=precision,
        preferred_element_type=preferred_element_type,
        out_sharding=ds,
    )
    x_bar = transpose(out, tuple(out_axes))
    if typeof(x_bar).dtype != x_aval.dtype:  # type: ignore[attr-defined]
        x_bar = _convert_element_type(x_bar, x_aval.dtype, x_aval.weak_type)
    return x_bar


def _transpose_rhs(
    ct: Any,
    x: Any,
    y: Any,
    *,
    dimension_numbers: Any,
    precision: Any,
    preferred_element_type: Any,
    out_sharding: Any,
) -> Any:
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    return _transpose_lhs(
        ct,
        y,
        x,
        dimension_numbers=swapped,
        precision=precision,
        preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
        swap_ans=True,
    )


defbilinear(dot_general_p, _transpose_lhs, _transpose_rhs)
