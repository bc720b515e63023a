"""Hi types: user-defined types that are one value in a jaxpr and a list of arrays below.

A hi type subclasses `HiType` and answers core's aval protocol: how it prints, its tangent
type, how `vmap` and `scan` map it (`dec_rank`/`inc_rank` with a `MappingSpec`), and how it
lowers (`lo_ty`, `lower_val`, `raise_val`). `register_hitype` tells tracing which Python
class carries its values. Core's interpreters call only the protocol; the to-lojax pass
(`to_lojax`) expands hi values into their arrays before lowering.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from lamina_core.interpreters import MappingSpec
from lamina_core.ir import AbstractValue
from lamina_core.trace import register_hi_value_type


def _must_override(ty: object, method: str, why: str) -> NotImplementedError:
    return NotImplementedError(f"hi type {type(ty).__name__} must implement `{method}` ({why})")


class HiType(AbstractValue):
    """Base class of immutable hi types. Subclasses must be hashable and comparable (a frozen
    dataclass gives both) and implement `lo_ty`, `lower_val` and `raise_val`; the other hooks
    are needed only by the features that use them."""

    is_high: ClassVar[bool] = True

    # -- lowering ---------------------------------------------------------------------------

    def lo_ty(self) -> list[AbstractValue]:
        """The array types a value of this type is made of, in order."""
        raise _must_override(self, "lo_ty", "lowering")

    def lower_val(self, hi_val: Any) -> list[Any]:
        """A value of this type as its arrays, in `lo_ty` order."""
        raise _must_override(self, "lower_val", "lowering")

    def raise_val(self, *lo_vals: Any) -> Any:
        """The value of this type made of `lo_vals` (in `lo_ty` order)."""
        raise _must_override(self, "raise_val", "lowering")

    # -- printing ---------------------------------------------------------------------------

    def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
        return str(self)

    # -- autodiff ---------------------------------------------------------------------------

    def to_tangent_aval(self) -> AbstractValue:
        raise _must_override(self, "to_tangent_aval", "differentiation")

    def to_ct_aval(self) -> AbstractValue:
        """The type of cotangents (the tangent type unless a type says otherwise)."""
        return self.to_tangent_aval()

    def vspace_zero(self) -> Any:
        """The zero of this type, when it is itself a tangent type."""
        raise _must_override(self, "vspace_zero", "being a tangent type")

    def vspace_add(self, x: Any, y: Any) -> Any:
        """`x + y` for tangents of this type, when it is itself a tangent type."""
        raise _must_override(self, "vspace_add", "being a tangent type")

    # -- vmap and scan ----------------------------------------------------------------------

    def dec_rank(self, size: int, spec: Any) -> AbstractValue:
        """The type of one element of a value mapped by `spec` over an axis of `size`."""
        raise _must_override(self, "dec_rank", "vmap and scan")

    def inc_rank(self, size: int, spec: Any) -> AbstractValue:
        """The type of `size` values of this type mapped by `spec`."""
        raise _must_override(self, "inc_rank", "vmap and scan")

    def leading_axis_spec(self) -> Any:
        """The `MappingSpec` `scan` slices and stacks values of this type by."""
        raise _must_override(self, "leading_axis_spec", "scan")

    # -- shard_map --------------------------------------------------------------------------

    def shard(self, mesh: Any, manual_axes: frozenset[Any], check_vma: bool, spec: Any) -> Any:
        raise _must_override(self, "shard", "shard_map")

    def unshard(self, mesh: Any, check_vma: bool, spec: Any) -> Any:
        raise _must_override(self, "unshard", "shard_map")

    def nospec(self, mesh: Any, check_vma: bool, all_names: tuple[Any, ...]) -> Any:
        raise _must_override(self, "nospec", "differentiating through shard_map")


class HiPspec:
    """Base class of partition specs for hi types in `shard_map`'s `in_specs`/`out_specs`:
    `to_lo()` gives one partition spec per component of the type, in `lo_ty` order."""

    def to_lo(self) -> tuple[Any, ...]:
        raise NotImplementedError(f"{type(self).__name__} must implement `to_lo`")

    def to_tangent_spec(self) -> Any:
        return self

    def to_ct_spec(self) -> Any:
        return self


def register_hitype(val_cls: type, typeof_fn: Callable[[Any], AbstractValue]) -> None:
    """Make instances of `val_cls` values of the hi type `typeof_fn(value)`: `typeof`, `jit`,
    `grad`, `vmap` and `scan` then take them wherever they take arrays."""
    register_hi_value_type(val_cls, typeof_fn)


def lo_avals(avals: list[AbstractValue] | tuple[AbstractValue, ...]) -> list[AbstractValue]:
    """Every aval of `avals` replaced by its lowered types (arrays stay as they are)."""
    return [lo for a in avals for lo in (a.lo_ty() if a.is_high else (a,))]


__all__ = ["HiPspec", "HiType", "MappingSpec", "lo_avals", "register_hitype"]
