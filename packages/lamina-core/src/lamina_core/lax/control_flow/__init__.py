"""Control flow: the `cond`, `while` and `scan` primitives and the functions built on them
(`cond`, `switch`, `while_loop`, `fori_loop`, `scan`, `map`).

Each primitive's module defines it with its core rules (abstract evaluation, effects, the
NumPy reference); the transformation rules sit beside it in `*_ad` and `*_batching` modules,
registered at import.
"""

# The transformation rules of each primitive, registered at import.
from lamina_core.lax.control_flow import cond_batching as _cond_batching  # noqa: F401
from lamina_core.lax.control_flow import cond_reverse as _cond_reverse  # noqa: F401
from lamina_core.lax.control_flow import forward_ad as _forward_ad  # noqa: F401
from lamina_core.lax.control_flow import loops_batching as _loops_batching  # noqa: F401
from lamina_core.lax.control_flow import scan_reverse as _scan_reverse  # noqa: F401
from lamina_core.lax.control_flow import scan_transpose_refs as _scan_transpose_refs  # noqa: F401
from lamina_core.lax.control_flow import while_partial_eval as _while_partial_eval  # noqa: F401
from lamina_core.lax.control_flow.conditionals import bind_cond, cond, cond_p, switch
from lamina_core.lax.control_flow.loops import bind_while, fori_loop, while_loop, while_p
from lamina_core.lax.control_flow.scan import bind_scan, map, scan, scan_p

__all__ = [
    "bind_cond",
    "bind_scan",
    "bind_while",
    "cond",
    "cond_p",
    "fori_loop",
    "map",
    "scan",
    "scan_p",
    "switch",
    "while_loop",
    "while_p",
]
