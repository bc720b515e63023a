"""Lamina's dtypes: the supported set, x64 canonicalization, weak types and type promotion.

Every dtype is a plain `numpy.dtype`; the narrow ML types (bfloat16, float8/6/4, sub-byte
integers) come from `ml_dtypes`. Behaviour mirrors `jax.dtypes` and `jax.numpy.promote_types`
in JAX 0.10.2, including JAX's promotion lattice (kept in `lamina_core.ir._promotion`).

Invariants: module constants are dtypes, never scalar types (`float32` is `np.dtype("float32")`);
the x64 switch is read from `lamina_core.config` at each call, never cached.

This module must not know about avals, tracers or arrays: it recognises weak-typed values by
duck typing (`.aval.weak_type` or `.weak_type`) and their dtype by a `.dtype` attribute.
"""

from __future__ import annotations

from typing import Any, Final, Literal, Protocol, TypeAlias, overload

import ml_dtypes
import numpy as np

from lamina_core.config import (
    NumpyDtypePromotion,
    affects_tracing,
    config,
    define_enum_class,
    enable_x64,
)
from lamina_core.ir import _extended_dtypes, _promotion
from lamina_core.ir._extended_dtypes import _EXTENDED as _EXTENDED
from lamina_core.ir._extended_dtypes import ExtendedDType, extended, extended_dtype_of, prng_key
from lamina_core.ir._promotion import TypePromotionError

__all__ = [
    "DType",
    "DTypeLike",
    "ExtendedDType",
    "SupportsDType",
    "TypePromotionError",
    "all_dtypes",
    "bfloat16",
    "bool_",
    "canonicalize_dtype",
    "complex64",
    "complex128",
    "dtype",
    "dtype_name",
    "extended",
    "extended_dtype_of",
    "finfo",
    "float0",
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float16",
    "float32",
    "float64",
    "iinfo",
    "int1",
    "int2",
    "int4",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_python_scalar",
    "is_weakly_typed",
    "issubdtype",
    "prng_key",
    "promote_types",
    "python_scalar_dtype",
    "register_extended_dtype",
    "result_type",
    "short_dtype_name",
    "uint1",
    "uint2",
    "uint4",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]

if not hasattr(ml_dtypes, "int1"):
    # JAX 0.10.2 exposes int1/uint1 whenever ml_dtypes has them; Lamina always does.
    raise ImportError(
        f"lamina_core needs ml_dtypes >= 0.6 (for int1 and uint1); found {ml_dtypes.__version__}"
    )

DType: TypeAlias = "np.dtype[Any]"


class SupportsDType(Protocol):
    """Anything with a `dtype` attribute (arrays, avals, tracers), usable as a dtype-like."""

    @property
    def dtype(self) -> DType: ...


DTypeLike: TypeAlias = "str | type[Any] | np.dtype[Any] | SupportsDType"
"""What the functions here accept as a dtype: a dtype, a scalar type, a name, or a `.dtype`."""

bool_: Final[DType] = np.dtype(np.bool_)
int8: Final[DType] = np.dtype(np.int8)
int16: Final[DType] = np.dtype(np.int16)
int32: Final[DType] = np.dtype(np.int32)
int64: Final[DType] = np.dtype(np.int64)
uint8: Final[DType] = np.dtype(np.uint8)
uint16: Final[DType] = np.dtype(np.uint16)
uint32: Final[DType] = np.dtype(np.uint32)
uint64: Final[DType] = np.dtype(np.uint64)
float16: Final[DType] = np.dtype(np.float16)
float32: Final[DType] = np.dtype(np.float32)
float64: Final[DType] = np.dtype(np.float64)
complex64: Final[DType] = np.dtype(np.complex64)
complex128: Final[DType] = np.dtype(np.complex128)
bfloat16: Final[DType] = np.dtype(ml_dtypes.bfloat16)
float8_e3m4: Final[DType] = np.dtype(ml_dtypes.float8_e3m4)
float8_e4m3: Final[DType] = np.dtype(ml_dtypes.float8_e4m3)
float8_e8m0fnu: Final[DType] = np.dtype(ml_dtypes.float8_e8m0fnu)
float8_e4m3b11fnuz: Final[DType] = np.dtype(ml_dtypes.float8_e4m3b11fnuz)
float8_e4m3fn: Final[DType] = np.dtype(ml_dtypes.float8_e4m3fn)
float8_e4m3fnuz: Final[DType] = np.dtype(ml_dtypes.float8_e4m3fnuz)
float8_e5m2: Final[DType] = np.dtype(ml_dtypes.float8_e5m2)
float8_e5m2fnuz: Final[DType] = np.dtype(ml_dtypes.float8_e5m2fnuz)
float6_e2m3fn: Final[DType] = np.dtype(ml_dtypes.float6_e2m3fn)
float6_e3m2fn: Final[DType] = np.dtype(ml_dtypes.float6_e3m2fn)
float4_e2m1fn: Final[DType] = np.dtype(ml_dtypes.float4_e2m1fn)
int1: Final[DType] = np.dtype(ml_dtypes.int1)
int2: Final[DType] = np.dtype(ml_dtypes.int2)
int4: Final[DType] = np.dtype(ml_dtypes.int4)
uint1: Final[DType] = np.dtype(ml_dtypes.uint1)
uint2: Final[DType] = np.dtype(ml_dtypes.uint2)
uint4: Final[DType] = np.dtype(ml_dtypes.uint4)

