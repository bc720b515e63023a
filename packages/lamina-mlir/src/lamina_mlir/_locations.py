"""Op locations: the primitive's name under the name stack, at the user's line.

The name stack is the function's (`jit(f)`, control-flow bodies below it) followed by the
scopes and transformations the equation was traced under. An equation traced at `f.py:9`
inside `def f`, in `named_scope("outer")`, and lowered in `jit(f)` gets
`loc("jit(f)/outer/sin"("f"("f.py":9:6 to :16)))`, the form JAX prints for one user frame, so
compiler errors and profiles point at user code. Lamina records only the innermost user frame
(core's `SourceInfo`), so there is no call-site chain. Locations are made once per module for
each distinct (name stack, primitive, code position).
"""

from __future__ import annotations

from jaxlib.mlir import ir

from lamina_core.ir import SourceInfo
from lamina_mlir._context import ModuleContext


def _frame_location(mctx: ModuleContext, source_info: SourceInfo) -> ir.Location:
    code = source_info.code
    if code is None:
        return ir.Location.unknown()
    key = (code, source_info.lasti)
    found = mctx.locations.get(key)
    if found is not None:
        return found
    line, col, end_line, end_col = code.co_firstlineno, 0, None, None
    if source_info.lasti >= 0:
        positions = list(code.co_positions())
        index = source_info.lasti // 2
        if index < len(positions):
            start, end, start_col, stop_col = positions[index]
            line = start if start is not None else line
            col = start_col if start_col is not None else 0
            end_line, end_col = end, stop_col
    if end_line is not None and end_col is not None:
        file_loc = ir.Location.file(code.co_filename, line, col, end_line, end_col)
    else:
        file_loc = ir.Location.file(code.co_filename, line, col)
    found = mctx.locations[key] = ir.Location.name(code.co_name, childLoc=file_loc)
    return found


def eqn_location(
    mctx: ModuleContext, name_stack: str, name: str, source_info: SourceInfo
) -> ir.Location:
    """The location of the ops lowered for one equation of primitive `name`."""
    key = (name_stack, name, source_info.code, source_info.lasti)
    found = mctx.locations.get(key)
    if found is None:
        label = f"{name_stack}/{name}" if name_stack else name
        found = ir.Location.name(label, childLoc=_frame_location(mctx, source_info))
        mctx.locations[key] = found
    return found


def name_location(name_stack: str) -> ir.Location:
    """The location of a function's entry and exit code: its name stack, if any."""
    if not name_stack:
        return ir.Location.unknown()
    return ir.Location.name(name_stack)
