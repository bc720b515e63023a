"""`device_put_p`: what `device_put` stages under a trace, as JAX's `device_put` primitive.

One equation moves all the leaves; each has a target (`None`: wherever the computation runs),
a source, and a copy semantics. On one device it is the identity: it lowers to nothing. Its
transpose moves cotangents back, always copying.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, Final

from lamina_core.interpreters import (
    AxisData,
    Zero,
    batching_rules,
    is_undefined,
    jvp_rules,
    linear_jvp,
    transpose_rules,
)
from lamina_core.ir import AbstractValue, Primitive, abstract_eval_rules, impl_rules


class ArrayCopySemantics(enum.Enum):
    """Whether a transfer may reuse, must copy, or may donate its input buffer."""

    ALWAYS_COPY = 0
    REUSE_INPUT = 1
    DONATE_INPUT = 2

    def __repr__(self) -> str:
        return f"ArrayCopySemantics.{self.name}"

    __str__ = __repr__


device_put_p: Final = Primitive("device_put", multiple_results=True)


@abstract_eval_rules.register(device_put_p)
def _device_put_abstract_eval(*xs: AbstractValue, **params: Any) -> list[AbstractValue]:
    return list(xs)


@impl_rules.register(device_put_p)
def _device_put_impl(*xs: Any, **params: Any) -> list[Any]:
    return list(xs)


def _device_put_transpose(cts: Sequence[Any], *args: Any, devices: Any, srcs: Any,
                          copy_semantics: Any) -> list[Any]:  # fmt: skip
    results: list[Any] = [None] * len(cts)
    moved = [
        (i, ct, dev, src, cp)
        for i, (ct, arg, dev, src, cp) in enumerate(
            zip(cts, args, devices, srcs, copy_semantics, strict=True)
        )
        if is_undefined(arg) and type(ct) is not Zero
    ]
    for i, (ct, arg) in enumerate(zip(cts, args, strict=True)):
        if is_undefined(arg) and type(ct) is Zero:
            results[i] = ct
    if not moved:
        return results
    if any(cp == ArrayCopySemantics.DONATE_INPUT for *_, cp in moved):
        raise ValueError(
            "donate=True is not allowed during tranposition of device_put. Please file an "
            "issue if you want this to be supported."
        )
    ys = device_put_p.bind(
        *[m[1] for m in moved],
        devices=tuple(m[3] for m in moved),  # back where the primal came from
        srcs=tuple(m[2] for m in moved),
        copy_semantics=tuple(ArrayCopySemantics.ALWAYS_COPY for _ in moved),
    )
    for (i, *_), y in zip(moved, ys, strict=True):
        results[i] = y
    return results


def _device_put_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[Any], **params: Any
) -> tuple[list[Any], list[Any]]:
    return list(device_put_p.bind(*vals, **params)), list(dims)


jvp_rules.set(device_put_p, linear_jvp(device_put_p))
transpose_rules.set(device_put_p, _device_put_transpose)
batching_rules.set(device_put_p, _device_put_batch)


def copy_semantics_of(donate: Any, may_alias: Any) -> ArrayCopySemantics:
    """The copy semantics one leaf's `donate` and `may_alias` flags ask for (JAX's rule:
    aliasing is allowed by default unless donating).

    Raises:
        ValueError: both flags are true.
    """
    if may_alias and donate:
        raise ValueError("may_alias and donate cannot be True at the same time.")
    if may_alias is None:
        may_alias = not donate
    if may_alias:
        return ArrayCopySemantics.REUSE_INPUT
    return ArrayCopySemantics.DONATE_INPUT if donate else ArrayCopySemantics.ALWAYS_COPY


def stage_device_put(
    leaves: Sequence[Any],
    device: Any = None,
    *,
    srcs: Sequence[Any] | None = None,
    copy_semantics: Sequence[ArrayCopySemantics] | None = None,
) -> list[Any]:
    """`device_put` of traced `leaves`: one equation, each leaf to `device` (one target, or one
    per leaf), from `srcs` (default: unknown), reusing inputs unless `copy_semantics` says."""
    count = len(leaves)
    devices = tuple(device) if isinstance(device, list) else (device,) * count
    return list(
        device_put_p.bind(
            *leaves,
            devices=devices,
            srcs=(None,) * count if srcs is None else tuple(srcs),
            copy_semantics=(
                (ArrayCopySemantics.REUSE_INPUT,) * count
                if copy_semantics is None
                else tuple(copy_semantics)
            ),
        )
    )


__all__ = ["device_put_p"]
