"""Differentiation rules of the linalg primitives, as JAX's (registered at import)."""

from __future__ import annotations
