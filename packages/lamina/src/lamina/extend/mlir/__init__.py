"""`jax.extend.mlir`: jaxlib's MLIR bindings (`ir`, `dialects`, `passmanager` submodules) and
its StableHLO utilities, the same objects JAX publishes here."""

from __future__ import annotations

from typing import Any

from jaxlib import _jax

deserialize_portable_artifact = _jax.mlir.deserialize_portable_artifact
serialize_portable_artifact = _jax.mlir.serialize_portable_artifact
refine_polymorphic_shapes = _jax.mlir.refine_polymorphic_shapes
hlo_to_stablehlo = _jax.mlir.hlo_to_stablehlo

__all__ = [
    "deserialize_portable_artifact",
    "hlo_to_stablehlo",
    "lower_with_sharding_in_types",
    "refine_polymorphic_shapes",
    "serialize_portable_artifact",
]


def lower_with_sharding_in_types(ctx: Any, op: Any, aval: Any) -> Any:
    """`op` (of type `aval`) with the sharding its type carries. Lamina's lowering constrains
    every result over Explicit mesh axes to its type after each rule returns, so `op` is
    already what JAX would return; it is returned as is."""
    del ctx, aval
    return op
