"""Traceback filtering at the API boundary (`jax_traceback_filtering`), as JAX's.

An exception leaving a transformation the user called (a jitted function, `grad(f)`, `vmap(f)`)
has most of its frames inside Lamina. At the outermost such call (`api_boundary`), Lamina's
frames are removed from the traceback and a note says so (JAX's default, "quiet_remove_frames"),
or the whole traceback is kept as the cause ("remove_frames"), or frames are only marked
(`__tracebackhide__`, "tracebackhide"), or nothing is done ("off"). Frames are Lamina's when
their code lies in a package registered with `register_internal_path`.

Nothing here runs unless an exception is raised: the boundary is one `try` around the call.
"""

from __future__ import annotations

import functools
import sys
import traceback
import types
from collections.abc import Callable
from typing import Any, Final, TypeVar

from lamina_core.config import define_enum
from lamina_core.ir import is_internal_code

F = TypeVar("F", bound=Callable[..., Any])

traceback_filtering: Final = define_enum(
    "jax_traceback_filtering",
    ("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto"),
    "auto",
    "Controls how internal frames are filtered out of tracebacks: off, tracebackhide, "
    "remove_frames, quiet_remove_frames, or auto (tracebackhide under a recent IPython, else "
    "quiet_remove_frames).",
)

SIMPLIFIED_MESSAGE: Final = (
    "For simplicity, JAX has removed its internal frames from the traceback of the following "
    "exception. Set JAX_TRACEBACK_FILTERING=off to include these."
)
_UNFILTERED_APPENDIX: Final = (
    "The stack trace below excludes JAX-internal frames.\n"
    "The preceding is the original exception that occurred, unmodified.\n"
    "\n--------------------"
)


class UnfilteredStackTrace(Exception):
    """The cause attached under "remove_frames": the exception with every frame kept."""


def _mode() -> str:
    mode = traceback_filtering.value
    if mode == "auto":
        ipython = sys.modules.get("IPython")
        shell = getattr(ipython, "get_ipython", None) if ipython is not None else None
        running = shell is not None and shell() is not None
        version = getattr(ipython, "version_info", (0, 0))
        return (
            "tracebackhide"
            if running and tuple(version[:2]) >= (7, 17)
            else ("quiet_remove_frames")
        )
    return str(mode)


def _kept(frame: types.FrameType) -> bool:
    return not is_internal_code(frame.f_code)


def filter_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """`tb` without the frames of Lamina's registered packages."""
    out = None
    for frame, line in reversed(list(traceback.walk_tb(tb))):
        if _kept(frame):
            out = types.TracebackType(out, frame, frame.f_lasti, line)
    return out


def _with_callers(tb: types.TracebackType) -> types.TracebackType:
    # The user's frames that called the boundary, up to the first run of module-level frames
    # (so a REPL's own frames are left out), as JAX adds them to the unfiltered trace.
    out = tb
    reached_module = False
    for frame, line in traceback.walk_stack(tb.tb_frame):
        if "importlib._bootstrap" in frame.f_code.co_filename:
            continue
        if reached_module and frame.f_code.co_name != "<module>":
            break
        if _kept(frame):
            out = types.TracebackType(out, frame, frame.f_lasti, line)
        reached_module = reached_module or frame.f_code.co_name == "<module>"
    return out


def _under_another_boundary(frame: types.FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code is _BOUNDARY_CODE:
            return True
        frame = frame.f_back
    return False


def _filter(error: Exception, boundary: types.FrameType) -> None:
    mode = _mode()
    if mode == "off" or _under_another_boundary(boundary.f_back):
        return
    tb = error.__traceback__
    if mode == "tracebackhide":
        for frame, _ in traceback.walk_tb(tb):
            if not _kept(frame):
                frame.f_locals["__tracebackhide__"] = True
        return
    if tb is None:
        return
    error.with_traceback(filter_traceback(tb))
    if mode == "quiet_remove_frames":
        error.add_note("--------------------\n" + SIMPLIFIED_MESSAGE)
        return
    text = "".join(traceback.format_exception_only(type(error), error)).strip()
    unfiltered = UnfilteredStackTrace(f"{text}\n\n{_UNFILTERED_APPENDIX}")
    unfiltered.with_traceback(_with_callers(tb))
    unfiltered.__cause__ = error.__cause__
    unfiltered.__context__ = error.__context__
    unfiltered.__suppress_context__ = error.__suppress_context__
    error.__cause__ = unfiltered
    error.__context__ = None


def api_boundary(fun: F) -> F:
    """`fun` as an API boundary: an exception leaving the outermost boundary has Lamina's
    frames filtered out of its traceback as `jax_traceback_filtering` says."""

    @functools.wraps(fun)
    def boundary(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        try:
            return fun(*args, **kwargs)
        except Exception as error:
            _filter(error, sys._getframe())
            raise

    return boundary  # type: ignore[return-value]  # the same signature as `fun`


_BOUNDARY_CODE: Final = api_boundary(print).__code__
"""The code of every boundary's frame: a boundary below another leaves the filtering to it."""
