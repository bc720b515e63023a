"""More shape functions and type predicates of `jax.numpy`: `ndim`, `shape`, `size`,
`isscalar`, `iscomplexobj`, `isrealobj`, `iscomplex`, `isreal`, `rot90`, `permute_dims`,
`matrix_transpose`, `rollaxis`, `unstack`, `append`, `column_stack`, `hsplit`, `vsplit`,
`dsplit`, `kron`, `cross`, `vander`, `select`, `sinc`, `modf`."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.ir import dtypes as _dtypes
from lamina_core.numpy._promote import promote_dtypes, promote_dtypes_inexact
from lamina_core.numpy._reductions import canonicalize_axis, ensure_arraylike
from lamina_core.numpy._ufuncs_composite import _where
from lamina_core.numpy._util import Array, ArrayLike, check_arraylike_or_traced_hi, shape_of
from lamina_core.trace import typeof
from lamina_core.transforms import Jitted


def ndim(a: ArrayLike) -> int:
    """The number of dimensions of `a` (an array, scalar or nested sequence)."""
    return len(shape(a))


def shape(a: ArrayLike) -> tuple[int, ...]:
    """The shape of `a`."""
    if isinstance(a, (list, tuple)):
        return tuple(np.shape(np.asarray(a, dtype=object)))  # nested sequences, as NumPy's
    try:
        return tuple(typeof(a).shape)  # type: ignore[attr-defined]  # arrays
    except TypeError:
        return tuple(np.shape(a))


def size(a: ArrayLike, axis: int | None = None) -> int:
    """The number of elements of `a` (along `axis`)."""
    dims = shape(a)
    if axis is None:
        return int(np.prod(dims, dtype=np.int64))
    return dims[canonicalize_axis(axis, len(dims))]


def isscalar(element: Any) -> bool:
    """True for 0-d arrays and for what NumPy calls scalars (numbers, strings, ...)."""
    if isinstance(element, np.ndarray) or not np.isscalar(element):
        try:
            return len(tuple(typeof(element).shape)) == 0  # type: ignore[attr-defined]
        except TypeError:
            return False
    return True


def _dtype(x: Any) -> np.dtype:
    return np.dtype(typeof(x).dtype)  # type: ignore[attr-defined]  # arrays


def iscomplexobj(x: Any) -> bool:
    """Whether `x`'s dtype is complex (whatever its values)."""
    try:
        return bool(_dtypes.issubdtype(_dtype(x), np.complexfloating))
    except TypeError:
        return bool(np.iscomplexobj(x))


def isrealobj(x: Any) -> bool:
    """Whether `x`'s dtype is not complex."""
    return not iscomplexobj(x)


@Jitted
def iscomplex(x: ArrayLike) -> Array:
    """Elementwise: a nonzero imaginary part (jitted as JAX's)."""
    imag = jnp.imag(x)
    return _lax.ne(imag, np.array(0, imag.dtype))


@Jitted
def isreal(x: ArrayLike) -> Array:
    """Elementwise: a zero imaginary part (jitted as JAX's)."""
    imag = jnp.imag(x)
    return _lax.eq(imag, np.array(0, imag.dtype))


