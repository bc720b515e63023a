"""Batching rules of the `lax/_selection.py` primitives (to be written; see issue 14)."""

from __future__ import annotations
