"""`VmapOf`: the batched form of a hi primitive that says only where its result's batch axis
goes (`batch_dim_rule`), as JAX's default `batch` makes it.

A `VJPHiPrimitive` without a `batch` rule but with `batch_dim_rule(axis_data, dims)` is batched
by wrapping it: `VmapOf(prim, axis, in_dims, out_dim)` is a hi primitive of the batched types
whose `expand` is `vmap` of the primitive's `expand`, and whose derivative rules are `vmap` of
the primitive's. It prints as JAX prints it, params included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from lamina_core import tree_util
from lamina_core.interpreters import (
    AxisData,
    Zero,
    batch_flat,
    instantiate_zeros,
    match_axis,
    sum_axis,
)
from lamina_core.ir import AbstractValue
from lamina_core.transforms import vmap
from lamina_hijax._primitives import GradAccum, VJPHiPrimitive

_NO_AXIS_NAME: Final = object()
"""The name JAX gives a `vmap` axis without one (it prints as an object, address masked)."""


@dataclass(frozen=True, slots=True)
class VmapAxis:
    """The mapped axis a `VmapOf` was made for, printed as JAX prints its `AxisData`."""

    name: Any
    size: int
    spmd_name: Any = None
    explicit_mesh_axis: Any = None

    @classmethod
    def of(cls, axis_data: AxisData) -> VmapAxis:
        name = _NO_AXIS_NAME if axis_data.name is None else axis_data.name
        return cls(name, axis_data.size, axis_data.spmd_name)

    def lamina(self) -> AxisData:
        return AxisData(
            None if self.name is _NO_AXIS_NAME else self.name, self.size, self.spmd_name
        )

    def vmap_params(self) -> dict[str, Any]:
        name = None if self.name is _NO_AXIS_NAME else self.name
        return {"axis_size": self.size, "axis_name": name, "spmd_axis_name": self.spmd_name}

    def __repr__(self) -> str:
        return (
            f"AxisData(name={self.name}, size={self.size}, spmd_name={self.spmd_name}, "
            f"explicit_mesh_axis={self.explicit_mesh_axis})"
        )


def _unmapped(size: int, dim: Any, aval: AbstractValue) -> AbstractValue:
    return aval if dim is None else aval.inc_rank(size, dim)


def _flat_dims(prim: VJPHiPrimitive, tree: Any, dims: Any) -> list[Any]:
    leaves: list[Any] = tree.flatten_up_to(dims)
    return leaves


class VmapOf(VJPHiPrimitive):
    """`prim` mapped over `axis`, its inputs batched as `in_dims` say and its result as
    `out_dim` (both trees of dims, `None` for unbatched)."""

    prim: VJPHiPrimitive
    axis_data: VmapAxis
    in_dims: Any
    out_dim: Any

    def __init__(self, prim: VJPHiPrimitive, axis_data: Any, in_dims: Any, out_dim: Any) -> None:
        axis = axis_data if isinstance(axis_data, VmapAxis) else VmapAxis.of(axis_data)
        ins = _flat_dims(prim, prim.in_tree, in_dims)
        outs = _flat_dims(prim, prim.out_tree, out_dim)
        self.in_avals = tuple(
            tree_util.tree_unflatten(
                prim.in_tree,
                [_unmapped(axis.size, d, a) for a, d in zip(prim.in_avals_flat, ins, strict=True)],
            )
        )
        self.out_aval = tree_util.tree_unflatten(
            prim.out_tree,
            [_unmapped(axis.size, d, a) for a, d in zip(prim.out_avals_flat, outs, strict=True)],
        )
        self.params = {"prim": prim, "axis_data": axis, "in_dims": in_dims, "out_dim": out_dim}
        super().__init__()

    def expand(self, *args: Any) -> Any:
        mapped = vmap(
            self.prim.expand,
            in_axes=self.in_dims,
            out_axes=self.out_dim,
            **self.axis_data.vmap_params(),
        )
        return mapped(*args)

    def jvp(self, primals: Any, tangents: Any) -> Any:
        mapped = vmap(
            self.prim.jvp,
            in_axes=(self.in_dims, self.in_dims),
            out_axes=(self.out_dim, self.out_dim),
            **self.axis_data.vmap_params(),
        )
        return mapped(primals, tangents)

    def vjp_fwd(self, nzs_in: Any, /, *args: Any) -> Any:
        # As JAX's (`out_axes=infer` for the residuals): a residual stays where the batched
        # rule left it, unbatched if it is; its dims ride along as a static residual.
        prim, axis = self.prim, self.axis_data.lamina()
        box: list[Any] = []

        def fwd(*xs: Any) -> list[Any]:
            out, res, *maybe_nzs = prim.vjp_fwd(nzs_in, *tree_util.tree_unflatten(prim.in_tree, xs))
            res_flat, res_tree = tree_util.tree_flatten(res)
            box[:] = [res_tree, maybe_nzs]
            return [*prim.out_tree.flatten_up_to(out), *res_flat]

        ins = _flat_dims(prim, prim.in_tree, self.in_dims)
        outs, dims = batch_flat(fwd, axis, _flat_dims(prim, prim.in_tree, tuple(args)), ins)
        n = prim.out_tree.num_leaves
        wanted = _flat_dims(prim, prim.out_tree, self.out_dim)
        pairs = zip(outs[:n], dims[:n], wanted, strict=True)
        primal = [match_axis(axis, d, w, v) for v, d, w in pairs]
        res_tree, maybe_nzs = box
        residuals = (outs[n:], _Static((res_tree, tuple(dims[n:]))))
        return (tree_util.tree_unflatten(prim.out_tree, primal), residuals, *maybe_nzs)

    def vjp_bwd_retval(self, res: Any, g: Any, /) -> Any:
        prim, axis = self.prim, self.axis_data.lamina()
        res_flat, static = res
        res_tree, res_dims = static.val
        ins = _flat_dims(prim, prim.in_tree, self.in_dims)
        out_dims = _flat_dims(prim, prim.out_tree, self.out_dim)
        nonzero: list[bool] = []

        def bwd(*flat: Any) -> list[Any]:
            r = tree_util.tree_unflatten(res_tree, flat[: len(res_flat)])
            ct = tree_util.tree_unflatten(prim.out_tree, flat[len(res_flat) :])
            accums = [GradAccum(a.to_ct_aval()) for a in prim.in_avals_flat]
            prim.vjp_bwd(r, ct, *tree_util.tree_unflatten(prim.in_tree, accums))
            nonzero[:] = [acc.value is not None and type(acc.value) is not Zero for acc in accums]
            return [instantiate_zeros(a.value) for a, nz in zip(accums, nonzero, strict=True) if nz]

        g_flat = [instantiate_zeros(c) for c in prim.out_tree.flatten_up_to(g)]
        outs, dims = batch_flat(bwd, axis, [*res_flat, *g_flat], [*res_dims, *out_dims])
        got = iter(zip(outs, dims, strict=True))
        cts: list[Any] = []
        for nz, want in zip(nonzero, ins, strict=True):
            if not nz:
                cts.append(None)
                continue
            v, d = next(got)
            # An unbatched input's cotangent is the sum of its per-element cotangents.
            if want is None:
                cts.append(v if d is None else sum_axis(v, d))
            else:
                cts.append(match_axis(axis, d, want, v))
        return tuple(tree_util.tree_unflatten(prim.in_tree, cts))

    def batch_dim_rule(self, axis_data: AxisData, in_dims: Any, /) -> Any:
        # The inner primitive sees dims with this axis's dims removed, and its result dim is
        # shifted back past this one's.
        def inner(d: Any, d_: Any) -> Any:
            return d if d is None or d_ is None else d - (d_ < d)

        def outer(d: Any, d_: Any) -> Any:
            return d if d is None or d_ is None else d + (d_ < d)

        none_leaf = {"is_leaf": lambda x: x is None}
        fixed = tree_util.tree_map(inner, in_dims, self.in_dims, **none_leaf)
        out_dim = self.prim.batch_dim_rule(axis_data, fixed)
        return tree_util.tree_map(outer, out_dim, self.out_dim, **none_leaf)


@dataclass(frozen=True, slots=True)
class _Static:
    """A residual that is not a value: the residuals' tree and their batch dims."""

    val: Any


tree_util.register_static(_Static)


def default_batch(
    prim: VJPHiPrimitive, axis_data: AxisData, args: Any, dims: Any
) -> tuple[Any, Any]:
    """JAX's `batch` of a hi primitive with a `batch_dim_rule`: the primitive, wrapped."""
    out_dim = prim.batch_dim_rule(axis_data, dims)
    return VmapOf(prim, axis_data, dims, out_dim)(*args), out_dim


__all__ = ["VmapAxis", "VmapOf", "default_batch"]
