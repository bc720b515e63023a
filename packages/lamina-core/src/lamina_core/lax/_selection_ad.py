"""Differentiation rules of the selection primitives, as JAX's (registered at import)."""

from __future__ import annotations
