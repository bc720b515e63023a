"""`jax.interpreters.batching`: vmap rules of primitives, in Lamina's batching table.

`fancy_primitive_batchers` is Lamina's table seen as a dict (JAX's fancy rules and Lamina's
take the same arguments: `rule(axis_data, vals, dims, **params) -> (out, out_dim)`).
`primitive_batchers[p] = rule` registers a rule without the axis data,
`rule(vals, dims, **params)`, and `axis_primitive_batchers[p] = rule` one given the axis size
and name first, `rule(size, name, None, vals, dims, **params)`; as JAX's, both are write-only.
`register_vmappable` lets `vmap` map over a user's container type with its own `to_elt` and
`from_elt` (see `lamina_core.interpreters.vmappables`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina_core import lax as _lax
from lamina_core.interpreters import AxisData, BatchDim, batching_rules
from lamina_core.interpreters import register_vmappable as register_vmappable
from lamina_core.interpreters import unregister_vmappable as unregister_vmappable
from lamina_core.ir import Primitive, RuleMapping

fancy_primitive_batchers: RuleMapping[Any] = RuleMapping(batching_rules)
"""`fancy_primitive_batchers[p] = rule`: `rule(axis_data, vals, dims, **params)`."""


def _unbatched(prim: Primitive, vals: Sequence[Any], params: dict[str, Any]) -> tuple[Any, Any]:
    out = prim.bind(*vals, **params)
    return (out, [None] * len(out)) if prim.multiple_results else (out, None)


class PrimitiveBatchersProxy:
    """`primitive_batchers[p] = rule`, with `rule(vals, dims, **params) -> (out, out_dim)`."""

    def __setitem__(self, prim: Primitive, batcher: Callable[..., Any]) -> None:
        def rule(
            axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
        ) -> tuple[Any, Any]:
            if all(d is None for d in dims):
                return _unbatched(prim, vals, params)
            return batcher(vals, dims, **params)  # type: ignore[no-any-return]  # the user's rule

        batching_rules.replace(prim, rule)

    def __delitem__(self, prim: Primitive) -> None:
        batching_rules.remove(prim)


class AxisPrimitiveBatchersProxy:
    """`axis_primitive_batchers[p] = rule`, with
    `rule(axis_size, axis_name, None, vals, dims, **params) -> (out, out_dim)`."""

    def __setitem__(self, prim: Primitive, batcher: Callable[..., Any]) -> None:
        def rule(
            axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
        ) -> tuple[Any, Any]:
            return batcher(axis_data.size, axis_data.name, None, vals, dims, **params)  # type: ignore[no-any-return]  # the user's rule

        batching_rules.replace(prim, rule)


primitive_batchers = PrimitiveBatchersProxy()
axis_primitive_batchers = AxisPrimitiveBatchersProxy()


def _forget(prim: Primitive) -> None:
    if prim in batching_rules:
        batching_rules.remove(prim)


def defvectorized(prim: Primitive) -> None:
    """`prim` maps elementwise over its operands: the mapped axis stays where it is."""
    _forget(prim)
    _lax.defvectorized(prim)


def defbroadcasting(prim: Primitive) -> None:
    """`prim` is n-ary elementwise with broadcasting: JAX's broadcasting batcher."""
    _forget(prim)
    _lax.defbroadcasting(prim)


def defreducer(prim: Primitive) -> None:
    """`prim` reduces its operand over the `axes` param: the mapped axis is kept out."""
    _forget(prim)
    _lax.defreducer(prim)


def bdim_at_front(x: Any, bdim: BatchDim, size: int, mesh_axis: Any = None) -> Any:
    """`x` with its mapped axis first; an unmapped `x` is broadcast to `size` there."""
    del mesh_axis  # Lamina's vmap maps over no mesh axis
    return _lax.bdim_at_front(x, bdim, size)


def broadcast(x: Any, sz: int, axis: int, mesh_axis: Any = None) -> Any:
    """`x` with a new axis of size `sz` at `axis`."""
    del mesh_axis
    return _lax.broadcast_batched(x, sz, axis)
