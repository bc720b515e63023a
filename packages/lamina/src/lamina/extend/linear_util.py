"""`jax.extend.linear_util`: functions wrapped with a stack of transformations.

A `WrappedFun` is a Python function plus the transformations to apply around it, each a
function `gen(f, *static_args, *args, **kwargs)` that calls the inner `f` (new style,
`transformation2`), or a generator yielding the inner call's arguments and then its result
(`transformation`). Transformations with auxiliary output (`*_with_aux`) write it into a
`Store` read by a thunk after the call. Lamina's own transformations do not use this module:
it is the calling convention of JAX's extension APIs (`partial_eval.trace_to_jaxpr_nounits`,
`CallPrimitive.bind`), kept for libraries written against them.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Hashable
from typing import Any

from lamina_core.ir import DebugInfo

__all__ = [
    "Callable",
    "StoreException",
    "WrappedFun",
    "cache",
    "merge_linear_aux",
    "transformation",
    "transformation2",
    "transformation_with_aux",
    "transformation_with_aux2",
    "wrap_init",
]


class StoreException(Exception):
    """A store read while empty, or written twice."""


_EMPTY: Any = object()


class Store:
    """One auxiliary output, written once by a transformation and read after the call."""

    __slots__ = ("_val",)

    def __init__(self) -> None:
        self._val: Any = _EMPTY

    def store(self, val: Any) -> None:
        if self._val is not _EMPTY:
            raise StoreException("Store occupied")
        self._val = val

    def reset(self) -> None:
        self._val = _EMPTY

    @property
    def val(self) -> Any:
        if self._val is _EMPTY:
            raise StoreException("Store empty")
        return self._val

    def __bool__(self) -> bool:
        return self._val is not _EMPTY


class EqualStore(Store):
    """A store that accepts a second write of an equal value (a re-traced call)."""

    __slots__ = ()

    def store(self, val: Any) -> None:
        if self._val is _EMPTY:
            self._val = val
            return
        try:
            equal = bool(self._val == val)
        except Exception:
            raise StoreException("Store occupied") from None
        if not equal:
            raise StoreException("Store occupied with not-equal value")


Transform = tuple[Callable[..., Any], tuple[Hashable, ...]]


class WrappedFun:
    """`f` with `transforms` (innermost last) and keyword `params`. Compared by value, so
    equal wrappings of the same function share a cache entry (`cache`)."""

    __slots__ = ("debug_info", "f", "f_transformed", "in_type", "params", "stores", "transforms")

    def __init__(
        self,
        f: Callable[..., Any],
        f_transformed: Callable[..., Any],
        transforms: tuple[Transform, ...],
        stores: tuple[Store | None, ...],
        params: tuple[tuple[str, Any], ...],
        in_type: Any,
        debug_info: DebugInfo | None,
    ) -> None:
        self.f = f
        self.f_transformed = f_transformed
        self.transforms = transforms
        self.stores = stores
        self.params = params
        self.in_type = in_type
        self.debug_info = debug_info

    @property
    def __name__(self) -> str:
        return getattr(self.f, "__name__", "<unnamed wrapped function>")

    def wrap(
        self, gen: Callable[..., Any], gen_static_args: tuple[Hashable, ...], out_store: Any
    ) -> WrappedFun:
        """This function with one more transformation outside it (and its store, if any)."""
        extra = () if out_store is None else (out_store,)
        inner = functools.partial(gen, self.f_transformed, *extra, *gen_static_args)
        return WrappedFun(
            self.f,
            inner,
            ((gen, gen_static_args), *self.transforms),
            (out_store, *self.stores),
            self.params,
            None,
            self.debug_info,
        )

    def populate_stores(self, stores: tuple[Store | None, ...]) -> None:
        """Fill this function's stores from another call's (a cache hit replays them)."""
        for mine, theirs in zip(self.stores, stores, strict=True):
            if mine is not None and theirs is not None:
                mine.store(theirs.val)

    def call_wrapped(self, *args: Any, **kwargs: Any) -> Any:
        return self.f_transformed(*args, **kwargs)

    def replace_debug_info(self, dbg: DebugInfo | None) -> WrappedFun:
        return WrappedFun(
            self.f,
            self.f_transformed,
            self.transforms,
            self.stores,
            self.params,
            self.in_type,
            dbg,
        )

    def with_unknown_names(self) -> WrappedFun:
        return self

    def __repr__(self) -> str:
        lines = [
            f"{i}   : {getattr(gen, '__name__', gen)}   {args}"
            for i, (gen, args) in enumerate(self.transforms)
        ]
        return "Wrapped function:\n" + "\n".join(lines) + f"\nCore: {self.__name__}\n"

    def _key(self) -> tuple[Any, ...]:
        return (self.f, self.transforms, self.params, self.in_type, self.debug_info)

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WrappedFun) and self._key() == other._key()


def wrap_init(
    f: Callable[..., Any],
    params: dict[str, Any] | None = None,
    *,
    debug_info: DebugInfo | None = None,
) -> WrappedFun:
    """`f` as a `WrappedFun` with no transformation; `params` are passed to it as keywords."""
    items = tuple(sorted((params or {}).items()))
    called = functools.partial(f, **dict(items)) if items else f
    return WrappedFun(f, called, (), (), items, None, debug_info)


def _transformation2(gen: Callable[..., Any], fun: WrappedFun, *static: Any) -> WrappedFun:
    """`fun` wrapped in `gen(inner, *static, *args, **kwargs)`."""
    return fun.wrap(gen, static, None)


def _transformation(gen: Callable[..., Any], fun: WrappedFun, *static: Any) -> WrappedFun:
    """`fun` wrapped in a generator `gen(*static, *args, **kwargs)` that yields the inner
    call's `(args, kwargs)`, receives its result, and yields the outer result."""

    def run(inner: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        steps = gen(*args, **kwargs)
        inner_args, inner_kwargs = next(steps)
        return steps.send(inner(*inner_args, **inner_kwargs))

    return fun.wrap(run, static, None)  # the static arguments reach `gen` first


def _transformation_with_aux2(
    gen: Callable[..., Any],
    fun: WrappedFun,
    *static: Any,
    use_eq_store: bool = False,
    unk_names: bool = False,
) -> tuple[WrappedFun, Callable[[], Any]]:
    """`fun` wrapped in `gen(inner, store, *static, *args, **kwargs)`, which writes an
    auxiliary output into `store`; returns the function and a thunk reading it."""
    store: Store = EqualStore() if use_eq_store else Store()
    return fun.wrap(gen, static, store), lambda: store.val


def _transformation_with_aux(
    gen: Callable[..., Any], fun: WrappedFun, *static: Any
) -> tuple[WrappedFun, Callable[[], Any]]:
    """As `transformation`, the generator's last yield being `(result, aux)`."""

    def run(inner: Callable[..., Any], store: Store, *args: Any, **kwargs: Any) -> Any:
        steps = gen(*args, **kwargs)
        inner_args, inner_kwargs = next(steps)
        ans, aux = steps.send(inner(*inner_args, **inner_kwargs))
        store.store(aux)
        return ans

    return _transformation_with_aux2(run, fun, *static)


# Curried as JAX's are: `transformation(gen)` is the decorator form, and
# `transformation(gen, fun, *static)` a partial to call, `transformation(gen, fun)()`.
transformation = functools.partial(functools.partial, _transformation)
transformation2 = functools.partial(functools.partial, _transformation2)
transformation_with_aux = functools.partial(functools.partial, _transformation_with_aux)
transformation_with_aux2 = functools.partial(functools.partial, _transformation_with_aux2)


def merge_linear_aux(aux1: Callable[[], Any], aux2: Callable[[], Any]) -> tuple[bool, Any]:
    """The auxiliary output of whichever of two alternative branches ran: `(True, out1)` or
    `(False, out2)`; a `StoreException` if neither or both did."""
    try:
        out1 = aux1()
    except StoreException:
        try:
            return False, aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
    try:
        aux2()
    except StoreException:
        return True, out1
    raise StoreException("both stores occupied")


def cache(
    call: Callable[..., Any], *, explain: Callable[..., None] | None = None
) -> Callable[..., Any]:
    """Memoize `call(fun, *args)` on `fun`'s wrapping and `args`, per wrapped function (held
    weakly); a hit replays the stores the first call filled."""
    del explain  # JAX's cache-miss explanations; Lamina explains its own caches
    by_function: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()

    @functools.wraps(call)
    def memoized(fun: WrappedFun, *args: Any) -> Any:
        try:
            entries = by_function.setdefault(fun.f, {})
        except TypeError:  # not weakly referenceable: no caching
            return call(fun, *args)
        key = (fun.transforms, fun.params, fun.in_type, fun.debug_info, args)
        found = entries.get(key)
        if found is not None:
            result, stores = found
            fun.populate_stores(stores)
            return result
        result = call(fun, *args)
        entries[key] = (result, fun.stores)
        return result

    def cache_clear() -> None:
        by_function.clear()

    memoized.cache_clear = cache_clear  # type: ignore[attr-defined]  # functools' convention
    return memoized
