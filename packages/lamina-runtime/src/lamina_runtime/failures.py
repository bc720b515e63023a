"""What a failed execution leaves behind: the exception a host callback raised, and the buffers
the failed call consumed.

XLA catches a host callback's exception and reports only its formatted text (as a
`JaxRuntimeError`); `recording` keeps the exception object itself, so the runtime can chain it
as the error's `__cause__`, traceback included. A buffer donated to a call (a donated
argument, a Ref's value) is gone once the call starts, even if it then fails: `consumed`
remembers why, so the next use says "donated to a call that failed" and names the cause.

Both records are keyed so that nothing is kept alive for them: the exceptions only until the
failed call reads them back (a few at most), the causes only as long as their buffers.
"""

from __future__ import annotations

import collections
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Final

_lock: Final = threading.Lock()
_raised: Final[collections.deque[BaseException]] = collections.deque(maxlen=16)
"""Exceptions raised by host callbacks, newest last, until their call's error takes them (a
bound: a callback whose error never reaches a failed call, e.g. caught by XLA, drops out)."""
_consumed: Final[dict[int, tuple[weakref.ref[Any], BaseException]]] = {}
"""Device arrays consumed by a failed call (by identity: they are unhashable), to the error
that call ended with; an entry goes with its array."""


def recording(callback: Callable[..., Any]) -> Callable[..., Any]:
    """`callback` (a host callback handed to XLA), keeping what it raises for `raised_by`."""

    def host_callback(*args: Any) -> Any:
        try:
            return callback(*args)
        except BaseException as exc:
            with _lock:
                _raised.append(exc)
            raise

    return host_callback


def _summary(exc: BaseException) -> str:
    """The last line of `exc`'s traceback as XLA writes it (the class by its bare name)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def raised_by(error: BaseException) -> BaseException | None:
    """The host callback exception XLA's `error` reports (its text ends the message), taken
    out of the record; None if the call failed for another reason."""
    message = str(error)
    with _lock:
        for exc in reversed(_raised):
            if message.rstrip().endswith(_summary(exc)):
                _raised.remove(exc)
                return exc
    return None


def mark_consumed(bufs: Sequence[Any], cause: BaseException) -> None:
    """Remember that a failed call consumed `bufs` (those of its inputs deleted since it
    started: they were all alive then) and failed with `cause`."""
    for buf in bufs:
        key = id(buf)
        with _lock:
            _consumed[key] = (weakref.ref(buf, _forgetting(key)), cause)


def _forgetting(key: int) -> Callable[[weakref.ref[Any]], None]:
    def forget(_: weakref.ref[Any]) -> None:
        with _lock:
            _consumed.pop(key, None)

    return forget


def consumed_by(buf: Any) -> BaseException | None:
    """The failure of the call that consumed `buf`, if a failed call did."""
    with _lock:
        held, cause = _consumed.get(id(buf), (None, None))
    return cause if held is not None and held() is buf else None


def deleted_message(shape: str, cause: BaseException | None) -> str:
    """JAX's message for a deleted array of type `shape`, with the failed call that consumed it."""
    if cause is None:
        return f"Array has been deleted with shape={shape}."
    # The first line: XLA's errors go on with the callback's whole traceback.
    first = _summary(cause).splitlines()[0]
    return (
        f"Array has been deleted with shape={shape}: it was donated to a call that failed: {first}"
    )