@partial(Jitted, static_argnames=("k", "axes"))
def rot90(m: ArrayLike, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Array:
    """`m` rotated by 90 degrees `k` times in the plane of `axes` (first towards second)."""
    (m,) = ensure_arraylike("rot90", m)
    nd = len(shape_of(m))
    if nd < 2:
        raise ValueError(
            "rot90 requires its first argument to have ndim at least two, but got first "
            f"argument of shape {shape_of(m)}, which has ndim {nd}"
        )
    if len(axes) != 2:
        raise ValueError(f"rot90 requires that axes has length 2, got {axes}")
    ax1, ax2 = canonicalize_axis(axes[0], nd), canonicalize_axis(axes[1], nd)
    if ax1 == ax2:
        raise ValueError(f"rot90 requires that axes are different, got {axes}")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return jnp.flip(jnp.flip(m, ax1), ax2)
    perm = list(range(nd))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return jnp.transpose(jnp.flip(m, ax2), perm)
    return jnp.flip(jnp.transpose(m, perm), ax2)


def permute_dims(a: ArrayLike, /, axes: tuple[int, ...]) -> Array:
    """The array API's name for `transpose(a, axes)`."""
    return jnp.transpose(a, axes)


def matrix_transpose(x: ArrayLike, /) -> Array:
    """The last two axes of `x` swapped."""
    (x,) = ensure_arraylike("matrix_transpose", x)
    nd = len(shape_of(x))
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got {nd=}")
    return jnp.swapaxes(x, -1, -2)


@partial(Jitted, static_argnames=("axis", "start"))
def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Array:
    """NumPy's older `moveaxis`: `axis` moved to stand before `start` (jitted as JAX's)."""
    (a,) = ensure_arraylike("rollaxis", a)
    nd = len(shape_of(a))
    axis = canonicalize_axis(axis, nd)
    if not -nd <= start <= nd:
        raise ValueError(f"{start=} must satisfy {-nd}<=start<={nd}")
    start = start + nd if start < 0 else start
    if start > axis:
        start -= 1
    return jnp.moveaxis(a, axis, start)


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of `x` along `axis`, as a tuple: one `unstack` equation, as JAX stages it."""
    (x,) = ensure_arraylike("unstack", x)
    # Canonicalized here so a bad axis (or a scalar) fails with JAX's text, which lax's
    # message extends with the op's name.
    return _lax.unstack(x, canonicalize_axis(axis, len(shape_of(x))))


@partial(Jitted, static_argnames=("axis",))
def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Array:
    """`values` appended to `arr` along `axis` (both flattened when `axis` is None), jitted
    as JAX's."""
    if axis is None:
        return jnp.concatenate([jnp.ravel(arr), jnp.ravel(values)], 0)
    return jnp.concatenate([arr, values], axis=axis)


def column_stack(tup: Sequence[ArrayLike]) -> Array:
    """1-D arrays as columns (2-D arrays as they are), side by side."""
    cols = [jnp.asarray(x) for x in tup]
    cols = [jnp.reshape(c, (-1, 1)) if len(shape_of(c)) < 2 else c for c in cols]
    return jnp.concatenate(cols, axis=1)


def _split_on(name: str, axis: int, least: int) -> Any:
    def split(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
        (a,) = ensure_arraylike(name, ary)
        nd = len(shape_of(a))
        if nd < least:
            raise ValueError(f"{name} only works on arrays of {least} or more dimensions")
        where = 0 if name == "hsplit" and nd == 1 else axis
        return jnp.split(a, indices_or_sections, axis=where)

    split.__name__ = name
    split.__doc__ = f"`split` along axis {axis} ({name})."
    return split


hsplit = _split_on("hsplit", 1, 1)
vsplit = _split_on("vsplit", 0, 2)
dsplit = _split_on("dsplit", 2, 3)


@Jitted
def kron(a: ArrayLike, b: ArrayLike) -> Array:
    """The Kronecker product: blocks of `b` scaled by each element of `a`."""
    check_arraylike_or_traced_hi("kron", a, b)
    a, b = promote_dtypes(a, b)
    na, nb = len(shape_of(a)), len(shape_of(b))
    if na < nb:
        a = jnp.expand_dims(a, tuple(range(nb - na)))
    elif nb < na:
        b = jnp.expand_dims(b, tuple(range(na - nb)))
    nd = len(shape_of(a))
    a_exp = jnp.expand_dims(a, tuple(range(1, 2 * nd, 2)))
    b_exp = jnp.expand_dims(b, tuple(range(0, 2 * nd, 2)))
    out_shape = tuple(x * y for x, y in zip(shape_of(a), shape_of(b), strict=True))
    return jnp.reshape(_lax.mul(a_exp, b_exp), out_shape)


@partial(Jitted, static_argnames=("axisa", "axisb", "axisc", "axis"))
def cross(
    a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
    axis: int | None = None,
) -> Array:  # fmt: skip
    """The cross product of 2- or 3-vectors along the given axes, jitted as JAX's."""
    check_arraylike_or_traced_hi("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = jnp.moveaxis(a, axisa, -1)
    b = jnp.moveaxis(b, axisb, -1)
    if shape_of(a)[-1] not in (2, 3) or shape_of(b)[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if shape_of(a)[-1] == 2 and shape_of(b)[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    a2 = a[..., 2] if shape_of(a)[-1] == 3 else jnp.zeros_like(a0)
    b0, b1 = b[..., 0], b[..., 1]
    b2 = b[..., 2] if shape_of(b)[-1] == 3 else jnp.zeros_like(b0)
    c = jnp.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])
    return jnp.moveaxis(c, 0, axisc)


@partial(Jitted, static_argnames=("N", "increasing"))
def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Array:
    """The Vandermonde matrix of the 1-D `x`: columns are powers of `x` (jitted as JAX's)."""
    (x,) = ensure_arraylike("vander", x)
    if len(shape_of(x)) != 1:
        raise ValueError("x must be a one-dimensional array")
    n = shape_of(x)[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError("N must be nonnegative")
    powers = _lax.iota(_dtype(x), n)
    if not increasing:
        powers = _lax.sub(_lax.full((), n - 1, _dtype(x)), powers)
    return jnp.power(jnp.expand_dims(x, -1), jnp.expand_dims(powers, 0))


def select(
    condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike], default: ArrayLike = 0
) -> Array:
    """Elementwise, the choice of the first true condition (`default` where none is)."""
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})"
        )
    if not condlist:
        raise ValueError("condlist must be non-empty")
    check_arraylike_or_traced_hi("select", *condlist, *choicelist, default)
    conds = [jnp.asarray(c) for c in condlist]
    choices = promote_dtypes(jnp.asarray(default), *(jnp.asarray(c) for c in choicelist))
    # The default goes first under an all-False condition: argmax over the stacked conditions
    # is then the index of the first true one, or 0 (the default) where none is.
    stacked = jnp.stack(jnp.broadcast_arrays(False, *conds))
    index = jnp.argmax(stacked.astype(bool), axis=0)
    return _lax.select_n(*jnp.broadcast_arrays(index, *choices))