float0: Final[DType] = np.dtype([("float0", np.void, 0)])
"""The zero-sized dtype of tangents of integer and boolean values."""

_ARRAY_DTYPES: Final[tuple[DType, ...]] = (
    bool_,
    *(uint1, uint2, uint4, uint8, uint16, uint32, uint64),
    *(int1, int2, int4, int8, int16, int32, int64),
    *(float4_e2m1fn, float6_e2m3fn, float6_e3m2fn),
    *(float8_e3m4, float8_e4m3, float8_e8m0fnu, float8_e4m3b11fnuz),
    *(float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz),
    *(bfloat16, float16, float32, float64),
    *(complex64, complex128),
)
# Keyed by name: the ml_dtypes dtypes of one width all hash alike, so a name lookup is the
# fast and unambiguous way back from a promotion-lattice node to its dtype.
_BY_NAME: Final = {dt.name: dt for dt in _ARRAY_DTYPES}
_SUPPORTED: Final = frozenset((*_ARRAY_DTYPES, float0))

_TO_32_BIT: Final = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}
_PYTHON_SCALAR_TYPES: Final[tuple[type, ...]] = (bool, int, float, complex)
_WEAK_SCALAR_NODES: Final[dict[type, str]] = {
    int: _promotion.WEAK_INT,
    float: _promotion.WEAK_FLOAT,
    complex: _promotion.WEAK_COMPLEX,
}
_CUSTOM_FLOAT_TYPES: Final = frozenset(
    dt.type for dt in (bfloat16, *(_BY_NAME[n] for n in _promotion.NARROW_FLOAT_NAMES))
)
_SIGNED_SUBBYTE_TYPES: Final = frozenset(dt.type for dt in (int1, int2, int4))
_UNSIGNED_SUBBYTE_TYPES: Final = frozenset(dt.type for dt in (uint1, uint2, uint4))


def all_dtypes() -> tuple[DType, ...]:
    """Every dtype an array may have, in promotion-lattice order; `float0` is not among them.

    The 64-bit types are included whatever the x64 mode; canonicalize if that matters.
    """
    return _ARRAY_DTYPES


def _as_dtype(x: object, caller: str) -> DType:
    """Interpret a dtype-like, raising a TypeError that names `caller` and `x` otherwise."""
    result: DType | None = None
    if isinstance(x, np.dtype):
        result = x
    elif isinstance(x, str) or (
        isinstance(x, type) and issubclass(x, (np.generic, *_PYTHON_SCALAR_TYPES))
    ):
        try:
            result = np.dtype(x)
        except (TypeError, ValueError):  # numpy raises either, depending on the string
            result = None
    elif isinstance(attr := getattr(x, "dtype", None), np.dtype):
        result = attr
    if result is None:
        raise TypeError(
            f"{caller}: cannot interpret {x!r} as a dtype; pass a numpy dtype, a scalar type "
            "(np.float32, float, ...) or a dtype name ('float32', 'bfloat16', ...)"
        )
    if result not in _SUPPORTED and result not in _EXTENDED:
        raise TypeError(
            f"{caller}: {x!r} is dtype {result}, which Lamina does not support; supported "
            f"dtypes are {', '.join(dt.name for dt in _ARRAY_DTYPES)} and float0"
        )
    return result


