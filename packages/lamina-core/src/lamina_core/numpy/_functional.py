"""Functional tools of `jax.numpy`: `vectorize`, `apply_along_axis`, `apply_over_axes`,
`piecewise`, `fromfunction`, and `frompyfunc` with its `ufunc` class. As in JAX they batch
with `vmap` instead of looping in Python, so the functions they take must be traceable."""

from __future__ import annotations

import functools
import math
import operator
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.numpy._index_parse import _as_tuple
from lamina_core.numpy._index_update import at as _at
from lamina_core.numpy._promote import broadcast_shapes, check_arraylike
from lamina_core.numpy._reductions import canonicalize_axis, ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike, dtype_of, shape_of
from lamina_core.transforms import Jitted, eval_shape, vmap

__all__ = [
    "apply_along_axis",
    "apply_over_axes",
    "fromfunction",
    "frompyfunc",
    "piecewise",
    "ufunc",
    "vectorize",
]

# Generalized-ufunc signatures such as "(m,n),(n)->(m)", as NumPy spells them.
_DIM = r"\w+"
_DIMS = f"(?:{_DIM}(?:,{_DIM})*)?"
_ARG = rf"\({_DIMS}\)"
_ARGS = f"{_ARG}(?:,{_ARG})*"
_SIGNATURE_RE = f"^{_ARGS}->{_ARGS}$"

CoreDims = tuple[str, ...]


def _parse_signature(signature: str) -> tuple[list[CoreDims], list[CoreDims]]:
    if not re.match(_SIGNATURE_RE, signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = (
        [tuple(re.findall(_DIM, arg)) for arg in re.findall(_ARG, side)]
        for side in signature.split("->")
    )
    return ins, outs


def _check_core_dims(
    sizes: dict[str, int],
    shape: tuple[int, ...],
    core_dims: CoreDims,
    context: str,
    *,
    is_input: bool,
) -> None:
    n = len(core_dims)
    if is_input and len(shape) < n:
        raise ValueError(
            f"input with shape {shape!r} does not have enough dimensions for all core "
            f"dimensions {core_dims!r} {context}"
        )
    if not is_input and len(shape) != n:
        raise ValueError(
            f"output shape {shape!r} does not match core dimensions {core_dims!r} {context}"
        )
    for dim, size in zip(core_dims, shape[len(shape) - n :] if n else (), strict=True):
        if dim not in sizes:
            sizes[dim] = size
        elif size != sizes[dim]:
            raise ValueError(
                f"inconsistent size for core dimension {dim!r}: {size!r} vs {sizes[dim]!r} "
                f"{context}"
            )


def _checking_outputs(
    func: Callable[..., Any], sizes: dict[str, int], out_dims: list[CoreDims], context: str
) -> Callable[..., Any]:
    def checked(*args: Any) -> Any:
        out = func(*args)
        outs = out if isinstance(out, tuple) else [out]
        if len(out_dims) > 1 and not isinstance(out, tuple):
            raise TypeError(
                f"output must be a tuple when multiple outputs are expected, got: {out!r}\n"
                f"{context}"
            )
        if len(outs) != len(out_dims):
            raise TypeError(
                f"wrong number of output arguments: expected {len(out_dims)!r}, got "
                f"{len(outs)!r} {context}"
            )
        seen = dict(sizes)
        for o, dims in zip(outs, out_dims, strict=True):
            _check_core_dims(seen, shape_of(o), dims, context, is_input=False)
        return out

    return checked


def _bind_excluded(
    func: Callable[..., Any],
    excluded: Collection[int | str],
    args: Sequence[Any],
    kwargs: dict[str, Any],
) -> tuple[Callable[..., Any], list[Any], dict[str, Any]]:
    """`func` with the excluded positional and keyword arguments fixed, and what remains."""
    if not excluded:
        return func, list(args), kwargs
    fixed_pos = [
        (i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int)) if i < len(args)
    ]
    fixed_kw = {k: v for k, v in kwargs.items() if k in excluded}
    rest = [a for i, a in enumerate(args) if i not in excluded]
    rest_kw = {k: v for k, v in kwargs.items() if k not in excluded}

    def bound(*a: Any, **kw: Any) -> Any:
        full = list(a)
        for i, v in fixed_pos:
            full.insert(i, v)
        return func(*full, **kw, **fixed_kw)

    return bound, rest, rest_kw


