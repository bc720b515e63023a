"""`conv_general_dilated`, the convolution primitive, and the lax functions over it.

Params are JAX 0.10.2's: `window_strides`, `padding` (a `(low, high)` pair of ints per spatial
dimension, negative to crop), `lhs_dilation`, `rhs_dilation`, `dimension_numbers` (a
`ConvDimensionNumbers`), `feature_group_count`, `batch_group_count`, `precision`,
`preferred_element_type` and `out_sharding` (always None). The operation is XLA's: a
cross-correlation (no kernel flip) of the dilated, padded lhs with the dilated rhs.

Feature groups split the lhs features and the rhs output features into that many groups,
each group convolved with its own; batch groups split the lhs batch the same way (group-major)
against the rhs output features, and the result batch shrinks by the group count.
"""

from __future__ import annotations

import operator
import string
from collections.abc import Sequence
from typing import Any, Final, TypedDict

import numpy as np
from typing_extensions import Unpack

from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
)
from lamina_core.lax import _checks as c
from lamina_core.lax._conv_shapes import (
    ConvDimensionNumbers,
    ConvGeneralDilatedDimensionNumbers,
    Padding,
    _conv_transpose_padding,
    _dilate_shape,
    _stride_dim,
    conv_dimension_numbers,
    conv_shape_tuple,
    dilated_window,
    padtype_to_pads,
    spatial_sizes,
)
from lamina_core.lax._linalg import CanonicalPrecision, canonicalize_precision
from lamina_core.lax._shape import reshape, rev, shape_of, transpose
from lamina_core.lax._types import Array
from lamina_core.trace import typeof

# --- the primitive --------------------------------------------------------------------------

conv_general_dilated_p: Final = Primitive("conv_general_dilated")


class ConvParams(TypedDict):
    """The params of `conv_general_dilated_p`, as its rules receive them."""

    window_strides: Sequence[int]
    padding: Padding
    lhs_dilation: Sequence[int]
    rhs_dilation: Sequence[int]
    dimension_numbers: ConvDimensionNumbers
    feature_group_count: int
    batch_group_count: int
    precision: CanonicalPrecision
    preferred_element_type: np.dtype | None
    out_sharding: Any


def _check_shapes(lhs: ShapedArray, rhs: ShapedArray, params: ConvParams) -> tuple[int, ...]:
    """The result shape; raises JAX's errors, in JAX's order, for operands that do not fit."""
    if lhs.ndim != rhs.ndim:
        raise ValueError(
            "conv_general_dilated lhs and rhs must have the same number of dimensions, but got "
            f"{lhs.shape} and {rhs.shape}."
        )
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    window_strides = params["window_strides"]
    feature_group_count = params["feature_group_count"]
    batch_group_count = params["batch_group_count"]
    if not feature_group_count > 0:
        raise ValueError(
            "conv_general_dilated feature_group_count must be a positive integer, got "
            f"{feature_group_count}."
        )
    features = lhs.shape[lhs_spec[1]]
    in_features, out_features = rhs.shape[rhs_spec[1]], rhs.shape[rhs_spec[0]]
    per_group, ragged = divmod(features, feature_group_count)
    if ragged:
        raise ValueError(
            "conv_general_dilated feature_group_count must divide lhs feature dimension size, "
            f"but {feature_group_count} does not divide {features}."
        )
    if per_group != in_features:
        raise ValueError(
            "conv_general_dilated lhs feature dimension size divided by feature_group_count "
            "must equal the rhs input feature dimension size, but "
            f"{features} // {feature_group_count} != {in_features}."
        )
    if out_features % feature_group_count:
        raise ValueError(
            "conv_general_dilated rhs output feature dimension size must be a multiple of "
            f"feature_group_count, but {out_features} is not a multiple of "
            f"{feature_group_count}."
        )
    if not batch_group_count > 0:
        raise ValueError(
            "conv_general_dilated batch_group_count must be a positive integer, got "
            f"{batch_group_count}."
        )
    batch = lhs.shape[lhs_spec[0]]
    if batch_group_count > 1 and batch % batch_group_count:
        raise ValueError(
            "conv_general_dilated batch_group_count must divide lhs batch dimension size, but "
            f"{batch_group_count} does not divide {batch}."
        )
    if out_features % batch_group_count:
        raise ValueError(
            "conv_general_dilated rhs output feature dimension size must be a multiple of "
            f"batch_group_count, but {out_features} is not a multiple of {batch_group_count}."
        )
    if batch_group_count > 1 and feature_group_count > 1:
        raise ValueError(
            "At most one of batch_group_count and feature_group_count may be > 1, got "
            f"batch_group_count={batch_group_count} and "
            f"feature_group_count={feature_group_count}"
        )
    if len(rhs_spec[2:]) != len(window_strides):
        raise ValueError(
            "conv_general_dilated window and window_strides must have the same number of "
            f"dimensions, but got {len(rhs_spec[2:])} and {len(window_strides)}"
        )
    # NumPy ints, as JAX's rule has them: its error for over-cropping padding prints them.
    lhs_dims: list[Any] = [np.int64(lhs.shape[i]) for i in lhs_spec]
    rhs_dims: list[Any] = [np.int64(rhs.shape[i]) for i in rhs_spec]
    lhs_canonical = _dilate_shape(lhs_dims, params["lhs_dilation"])
    rhs_canonical = _dilate_shape(rhs_dims, params["rhs_dilation"])
    out = conv_shape_tuple(
        lhs_canonical, rhs_canonical, window_strides, params["padding"], batch_group_count
    )
    return tuple(int(out[i]) for i in np.argsort(out_spec))


