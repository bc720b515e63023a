"""`jax.debug`: print and call back from inside transformed and compiled programs."""

from lamina_core.callbacks._debugger import breakpoint
from lamina_core.callbacks._debugging import DebugEffect, OrderedDebugEffect
from lamina_core.callbacks._debugging import debug_callback as callback
from lamina_core.callbacks._debugging import debug_log as log
from lamina_core.callbacks._debugging import debug_print as print
from lamina_runtime.sharding_display import (
    inspect_array_sharding,
    visualize_array_sharding,
    visualize_sharding,
)

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
