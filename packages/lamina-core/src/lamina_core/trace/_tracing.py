"""The trace machinery: traces, tracers, and the current trace.

Stackless, as in current JAX: one current trace lives in a context variable; `Primitive.bind`
asks it to process the primitive. A trace owns its tracers and lifts values it does not own:
constants become literals, tracers of an enclosing trace are captured. `EvalTrace` is the
bottom: it evaluates eagerly through a hook, NumPy's reference rules unless a runtime installs
its own. This module knows no particular staging or transformation trace.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any, ClassVar, Final, NoReturn, Protocol, TypeVar, overload

from lamina_core.config import dispatch_context
from lamina_core.ir import AbstractValue, AvalQDD, Primitive, install_current_trace
from lamina_core.trace._array_methods import ArrayMethods as ArrayMethods
from lamina_core.trace._array_methods import (
    _immutable_error,
    _method,
    check_bool_conversion,
    check_integer_conversion,
    check_scalar_conversion,
)
from lamina_core.trace._array_methods import register_operand_type as register_operand_type
from lamina_core.trace._array_methods import register_tracer_method as register_tracer_method

# `ArrayMethods` and `register_tracer_method` are re-exported: the runtime's arrays and the
# numpy frontend import them from here.
from lamina_core.trace._concrete_only import ConcreteOnlyMethods


class Trace:
    """An interpretation of primitives. Subclasses define `process_primitive`."""

    __slots__ = ("__weakref__", "parent")

    def __init__(self, parent: Trace | None) -> None:
        self.parent = parent
        """The trace this one was opened inside; values of it are lifted into this one."""

    def process_primitive(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        raise NotImplementedError(f"{type(self).__name__} cannot process primitive '{prim.name}'")

    def encloses(self, other: Trace) -> bool:
        """True if `other` is this trace or one it was opened inside (or stands for one)."""
        trace: Trace | None = self
        while trace is not None:
            if trace is other or trace.stands_for(other):
                return True
            trace = trace.parent
        return False

    def stands_for(self, other: Trace) -> bool:
        """True if this trace owns `other`'s tracers too (see `BatchTrace`'s `shared`)."""
        return False

    def describe(self) -> str:
        return type(self).__name__

    def cur_qdd(self, x: Any) -> Any:
        """The quasi-dynamic data `x`, a value of a mutable hi type, has at this point of the
        program (JAX's `cur_qdd`): a concrete value knows its own; a trace tracking such
        values (staging) answers for its tracers, and lets the trace it was opened in answer
        for the rest."""
        if isinstance(x, Tracer) and (x._trace is self or self.stands_for(x._trace)):
            raise NotImplementedError(
                f"{self.describe()} does not track the state of mutable hi values"
            )
        if self.parent is not None:
            return self.parent.cur_qdd(x)
        return x.cur_qdd()

    def stage_value(self, value: Any) -> Any:
        """`value` (a constant, or a tracer of this or an enclosing trace) lifted into this
        trace, as an identity primitive would return it but without an equation (JAX's
        `stage_value`). A trace that records nothing lets the one it was opened in lift it."""
        if isinstance(value, Tracer) and (value._trace is self or self.stands_for(value._trace)):
            return value
        return value if self.parent is None else self.parent.stage_value(value)


class EagerImpl(Protocol):
    def __call__(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any: ...


class EvalTrace(Trace):
    """The bottom trace: applies primitives to concrete values right away."""

    __slots__ = ()

    def process_primitive(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        for arg in args:
            if isinstance(arg, Tracer):
                raise_escaped_tracer(arg, prim)
        return _eager_impl(prim, args, params)

    def stage_value(self, value: Any) -> Any:
        if isinstance(value, Tracer):
            raise_escaped_tracer(value)
        return _materialize(value)


def _missing_eager_impl(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    raise RuntimeError("no eager evaluator installed; import lamina_core")


_eager_impl: EagerImpl = _missing_eager_impl


def install_eager_impl(impl: EagerImpl) -> EagerImpl:
    """Replace how primitives run outside any transformation; returns the previous one.

    Core installs the NumPy reference evaluator; lamina-runtime installs XLA execution.
    """
    global _eager_impl
    previous, _eager_impl = _eager_impl, impl
    return previous


def _host_value(value: Any) -> Any:
    return value


_materialize: Callable[[Any], Any] = _host_value


def install_materializer(materialize: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Replace how a constant becomes an array of the eager evaluator; returns the previous.

    Core's NumPy evaluator keeps host values as they are; lamina-runtime puts them on the device.
    """
    global _materialize
    previous, _materialize = _materialize, materialize
    return previous


def eager_value(value: Any) -> Any:
    """`value` (an array or constant a frontend function computed without binding a primitive)
    as the eager evaluator's array when no trace is active, as if a primitive had made it:
    `jnp.asarray(2)` at top level is a device array. Under a trace it is returned as it is."""
    if _current_trace.get() is EVAL_TRACE:
        return _materialize(value)
    return value


F = TypeVar("F", bound=Callable[..., Any])
_R = TypeVar("_R")

ToplevelFactory = Callable[[Callable[..., Any], tuple[str, ...]], Callable[..., Any]]
"""`make(fn, static_argnames)`: a callable running `fn` as one compiled program."""

_make_toplevel_dispatcher: ToplevelFactory | None = None


def install_toplevel_dispatch(make: ToplevelFactory | None) -> ToplevelFactory | None:
    """Replace how frontend functions run when no trace is active; returns the previous.

    `make(fn, static_argnames)` returns a callable that runs `fn` as one compiled program, with
    the named arguments as compile-time constants (lamina-runtime: a jit dispatcher, as JAX runs
    its `jax.numpy` functions). Without one, `fn` runs primitive by primitive on the eager
    evaluator.
    """
    global _make_toplevel_dispatcher
    previous, _make_toplevel_dispatcher = _make_toplevel_dispatcher, make
    return previous


class NotAnArrayArgument(TypeError):
    """A jitted function got an argument that is neither an array nor marked static."""


@overload
def dispatched_at_top_level(fn: F) -> F: ...


@overload
def dispatched_at_top_level(
    fn: None = None, *, static_argnames: Sequence[str] = (), checks_first: bool = False
) -> Callable[[F], F]: ...


def dispatched_at_top_level(
    fn: F | None = None, *, static_argnames: Sequence[str] = (), checks_first: bool = False
) -> Any:
    """`fn`, run through the installed top-level dispatcher when called outside any trace.

    Under a trace it is `fn` itself: jaxprs do not change. `static_argnames` name the arguments
    that are not arrays (axes, dtypes, flags); a call whose static values do not hash runs `fn`
    as it is. With `checks_first`, `fn` reports a non-array argument itself (JAX's function
    checks its arguments before its jit, so its message is the function's, not jit's).
    """
    if fn is None:
        return functools.partial(
            dispatched_at_top_level, static_argnames=static_argnames, checks_first=checks_first
        )
    statics = tuple(static_argnames)
    positions = _positions(fn, statics)
    made: list[Callable[..., Any]] = []

    def run(*args: Any, **kwargs: Any) -> Any:
        if not made:
            if _make_toplevel_dispatcher is None:
                return fn(*args, **kwargs)
            made.append(_make_toplevel_dispatcher(fn, statics))
        if not checks_first:
            return made[0](*args, **kwargs)
        try:
            return made[0](*args, **kwargs)
        except NotAnArrayArgument:
            return fn(*args, **kwargs)  # raises the function's own error

    if not statics:

        def wrapper(*args: Any) -> Any:
            if _current_trace.get() is EVAL_TRACE:
                return run(*args)
            return fn(*args)

    else:

        def wrapper(*args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]  # one of two
            if _current_trace.get() is EVAL_TRACE and _hashable(args, kwargs, positions, statics):
                return run(*args, **kwargs)
            return fn(*args, **kwargs)

    functools.update_wrapper(wrapper, fn)
    return wrapper


def _positions(fn: Callable[..., Any], names: tuple[str, ...]) -> tuple[int, ...]:
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = [p for p in inspect.signature(fn).parameters.values() if p.kind in positional]
    return tuple(i for i, p in enumerate(params) if p.name in names)


def _hashable(
    args: tuple[Any, ...], kwargs: dict[str, Any], positions: tuple[int, ...],
    names: tuple[str, ...],
) -> bool:  # fmt: skip
    try:
        for i in positions:
            if i < len(args):
                hash(args[i])
        for name in names:
            if name in kwargs:
                hash(kwargs[name])
    except TypeError:
        return False
    return True


def eager_impl() -> EagerImpl:
    return _eager_impl


EVAL_TRACE: Final = EvalTrace(None)
_current_trace: ContextVar[Trace] = ContextVar("lamina_current_trace", default=EVAL_TRACE)
current_trace = _current_trace.get
install_current_trace(current_trace)


# Every scope below restores the trace it read before setting one, not a token: a
# KeyboardInterrupt raised as `set` returns would keep its token from being stored, and leave
# the trace current for good (every later call staged into it). Found by
# packages/lamina/tests/test_interrupts.py.


@contextlib.contextmanager
def set_current_trace(trace: Trace) -> Iterator[Trace]:
    previous = _current_trace.get()
    try:
        _current_trace.set(trace)
        with dispatch_context.local_scope():
            yield trace
    finally:
        _current_trace.set(previous)


def cur_qdd(x: Any) -> Any:
    """The quasi-dynamic data of `x` (a value of a mutable hi type) at this point of the
    program being traced, or its own outside any trace (`jax.experimental.cur_qdd`)."""
    return call_under(EVAL_TRACE, _current_trace.get().cur_qdd, x)


def with_qdd(avals: Sequence[AbstractValue], values: Sequence[Any]) -> list[Any]:
    """The input types of a traced function called on `values`: `avals`, the ones of mutable
    hi types paired with their values' current data (`AvalQDD`), as JAX's `jit` and
    `make_jaxpr` type their arguments."""
    return [AvalQDD(a, cur_qdd(x)) if a.has_qdd else a for a, x in zip(avals, values, strict=True)]


def bind_with_trace(
    trace: Trace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
) -> Any:
    """`prim` applied by `trace`, with `trace` current while it runs.

    For interpreters handing work to their parent trace: the parent was current when the
    interpreter's scope opened, so no new dispatch context is needed (see `dispatch_context`).
    """
    previous = _current_trace.get()
    try:
        _current_trace.set(trace)
        return trace.process_primitive(prim, args, params)
    finally:
        _current_trace.set(previous)


def call_under(trace: Trace, fn: Callable[..., _R], /, *args: Any, **kwargs: Any) -> _R:
    """`fn(*args, **kwargs)` with `trace` current, as `running_under` does: for the hot paths
    of interpreters (a rule per primitive), where a generator-based scope costs more."""
    previous = _current_trace.get()
    try:
        _current_trace.set(trace)
        return fn(*args, **kwargs)
    finally:
        _current_trace.set(previous)


@contextlib.contextmanager
def running_under(trace: Trace) -> Iterator[Trace]:
    """Make `trace` current for a rule of an interpreter opened inside it (no new context)."""
    previous = _current_trace.get()
    try:
        _current_trace.set(trace)
        yield trace
    finally:
        _current_trace.set(previous)


_ERROR_PAGE: Final = "https://docs.jax.dev/en/latest/errors.html"


class _JaxError(Exception):
    """JAX's errors end with a pointer to their entry on JAX's error page, under JAX's name."""

    def __init__(self, message: str) -> None:
        name = type(self).__name__
        super().__init__(f"{message}\nSee {_ERROR_PAGE}#jax.errors.{name}")


class JAXTypeError(_JaxError, TypeError):
    """A TypeError of JAX's own (`jax.errors.JAXTypeError`), the base of the tracer errors."""


class JAXIndexError(_JaxError, IndexError):
    """An IndexError of JAX's own (`jax.errors.JAXIndexError`)."""


class ConcretizationTypeError(JAXTypeError):
    """A traced (abstract) value was used where Python needs a concrete one."""


class TracerBoolConversionError(ConcretizationTypeError):
    """A traced value was converted to a Python bool (`if x > 0:` under jit)."""


class TracerIntegerConversionError(JAXTypeError):
    """A traced value was used as a Python integer index (`__index__`)."""


class TracerArrayConversionError(JAXTypeError):
    """A traced value was converted to a NumPy array."""


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that created it."""


class Tracer(ArrayMethods, ConcreteOnlyMethods):
    """A value being traced: it stands for an array of type `aval` inside a trace."""

    __slots__ = ("_trace",)

    def __init__(self, trace: Trace) -> None:
        self._trace = trace

    @property
    def aval(self) -> AbstractValue:
        raise NotImplementedError

    def __getitem__(self, index: Any) -> Any:
        # A type with its own indexing (a Ref's reads) answers first; arrays index as NumPy.
        getitem = self.aval.tracer_getitem
        if getitem is not None:
            return getitem(self, index)
        return _method("getitem")(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        setitem = self.aval.tracer_setitem
        if setitem is None:
            raise _immutable_error()
        setitem(self, index, value)

    @property
    def shape(self) -> tuple[int, ...]:
        shape: tuple[int, ...] = self.aval.shape  # type: ignore[attr-defined]  # array avals
        return shape

    @property
    def dtype(self) -> Any:
        return self.aval.dtype  # type: ignore[attr-defined]  # array avals

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        size = 1
        for d in self.shape:
            size *= d
        return size

    @property
    def weak_type(self) -> bool:
        return bool(getattr(self.aval, "weak_type", False))

    def where_created(self) -> str:
        """Where the user's program made this value, for error messages."""
        return ""

    jax_name: ClassVar[str] = "Tracer"
    """The name of JAX's tracer class playing this part, which JAX's messages show."""

    def _error_repr(self) -> str:
        return f"traced array with shape {self.aval.str_short(False)}"

    def _origin_msg(self) -> str:
        """Why the value is not concrete: the traced function and the arguments it depends on."""
        return ""

    def _concretization_error(self, what: str, suggest_astype: bool = False) -> NoReturn:
        context = f"The problem arose with the `{what}` function. "
        if suggest_astype:
            context += (
                "If trying to convert the data type of a value, try using "
                f"`x.astype({what})` or `jnp.array(x, {what})` instead."
            )
        raise self._not_concrete(context)

    def _not_concrete(self, context: str) -> ConcretizationTypeError:
        """JAX's error for this value used where a concrete one is needed (`context`: where)."""
        return ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected: "
            f"{self._error_repr()}\n{context}{self._origin_msg()}\n"
        )

    def _array_shape(self) -> tuple[int, ...]:
        """The shape for JAX's conversion checks: () for types that are not arrays."""
        shape: tuple[int, ...] = getattr(self.aval, "shape", ())
        return shape

    # As JAX's: the checks a concrete array makes come first (a non-scalar is refused as
    # such), then the error for the value being abstract.

    def __bool__(self) -> bool:
        size = 1
        for d in self._array_shape():
            size *= d
        check_bool_conversion(size)
        raise TracerBoolConversionError(
            f"Attempted boolean conversion of {self._error_repr()}.{self._origin_msg()}"
        )

    def __int__(self) -> int:
        check_scalar_conversion(self._array_shape())
        self._concretization_error("int", suggest_astype=True)

    def __float__(self) -> float:
        check_scalar_conversion(self._array_shape())
        self._concretization_error("float", suggest_astype=True)

    def __complex__(self) -> complex:
        check_scalar_conversion(self._array_shape())
        self._concretization_error("complex", suggest_astype=True)

    def item(self, *args: Any) -> Any:
        """A Python scalar needs a concrete value: JAX's error for a traced one."""
        raise self._not_concrete("This occurred in the item() method of jax.Array")

    def tolist(self) -> Any:
        """Python values need a concrete array: JAX's error (its text, origin twice)."""
        where = f"The tolist() method was called on {self._error_repr()}.{self._origin_msg()}"
        raise self._not_concrete(where)

    def __index__(self) -> int:
        check_integer_conversion(self._array_shape(), getattr(self.aval, "dtype", None))
        raise TracerIntegerConversionError(
            f"The __index__() method was called on {self._error_repr()}{self._origin_msg()}"
        )

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        raise TracerArrayConversionError(
            "The numpy.ndarray conversion method __array__() was called on "
            f"{self._error_repr()}{self._origin_msg()}"
        )

    __hash__ = None  # type: ignore[assignment]  # unhashable, with Python's message, as JAX's

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        # As JAX's: element i is a unit-stride slice of the leading axis, squeezed.
        item = _method("iter_item")
        return (item(self, i) for i in range(self.shape[0]))

    def _no_attribute(self, name: str) -> AttributeError:
        # JAX's texts: two methods of concrete arrays and `sharding` are named as such.
        if name in ("block_until_ready", "copy_to_host_async"):
            return AttributeError(
                f"The '{name}' method is not available on {self._error_repr()}.{self._origin_msg()}"
            )
        if name == "sharding":
            return AttributeError(
                f"The 'sharding' attribute is not available on {self._error_repr()}. To query "
                "sharding information on tracers, use `jax.typeof(x)`."
            )
        return AttributeError(f"{self.jax_name} has no attribute {name}")

    def copy(self) -> Any:
        """A copy (a `copy` equation), as `jnp.copy`."""
        return _method("method:copy")(self)

    def __copy__(self) -> Any:
        return self.copy()

    def __deepcopy__(self, memo: Any) -> Any:
        return self.copy()

    def __reversed__(self) -> Iterator[Any]:
        return iter(self[::-1])

    def short_repr(self) -> str:
        """What `repr` shows, as JAX 0.10.2's `_short_repr` of the same kind of tracer."""
        return f"{self.jax_name}<{self.aval}>"

    def __repr__(self) -> str:
        return self.short_repr()