# Decides the dtypes tracing stages, so part of the tracing key, as in JAX.
numpy_dtype_promotion: Final = affects_tracing(
    define_enum_class(
        "jax_numpy_dtype_promotion",
        NumpyDtypePromotion,
        NumpyDtypePromotion.STANDARD,
        "Specify the rules used for implicit type promotion in operations between arrays. "
        'Options are "standard" or "strict"; in strict-mode, binary operations between arrays '
        "of differing strongly-specified dtypes will result in an error.",
    )
)
_TOUCHED: Final = config.touched


def _strict() -> bool:
    # Asked on every promotion: the set lookup spares reading the option when never set.
    return (
        "jax_numpy_dtype_promotion" in _TOUCHED
        and numpy_dtype_promotion.value is NumpyDtypePromotion.STRICT
    )


def _canonical(dt: DType, x64: bool) -> DType:
    return dt if x64 else _TO_32_BIT.get(dt, dt)


def canonicalize_dtype(dtype: DTypeLike | None, allow_extended_dtype: bool = False) -> DType:
    """The dtype Lamina uses for `dtype` under the current x64 mode.

    With `jax_enable_x64` off (the default) the 64-bit types become their 32-bit counterparts;
    with it on every dtype is its own canonical form.

    Args:
        dtype: a numpy dtype, a scalar type (`np.float32`, `float`, `int`, ...), a dtype name
            (`"float32"`, `"bfloat16"`), an object with a numpy `dtype` attribute, or None
            (NumPy's default, float64, as in JAX).
        allow_extended_dtype: accepted for JAX's signature; extended dtypes (keys) are their
            own canonical form either way.

    Returns:
        The canonical numpy dtype.

    Raises:
        TypeError: `dtype` is not a dtype-like (NumPy's error, as JAX's), or is a dtype Lamina
            does not support.

    Example:
        >>> canonicalize_dtype(float)
        dtype('float32')
    """
    if dtype is None:
        return _canonical(float64, enable_x64.value)
    try:
        found = _as_dtype(dtype, "canonicalize_dtype")
    except TypeError:
        np.dtype(dtype)  # NumPy's own error first, as JAX gives it
        raise
    return _canonical(found, enable_x64.value)


def _default_dtype(scalar_type: type, x64: bool) -> DType:
    """The default dtype for values of a Python scalar type, canonicalized for `x64`."""
    return _canonical(_WIDE_DEFAULTS[scalar_type], x64)


_WIDE_DEFAULTS: Final[dict[type, DType]] = {
    bool: bool_,
    int: int64,
    float: float64,
    complex: complex128,
}
_INT_BOUNDS: Final[dict[DType, tuple[int, int]]] = {}
"""(min, max) of the integer dtypes asked so far: `np.iinfo` is slow, and tracing asks it for
every Python int literal."""


def _int_bounds(dt: DType) -> tuple[int, int]:
    bounds = _INT_BOUNDS.get(dt)
    if bounds is None:
        info = np.iinfo(dt)
        bounds = _INT_BOUNDS[dt] = (int(info.min), int(info.max))
    return bounds


def is_python_scalar(x: object) -> bool:
    """Whether `x` is exactly a Python `bool`, `int`, `float` or `complex` (not a subclass)."""
    return type(x) in _PYTHON_SCALAR_TYPES


def python_scalar_dtype(x: bool | int | float | complex) -> DType:
    """The dtype a Python scalar gets: int32/float32/complex64 without x64, 64-bit with it.

    Args:
        x: a Python `bool`, `int`, `float` or `complex`.

    Returns:
        The canonical default dtype for the scalar's type.

    Raises:
        TypeError: `x` is not a Python scalar.
        OverflowError: `x` is an int outside the range of the default integer dtype.
    """
    if not is_python_scalar(x):
        raise TypeError(f"python_scalar_dtype: expected a Python scalar, got {type(x).__name__}")
    result = _default_dtype(type(x), enable_x64.value)
    if type(x) is int:
        low, high = _int_bounds(result)
        if not low <= x <= high:
            raise OverflowError(f"Python int {x} too large to convert to {result}")
    return result


