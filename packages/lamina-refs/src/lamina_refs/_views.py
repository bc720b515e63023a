"""Views of Refs: `ref.at[idx]`, `.reshape(...)`, `.bitcast(dtype)`, `.transpose(...)`, as JAX's
`TransformedRef`.

A `TransformedRef` is the Ref it views and the transforms applied to it (indexers and views of
the value), with the operands of its integer indexers. Reading or writing it binds the Ref
primitives on the Ref itself, the transforms in their `tree` param (printed `a[1:,:][0,:]`).
It has no abstract value of its own: `typeof` of one raises `TransformedRefAvalError`, as JAX.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from lamina_core.ir.dtypes import canonicalize_dtype
from lamina_core.trace import Tracer, aval_method, aval_property, register_value_type, typeof
from lamina_core.tree import tree_util
from lamina_refs._indexing import (
    BitcastTransform,
    IntIndex,
    NDIndexer,
    ReshapeTransform,
    Transforms,
    TransposeTransform,
    make_nd_indexer,
    transformed_aval,
)
from lamina_refs._types import AbstractRef


class TransformedRefAvalError(Exception):
    """A `TransformedRef` was asked for its abstract value (it has none)."""


@dataclass(frozen=True)
class TransformedRef:
    """A view of the Ref `ref` through `transforms`, whose integer indexers take `operands`.
    Identity is not intended: two views of one Ref with the same transforms are equal."""

    ref: Any
    transforms: Transforms
    operands: tuple[Any, ...] = ()

    getter: ClassVar[Any] = None  # `ref_get`, `ref_set`, `ref_swap` (set by `_primitives`)
    setter: ClassVar[Any] = None
    swapper: ClassVar[Any] = None

    @property
    def type(self) -> AbstractRef:
        """The type of the viewed part, as a Ref type (`Ref{f32[4]}` for `r.at[0]`)."""
        ref_ty = _ref_type(self.ref)
        inner = transformed_aval(self.transforms, ref_ty.inner_aval)
        return AbstractRef(inner, ref_ty.memory_space, ref_ty.kind)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def dtype(self) -> np.dtype:
        return self.type.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def T(self) -> TransformedRef:
        return self.transpose(tuple(reversed(range(self.ndim))))

    @property
    def at(self) -> RefIndexer:
        return RefIndexer(self)

    def then(self, transform: Any, operands: Sequence[Any] = ()) -> TransformedRef:
        """This view, viewed further through `transform`."""
        return TransformedRef(self.ref, (*self.transforms, transform), (*self.operands, *operands))

    def bitcast(self, dtype: Any) -> TransformedRef:
        return self.then(BitcastTransform(np.dtype(canonicalize_dtype(dtype))))

    def reshape(self, *shape: Any) -> TransformedRef:
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        return self.then(ReshapeTransform(_reshaped(self.shape, tuple(shape))))

    def transpose(self, permutation: Sequence[int]) -> TransformedRef:
        return self.then(TransposeTransform(tuple(permutation)))

    def get(self, idx: Any = ()) -> Any:
        return self.getter(self, idx)

    def set(self, value: Any, idx: Any = ()) -> None:
        self.setter(self, idx, value)

    def swap(self, value: Any, idx: Any = ()) -> Any:
        return self.swapper(self, idx, value)

    def __getitem__(self, idx: Any) -> Any:
        return self.getter(self, idx)

    def __setitem__(self, idx: Any, value: Any) -> None:
        self.setter(self, idx, value)

    def __getattr__(self, name: str) -> Any:
        # Anything else is the viewed Ref's, as JAX's (its `addupdate` ignores the view).
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.ref, name)

    def __repr__(self) -> str:
        return f"TransformedRef(ref={self.ref!r}, transforms=({_transforms_repr(self)}))"


def _transforms_repr(view: TransformedRef) -> str:
    parts = []
    for t in view.transforms:
        if isinstance(t, NDIndexer):
            indices = ", ".join(
                repr(view.operands[i.position]) if isinstance(i, IntIndex) else repr(i)
                for i in t.indices
            )
            parts.append(
                f"NDIndexer(indices=({indices}{',' if len(t.indices) == 1 else ''}), "
                f"shape={t.shape}, int_indexer_shape={t.int_indexer_shape}, validate=True)"
            )
        else:
            parts.append(repr(t))
    return f"{parts[0]}," if len(parts) == 1 else ", ".join(parts)


def _ref_type(ref: Any) -> AbstractRef:
    """The type of the viewed Ref: only a Ref or a Ref staged by `jit` has one here, as in
    JAX (whose views of differentiated or batched Refs cannot say their type)."""
    if isinstance(ref, Tracer) and ref.jax_name != "DynamicJaxprTracer":
        raise TypeError(f"Cannot transform type: {ref}")
    aval = typeof(ref)
    if not isinstance(aval, AbstractRef):
        raise TypeError(f"Cannot transform type: {aval}")
    return aval


def _reshaped(shape: tuple[int, ...], new: tuple[int, ...]) -> tuple[int, ...]:
    new = tuple(operator.index(d) for d in new)
    unknown = sum(d == -1 for d in new)
    if not unknown:
        if math.prod(new) != math.prod(shape):
            raise ValueError(f"cannot reshape shape {shape} into shape {new}")
        return new
    known = [d for d in new if d != -1]
    if len(known) != len(new) - 1:
        raise ValueError(f"At most one dimension can be -1, but got {new}")
    if math.prod(shape) % math.prod(known):
        raise ValueError(
            f"Specified dims {new} do not evenly divide the size of the ref ({math.prod(shape)})."
        )
    return tuple(math.prod(shape) // math.prod(known) if d == -1 else d for d in new)


@dataclass(frozen=True, slots=True)
class RefIndexer:
    """What `ref.at` is: `ref.at[idx]` is the view of `ref[idx]`."""

    ref_or_view: Any

    def __getitem__(self, idx: Any) -> TransformedRef:
        if not isinstance(idx, tuple):
            idx = (idx,)
        view = self.ref_or_view
        shape = view.shape  # a Ref's own, or the view's type's (which may fail, as JAX's)
        if not isinstance(view, TransformedRef):
            view = TransformedRef(view, ())
        tree, operands = make_nd_indexer(idx, shape, len(view.operands))
        return view.then(tree[0], operands)


def _no_aval(view: TransformedRef) -> Any:
    raise TransformedRefAvalError("TransformedRefs cannot be abstractified.")


def _flatten(view: TransformedRef) -> tuple[tuple[Any, ...], Transforms]:
    return (view.ref, *view.operands), view.transforms


def _unflatten(transforms: Transforms, children: Any) -> TransformedRef:
    ref, *operands = children
    return TransformedRef(ref, transforms, tuple(operands))


register_value_type(TransformedRef, _no_aval, _no_aval)

# `jit` takes a view as the Ref and its index operands, and views the Ref again inside (JAX
# flattens views when tracing, though user code sees them as leaves).
tree_util.register_pytree_node(TransformedRef, _flatten, _unflatten)

# What a traced Ref has (JAX's `aval_property`/`aval_method`s of its type).
AbstractRef.at = aval_property(lambda ref: RefIndexer(ref))
AbstractRef.bitcast = aval_method(lambda ref, dtype: TransformedRef(ref, ()).bitcast(dtype))
AbstractRef.reshape = aval_method(lambda ref, *shape: TransformedRef(ref, ()).reshape(*shape))
AbstractRef.transpose = aval_method(lambda ref, *perm: TransformedRef(ref, ()).transpose(*perm))
AbstractRef.T = aval_property(lambda ref: TransformedRef(ref, ()).T)

__all__ = ["RefIndexer", "TransformedRef", "TransformedRefAvalError"]
