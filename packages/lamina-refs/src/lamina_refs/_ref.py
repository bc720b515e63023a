"""The `Ref` value: a Ref outside any trace, and the Ref primitives' evaluation on it.

An eager `Ref` holds its current value as an array of the eager evaluator; its indexing and
methods are the user functions of `lamina_refs._primitives`, and those primitives, applied to a
`Ref`, read or replace that value (`value_impl_rules`) with the primitives' functional meaning.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from lamina_core.interpreters import zeros_like_aval
from lamina_core.ir import AbstractValue, evaluated_on_values, value_impl_rules
from lamina_core.numpy import asarray
from lamina_core.trace import Tracer, register_value_type, to_numpy, typeof
from lamina_core.transforms import jit
from lamina_hijax import expand_on_values, to_lojax_rules
from lamina_refs._indexing import Transforms
from lamina_refs._primitives import (
    addupdate_p,
    addupdate_value,
    empty_ref_p,
    free_ref_p,
    freeze_p,
    get_p,
    get_value,
    new_ref_p,
    ref_addupdate,
    ref_get,
    ref_set,
    ref_swap,
    swap_p,
    swap_value,
)
from lamina_refs._types import AbstractRef, ref_aval
from lamina_refs._views import RefIndexer, TransformedRef


class _RefMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        # A traced Ref is a Ref too, as in JAX.
        if type(obj) is Ref:
            return True
        return isinstance(obj, Tracer) and isinstance(obj.aval, AbstractRef)


class Ref(metaclass=_RefMeta):
    """A mutable array outside any trace: `jax.new_ref(x)`. Identity is intended.

    It holds its current value as an array of the eager evaluator (a device `Array` once
    lamina-runtime is imported); reads and writes go through the Ref primitives, so they mean
    the same eagerly and traced. A frozen Ref has no value any more.
    """

    __slots__ = ("__weakref__", "_aval", "_value")

    def __init__(self, aval: AbstractRef, value: Any) -> None:
        self._aval = aval
        self._value = value

    # No `__eq__` or `__hash__` of Python's: a Ref's are object's (identity, in C). C++ dispatch
    # compares Refs' keys (weak references, which compare their Refs) while it probes its cache,
    # and Python code run there lets another thread change the cache under the probe (a
    # segfault in test_threads.py).

    @property
    def _key(self) -> weakref.ref[Ref]:
        """This Ref's identity as a value that does not keep it alive (hashable, equal only
        to itself while the Ref lives): what caches keyed on Refs hold."""
        return weakref.ref(self)

    @property
    def aval(self) -> AbstractRef:
        return self._aval

    @property
    def shape(self) -> tuple[int, ...]:
        return self._aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self._aval.dtype

    @property
    def ndim(self) -> int:
        return self._aval.ndim

    @property
    def size(self) -> int:
        return self._aval.size

    @property
    def weak_type(self) -> bool:
        return self._aval.weak_type

    @property
    def sharding(self) -> Any:
        """How the value is laid out over devices (the held array's sharding)."""
        return self.value().sharding

    @property
    def format(self) -> Any:
        return self.value().format

    @property
    def committed(self) -> bool:
        return True  # as JAX's: a Ref's buffer is placed

    _committed = committed

    def value(self) -> Any:
        """The array the Ref holds now (the eager evaluator's own, not a copy)."""
        if self._value is None:
            raise ValueError(
                f"the Ref of type {self._aval.str_short(short_dtypes=False)} was frozen or "
                "freed: it holds no value any more (freeze and free_ref invalidate it)"
            )
        return self._value

    def set_value(self, value: Any) -> None:
        self._value = value

    def invalidate(self) -> None:
        self._value = None

    def __getitem__(self, idx: Any) -> Any:
        return ref_get(self, idx)

    def __setitem__(self, idx: Any, value: Any) -> None:
        ref_set(self, idx, value)

    def addupdate(self, value: Any, idx: Any = None) -> None:
        ref_addupdate(self, idx, value)

    def get(self, idx: Any = None) -> Any:
        return self[... if idx is None else idx]

    def set(self, value: Any, idx: Any = None) -> None:
        self[... if idx is None else idx] = value

    def swap(self, value: Any, idx: Any = None) -> Any:
        return ref_swap(self, idx, value)

    @property
    def at(self) -> RefIndexer:
        """`ref.at[idx]`: a view of `ref[idx]` (`TransformedRef`); JAX 0.10.2 has views of
        traced Refs only."""
        return RefIndexer(self)

    def bitcast(self, dtype: Any) -> TransformedRef:
        return TransformedRef(self, ()).bitcast(dtype)

    def reshape(self, *shape: Any) -> TransformedRef:
        return TransformedRef(self, ()).reshape(*shape)

    def transpose(self, permutation: Any) -> TransformedRef:
        return TransformedRef(self, ()).transpose(permutation)

    @property
    def T(self) -> TransformedRef:
        return TransformedRef(self, ()).T

    def unsafe_buffer_pointer(self) -> int:
        """The address of the device buffer holding the value (stable across in-place updates)."""
        pointer: int = self.value().unsafe_buffer_pointer()
        return pointer

    def __repr__(self) -> str:
        if self._value is None:
            return f"Ref(<frozen>, type={self._aval.str_short(short_dtypes=False)})"
        text = repr(self._value)
        # The held array's repr, renamed: continuation lines keep their indent, as JAX's.
        for prefix in ("Array(", "array("):
            if text.startswith(prefix):
                return "Ref(" + text[len(prefix) :]
        return f"Ref({text})"

    __str__ = __repr__

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Any:
        # Without it Python would iterate by indexing until an IndexError, which clamped
        # reads never raise.
        if not self.shape:
            raise TypeError("iteration over a 0-d Ref")
        return (self[i] for i in range(self.shape[0]))


# --- the primitives on a Ref -----------------------------------------------------------------


_copy = jit(lambda v: v)
"""A copy of an array: a compiled identity returns a new buffer (the Ref must not share its
initial value's buffer, which an in-place update would overwrite)."""


@value_impl_rules.register(new_ref_p)
def _new_ref_impl(x: Any, *, kind: str | None, memory_space: Any) -> Ref:
    aval = typeof(x)
    if aval.is_high:  # a hi value of Refs, one per array, as JAX's
        parts = [new_ref_p.bind(v, kind=kind, memory_space=memory_space) for v in aval.lower_val(x)]
        return Ref(ref_aval(aval, kind), aval.raise_val(*parts))
    return Ref(ref_aval(aval, kind), _copy(asarray(x)))


@value_impl_rules.register(empty_ref_p)
def _empty_ref_impl(*, ty: AbstractValue, memory_space: Any) -> Ref:
    aval = AbstractRef(ref_aval(ty).inner_aval, memory_space)
    if ty.is_high:
        parts = [empty_ref_p.bind(ty=t, memory_space=memory_space) for t in ty.lo_ty()]
        return Ref(aval, ty.raise_val(*parts))
    # Its contents are unspecified until written; zeros, so that reads are deterministic.
    return Ref(aval, zeros_like_aval(ty))


def _parts(ref: Ref) -> list[Any]:
    """The Refs a Ref of a hi value is made of, one per array (`lo_ty` order)."""
    return ref.aval.inner_aval.lower_val(ref.value())


@value_impl_rules.register(free_ref_p)
def _free_ref_impl(ref: Ref) -> list[Any]:
    ref.value()  # a Ref freed or frozen already: an error
    if ref.aval.is_high:
        for part in _parts(ref):
            free_ref_p.bind(part)
    ref.invalidate()
    return []


@value_impl_rules.register(freeze_p)
def _freeze_impl(ref: Ref) -> Any:
    inner = ref.aval.inner_aval
    value = inner.raise_val(*map(freeze_p.bind, _parts(ref))) if inner.is_high else ref.value()
    ref.invalidate()
    return value


# These make or consume the Ref object itself: an eager evaluator runs them on values.
evaluated_on_values.update({new_ref_p, empty_ref_p, free_ref_p, freeze_p})


@value_impl_rules.register(get_p)
def _get_impl(ref: Ref, *idx: Any, tree: Transforms) -> Any:
    inner = ref.aval.inner_aval
    if inner.is_high:  # read whole (`_ref_and_indexer`), array by array
        return inner.raise_val(*[get_p.bind(r, tree=tree) for r in _parts(ref)])
    return get_value(ref.value(), idx, tree)


@value_impl_rules.register(swap_p)
def _swap_impl(ref: Ref, val: Any, *idx: Any, tree: Transforms) -> Any:
    inner = ref.aval.inner_aval
    if inner.is_high:
        parts = zip(_parts(ref), inner.lower_val(val), strict=True)
        return inner.raise_val(*[swap_p.bind(r, v, tree=tree) for r, v in parts])
    new, old = swap_value(ref.value(), val, idx, tree)
    ref.set_value(new)
    return old


@value_impl_rules.register(addupdate_p)
def _addupdate_impl(ref: Ref, val: Any, *idx: Any, tree: Transforms) -> list[Any]:
    ref.set_value(addupdate_value(ref.value(), val, idx, tree))
    return []


# A Ref of a hi value lowers to the Refs of its arrays: each primitive on one means its rule
# above, applied to the lowered Refs (traced by the to-lojax pass).
for _prim in (new_ref_p, empty_ref_p, free_ref_p, freeze_p, get_p, swap_p):
    to_lojax_rules.set(_prim, expand_on_values)
AbstractRef.ref_type = Ref

register_value_type(
    Ref, lambda r: r.aval, lambda r: np.asarray(to_numpy(r.value())), by_reference=True
)

__all__ = ["Ref"]
