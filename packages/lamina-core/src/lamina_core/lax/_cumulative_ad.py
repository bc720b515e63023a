"""Differentiation rules of the cumulative primitives, as JAX's (registered at import)."""

from __future__ import annotations
