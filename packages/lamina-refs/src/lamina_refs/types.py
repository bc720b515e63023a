"""The Ref type: `AbstractRef` (the abstract value) and `Ref` (the eager value).

A Ref is a mutable array: its abstract value wraps the type of the array it holds and prints
as JAX prints it (`Ref{f32[3]}`). It answers core's aval protocol, so core's tracing and
transformations carry Refs without naming them: `mutable` makes tracing capture a closed-over
Ref by reference and makes `jit` refuse to return one; `tracer_getitem`/`tracer_setitem` make
`ref[idx]` and `ref[idx] = v` on a traced Ref read and write it.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from lamina_core.ir._avals import AbstractValue, ShapedArray
from lamina_core.ir._effects import Effect
from lamina_core.trace._tracing import Tracer


@dataclass(frozen=True, slots=True)
class AbstractRef(AbstractValue):
    """The type of a Ref holding values of type `inner_aval`."""

    inner_aval: AbstractValue
    memory_space: Any = None
    kind: str | None = field(default=None, compare=False)
    """`'no_grad_no_remat'` for refs that take no tangents and are not re-run by remat."""

    mutable: ClassVar[bool] = True
    tracer_getitem: ClassVar[Any] = None  # set by `lamina_refs.primitives`
    tracer_setitem: ClassVar[Any] = None

    @property
    def shape(self) -> tuple[int, ...]:
        shape: tuple[int, ...] = self.inner_aval.shape  # type: ignore[attr-defined]  # arrays
        return shape

    @property
    def dtype(self) -> np.dtype:
        dtype: np.dtype = self.inner_aval.dtype  # type: ignore[attr-defined]  # arrays
        return dtype

    @property
    def weak_type(self) -> bool:
        return bool(getattr(self.inner_aval, "weak_type", False))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def str_short(self, short_dtypes: bool = True) -> str:
        space = "" if self.memory_space is None else f"<{self.memory_space}>"
        return f"Ref{space}{{{self.inner_aval.str_short(short_dtypes)}}}"

    def __str__(self) -> str:
        return self.str_short(short_dtypes=False)

    def __repr__(self) -> str:
        return f"AbstractRef({self.inner_aval!r})"

    def to_tangent_aval(self) -> AbstractRef:
        return AbstractRef(self.inner_aval.to_tangent_aval(), self.memory_space, self.kind)

    def normalize(self) -> AbstractRef:
        inner = self.inner_aval.normalize()
        return (
            self if inner is self.inner_aval else AbstractRef(inner, self.memory_space, self.kind)
        )

    def dec_rank(self, size: int, axis: int) -> AbstractRef:
        return AbstractRef(self.inner_aval.dec_rank(size, axis), self.memory_space, self.kind)

    def inc_rank(self, size: int, axis: int) -> AbstractRef:
        return AbstractRef(self.inner_aval.inc_rank(size, axis), self.memory_space, self.kind)

    def operand_error(self, prim: str) -> Exception:
        return ValueError(
            f"Attempting to pass a Ref {self.str_short(short_dtypes=False)} to a primitive: "
            f"{prim} -- did you forget to unpack ([...]) the ref?"
        )


def ref_aval(value_aval: AbstractValue, kind: str | None = None) -> AbstractRef:
    if isinstance(value_aval, AbstractRef):
        raise TypeError(
            f"cannot make a Ref of a Ref ({value_aval.str_short(short_dtypes=False)}): "
            "refs of refs are not supported"
        )
    if not isinstance(value_aval, ShapedArray) and not value_aval.is_high:
        raise TypeError(f"cannot make a Ref of a value of type {value_aval.str_short()}")
    return AbstractRef(value_aval, None, kind)


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
        from lamina_refs.primitives import ref_get

        return ref_get(self, idx)

    def __setitem__(self, idx: Any, value: Any) -> None:
        from lamina_refs.primitives import ref_set

        ref_set(self, idx, value)

    def addupdate(self, value: Any, idx: Any = None) -> None:
        from lamina_refs.primitives import ref_addupdate

        ref_addupdate(self, idx, value)

    def get(self, idx: Any = None) -> Any:
        return self[... if idx is None else idx]

    def set(self, value: Any, idx: Any = None) -> None:
        self[... if idx is None else idx] = value

    def swap(self, value: Any, idx: Any = None) -> Any:
        from lamina_refs.primitives import ref_swap

        return ref_swap(self, idx, value)

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

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


# --- effects ---------------------------------------------------------------------------------


class RefEffect(Effect):
    """Reading, writing or accumulating into a Ref: the equation must stay where it is."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __str__(self) -> str:
        return self._name

    __repr__ = __str__


READ: RefEffect = RefEffect("Read")
WRITE: RefEffect = RefEffect("Write")
ACCUM: RefEffect = RefEffect("Accum")
INTERNAL: RefEffect = RefEffect("InternalMutableArrayEffect")
"""Creating or freezing a Ref: a jaxpr with only this effect is pure to its callers."""