def _validate_preferred(dtype: np.dtype, preferred: np.dtype) -> None:
    """JAX's compatibility rules for a preferred element type over inputs of `dtype`."""
    is_sub = dtypes.issubdtype
    if not (is_sub(dtype, np.integer) and is_sub(preferred, np.floating)):
        if any(
            is_sub(dtype, t) and not is_sub(preferred, t)
            for t in (np.integer, np.floating, np.complexfloating)
        ):
            raise TypeError(
                "Input type is incompatible with `preferred_element_type`. The compatible "
                "combinations of (input_type, preferred_element_type) are (integral, "
                "integral), (integral, floating), (floating, floating), (complex, complex."
            )
        if is_sub(dtype, np.signedinteger) and not is_sub(preferred, np.signedinteger):
            raise TypeError(
                "`preferred_element_type` must have the same signedness as the original type."
            )
    if preferred.itemsize < dtype.itemsize:
        raise TypeError("`preferred_element_type` must not be narrower than the original type.")


def _result_dtype(lhs: ShapedArray, rhs: ShapedArray, preferred: np.dtype | None) -> np.dtype:
    for i, aval in enumerate((lhs, rhs)):
        if aval.dtype == dtypes.float0:
            raise TypeError(
                f"Called conv_general_dilated with a float0 at position {i}. float0s do not "
                "support any operations by design, because they are not compatible with "
                "non-trivial vector spaces. No implicit dtype conversion is done. You can use "
                "np.zeros_like(arr, dtype=np.float) to cast a float0 array to a regular zeros "
                "array. \nIf you didn't expect to get a float0 you might have accidentally "
                "taken a gradient with respect to an integer argument."
            )
    if lhs.dtype != rhs.dtype:
        raise TypeError(
            "lax.conv_general_dilated requires arguments to have the same dtypes, got "
            f"{lhs.dtype}, {rhs.dtype}."
        )
    if preferred is None:
        return lhs.dtype
    _validate_preferred(lhs.dtype, preferred)
    return preferred


@abstract_eval_rules.register(conv_general_dilated_p)
def _conv_general_dilated_abstract_eval(
    lhs: AbstractValue, rhs: AbstractValue, **params: Unpack[ConvParams]
) -> ShapedArray:
    left = c.array_aval("conv_general_dilated", lhs)
    right = c.array_aval("conv_general_dilated", rhs)
    shape = _check_shapes(left, right, params)
    dtype = _result_dtype(left, right, params["preferred_element_type"])
    return ShapedArray(shape, dtype, left.weak_type and right.weak_type)


def _work_dtype(dtype: np.dtype) -> np.dtype:
    """Where the reference accumulates: exact for integers (wrapping as the result type
    does), double precision for floats."""
    kind = c.kind_of(dtype)
    if kind in "biu":
        return np.dtype(np.int64)
    if kind == "c":
        return np.dtype(np.complex128)
    return np.dtype(np.float64)


def _dilate(x: np.ndarray, dilation: Sequence[int]) -> np.ndarray:
    """`x` with `dilation - 1` zeros between neighbours along its trailing dimensions."""
    if all(d == 1 for d in dilation):
        return x
    lead = x.ndim - len(dilation)
    out = np.zeros(_dilate_shape(x.shape, dilation), x.dtype)
    out[(slice(None),) * lead + tuple(slice(None, None, d) for d in dilation)] = x
    return out


