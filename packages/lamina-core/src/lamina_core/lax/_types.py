"""Types shared by the lax modules."""

from typing import Any, TypeAlias

Array: TypeAlias = Any
"""What lax functions take and return: tracers, NumPy values, or an upper layer's arrays."""
