"""Named events and their listeners, as `jax.monitoring`: code marks an event (or its duration,
time span or a scalar); every listener registered for that kind is called with it.

The runtime records JAX's `/jax/core/compile/backend_compile_duration` around each XLA
compilation, so tools written against JAX's events see Lamina's compilations too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

Listener = Callable[..., None]
"""A listener: called with the event's name, its value (a duration, a start and end time, or
a scalar; none for a plain event) and the event's keyword arguments. (Callable, not JAX's
Protocols: this module loads with the runtime, and Protocol classes cost start-up time.)"""


class _Listeners:
    """The listeners of each kind of event (a registry: users add and remove listeners)."""

    __slots__ = ("duration", "event", "scalar", "time_span")

    def __init__(self) -> None:
        self.event: list[Listener] = []
        self.duration: list[Listener] = []
        self.time_span: list[Listener] = []
        self.scalar: list[Listener] = []


_LISTENERS: Final = _Listeners()


def record_event(event: str, **kwargs: str | int) -> None:
    """Record `event`; keyword arguments, if any, must come in the same order each time."""
    for callback in list(_LISTENERS.event):
        callback(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Record that `event` took `duration` seconds."""
    for callback in list(_LISTENERS.duration):
        callback(event, duration, **kwargs)


def record_event_time_span(
    event: str, start_time: float, end_time: float, **kwargs: str | int
) -> None:
    """Record that `event` ran from `start_time` to `end_time` (seconds)."""
    for callback in list(_LISTENERS.time_span):
        callback(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Record a scalar summary `value` of `event`."""
    for callback in list(_LISTENERS.scalar):
        callback(event, value, **kwargs)


def register_event_listener(callback: Listener) -> None:
    """Call `callback` on every `record_event`."""
    _LISTENERS.event.append(callback)


def register_event_duration_secs_listener(callback: Listener) -> None:
    """Call `callback` on every `record_event_duration_secs`."""
    _LISTENERS.duration.append(callback)


def register_event_time_span_listener(callback: Listener) -> None:
    """Call `callback` on every `record_event_time_span`."""
    _LISTENERS.time_span.append(callback)


def register_scalar_listener(callback: Listener) -> None:
    """Call `callback` on every `record_scalar`."""
    _LISTENERS.scalar.append(callback)


def _unregister(listeners: list[Any], callback: Any) -> None:
    assert callback in listeners  # JAX's check: unregistering an unknown listener is a bug
    listeners.remove(callback)


def unregister_event_listener(callback: Listener) -> None:
    """Stop calling `callback` on events."""
    _unregister(_LISTENERS.event, callback)


def unregister_event_duration_listener(callback: Listener) -> None:
    """Stop calling `callback` on durations."""
    _unregister(_LISTENERS.duration, callback)


def unregister_event_time_span_listener(callback: Listener) -> None:
    """Stop calling `callback` on time spans."""
    _unregister(_LISTENERS.time_span, callback)


def unregister_scalar_listener(callback: Listener) -> None:
    """Stop calling `callback` on scalars."""
    _unregister(_LISTENERS.scalar, callback)


def clear_event_listeners() -> None:
    """Forget every listener (JAX's version leaves scalar listeners behind; this clears all)."""
    _LISTENERS.event.clear()
    _LISTENERS.duration.clear()
    _LISTENERS.time_span.clear()
    _LISTENERS.scalar.clear()


BACKEND_COMPILE_EVENT: Final = "/jax/core/compile/backend_compile_duration"


def record_compile(fun_name: str, start: float, end: float) -> None:
    """Record one XLA compilation as JAX does: its duration and its time span."""
    record_event_duration_secs(BACKEND_COMPILE_EVENT, end - start, fun_name=fun_name)
    record_event_time_span(BACKEND_COMPILE_EVENT, start, end, fun_name=fun_name)