def vectorize(
    pyfunc: Callable[..., Any],
    *,
    excluded: Collection[int | str] = frozenset(),
    signature: str | None = None,
) -> Callable[..., Any]:
    """`pyfunc` mapped with `vmap` over broadcast leading dimensions (NumPy's gufunc
    `signature` names the core dimensions `pyfunc` sees); `excluded` arguments pass as is."""
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError(
            "jax.numpy.vectorize can only exclude integer or string arguments, but "
            f"excluded={excluded!r}"
        )
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        func, rest, rest_kw = _bind_excluded(pyfunc, excluded, args, kwargs)
        out_dims: list[CoreDims] | None
        if signature is not None:
            in_dims, out_dims = _parse_signature(signature)
        else:
            in_dims, out_dims = [()] * len(rest), None
        nones = {i for i, a in enumerate(rest) if a is None}
        if any(nones):  # as JAX: a None in position 0 alone is left in place
            if any(in_dims[i] != () for i in nones):
                raise ValueError(f"Cannot pass None at locations {nones} with {signature=}")
            func, rest, _ = _bind_excluded(func, nones, rest, {})
            in_dims = [d for i, d in enumerate(in_dims) if i not in nones]
        arrays = [jnp.asarray(a) for a in rest]
        if len(arrays) != len(in_dims):
            raise TypeError(
                f"wrong number of positional arguments: expected {len(in_dims)!r}, got "
                f"{len(arrays)!r} {context}"
            )
        sizes: dict[str, int] = {}
        loop_shapes = []
        for a, dims in zip(arrays, in_dims, strict=True):
            shape = shape_of(a)
            _check_core_dims(sizes, shape, dims, context, is_input=True)
            loop_shapes.append(shape[: len(shape) - len(dims)])
        loop_shape = broadcast_shapes(*loop_shapes)
        checked = func if out_dims is None else _checking_outputs(func, sizes, out_dims, context)

        # Size-1 loop dimensions are squeezed and left to broadcasting by vmap (in_axes None),
        # instead of materializing broadcast copies of the arguments.
        squeezed = []
        reversed_shapes = []
        for a, shape in zip(arrays, loop_shapes, strict=True):
            filled = (1,) * (len(loop_shape) - len(shape)) + shape
            reversed_shapes.append(filled[::-1])
            ones = tuple(i for i, s in enumerate(shape) if s == 1)
            squeezed.append(jnp.squeeze(a, axis=ones) if ones else a)
        mapped = checked
        expand = []
        for back, sizes_here in enumerate(zip(*reversed_shapes, strict=True)):
            in_axes = tuple(None if s == 1 else 0 for s in sizes_here)
            if all(ax is None for ax in in_axes):
                expand.append(len(loop_shape) - 1 - back)
            else:
                mapped = vmap(mapped, in_axes)
        result = mapped(*squeezed, **rest_kw)
        if not expand:
            return result
        if isinstance(result, tuple):
            return tuple(jnp.expand_dims(r, axis=expand) for r in result)
        return jnp.expand_dims(result, axis=expand)

    return wrapped


def apply_along_axis(
    func1d: Callable[..., Any], axis: int, arr: ArrayLike, *args: Any, **kwargs: Any
) -> Array:
    """`func1d` applied to the 1-D slices of `arr` along `axis` (by `vmap` over the others)."""
    check_arraylike("apply_along_axis", arr)
    ndim = len(shape_of(arr))
    axis = canonicalize_axis(axis, ndim)

    def func(x: Any) -> Any:
        return func1d(x, *args, **kwargs)

    for i in range(1, ndim - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(
    func: Callable[[ArrayLike, int], Array], a: ArrayLike, axes: Sequence[int]
) -> Array:
    """`func(a, axis)` applied for each axis in turn, keeping reduced axes as size 1."""
    (arr,) = ensure_arraylike("apply_over_axes", a)
    for axis in axes:
        b = func(arr, axis)
        rank, b_rank = len(shape_of(arr)), len(shape_of(b))
        if b_rank == rank:
            arr = b
        elif b_rank == rank - 1:
            arr = jnp.expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return arr


def piecewise(
    x: ArrayLike,
    condlist: Array | Sequence[ArrayLike],
    funclist: Sequence[ArrayLike | Callable[..., Array]],
    *args: Any,
    **kw: Any,
) -> Array:
    """The function (or constant) of the last true condition of `condlist`, evaluated at
    each element of `x`; elements with no true condition get the optional extra function."""
    (x_arr,) = ensure_arraylike("piecewise", x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funcs: list[Any] = [funclist[-1], *funclist[:-1]]
    elif nf == nc:
        funcs = [0, *funclist]
    else:
        raise ValueError(
            f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}"
        )
    consts = {i: c for i, c in enumerate(funcs) if not callable(c)}
    callables = frozenset((i, f) for i, f in enumerate(funcs) if callable(f))
    return _piecewise(x_arr, jnp.asarray(condlist, dtype=bool), consts, callables, *args, **kw)


def _piecewise_impl(
    x: Array,
    condlist: Array,
    consts: dict[int, ArrayLike],
    funcs: frozenset[tuple[int, Callable[..., Array]]],
    *args: Any,
    **kw: Any,
) -> Array:
    by_index = dict(funcs)
    n = shape_of(condlist)[0] + 1
    chosen = [consts.get(i, by_index.get(i)) for i in range(n)]
    # The index of the last true condition (0, the default, where none is true).
    padded = jnp.concatenate([jnp.zeros_like(condlist[:1]), condlist], 0)
    indices = jnp.argmax(jnp.cumsum(padded, 0), 0)
    dtype = dtype_of(x)

    def call(f: Callable[..., Any]) -> Callable[[Any], Any]:
        return lambda v: jnp.astype(f(v, *args, **kw), dtype)

    def const(c: Any) -> Callable[[Any], Any]:
        return lambda v: jnp.array(c, dtype=dtype)

    branches = [call(f) if callable(f) else const(f) for f in chosen]
    return vectorize(_lax.switch, excluded=(1,))(indices, branches, x)


_piecewise = Jitted(_piecewise_impl, static_argnames=("funcs",))


def _canonical_shape(shape: Any) -> tuple[int, ...]:
    try:
        dims = (operator.index(shape),) if not isinstance(shape, Sequence) else shape
        return tuple(operator.index(d) for d in dims)
    except TypeError:
        raise TypeError(
            "Shapes must be 1D sequences of concrete values of integer type, got "
            f"{shape}.\nshape argument of jnp.fromfunction()"
        ) from None


def fromfunction(
    function: Callable[..., Array], shape: Any, *, dtype: DTypeLike = float, **kwargs: Any
) -> Array:
    """`function` evaluated at every index of an array of `shape` (indices of `dtype`),
    by `vmap` over one `arange` per axis."""
    dims = _canonical_shape(shape)
    fn = function
    for i in range(len(dims)):
        in_axes = [0 if i == j else None for j in range(len(dims))]
        fn = vmap(fn, in_axes=tuple(in_axes[::-1]))
    return fn(*(jnp.arange(s, dtype=dtype) for s in dims), **kwargs)


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
