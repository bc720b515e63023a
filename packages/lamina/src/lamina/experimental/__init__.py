"""`jax.experimental`: the experimental APIs Lamina implements (`hijax`)."""

from lamina.experimental import hijax
from lamina_core.callbacks import io_callback

__all__ = ["hijax", "io_callback"]
