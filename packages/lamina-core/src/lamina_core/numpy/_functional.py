"""Functional tools of `jax.numpy`: `vectorize`, `apply_along_axis`, `apply_over_axes`,
`piecewise` and `fromfunction` (`frompyfunc` and its `ufunc` class are `_frompyfunc`'s). As in
JAX they batch with `vmap` instead of looping in Python, so the functions they take must be
traceable."""

from __future__ import annotations

import functools
import operator
import re
import warnings
from collections.abc import Callable, Collection, Sequence
from typing import Any

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.config import config
from lamina_core.numpy._promote import broadcast_shapes, check_arraylike
from lamina_core.numpy._reductions import canonicalize_axis, ensure_arraylike
from lamina_core.numpy._util import (
    Array,
    ArrayLike,
    DTypeLike,
    dtype_of,
    rank_promotion,
    shape_of,
)
from lamina_core.transforms import Jitted, vmap

__all__ = [
    "apply_along_axis",
    "apply_over_axes",
    "fromfunction",
    "piecewise",
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
        if "jax_numpy_rank_promotion" in config.touched and rank_promotion.value != "allow":
            _check_vectorize_ranks(arrays, in_dims, signature)

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


def _check_vectorize_ranks(
    arrays: Sequence[Any], in_dims: Sequence[CoreDims], signature: str | None
) -> None:
    """JAX's warning or error for `vectorize` arguments of different loop ranks."""
    ranks = {
        len(shape_of(a)) - len(dims) for a, dims in zip(arrays, in_dims, strict=True) if shape_of(a)
    }
    if len(ranks) < 2:
        return
    message = (
        f"operands with shapes {[shape_of(a) for a in arrays]} require rank promotion for "
        f"jnp.vectorize function with signature {signature}. Set the jax_numpy_rank_promotion "
        "config option to 'allow' to disable this message; for more information, see "
        "https://docs.jax.dev/en/latest/rank_promotion_warning.html."
    )
    if rank_promotion.value == "warn":
        warnings.warn(message, stacklevel=3)
    else:
        raise ValueError(message)


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
