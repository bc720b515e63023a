"""`jax.experimental.layout`: an array's device-local memory layout (`Layout`) and its pairing
with a sharding (`Format`), Lamina's classes. JAX's `with_layout_constraint` is not here."""

from lamina_core.ir import Format, Layout

__all__ = ["Format", "Layout"]
