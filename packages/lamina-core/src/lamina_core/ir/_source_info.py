"""Where in the user's program an equation came from.

Tracing records, for each equation, the innermost frame outside Lamina's own packages. Each
layer registers its package folder at import so its frames are skipped; nothing else is kept
of the stack (no locals stay alive), and line and column are decoded only when printed.
"""

from __future__ import annotations

import os
import sys
from contextvars import ContextVar, Token
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Final

from lamina_core.ir._named_scopes import NameStack, name_stack_var

_internal_dirs: list[str] = []
_is_internal: dict[CodeType, bool] = {}
"""Memo per code object; cleared when a package registers (a cache, not state)."""


def register_internal_path(package_file: str) -> None:
    """Mark a package's folder as Lamina-internal; call with the package's `__file__`."""
    folder = os.path.dirname(os.path.abspath(package_file)) + os.sep
    if folder not in _internal_dirs:
        _internal_dirs.append(folder)
        _is_internal.clear()


def exclude_path(prefix: str) -> None:
    """Skip frames whose file name starts with `prefix`, as Lamina's own (a library's request,
    JAX's `source_info_util.register_exclusion`)."""
    if prefix not in _internal_dirs:
        _internal_dirs.append(prefix)
        _is_internal.clear()


def is_internal_code(code: CodeType) -> bool:
    """Whether `code` is in a folder registered with `register_internal_path`."""
    known = _is_internal.get(code)
    return _classify(code) if known is None else known


def _classify(code: CodeType) -> bool:
    internal = code.co_filename.startswith(tuple(_internal_dirs))
    _is_internal[code] = internal
    return internal


@dataclass(slots=True, eq=False)
class SourceInfo:
    """The user frame an equation was traced from (code object and instruction offset), and
    the name stack open when it was staged.

    Treated as immutable; not `frozen` because one is made per traced equation and a frozen
    dataclass's constructor costs twice as much (measured).
    """

    code: CodeType | None
    lasti: int = -1
    name_stack: NameStack = ()

    @property
    def function(self) -> str:
        # The qualified name, as JAX prints it (`test.<locals>.f`).
        return "<unknown>" if self.code is None else self.code.co_qualname

    @property
    def position(self) -> tuple[str, int, int]:
        """(file, line, column) with a 1-based line and a 0-based column, as JAX prints."""
        if self.code is None:
            return ("<unknown>", 0, 0)
        line, col = self.code.co_firstlineno, 0
        if self.lasti >= 0:
            positions = list(self.code.co_positions())
            index = self.lasti // 2
            if index < len(positions):
                start_line, _, start_col, _ = positions[index]
                line = start_line if start_line is not None else line
                col = start_col if start_col is not None else 0
        return (self.code.co_filename, line, col)

    def summary(self) -> str:
        """`file:line:col (function)`, the form printed by `pretty_print(source_info=True)`."""
        filename, line, col = self.position
        return f"{filename}:{line}:{col} ({self.function})"


NO_SOURCE_INFO: Final = SourceInfo(None)


_fixed: ContextVar[SourceInfo | None] = ContextVar("lamina_fixed_source_info", default=None)


def fix_source_info(info: SourceInfo | None) -> Token[SourceInfo | None]:
    """Make `current_source_info` return `info`'s frame until `unfix_source_info(token)`
    (with the name stack open when it is called).

    Transformations use it so the equations one rule stages all carry the source info of the
    equation (or user line) they come from, without walking the stack for each.
    """
    previous = _fixed.get()
    try:
        return _fixed.set(info)
    except BaseException:  # a KeyboardInterrupt as `set` returned: the caller has no token
        _fixed.set(previous)
        raise


def unfix_source_info(token: Token[SourceInfo | None]) -> None:
    _fixed.reset(token)


def current_source_info() -> SourceInfo:
    """The source info of the innermost user frame of the calling thread."""
    fixed = _fixed.get()
    stack = name_stack_var.get()
    if fixed is not None:
        if fixed.name_stack is stack:
            return fixed
        return SourceInfo(fixed.code, fixed.lasti, stack)
    # One loop, no helper calls: this runs once per traced equation.
    frame: FrameType | None = sys._getframe(1)
    known = _is_internal
    while frame is not None:
        code = frame.f_code
        internal = known.get(code)
        if internal is None:
            internal = _classify(code)
        if not internal:
            return SourceInfo(code, frame.f_lasti, stack)
        frame = frame.f_back
    return SourceInfo(None, -1, stack) if stack else NO_SOURCE_INFO


register_internal_path(__file__)
