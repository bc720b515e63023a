"""JAX's `jax.tree` namespace: the pytree functions of `tree_util` under their short names.

Each name is the `tree_util` function itself, not a wrapper: the argument orders are the same,
and an extra call frame would cost time on hot paths. See `lamina_core.tree.tree_util` for the
semantics and for where Lamina's pytrees differ from JAX's.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from lamina_core.tree import tree_util

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]

all = tree_util.tree_all
broadcast = tree_util.tree_broadcast
flatten = tree_util.tree_flatten
flatten_with_path = tree_util.tree_flatten_with_path
leaves = tree_util.tree_leaves
leaves_with_path = tree_util.tree_leaves_with_path
map = tree_util.tree_map
map_with_path = tree_util.tree_map_with_path
reduce = tree_util.tree_reduce
reduce_associative = tree_util.tree_reduce_associative
structure = tree_util.tree_structure
transpose = tree_util.tree_transpose
unflatten = tree_util.tree_unflatten

if TYPE_CHECKING:
    # Type checkers recognise dataclass field specifiers by name, so `static` must *be*
    # `dataclasses.field` to them; at run time it adds the marker `register_dataclass` reads.
    static = dataclasses.field
else:

    def static(**kwargs: Any) -> Any:
        """`dataclasses.field(**kwargs)` marked static for `register_dataclass`.

        Example:
            >>> @tree_util.register_dataclass
            ... @dataclasses.dataclass
            ... class Scaled:
            ...     x: float
            ...     how: str = static(default="double")
            >>> flatten(Scaled(1.5))[0]
            [1.5]
        """
        metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
        return dataclasses.field(metadata=metadata, **kwargs)