@Jitted
def sinc(x: ArrayLike, /) -> Array:
    """`sin(pi x) / (pi x)`, one at zero (with the Maclaurin series' derivatives there)."""
    (x,) = promote_dtypes_inexact(*ensure_arraylike("sinc", x))
    dtype = _dtypes.dtype(typeof(x))
    zero = _lax.eq(x, np.zeros((), dtype))
    pi_x = _lax.mul(np.asarray(np.pi, dtype), x)
    safe = _where(zero, np.ones((), dtype), pi_x)
    return _where(zero, _sinc_maclaurin(0, pi_x), _lax.div(_lax.sin(safe), safe))


@partial(custom_jvp, nondiff_argnums=(0,))
def _sinc_maclaurin(k: int, x: Array) -> Array:
    # The k-th derivative of sin(x)/x at 0 times x**0: its jvp asks for the next one, so
    # every order of derivative at zero is the series' term, not a 0/0.
    if k % 2:
        return x * 0
    return x * 0 + (-1) ** (k // 2) / (k + 1)


@_sinc_maclaurin.defjvp
def _sinc_maclaurin_jvp(
    k: int, primals: tuple[Array, ...], tangents: tuple[Array, ...]
) -> tuple[Array, Array]:
    (x,), (t,) = primals, tangents
    return _sinc_maclaurin(k, x), _sinc_maclaurin(k + 1, x) * t


@Jitted
def modf(x: ArrayLike, /, out: None = None) -> tuple[Array, Array]:
    """The fractional and integral parts of `x`, both with `x`'s sign, jitted as JAX's."""
    (x,) = promote_dtypes_inexact(*ensure_arraylike("modf", x))
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    whole = _where(_lax.ge(x, np.array(0, x.dtype)), jnp.floor(x), jnp.ceil(x))
    return x - whole, whole


__all__ = [
    "append",
    "column_stack",
    "cross",
    "dsplit",
    "hsplit",
    "iscomplex",
    "iscomplexobj",
    "isreal",
    "isrealobj",
    "isscalar",
    "kron",
    "matrix_transpose",
    "modf",
    "ndim",
    "permute_dims",
    "rollaxis",
    "rot90",
    "select",
    "shape",
    "sinc",
    "size",
    "unstack",
    "vander",
    "vsplit",
]
