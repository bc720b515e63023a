"""`jax.nn.initializers`: functions `init(key, shape, dtype=None)` that make parameter arrays.

Built on `lamina_core.random`, so a key gives JAX's numbers bit for bit. Every initializer
takes `out_sharding` as JAX's does; Lamina has one device, so only `None` is accepted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from lamina_core import numpy as jnp
from lamina_core import random
from lamina_core.ir import dtypes
from lamina_core.numpy import at

Array = Any
Axes = int | Sequence[int]


@runtime_checkable
class Initializer(Protocol):
    """What every initializer is: `init(key, shape, dtype=None, out_sharding=None)`."""

    def __call__(
        self, key: Array, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None
    ) -> Array:
        raise NotImplementedError


def _default_float(dtype: Any) -> Any:
    return dtypes.canonicalize_dtype(np.float64) if dtype is None else dtype


def _single_device(out_sharding: Any, name: str) -> None:
    if out_sharding is not None:
        raise NotImplementedError(f"nn.initializers.{name}: out_sharding is not supported")


def zeros(key: Array, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Array:
    """Zeros; `key` is ignored."""
    _single_device(out_sharding, "zeros")
    return jnp.zeros(shape, _default_float(dtype))


def ones(key: Array, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Array:
    """Ones; `key` is ignored."""
    _single_device(out_sharding, "ones")
    return jnp.ones(shape, _default_float(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling every element with `value`."""

    def init(
        key: Array, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None
    ) -> Array:
        _single_device(out_sharding, "constant")
        return jnp.full(shape, value, dtype=_default_float(dtype))

    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing uniformly from [0, scale)."""

    def init(
        key: Array, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None
    ) -> Array:
        _single_device(out_sharding, "uniform")
        dtype = _default_float(dtype)
        return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)

    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing from a normal distribution of standard deviation `stddev`."""

    def init(
        key: Array, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None
    ) -> Array:
        _single_device(out_sharding, "normal")
        dtype = _default_float(dtype)
        return random.normal(key, shape, dtype) * jnp.array(stddev, dtype)

    return init


def truncated_normal(
    stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0, upper: Any = 2.0
) -> Initializer:
    """An initializer drawing from a normal truncated to [lower, upper], scaled by `stddev`."""

    def init(
        key: Array, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None
    ) -> Array:
        _single_device(out_sharding, "truncated_normal")
        dtype = _default_float(dtype)
        sample = random.truncated_normal(key, lower, upper, shape, dtype)
        return sample * jnp.array(stddev, dtype)

    return init


def _axes_size(shape: Sequence[int], axes: Axes) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(
    shape: Sequence[int], in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = ()
) -> tuple[float, float]:
    """(fan_in, fan_out): the input and output sizes times the receptive field size."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional"
            " weights tensor with default in_axis. Must be at least 2D or specify"
            " in_axis explicitly."
        )
    in_size = _axes_size(shape, in_axis)
    out_size = _axes_size(shape, out_axis)
    batch_size = _axes_size(shape, batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def _real_and_complex(dtype: Any) -> tuple[np.dtype, np.dtype]:
    real = np.array(0, dtype).real.dtype
    return real, np.dtype(np.complex128 if real == np.float64 else np.complex64)


def _complex_uniform(key: Array, shape: Sequence[int], dtype: Any) -> Array:
    key_r, key_theta = random.split(key)
    real_dtype, dtype = _real_and_complex(dtype)
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real_dtype)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key: Array, upper: Any, shape: Sequence[int], dtype: Any) -> Array:
    key_r, key_theta = random.split(key)
    real_dtype, dtype = _real_and_complex(dtype)
    t = (1 - jnp.exp(jnp.array(-(upper**2), dtype))) * random.uniform(
        key_r, shape, real_dtype
    ).astype(dtype)
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


Mode = Literal["fan_in", "fan_out", "fan_avg", "fan_geo_avg"]
Distribution = Literal["truncated_normal", "normal", "uniform"]


def variance_scaling(
    scale: Any,
    mode: Mode,
    distribution: Distribution,
    in_axis: Axes = -2,
    out_axis: Axes = -1,
    batch_axis: Axes = (),
    dtype: Any = None,
) -> Initializer:
    """An initializer whose samples have variance `scale` / (the fan `mode` picks)."""

    def init(
        key: Array, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None
    ) -> Array:
        _single_device(out_sharding, "variance_scaling")
        shape = tuple(int(d) for d in shape)
        dtype = _default_float(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominator, dtype=dtype)
        floating = dtypes.issubdtype(dtype, np.floating)
        if distribution == "truncated_normal":
            if floating:
                # The standard deviation of a unit normal truncated to [-2, 2].
                stddev = jnp.sqrt(variance) / jnp.array(0.87962566103423978, dtype)
                return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
            stddev = jnp.sqrt(variance) / jnp.array(0.95311164380491208, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if distribution == "uniform":
            if floating:
                return random.uniform(key, shape, dtype, -1) * jnp.sqrt(jnp.multiply(3, variance))
            return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    return init


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer of `scale` times a random matrix whose `column_axis` columns (or, if
    fewer, the rows of the other axes flattened) are orthonormal."""

    def init(
        key: Array, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None
    ) -> Array:
        if out_sharding is not None:
            raise NotImplementedError
        dtype = _default_float(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(dim == 0 for dim in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        rest = tuple(int(d) for d in np.delete(np.asarray(shape), column_axis))
        q = jnp.moveaxis(jnp.reshape(q, (*rest, n_cols)), -1, column_axis)
        return jnp.array(scale, dtype) * q

    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer of 3-D to 5-D convolution kernels that are zero except at the spatial
    centre, which holds an `orthogonal` matrix of the last two axes (fan_in <= fan_out)."""

    def init(
        key: Array, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None
    ) -> Array:
        if out_sharding is not None:
            raise NotImplementedError
        dtype = _default_float(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return at(jnp.zeros(shape, dtype=dtype))[(*centre, ...)].set(ortho)

    return init


def _named_scaling(scale: float, mode: Mode, distribution: Distribution, doc: str) -> Any:
    def make(
        in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None
    ) -> Initializer:
        return variance_scaling(
            scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
            batch_axis=batch_axis, dtype=dtype,
        )  # fmt: skip

    make.__doc__ = doc
    return make


glorot_uniform = _named_scaling(1.0, "fan_avg", "uniform", "Glorot (Xavier) uniform.")
glorot_normal = _named_scaling(1.0, "fan_avg", "truncated_normal", "Glorot (Xavier) normal.")
lecun_uniform = _named_scaling(1.0, "fan_in", "uniform", "LeCun uniform.")
lecun_normal = _named_scaling(1.0, "fan_in", "truncated_normal", "LeCun normal.")
he_uniform = _named_scaling(2.0, "fan_in", "uniform", "He (Kaiming) uniform.")
he_normal = _named_scaling(2.0, "fan_in", "truncated_normal", "He (Kaiming) normal.")
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal

__all__ = [
    "Initializer",
    "constant",
    "delta_orthogonal",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones",
    "orthogonal",
    "truncated_normal",
    "uniform",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
]
