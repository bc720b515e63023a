"""`ds`: a slice given by its start and size, either of which may be traced (JAX's `jax.ds`)."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

from lamina_core import tree_util
from lamina_core.trace import Tracer


@dataclass(slots=True)
class Slice:
    """`size` elements from `start`, `stride` apart; `start` and `size` may be arrays."""

    start: Any
    size: Any
    stride: int = 1

    def __post_init__(self) -> None:
        if self.stride < 0:
            raise ValueError("`stride` must be >= 0.")

    @property
    def is_dynamic_start(self) -> bool:
        return not _is_dim(self.start)

    @property
    def is_dynamic_size(self) -> bool:
        return not _is_dim(self.size)


def _is_dim(x: Any) -> bool:
    if isinstance(x, Tracer):
        return False
    try:
        operator.index(x)
    except TypeError:
        return False
    return True


def _flatten_slice(s: Slice) -> tuple[tuple[Any, Any], tuple[Any, Any, int]]:
    # A static start or size is static data of the tree; a traced one is a leaf.
    start_leaf, start_static = (s.start, None) if s.is_dynamic_start else (None, s.start)
    size_leaf, size_static = (s.size, None) if s.is_dynamic_size else (None, s.size)
    return (start_leaf, size_leaf), (start_static, size_static, s.stride)


def _unflatten_slice(static: tuple[Any, Any, int], leaves: Any) -> Slice:
    start_leaf, size_leaf = leaves
    start = start_leaf if start_leaf is not None else static[0]
    size = size_leaf if size_leaf is not None else static[1]
    return Slice(start, size, static[2])


tree_util.register_pytree_node(Slice, _flatten_slice, _unflatten_slice)


def ds(start: Any, size: Any = None, stride: int | None = None) -> slice | Slice:
    """`ds(None)` is `:`, `ds(j)` is `:j`, `ds(i, j)` is `i:i+j`, `ds(i, j, s)` is
    `i:i+j:s` (with `j` elements), where `i` and `j` may be traced."""
    if start is None:
        return slice(None)
    if stride is None:
        stride = 1
    if not isinstance(stride, int):
        raise ValueError("Non-static stride in `dslice`")
    if size is None:
        start, size = 0, start
    return Slice(start, size, stride)
