"""The collectives of checked `shard_map` bodies (`check_vma=True`), as JAX 0.10.2's.

`psum_invariant` is the all-reduce sum whose result no longer varies over the axes it sums
over (what `psum` binds in a checked body); `pvary` (declared in `lamina_core.trace._vma`) is its
transpose, the cast of an invariant value to a varying one. This module gives them their
rules (abstract evaluation, reference, jvp, transpose, batching) and says how the other
collectives change the manual axes their results vary over (`vma_rules`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from lamina_core.interpreters import AxisData, BatchDim, batching_rules, deflinear, needs_axis_rule
from lamina_core.ir import AbstractValue, Primitive, ShapedArray, abstract_eval_rules, impl_rules
from lamina_core.lax import _gather_scatter as _gs
from lamina_core.lax import _reduce_generic as _generic
from lamina_core.lax import _select_and_scatter as _ss
from lamina_core.lax import _windowed
from lamina_core.lax._collectives import (
    _as_tuple,
    _check_axis_names,
    _is_positional,
    _times_size,
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    pmax_p,
    pmin_p,
    ppermute_p,
    psum_p,
    reduce_scatter_p,
)
from lamina_core.lax._reductions import reduce_sum
from lamina_core.trace import collective_vma, keep_abstract_eval, pvary_p, union_vma, vma_rules

psum_invariant_p: Final = Primitive("psum_invariant")


def _invariant_vma(name: str, aval: AbstractValue, axes: tuple[Any, ...]) -> frozenset[Any]:
    """The axes a varying->invariant all-reduce's result varies over, or JAX's errors."""
    vma = aval.vma if isinstance(aval, ShapedArray) else frozenset()
    if not set(axes) & vma:
        raise ValueError(
            "psum is a variant->invariant collective. This means that the axis names mentioned "
            "in `axes` passed to `psum` must be present in `jax.typeof(inp).mat.varying`. Got "
            f"axes={axes} and jax.typeof(inp).mat.varying={vma}"
        )
    if any(_is_positional(a) for a in axes):
        raise ValueError(f"{name} does not accept integer axes. Got {axes}")
    return frozenset(a for a in vma if a not in axes)


@abstract_eval_rules.register(psum_invariant_p)
def _psum_invariant_abstract_eval(aval: AbstractValue, *, axes: tuple[Any, ...]) -> ShapedArray:
    _check_axis_names(axes, "psum")
    if not isinstance(aval, ShapedArray):
        raise aval.operand_error("psum")
    return aval.update(vma=_invariant_vma("psum_invariant", aval, axes))


@impl_rules.register(psum_invariant_p)
def _psum_invariant_impl(x: Any, *, axes: tuple[Any, ...]) -> Any:
    _check_axis_names(axes, "psum")
    raise NotImplementedError("collectives over named axes run under vmap only")


@abstract_eval_rules.register(pvary_p)
def _pvary_abstract_eval(aval: AbstractValue, *, axes: tuple[Any, ...]) -> ShapedArray:
    _check_axis_names(axes, "pvary")
    if not isinstance(aval, ShapedArray):
        raise aval.operand_error("pvary")
    if set(axes) & aval.vma:
        raise ValueError(
            "pvary is a invariant->variant collective. This means that the axis names "
            "mentioned in `axes` passed to `pvary` must not be present in "
            f"`jax.typeof(inp).mat.varying`. Got axes={axes} and jax.typeof(inp)={aval}"
        )
    return aval.update(vma=aval.vma | frozenset(axes))


@impl_rules.register(pvary_p)
def _pvary_impl(x: Any, *, axes: tuple[Any, ...]) -> Any:
    raise ValueError("pvary should be called under jax.shard_map.")


vma_rules.set(pvary_p, keep_abstract_eval)


def _psum_invariant_transpose(ct: Any, x: Any, *, axes: tuple[Any, ...]) -> list[Any]:
    return [pvary_p.bind(ct, axes=axes)]


def _pvary_transpose(ct: Any, x: Any, *, axes: tuple[Any, ...]) -> list[Any]:
    return [psum_invariant_p.bind(ct, axes=axes)]


deflinear(psum_invariant_p, _psum_invariant_transpose)
deflinear(pvary_p, _pvary_transpose)


def _psum_invariant_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, axes: tuple[Any, ...]
) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    frame = axis_data.name
    if frame is None or frame not in axes:
        return psum_invariant_p.bind(x, axes=axes), d
    # The sum over the mapped axis: over its positions, or `size` copies of an unmapped value.
    x = _times_size(x, axis_data.size) if d is None else reduce_sum(x, [d])
    rest = tuple(a for a in axes if a != frame)
    return (psum_invariant_p.bind(x, axes=rest) if rest else x), None


def _pvary_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, axes: tuple[Any, ...]
) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    # Over the mapped axis itself (a mesh axis evaluated by vmap) the cast is nothing.
    rest = tuple(a for a in axes if a != axis_data.name)
    return (pvary_p.bind(x, axes=rest) if rest else x), d


batching_rules.set(psum_invariant_p, _psum_invariant_batch)
batching_rules.set(pvary_p, _pvary_batch)
needs_axis_rule.update((psum_invariant_p, pvary_p))


# --- how the other collectives type their results ----------------------------------------------


def _reduction_vma(in_avals: Sequence[AbstractValue], *, axes: tuple[Any, ...], **_: Any) -> Any:
    # pmax/pmin in a checked body are varying -> invariant, as psum_invariant.
    return _invariant_vma("psum_invariant", in_avals[0], axes)


def _collective_vma(prim_name: str) -> Any:
    def rule(in_avals: Sequence[AbstractValue], *, axis_name: Any, **_: Any) -> frozenset[Any]:
        return collective_vma(prim_name, _as_tuple(axis_name), in_avals[0])

    return rule


def _psum_vma(in_avals: Sequence[AbstractValue], **_: Any) -> frozenset[Any]:
    # JAX's plain psum (check_vma=False's) gives a type varying over nothing.
    return frozenset()


vma_rules.set(psum_invariant_p, keep_abstract_eval)
vma_rules.set(axis_index_p, keep_abstract_eval)
vma_rules.set(psum_p, _psum_vma)
vma_rules.set(pmax_p, _reduction_vma)
vma_rules.set(pmin_p, _reduction_vma)
for _prim in (all_gather_p, ppermute_p, reduce_scatter_p, all_to_all_p):
    vma_rules.set(_prim, _collective_vma(_prim.name))
# Their params hold scalar computations, not bodies that type their results.
for _prim in (
    _gs.scatter_p, _gs.scatter_add_p, _gs.scatter_sub_p, _gs.scatter_mul_p, _gs.scatter_min_p,
    _gs.scatter_max_p, _ss.select_and_scatter_p, _windowed.reduce_window_p, _generic.reduce_p,
):  # fmt: skip
    vma_rules.set(_prim, union_vma)


__all__ = ["psum_invariant_p"]
