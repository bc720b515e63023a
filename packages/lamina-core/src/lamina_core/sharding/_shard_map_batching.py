"""Batching of `shard_map`: vmap of a `shard_map` stays one `shard_map` equation (JAX's
`_shard_map_batch`).

The body is batched with the operands' mapped axes where they are; a mapped operand's spec
gets an entry inserted at its mapped axis (`None`, or the vmap's `spmd_axis_name`, which
then splits the mapped axis over those mesh axes), and so does each mapped output's spec.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import AxisData, BatchDim, batching_rules
from lamina_core.ir import ClosedJaxpr, Jaxpr, PartitionSpec, spec_axis_names
from lamina_core.sharding._shard_map import manual_axes_env, shard_map_p
from lamina_core.sharding._shard_map_ad import bind_body
from lamina_core.transforms import batch_jaxpr


def batch_spec(spec: PartitionSpec, dim: int, entry: Any) -> PartitionSpec:
    """`spec` with `entry` inserted at array axis `dim` (JAX's `pxla.batch_spec`)."""
    parts = list(spec.partitions)
    if dim > len(parts):
        parts.extend([None] * (dim - len(parts)))
    parts.insert(dim, entry)
    return spec.update(partitions=tuple(parts))


def _check_spmd(spmd: tuple[Any, ...] | None, specs: Sequence[Any], which: str) -> None:
    if spmd is None:
        return
    used: set[Any] = set()
    for s in specs:
        if isinstance(s, PartitionSpec):
            used |= spec_axis_names(s)
    if set(spmd) & used:
        raise ValueError(f"vmap spmd_axis_name cannot appear in shard_map {which}")


def _batched_specs(
    specs: Sequence[Any], dims: Sequence[BatchDim], spmd: tuple[Any, ...] | None
) -> list[Any]:
    entry = None if spmd is None else (spmd[0] if len(spmd) == 1 else spmd)
    return [s if d is None else batch_spec(s, d, entry) for s, d in zip(specs, dims, strict=True)]


def _shard_map_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
) -> tuple[list[Any], list[BatchDim]]:
    jaxpr: Jaxpr = params["jaxpr"]
    mesh, manual = params["mesh"], params["newly_manual_axes"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    spmd = axis_data.spmd_name
    _check_spmd(spmd, in_specs, "in_specs")
    inner = axis_data
    if spmd is not None:
        size = axis_data.size // math.prod(mesh.shape[n] for n in spmd)
        inner = AxisData(axis_data.name, size, spmd)
    with manual_axes_env(mesh, manual, params["check_vma"]):
        body, out_dims = batch_jaxpr(ClosedJaxpr(jaxpr, []), inner, tuple(dims))
    _check_spmd(spmd, out_specs, "out_specs")
    outs = bind_body(
        body,
        vals,
        _batched_specs(in_specs, dims, spmd),
        _batched_specs(out_specs, out_dims, spmd),
        params,
    )
    return outs, list(out_dims)


batching_rules.set(shard_map_p, _shard_map_batch)

__all__ = ["batch_spec"]