def concrete_or_error(value: Any, context: str) -> Any:
    """`value` itself, or JAX's ConcretizationTypeError (`context` saying where) for a tracer."""
    if isinstance(value, Tracer):
        raise value._not_concrete(context)
    return value


def raise_escaped_tracer(tracer: Tracer, prim: Primitive | str | None = None) -> NoReturn:
    """Raise JAX's error for `tracer` used outside its trace (`prim`: what it was passed to)."""
    message = (
        "Encountered an unexpected tracer. A function transformed by JAX had a side effect, "
        "allowing for a reference to an intermediate value with type "
        f"{tracer.aval.str_short(False)} wrapped in a {tracer.jax_name} to escape the scope "
        "of the transformation.\nJAX transformations require that functions explicitly "
        "return their outputs, and disallow saving intermediate values to global state."
    )
    leaked_in = tracer._trace.describe()
    if leaked_in.startswith("the function "):
        message += f"\nThe function being traced when the value leaked was {leaked_in[13:]}."
    where = tracer.where_created()
    if where:
        divider = "\n" + "-" * 30 + "\n"
        message += f"{divider}The leaked intermediate value was created on line {where}. {divider}"
    name = prim.name if isinstance(prim, Primitive) else prim
    if name:
        message += f"\nIt was then passed to '{name}'."
    message += (
        "\nTo catch the leak earlier, try setting the environment variable "
        "JAX_CHECK_TRACER_LEAKS or using the `jax.checking_leaks` context manager."
    )
    raise UnexpectedTracerError(message)
