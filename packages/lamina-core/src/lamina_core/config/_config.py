"""Lamina's configuration: typed options, `config.update`, and scoped overrides.

Option names mirror `jax.config` (`jax_enable_x64`, ...). A value comes from, in order: the
innermost `with config(...)` scope (a context variable, so threads and tasks do not see each
other's scopes), a `config.update` call, the environment (`LAMINA_<NAME>` first, then `JAX_<NAME>`,
read once, the first time the option is read), and the option's default.

Layers define their own options with `define` at import time; core knows none of theirs.
"""

from __future__ import annotations

import contextlib
import enum
import os
import sys
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType, TracebackType
from typing import Any, Final, Generic, NamedTuple, Protocol, TypeVar

from lamina_core.config import _dispatch_context as dispatch_context

T = TypeVar("T")

_TRUE: Final = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE: Final = frozenset({"0", "false", "f", "no", "n", "off"})


def parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError(f"expected a boolean (1/0, true/false, yes/no, on/off), got {text!r}")


_NO_VALUE: Final = object()
F = TypeVar("F", bound=Callable[..., Any])


class Scope(Protocol):
    """What an option's call returns: a `with` block, or a decorator running a function in it."""

    def __enter__(self) -> None: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None: ...

    def __call__(self, func: F) -> F: ...


class Support(enum.Enum):
    """How Lamina treats an option of `jax.config` (docs/config-options.md lists each)."""

    IMPLEMENTED = "implemented"
    """With JAX's meaning."""
    NO_EFFECT = "accepted"
    """Set and read back, without effect: it tunes what Lamina does not have (XLA's GPU and
    TPU passes, Pallas, jax2tf, multi-host transfers, logging), never what a program computes."""
    REFUSED = "refused"
    """Only its default is accepted: another value would change results or jaxprs in a way
    Lamina does not implement, so setting one raises instead of being ignored."""


@dataclass(eq=False, slots=True)
class Option(Generic[T]):
    """One configuration option. Identity is intended: the registry holds each once."""

    name: str
    default: T
    parse: Callable[[str], T]
    help: str
    _config: Config = field(repr=False)
    validator: Callable[[T], None] | None = None
    """Called with each value `update` or a scope sets, before it takes effect (it may raise,
    or pass the value on to where it acts, as the device count to the backend)."""
    support: Support = Support.IMPLEMENTED
    coerce: Callable[[Any], T] | None = None
    """JAX's parser of a value given to `update` or a scope (it checks an enum's values with
    JAX's message, turns a name into an enum member); None: the bool/int checks of `_check`."""
    placeholder: bool = False
    """Defined by the table of JAX's options (`lamina_runtime.jax_options`): a later `define`
    of the same name by the layer that implements it takes its place."""
    on_update: Callable[[T], None] | None = None
    """Called with each value `update` sets for the whole process (JAX's global hook): passes
    it on to where it acts outside Lamina (jaxlib's transfer guards)."""
    on_scope: Callable[[T], contextlib.AbstractContextManager[None]] | None = None
    """A context entered for the duration of each scope setting the option (JAX's thread-local
    hook), for the same purpose."""

    @property
    def value(self) -> T:
        """The value in effect here and now."""
        return self._config._read(self)

    def __call__(self, value: Any = _NO_VALUE) -> Scope:
        """A scope (or decorator) with this option set to `value`, as JAX's top-level flags
        (`with lamina.enable_x64(True): ...`); a bool option without a value means True."""
        if value is _NO_VALUE:
            if not isinstance(self.default, bool):
                bare = self.name.removeprefix("jax_")
                raise TypeError(
                    f"Context manager for {bare} config option requires an argument "
                    "representing the new value for the config option."
                )
            value = True
        return self._config(**{self.name: value})

    def __bool__(self) -> bool:
        # `if lamina.enable_x64:` would always be true: JAX refuses it the same way.
        raise TypeError(
            f"bool() not supported for instances of type '{type(self).__name__}' "
            f"(did you mean to use '{type(self).__name__}.value' instead?)"
        )

    @property
    def env_names(self) -> tuple[str, str]:
        bare = self.name.removeprefix("jax_").upper()
        return f"LAMINA_{bare}", f"JAX_{bare}"


