"""Discrete samplers over categories and orderings: `categorical` and `permutation`, with
JAX 0.10.2's algorithms (the Gumbel-max and Gumbel-top-k tricks; shuffling by sorting on
random 32-bit keys, repeated as often as JAX repeats it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import canonicalize_sharding
from lamina_core.lax import canonical_shape, canonicalize_axis
from lamina_core.numpy import promote_dtypes_inexact
from lamina_core.random._keys import check_prng_key, random_bits, split_typed, unstack
from lamina_core.random._samplers import _check_shape, uniform
from lamina_core.random._samplers_more import gumbel, randint
from lamina_core.random._sharded import sampled
from lamina_core.trace import ConcretizationTypeError, typeof
from lamina_core.transforms import Jitted

Array = Any


def _shape_of(x: Any) -> tuple[int, ...]:
    return tuple(typeof(x).shape)  # type: ignore[attr-defined]  # an array


def categorical(
    key: Any,
    logits: Any,
    axis: int = -1,
    shape: Sequence[int] | None = None,
    replace: bool = True,
    mode: str | None = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Indices drawn from the categorical distributions `softmax(logits, axis)`.

    Raises:
        ValueError: `shape` does not broadcast with the batch shape, or more samples without
            replacement than categories.
    """
    typed, _ = check_prng_key("categorical", key)
    logits_arr = jnp.asarray(logits)
    batch_shape = tuple(int(d) for d in np.delete(np.array(_shape_of(logits_arr)), axis))
    if shape is None:
        out_shape = batch_shape
    else:
        out_shape = canonical_shape(shape)
        _check_shape("categorical", out_shape, batch_shape)
    sharding = canonicalize_sharding(out_sharding, "categorical")
    draw = lambda k, lg: _categorical(k, lg, out_shape, batch_shape, axis, replace, mode)  # noqa: E731
    return sampled(sharding, draw, typed, logits_arr)


def _categorical(
    key: Array,
    logits: Array,
    shape: tuple[int, ...],
    batch_shape: tuple[int, ...],
    axis: int,
    replace: bool,
    mode: str | None,
) -> Array:
    logits_shape_full = _shape_of(logits)
    ndim = len(logits_shape_full)
    prefix = shape[: len(shape) - len(batch_shape)]
    dtype = typeof(logits).dtype  # type: ignore[attr-defined]  # an array
    if replace:
        if axis >= 0:
            axis -= ndim
        logits_shape = list(shape[len(shape) - len(batch_shape) :])
        logits_shape.insert(axis % ndim, logits_shape_full[axis])
        noise = gumbel(key, (*prefix, *logits_shape), dtype, mode=mode)
        return jnp.argmax(noise + lax.expand_dims(logits, tuple(range(len(prefix)))), axis=axis)
    logits = logits + gumbel(key, logits_shape_full, dtype, mode=mode)
    k = math.prod(prefix)
    if k > logits_shape_full[axis]:
        raise ValueError(
            f"Number of samples without replacement ({k}) cannot exceed number of "
            f"categories ({logits_shape_full[axis]})."
        )
    _, indices = lax.top_k(jnp.moveaxis(logits, axis, -1), k)
    rank = len(_shape_of(indices))
    return lax.reshape(indices, shape, (rank - 1, *range(rank - 1)))


def choice(
    key: Any,
    a: Any,
    shape: Sequence[int] = (),
    replace: bool = True,
    p: Any = None,
    axis: int = 0,
    mode: str | None = None,
) -> Array:
    """Samples of `a` (an array along `axis`, or `arange(a)` for an int): uniformly or with
    probabilities `p`, with or without replacement, as `jax.random.choice`."""
    typed, _ = check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    arr = jnp.asarray(a)
    arr_shape = _shape_of(arr)
    if not arr_shape:
        n_inputs = _concrete_int(a)
    else:
        axis = canonicalize_axis(axis, len(arr_shape), "choice")
        n_inputs = arr_shape[axis]
    shape = canonical_shape(shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=typeof(arr).dtype)  # type: ignore[attr-defined]  # array
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) "
            "when 'replace=False'"
        )
    if p is None:
        if replace:
            ind = randint(typed, shape, 0, n_inputs)
            result = ind if not arr_shape else jnp.take(arr, ind, axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(typed, n_inputs if not arr_shape else arr, axis)[slices]
    else:
        (p_arr,) = promote_dtypes_inexact(p)
        if _shape_of(p_arr) != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {_shape_of(p_arr)} and a.shape[axis] is {n_inputs}."
            )
        p_dtype = typeof(p_arr).dtype  # type: ignore[attr-defined]  # an array
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(typed, shape, dtype=p_dtype))
            ind = jnp.searchsorted(p_cuml, r).astype(int)
        else:
            # The Gumbel-top-k trick, as JAX's.
            g = gumbel(typed, (n_inputs,), dtype=p_dtype, mode=mode) + jnp.log(p_arr)
            ind = lax.top_k(g, k=n_draws)[1].astype(int)
        result = ind if not arr_shape else jnp.take(arr, ind, axis)
    out_shape = shape if not arr_shape else (*arr_shape[:axis], *shape, *arr_shape[axis + 1 :])
    return result.reshape(out_shape)


def _concrete_int(a: Any) -> int:
    try:
        return int(a)
    except ConcretizationTypeError as err:
        raise ConcretizationTypeError(
            f"{str(err).split(chr(10))[0]}\nThe error occurred in jax.random.choice()"
        ) from None


def permutation(
    key: Any, x: Any, axis: int = 0, independent: bool = False, *, out_sharding: Any = None
) -> Array:
    """A random permutation of `range(x)` (an int), or of `x` along `axis`."""
    typed, _ = check_prng_key("permutation", key)
    ndim = int(np.ndim(x))
    axis = canonicalize_axis(axis, ndim or 1, "permutation")
    sharding = canonicalize_sharding(out_sharding, "permutation")
    if not ndim:
        if not np.issubdtype(np.asarray(x).dtype, np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        r = int(x)
        return sampled(sharding, lambda k: _shuffle(k, jnp.arange(r), axis), typed)
    return sampled(sharding, lambda k, x_: _permute(k, x_, axis, independent), typed, x)


def _permute(key: Array, x: Any, axis: int, independent: bool) -> Array:
    if independent or np.ndim(x) == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, jnp.arange(np.shape(x)[axis]), 0)
    return jnp.take(x, ind, axis, unique_indices=True)


@partial(Jitted, static_argnums=(2,))
def _shuffle(key: Array, x: Array, axis: int) -> Array:
    # Sorting on random 32-bit keys, repeated so that all keys are distinct in some round
    # with high probability (JAX's heuristic: 3 log(n) / log(2**32 - 1) rounds).
    shape = _shape_of(x)
    size = math.prod(shape)
    uint32max = np.iinfo(np.uint32).max
    num_rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(uint32max)))
    for _ in range(num_rounds):
        key, subkey = unstack(split_typed(key))
        sort_keys = random_bits(subkey, 32, shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x
