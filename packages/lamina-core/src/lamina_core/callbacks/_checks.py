"""The primitive of `checkify.check`, here so that every layer has it without loading checkify.

`check_p.bind(*error_leaves, err_tree=..., debug=...)` raises the error if it happened; it has
no results and is evaluated on the host. `checkify` (lamina_core.checkify, loaded on first use)
gives it its rules and turns it back into an error value; the lowering layer needs only the
primitive and `functionalization_error`, which compiling a check that `checkify` did not
functionalize raises (a `debug` check is dropped instead), as JAX's lowering does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from lamina_core.interpreters import jvp_rules
from lamina_core.ir import AbstractValue, Primitive, abstract_eval_rules

check_p: Final = Primitive("check", multiple_results=True)


@abstract_eval_rules.register(check_p)
def _check_abstract_eval(*args: AbstractValue, err_tree: Any, debug: bool) -> list[AbstractValue]:
    return []  # its effects are checkify's to say


@jvp_rules.register(check_p)
def _check_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, err_tree: Any, debug: bool
) -> tuple[list[Any], list[Any]]:
    """The primals are checked; the tangents have nothing to check."""
    check_p.bind(*primals, err_tree=err_tree, debug=debug)
    return [], []


functionalization_error: Final = ValueError(
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This probably "
    "means you tried to stage (jit/scan/pmap/...) a `check` without functionalizing it through "
    "`checkify.checkify`."
)
"""JAX raises this one object every time; so does Lamina."""
