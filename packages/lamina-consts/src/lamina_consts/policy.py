"""Which constants become const args: the literal policy of seed 000.

Core's tracing turns every constant into a `Literal` (its predicate, `is_literalable` here,
is core's `lamina_core.trace._values.is_concrete_value`: core owns it because tracing needs it and
must not depend on this layer). This module decides what happens to literals afterwards:
non-scalar literals larger than `jax_embedded_constants_max_bytes` are hoisted into const
args; scalars and small arrays stay inline.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from lamina_core import config
from lamina_core.config import affects_tracing
from lamina_core.ir import Literal
from lamina_core.trace import is_concrete_value

# Part of every tracing cache key, as in JAX: a jitted function's staged call (and so its
# lowering) is found by that key.
embedded_constants_max_bytes: Final = affects_tracing(
    config.define_int(
        "jax_embedded_constants_max_bytes",
        32,
        "Non-scalar constants of at most this many bytes stay inline (stablehlo.constant); "
        "larger ones are passed as const args.",
    )
)
captured_constants_warn_bytes: Final = config.define_int(
    "jax_captured_constants_warn_bytes",
    2 * 10**9,
    "Warn when a compiled function captures more than this many bytes of constants (-1: never).",
)


def is_literalable(x: Any) -> bool:
    """True for the values tracing embeds as literals: scalars, NumPy and device arrays."""
    return is_concrete_value(x)


def nbytes(value: Any) -> int:
    size = getattr(value, "nbytes", None)
    if size is None:
        size = np.asarray(value).nbytes
    return int(size)


def is_hoistable(literal: Literal) -> bool:
    """True for a literal that lowering passes as a const arg rather than inlining."""
    return (
        bool(np.ndim(literal.val) > 0) and nbytes(literal.val) > embedded_constants_max_bytes.value
    )