def dtype(x: object, *, canonicalize: bool = False) -> DType:
    """The dtype of a value or dtype-like, as `jax.dtypes.dtype`.

    Python scalars and the types `bool`, `int`, `float`, `complex` give their default dtype
    (always canonical, as in JAX). Other values give their `dtype` attribute, and dtype-likes
    their dtype; these are canonicalized only when asked.

    Args:
        x: a Python scalar or scalar type, a dtype-like, or a value with a numpy `dtype`.
        canonicalize: apply the x64 canonicalization to the result.

    Returns:
        A supported numpy dtype (possibly `float0`).

    Raises:
        ValueError: `x` is None.
        TypeError: the dtype of `x` cannot be determined, or Lamina does not support it.
    """
    if x is None:
        raise ValueError("Invalid argument to dtype: None.")  # JAX's text
    x64 = enable_x64.value
    for scalar_type in _PYTHON_SCALAR_TYPES:
        if x is scalar_type:
            return _default_dtype(scalar_type, x64)
    if is_python_scalar(x):
        return _default_dtype(type(x), x64)
    if isinstance(x, _PYTHON_SCALAR_TYPES):  # a subclass, e.g. an IntEnum member: as its base
        base = next(t for t in type(x).__mro__ if t in _PYTHON_SCALAR_TYPES)
        return _default_dtype(base, x64)
    result = _as_dtype(x, "dtype")
    return _canonical(result, x64) if canonicalize else result


def is_weakly_typed(x: object) -> bool:
    """Whether `x` is weakly typed: a Python int/float/complex, or a value marked weak.

    Python bools are strongly typed, as in JAX. A value is marked weak when its `aval` (or,
    lacking one, the object itself, e.g. an aval) has a `weak_type` attribute that is True.
    """
    if type(x) in _WEAK_SCALAR_NODES:
        return True
    if isinstance(x, (int, float, complex)) and not isinstance(x, (bool, np.generic)):
        return True  # a subclass such as an IntEnum member: weak, as jnp's functions take it
    weak = getattr(getattr(x, "aval", x), "weak_type", False)
    return isinstance(weak, bool) and weak


def _node(x: object, caller: str) -> str:
    """The promotion-lattice node of a strong dtype-like or of a Python scalar type (weak)."""
    for scalar_type, node in _WEAK_SCALAR_NODES.items():
        if x is scalar_type:
            return node
    dt = _as_dtype(x, caller)
    if dt.name not in _promotion.NODES:
        raise TypePromotionError(f"{caller}: dtype {dt} does not take part in type promotion")
    return dt.name


def _scalar_kind(dt: DType) -> type | None:
    """The Python scalar type a dtype's values resemble (`int`, `float`, `complex`), if any."""
    if issubdtype(dt, np.integer):
        return int
    if issubdtype(dt, np.floating):
        return float
    if issubdtype(dt, np.complexfloating):
        return complex
    return None


def _weak_node(dt: DType) -> str:
    """The node standing for a weakly-typed value of dtype `dt` (a bool is never weak)."""
    kind = _scalar_kind(dt)
    if kind is None:
        return _node(dt, "result_type")
    return _WEAK_SCALAR_NODES[kind]


def _node_dtype(node: str, x64: bool, *, canonicalize: bool) -> DType:
    """The dtype of a lattice node; a weak node's is its Python type's default dtype."""
    for scalar_type, weak in _WEAK_SCALAR_NODES.items():
        if node == weak:
            return _default_dtype(scalar_type, x64) if canonicalize else np.dtype(scalar_type)
    dt = _BY_NAME[node]
    return _canonical(dt, x64) if canonicalize else dt


