"""The Ref type: `AbstractRef`, the abstract value of a Ref, and the Ref effects.

A Ref is a mutable array: its abstract value wraps the type of the array it holds and prints
as JAX prints it (`Ref{f32[3]}`). It answers core's aval protocol, so core's tracing and
transformations carry Refs without naming them: `mutable` makes tracing capture a closed-over
Ref by reference and makes `jit` refuse to return one; `tracer_getitem`/`tracer_setitem` make
`ref[idx]` and `ref[idx] = v` on a traced Ref read and write it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from lamina_core.ir import AbstractValue, Effect, ShapedArray
from lamina_core.trace import ShapeDtypeStruct


@dataclass(frozen=True, slots=True)
class AbstractRef(AbstractValue):
    """The type of a Ref holding values of type `inner_aval`."""

    inner_aval: AbstractValue
    memory_space: Any = None
    kind: str | None = field(default=None, compare=False)
    """`'no_grad_no_remat'` for refs that take no tangents and are not re-run by remat."""

    mutable: ClassVar[bool] = True
    tracer_getitem: ClassVar[Any] = None  # set by `lamina_refs._primitives`
    tracer_setitem: ClassVar[Any] = None
    ref_type: ClassVar[Any] = None
    # What a traced Ref has: views (`r.at[0]`, `r.reshape(...)`), set by `lamina_refs._views`.
    at: ClassVar[Any] = None
    bitcast: ClassVar[Any] = None
    reshape: ClassVar[Any] = None
    transpose: ClassVar[Any] = None
    T: ClassVar[Any] = None
    get: ClassVar[Any] = None  # and reads and writes by method (set by `_primitives`)
    set: ClassVar[Any] = None
    swap: ClassVar[Any] = None
    addupdate: ClassVar[Any] = None
    """The eager `Ref` class (set by `lamina_refs._ref`), which `raise_val` makes."""

    # A Ref of a hi value is high as its value is (core's ClassVar, per instance here).
    @property
    def is_high(self) -> bool:  # type: ignore[override]  # read-only per instance
        return self.inner_aval.is_high

    def lo_ty(self) -> list[AbstractValue]:
        """A Ref of a hi value lowers to one Ref per array of the value, as JAX's."""
        if not self.inner_aval.is_high:
            return [self]
        return [AbstractRef(t, self.memory_space, self.kind) for t in self.inner_aval.lo_ty()]

    def lower_val(self, ref: Any) -> list[Any]:
        if not self.inner_aval.is_high:
            return [ref]
        return self.inner_aval.lower_val(ref.value())

    def raise_val(self, *lo_refs: Any) -> Any:
        if not self.inner_aval.is_high:
            (ref,) = lo_refs
            return ref
        return self.ref_type(self, self.inner_aval.raise_val(*lo_refs))

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

    def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
        space = "" if self.memory_space is None else f"<{self.memory_space}>"
        inner = self.inner_aval.str_short(
            short_dtypes=short_dtypes, mesh_axis_types=mesh_axis_types
        )
        return f"Ref{space}{{{inner}}}"

    def __str__(self) -> str:
        return self.str_short(short_dtypes=False)

    def __repr__(self) -> str:
        return self.str_short()  # as JAX's

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
        raise TypeError(f"cannot make a Ref of a value of type {value_aval.str_short(True)}")
    return AbstractRef(value_aval, None, kind)


ShapeDtypeStruct.ref_aval = AbstractRef  # `ShapeDtypeStruct(..., is_ref=True)`'s type


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
