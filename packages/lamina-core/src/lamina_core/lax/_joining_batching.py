"""Batching rules of the `lax/_joining.py` primitives (to be written; see issue 14)."""

from __future__ import annotations
