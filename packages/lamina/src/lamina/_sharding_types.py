"""`jax.sharding`'s small value types Lamina adds to its own: `AbstractDevice`,
`ManualAxisType`, and `make_single_device_sharding`."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from lamina_runtime import SingleDeviceSharding


@dataclass(frozen=True, slots=True)
class AbstractDevice:
    """The kind of device an abstract mesh stands for (no device itself)."""

    device_kind: str
    num_cores: int | None
    platform: str

    def __repr__(self) -> str:
        return (
            f"AbstractDevice(device_kind={self.device_kind}, num_cores={self.num_cores}, "
            f"platform={self.platform})"
        )


class ManualAxisType:
    """The manual mesh axes a value varies over, is unreduced over or reduced over.

    Interned, as JAX's: equal sets give the same object, so identity is equality.
    """

    __slots__ = ("__weakref__", "reduced", "unreduced", "varying")
    varying: frozenset[Any]
    unreduced: frozenset[Any]
    reduced: frozenset[Any]
    _interned: ClassVar[weakref.WeakValueDictionary[Any, ManualAxisType]] = (
        weakref.WeakValueDictionary()
    )

    def __new__(
        cls,
        *,
        varying: Any = frozenset(),
        unreduced: Any = frozenset(),
        reduced: Any = frozenset(),
    ) -> Self:
        if varying & unreduced:
            raise ValueError(
                "varying and unreduced cannot have common mesh axes. Got "
                f"varying={varying} and unreduced={unreduced}"
            )
        if varying & reduced:
            raise ValueError(
                "varying and reduced cannot have common mesh axes. Got "
                f"varying={varying} and reduced={reduced}"
            )
        key = (frozenset(varying), frozenset(unreduced), frozenset(reduced))
        found = cls._interned.get(key)
        if found is None:
            found = object.__new__(cls)
            object.__setattr__(found, "varying", key[0])
            object.__setattr__(found, "unreduced", key[1])
            object.__setattr__(found, "reduced", key[2])
            cls._interned[key] = found
        return found  # type: ignore[return-value]  # the one class that is interned

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ManualAxisType is immutable; cannot set {name}")

    def __repr__(self) -> str:
        return (
            f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, "
            f"reduced={self.reduced})"
        )

    def __getnewargs_ex__(self) -> tuple[tuple[()], dict[str, frozenset[Any]]]:
        return (), {"varying": self.varying, "unreduced": self.unreduced, "reduced": self.reduced}

    def update(self, **kwargs: Any) -> ManualAxisType:
        fields = {"varying": self.varying, "unreduced": self.unreduced, "reduced": self.reduced}
        fields.update(kwargs)
        return ManualAxisType(**fields)


def make_single_device_sharding(device: Any, *, memory_kind: str | None = None) -> Any:
    """A sharding that puts a whole array on `device`."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)
