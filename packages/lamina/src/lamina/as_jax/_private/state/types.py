"""`jax._src.state.types` under `lamina.as_jax`: `AbstractRef`, the type of a mutable array
reference, which flax's `nnx` tests values against (`is_array_ref`); Lamina's (`lamina_refs`)."""

from __future__ import annotations

from lamina_refs import AbstractRef

__all__ = ["AbstractRef"]
