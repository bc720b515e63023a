"""The types `jax.lax` names for dot products: `Precision`, `DotAlgorithm`,
`DotAlgorithmPreset`, `DotDimensionNumbers`, `RaggedDotDimensionNumbers` and the
`PrecisionLike` alias.

They describe requests; what Lamina's `dot_general` accepts of them is up to it (a `Precision`
or a pair of them, as before).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, NamedTuple, TypeAlias, Union

import numpy as np

from lamina_core.ir import dtypes, register_param_type


class Precision(enum.Enum):
    """How accurately an accelerator multiplies float32 (no effect on CPU).

    Printed as JAX prints it (`Precision.HIGHEST`), so params compare as text.
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


class DotAlgorithm(NamedTuple):
    """A dot product algorithm: the types the operands are rounded to and accumulated in, and
    how many components and primitive products emulate a wider type."""

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


_F8_PRESETS = ("ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
               "ANY_F8_ANY_F8_ANY_FAST_ACCUM")  # fmt: skip


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms known to some platform (`LHS_RHS_ACCUM`; an `_Xn` suffix: n
    products emulate the wider type)."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name

    @property
    def supported_lhs_types(self) -> tuple[Any, ...] | None:
        name = self.name
        if name == "DEFAULT" or name in _F8_PRESETS:
            return None
        if name.startswith("F16_"):
            return (np.float16,)
        if name in ("BF16_BF16_BF16", "BF16_BF16_F32"):
            return (dtypes.bfloat16, np.float32)
        if name == "F64_F64_F64":
            return (np.float64,)
        return (np.float32,)

    @property
    def supported_rhs_types(self) -> tuple[Any, ...] | None:
        return self.supported_lhs_types

    @property
    def accumulation_type(self) -> Any:
        name = self.name
        if name in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        wide = {"F16_F16_F16": np.float16, "BF16_BF16_BF16": dtypes.bfloat16}
        return wide.get(name, np.float64 if name == "F64_F64_F64" else np.float32)


# Printed by their repr in dot params (`precision=(Precision.HIGHEST, ...)`): read back by name.
register_param_type(Precision)
register_param_type(DotAlgorithmPreset)


PrecisionLike: TypeAlias = Union[  # noqa: UP007, RUF036  (a runtime alias, as JAX's)
    None,
    str,
    Precision,
    tuple[str, str],
    tuple[Precision, Precision],
    DotAlgorithm,
    DotAlgorithmPreset,
]

DotDimensionNumbers: TypeAlias = tuple[
    tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]
]


class RaggedDotDimensionNumbers:
    """The dimension numbers of `ragged_dot_general`: its dot dimension numbers, the ragged
    dimensions of the lhs and the group dimensions of the rhs (stored as tuples)."""

    __slots__ = ("dot_dimension_numbers", "lhs_ragged_dimensions", "rhs_group_dimensions")
    dot_dimension_numbers: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]
    lhs_ragged_dimensions: tuple[int, ...]
    rhs_group_dimensions: tuple[int, ...]

    def __init__(
        self,
        dot_dimension_numbers: Any,
        lhs_ragged_dimensions: Sequence[int],
        rhs_group_dimensions: Sequence[int],
    ) -> None:
        dims = tuple(tuple(tuple(d) for d in pair) for pair in dot_dimension_numbers)
        object.__setattr__(self, "dot_dimension_numbers", dims)
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(rhs_group_dimensions))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field '{name}'")

    def _key(self) -> tuple[Any, ...]:
        return (self.dot_dimension_numbers, self.lhs_ragged_dimensions, self.rhs_group_dimensions)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RaggedDotDimensionNumbers) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"RaggedDotDimensionNumbers(dot_dimension_numbers={self.dot_dimension_numbers}, "
            f"lhs_ragged_dimensions={self.lhs_ragged_dimensions}, "
            f"rhs_group_dimensions={self.rhs_group_dimensions})"
        )


__all__ = [
    "DotAlgorithm",
    "DotAlgorithmPreset",
    "DotDimensionNumbers",
    "PrecisionLike",
    "RaggedDotDimensionNumbers",
]