class _Scope(NamedTuple):
    """The options a `with config(...)` block sets, and a key equal for equal settings."""

    values: Mapping[str, Any]
    key: Hashable


def _content_key(values: Mapping[str, Any]) -> Hashable:
    key = frozenset(values.items())
    try:
        hash(key)
    except TypeError:  # an unhashable option value: this scope's own key, equal to no other
        return object()
    return key


_NO_OVERRIDES: Final = _Scope(MappingProxyType({}), frozenset())


class Config:
    """The set of options and their values. `lamina.config` is the process's instance."""

    def __init__(self) -> None:
        self._options: dict[str, Option[Any]] = {}
        self._values: dict[str, Any] = {}
        self._scoped: ContextVar[_Scope] = ContextVar(
            f"lamina_config_{id(self)}", default=_NO_OVERRIDES
        )
        self._version = 0
        """Bumped by every `update`: caches compare `token()`s, not values."""
        self.touched: set[str] = set()
        """Options that may not have their default value somewhere (set by `update`, a scope
        or the environment): a hot path asks this set before reading a rarely used option."""
        self._trace_context: tuple[int, _Scope | None, bool, tuple[Any, ...]] = (
            -1,
            None,
            False,
            (),
        )

    def define(
        self,
        name: str,
        default: T,
        parse: Callable[[str], T],
        help: str,
        validator: Callable[[T], None] | None = None,
        *,
        support: Support = Support.IMPLEMENTED,
        coerce: Callable[[Any], T] | None = None,
        placeholder: bool = False,
    ) -> Option[T]:
        """Register an option; layers call this at import time."""
        known = self._options.get(name)
        if known is not None and not known.placeholder:
            raise ValueError(f"configuration option {name!r} is already defined")
        option = Option(name, default, parse, help, self, validator, support, coerce, placeholder)
        self._options[name] = option
        if any(env_name in os.environ for env_name in option.env_names):
            self.touched.add(name)
            if support is Support.REFUSED:
                # Read now, as JAX reads its environment at import: a value Lamina would
                # silently ignore must stop the program before it computes anything.
                self._check(name, self._from_environment(option))
        return option

    def define_bool(
        self, name: str, default: bool, help: str, *, support: Support = Support.IMPLEMENTED
    ) -> Option[bool]:
        return self.define(name, default, parse_bool, help, support=support)

    def define_int(
        self, name: str, default: int, help: str, *, support: Support = Support.IMPLEMENTED
    ) -> Option[int]:
        return self.define(name, default, int, help, support=support)

    def option(self, name: str) -> Option[Any]:
        try:
            return self._options[name]
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None

    def options(self) -> Mapping[str, Option[Any]]:
        """Every option defined so far, by name."""
        return MappingProxyType(self._options)

    def _read(self, option: Option[T]) -> T:
        scoped = self._scoped.get().values
        if option.name in scoped:
            value: T = scoped[option.name]
            return value
        if option.name not in self._values:
            self._values[option.name] = self._from_environment(option)
        stored: T = self._values[option.name]
        return stored

    @staticmethod
    def _from_environment(option: Option[T]) -> T:
        for env_name in option.env_names:
            text = os.environ.get(env_name)
            if text is not None:
                try:
                    return option.parse(text)
                except ValueError as err:
                    raise ValueError(f"environment variable {env_name}: {err}") from None
        return option.default

    def _check(self, name: str, value: Any) -> Any:
        """`value` as the option holds it (JAX's parser applied), or JAX's error."""
        option = self.option(name)
        if option.coerce is not None:
            value = option.coerce(value)
        elif isinstance(option.default, bool):
            if option.validator is not None:
                option.validator(value)
            value = bool(value)  # as JAX's bool options: any value, by its truth
        elif isinstance(option.default, int) and (
            isinstance(value, bool) or not isinstance(value, int)
        ):
            raise ValueError(  # JAX's `int_state` text
                f"new int config value must be None or of type int, got {value} of type "
                f"{type(value)}"
            )
        elif isinstance(option.default, float) and not isinstance(value, (float, int)):
            raise ValueError(  # JAX's `float_state` text
                f"new float config value must be None or of type float, got {value} of type "
                f"{type(value)}"
            )
        if option.support is Support.REFUSED and value != option.default:
            raise NotImplementedError(
                f"config option {name}={value!r} is not supported by Lamina: only its default, "
                f"{option.default!r}, is (see docs/config-options.md)"
            )
        if option.validator is not None and not isinstance(option.default, bool):
            option.validator(value)
        return value

    def update(self, name: str, value: Any) -> None:
        """Set an option for the whole process, as `jax.config.update` does."""
        self._values[name] = value = self._check(name, value)
        hook = self._options[name].on_update
        if hook is not None:
            hook(value)
        self.touched.add(name)
        self._version += 1
        dispatch_context.changed_globally()

    def token(self) -> tuple[int, Hashable]:
        """A cheap value that changes whenever the options in effect here may have changed.

        Hot paths (the jit dispatch cache) key on it instead of reading every option. Scopes
        overriding the same options with the same values have equal tokens, so a loop opening
        `with enable_x64():` finds its earlier entries instead of adding one per scope.
        """
        return (self._version, self._scoped.get().key)

    @contextlib.contextmanager
    def __call__(self, **overrides: Any) -> Iterator[None]:
        """Override options inside a `with` block, for this thread or task only."""
        overrides = {name: self._check(name, value) for name, value in overrides.items()}
        self.touched.update(overrides)
        # Restores what it read, not a token: an interrupt as `set` returns would lose the
        # token and keep the scope's options for good (tests/test_interrupts.py).
        previous = self._scoped.get()
        try:
            values = MappingProxyType({**previous.values, **overrides})
            self._scoped.set(_Scope(values, _content_key(values)))
            hooks = [
                (hook, value)
                for name, value in overrides.items()
                if (hook := self._options[name].on_scope) is not None
            ]
            with dispatch_context.local_scope(self.token()):
                if not hooks:
                    yield
                else:
                    with contextlib.ExitStack() as stack:
                        for hook, value in hooks:
                            stack.enter_context(hook(value))
                        yield
        finally:
            self._scoped.set(previous)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._read(self.option(name))

    @property
    def values(self) -> Mapping[str, Any]:
        """Every option's value in effect here and now."""
        return {name: self._read(option) for name, option in sorted(self._options.items())}

    def trace_context(self) -> tuple[Any, ...]:
        """The values that change what tracing produces; part of every tracing cache key."""
        scope = self._scoped.get()
        replaying = _replaying.get()
        # Remembered for the options in effect (the version and the scope object): every
        # staged call and control-flow primitive asks, and there are a dozen options to read.
        version, known_scope, known_replaying, context = self._trace_context
        if version == self._version and known_scope is scope and known_replaying is replaying:
            return context
        context = (
            enable_x64.value,
            use_simplified_jaxpr_constants.value,
            replaying,
            *[option.value for option in _tracing_options],
            *[context.value for context in _user_contexts],
        )
        self._trace_context = (self._version, scope, replaying, context)
        return context

    @property
    def x64_enabled(self) -> bool:
        """`jax_enable_x64`'s value (JAX's `config.x64_enabled`)."""
        return bool(enable_x64.value)

    def read(self, name: str) -> Any:
        """The value of option `name` in effect here (JAX's `config.read`)."""
        return self._read(self.option(name))

    def parse_flags_with_absl(self) -> None:
        """Apply `--jax_...` command-line flags (`--name=value`, `--name`, `--noname`) as
        `update`s, as JAX's `config.parse_flags_with_absl` does, without needing absl."""
        for arg in sys.argv[1:]:
            if arg == "--":
                break
            if not arg.startswith("--jax") and not arg.startswith("--nojax"):
                continue
            name, has_value, text = arg[2:].partition("=")
            if has_value:
                option = self.option(name)
                self.update(name, option.parse(text))
            elif name.startswith("no") and name[2:] in self._options:
                self.update(name[2:], False)
            else:
                self.update(name, True)


