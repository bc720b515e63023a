"""Convolution dimension numbers and shape helpers of `jax.lax`, as JAX's.

`ConvDimensionNumbers` holds three permutations: `lhs_spec` and `out_spec` list the batch, the
feature and then the spatial dimensions, `rhs_spec` the output feature, the input feature and
then the spatial dimensions; the spatial dimensions of all three follow the kernel's order.
Layout strings such as `('NHWC', 'HWIO', 'NHWC')` turn into these permutations. The shape
helpers compute result shapes and the padding that 'SAME', 'SAME_LOWER' or 'VALID' stand for.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any, NamedTuple, TypeAlias

import numpy as np

from lamina_core.ir import register_param_type


class ConvDimensionNumbers(NamedTuple):
    """Where the batch, feature and spatial dimensions of a convolution's operands are.

    `lhs_spec` and `out_spec` list `(batch, feature, spatial...)`, `rhs_spec` lists
    `(out feature, in feature, spatial...)`; the spatial dimensions of all three are in the
    order of the kernel's.
    """

    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


register_param_type(ConvDimensionNumbers)  # so printed jaxprs read back (`ir.parse`)

ConvGeneralDilatedDimensionNumbers: TypeAlias = tuple[str, str, str] | ConvDimensionNumbers | None
"""What `dimension_numbers` arguments may be: layout strings, the canonical form, or None."""

Padding: TypeAlias = tuple[tuple[int, int], ...]


class PaddingType(enum.Enum):
    """The named padding schemes of `padtype_to_pads`."""

    VALID = 1
    SAME = 2
    SAME_LOWER = 3


def _dilate_dim(d: int, dilation: int) -> int:
    return d if dilation == 1 else max(0, 1 + dilation * (d - 1))


def _stride_dim(d: int, window: int, stride: int) -> int:
    return max(0, (d - window) // stride + 1)


def _dilate_shape(shape: Sequence[int], dilation: Sequence[int]) -> tuple[int, ...]:
    """`shape` with its trailing dimensions dilated by `dilation`."""
    if not all(d > 0 for d in dilation):
        raise TypeError(f"All dilations must be positive, got {dilation}.")
    full = (1,) * (len(shape) - len(dilation)) + tuple(dilation)
    return tuple(_dilate_dim(s, int(d)) for s, d in zip(shape, full, strict=True))


def spatial_sizes(shape: Sequence[int], spec: Sequence[int]) -> list[int]:
    """The sizes of `shape`'s spatial dimensions in the kernel's order, `spec` being the
    operand's entry of a `ConvDimensionNumbers`."""
    return [shape[i] for i in spec[2:]]


def dilated_window(
    rhs_shape: Sequence[int], rhs_spec: Sequence[int], rhs_dilation: Sequence[int]
) -> list[int]:
    """The kernel's spatial sizes once dilated (the dilations are not checked here)."""
    sizes = spatial_sizes(rhs_shape, rhs_spec)
    return [_dilate_dim(k, d) for k, d in zip(sizes, rhs_dilation, strict=False)]


def padtype_to_pads(
    in_shape: Sequence[int],
    window_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str | PaddingType,
) -> list[tuple[int, int]]:
    """The `(low, high)` padding per spatial dimension that `padding` ('SAME', 'SAME_LOWER'
    or 'VALID') means for windows of `window_shape` moved by `window_strides`.

    Raises:
        RuntimeError: `padding` is a string that names no scheme.
        TypeError: `padding` is neither a string nor a `PaddingType`.
    """
    if isinstance(padding, str):
        try:
            padding = PaddingType[padding.upper()]
        except KeyError as err:
            raise RuntimeError(
                "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got "
                f"{padding}."
            ) from err
    if padding in (PaddingType.SAME, PaddingType.SAME_LOWER):
        pads = []
        for size, window, stride in zip(in_shape, window_shape, window_strides, strict=True):
            out = -(-int(size) // int(stride))
            total = max(0, (out - 1) * int(stride) + int(window) - int(size))
            small, big = total // 2, total - total // 2
            pads.append((small, big) if padding is PaddingType.SAME else (big, small))
        return pads
    if padding == PaddingType.VALID:
        return [(0, 0)] * len(in_shape)
    raise TypeError(f"Unknown padding type: {padding}.")


def conv_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    strides: Sequence[int],
    pads: str | Sequence[tuple[int, int]],
    batch_group_count: int = 1,
) -> tuple[int, ...]:
    """The result shape of a convolution whose operand shapes are in canonical order
    (`NC...` and `OI...`).

    Raises:
        TypeError: the number of padding pairs is not the number of spatial dimensions.
        ValueError: a negative padding removes more than a dimension has.
    """
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(
            "Wrong number of explicit pads for convolution: expected "
            f"{len(lhs_shape) - 2}, got {len(pads)}."
        )
    flat = np.array(pads).reshape(-1, 2)
    padded = np.add(lhs_shape[2:], np.sum(flat, axis=1))
    if np.any(padded < 0):
        raise ValueError(
            "Negative padding is larger than the size of the corresponding dimension: "
            f"got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}"
        )
    space = tuple(
        _stride_dim(int(p), int(k), int(s))
        for p, k, s in zip(padded, rhs_shape[2:], strides, strict=True)
    )
    batch = int(lhs_shape[0])
    if batch_group_count > 1:
        assert batch % batch_group_count == 0
        batch //= batch_group_count
    return (batch, int(rhs_shape[0]), *space)


