"""`qr_multiply` of `jax.scipy.linalg`: the QR factorization of `a` and the product of its Q
with a matrix, from LAPACK's Householder reflectors (`geqrf`) applied by `ormqr`, never
forming Q, staged as JAX 0.10.2 stages it. With `pivoting=True` the factorization is the
column-pivoted `geqp3`, and the permutation is returned too.
"""

from __future__ import annotations

from typing import Any

from lamina_core import numpy as jnp
from lamina_core.lax import linalg as lax_linalg
from lamina_core.numpy import dtype_of, promote_dtypes_inexact, shape_of

Array = Any


def qr_multiply(
    a: Any,
    c: Any,
    mode: str = "right",
    pivoting: bool = False,
    conjugate: bool = False,
    overwrite_a: bool = False,
    overwrite_c: bool = False,
) -> tuple[Array, ...]:
    """(Q @ c, r) for `mode='left'` or (c @ Q, r) for 'right', where a = Q r (economic);
    `conjugate` uses conj(Q). A 1-D `c` is a column ('left') or row ('right') vector. With
    `pivoting`, (result, r, p) for the pivoted a[..., p] = Q r.

    Raises:
        ValueError: for a bad `mode`, or a `c` whose size does not fit Q.
    """
    del overwrite_a, overwrite_c
    a, c = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(c))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = len(shape_of(c)) == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    c_shape = shape_of(c)
    if mode == "left":
        if c_shape[-2] != k:
            raise ValueError(
                "Array shapes are not compatible for Q @ c operation: "
                f"a has shape {tuple(shape_of(a))} so Q has {k} columns, "
                f"but c has {c_shape[-2]} rows (expected {k})."
            )
    elif c_shape[-1] != m:
        raise ValueError(
            "Array shapes are not compatible for c @ Q operation: "
            f"a has shape {tuple(shape_of(a))} so Q has {m} rows, "
            f"but c has {c_shape[-1]} columns (expected {m})."
        )
    batch = jnp.broadcast_shapes(shape_of(a)[:-2], c_shape[:-2])
    a = jnp.broadcast_to(a, batch + tuple(shape_of(a)[-2:]))
    c = jnp.broadcast_to(c, batch + tuple(c_shape[-2:]))
    pivots: tuple[Array, ...] = ()
    if pivoting:
        jpvt = jnp.zeros((*shape_of(a)[:-2], n), dtype=jnp.int32)
        r, p, taus = lax_linalg.geqp3(a, jpvt)
        pivots = (p - 1,)  # LAPACK's pivots are 1-based
    else:
        r, taus = lax_linalg.geqrf(a)
    if m > n and mode == "left":
        c_shape = shape_of(c)
        zeros = jnp.zeros((*c_shape[:-2], m - k, c_shape[-1]), dtype=dtype_of(c))
        c = jnp.concatenate([c, zeros], axis=-2)
    # With `conjugate`, work on c^T: Q's side flips, and ormqr's transpose conjugates.
    if conjugate:
        c = jnp.swapaxes(c, -1, -2)
    left = (mode == "left") != conjugate
    cq = lax_linalg.ormqr(r, taus, c, left=left, transpose=conjugate)
    if conjugate:
        cq = jnp.swapaxes(cq, -1, -2)
    if mode == "right":
        cq = cq[..., :k]
    if onedim:
        cq = jnp.ravel(cq)
    r = jnp.triu(r[..., :k, :])
    return (cq, r, *pivots)
