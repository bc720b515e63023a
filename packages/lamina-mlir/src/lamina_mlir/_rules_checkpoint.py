"""Lowering of the checkpoint primitives."""

from __future__ import annotations