def promote_types(a: DTypeLike, b: DTypeLike) -> DType:
    """The dtype a binary operation on `a` and `b` computes in, as `jax.numpy.promote_types`.

    The Python types `int`, `float` and `complex` stand for weak types: they do not widen a
    strong type they meet (`promote_types("uint8", int)` is uint8). `bool` is strong. The
    result is not canonicalized: `promote_types(int, float)` is float64 in either x64 mode.
    The x64 mode still matters in one place: uint32 with int32 is int64 with x64, else int32.

    Args:
        a: a dtype-like, or one of the Python types `int`, `float`, `complex`.
        b: likewise.

    Returns:
        The least upper bound of the two on JAX's promotion lattice.

    Raises:
        TypeError: an argument is not a supported dtype-like.
        TypePromotionError: the two have no implicit promotion (e.g. two different float8s).

    Example:
        >>> promote_types("bfloat16", "float16")
        dtype('float32')
    """
    x64 = enable_x64.value
    nodes = (_node(a, "promote_types"), _node(b, "promote_types"))
    joined = _promotion.least_upper_bound(nodes, x64=x64, strict=_strict())
    return _node_dtype(joined, x64, canonicalize=False)


def _dtype_and_weakness(x: object, x64: bool) -> tuple[DType, bool]:
    if x is None:
        return _default_dtype(float, x64), False
    weak = is_weakly_typed(x) or any(x is t for t in _WEAK_SCALAR_NODES)
    return dtype(x, canonicalize=True), weak


def _default_of_kind(dt: DType, x64: bool) -> DType:
    """The default dtype of `dt`'s kind, which a weakly-typed result of dtype `dt` takes."""
    if issubdtype(dt, np.unsignedinteger):
        return _canonical(uint64, x64)
    kind = _scalar_kind(dt)
    return dt if kind is None else _default_dtype(kind, x64)


@overload
def result_type(*args: object, return_weak_type_flag: Literal[False] = False) -> DType: ...
@overload
def result_type(*args: object, return_weak_type_flag: Literal[True]) -> tuple[DType, bool]: ...
@overload
def result_type(*args: object, return_weak_type_flag: bool) -> DType | tuple[DType, bool]: ...
def result_type(*args: object, return_weak_type_flag: bool = False) -> DType | tuple[DType, bool]:
    """The dtype (and weakness) of the result of an operation on `args`, as JAX computes it.

    Python int/float/complex values and types, and values marked weak, take part as weak types:
    they adopt the width of the strong types they meet. None stands for the default float dtype.
    Input dtypes are canonicalized first, and a weak result takes the default dtype of its kind
    (so a weak int8 alone gives int32, weakly typed).

    Args:
        *args: values, dtype-likes, Python scalars or scalar types, or None.
        return_weak_type_flag: also return whether the result is weakly typed.

    Returns:
        The result dtype, or `(dtype, weak_type)` when `return_weak_type_flag` is True.

    Raises:
        ValueError: no arguments.
        TypeError: an argument's dtype cannot be determined or is not supported.
        TypePromotionError: the arguments' dtypes have no implicit promotion.

    Example:
        >>> result_type(np.int8, 2.5, return_weak_type_flag=True)
        (dtype('float32'), True)
    """
    if not args:
        raise ValueError("result_type: at least one array or dtype is required")
    x64 = enable_x64.value
    typed = [_dtype_and_weakness(arg, x64) for arg in args]
    dtypes = [dt for dt, _ in typed]
    all_weak = all(weak for _, weak in typed)
    if len(typed) == 1:
        out, weak = typed[0]
    elif not all_weak and all(dt == dtypes[0] for dt in dtypes):
        # No lattice walk, so dtypes outside the lattice (float0) pass through unchanged.
        out, weak = dtypes[0], False
    else:
        strict = _strict()
        if all_weak and not strict:
            # Join the strong dtypes and mark the result weak: joining weak nodes would lose
            # the width (weak int16 with weak int16 must stay int16, not become the weak int).
            nodes = [_node(dt, "result_type") for dt in dtypes]
        else:
            nodes = [_weak_node(dt) if w else _node(dt, "result_type") for dt, w in typed]
        joined = _promotion.least_upper_bound(nodes, x64=x64, strict=strict)
        out = _node_dtype(joined, x64, canonicalize=True)
        weak = all_weak or joined in _promotion.WEAK_NODES
    weak = weak and out != bool_
    if weak:
        out = _default_of_kind(out, x64)
    return (out, weak) if return_weak_type_flag else out


