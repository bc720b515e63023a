"""Differentiation rules of `gather`, `scatter-add` and `scatter-sub`, as JAX's: gather's
transpose is a scatter-add into zeros, scatter-add's a gather of the cotangent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters.jvp import defjvp, jvp_rules
from lamina_core.interpreters.transpose import is_undefined, transpose_rules
from lamina_core.interpreters.zeros import Zero, instantiate_zeros, zero_of
from lamina_core.lax import _gather_scatter as gs
from lamina_core.lax._ad_common import aval_of
from lamina_core.lax._elementwise import neg
from lamina_core.lax._structural import full
from lamina_core.primitive import Primitive


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
            gather_dnums = gs.GatherDimensionNumbers(
                offset_dims=dnums.update_window_dims,
                collapsed_slice_dims=dnums.inserted_window_dims,
                start_index_map=dnums.scatter_dims_to_operand_dims,
                operand_batching_dims=dnums.operand_batching_dims,
                start_indices_batching_dims=dnums.scatter_indices_batching_dims,
            )
            slice_sizes = []
            pos = 0
            for i in range(len(aval_of(ct).shape)):
                if i in dnums.inserted_window_dims or i in dnums.operand_batching_dims:
                    slice_sizes.append(1)
                else:
                    slice_sizes.append(updates_shape[dnums.update_window_dims[pos]])
                    pos += 1
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
