"""`lamina.ops`: segment reductions, as `jax.ops` (see `lamina_core.numpy.ops`)."""

from lamina_core.numpy.ops import segment_max, segment_min, segment_prod, segment_sum

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
