"""`jax.debug`: print and call back from inside transformed and compiled programs."""

from lamina_core.callbacks import DebugEffect, OrderedDebugEffect, breakpoint
from lamina_core.callbacks import debug_callback as callback
from lamina_core.callbacks import debug_log as log
from lamina_core.callbacks import debug_print as print
from lamina_runtime import inspect_array_sharding, visualize_array_sharding, visualize_sharding

__all__ = [
    "DebugEffect",
    "OrderedDebugEffect",
    "breakpoint",
    "callback",
    "inspect_array_sharding",
    "log",
    "print",
    "visualize_array_sharding",
    "visualize_sharding",
]
