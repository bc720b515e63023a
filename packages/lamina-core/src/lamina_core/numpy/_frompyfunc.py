"""`frompyfunc` and the `ufunc` class it makes: a traceable scalar function made elementwise
over broadcast arrays (by `vectorize`), with `reduce`, `accumulate`, `at` and `outer` derived
from it (a `fori_loop`, scans, nested `vmap`s), each in a nested `jit` as JAX stages them."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.numpy._functional import vectorize
from lamina_core.numpy._index_parse import _as_tuple
from lamina_core.numpy._index_update import at as _at
from lamina_core.numpy._promote import broadcast_shapes, check_arraylike
from lamina_core.numpy._reductions import canonicalize_axis
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike, dtype_of, shape_of
from lamina_core.transforms import Jitted, eval_shape, vmap

__all__ = ["frompyfunc", "ufunc"]

_AT_INPLACE_MESSAGE = (
    "Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like\n"
    "np.ufunc.at(). Instead, you can pass inplace=False and capture the result; e.g.\n"
    ">>> arr = jnp.add.at(arr, ind, val, inplace=False)\n"
)


def _one_like(x: Any) -> Any:
    """A scalar 1 of `x`'s dtype and weak type (JAX's `lax._one`)."""
    return _lax.full_like(x, 1, shape=())


class ufunc:
    """A universal function: elementwise over broadcast arrays, with `outer`, `reduce`,
    `accumulate` and `at` derived from the scalar function."""

    def __init__(
        self,
        func: Callable[..., Any],
        /,
        nin: int,
        nout: int,
        *,
        name: str | None = None,
        nargs: int | None = None,
        identity: Any = None,
    ) -> None:
        self.__doc__ = func.__doc__
        self.__name__: str = str(name or getattr(func, "__name__", repr(func)))
        self._func = func
        self._nin = operator.index(nin)
        self._nout = operator.index(nout)
        self._nargs = operator.index(nargs or nin)
        self._identity = identity
        self._call_jit = Jitted(self._call_vectorized)
        self._reduce_jit = Jitted(
            self._reduce_via_loop, static_argnames=("axis", "dtype", "keepdims")
        )
        self._accumulate_jit = Jitted(self._accumulate_via_scan, static_argnames=("axis", "dtype"))
        self._outer_jit = Jitted(self._outer)
        self._at_jit = Jitted(self._at_via_scan)

    @property
    def nin(self) -> int:
        return self._nin

    @property
    def nout(self) -> int:
        return self._nout

    @property
    def nargs(self) -> int:
        return self._nargs

    @property
    def identity(self) -> Any:
        return self._identity

    def _key(self) -> tuple[Any, ...]:
        return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args: ArrayLike, out: None = None, where: None = None) -> Any:
        check_arraylike(self.__name__, *args)
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        return self._call_jit(*args)

    def _call_vectorized(self, *args: Any) -> Any:
        return vectorize(self._func)(*args)

    def _binary_only(self, what: str) -> None:
        if self.nin != 2:
            raise ValueError(f"{what} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{what} only supported for functions returning a single value")

    def _result_dtype(self, *args: Any) -> np.dtype:
        dtype: np.dtype = eval_shape(self._func, *(_one_like(a) for a in args)).dtype
        return dtype

    def reduce(
        self,
        a: ArrayLike,
        axis: int | None = 0,
        dtype: DTypeLike | None = None,
        out: None = None,
        keepdims: bool = False,
        initial: ArrayLike | None = None,
        where: ArrayLike | None = None,
    ) -> Array:
        """The reduction of `a` along `axis` by this binary function (from `initial`, if
        given, else from the first element), over the elements where `where` is true."""
        check_arraylike(f"{self.__name__}.reduce", a)
        self._binary_only("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if initial is not None:
            check_arraylike(f"{self.__name__}.reduce", initial)
        if where is not None:
            check_arraylike(f"{self.__name__}.reduce", where)
            if self.identity is None and initial is None:
                raise ValueError(
                    f"reduction operation {self.__name__!r} does not have an identity, so to "
                    "use a where mask one has to specify 'initial'."
                )
            if dtype_of(where) != np.dtype(bool):
                raise ValueError(
                    f"where argument must have dtype=bool; got dtype={dtype_of(where)}"
                )
        if dtype is not None:
            dtype = np.dtype(dtype)
        return self._reduce_jit(
            a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where
        )

    def _reduce_via_loop(
        self,
        arr: Array,
        axis: int | tuple[int, ...] | None = 0,
        dtype: DTypeLike | None = None,
        keepdims: bool = False,
        initial: ArrayLike | None = None,
        where: ArrayLike | None = None,
    ) -> Array:
        if initial is None:
            initial = self.identity
        if dtype is None:
            dtype = self._result_dtype(arr, arr)
        shape = shape_of(arr)
        if where is not None:
            where = jnp.broadcast_to(where, shape)
        if isinstance(axis, tuple):
            raise NotImplementedError("tuple of axes")
        if axis is None:
            final_shape: tuple[int, ...] = (1,) * len(shape) if keepdims else ()
            arr = jnp.ravel(arr)
            if where is not None:
                where = jnp.ravel(where)
            axis = 0
        else:
            axis = canonicalize_axis(axis, len(shape))
            rest = (*shape[:axis], *shape[axis + 1 :])
            final_shape = (*shape[:axis], 1, *shape[axis + 1 :]) if keepdims else rest
        if axis != 0:
            arr = jnp.moveaxis(arr, axis, 0)
            if where is not None:
                where = jnp.moveaxis(where, axis, 0)
        length = shape_of(arr)[0]
        if length == 0:
            if initial is None:
                raise ValueError(
                    f"zero-size array to reduction operation {self.__name__} which has no identity"
                )
            return _lax.full(final_shape, initial, dtype)

        def item(x: Any, i: Any) -> Any:
            return _lax.dynamic_index_in_dim(x, i, 0, keepdims=False)

        def body(i: Any, acc: Any) -> Any:
            new = self(acc, jnp.astype(item(arr, i), dtype))
            return new if where is None else jnp.where(item(where, i), new, acc)

        if initial is None:
            start, first = 1, item(arr, 0)
        else:
            start, first = 0, initial
        acc0 = jnp.broadcast_to(jnp.astype(jnp.asarray(first), dtype), shape_of(arr)[1:])
        result = _lax.fori_loop(start, length, body, acc0)
        if keepdims:
            result = jnp.reshape(result, final_shape)
        return result

    def accumulate(
        self, a: ArrayLike, axis: int = 0, dtype: DTypeLike | None = None, out: None = None
    ) -> Array:
        """The running reduction of `a` along `axis` by this binary function."""
        self._binary_only("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        if dtype is not None:
            dtype = np.dtype(dtype)
        return self._accumulate_jit(a, axis=axis, dtype=dtype)

    def _accumulate_via_scan(
        self, arr: Array, axis: int | tuple[int, ...] | None = 0, dtype: DTypeLike | None = None
    ) -> Array:
        check_arraylike(f"{self.__name__}.accumulate", arr)
        if dtype is None:
            dtype = self._result_dtype(arr, arr)
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        shape = shape_of(arr)
        axis = canonicalize_axis(axis, len(shape))
        if math.prod(shape) == 0:
            return _lax.full(shape, 0, dtype)
        arr = jnp.moveaxis(arr, axis, 0)
        first = jnp.astype(arr[0], dtype)

        def step(carry: tuple[Any, Any], _: Any) -> tuple[tuple[Any, Any], Any]:
            i, x = carry
            here = jnp.astype(_lax.dynamic_index_in_dim(arr, i, 0, keepdims=False), dtype)
            y = jnp.where(jnp.equal(i, 0), first, self(jnp.astype(x, dtype), here))
            return (jnp.add(i, 1), y), y

        _, result = _lax.scan(step, (0, first), None, length=shape_of(arr)[0])
        return jnp.moveaxis(result, 0, axis)

    def at(
        self, a: ArrayLike, indices: Any, b: ArrayLike | None = None, /, *, inplace: bool = True
    ) -> Array:
        """A copy of `a` with this function applied at `indices` (with `b` as the second
        argument of a binary function), repeated indices applied one after another."""
        if inplace:
            raise NotImplementedError(_AT_INPLACE_MESSAGE)
        if b is None:
            return self._at_jit(a, indices)
        return self._at_jit(a, indices, b)

    def _at_via_scan(self, a: Any, index: Any, *args: Any) -> Array:
        check_arraylike(f"{self.__name__}.at", a, *args)
        indices = list(_as_tuple(index))
        dtype = self._result_dtype(a, *args)
        a = jnp.astype(a, dtype)
        args = tuple(jnp.astype(arg, dtype) for arg in args)
        if not indices:
            return a
        shapes = [shape_of(i) for i in indices if not isinstance(i, slice)]
        shape = broadcast_shapes(*shapes) if shapes else ()
        if not shape:
            index = tuple(indices)
            return _at(a)[index].set(self(_at(a)[index].get(), *args))
        if args:
            (arg,) = args
            trailing = shape_of(arg)[len(shape) :]
            arg = jnp.broadcast_to(arg, (*shape, *trailing))
            args = (jnp.reshape(arg, (math.prod(shape), *trailing)),)
        flat = [
            i if isinstance(i, slice) else jnp.ravel(jnp.broadcast_to(i, shape)) for i in indices
        ]

        def step(carry: tuple[Any, Any], _: Any) -> tuple[tuple[Any, Any], Any]:
            i, x = carry
            here = tuple(
                ind if isinstance(ind, slice) else _lax.dynamic_index_in_dim(ind, i, 0, False)
                for ind in flat
            )
            extra = (_lax.dynamic_index_in_dim(v, i, 0, False) for v in args)
            x = _at(x)[here].set(self(_at(x)[here].get(), *extra))
            return (jnp.add(i, 1), x), None

        (_, out), _ = _lax.scan(step, (0, a), None, length=math.prod(shape))
        return out

    def outer(self, A: ArrayLike, B: ArrayLike, /) -> Array:
        """This binary function at every pair of elements of `A` and `B`: the result has
        shape `A.shape + B.shape`."""
        self._binary_only("outer")
        check_arraylike(f"{self.__name__}.outer", A, B)
        return self._outer_jit(A, B)

    def _outer(self, a: Any, b: Any) -> Any:
        sa, sb = shape_of(a), shape_of(b)
        flat_a = _lax.reshape(a, (math.prod(sa),))
        flat_b = _lax.reshape(b, (math.prod(sb),))
        result = vmap(vmap(self, (None, 0)), (0, None))(flat_a, flat_b)
        return jnp.reshape(result, (*sa, *sb))


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A `ufunc` from a traceable scalar function of `nin` arguments and `nout` results."""
    return ufunc(func, nin, nout, identity=identity)
