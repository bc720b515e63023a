"""How an array's elements are laid out in a device's memory, and its format (layout and
sharding), as `jax.experimental.layout`'s `Layout` and `Format`.

Values only: the runtime reads a compiled executable's layouts into them, and
`ShapeDtypeStruct` carries one. Nothing here knows devices or XLA.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final


class AutoLayout:
    """`Layout.AUTO`: let the compiler choose the layout."""

    def __repr__(self) -> str:
        return "AUTO"


AUTO: Final = AutoLayout()


class Layout:
    """The order of an array's axes in memory, major to minor, and its tiling."""

    __slots__ = ("major_to_minor", "sub_byte_element_size_in_bits", "tiling")
    AUTO: Final = AUTO

    def __init__(
        self,
        major_to_minor: Sequence[int],
        tiling: Sequence[Sequence[int]] | None = None,
        sub_byte_element_size_in_bits: int = 0,
    ) -> None:
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(tuple(t) for t in tiling)
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    def _key(self) -> tuple[Any, ...]:
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def __repr__(self) -> str:
        return (
            f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
            f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def update(self, **changes: Any) -> Layout:
        fields = {
            "major_to_minor": self.major_to_minor,
            "tiling": self.tiling,
            "sub_byte_element_size_in_bits": self.sub_byte_element_size_in_bits,
        }
        return Layout(**{**fields, **changes})

    def check_compatible_aval(self, aval_shape: Sequence[int]) -> None:
        if len(self.major_to_minor) != len(aval_shape):
            raise ValueError(
                "Length of major_to_minor and the rank of the value should match. Got "
                f"major_to_minor={self.major_to_minor} and shape={tuple(aval_shape)}"
            )


class Format:
    """An array's layout and sharding together (either may be None: unspecified)."""

    __slots__ = ("layout", "sharding")

    def __init__(self, layout: Layout | AutoLayout | None = None, sharding: Any = None) -> None:
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError(
                f"Sharding has to be concrete when layout is of type {type(layout)}. Please "
                "pass a `jax.sharding.NamedSharding` or `jax.sharding.SingleDeviceSharding` "
                f"to the sharding argument. Got sharding {sharding}"
            )
        if not isinstance(layout, (Layout, AutoLayout, type(None))):
            raise TypeError(
                "Invalid value received for the layout argument. Expected values are `None`, "
                f"`Layout.AUTO` or an instance of `Layout`. Got {layout} of type {type(layout)}"
            )
        self.layout = layout
        self.sharding = sharding

    def __repr__(self) -> str:
        return f"Format(layout={self.layout}, sharding={self.sharding})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Format)
            and self.layout == other.layout
            and self.sharding == other.sharding
        )

    def __hash__(self) -> int:
        return hash((self.layout, self.sharding))


__all__ = ["AUTO", "AutoLayout", "Format", "Layout"]
