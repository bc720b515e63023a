"""Concrete values: which Python objects tracing accepts, their types, and their literals.

Tracing turns every non-tracer value it meets into a `Literal` (seed 000): Python scalars,
NumPy scalars and arrays, and any object exposing `__jax_array__` or `__array__`. Upper
layers teach core about their own array types with `register_value_type`. Whether a literal
later becomes a const arg is not decided here (that is lamina-consts' policy).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from lamina_core.ir import (
    AbstractValue,
    AutoLayout,
    DimExpr,
    Format,
    InvalidValueError,
    NamedSharding,
    PartitionSpec,
    ShapedArray,
    TypedComplex,
    TypedFloat,
    TypedInt,
    dtypes,
    explicit_spec,
    get_concrete_mesh,
    is_symbolic_dim,
    typed_scalar,
)
from lamina_core.trace._tracing import Tracer


@dataclass(frozen=True, slots=True, init=False)
class ShapeDtypeStruct:
    """A shape and dtype standing in for an array, as `jax.ShapeDtypeStruct`.

    Args:
        shape: the array's shape.
        dtype: its dtype (as given; the type it stands for has it canonicalized).
        sharding: a sharding, a `PartitionSpec` (over the mesh in context) or a `Format`.
        weak_type: whether it is weakly typed (as a Python scalar is).
        is_ref: whether it stands for a Ref holding such an array (its type is a Ref's).
    """

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool
    _sharding: Any
    _layout: Any
    """The device-local layout of a `Format` given as sharding (JAX's `_dll`), or None."""
    is_ref: bool

    ref_aval: ClassVar[Callable[[AbstractValue], AbstractValue] | None] = None
    """The type of a Ref holding a value of a given type (set by lamina-refs)."""

    def __init__(
        self,
        shape: Any,
        dtype: Any,
        *,
        sharding: Any = None,
        weak_type: bool = False,
        is_ref: bool = False,
    ) -> None:
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be specified.")
        # Symbolic dimensions (`lamina.export.symbolic_shape`) are kept as they are.
        dims = tuple(d if is_symbolic_dim(d) else int(d) for d in shape)
        object.__setattr__(self, "shape", dims)
        # Kept as given (float64 stays float64, as JAX's); the type it stands for is canonical.
        given = np.dtype(dtype) if dtype in _PYTHON_SCALARS else dtypes.dtype(dtype)
        object.__setattr__(self, "dtype", given)
        is_format = isinstance(sharding, Format)
        if is_format and isinstance(sharding.layout, AutoLayout):
            raise TypeError(
                "`Layout.AUTO` cannot be used in place of a device-local layout in a "
                f"`ShapeDtypeStruct`. Got {sharding}"
            )
        object.__setattr__(self, "_layout", sharding.layout if is_format else None)
        object.__setattr__(self, "_sharding", sharding.sharding if is_format else sharding)
        object.__setattr__(self, "weak_type", weak_type)
        object.__setattr__(self, "is_ref", is_ref)

    @property
    def sharding(self) -> Any:
        """The sharding; a `PartitionSpec` given is read over the mesh in context."""
        given = self._sharding
        if isinstance(given, PartitionSpec):
            mesh = get_concrete_mesh()
            if mesh.empty:
                raise TypeError(
                    "When specifying PartitionSpec to `ShapeDtypeStruct`, the context mesh "
                    "cannot be empty. Please use `jax.set_mesh` to set the mesh context."
                )
            return NamedSharding(mesh, given)
        return given

    @property
    def format(self) -> Format:
        return Format(self._layout, self.sharding)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    @classmethod
    def like(cls, x: Any) -> ShapeDtypeStruct:
        """The `ShapeDtypeStruct` of an array, a scalar, a tracer or anything with `shape` and
        `dtype`: its shape, dtype, weak type and (if it has one) sharding."""
        aval = shaped_abstractify(x)
        if getattr(aval, "mutable", False):
            raise NotImplementedError(
                "Ref/AbstractRef support is not implemented. Please file an issue at "
                "https://github.com/jax-ml/jax/issues"
            )
        if aval.is_high or not isinstance(aval, ShapedArray):
            raise NotImplementedError(
                "Passing a HiVal to `ShapeDtypeStruct.like` is not implemented."
            )
        sharding = None
        if is_registered_value(x):  # a device array: over a mesh only (one device: uncommitted)
            placed = x.sharding
            sharding = placed if isinstance(placed, NamedSharding) else None
        elif getattr(x, "_committed", True) and not isinstance(x, Tracer):
            sharding = getattr(x, "sharding", None)
        return cls(aval.shape, aval.dtype, sharding=sharding, weak_type=aval.weak_type)

    def update(self, **changes: Any) -> ShapeDtypeStruct:
        """A copy with `shape`, `dtype`, `sharding` or `weak_type` changed."""
        if "sharding" in changes:
            sharding = changes.pop("sharding")
            if self._layout is not None and not isinstance(
                sharding, (Format, PartitionSpec, type(None))
            ):
                raise ValueError(
                    f"You are updating ShapeDtypeStruct with a {type(sharding)} when the "
                    f"original ShapeDtypeStruct had a concrete layout {self.format}. This "
                    "might lead to bugs. If you want to do this, create a new "
                    "ShapeDtypeStruct via the constructor."
                )
        else:
            sharding = self.format if self._layout is not None else self._sharding
        return ShapeDtypeStruct(
            changes.pop("shape", self.shape),
            changes.pop("dtype", self.dtype),
            sharding=sharding,
            weak_type=changes.pop("weak_type", self.weak_type),
            is_ref=changes.pop("is_ref", self.is_ref),
        )

    def __repr__(self) -> str:
        sharding = self.sharding
        sh = f", sharding={sharding}" if sharding is not None else ""
        layout = f", format={self._layout}" if self._layout is not None else ""
        weak = f", weak_type={self.weak_type}" if self.weak_type else ""
        ref = f", is_ref={self.is_ref}" if self.is_ref else ""
        return (
            f"{type(self).__name__}(shape={self.shape}, "
            f"dtype={dtypes.dtype_name(self.dtype)}{sh}{layout}{weak}{ref})"
        )

    __str__ = __repr__

    @property
    def aval(self) -> AbstractValue:
        """The type this struct stands for: over a mesh sharding's Explicit axes, split; a
        Ref's type if `is_ref`."""
        aval = self.array_aval
        if not self.is_ref:
            return aval
        make = ShapeDtypeStruct.ref_aval
        if make is None:
            raise TypeError("a ShapeDtypeStruct with is_ref=True needs lamina-refs imported")
        return make(aval)

    @property
    def array_aval(self) -> ShapedArray:
        """The array type this struct stands for (a Ref's value type if `is_ref`)."""
        aval = ShapedArray(self.shape, dtypes.canonicalize_dtype(self.dtype), self.weak_type)
        sharding = self._sharding
        if isinstance(sharding, PartitionSpec):
            sharding = self.sharding
        if isinstance(sharding, NamedSharding) and not sharding.mesh.empty:
            mesh = sharding.mesh.abstract_mesh
            return aval.update(mesh=mesh, spec=explicit_spec(mesh, sharding.spec, aval.ndim))
        return aval


@dataclass(frozen=True, slots=True)
class ValueType:
    """How core handles an upper layer's array type."""

    aval: Callable[[Any], AbstractValue]
    """The abstract value of an instance."""
    to_numpy: Callable[[Any], np.ndarray]
    """A host copy, for the NumPy reference evaluator."""


_value_types: dict[type, ValueType] = {}
by_reference_types: set[type] = set()
"""Registered types whose instances tracing captures by reference (as constvars, never
literals): mutable values such as Refs, whose identity is their meaning."""


def register_value_type(
    cls: type,
    aval: Callable[[Any], AbstractValue],
    to_numpy: Callable[[Any], np.ndarray],
    *,
    by_reference: bool = False,
) -> None:
    """Let tracing and eager evaluation accept instances of `cls` (e.g. the runtime's Array).

    With `by_reference`, a traced function closing over an instance takes the instance itself
    as a constvar (a jitted function then passes it as an argument) instead of embedding its
    current value as a literal.
    """
    if cls in _value_types:
        raise ValueError(f"value type {cls.__name__} is already registered")
    _value_types[cls] = ValueType(aval, to_numpy)
    if by_reference:
        by_reference_types.add(cls)


_hi_value_types: dict[type, Callable[[Any], AbstractValue]] = {}


def register_hi_value_type(cls: type, typeof_fn: Callable[[Any], AbstractValue]) -> None:
    """Let instances of `cls` be values of a hi type (`typeof_fn(value)` gives it): tracing,
    `jit`, `grad` and `vmap` then take them as leaves, as they take arrays. They are never
    converted to arrays: only the primitives of their type take them apart."""
    if cls in _value_types or cls in _hi_value_types:
        raise ValueError(f"value type {cls.__name__} is already registered")
    _hi_value_types[cls] = typeof_fn


def is_hi_value(x: Any) -> bool:
    """True for an instance of a class registered with `register_hi_value_type`."""
    return type(x) in _hi_value_types


def is_registered_value(x: Any) -> bool:
    """True for instances of an upper layer's registered array type (device arrays)."""
    return type(x) in _value_types


_PYTHON_SCALARS = (bool, int, float, complex)
_TYPED_SCALARS = (TypedInt, TypedFloat, TypedComplex)


def _invalid(x: object) -> TypeError:
    return InvalidValueError(x)


def _canonical_numpy(x: np.ndarray | np.generic) -> np.ndarray | np.generic:
    dtype = dtypes.canonicalize_dtype(x.dtype)
    if x.dtype == dtype:
        return x
    if x.dtype.kind in "OSUVM":
        raise _invalid(x)
    return x.astype(dtype)


def _python_scalar_literal(x: bool | int | float | complex) -> tuple[object, ShapedArray]:
    dtype = dtypes.python_scalar_dtype(x)  # raises OverflowError for an int out of range
    weak = dtypes.is_weakly_typed(x)
    return (typed_scalar(x, dtype) if weak else x), ShapedArray((), dtype, weak)


def canonical_value(x: Any) -> tuple[Any, AbstractValue]:
    """The value tracing embeds for the constant `x`, and its abstract value.

    NumPy values are converted to the canonical dtype (64-bit to 32-bit unless x64 is on); a
    value already canonical is returned as is, so one array used twice stays one object.
    """
    kind = type(x)
    if kind in _TYPED_SCALARS:
        return x, ShapedArray((), x.dtype, True)
    if kind in _PYTHON_SCALARS:
        return _python_scalar_literal(x)
    if isinstance(x, (np.ndarray, np.generic)):
        val = _canonical_numpy(x)
        return val, ShapedArray(np.shape(val), val.dtype, False)
    registered = _value_types.get(kind)
    if registered is not None:
        return x, registered.aval(x)
    hi_type = _hi_value_types.get(kind)
    if hi_type is not None:
        return x, hi_type(x)
    if isinstance(x, Tracer):
        raise TypeError(f"canonical_value got a tracer {x!r}; tracers are not constants")
    if hasattr(x, "__jax_array__"):
        return canonical_value(x.__jax_array__())
    if isinstance(x, _PYTHON_SCALARS):  # subclasses such as IntEnum members
        scalar_type: type = next(base for base in kind.__mro__ if base in _PYTHON_SCALARS)
        return _python_scalar_literal(scalar_type(x))
    if hasattr(x, "__array__"):
        return canonical_value(np.asarray(x))
    raise _invalid(x)


def typeof(x: Any) -> AbstractValue:
    """The abstract value of `x`: a tracer's aval, or the type a constant would have."""
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, ShapeDtypeStruct):
        return x.aval
    if isinstance(x, AbstractValue):
        return x
    kind = type(x)
    if kind in _PYTHON_SCALARS:
        # The type of a Python scalar, without making the typed scalar tracing would embed.
        dtype = dtypes.python_scalar_dtype(x)  # raises OverflowError for an int out of range
        if kind is bool:
            return ShapedArray((), dtype, False)
        aval = _WEAK_SCALAR_AVALS.get(dtype)
        if aval is None:
            aval = ShapedArray((), dtype, True)
            if aval.mesh is None:  # one made inside a mesh scope carries it: never shared
                _WEAK_SCALAR_AVALS[dtype] = aval
        return aval
    if kind is DimExpr:  # a symbolic dimension is typed as its value, a weak default int
        return ShapedArray((), dtypes.canonicalize_dtype(np.int64), True)
    return canonical_value(x)[1]


def shaped_abstractify(x: Any) -> AbstractValue:
    """The type of `x` as tracing a function's arguments reads it (JAX's
    `shaped_abstractify`): `typeof(x)`, and for other objects with a `dtype` (duck-typed
    arrays) an array of their `shape` and canonical `dtype`, weakly typed if they say so."""
    try:
        return typeof(x)
    except TypeError:
        if not hasattr(x, "dtype"):
            raise TypeError(
                f"Cannot interpret value of type {type(x)} as an abstract array; it does not "
                "have a dtype attribute"
            ) from None
    sharding = getattr(x, "sharding", None)
    return ShapeDtypeStruct(
        np.shape(x), x.dtype, sharding=sharding if isinstance(sharding, NamedSharding) else None,
        weak_type=bool(getattr(x, "weak_type", False)),
    ).aval  # fmt: skip


_WEAK_SCALAR_AVALS: dict[np.dtype, ShapedArray] = {}
"""The type of Python int, float and complex scalars, by their default dtype."""


def to_numpy(x: Any) -> np.ndarray | np.generic:
    """A host NumPy value for `x`, in its canonical dtype (for the reference evaluator)."""
    kind = type(x)
    if kind in _TYPED_SCALARS:
        return np.asarray(x, dtype=x.dtype)
    registered = _value_types.get(kind)
    if registered is not None:
        return registered.to_numpy(x)
    if kind in _hi_value_types:
        raise TypeError(
            f"a value of the hi type {_hi_value_types[kind](x).str_short(True)} is not an array; "
            "only the primitives of its type take it apart"
        )
    val, aval = canonical_value(x)
    if isinstance(val, (np.ndarray, np.generic)):
        return val
    return np.asarray(val, dtype=aval.dtype)  # type: ignore[attr-defined]  # a ShapedArray


def is_concrete_value(x: Any) -> bool:
    """True for arrays and scalars tracing would accept as constants (not tracers, not hi
    values: those are taken apart only by their own primitives)."""
    if isinstance(x, Tracer) or type(x) in _hi_value_types:
        return False
    try:
        canonical_value(x)
    except (TypeError, OverflowError):
        return False
    return True
