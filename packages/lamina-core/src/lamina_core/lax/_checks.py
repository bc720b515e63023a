"""Shared checks and shape rules for the lax primitives' abstract evaluation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from lamina_core.ir import AbstractValue, ShapedArray

BOOL: Final = frozenset("b")
INT: Final = frozenset("iu")
SIGNED: Final = frozenset("i")
FLOAT: Final = frozenset("f")
COMPLEX: Final = frozenset("c")
INEXACT: Final = FLOAT | COMPLEX
NUM: Final = INT | INEXACT
ORDERED: Final = BOOL | INT | FLOAT
ANY: Final = BOOL | NUM

_KIND_NAMES: Final = {
    "b": "bool",
    "i": "signedinteger",
    "u": "unsignedinteger",
    "f": "floating",
    "c": "complexfloating",
}


def kind_of(dtype: np.dtype) -> str:
    """NumPy's kind letter, with the ml_dtypes floats ('V' in NumPy) counted as floating."""
    kind = dtype.kind
    if kind == "V" and dtype.names is None:
        return "f" if "float" in dtype.name else ("u" if dtype.name.startswith("u") else "i")
    return kind


def array_aval(prim: str, aval: AbstractValue) -> ShapedArray:
    if not isinstance(aval, ShapedArray):
        raise aval.operand_error(prim)
    return aval


def check_dtype(prim: str, aval: ShapedArray, accepted: frozenset[str]) -> None:
    if kind_of(aval.dtype) not in accepted:
        names = ", ".join(_KIND_NAMES[k] for k in "biufc" if k in accepted)
        raise TypeError(
            f"{prim} does not accept dtype {aval.dtype.name}. "
            f"Accepted dtypes are subtypes of {names}."
        )


def check_same_dtypes(prim: str, avals: Sequence[ShapedArray]) -> np.dtype:
    first = avals[0].dtype
    if len(avals) == 2 and avals[1].dtype == first:
        return first
    if any(a.dtype != first for a in avals[1:]):
        got = ", ".join(a.dtype.name for a in avals)
        raise TypeError(
            f"lax.{prim} requires arguments to have the same dtypes, got {got}. (Tip: "
            f"jnp.{prim} is a similar function that does automatic type promotion on inputs)."
        )
    return first


def broadcast_shapes(prim: str, avals: Sequence[ShapedArray]) -> tuple[int, ...]:
    """Equal ranks with size-1 broadcasting; rank-0 operands broadcast to anything."""
    if len(avals) == 2 and avals[0].shape == avals[1].shape:
        return avals[0].shape
    shapes = [a.shape for a in avals if a.shape]
    if not shapes:
        return ()
    if len({len(s) for s in shapes}) != 1:
        ranks = "{" + ", ".join(str(r) for r in sorted({len(s) for s in shapes})) + "}"
        raise TypeError(f"{prim}: arrays must have the same number of dimensions, got {ranks}")
    result = []
    for dims in zip(*shapes, strict=True):
        big = {d for d in dims if d != 1}
        if len(big) > 1:
            listed = ", ".join(str(tuple(s)) for s in shapes)
            raise TypeError(f"{prim} got incompatible shapes for broadcasting: {listed}.")
        result.append(big.pop() if big else 1)
    return tuple(result)


def canonical_axes(prim: str, axes: Sequence[int], ndim: int) -> tuple[int, ...]:
    out = []
    for axis in axes:
        if not -ndim <= axis < ndim:
            raise ValueError(f"{prim}: axis {axis} is out of bounds for an array of rank {ndim}")
        out.append(axis % ndim if ndim else axis)
    if len(set(out)) != len(out):
        raise ValueError(f"{prim}: duplicate axes in {tuple(axes)}")
    return tuple(out)
