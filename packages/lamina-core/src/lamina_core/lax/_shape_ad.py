"""Differentiation rules of the shape primitives, as JAX's (registered at import)."""

from __future__ import annotations
