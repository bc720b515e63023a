"""`jax.extend.source_info_util`: where traced operations came from, over Lamina's source info.

Lamina records one user frame per equation (`lamina_core.ir.SourceInfo`), the innermost one
outside Lamina's packages and the paths libraries exclude with `register_exclusion` (flax
excludes its own files at import, so an operation a flax layer traces is attributed to the
user's line that called the layer). JAX's name-stack objects (`NameStack`,
`extend_name_stack`...) are not here: Lamina keeps its name scopes as strings
(`lamina.named_scope`).
"""

from __future__ import annotations

from lamina_core.ir import SourceInfo, current_source_info, exclude_path

__all__ = ["SourceInfo", "current", "register_exclusion", "summarize"]


def current() -> SourceInfo:
    """The source info an operation traced here would get: the innermost user frame."""
    return current_source_info()


def register_exclusion(path: str) -> None:
    """Treat files whose name starts with `path` as not the user's: their frames are skipped."""
    exclude_path(path)


def summarize(source_info: SourceInfo, num_frames: int = 1) -> str:
    """`file:line:column (function)` of `source_info`'s frame (`file:line (function)` at column
    0), as JAX prints it; Lamina keeps one frame, so `num_frames` past 1 adds none."""
    if source_info.code is None:
        return "unknown"
    filename, line, column = source_info.position
    where = f"{filename}:{line}:{column}" if column else f"{filename}:{line}"
    return f"{where} ({source_info.function})"
