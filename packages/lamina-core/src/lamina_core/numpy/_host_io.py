"""`jax.numpy`'s names that are NumPy's own or thin wrappers of it: constants and abstract
scalar classes, print options, `.npy` files, arrays from buffers, strings and DLPack, and
`einsum_path`. As in JAX, reading a file or an iterator is left to NumPy (`fromfile` and
`fromiter` raise, naming the pure alternative)."""

from __future__ import annotations

import os
from typing import IO, Any

import numpy as np
import opt_einsum  # type: ignore[import-untyped]  # ships no type information

from lamina_core.ir import dtypes as _dtypes
from lamina_core.numpy._creation import asarray
from lamina_core.numpy._linalg import _Unoptimized
from lamina_core.numpy._util import Array, DTypeLike

newaxis = None
euler_gamma = float(np.euler_gamma)
ComplexWarning = np.exceptions.ComplexWarning
generic = np.generic
character = np.character
flexible = np.flexible
object_ = np.object_

# Arrays print through NumPy, so NumPy's print options are theirs.
printoptions = np.printoptions
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
array_repr = np.array_repr
array_str = np.array_str
save = np.save
savez = np.savez


def _ours(x: np.ndarray) -> Array:
    """A NumPy array as one of ours, in the canonical dtype (64-bit narrowed without x64)."""
    return asarray(x, dtype=_dtypes.canonicalize_dtype(x.dtype))


def load(file: IO[bytes] | str | os.PathLike[Any], *args: Any, **kwargs: Any) -> Any:
    """`numpy.load`, an array read as an array of ours (bfloat16, which NumPy saves as raw
    2-byte records, recovered)."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == np.dtype("V2"):
            out = out.view(_dtypes.bfloat16)
        try:
            return _ours(out)
        except TypeError:  # a dtype we have no arrays of (strings, objects)
            return out
    return out


def frombuffer(
    buffer: bytes | Any, dtype: DTypeLike = float, count: int = -1, offset: int = 0
) -> Array:
    """A 1-D array of the bytes of `buffer` read as `dtype`."""
    return _ours(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: DTypeLike = float, count: int = -1, *, sep: str) -> Array:
    """A 1-D array of the numbers written in `string`, separated by `sep`."""
    return _ours(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def _impure(name: str, what: str) -> NotImplementedError:
    return NotImplementedError(
        f"jnp.{name}() is not implemented because it may be non-pure and thus unsafe for use "
        f"with JIT and other JAX transformations. Consider using jnp.asarray(np.{name}(...)) "
        f"instead, although care should be taken if np.{name} is used within a jax "
        f"transformations because of its potential side-effect of consuming the {what}; for "
        "more information see "
        "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions"
    )


def fromfile(*args: Any, **kwargs: Any) -> Array:
    """Not provided (reading a file is a side effect): raises, as JAX's."""
    raise _impure("fromfile", "file object")


def fromiter(*args: Any, **kwargs: Any) -> Array:
    """Not provided (consuming an iterator is a side effect): raises, as JAX's."""
    raise _impure("fromiter", "iterable object")


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """An array holding the data of `x`, an object exporting DLPack (`__dlpack__`)."""
    if device is not None:
        raise NotImplementedError("from_dlpack: placing on a given device is not supported")
    return _ours(np.from_dlpack(x))


def einsum_path(
    subscripts: str, /, *operands: Any, optimize: bool | str | list[tuple[int, ...]] = "auto"
) -> tuple[list[tuple[int, ...]], Any]:
    """The contraction order `einsum` uses for these operands, and opt_einsum's description
    of it (JAX's choice of optimizer: `"auto"`, `True` for `"optimal"`, `False` in order)."""
    chosen: Any = optimize
    if isinstance(optimize, bool):
        chosen = "optimal" if optimize else _Unoptimized()
    shaped = [np.broadcast_to(np.zeros((), np.int8), np.shape(x)) for x in operands]
    path, info = opt_einsum.contract_path(subscripts, *shaped, optimize=chosen)
    return list(path), info


__all__ = [
    "ComplexWarning",
    "array_repr",
    "array_str",
    "character",
    "einsum_path",
    "euler_gamma",
    "flexible",
    "from_dlpack",
    "frombuffer",
    "fromfile",
    "fromiter",
    "fromstring",
    "generic",
    "get_printoptions",
    "load",
    "newaxis",
    "object_",
    "printoptions",
    "save",
    "savez",
    "set_printoptions",
]