_replaying: ContextVar[bool] = ContextVar("lamina_replaying_equations", default=False)

_tracing_options: list[Option[Any]] = []


def affects_tracing(option: Option[T]) -> Option[T]:
    """Make `option` part of every tracing cache key (`trace_context`): a layer defining an
    option that changes what its functions stage (`jax_threefry_partitionable` changes how
    keys split) registers it here, so a change of value traces again, as in JAX."""
    _tracing_options.append(option)
    config._trace_context = (-1, None, False, ())  # remembered without it
    return option


@contextlib.contextmanager
def replaying_equations() -> Iterator[None]:
    """Scope of re-running recorded equations (`eval_jaxpr`, transposition).

    JAX re-runs each equation inside the context recorded with it, whose abstract mesh is
    part of its tracing caches' keys: what rules trace there (a scatter's update jaxpr, a jit)
    is not shared with what user code traced outside, so it prints as a separate jaxpr.
    Lamina has no meshes; this flag in `trace_context` stands for that difference.
    """
    previous = _replaying.get()
    try:
        _replaying.set(True)  # inside: an interrupt as it returns must not keep it set
        yield
    finally:
        _replaying.set(previous)


config: Final = Config()

enable_x64: Final = config.define_bool(
    "jax_enable_x64", False, "Keep 64-bit types; when off, 64-bit requests become 32-bit."
)
use_simplified_jaxpr_constants: Final = config.define_bool(
    "jax_use_simplified_jaxpr_constants",
    True,
    "Closed-over constants stay literals in jaxprs and become const args when lowered "
    "(seed 000). Off: the previous constvars form, with constants inlined in the lowering.",
)
disable_jit: Final = config.define_bool(
    "jax_disable_jit",
    False,
    "Jitted functions run their Python body op by op, unstaged, as under `jax.disable_jit()`.",
)
log_compiles: Final = config.define_bool(
    "jax_log_compiles",
    False,
    "Log each trace, lowering and compilation of a jitted function (at WARNING; DEBUG when "
    "off) to JAX's loggers (`jax._src.dispatch`, `jax._src.interpreters.pxla`), as JAX does.",
)
no_tracing: Final = config.define_bool(
    "jax_no_tracing", False, "Disallow tracing for JIT compilation (a trace cache miss raises)."
)
enable_checks: Final = config.define_bool(
    "jax_enable_checks",
    False,
    "Type-check every jaxpr a jitted function is traced to (raising JaxprTypeError).",
)
debug_nans: Final = config.define_bool(
    "jax_debug_nans",
    False,
    "Raise FloatingPointError when an operation or a jitted call produces a NaN.",
)
debug_infs: Final = config.define_bool(
    "jax_debug_infs",
    False,
    "Raise FloatingPointError when an operation or a jitted call produces an infinity.",
)


