"""`conv_general_dilated_patches` and `conv_general_dilated_local`, as JAX's: both built from
`conv_general_dilated` (no primitive of their own).

Patches come from convolving each input feature with an identity kernel (one output feature
per window position), as feature groups, so the result's feature dimension holds the flattened
windows, feature-major. A local ("unshared") convolution is those patches contracted with a
kernel that has its own weights at each output position: a `dot_general` whose batch
dimensions are the output's spatial ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.lax._conv import conv_general_dilated
from lamina_core.lax._conv_shapes import ConvGeneralDilatedDimensionNumbers, conv_dimension_numbers
from lamina_core.lax._elementwise import add, eq
from lamina_core.lax._linalg import Precision, canonicalize_precision, dot_general
from lamina_core.lax._shape import broadcasted_iota, reshape, shape_of, transpose
from lamina_core.lax._structural import broadcast_in_dim, convert_element_type_p
from lamina_core.lax._types import Array
from lamina_core.trace import typeof


def _identity(dtype: np.dtype, size: int) -> Array:
    """The `size` x `size` identity in `dtype`, staged as JAX stages its `_eye`."""
    rows = add(broadcasted_iota(np.int32, (size, size), 0), np.int32(0))
    diagonal = eq(rows, broadcasted_iota(np.int32, (size, size), 1))
    return convert_element_type_p.bind(diagonal, new_dtype=dtype, weak_type=False, sharding=None)


def _move_axes(x: Array, src: Sequence[int], dst: Sequence[int]) -> Array:
    """`x` with axes `src` moved to positions `dst` (nothing staged when they stay put)."""
    if tuple(src) == tuple(dst):
        return x
    perm = [i for i in range(len(shape_of(x))) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        perm.insert(d, s)
    return transpose(x, tuple(perm))


def conv_general_dilated_patches(
    lhs: Array,
    filter_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Array:
    """The receptive-field patches of `conv_general_dilated`: the output's feature dimension
    holds each window of size `filter_shape` (in the kernel's spatial order), flattened
    feature-major, so it has `prod(filter_shape) * features` entries."""
    lhs_shape = shape_of(lhs)
    filter_shape = tuple(int(d) for d in filter_shape)
    dn = conv_dimension_numbers(lhs_shape, (1, 1, *filter_shape), dimension_numbers)
    lhs_spec, rhs_spec, _ = dn
    window = math.prod(filter_shape)
    features = lhs_shape[lhs_spec[1]]
    dtype = typeof(lhs).dtype  # type: ignore[attr-defined]  # array values
    kernel = broadcast_in_dim(_identity(dtype, window), (features, window, window), (1, 2))
    kernel = reshape(kernel, (features * window, 1, *filter_shape))
    kernel = _move_axes(kernel, (0, 1), (rhs_spec[0], rhs_spec[1]))
    return conv_general_dilated(
        lhs,
        kernel,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dn,
        precision=None if precision is None else (precision, Precision.DEFAULT),
        feature_group_count=features,
        preferred_element_type=preferred_element_type,
    )


def conv_general_dilated_local(
    lhs: Array,
    rhs: Array,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    filter_shape: Sequence[int],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
    precision: Any = None,
) -> Array:
    """A locally connected ("unshared") convolution: `rhs` has its own weights at each output
    position, its spatial dimensions being the output's and its input-feature dimension the
    flattened patch of `conv_general_dilated_patches`."""
    # The patches take the lhs half of the pair (Lamina has no dot algorithms, which JAX
    # refuses here).
    canonical = canonicalize_precision(precision)
    lhs_precision = None if canonical is None else canonical[0]
    patches = conv_general_dilated_patches(
        lhs,
        filter_shape,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dimension_numbers,
        precision=lhs_precision,
    )
    _, rhs_spec, out_spec = conv_dimension_numbers(
        shape_of(lhs), (1, 1, *filter_shape), dimension_numbers
    )
    out_spatial, rhs_spatial = list(out_spec[2:]), list(rhs_spec[2:])
    # Pair the spatial dimensions in the patches' own order, as JAX does.
    order = sorted(range(len(out_spatial)), key=lambda k: out_spatial[k])
    numbers = (
        ([out_spec[1]], [rhs_spec[1]]),
        (sorted(out_spatial), [rhs_spatial[k] for k in order]),
    )
    out = dot_general(patches, rhs, numbers, precision=precision)
    rank = len(shape_of(out))
    return _move_axes(out, (rank - 2, rank - 1), (out_spec[0], out_spec[1]))


__all__ = ["conv_general_dilated_local", "conv_general_dilated_patches"]
