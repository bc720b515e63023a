"""`jax._src.checkify` under `lamina.as_jax`: what flax's `nnx.checkify` takes from it, Lamina's
checkify (the same functions and classes as `jax.experimental.checkify`, plus `JaxException`,
the base class of the error kinds, and `Out`, the type variable of its signature)."""

from __future__ import annotations

from typing import TypeVar

from lamina_core.checkify import Error, JaxException, checkify, user_checks

Out = TypeVar("Out")

__all__ = ["Error", "JaxException", "Out", "checkify", "user_checks"]
