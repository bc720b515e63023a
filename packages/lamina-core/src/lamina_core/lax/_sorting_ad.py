"""Differentiation rules of the sorting primitives, as JAX's (registered at import)."""

from __future__ import annotations