def short_dtype_name(dtype: DType) -> str:
    """The dtype's name as printed in jaxprs: `f32`, `bf16`, `u8`, `c64`, `f8_e4m3fn`, `bool`.

    `float0` prints as `float0`, an extended dtype by its own name (`key<fry>`).
    """
    if dtype == float0:
        return "float0"
    ext = _EXTENDED.get(dtype) if dtype.kind == "V" else None
    if ext is not None:
        return ext.name
    name = dtype.name
    for long, short in _SHORT_PREFIXES:
        if name.startswith(long):
            return short + name[len(long) :]
    return name


def dtype_name(dtype: DType) -> str:
    """The dtype's long name (`float32`), or an extended dtype's own name (`key<fry>`)."""
    ext = _EXTENDED.get(dtype) if dtype.kind == "V" else None
    return dtype.name if ext is None else ext.name


_SHORT_PREFIXES: Final = (
    ("bfloat", "bf"),
    ("float", "f"),
    ("uint", "u"),
    ("int", "i"),
    ("complex", "c"),
)


def _scalar_type(x: DTypeLike | None) -> type[np.generic]:
    # Scalar types pass through so that abstract categories (np.floating, ...) work as in numpy.
    if isinstance(x, type) and issubclass(x, np.generic):
        return x
    if isinstance(x, np.dtype):
        ext = extended_dtype_of(x)
        return x.type if ext is None else ext.scalar_type
    if x is None:
        return np.float64  # NumPy's reading of None as a dtype, which JAX keeps here
    return _as_dtype(x, "issubdtype").type


def issubdtype(arg1: DTypeLike | None, arg2: DTypeLike | None) -> bool:
    """Whether `arg1` is `arg2` or lies under it in numpy's type hierarchy, counting the ml_dtypes.

    Unlike `numpy.issubdtype`, bfloat16 and the float8/6/4 types are `np.floating`, and the
    sub-byte integers are `np.signedinteger` or `np.unsignedinteger`.

    Example:
        >>> issubdtype(bfloat16, np.floating)
        True
    """
    a, b = arg1, arg2
    if extended_dtype_of(b) is not None:  # one extended dtype is under no other (two PRNG impls)
        return a is b or a == b
    a_type, b_type = _scalar_type(a), _scalar_type(b)
    if a_type in _CUSTOM_FLOAT_TYPES:
        parents: tuple[type[np.generic], ...] = (np.floating, np.inexact, np.number, np.generic)
    elif a_type in _SIGNED_SUBBYTE_TYPES:
        parents = (np.signedinteger, np.integer, np.number, np.generic)
    elif a_type in _UNSIGNED_SUBBYTE_TYPES:
        parents = (np.unsignedinteger, np.integer, np.number, np.generic)
    else:
        return bool(np.issubdtype(a_type, b_type))
    return b_type is a_type or b_type in parents


def finfo(dtype: DTypeLike | None) -> ml_dtypes.finfo:
    """Machine limits of a floating dtype, the ml_dtypes floats included (None: NumPy's
    default, float64, as JAX's `finfo` answers)."""
    # ml_dtypes leaves its constructors unannotated.
    return ml_dtypes.finfo(_info_dtype(dtype, "finfo"))  # type: ignore[no-untyped-call]


def iinfo(dtype: DTypeLike | None) -> ml_dtypes.iinfo:
    """Machine limits of an integer dtype, the sub-byte integers included."""
    # ml_dtypes leaves its constructors unannotated.
    return ml_dtypes.iinfo(_info_dtype(dtype, "iinfo"))  # type: ignore[no-untyped-call]


def _info_dtype(dtype: DTypeLike | None, caller: str) -> Any:
    # None goes to ml_dtypes (NumPy) as it is: float64's limits, or NumPy's error for iinfo.
    return None if dtype is None else _as_dtype(dtype, caller)


# --- extended dtypes (`_extended_dtypes`) ------------------------------------------------------


def register_extended_dtype(
    name: str,
    physical_shape: tuple[int, ...],
    physical_dtype: DTypeLike,
    payload: object = None,
    scalar_type: type[Any] = extended,
) -> ExtendedDType:
    """Define the extended dtype `name` (once per name; a second call returns the first);
    `scalar_type` is what `issubdtype` places it under (`prng_key` for PRNG keys)."""
    physical = _as_dtype(physical_dtype, "register_extended_dtype")
    return _extended_dtypes.register_extended_dtype(
        name, physical_shape, physical, payload, scalar_type
    )
