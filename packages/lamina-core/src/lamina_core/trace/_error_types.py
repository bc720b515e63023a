"""Exception types of `jax.errors` that no Lamina layer raises yet: they exist so that code
catching them (`except jax.errors.KeyReuseError`) runs unchanged."""

from __future__ import annotations

from lamina_core.trace._tracing import JAXTypeError


class KeyReuseError(JAXTypeError):
    """A PRNG key was used twice (JAX raises it under `jax_debug_key_reuse`, which Lamina
    does not implement)."""


class InconclusiveDimensionOperation(Exception):
    """A comparison of symbolic dimensions has no definite answer (JAX's shape polymorphism,
    which Lamina does not implement)."""
