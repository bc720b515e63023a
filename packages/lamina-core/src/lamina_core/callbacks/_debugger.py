"""`jax.debug.breakpoint`: stop a running program in Python's debugger (`pdb`).

The breakpoint is a debug callback carrying the local variables of the frames that called it:
arrays (traced or not) travel as the callback's operands, so the debugger sees their runtime
values; other locals are kept as they were when traced. When the program reaches it, `pdb`
starts in a namespace of the innermost frame's variables; `c` continues the program.
"""

from __future__ import annotations

import builtins
import inspect
import threading
from collections.abc import Callable
from typing import Any, Final

from lamina_core.callbacks._callbacks import pure_callback
from lamina_core.callbacks._debugging import debug_callback, split_callback_args
from lamina_core.ir import is_internal_code
from lamina_core.trace import ShapeDtypeStruct, typeof
from lamina_core.tree import tree_util

_lock: Final = threading.Lock()
_BACKENDS: Final = (None, "cli")


def _frames(filter_frames: bool, num_frames: int | None) -> list[dict[str, Any]]:
    infos = inspect.stack()[2:]
    if filter_frames:
        infos = [i for i in infos if not is_internal_code(i.frame.f_code)]
    if num_frames is not None:
        infos = infos[:num_frames]
    return [dict(i.frame.f_locals) for i in infos]


def _debugger(namespace: dict[str, Any]) -> Callable[..., None]:
    def run(**values: Any) -> None:
        scope = {**namespace, **values}
        code = compile("__import__('pdb').Pdb().set_trace()", "<breakpoint>", "exec")
        with _lock:
            # The debugger's frame has the program's variables as its locals.
            exec(code, {"__builtins__": builtins}, scope)

    return run


def breakpoint(
    *,
    backend: str | None = None,
    filter_frames: bool = True,
    num_frames: int | None = None,
    ordered: bool = False,
    token: Any = None,
    **kwargs: Any,
) -> Any:
    """Enter Python's debugger when the program reaches this point, with the calling frame's
    variables (arrays at their runtime values). With `token` (a pytree of arrays), the
    breakpoint runs once `token` is computed and returns it; pass it on so it is not pruned.
    """
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    if backend not in _BACKENDS:
        raise ValueError(f"Unsupported debugger backend: {backend!r} (Lamina has 'cli': pdb)")
    frames = _frames(filter_frames, num_frames)
    innermost = frames[0] if frames else {}
    arrays = {k: v for k, v in innermost.items() if _is_array(v)}
    others = {k: v for k, v in innermost.items() if k not in arrays}
    run = _debugger(others)
    if token is None:
        debug_callback(run, ordered=ordered, **arrays)
        return None
    leaves, tree = tree_util.tree_flatten(token)
    result_shapes = [ShapeDtypeStruct(typeof(x).shape, typeof(x).dtype) for x in leaves]  # type: ignore[attr-defined]
    names = list(arrays)

    def with_token(*flat: Any) -> Any:
        run(**dict(zip(names, flat[len(leaves) :], strict=True)))
        return list(flat[: len(leaves)])

    out = pure_callback(with_token, result_shapes, *leaves, *arrays.values())
    return tree_util.tree_unflatten(tree, out)


def _is_array(x: Any) -> bool:
    _, dynamic, _ = split_callback_args((x,), {})
    return len(dynamic) == 1 and not isinstance(x, (bool, int, float, complex))


__all__ = ["breakpoint"]
