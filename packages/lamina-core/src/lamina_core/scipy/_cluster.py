"""`jax.scipy.cluster.vq.vq`: the nearest code of a code book for each observation, by
Euclidean distance, as JAX 0.10.2 computes it (the distances to all codes under `vmap`, their
`argmin`, and the minimum gathered under `vmap`)."""

from __future__ import annotations

import operator
from typing import Any

from lamina_core import numpy as jnp
from lamina_core.numpy import check_arraylike, promote_dtypes_inexact, shape_of
from lamina_core.transforms import vmap

Array = Any

__all__ = ["vq"]


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Array, Array]:
    """`(code, dist)`: for each row of `obs` (M, N) the index of the nearest row of `code_book`
    (K, N) and the distance to it; 1-D arguments hold length-1 vectors. `check_finite` is
    unused, as in JAX."""
    del check_finite
    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs_arr, book = promote_dtypes_inexact(obs, code_book)
    ndim = len(shape_of(obs_arr))
    if ndim != len(shape_of(book)):
        raise ValueError("Observation and code_book should have the same rank")
    if ndim == 1:
        obs_arr, book = obs_arr[..., None], book[..., None]
    elif ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = vmap(lambda ob: jnp.linalg.norm(ob[None] - book, axis=-1))(obs_arr)
    code = jnp.argmin(dist, axis=-1)
    return code, vmap(operator.getitem)(dist, code)
