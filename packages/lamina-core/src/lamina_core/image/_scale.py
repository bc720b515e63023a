"""Resampling images by separable kernels: `resize`, `scale_and_translate`, `ResizeMethod`.

Each resampled axis gets a weight matrix (input size x output size): output pixel `j` samples
the input at `(j + 0.5) / scale - translation / scale - 0.5`, every input pixel is weighted by
the kernel of its distance (stretched by `1 / scale` when antialiasing a reduction), columns are
normalized to sum to one, and samples off the image get no weight. One `einsum` then contracts
every axis's matrix with the image. "area" weights by overlap of pixel footprints instead of a
kernel; "cubic-pytorch" without antialiasing repeats the edge pixels rather than dropping them.

The formulas are JAX 0.10.2's, operation for operation: the jaxpr of `resize` is part of the
contract (it is a `jit` with static arguments in JAX), so the order of the arithmetic matters.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.numpy import canonicalize_axis, dtype_of, promote_dtypes_inexact, shape_of
from lamina_core.transforms import Jitted

Array = Any
Kernel = Callable[[Array], Array]


def _lanczos(radius: float, x: Array) -> Array:
    y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
    # Near zero the ratio is 0/0; its limit there is 1.
    out = jnp.where(x > 1e-3, jnp.divide(y, jnp.where(x != 0, np.pi**2 * x**2, 1)), 1)
    return jnp.where(x > radius, 0.0, out)


def _keys_cubic(x: Array) -> Array:
    """Keys' cubic convolution kernel (a = -0.5), as TensorFlow's and Pillow's bicubic."""
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = jnp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _opencv_cubic(x: Array) -> Array:
    """The cubic kernel with a = -0.75, as OpenCV's and PyTorch's bicubic."""
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _triangle(x: Array) -> Array:
    return jnp.maximum(0, 1 - jnp.abs(x))


class ResizeMethod(enum.Enum):
    """How `resize` and `scale_and_translate` interpolate.

    NEAREST: nearest neighbour. LINEAR: (bi/tri)linear. LANCZOS3, LANCZOS5: Lanczos
    resampling of radius 3 or 5. CUBIC: Keys' cubic kernel. CUBIC_PYTORCH: PyTorch's bicubic
    (as CUBIC with antialiasing; otherwise another kernel and repeated edge pixels). AREA: the
    mean of the input pixels each output pixel covers (a box filter when upscaling, as
    TensorFlow's).
    """

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method a name stands for ("nearest", "linear"/"bilinear"/"trilinear"/"triangle",
        "lanczos3", "lanczos5", "cubic"/"bicubic"/"tricubic", "cubic-pytorch"/"bicubic-pytorch",
        "area"); ValueError for any other."""
        method = _NAMES.get(s)
        if method is None:
            raise ValueError(f'Unknown resize method "{s}"')
        return method


_NAMES: dict[str, ResizeMethod] = {
    "nearest": ResizeMethod.NEAREST,
    **dict.fromkeys(["linear", "bilinear", "trilinear", "triangle"], ResizeMethod.LINEAR),
    "lanczos3": ResizeMethod.LANCZOS3,
    "lanczos5": ResizeMethod.LANCZOS5,
    **dict.fromkeys(["cubic", "bicubic", "tricubic"], ResizeMethod.CUBIC),
    **dict.fromkeys(["cubic-pytorch", "bicubic-pytorch"], ResizeMethod.CUBIC_PYTORCH),
    "area": ResizeMethod.AREA,
}

_KERNELS: dict[ResizeMethod, tuple[int, Kernel | None]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, partial(_lanczos, 3.0)),
    ResizeMethod.LANCZOS5: (5, partial(_lanczos, 5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, None),
}
"""Each method's kernel and radius (in input pixels); None: weights by footprint overlap."""

_SMALLEST_TOTAL = 1000.0 * float(np.finfo(np.float32).eps)
"""Columns whose weights sum to less than this get no weight at all (their output is zero)."""


