"""Neural network layers as pairs of functions, as `jax.example_libraries.stax`.

A layer is `(init_fun, apply_fun)`: `init_fun(rng, input_shape)` returns the output shape and
the layer's parameters, `apply_fun(params, inputs, **kwargs)` the outputs (`rng=` for layers
that draw random numbers). `serial` and `parallel` combine layers into layers. Shapes,
initializers and arithmetic are JAX's, so a network built here computes what JAX's does.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from lamina_core import lax, random
from lamina_core import numpy as jnp
from lamina_core.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from lamina_core.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = [
    "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout",
    "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv",
    "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu",
    "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh", "elementwise", "elu", "gelu", "glorot",
    "glorot_normal", "leaky_relu", "log_softmax", "logsoftmax", "normal", "ones", "parallel",
    "randn", "relu", "selu", "serial", "shape_dependent", "sigmoid", "softmax", "softplus",
    "standardize", "zeros",
]  # fmt: skip

InitFun: TypeAlias = Callable[..., tuple[Any, Any]]
ApplyFun: TypeAlias = Callable[..., Any]
Layer: TypeAlias = tuple[InitFun, ApplyFun]

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def Dense(out_dim: int, W_init: Any = glorot_normal(), b_init: Any = normal()) -> Layer:  # noqa: B008
    """A fully connected layer: `inputs @ W + b`, `W` of shape `(in, out_dim)`."""

    def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
        k1, k2 = random.split(rng)
        params = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return (*input_shape[:-1], out_dim), params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(
    dimension_numbers: Sequence[str],
    out_chan: int,
    filter_shape: Sequence[int],
    input_shape: Sequence[int],
) -> list[int]:
    """The kernel's shape in its layout (`rhs_spec`): `O` out channels, `I` the input's
    channels, the spatial axes from `filter_shape` in order."""
    lhs_spec, rhs_spec, _ = dimension_numbers
    spatial = iter(filter_shape)
    return [
        out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I" else next(spatial)
        for c in rhs_spec
    ]


def _conv_layer(
    output_shape: Callable[..., Any],
    conv: Callable[..., Any],
    dimension_numbers: Sequence[str],
    out_chan: int,
    filter_shape: Sequence[int],
    strides: Sequence[int] | None,
    padding: Any,
    W_init: Any,
    b_init: Any,
) -> Layer:
    """A convolution-like layer: `conv(inputs, W, strides, padding) + b`, the bias one value
    per output channel."""
    _, rhs_spec, out_spec = dimension_numbers
    strides = tuple(strides or (1,) * len(filter_shape))
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
        kernel_shape = _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape)
        out_shape = output_shape(input_shape, kernel_shape, strides, padding, dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return out_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return conv(inputs, W, strides, padding, dimension_numbers) + b

    return init_fun, apply_fun


def GeneralConv(
    dimension_numbers: Sequence[str],
    out_chan: int,
    filter_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    W_init: Any = None,
    b_init: Any = normal(1e-6),  # noqa: B008
) -> Layer:
    """A convolution in the layout `dimension_numbers` (`(lhs, rhs, out)` specs)."""
    one = (1,) * len(filter_shape)

    def conv(x: Any, w: Any, strides: Any, padding: Any, dnums: Any) -> Any:
        return lax.conv_general_dilated(x, w, strides, padding, one, one, dimension_numbers=dnums)

    return _conv_layer(
        lax.conv_general_shape_tuple,
        conv,
        dimension_numbers,
        out_chan,
        filter_shape,
        strides,
        padding,
        W_init,
        b_init,
    )


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(
    dimension_numbers: Sequence[str],
    out_chan: int,
    filter_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    W_init: Any = None,
    b_init: Any = normal(1e-6),  # noqa: B008
) -> Layer:
    """A transposed convolution in the layout `dimension_numbers`."""

    def conv(x: Any, w: Any, strides: Any, padding: Any, dnums: Any) -> Any:
        return lax.conv_transpose(x, w, strides, padding, dimension_numbers=dnums)

    return _conv_layer(
        lax.conv_transpose_shape_tuple,
        conv,
        dimension_numbers,
        out_chan,
        filter_shape,
        strides,
        padding,
        W_init,
        b_init,
    )


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(
    axis: int | Sequence[int] = (0, 1, 2),
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
    beta_init: Any = zeros,
    gamma_init: Any = ones,
) -> Layer:
    """Normalize over `axis` (batch statistics), then scale by `gamma` and shift by `beta`
    (parameters of the other axes' shape, `()` when `scale`/`center` is off)."""
    axes = (axis,) if jnp.isscalar(axis) else tuple(axis)  # type: ignore[arg-type]  # a sequence

    def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axes)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params: Any, x: Any, **kwargs: Any) -> Any:
        beta, gamma = params
        expand = tuple(None if i in axes else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axes, epsilon=epsilon)
        if center and scale:
            return gamma[expand] * z + beta[expand]
        if center:
            return z + beta[expand]
        if scale:
            return gamma[expand] * z
        return z

    return init_fun, apply_fun


