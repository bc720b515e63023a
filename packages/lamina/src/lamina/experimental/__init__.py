"""`jax.experimental`: the experimental APIs Lamina implements (`hijax`, `cur_qdd`)."""

from lamina.experimental import hijax
from lamina_core.callbacks import io_callback
from lamina_core.trace import cur_qdd

__all__ = ["cur_qdd", "hijax", "io_callback"]