def _normalized(weights: Array) -> Array:
    total = jnp.sum(weights, axis=0, keepdims=True)
    return jnp.where(
        jnp.abs(total) > _SMALLEST_TOTAL,
        jnp.divide(weights, jnp.where(total != 0, total, 1)),
        0,
    )


def _weight_matrix(
    input_size: int,
    output_size: int,
    scale: Any,
    translation: Any,
    kernel: Kernel | None,
    antialias: bool,
    edge_padding: bool,
    radius: int,
) -> Array:
    """The `(input_size, output_size)` weights resampling one axis."""
    dtype = dtypes.result_type(scale, translation)
    inv_scale = 1.0 / scale
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    sample_f = (
        (jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5
    )
    # Edge padding is asked for only without antialiasing, so the kernel keeps its radius.
    k = radius if edge_padding else 0
    expanded = jnp.arange(-k, input_size + k, dtype=dtype)
    if kernel is None:
        out_left = jnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
        out_right = out_left + inv_scale
        in_left = jnp.arange(input_size, dtype=dtype)
        in_right = in_left + 1.0
        weights = jnp.maximum(
            0.0,
            jnp.minimum(out_right[np.newaxis, :], in_right[:, np.newaxis])
            - jnp.maximum(out_left[np.newaxis, :], in_left[:, np.newaxis]),
        )
    else:
        x = jnp.abs(sample_f[np.newaxis, :] - expanded[:, np.newaxis])
        weights = kernel(x / kernel_scale)
    if edge_padding:
        # The padded taps fold onto the edge pixels they repeat.
        clamped = jnp.clip(expanded.astype(jnp.int32), 0, input_size - 1)
        outputs = jnp.arange(output_size)
        matrix = jnp.zeros((input_size, output_size), dtype=dtype)
        columns = lax.broadcast_in_dim(outputs, (shape_of(expanded)[0], output_size), (1,))
        matrix = jnp.at(matrix)[clamped[:, np.newaxis], columns].add(weights)
        return _normalized(matrix)
    weights = _normalized(weights)
    inside = jnp.logical_and(sample_f >= -0.5, sample_f <= input_size - 0.5)
    return jnp.where(inside[np.newaxis, :], weights, 0)


def _scale_and_translate(
    x: Array,
    output_shape: tuple[int, ...],
    spatial_dims: Sequence[int],
    scale: Any,
    translation: Any,
    kernel: Kernel | None,
    antialias: bool,
    precision: Any,
    edge_padding: bool,
    radius: int,
) -> Array:
    if not spatial_dims:
        return x
    input_shape = shape_of(x)
    rank = len(output_shape)
    operands: list[Any] = []
    out_indices = list(range(rank))
    for i, d in enumerate(spatial_dims):
        d = canonicalize_axis(d, len(input_shape))
        w = _weight_matrix(
            input_shape[d],
            output_shape[d],
            scale[i],
            translation[i],
            kernel,
            antialias,
            edge_padding,
            radius,
        ).astype(dtype_of(x))
        operands += [w, [d, rank + i]]
        out_indices[d] = rank + i
    return jnp.einsum(x, list(range(rank)), *operands, out_indices, precision=precision)


def _method(method: str | ResizeMethod) -> ResizeMethod:
    return ResizeMethod.from_string(method) if isinstance(method, str) else method


def _check_rank(shape: tuple[int, ...], image_shape: tuple[int, ...]) -> None:
    if len(shape) != len(image_shape):
        raise ValueError(
            "shape must have length equal to the number of dimensions of x; "
            f" {shape} vs {image_shape}"
        )


def _kernel_of(method: ResizeMethod, antialias: bool) -> tuple[int, Kernel | None, bool]:
    """The radius and kernel of `method`, and whether edges are padded (PyTorch's bicubic
    without antialiasing; with it, PyTorch's bicubic is Keys')."""
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    return radius, kernel, method == ResizeMethod.CUBIC_PYTORCH and not antialias


def scale_and_translate(
    image: Array,
    shape: Sequence[int],
    spatial_dims: Sequence[int],
    scale: Any,
    translation: Any,
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: Any = lax.Precision.HIGHEST,
) -> Array:
    """Resample `image` to `shape` under a scale and translation of its `spatial_dims`.

    An input location `x` along spatial axis `i` lands at `x * scale[i] + translation[i]` in
    the output (pixel centres at half-integers); output pixels whose source lies outside the
    input are zero. With `scale = (n - 1) / (m - 1)` and `translation = 0.5 * (1 - scale)` this
    is PyTorch's `interpolate(align_corners=True)`.

    Args:
      image: the image, of any rank.
      shape: the output shape, one size per axis of `image`.
      spatial_dims: the K axes resampled.
      scale: K scales (an array or sequence).
      translation: K translations.
      method: a `ResizeMethod` or its name; not NEAREST.
      antialias: widen the kernel when downscaling (no effect when upscaling).
      precision: the `einsum`'s precision.

    Returns:
      The resampled image, in a floating dtype.

    Raises:
      ValueError: `shape`'s length is not `image`'s rank, the method is unknown or NEAREST.
    """
    shape = lax.canonical_shape(shape)
    _check_rank(shape, tuple(shape_of(image)))
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError(
            "Nearest neighbor resampling is not currently supported for scale_and_translate."
        )
    radius, kernel, edge_padding = _kernel_of(method, antialias)
    (image,) = promote_dtypes_inexact(image)
    # Arrays, as JAX's promotion makes them: indexing one stages (NumPy's would fold).
    scale, translation = (jnp.asarray(v) for v in promote_dtypes_inexact(scale, translation))
    return _scale_and_translate(
        image,
        shape,
        spatial_dims,
        scale,
        translation,
        kernel,
        antialias,
        precision,
        edge_padding,
        radius,
    )


def _resize_nearest(x: Array, output_shape: tuple[int, ...]) -> Array:
    input_shape = shape_of(x)
    for d, (m, n) in enumerate(zip(input_shape, output_shape, strict=True)):
        if m == n:
            continue
        offsets = (jnp.arange(n, dtype=np.float32) + 0.5) * m / n
        offsets = jnp.floor(offsets.astype(np.float32)).astype(np.int32)
        index: list[Any] = [slice(None)] * len(input_shape)
        index[d] = offsets
        x = x[tuple(index)]
    return x


@partial(Jitted, static_argnums=(1, 2, 3, 4))
def _resize(
    image: Array,
    shape: tuple[int, ...],
    method: str | ResizeMethod,
    antialias: bool,
    precision: Any,
) -> Array:
    _check_rank(shape, tuple(shape_of(image)))
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    (image,) = promote_dtypes_inexact(image)
    image_shape = shape_of(image)
    spatial_dims = tuple(i for i in range(len(shape)) if image_shape[i] != shape[i])
    radius, kernel, edge_padding = _kernel_of(method, antialias)
    scale = [1.0 if shape[d] == 0 else shape[d] / image_shape[d] for d in spatial_dims]
    return _scale_and_translate(
        image,
        shape,
        spatial_dims,
        scale,
        [0.0] * len(spatial_dims),
        kernel,
        antialias,
        precision,
        edge_padding,
        radius,
    )


def resize(
    image: Array,
    shape: Sequence[int],
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: Any = lax.Precision.HIGHEST,
) -> Array:
    """`image` resampled to `shape` (every axis whose size changes is resampled).

    Batch and channel axes are simply given their current size in `shape`. There is no
    `align_corners`; `scale_and_translate` can express it.

    Args:
      image: the image, of any rank.
      shape: the output shape, one size per axis of `image`.
      method: a `ResizeMethod` or its name (see `ResizeMethod.from_string`).
      antialias: widen the kernel when downscaling (no effect when upscaling or for NEAREST).
      precision: the `einsum`'s precision (unused by NEAREST).

    Returns:
      The resized image: `image`'s dtype for NEAREST, a floating dtype otherwise.

    Raises:
      ValueError: `shape`'s length is not `image`'s rank, or the method is unknown.
    """
    return _resize(image, lax.canonical_shape(shape), method, antialias, precision)


__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