def conv_general_permutations(
    dimension_numbers: tuple[str, str, str],
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The permutations that put each layout string in canonical order (`NC`/`OI`, then the
    spatial dimensions in the order of the kernel's).

    Raises:
        TypeError: a string lacks its two letters, repeats a letter, or the spatial letters
            differ between the strings.
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        spec = dimension_numbers[i]
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(
                f"convolution dimension_numbers[{i}] must contain the characters '{a}' and "
                f"'{b}' exactly once, got {spec}."
            )
        if len(spec) != len(set(spec)):
            raise TypeError(
                f"convolution dimension_numbers[{i}] cannot have duplicate characters, got {spec}."
            )
    spatial = [set(spec) - set(pair) for spec, pair in zip(dimension_numbers, pairs, strict=True)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError(
            "convolution dimension_numbers elements must each have the same set of spatial "
            f"characters, got {dimension_numbers}."
        )

    def perm(spec: str, pair: tuple[str, str], ordered: bool) -> tuple[int, ...]:
        rest = [i for i, ch in enumerate(spec) if ch not in pair]
        if ordered:
            rest.sort(key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *rest)

    return (
        perm(lhs_spec, pairs[0], True),
        perm(rhs_spec, pairs[1], False),
        perm(out_spec, pairs[2], True),
    )


def conv_dimension_numbers(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    dimension_numbers: ConvGeneralDilatedDimensionNumbers,
) -> ConvDimensionNumbers:
    """`dimension_numbers` (None, layout strings, or already canonical) as a
    `ConvDimensionNumbers`.

    Raises:
        TypeError: the ranks differ, or the layout strings are malformed.
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(
            "convolution requires lhs and rhs ndim to be equal, got "
            f"{len(lhs_shape)} and {len(rhs_shape)}."
        )
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, (list, tuple)):
        if len(dimension_numbers) != 3:
            raise TypeError(
                "convolution dimension_numbers list/tuple must be length 3, got "
                f"{len(dimension_numbers)}."
            )
        if not all(isinstance(spec, str) for spec in dimension_numbers):
            types = tuple(type(spec) for spec in dimension_numbers)
            raise TypeError(f"convolution dimension_numbers elements must be strings, got {types}.")
        for i, spec in enumerate(dimension_numbers):
            if len(spec) != len(lhs_shape):
                raise TypeError(
                    f"convolution dimension_numbers[{i}] must have len equal to the ndim of lhs "
                    f"and rhs, got {len(spec)} for lhs and rhs shapes {lhs_shape} and "
                    f"{rhs_shape}."
                )
        lhs_perm, rhs_perm, out_perm = conv_general_permutations(
            (dimension_numbers[0], dimension_numbers[1], dimension_numbers[2])
        )
        return ConvDimensionNumbers(lhs_perm, rhs_perm, out_perm)
    raise TypeError(
        f"convolution dimension_numbers must be tuple/list or None, got {type(dimension_numbers)}."
    )


def conv_general_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    dimension_numbers: tuple[str, str, str],
) -> tuple[int, ...]:
    """The result shape of a convolution of operands laid out as `dimension_numbers` says."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_canonical = [lhs_shape[i] for i in lhs_perm]
    rhs_canonical = [rhs_shape[i] for i in rhs_perm]
    out = conv_shape_tuple(lhs_canonical, rhs_canonical, window_strides, padding)
    return tuple(out[i] for i in np.argsort(out_perm))


def _conv_transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """The `(before, after)` padding of one dimension of a transposed convolution, given the
    kernel size `k`, the stride `s` and the padding of the forward convolution."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else math.ceil(total / 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        before, total = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return before, total - before


def conv_transpose_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    dimension_numbers: tuple[str, str, str],
) -> tuple[int, ...]:
    """The result shape of `conv_transpose` of operands laid out as `dimension_numbers` says."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_canonical = [int(lhs_shape[i]) for i in lhs_perm]
    rhs_canonical = [int(rhs_shape[i]) for i in rhs_perm]
    if isinstance(padding, str):
        padding = [
            _conv_transpose_padding(k, s, padding)
            for k, s in zip(rhs_canonical[2:], window_strides, strict=False)
        ]
    totals = [int(np.sum(p)) for p in padding]
    space = [
        (i - 1) * s - k + 2 + p
        for i, k, s, p in zip(
            lhs_canonical[2:], rhs_canonical[2:], window_strides, totals, strict=False
        )
    ]
    out = (lhs_canonical[0], rhs_canonical[0], *space)
    return tuple(out[i] for i in np.argsort(out_perm))


__all__ = [
    "ConvDimensionNumbers",
    "ConvGeneralDilatedDimensionNumbers",
    "conv_dimension_numbers",
    "conv_general_permutations",
    "conv_general_shape_tuple",
    "conv_shape_tuple",
    "conv_transpose_shape_tuple",
    "padtype_to_pads",
]
