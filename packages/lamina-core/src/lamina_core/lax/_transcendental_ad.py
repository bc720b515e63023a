"""Differentiation rules of the transcendental primitives, as JAX's (registered at import)."""

from __future__ import annotations