def elementwise(fun: Callable[..., Any], **fun_kwargs: Any) -> Layer:
    """A layer without parameters applying `fun(inputs, **fun_kwargs)`."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _non_spatial_axes(spec: str | None, ndim: int) -> tuple[int, int]:
    """The batch and channel axes: first and last, or where `spec` puts `N` and `C`."""
    return (0, ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))


def _pooling_layer(
    reducer: Callable[..., Any], init_val: Any, rescale: bool = False
) -> Callable[..., Layer]:
    def PoolingLayer(
        window_shape: tuple[int, ...],
        strides: tuple[int, ...] | None = None,
        padding: Any = "VALID",
        spec: str | None = None,
    ) -> Layer:
        """A pooling layer over the spatial axes (all but `N` and `C` of `spec`, by default
        the first and last)."""
        spatial_window, spatial_strides = (
            tuple(window_shape),
            tuple(strides or (1,) * len(window_shape)),
        )
        window, steps = spatial_window, spatial_strides
        for i in sorted(_non_spatial_axes(spec, len(window_shape) + 2)):
            window, steps = (*window[:i], 1, *window[i:]), (*steps[:i], 1, *steps[i:])

        def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
            pads = lax.padtype_to_pads(input_shape, window, steps, padding)
            ones_ = (1,) * len(window)
            return lax.reduce_window_shape_tuple(input_shape, window, steps, pads, ones_, ones_), ()

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            out = lax.reduce_window(inputs, init_val, reducer, window, steps, padding)
            if not rescale:
                return out
            # Average: divide by how many elements each window covered (fewer at padding).
            non_spatial = _non_spatial_axes(spec, inputs.ndim)
            shape = tuple(n for i, n in enumerate(inputs.shape) if i not in non_spatial)
            counted = jnp.ones(shape, dtype=inputs.dtype)
            sizes = lax.reduce_window(
                counted, 0.0, lax.add, spatial_window, spatial_strides, padding
            )
            for i in sorted(non_spatial):
                sizes = jnp.expand_dims(sizes, i)
            return out / sizes

        return init_fun, apply_fun

    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, rescale=True)


def _flatten() -> Layer:
    def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()
"""Flattens all axes but the leading one."""

Identity = elementwise(lambda x: x)
"""Returns its inputs."""


def FanOut(num: int) -> Layer:
    """Repeats its input `num` times (a list), to feed `parallel` layers."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return [input_shape] * num, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum() -> Layer:
    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return input_shape[0], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return sum(inputs)

    return init_fun, apply_fun


FanInSum = _fan_in_sum()
"""Sums its inputs (a sequence)."""


def FanInConcat(axis: int = -1) -> Layer:
    """Concatenates its inputs (a sequence) along `axis`."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        first = input_shape[0]
        ax = axis % len(first)
        size = sum(shape[ax] for shape in input_shape)
        return (*first[:ax], size, *first[ax + 1 :]), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Keeps each input with probability `rate` (scaled by `1 / rate`) in `mode="train"`;
    the identity otherwise. `apply_fun` needs `rng=` either way."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That "
                "is, instead of `apply_fun(params, inputs)`, call it like `apply_fun(params, "
                "inputs, rng)` where `rng` is a PRNG key (e.g. from `jax.random.key`)."
            )
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun


def _split_or_none(rng: Any, n: int) -> Sequence[Any]:
    return random.split(rng, n) if rng is not None else (None,) * n


def serial(*layers: Layer) -> Layer:
    """The layers one after another: each `init_fun` gets its own key split off in turn,
    each `apply_fun` one of `n` keys split from `rng=` (if given)."""
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, layer_params = init(layer_rng, input_shape)
            params.append(layer_params)
        return input_shape, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rngs = _split_or_none(kwargs.pop("rng", None), len(layers))
        for fun, layer_params, rng in zip(apply_funs, params, rngs, strict=False):
            inputs = fun(layer_params, inputs, rng=rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """The layers side by side on a sequence of inputs (one each), giving a list of outputs;
    used with `FanOut` and `FanInSum`/`FanInConcat`."""
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        rngs = random.split(rng, len(layers))
        results = [init(r, s) for init, r, s in zip(init_funs, rngs, input_shape, strict=False)]
        shapes, params = zip(*results, strict=True) if results else ((), ())
        return shapes, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rngs = _split_or_none(kwargs.pop("rng", None), len(layers))
        return [
            f(p, x, rng=r, **kwargs)
            for f, p, x, r in zip(apply_funs, params, inputs, rngs, strict=False)
        ]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Any], Layer]) -> Layer:
    """The layer `make_layer(input_shape)` makes, once the input shape is known."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