def _pad(x: np.ndarray, padding: Padding) -> np.ndarray:
    """`x` padded with zeros along its trailing dimensions (negative amounts crop)."""
    lead = x.ndim - len(padding)
    grow = [(0, 0)] * lead + [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    x = np.pad(x, grow)
    crop = tuple(
        slice(max(-lo, 0), x.shape[lead + i] - max(-hi, 0)) for i, (lo, hi) in enumerate(padding)
    )
    return x[(slice(None),) * lead + crop]


def conv_reference(
    lhs: np.ndarray, rhs: np.ndarray, params: ConvParams, out_dtype: np.dtype
) -> np.ndarray:
    """The convolution in NumPy, by windows and one `einsum` (plain, not fast)."""
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    window_strides = params["window_strides"]
    work = _work_dtype(out_dtype)
    x = np.transpose(np.asarray(lhs), lhs_spec).astype(work)
    w = np.transpose(np.asarray(rhs), rhs_spec).astype(work)
    x = _pad(_dilate(x, params["lhs_dilation"]), params["padding"])
    w = _dilate(w, params["rhs_dilation"])
    n_spatial = x.ndim - 2
    window = w.shape[2:]
    sizes = [
        _stride_dim(p, k, s) for p, k, s in zip(x.shape[2:], window, window_strides, strict=True)
    ]
    fg, bg = params["feature_group_count"], params["batch_group_count"]
    batch, features = x.shape[:2]
    out_features = w.shape[0]
    canonical_out = (batch // bg, out_features, *sizes)
    if 0 in canonical_out or 0 in w.shape[1:]:
        out = np.zeros(canonical_out, work)
    else:
        axes = tuple(range(2, 2 + n_spatial))
        patches = np.lib.stride_tricks.sliding_window_view(x, window, axis=axes)
        strided = (
            slice(None),
            slice(None),
            *(slice(0, (n - 1) * s + 1, s) for n, s in zip(sizes, window_strides, strict=True)),
        )
        patches = patches[strided]
        # Split the batch into (groups, members) and the features into (groups, members):
        # one of the two group counts is 1.
        patches = patches.reshape(bg, batch // bg, fg, features // fg, *patches.shape[2:])
        kernel = w.reshape(bg, fg, out_features // (bg * fg), *w.shape[1:])
        letters = iter(string.ascii_uppercase)
        pos = "".join(next(letters) for _ in range(n_spatial))
        win = "".join(next(letters) for _ in range(n_spatial))
        spec = f"bngc{pos}{win},bgoc{win}->nbgo{pos}"
        out = np.einsum(spec, patches, kernel).reshape(canonical_out)
    out = np.transpose(out, np.argsort(out_spec))
    if out_dtype.kind == "b":
        return np.asarray(out != 0)
    return np.asarray(out).astype(out_dtype)


@impl_rules.register(conv_general_dilated_p)
def _conv_general_dilated_impl(
    lhs: np.ndarray, rhs: np.ndarray, **params: Unpack[ConvParams]
) -> np.ndarray:
    left = c.array_aval("conv_general_dilated", typeof(lhs))
    right = c.array_aval("conv_general_dilated", typeof(rhs))
    out_dtype = _result_dtype(left, right, params["preferred_element_type"])
    return conv_reference(lhs, rhs, params, out_dtype)


# --- reshapes the transformation rules share ----------------------------------------------


def reshape_axis_into(src: int, dst: int, x: Array) -> Array:
    """`x` with axis `src` merged into axis `dst` (numbered without `src`), `src` major."""
    shape = shape_of(x)
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [d for i, d in enumerate(shape) if i != src]
    new_shape[dst] *= shape[src]
    return reshape(x, new_shape, perm)


def reshape_axis_out_of(src: int, size: int, x: Array) -> Array:
    """`x` with axis `src` split into `(size, rest)`."""
    shape = list(shape_of(x))
    rest, ragged = divmod(shape[src], size)
    assert not ragged
    shape[src : src + 1] = [size, rest]
    return reshape(x, shape)


# --- the lax functions ----------------------------------------------------------------------


def conv_general_dilated(
    lhs: Array,
    rhs: Array,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Array:
    """General n-dimensional convolution with strides, padding, dilations and groups.

    Raises:
        ValueError: string padding with an lhs dilation, padding that is neither a string nor
            `(low, high)` pairs, or operands that do not fit the parameters.
        TypeError: malformed dimension numbers, or operand dtypes that differ.
    """
    lhs_shape, rhs_shape = shape_of(lhs), shape_of(rhs)
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    if out_sharding is not None:
        raise NotImplementedError("conv_general_dilated: out_sharding is not supported by Lamina")
    if lhs_dilation is None:
        lhs_dilation = (1,) * (len(lhs_shape) - 2)
    elif isinstance(padding, str) and len(lhs_dilation) != list(lhs_dilation).count(1):
        raise ValueError(
            "String padding is not implemented for transposed convolution using this op. "
            "Please either exactly specify the required padding or use conv_transpose."
        )
    if rhs_dilation is None:
        rhs_dilation = (1,) * (len(rhs_shape) - 2)
    pads: Padding
    if isinstance(padding, str):
        window = dilated_window(rhs_shape, dnums.rhs_spec, rhs_dilation)
        in_shape = spatial_sizes(lhs_shape, dnums.lhs_spec)
        pads = tuple(padtype_to_pads(in_shape, window, window_strides, padding))
    else:
        try:
            pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (ValueError, TypeError) as e:
            raise ValueError(
                "padding argument to conv_general_dilated should be a string or a sequence of "
                f"(low, high) pairs, got {padding}"
            ) from e
    preferred = (
        None
        if preferred_element_type is None
        else dtypes.canonicalize_dtype(preferred_element_type)
    )
    return conv_general_dilated_p.bind(
        lhs,
        rhs,
        window_strides=tuple(window_strides),
        padding=pads,
        lhs_dilation=tuple(lhs_dilation),
        rhs_dilation=tuple(rhs_dilation),
        dimension_numbers=dnums,
        feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred,
        out_sharding=None,
    )


def conv(
    lhs: Array,
    rhs: Array,
    window_strides: Sequence[int],
    padding: str,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Array:
    """`conv_general_dilated` in the `NCHW`/`OIHW` layout, without dilations."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_with_general_padding(
    lhs: Array,
    rhs: Array,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None,
    rhs_dilation: Sequence[int] | None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Array:
    """`conv_general_dilated` in the `NCHW`/`OIHW` layout."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


_TRANSPOSE_LAYOUTS: Final = {
    2: ("NC", "IO", "NC"),
    3: ("NHC", "HIO", "NHC"),
    4: ("NHWC", "HWIO", "NHWC"),
    5: ("NHWDC", "HWDIO", "NHWDC"),
}


def conv_transpose(
    lhs: Array,
    rhs: Array,
    strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
    transpose_kernel: bool = False,
    precision: Any = None,
    preferred_element_type: Any = None,
    use_consistent_padding: bool = False,
) -> Array:
    """The "transposed" (fractionally strided) convolution, as `conv_general_dilated` with an
    lhs dilation of `strides`; TensorFlow's layouts by default.

    `transpose_kernel` flips the kernel's spatial dimensions and swaps its feature dimensions,
    which makes this the gradient of the forward convolution. With `use_consistent_padding`
    (or 'SAME'/'VALID'), `padding` is that of the forward convolution; otherwise explicit
    pairs pad the dilated input directly.

    Raises:
        ValueError: no default layout for the rank, or the operands do not fit.
    """
    lhs_shape, rhs_shape = shape_of(lhs), shape_of(rhs)
    assert len(lhs_shape) == len(rhs_shape) and len(lhs_shape) >= 2
    ndims = len(lhs_shape)
    one = (1,) * (ndims - 2)
    if dimension_numbers is None:
        if ndims not in _TRANSPOSE_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_LAYOUTS[ndims]
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    if rhs_dilation is None:
        rhs_dilation = (1,) * (ndims - 2)
    pads: str | Sequence[tuple[int, int]]
    if use_consistent_padding or (isinstance(padding, str) and padding in {"SAME", "VALID"}):
        window = dilated_window(rhs_shape, dn.rhs_spec, rhs_dilation)
        each = [padding] * len(strides) if isinstance(padding, str) else list(padding)
        pads = tuple(
            _conv_transpose_padding(k, s, p) for k, s, p in zip(window, strides, each, strict=False)
        )
    else:
        pads = padding
    if transpose_kernel:
        for axis in dn.rhs_spec[2:]:
            rhs = rev(rhs, (int(axis),))
        perm = list(range(ndims))
        o, i = dn.rhs_spec[0], dn.rhs_spec[1]
        perm[o], perm[i] = perm[i], perm[o]
        rhs = transpose(rhs, tuple(perm))
    return conv_general_dilated(
        lhs,
        rhs,
        one,
        pads,
        strides,
        rhs_dilation,
        dn,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


__all__ = [
    "conv",
    "conv_general_dilated",
    "conv_general_dilated_p",
    "conv_transpose",
    "conv_with_general_padding",
]
