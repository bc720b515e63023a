"""Differentiation rules of the joining primitives, as JAX's (registered at import)."""

from __future__ import annotations
