"""Scalar types: `jnp.float32` and friends, usable as dtypes and callable to make arrays.

As in JAX, `jnp.float32(3.0)` is an array of that dtype, `jnp.float32.dtype` is the NumPy
dtype, `np.dtype(jnp.float32)` works, and `x.dtype == jnp.float32` compares dtypes.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from lamina_core.ir import dtypes
from lamina_core.ir.dtypes import finfo, iinfo, issubdtype, promote_types, result_type
from lamina_core.numpy._creation import asarray


class _ScalarMeta(type):
    dtype: np.dtype

    def __call__(cls, x: Any) -> Any:
        return asarray(x, dtype=cls.dtype)

    def __eq__(cls, other: object) -> builtins.bool:
        if cls is other:
            return True
        try:
            return builtins.bool(cls.dtype == np.dtype(other))  # type: ignore[call-overload]  # any dtype-like
        except TypeError:
            return False

    def __ne__(cls, other: object) -> builtins.bool:
        return not cls == other

    def __hash__(cls) -> int:
        return hash(cls.dtype)

    def __repr__(cls) -> str:
        return f"<class 'lamina.numpy.{cls.__name__}'>"

    def __instancecheck__(cls, instance: object) -> builtins.bool:
        return isinstance(instance, cls.dtype.type)


def _scalar_type(name: str, dtype: np.dtype) -> _ScalarMeta:
    return _ScalarMeta(name, (), {"dtype": dtype, "__doc__": f"The {dtype.name} scalar type."})


bool_ = _scalar_type("bool", dtypes.bool_)  # JAX's `bool_` is its `bool`
bool = bool_
int8 = _scalar_type("int8", dtypes.int8)
int16 = _scalar_type("int16", dtypes.int16)
int32 = _scalar_type("int32", dtypes.int32)
int64 = _scalar_type("int64", dtypes.int64)
uint8 = _scalar_type("uint8", dtypes.uint8)
uint16 = _scalar_type("uint16", dtypes.uint16)
uint32 = _scalar_type("uint32", dtypes.uint32)
uint64 = _scalar_type("uint64", dtypes.uint64)
float16 = _scalar_type("float16", dtypes.float16)
bfloat16 = _scalar_type("bfloat16", dtypes.bfloat16)
float32 = _scalar_type("float32", dtypes.float32)
float64 = _scalar_type("float64", dtypes.float64)
complex64 = _scalar_type("complex64", dtypes.complex64)
complex128 = _scalar_type("complex128", dtypes.complex128)
float8_e4m3fn = _scalar_type("float8_e4m3fn", dtypes.float8_e4m3fn)
float8_e5m2 = _scalar_type("float8_e5m2", dtypes.float8_e5m2)
int4 = _scalar_type("int4", dtypes.int4)
uint4 = _scalar_type("uint4", dtypes.uint4)
int1 = _scalar_type("int1", dtypes.int1)
int2 = _scalar_type("int2", dtypes.int2)
uint1 = _scalar_type("uint1", dtypes.uint1)
uint2 = _scalar_type("uint2", dtypes.uint2)
float4_e2m1fn = _scalar_type("float4_e2m1fn", dtypes.float4_e2m1fn)
float6_e2m3fn = _scalar_type("float6_e2m3fn", dtypes.float6_e2m3fn)
float6_e3m2fn = _scalar_type("float6_e3m2fn", dtypes.float6_e3m2fn)
float8_e3m4 = _scalar_type("float8_e3m4", dtypes.float8_e3m4)
float8_e4m3 = _scalar_type("float8_e4m3", dtypes.float8_e4m3)
float8_e4m3b11fnuz = _scalar_type("float8_e4m3b11fnuz", dtypes.float8_e4m3b11fnuz)
float8_e4m3fnuz = _scalar_type("float8_e4m3fnuz", dtypes.float8_e4m3fnuz)
float8_e5m2fnuz = _scalar_type("float8_e5m2fnuz", dtypes.float8_e5m2fnuz)
float8_e8m0fnu = _scalar_type("float8_e8m0fnu", dtypes.float8_e8m0fnu)
# NumPy's C-style names, as JAX aliases them.
single, double = float32, float64
csingle, cdouble = complex64, complex128
uint = uint64
float_ = _scalar_type("float_", dtypes.float64)
int_ = _scalar_type("int_", dtypes.int64)
complex_ = _scalar_type("complex_", dtypes.complex128)

dtype = np.dtype
floating = np.floating
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger
inexact = np.inexact
number = np.number
complexfloating = np.complexfloating

__all__ = [
    "bfloat16",
    "bool",
    "bool_",
    "cdouble",
    "complex64",
    "complex128",
    "complex_",
    "complexfloating",
    "csingle",
    "double",
    "dtype",
    "finfo",
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
    "float_",
    "floating",
    "iinfo",
    "inexact",
    "int1",
    "int2",
    "int4",
    "int8",
    "int16",
    "int32",
    "int64",
    "int_",
    "integer",
    "issubdtype",
    "number",
    "promote_types",
    "result_type",
    "signedinteger",
    "single",
    "uint",
    "uint1",
    "uint2",
    "uint4",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "unsignedinteger",
]