def disable_jit_scope(disable: bool = True) -> Scope:
    """`jax.disable_jit`: inside the block (or the decorated function), jitted functions run
    their Python body directly, each operation on its own."""
    return disable_jit(disable)


_user_contexts: list[Option[Any]] = []


class UserContext:
    """A value of the user's that jitted functions depend on (`jax.make_user_context`): a
    change of value makes them trace, lower and compile again, as a change of `enable_x64`
    does. Values must be hashable."""

    def __init__(self, default_value: Any) -> None:
        name = f"user_context_{len(_user_contexts)}"
        self._option: Option[Any] = config.define(name, default_value, _no_parse, help=name)
        _user_contexts.append(self._option)

    @property
    def value(self) -> Any:
        return self._option.value

    def get_global(self) -> Any:
        return config._values.get(self._option.name, self._option.default)

    def set_global(self, new_value: Any) -> None:
        config.update(self._option.name, new_value)

    def __call__(self, new_value: Any) -> Scope:
        return config(**{self._option.name: new_value})


def _no_parse(text: str) -> Any:
    raise ValueError("a user context cannot be set from the environment")


def make_user_context(default_value: Any = None) -> UserContext:
    """A new jit-cache-sensitive context with `default_value` outside any `with` block."""
    return UserContext(default_value)
