"""Differentiation rules of `gather` and the scatters, as JAX's: gather's transpose is a
scatter-add into zeros, scatter-add's a gather of the cotangent. A plain scatter with
overlapping indices differentiates through the update ids that win; scatter-mul only with
unique indices; scatter-min/max share the tangent among tied winners; indices never have a
derivative."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import (
    Zero,
    defjvp,
    instantiate_zeros,
    is_undefined,
    jvp_rules,
    transpose_rules,
    zero_of,
)
from lamina_core.ir import Primitive
from lamina_core.lax import _gather_scatter as gs
from lamina_core.lax._ad_common import aval_of, full_like
from lamina_core.lax._elementwise import add, div, eq, mul, neg
from lamina_core.lax._selection import select
from lamina_core.lax._shape import iota, reshape
from lamina_core.lax._structural import _convert_element_type, full


def _gather_jvp(g: Any, x: Any, indices: Any, **params: Any) -> Any:
    return gs.gather(
        g,
        indices,
        params["dimension_numbers"],
        params["slice_sizes"],
        unique_indices=params["unique_indices"],
        indices_are_sorted=params["indices_are_sorted"],
        mode=params["mode"],
        fill_value=0,
    )


def _gather_transpose(ct: Any, x: Any, indices: Any, **params: Any) -> Sequence[Any]:
    dnums = params["dimension_numbers"]
    zeros = full(x.aval.shape, 0, aval_of(ct).dtype)
    scatter_dnums = gs.ScatterDimensionNumbers(
        update_window_dims=dnums.offset_dims,
        inserted_window_dims=dnums.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dnums.start_index_map,
        operand_batching_dims=dnums.operand_batching_dims,
        scatter_indices_batching_dims=dnums.start_indices_batching_dims,
    )
    out = gs.scatter_add(
        zeros,
        indices,
        ct,
        scatter_dnums,
        unique_indices=params["unique_indices"],
        indices_are_sorted=params["indices_are_sorted"],
        mode=params["mode"],
    )
    return [out, None]


defjvp(gs.gather_p, _gather_jvp, None)
transpose_rules.set(gs.gather_p, _gather_transpose)


def _inverse_gather(dnums: Any, operand_rank: int, updates_shape: Sequence[int]) -> Any:
    """The gather undoing a scatter with `dnums`: its dimension numbers and slice sizes."""
    gather_dnums = gs.GatherDimensionNumbers(
        offset_dims=dnums.update_window_dims,
        collapsed_slice_dims=dnums.inserted_window_dims,
        start_index_map=dnums.scatter_dims_to_operand_dims,
        operand_batching_dims=dnums.operand_batching_dims,
        start_indices_batching_dims=dnums.scatter_indices_batching_dims,
    )
    slice_sizes = []
    pos = 0
    for i in range(operand_rank):
        if i in dnums.inserted_window_dims or i in dnums.operand_batching_dims:
            slice_sizes.append(1)
        else:
            slice_sizes.append(updates_shape[dnums.update_window_dims[pos]])
            pos += 1
    return gather_dnums, slice_sizes


def _scatter_addsub_jvp(prim: Primitive) -> Any:
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        operand, indices, updates = primals
        g_operand, _, g_updates = tangents
        out = prim.bind(operand, indices, updates, **params)
        if type(g_operand) is Zero and type(g_updates) is Zero:
            return out, zero_of(out)
        g_operand = instantiate_zeros(g_operand)
        g_updates = instantiate_zeros(g_updates)
        return out, prim.bind(g_operand, indices, g_updates, **params)

    return rule


def _scatter_addsub_transpose(prim: Primitive) -> Any:
    def rule(ct: Any, operand: Any, indices: Any, updates: Any, **params: Any) -> Sequence[Any]:
        dnums = params["dimension_numbers"]
        updates_shape = updates.aval.shape if is_undefined(updates) else aval_of(updates).shape
        operand_ct = ct if is_undefined(operand) else None
        update_ct = None
        if is_undefined(updates):
            gather_dnums, slice_sizes = _inverse_gather(
                dnums, len(aval_of(ct).shape), updates_shape
            )
            update_ct = gs.gather(
                ct, indices, gather_dnums, slice_sizes, mode=params["mode"], fill_value=0
            )
            if prim is gs.scatter_sub_p:
                update_ct = neg(update_ct)
        return [operand_ct, None, update_ct]

    return rule


for _p in (gs.scatter_add_p, gs.scatter_sub_p):
    jvp_rules.set(_p, _scatter_addsub_jvp(_p))
    transpose_rules.set(_p, _scatter_addsub_transpose(_p))


def _scatter_kwargs(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "indices_are_sorted": params["indices_are_sorted"],
        "unique_indices": params["unique_indices"],
        "mode": params["mode"],
    }


def _scatter_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    if params["update_jaxpr"] is not None:
        # A scatter that combines (`scatter_apply`): JAX differentiates only plain sets.
        raise NotImplementedError("scatter_apply JVP not implemented")
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    dnums = params["dimension_numbers"]
    if type(g_operand) is Zero and type(g_updates) is Zero:
        out = gs.scatter_p.bind(operand, indices, updates, **params)
        return out, zero_of(out)
    g_operand = instantiate_zeros(g_operand)
    g_updates = instantiate_zeros(g_updates)
    if params["unique_indices"]:
        out = gs.scatter_p.bind(operand, indices, updates, **params)
        return out, gs.scatter_p.bind(g_operand, indices, g_updates, **params)
    # Overlapping indices: scatter an id per update, gather the winners back, and mask the
    # losers out of operand and updates, then recompute both outputs with scatter-add.
    kw = _scatter_kwargs(params)
    updates_shape = aval_of(updates).shape
    ids_shape = list(updates_shape)
    for d in dnums.update_window_dims:
        ids_shape[d] = 1
    num_ids = math.prod(ids_shape)
    id_dtype = np.dtype(np.uint32 if num_ids <= np.iinfo(np.uint32).max else np.uint64)
    update_ids = add(
        reshape(iota(id_dtype, num_ids), ids_shape), full_like(updates, 1, dtype=id_dtype)
    )
    operand_aval = aval_of(operand)
    scattered_ids = gs.scatter(
        full(operand_aval.shape, 0, id_dtype), indices, update_ids, dnums, **kw
    )
    gather_dnums, slice_sizes = _inverse_gather(dnums, len(operand_aval.shape), updates_shape)
    gathered_ids = gs.gather(scattered_ids, indices, gather_dnums, slice_sizes)
    masked_operand = select(
        eq(scattered_ids, full_like(scattered_ids, 0)), operand, full_like(operand, 0)
    )
    masked_updates = select(eq(update_ids, gathered_ids), updates, full_like(updates, 0))
    masked_g_operand = select(
        eq(scattered_ids, full_like(scattered_ids, 0)), g_operand, full_like(g_operand, 0)
    )
    masked_g_updates = select(eq(update_ids, gathered_ids), g_updates, full_like(g_updates, 0))
    out = gs.scatter_add(masked_operand, indices, masked_updates, dnums, **kw)
    tangent = gs.scatter_add(masked_g_operand, indices, masked_g_updates, dnums, **kw)
    return out, tangent


def _scatter_transpose(ct: Any, operand: Any, indices: Any, updates: Any, **params: Any) -> Any:
    if not params["unique_indices"]:
        raise NotImplementedError("scatter transpose is only implemented where unique_indices=True")
    dnums = params["dimension_numbers"]
    updates_shape = updates.aval.shape if is_undefined(updates) else aval_of(updates).shape
    ct_aval = aval_of(ct)
    operand_ct = update_ct = None
    if is_undefined(operand):
        operand_ct = gs.scatter(
            ct,
            indices,
            full(updates_shape, 0, ct_aval.dtype),
            dnums,
            indices_are_sorted=params["indices_are_sorted"],
            unique_indices=True,
            mode=params["mode"],
        )
    if is_undefined(updates):
        gather_dnums, slice_sizes = _inverse_gather(dnums, len(ct_aval.shape), updates_shape)
        update_ct = gs.gather(
            ct, indices, gather_dnums, slice_sizes, mode=params["mode"], fill_value=0
        )
    return [operand_ct, None, update_ct]


jvp_rules.set(gs.scatter_p, _scatter_jvp)
transpose_rules.set(gs.scatter_p, _scatter_transpose)


def _scatter_mul_jvp_updates(g: Any, x: Any, i: Any, y: Any, **params: Any) -> Any:
    if not params["unique_indices"]:
        raise NotImplementedError(
            "scatter_mul gradients are only implemented if `unique_indices=True`"
        )
    return mul(
        x,
        gs.scatter_add(
            full_like(x, 0), i, g, params["dimension_numbers"], **_scatter_kwargs(params)
        ),
    )


defjvp(
    gs.scatter_mul_p,
    lambda g, x, i, y, **params: gs.scatter_mul_p.bind(g, i, y, **params),
    None,
    _scatter_mul_jvp_updates,
)


def _scatter_mul_transpose(
    ct: Any, operand: Any, indices: Any, updates: Any, **params: Any
) -> Sequence[Any]:
    dnums = params["dimension_numbers"]
    updates_shape = updates.aval.shape if is_undefined(updates) else aval_of(updates).shape
    operand_ct = update_ct = None
    if is_undefined(operand):
        operand_ct = gs.scatter_mul(ct, indices, updates, dnums, **_scatter_kwargs(params))
    if is_undefined(updates):
        if not params["unique_indices"]:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`"
            )
        gather_dnums, slice_sizes = _inverse_gather(dnums, len(aval_of(ct).shape), updates_shape)
        update_ct = gs.gather(
            mul(ct, operand), indices, gather_dnums, slice_sizes, mode=params["mode"], fill_value=0
        )
    return [operand_ct, None, update_ct]


transpose_rules.set(gs.scatter_mul_p, _scatter_mul_transpose)


def _weak(x: Any, value: float) -> Any:
    return _convert_element_type(value, aval_of(x).dtype, True)


def _scatter_extremal_jvp(prim: Primitive) -> Any:
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        operand, indices, updates = primals
        g_operand, _, g_updates = tangents
        dnums = params["dimension_numbers"]
        out = prim.bind(operand, indices, updates, **params)
        if type(g_operand) is Zero and type(g_updates) is Zero:
            return out, zero_of(out)
        g_operand = instantiate_zeros(g_operand)
        g_updates = instantiate_zeros(g_updates)
        gather_dnums, slice_sizes = _inverse_gather(
            dnums, len(aval_of(operand).shape), aval_of(updates).shape
        )
        initial = gs.gather(operand, indices, gather_dnums, slice_sizes)
        target = gs.gather(out, indices, gather_dnums, slice_sizes)
        successful = eq(updates, target)
        retained = eq(initial, target)
        num_updates = gs.gather(
            gs.scatter_add(
                full_like(operand, 0),
                indices,
                select(successful, full_like(updates, 1), full_like(updates, 0)),
                dnums,
            ),
            indices,
            gather_dnums,
            slice_sizes,
        )
        num_refs = gs.gather(
            gs.scatter_add(full_like(operand, 0), indices, full_like(updates, 1), dnums),
            indices,
            gather_dnums,
            slice_sizes,
        )
        one = _weak(num_updates, 1.0)
        updates_normalizer = select(
            retained,
            div(one, add(num_updates, _weak(num_updates, 1))),
            div(_weak(num_updates, 1.0), num_updates),
        )
        updates_coef = select(successful, updates_normalizer, full_like(updates, 0))
        operand_normalizer = select(
            retained,
            div(_weak(num_updates, 1.0), add(num_updates, _weak(num_updates, 1))),
            full_like(num_updates, 0),
        )
        operand_coef = div(add(_weak(operand_normalizer, -1.0), operand_normalizer), num_refs)
        target_tangents = gs.gather(g_operand, indices, gather_dnums, slice_sizes)
        tangent_updates = add(mul(target_tangents, operand_coef), mul(g_updates, updates_coef))
        tangent = gs.scatter_add(
            g_operand, indices, tangent_updates, dnums, **_scatter_kwargs(params)
        )
        return out, tangent

    return rule


for _p in (gs.scatter_min_p, gs.scatter_max_p):
    jvp_rules.set(_p, _scatter_extremal_jvp(_p))
