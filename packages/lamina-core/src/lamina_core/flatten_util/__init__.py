"""`ravel_pytree`: a pytree of arrays as one flat vector and back, as `jax.flatten_util`.

A library over `numpy`, `lax` and `tree`; nothing below imports it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.tree import tree_util

__all__ = ["ravel_pytree"]


@dataclass(frozen=True, slots=True)
class _Unravel:
    """The inverse of one `ravel_pytree` call: a value, so two unravels of trees of the same
    structure, shapes and dtypes are equal and hash alike (usable as static arguments).

    With one dtype among the leaves it takes a vector of any dtype (the chunks keep it); with
    several, only the promoted dtype, and each chunk goes back to its leaf's dtype.
    """

    treedef: tree_util.PyTreeDef
    sizes: tuple[int, ...]
    shapes: tuple[tuple[int, ...], ...]
    leaf_dtypes: tuple[np.dtype[Any], ...] | None
    """The leaves' dtypes when they differ (then the vector has `flat_dtype`), else None."""
    flat_dtype: np.dtype[Any] | None

    def __call__(self, flat: Any) -> Any:
        return tree_util.tree_unflatten(self.treedef, self._leaves(flat) if self.sizes else [])

    def _leaves(self, flat: Any) -> list[Any]:
        if self.leaf_dtypes is not None:
            given = dtypes.dtype(flat)
            if given != self.flat_dtype:
                raise TypeError(
                    f"unravel function given array of dtype {given}, but expected dtype "
                    f"{self.flat_dtype}"
                )
        chunks = lax.split(flat, self.sizes)
        leaves = [lax.reshape(c, s) for c, s in zip(chunks, self.shapes, strict=True)]
        if self.leaf_dtypes is None:
            return leaves
        with warnings.catch_warnings():
            # Back to a real leaf from a complex vector drops the imaginary part on purpose.
            warnings.simplefilter("ignore")
            return [
                lax.convert_element_type(x, d)
                for x, d in zip(leaves, self.leaf_dtypes, strict=True)
            ]


def ravel_pytree(pytree: Any) -> tuple[Any, _Unravel]:
    """The leaves of `pytree` raveled and concatenated in leaf order, and the function that
    rebuilds the tree from such a vector.

    Leaves of different dtypes are promoted together (`dtypes.result_type` of their dtypes); a
    tree without leaves gives an empty float32 vector.

    Example:
        >>> flat, unravel = ravel_pytree({"a": jnp.ones(2), "b": 3.0})
        >>> flat
        Array([1., 1., 3.], dtype=float32)
        >>> unravel(flat)["b"]
        Array(3., dtype=float32)
    """
    leaves, treedef = tree_util.tree_flatten(pytree)
    if not leaves:
        return lax.full([0], 0, np.float32), _Unravel(treedef, (), (), None, None)
    leaf_dtypes = tuple(dtypes.dtype(x) for x in leaves)
    flat_dtype = dtypes.result_type(*leaf_dtypes)
    shapes = tuple(tuple(np.shape(x)) for x in leaves)
    sizes = tuple(int(np.prod(s, dtype=np.int64)) for s in shapes)
    if all(d == flat_dtype for d in leaf_dtypes):
        # No conversion: the unravel takes vectors of any dtype.
        pieces = [lax.reshape(x, (n,)) for x, n in zip(leaves, sizes, strict=True)]
        return lax.concatenate(pieces, 0), _Unravel(treedef, sizes, shapes, None, None)
    pieces = [jnp.ravel(lax.convert_element_type(x, flat_dtype)) for x in leaves]
    unravel = _Unravel(treedef, sizes, shapes, leaf_dtypes, flat_dtype)
    return lax.concatenate(pieces, 0), unravel
