"""Index helpers, windows and small utilities of `jax.numpy`: `indices`, `tril_indices`,
`triu_indices` (and `_from`), `diag_indices` (and `_from`), `diagflat`, `fill_diagonal`,
`ravel_multi_index`, `unravel_index`, the windows `bartlett`, `blackman`, `hamming`,
`hanning`, the polynomial helpers `polyadd`, `polysub`, `polyder`, `polyint`, and `copy`,
`concat`, `ldexp`, `spacing`, `isdtype`, `can_cast`, `iterable`."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.ir import dtypes as _dtypes
from lamina_core.numpy._index_update import at
from lamina_core.numpy._promote import promote_args_inexact, promote_dtypes, promote_dtypes_inexact
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike, shape_of
from lamina_core.trace import concrete_or_error
from lamina_core.transforms import Jitted


def indices(
    dimensions: Sequence[int], dtype: DTypeLike | None = None, sparse: bool = False
) -> Array | tuple[Array, ...]:
    """The index of each position of a grid of shape `dimensions`, one array per axis."""
    dims = tuple(operator.index(d) for d in dimensions)
    dt = _dtypes.canonicalize_dtype(np.int64 if dtype is None else dtype)
    out = []
    for i, n in enumerate(dims):
        shape = [1] * len(dims)
        shape[i] = n
        idx = _lax.broadcasted_iota(dt, tuple(shape), i)
        out.append(idx if sparse else jnp.broadcast_to(idx, dims))
    return tuple(out) if sparse else jnp.stack(out) if out else jnp.zeros((0,), dt)


def _tri_indices(n: int, k: int, m: int | None, lower: bool) -> tuple[Array, Array]:
    cols = n if m is None else m
    mask = np.tri(n, cols, k, dtype=bool) if lower else ~np.tri(n, cols, k - 1, dtype=bool)
    i, j = np.nonzero(mask)
    dt = _dtypes.canonicalize_dtype(np.int64)
    return jnp.asarray(i.astype(dt)), jnp.asarray(j.astype(dt))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """The row and column indices of the lower triangle (on and below diagonal `k`)."""
    return _tri_indices(operator.index(n), operator.index(k), m, lower=True)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """The row and column indices of the upper triangle (on and above diagonal `k`)."""
    return _tri_indices(operator.index(n), operator.index(k), m, lower=False)


def _matrix_shape(name: str, arr: ArrayLike) -> tuple[int, int]:
    shape = shape_of(jnp.asarray(arr))
    if len(shape) != 2:
        raise ValueError(f"{name} requires a 2-dimensional array; got {len(shape)} dimensions")
    return shape[0], shape[1]


def tril_indices_from(arr: ArrayLike, k: int = 0) -> tuple[Array, Array]:
    """`tril_indices` for the shape of the 2-D `arr`."""
    n, m = _matrix_shape("tril_indices_from", arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr: ArrayLike, k: int = 0) -> tuple[Array, Array]:
    """`triu_indices` for the shape of the 2-D `arr`."""
    n, m = _matrix_shape("triu_indices_from", arr)
    return triu_indices(n, k, m)


def diag_indices(n: int, ndim: int = 2) -> tuple[Array, ...]:
    """The indices of the main diagonal of an `n`-sided `ndim`-dimensional array."""
    n, ndim = operator.index(n), operator.index(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (_lax.iota(_dtypes.canonicalize_dtype(np.int64), n),) * ndim


def diag_indices_from(arr: ArrayLike) -> tuple[Array, ...]:
    """`diag_indices` for `arr`, whose sides must all be equal."""
    shape = shape_of(jnp.asarray(arr))
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def diagflat(v: ArrayLike, k: int = 0) -> Array:
    """A square matrix with the flattened `v` on its `k`-th diagonal."""
    return jnp.diag(jnp.ravel(jnp.asarray(v)), k)


def fill_diagonal(
    a: ArrayLike, val: ArrayLike, wrap: bool = False, *, inplace: bool = True
) -> Array:
    """`a` with its main diagonal set to `val` (JAX's functional form: `inplace=False`); an
    array `val` is flattened, then repeated or cut to the diagonal's length.

    Raises:
        NotImplementedError: `inplace=True`, or `wrap=True`, which JAX 0.10.2 does not
            implement either (NumPy's restart of the diagonal below a tall matrix's square).
    """
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    a, val = ensure_arraylike("fill_diagonal", a, val)
    shape = shape_of(a)
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(shape)
    idx = diag_indices(n, len(shape))
    return at(a)[idx].set(val if not shape_of(val) else _tile_to_size(jnp.ravel(val), n))


def _tile_to_size(arr: Array, size: int) -> Array:
    """The 1-D `arr` repeated until it has at least `size` elements, then cut to `size`."""
    length = shape_of(arr)[0]
    if length < size:
        arr = jnp.tile(arr, math.ceil(size / length))
        length = shape_of(arr)[0]
    return arr[:size] if length > size else arr


def ravel_multi_index(
    multi_index: Sequence[ArrayLike], dims: Sequence[int], mode: str = "raise",
    order: str = "C", *, dtype: DTypeLike | None = None,
) -> Array:  # fmt: skip
    """Flat indices of the coordinates `multi_index` in an array of shape `dims` (`mode`
    `clip`, `wrap` or `ignore`; `raise` checks concrete indices), in `dtype` (default: the
    indices' integer type).

    Raises:
        ValueError: `dtype` is not an integer type or too small for `dims`, an index is out
            of range under `raise`, or `mode`/`order` is unknown.
        TypeError: an index is not an integer array.
    """
    assert len(multi_index) == len(dims), (
        f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}"
    )
    dims = tuple(
        operator.index(concrete_or_error(d, "in `dims` argument of ravel_multi_index()."))
        for d in dims
    )
    coords = list(ensure_arraylike("ravel_multi_index", *multi_index))
    if dtype is None:
        out_dtype = _dtypes.result_type(int, *coords)
    else:
        out_dtype = _dtypes.canonicalize_dtype(dtype)
    if not _dtypes.issubdtype(out_dtype, np.integer):
        raise ValueError(f"dtype={out_dtype!r} is not an integer type.")
    if math.prod(dims) - 1 > _dtypes.iinfo(out_dtype).max:
        raise ValueError(
            f"jnp.ravel_multi_index: dtype={out_dtype!r} not large enough to hold flattened"
            f" index for dims={dims}. Use the dtype argument to pass a suitable"
            " dtype (e.g. dtype=np.min_scalar_type(prod(dims)))."
        )
    for c in coords:
        if mode == "raise":
            concrete_or_error(
                c,
                "The error occurred because ravel_multi_index was jit-compiled"
                " with mode='raise'. Use mode='wrap' or mode='clip' instead.",
            )
        if not _dtypes.issubdtype(jnp.asarray(c).dtype, np.integer):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        for c, d in zip(coords, dims, strict=True):
            if np.any((np.asarray(c) < 0) | (np.asarray(c) >= d)):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        coords = [jnp.clip(c, 0, d - 1) for c, d in zip(coords, dims, strict=True)]
    elif mode == "wrap":
        coords = [jnp.mod(c, d) for c, d in zip(coords, dims, strict=True)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    if order == "F":
        strides = np.cumprod((1, *dims[:-1]))
    elif order == "C":
        strides = np.cumprod((1, *dims[1:][::-1]))[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    total = jnp.array(0, dtype=out_dtype)
    for c, st in zip(coords, strides, strict=True):
        total = total + jnp.asarray(c).astype(out_dtype) * int(st)
    return total


def unravel_index(indices: ArrayLike, shape: Sequence[int] | int) -> tuple[Array, ...]:
    """The coordinates, in an array of `shape`, of the flat `indices` (clipped into range,
    negative ones counted from the end, as JAX's)."""
    (idx,) = ensure_arraylike("unravel_index", indices)
    dims: list[Any] = [shape] if isinstance(shape, int) or np.ndim(shape) == 0 else list(shape)
    if any(np.ndim(d) != 0 for d in dims):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    # JAX's formulation (one `divmod` per axis, the overflow clipped after), which its
    # staged programs show.
    out: list[Any] = [0] * len(dims)
    for i in reversed(range(len(dims))):
        idx, out[i] = jnp.divmod(idx, dims[i])
    oob_pos = idx > 0
    # unsigned indices cannot fall below the range
    unsigned = _dtypes.issubdtype(idx.dtype, np.unsignedinteger)
    oob_neg = jnp.asarray(False) if unsigned else idx < -1
    return tuple(
        jnp.where(oob_pos, d - 1, jnp.where(oob_neg, 0, i)) for d, i in zip(dims, out, strict=True)
    )


def _window(m: int) -> Any:
    m = operator.index(m)
    dt = _dtypes.canonicalize_dtype(np.float64)
    if m <= 1:
        return m, dt, None
    return m, dt, jnp.arange(m, dtype=dt)


def bartlett(M: int) -> Array:
    """The Bartlett (triangular) window of `M` points."""
    m, dt, n = _window(M)
    if n is None:
        return jnp.ones(max(m, 0), dt)
    return 1 - jnp.abs(2 * n + 1 - m) / (m - 1)


def _cosine_window(M: int, coeffs: Sequence[float]) -> Array:
    m, dt, n = _window(M)
    if n is None:
        return jnp.ones(max(m, 0), dt)
    out = jnp.zeros((m,), dt)
    for k, c in enumerate(coeffs):
        out = out + c * jnp.cos(2 * np.pi * k * n / (m - 1))
    return out


def blackman(M: int) -> Array:
    """The Blackman window of `M` points."""
    return _cosine_window(M, (0.42, -0.5, 0.08))


def hamming(M: int) -> Array:
    """The Hamming window of `M` points."""
    return _cosine_window(M, (0.54, -0.46))


def hanning(M: int) -> Array:
    """The Hann window of `M` points."""
    return _cosine_window(M, (0.5, -0.5))


@Jitted
def polyadd(a1: ArrayLike, a2: ArrayLike) -> Array:
    """The sum of two polynomials (coefficients highest power first), jitted as JAX's: the
    shorter one added into the tail of the longer."""
    a1, a2 = promote_dtypes(*ensure_arraylike("polyadd", a1, a2))
    n1, n2 = shape_of(a1)[0], shape_of(a2)[0]
    if n2 <= n1:
        return at(a1)[-n2:].add(a2)
    return at(a2)[-n1:].add(a1)


@Jitted
def polysub(a1: ArrayLike, a2: ArrayLike) -> Array:
    """The difference of two polynomials (coefficients highest power first)."""
    a1, a2 = promote_dtypes(*ensure_arraylike("polysub", a1, a2))
    return polyadd(a1, jnp.negative(a2))


def _falling_factorials(start: int, stop: int, m: int, dtype: np.dtype) -> Array:
    """Per column j of `start..stop-1`, the products over i < m of `j - i` (a grid of rows
    `arange(start, stop) - i`, as JAX forms it); not yet reduced."""
    row = jnp.expand_dims(jnp.arange(start, stop, dtype=dtype), 0)
    return jnp.subtract(row, jnp.expand_dims(jnp.arange(m, dtype=dtype), 1))


@partial(Jitted, static_argnames=("m",))
def polyder(p: ArrayLike, m: int = 1) -> Array:
    """The `m`-th derivative of the polynomial `p`."""
    (p,) = ensure_arraylike("polyder", p)
    m = operator.index(m)
    (p,) = promote_dtypes_inexact(p)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    coeff = jnp.prod(_falling_factorials(m, shape_of(p)[0], m, p.dtype), 0)
    return jnp.multiply(p[:-m], coeff[::-1])


@partial(Jitted, static_argnames=("m",))
def polyint(p: ArrayLike, m: int = 1, k: ArrayLike | None = None) -> Array:
    """The `m`-th antiderivative of `p`, with integration constants `k` (zeros by default)."""
    m = operator.index(m)
    p, k = ensure_arraylike("polyint", p, 0 if k is None else k)
    p, k = promote_dtypes_inexact(p, k)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = jnp.atleast_1d(k)
    if shape_of(k)[0] == 1:
        k = jnp.full((m,), k[0])
    if shape_of(k) != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    grid = _falling_factorials(0, shape_of(p)[0] + m, m, p.dtype)
    coeff = jnp.prod(jnp.maximum(1, grid), 0)[::-1]
    return jnp.true_divide(jnp.concatenate((p, k)), coeff)


def copy(a: ArrayLike, order: str | None = None) -> Array:
    """A copy of `a`."""
    return jnp.array(a, copy=True, order=order)


def concat(arrays: Sequence[ArrayLike], /, *, axis: int | None = 0) -> Array:
    """The array API's name for `concatenate`."""
    return jnp.concatenate(arrays, axis=axis)


@Jitted
def ldexp(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """`x1 * 2 ** x2` (`x2` integer), jitted as JAX's: the exponent is added to `x1`'s own
    (from `frexp`) so that small `x1` and large `x2` do not overflow."""
    x1, x2 = ensure_arraylike("ldexp", x1, x2)
    if _dtypes.issubdtype(x1.dtype, np.complexfloating) or _dtypes.issubdtype(x2.dtype, np.inexact):
        raise ValueError(f"ldexp not supported for input types {(x1.dtype, x2.dtype)}")
    (x1,) = promote_args_inexact("ldexp", x1)
    x2 = _lax.convert_element_type(x2, x1.dtype)
    m, e = jnp.frexp(x1)
    e = (e.astype(x2.dtype) + x2).astype(x1.dtype)
    # The exponent may overflow by one and the result still be finite.
    m = jnp.where(e > 0, m * 2, m)
    e = jnp.where(e > 0, e - 1, e)
    x = m * (2 ** e.astype(m.dtype))
    return jnp.where(jnp.isinf(x1) | (x1 == 0), x1, x)


def isdtype(dtype: DTypeLike, kind: Any) -> bool:
    """The array API's dtype-kind test (`'bool'`, `'integral'`, `'real floating'`, ...)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    dt = np.dtype(dtype)
    groups = {
        "bool": lambda: dt == np.bool_,
        "signed integer": lambda: _dtypes.issubdtype(dt, np.signedinteger),
        "unsigned integer": lambda: _dtypes.issubdtype(dt, np.unsignedinteger),
        "integral": lambda: _dtypes.issubdtype(dt, np.integer),
        "real floating": lambda: _dtypes.issubdtype(dt, np.floating),
        "complex floating": lambda: _dtypes.issubdtype(dt, np.complexfloating),
        "numeric": lambda: dt != np.bool_ and _dtypes.issubdtype(dt, np.number),
    }
    for k in kinds:
        if isinstance(k, str):
            if k not in groups:
                raise ValueError(f"Unrecognized {k=!r}")
            if groups[k]():
                return True
        elif np.dtype(k) == dt:
            return True
    return False


def can_cast(from_: Any, to: DTypeLike, casting: str = "safe") -> bool:
    """NumPy's `can_cast` on dtypes."""
    source = from_ if isinstance(from_, (type, np.dtype, str)) else from_.dtype
    return bool(np.can_cast(np.dtype(source), np.dtype(to), casting=casting))  # type: ignore[arg-type]


def iterable(y: Any) -> bool:
    """Whether `y` can be iterated over."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


__all__ = [
    "bartlett",
    "blackman",
    "can_cast",
    "concat",
    "copy",
    "diag_indices",
    "diag_indices_from",
    "diagflat",
    "fill_diagonal",
    "hamming",
    "hanning",
    "indices",
    "isdtype",
    "iterable",
    "ldexp",
    "polyadd",
    "polyder",
    "polyint",
    "polysub",
    "ravel_multi_index",
    "tril_indices",
    "tril_indices_from",
    "triu_indices",
    "triu_indices_from",
    "unravel_index",
]
