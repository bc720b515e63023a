"""Lowering of the custom primitives."""

from __future__ import annotations
