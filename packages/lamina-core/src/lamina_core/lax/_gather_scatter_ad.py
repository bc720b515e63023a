"""Differentiation rules of the gather scatter primitives, as JAX's (registered at import)."""

from __future__ import annotations
