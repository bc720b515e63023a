"""Differentiation rules of the slicing primitives, as JAX's (registered at import)."""

from __future__ import annotations
