"""Options of JAX's other kinds (enums, strings, floats, objects), with JAX's parsers and errors.

`Config.define_bool`/`define_int` cover most of Lamina's own options; JAX has more kinds, and the
messages for a wrong value are part of its behaviour (`new enum value must be in [...]`). Each
definer here is JAX's `*_state` of the same name: the value a program sets goes through the
same checks, and the environment variable through JAX's `Invalid value "..." for JAX flag ...`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from lamina_core.config._config import Option, Support, config, parse_bool

E = TypeVar("E", bound=enum.Enum)


class NumpyDtypePromotion(enum.StrEnum):
    """`jax_numpy_dtype_promotion`'s values."""

    STANDARD = "standard"
    STRICT = "strict"


class LegacyPrngKeyState(enum.StrEnum):
    """`jax_legacy_prng_key`'s values."""

    ALLOW = "allow"
    WARN = "warn"
    ERROR = "error"


class ExplicitX64Mode(enum.IntEnum):
    """`jax_explicit_x64_dtypes`'s values; their names in lower case select them too."""

    WARN = enum.auto()
    ERROR = enum.auto()
    ALLOW = enum.auto()

    @classmethod
    def _missing_(cls, value: object) -> ExplicitX64Mode | None:
        return {"warn": cls.WARN, "error": cls.ERROR, "allow": cls.ALLOW}.get(str(value))


class RuntimeTracebackMode(enum.StrEnum):
    """`jax_send_traceback_to_runtime`'s values, in any case."""

    OFF = "off"
    ON = "on"
    FULL = "full"

    @classmethod
    def _missing_(cls, value: object) -> RuntimeTracebackMode | None:
        if isinstance(value, str):
            return cls.__members__.get(value.upper())
        return None


def _invalid_environment(name: str, text: str) -> ValueError:
    return ValueError(f'Invalid value "{text}" for JAX flag {name}')


def define_enum(
    name: str,
    values: Sequence[str],
    default: str,
    help: str,
    *,
    support: Support = Support.IMPLEMENTED,
) -> Option[str]:
    """A string option taking one of `values` (JAX's `enum_state`)."""

    def parse(text: str) -> str:
        if text not in values:
            raise _invalid_environment(name, text)
        return text

    def coerce(value: Any) -> str:
        if type(value) is not str or value not in values:
            raise ValueError(
                f"new enum value must be in {list(values)}, got {value} of type {type(value)}."
            )
        return value

    return config.define(name, default, parse, help, support=support, coerce=coerce)


def define_optional_enum(
    name: str,
    values: Sequence[str],
    default: str | None,
    help: str,
    *,
    support: Support = Support.IMPLEMENTED,
    validator: Callable[[str | None], None] | None = None,
) -> Option[str | None]:
    """A string option taking one of `values` or None (JAX's `optional_enum_state`)."""

    def parse(text: str) -> str | None:
        if text not in values:
            raise _invalid_environment(name, text)
        return text

    def coerce(value: Any) -> str | None:
        if value is not None and (type(value) is not str or value not in values):
            raise ValueError(
                f"new enum value must be None or in {list(values)}, got {value} of type "
                f"{type(value)}."
            )
        return value

    return config.define(name, default, parse, help, validator, support=support, coerce=coerce)


def define_enum_class(
    name: str,
    enum_class: type[E],
    default: E,
    help: str,
    *,
    support: Support = Support.IMPLEMENTED,
) -> Option[E]:
    """An option holding a member of `enum_class`, set by member or value (`enum_class_state`)."""

    def parse(text: str) -> E:
        try:
            return enum_class(text)
        except ValueError:
            raise _invalid_environment(name, text) from None

    def coerce(value: Any) -> E:
        if isinstance(value, str):
            return enum_class(value)
        if not isinstance(value, enum_class):
            raise TypeError(
                f"new enum value must be an instance of {enum_class}, got {value} of type "
                f"{type(value)}."
            )
        return value

    return config.define(name, default, parse, help, support=support, coerce=coerce)


def define_string(
    name: str,
    default: str | None,
    help: str,
    *,
    optional: bool = False,
    support: Support = Support.IMPLEMENTED,
) -> Option[Any]:
    """A string option (`string_state`), or a string-or-None one (`optional_string_state`)."""

    def coerce(value: Any) -> Any:
        if optional and value is not None and not isinstance(value, str):
            raise ValueError(
                "new string config value must be None or of type str, got "
                f"{value} of type {type(value)}."
            )
        if not optional and not isinstance(value, str):
            raise TypeError(
                f"new string config value must be of type str, got {value} of type {type(value)}."
            )
        return value

    return config.define(name, default, str, help, support=support, coerce=coerce)


def define_number(
    name: str,
    default: Any,
    help: str,
    *,
    kind: type = int,
    support: Support = Support.IMPLEMENTED,
) -> Option[Any]:
    """An int (`int_state`) or float (`float_state`) option; both accept None, as JAX's."""
    accepted: tuple[type, ...] = (int,) if kind is int else (float, int)

    def coerce(value: Any) -> Any:
        if value is not None and not isinstance(value, accepted):
            raise ValueError(
                f"new {kind.__name__} config value must be None or of type {kind.__name__}, "
                f"got {value} of type {type(value)}"
            )
        return value

    def parse(text: str) -> Any:
        try:
            return kind(text)
        except ValueError:
            raise _invalid_environment(name, text) from None

    return config.define(name, default, parse, help, support=support, coerce=coerce)


def define_object(
    name: str,
    default: Any,
    help: str,
    *,
    parse: Callable[[str], Any] = str,
    validator: Callable[[Any], None] | None = None,
    support: Support = Support.IMPLEMENTED,
) -> Option[Any]:
    """An option taking any value `validator` accepts (`string_or_object_state`, and JAX's
    `Flag`s, which check nothing); the environment gives it a string."""

    def coerce(value: Any) -> Any:
        if validator is not None:
            validator(value)
        return value

    return config.define(name, default, parse, help, support=support, coerce=coerce)


def define_flag_bool(
    name: str, default: bool, help: str, *, support: Support = Support.IMPLEMENTED
) -> Option[bool]:
    """A bool option as JAX's: any value is taken by its truth."""
    return config.define(name, default, parse_bool, help, support=support, coerce=bool)


def define_flag(
    name: str,
    default: Any,
    help: str,
    *,
    kind: type = str,
    support: Support = Support.IMPLEMENTED,
) -> Option[Any]:
    """An option JAX keeps as a plain `Flag`: `update` takes any value as it is, unchecked, as
    JAX's does; the environment gives it a value of `kind` (bool, int or str)."""
    parse: Callable[[str], Any] = parse_bool if kind is bool else kind
    return config.define(name, default, parse, help, support=support, coerce=_unchecked)


def _unchecked(value: Any) -> Any:
    return value
