"""`PartitionSpec` (`P`): how each axis of an array is split over the axes of a device mesh.

Pure data, as JAX's: one entry per array axis, each `None` (not split), a mesh axis name, or
a tuple of names; plus the mesh axes over which the value is `unreduced` or `reduced`. It is
a leaf of pytrees (not a tuple), so specs can stand in a pytree of specs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any, Final


class _Unconstrained:
    """`P.UNCONSTRAINED`: the partitioner may choose this axis's split."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNCONSTRAINED"


UNCONSTRAINED: Final = _Unconstrained()


def _canonical_entry(entry: Any) -> Any:
    if isinstance(entry, list):
        entry = tuple(entry)
    if isinstance(entry, tuple):
        if len(entry) == 1:
            return entry[0]  # JAX's canonical form: ('i',) is 'i'
        if not entry:
            return None
    return entry


def _axes(value: Any, name: str) -> frozenset[Any]:
    if isinstance(value, frozenset):
        return value
    if isinstance(value, set):
        return frozenset(value)
    raise TypeError(
        f"{name} argument of PartitionSpec should of type `frozenset` or `set`. Got type {value}"
    )


def entry_axes(entry: Any) -> tuple[Any, ...]:
    """The mesh axes one entry of a spec names: none for `None` or `UNCONSTRAINED`, the tuple
    for a tuple of axes, else the one axis."""
    if entry is None or entry is UNCONSTRAINED:
        return ()
    return entry if isinstance(entry, tuple) else (entry,)


def split_counts(spec: PartitionSpec, axis_sizes: Mapping[Any, int], ndim: int) -> tuple[int, ...]:
    """Into how many pieces `spec` splits each of `ndim` array axes, for mesh axes of
    `axis_sizes` (axes past the spec's entries are whole)."""
    parts = spec.partitions
    return tuple(
        math.prod(axis_sizes[n] for n in entry_axes(parts[i])) if i < len(parts) else 1
        for i in range(ndim)
    )


class PartitionSpec:
    """A tuple-like description of how to partition an array across a mesh of devices."""

    __slots__ = ("_partitions", "reduced", "unreduced")
    UNCONSTRAINED: Final = UNCONSTRAINED

    _partitions: tuple[Any, ...]
    unreduced: frozenset[Any]
    reduced: frozenset[Any]

    def __init__(
        self,
        *partitions: Any,
        unreduced: frozenset[Any] | set[Any] = frozenset(),
        reduced: frozenset[Any] | set[Any] = frozenset(),
    ) -> None:
        parts = tuple(_canonical_entry(p) for p in partitions)
        ur, r = _axes(unreduced, "unreduced"), _axes(reduced, "reduced")
        if None in ur or None in r:
            which = "unreduced" if None in ur else "reduced"
            raise ValueError(
                f"{which} cannot contain None. All elements in {which} should refer to the mesh "
                "axes."
            )
        if ur & r:
            raise ValueError(
                "`unreduced` and `reduced` argument to PartitionSpec cannot overlap. Got "
                f"unreduced: {ur} and reduced: {r}"
            )
        object.__setattr__(self, "_partitions", parts)
        object.__setattr__(self, "unreduced", ur)
        object.__setattr__(self, "reduced", r)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        raise TypeError("Subclassing `jax.P` is prohibited.")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("PartitionSpec is immutable")

    @property
    def partitions(self) -> tuple[Any, ...]:
        return self._partitions

    def __repr__(self) -> str:
        body = repr(self._partitions)[1:-1]
        if not self.unreduced and not self.reduced:
            return f"P({body})"
        extra = []
        if self.unreduced:
            extra.append(f"unreduced={set(self.unreduced)!r}")
        if self.reduced:
            extra.append(f"reduced={set(self.reduced)!r}")
        sep = "" if not body else f"{body} " if body.endswith(",") else f"{body}, "
        return f"P({sep}{', '.join(extra)})"

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is PartitionSpec
            and self._partitions == other._partitions
            and self.unreduced == other.unreduced
            and self.reduced == other.reduced
        )

    def __hash__(self) -> int:
        return hash((self._partitions, self.unreduced, self.reduced))

    def _plain(self, what: str) -> None:
        if self.reduced or self.unreduced:
            raise ValueError(
                f"Using {what} is dangerous when PartitionSpec has non-empty unreduced/reduced "
                "set. Please use spec.partitions"
            )

    def __getitem__(self, i: Any) -> Any:
        self._plain("pspec[...]")
        return self._partitions[i]

    def __iter__(self) -> Iterator[Any]:
        self._plain("*pspec")
        return iter(self._partitions)

    def __len__(self) -> int:
        return len(self._partitions)

    def __add__(self, other: Any) -> PartitionSpec:
        if isinstance(other, PartitionSpec):
            return PartitionSpec(
                *self._partitions,
                *other._partitions,
                unreduced=self.unreduced | other.unreduced,
                reduced=self.reduced | other.reduced,
            )
        if isinstance(other, tuple):
            return PartitionSpec(*self, *other)
        return NotImplemented

    def __radd__(self, other: Any) -> PartitionSpec:
        if isinstance(other, tuple):
            return PartitionSpec(*other, *self)
        return NotImplemented

    def __reduce__(self) -> Any:
        return (_rebuild, (self._partitions, self.unreduced, self.reduced))

    def index(self, value: Any) -> int:
        return self._partitions.index(_canonical_entry(value))

    def count(self, value: Any) -> int:
        return self._partitions.count(_canonical_entry(value))

    def update(
        self,
        partitions: Any = None,
        unreduced: frozenset[Any] | set[Any] | None = None,
        reduced: frozenset[Any] | set[Any] | None = None,
    ) -> PartitionSpec:
        return PartitionSpec(
            *(self._partitions if partitions is None else partitions),
            unreduced=self.unreduced if unreduced is None else unreduced,
            reduced=self.reduced if reduced is None else reduced,
        )

    # The spec protocol hi types' specs (HiPspec) share: one spec per lowered component.
    def to_lo(self) -> list[PartitionSpec]:
        return [self]

    def to_tangent_spec(self) -> PartitionSpec:
        return self

    def to_ct_spec(self) -> PartitionSpec:
        return self.update(unreduced=self.reduced, reduced=self.unreduced)


def _rebuild(
    partitions: tuple[Any, ...], unreduced: frozenset[Any], reduced: frozenset[Any]
) -> PartitionSpec:
    return PartitionSpec(*partitions, unreduced=unreduced, reduced=reduced)


P = PartitionSpec

__all__ = ["UNCONSTRAINED", "P", "PartitionSpec", "entry_axes", "split_counts"]
