"""Exception types of `jax.errors` that no Lamina layer raises yet (they exist so that code
catching them, `except jax.errors.KeyReuseError`, runs unchanged), and the symbolic-dimension
error, which the dimension algebra raises."""

from __future__ import annotations

# The error of symbolic dimensions is the dimension algebra's (`jax.errors` names it too).
from lamina_core.ir import InconclusiveDimensionOperation as InconclusiveDimensionOperation
from lamina_core.trace._tracing import JAXTypeError


class KeyReuseError(JAXTypeError):
    """A PRNG key was used twice (JAX raises it under `jax_debug_key_reuse`, which Lamina
    does not implement)."""
