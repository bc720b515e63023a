"""Differentiation rules of `conv_general_dilated`, as JAX's: bilinear, and each operand's
transpose another convolution.

Leaving space aside, the convolution contracts `[batch, in] x [in, out] -> [batch, out]`, so
its transposes are those of a matrix product. The lhs cotangent convolves the output
cotangent with the spatially reversed kernel, its feature roles swapped; the strides become an
lhs dilation and the lhs dilation the strides. Feature groups move from the kernel's input
features to its output features; batch groups become feature groups, and the result's
features are folded back into its batch. The rhs cotangent convolves the lhs with the output
cotangent as kernel, batch and feature roles swapped: feature groups become batch groups and
back, and the rhs dilation and strides trade places.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from typing_extensions import Unpack

from lamina_core.interpreters import Zero, defbilinear
from lamina_core.lax._conv import (
    ConvParams,
    conv_general_dilated,
    conv_general_dilated_p,
    reshape_axis_into,
    reshape_axis_out_of,
)
from lamina_core.lax._conv_shapes import ConvDimensionNumbers, _dilate_shape, spatial_sizes
from lamina_core.lax._shape import rev, shape_of
from lamina_core.lax._structural import _convert_element_type
from lamina_core.trace import typeof


def _dtype(x: Any) -> np.dtype:
    return typeof(x).dtype  # type: ignore[attr-defined, no-any-return]  # array values


def _swap_roles(spec: Sequence[int]) -> tuple[int, ...]:
    return (spec[1], spec[0], *spec[2:])


def _dilated_spatial_sizes(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], out_shape: Sequence[int], p: ConvParams
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The geometry both transposes invert: the spatial sizes of the dilated lhs, of the
    dilated kernel, and of the output spread out by the strides."""
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    return (
        _dilate_shape(spatial_sizes(lhs_shape, lhs_spec), p["lhs_dilation"]),
        _dilate_shape(spatial_sizes(rhs_shape, rhs_spec), p["rhs_dilation"]),
        _dilate_shape(spatial_sizes(out_shape, out_spec), p["window_strides"]),
    )


def _lhs_cotangent_padding(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], out_shape: Sequence[int], p: ConvParams
) -> list[tuple[int, int]]:
    """Padding of the output cotangent so that the strided-back convolution covers exactly
    the (dilated) lhs."""
    lhs_d, rhs_d, out_d = _dilated_spatial_sizes(lhs_shape, rhs_shape, out_shape, p)
    before = [k - lo - 1 for k, (lo, _) in zip(rhs_d, p["padding"], strict=True)]
    after = [i + k - 1 - o - b for i, k, o, b in zip(lhs_d, rhs_d, out_d, before, strict=True)]
    return list(zip(before, after, strict=True))


def _rhs_cotangent_padding(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], out_shape: Sequence[int], p: ConvParams
) -> list[tuple[int, int]]:
    """Padding of the lhs so that sliding the output cotangent over it spans the kernel."""
    lhs_d, rhs_d, out_d = _dilated_spatial_sizes(lhs_shape, rhs_shape, out_shape, p)
    lows = [lo for lo, _ in p["padding"]]
    highs = [o - i + k - lo - 1 for o, i, k, lo in zip(out_d, lhs_d, rhs_d, lows, strict=True)]
    return list(zip(lows, highs, strict=True))


def _transpose_lhs(g: Any, lhs: Any, rhs: Any, **p: Unpack[ConvParams]) -> Any:
    feature_group_count, batch_group_count = p["feature_group_count"], p["batch_group_count"]
    assert batch_group_count == 1 or feature_group_count == 1
    lhs_aval = lhs.aval
    rhs_shape = shape_of(rhs)
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    groups = max(feature_group_count, batch_group_count)
    if groups > 1:
        # The groups move from the kernel's output features to its input features, which
        # are the output features of the transposed convolution.
        rhs = reshape_axis_out_of(rhs_spec[0], groups, rhs)
        rhs = reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    numbers = ConvDimensionNumbers(out_spec, _swap_roles(rhs_spec), lhs_spec)
    pads = _lhs_cotangent_padding(lhs_aval.shape, rhs_shape, shape_of(g), p)
    kernel = rev(rhs, rhs_spec[2:])
    if _dtype(g) != _dtype(kernel):
        kernel = _convert_element_type(kernel, _dtype(g), False)
    out = conv_general_dilated(
        g,
        kernel,
        window_strides=p["lhs_dilation"],
        padding=pads,
        lhs_dilation=p["window_strides"],
        rhs_dilation=p["rhs_dilation"],
        dimension_numbers=numbers,
        feature_group_count=groups,
        batch_group_count=1,
        precision=p["precision"],
        preferred_element_type=p["preferred_element_type"],
    )
    if _dtype(out) != lhs_aval.dtype:
        out = _convert_element_type(out, lhs_aval.dtype, False)
    if batch_group_count > 1:
        out = reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
        out = reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return out


def _transpose_rhs(g: Any, lhs: Any, rhs: Any, **p: Unpack[ConvParams]) -> Any:
    g_shape = shape_of(g)
    if math.prod(g_shape) == 0:
        # A kernel of spatial size 0 would be degenerate; the cotangent is zero anyway.
        return Zero(rhs.aval)
    assert p["batch_group_count"] == 1 or p["feature_group_count"] == 1
    rhs_aval = rhs.aval
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    numbers = ConvDimensionNumbers(
        _swap_roles(lhs_spec), _swap_roles(out_spec), _swap_roles(rhs_spec)
    )
    pads = _rhs_cotangent_padding(shape_of(lhs), rhs_aval.shape, g_shape, p)
    if _dtype(g) != _dtype(lhs):
        lhs = _convert_element_type(lhs, _dtype(g), False)
    out = conv_general_dilated(
        lhs,
        g,
        window_strides=p["rhs_dilation"],
        padding=pads,
        lhs_dilation=p["lhs_dilation"],
        rhs_dilation=p["window_strides"],
        dimension_numbers=numbers,
        # Feature groups become batch groups and the other way around.
        feature_group_count=p["batch_group_count"],
        batch_group_count=p["feature_group_count"],
        precision=p["precision"],
        preferred_element_type=p["preferred_element_type"],
    )
    if _dtype(out) != rhs_aval.dtype:
        out = _convert_element_type(out, rhs_aval.dtype, False)
    return out


defbilinear(conv_general_dilated_p, _transpose_lhs, _transpose_rhs)

__all__: list[str] = []
