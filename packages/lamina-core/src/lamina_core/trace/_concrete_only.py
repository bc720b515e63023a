"""The members of `jax.Array` that only a materialized array has, on tracers: each raises JAX's
ConcretizationTypeError naming itself, as JAX's tracers do (`x.devices()` under `jit`).

A mixin of `Tracer`, which supplies `_not_concrete`, `_error_repr` and `_origin_msg`.
"""

from __future__ import annotations

from typing import Any, NoReturn, Protocol


class _Traced(Protocol):
    def _error_repr(self) -> str: ...

    def _origin_msg(self) -> str: ...

    def _not_concrete(self, context: str) -> Exception: ...


def _called(self: _Traced, what: str) -> NoReturn:
    raise self._not_concrete(f"The {what} was called on {self._error_repr()}.{self._origin_msg()}")


def _unavailable(self: _Traced, attribute: str) -> NoReturn:
    raise self._not_concrete(
        f"The '{attribute}' attribute is not available on {self._error_repr()}.{self._origin_msg()}"
    )


class ConcreteOnlyMethods:
    """Raise JAX's errors for what needs an array's buffer; every member is JAX's."""

    __slots__ = ()

    def addressable_data(self: Any, index: int) -> NoReturn:
        _called(self, "addressable_data() method")

    def delete(self: Any) -> NoReturn:
        _called(self, "delete() method")

    def devices(self: Any) -> NoReturn:
        _called(self, "devices() method")

    def is_deleted(self: Any) -> NoReturn:
        _called(self, "is_deleted() method")

    def on_device_size_in_bytes(self: Any) -> NoReturn:
        _called(self, "on_device_size_in_bytes() method")

    def unsafe_buffer_pointer(self: Any) -> NoReturn:
        _called(self, "unsafe_buffer_pointer() method")

    def tobytes(self: Any, order: str = "C") -> NoReturn:
        _called(self, "tobytes() method")

    def __dlpack__(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
        _called(self, "__dlpack__() method")

    @property
    def global_shards(self: Any) -> NoReturn:
        _called(self, "global_shards property")

    @property
    def is_fully_addressable(self: Any) -> NoReturn:
        _called(self, "is_fully_addressable property")

    @property
    def is_fully_replicated(self: Any) -> NoReturn:
        _called(self, "is_fully_replicated property")

    @property
    def traceback(self: Any) -> NoReturn:
        _called(self, "traceback property")

    @property
    def committed(self: Any) -> NoReturn:
        _unavailable(self, "committed")

    @property
    def addressable_shards(self: Any) -> NoReturn:
        _unavailable(self, "addressable_shards")
