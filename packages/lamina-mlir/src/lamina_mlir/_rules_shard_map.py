"""Lowering of `shard_map` to a Shardy manual computation, as JAX lowers it.

The body becomes the region of an `sdy.manual_computation` over the module's `@mesh`: its
block arguments have per-device shapes, `in_shardings`/`out_shardings` say how the global
operands and results are split, and `manual_axes` names the mesh axes the body is manual over.
The region is isolated from above, so the const args the body uses are passed in as operands
(replicated). While the body is lowered, the SPMD context (the mesh and its manual axes) is
current: the collectives read it to build their replica groups. When every newly manual axis
has size 1 there is nothing to partition: the body is lowered in place, as JAX does.

A body with ordered effects (an ordered `io_callback`, an ordered `debug.print`) threads their
tokens through the region as JAX does: one token operand and result per effect, ahead of the
arrays, replicated over the mesh.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_consts import jaxpr_const_args
from lamina_core import dtypes
from lamina_core.ir import AbstractMesh, AxisType, Jaxpr, Mesh, PartitionSpec, ShapedArray
from lamina_core.sharding import manual_axes_env, shard_map_p
from lamina_mlir._constants import ir_constant
from lamina_mlir._context import LoweringRuleContext, TokenSet, ordered_effects
from lamina_mlir._lower import jaxpr_subcomp
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import register
from lamina_mlir._sharding import sharding_attr


@dataclass(frozen=True, slots=True)
class SpmdContext:
    """Where lowering is inside manual computations: the mesh and its manual axes."""

    mesh: Mesh | AbstractMesh
    manual_axes: frozenset[Any]

    def device_groups(self, axes: Sequence[Any]) -> list[list[int]]:
        """The groups of partition ids (mesh positions) that a collective over the mesh axes
        `axes` (in that order) acts within: one group per position of the other axes."""
        mesh = self.mesh
        for name in axes:
            if name not in mesh.axis_names:
                raise NameError(f"unbound axis name: {name}")
        ids = list(range(mesh.size))
        index = [mesh.axis_names.index(n) for n in axes]
        rest = [i for i in range(len(mesh.axis_names)) if i not in index]
        group_size = math.prod(mesh.axis_sizes[i] for i in index)
        groups = _transpose_flat(ids, mesh.axis_sizes, [*rest, *index])
        return [groups[k : k + group_size] for k in range(0, len(groups), group_size)]


def _transpose_flat(ids: list[int], sizes: Sequence[int], order: Sequence[int]) -> list[int]:
    """The row-major ids of a grid of `sizes`, listed with its axes in `order`."""
    strides = [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]
    out: list[int] = []

    def walk(level: int, offset: int) -> None:
        if level == len(order):
            out.append(ids[offset])
            return
        axis = order[level]
        for i in range(sizes[axis]):
            walk(level + 1, offset + i * strides[axis])

    walk(0, 0)
    return out


_spmd: contextvars.ContextVar[SpmdContext | None] = contextvars.ContextVar(
    "lamina_spmd_context", default=None
)


def spmd_context() -> SpmdContext | None:
    """The manual computation being lowered, or None outside any."""
    return _spmd.get()


@contextlib.contextmanager
def _inside(context: SpmdContext, newly_manual: frozenset[Any]) -> Iterator[None]:
    token = _spmd.set(context)
    try:
        # The new manual axes are bound as named axes, as while the body was traced: a body
        # traced again while it is lowered (a scan lowered as a while loop) checks its
        # collectives' axis names.
        with manual_axes_env(context.mesh, newly_manual):
            yield
    finally:
        _spmd.reset(token)


def _physical_ndim(aval: Any) -> int:
    if isinstance(aval, ShapedArray):
        ext = dtypes.extended_dtype_of(aval.dtype)
        return aval.ndim + (len(ext.physical_shape) if ext is not None else 0)
    raise TypeError(f"shard_map lowering expects array operands, got {aval.str_short(True)}")


@register(shard_map_p)
def _shard_map_lowering(
    ctx: LoweringRuleContext,
    *args: IrValue,
    jaxpr: Jaxpr,
    mesh: Mesh | AbstractMesh,
    in_specs: tuple[Any, ...],
    out_specs: tuple[Any, ...],
    check_vma: bool,
    newly_manual_axes: frozenset[Any],
) -> list[IrValue]:
    mctx = ctx.module_context
    outer = _spmd.get()
    manual = newly_manual_axes | (outer.manual_axes if outer is not None else frozenset())
    inner = SpmdContext(mesh, manual)
    name_stack = f"{ctx.name_stack}/shard_map" if ctx.name_stack else "shard_map"
    effects = ordered_effects(jaxpr.effects)
    tokens = [ctx.tokens_in.get(e) for e in effects]
    if math.prod(mesh.shape[a] for a in newly_manual_axes) == 1:
        with _inside(inner, newly_manual_axes):
            outs, tokens_out = jaxpr_subcomp(
                mctx,
                jaxpr,
                name_stack,
                TokenSet(tuple(zip(effects, tokens, strict=True))),
                (),
                *args,
                const_lowering=ctx.const_lowering,
            )
        if effects:
            ctx.set_tokens_out(ctx.tokens_in.update(dict(tokens_out.tokens)))
        return outs
    consts = list(jaxpr_const_args(jaxpr))
    const_values = [ir_constant(ctx.caches, v, a, ctx.const_lowering) for v, a in consts]
    replicated = PartitionSpec()
    # Manual over some axes only, with Auto ones left: every dimension stays open to the
    # partitioner along those (JAX's partial-manual shardings).
    open_dims = any(
        t is AxisType.Auto
        for n, t in zip(mesh.axis_names, mesh.axis_types, strict=True)
        if n not in manual
    )
    abstract = mesh.abstract_mesh

    def attr(spec: PartitionSpec, aval: Any) -> Any:
        return sharding_attr(spec, _physical_ndim(aval), abstract, open_dims=open_dims)

    token_sharding = sharding_attr(replicated, 0, abstract)
    in_shardings = [
        *(token_sharding for _ in tokens),
        *(attr(replicated, a) for _, a in consts),
        *(attr(s, a) for s, a in zip(in_specs, ctx.avals_in, strict=True)),
    ]
    out_shardings = [
        *(token_sharding for _ in tokens),
        *(attr(s, a) for s, a in zip(out_specs, ctx.avals_out, strict=True)),
    ]
    ordered_manual = [n for n in mesh.axis_names if n in newly_manual_axes]
    token_types = [hlo.TokenType.get() for _ in tokens]
    op = sdy.ManualComputationOp(
        [*token_types, *(mctx.ir_type(a) for a in ctx.avals_out)],
        [*tokens, *const_values, *args],
        sdy.TensorShardingPerValueAttr.get(in_shardings),
        sdy.TensorShardingPerValueAttr.get(out_shardings),
        sdy.ManualAxesAttr.get([ir.StringAttr.get(str(n)) for n in ordered_manual]),
    )
    block_types = [
        *token_types,
        *(mctx.ir_type(a) for _, a in consts),
        *(mctx.ir_type(v.aval) for v in jaxpr.invars),
    ]
    block = op.body.blocks.append(*block_types)
    with ir.InsertionPoint(block), _inside(inner, newly_manual_axes):
        block_args = list(block.arguments)
        token_args = block_args[: len(tokens)]
        const_args = block_args[len(tokens) : len(tokens) + len(consts)]
        const_lowering = {id(v): b for (v, _), b in zip(consts, const_args, strict=True)}
        outs, tokens_out = jaxpr_subcomp(
            mctx,
            jaxpr,
            name_stack,
            TokenSet(tuple(zip(effects, token_args, strict=True))),
            (),
            *block_args[len(tokens) + len(consts) :],
            const_lowering=const_lowering,
        )
        sdy.ReturnOp([*(tokens_out.get(e) for e in effects), *outs])
    results: list[IrValue] = list(op.results)
    if effects:
        new_tokens = dict(zip(effects, results[: len(effects)], strict=True))
        ctx.set_tokens_out(ctx.tokens_in.update(new_tokens))
    return results[len(effects) :]


__all__ = ["SpmdContext", "spmd_context"]
