"""The primitive of `checkify.check`, here so that every layer has it without loading checkify.

`check_p.bind(*error_leaves, err_tree=..., debug=...)` raises the error if it happened; it has
no results and is evaluated on the host. `checkify` (lamina_core.checkify, loaded on first use)
gives it its rules and turns it back into an error value; the lowering layer needs only the
primitive and `functionalization_error`, which compiling a check that `checkify` did not
functionalize raises (a `debug` check is dropped instead), as JAX's lowering does.
"""

from __future__ import annotations

from typing import Any, Final

from lamina_core.ir import AbstractValue, Primitive, abstract_eval_rules

check_p: Final = Primitive("check", multiple_results=True)


@abstract_eval_rules.register(check_p)
def _check_abstract_eval(*args: AbstractValue, err_tree: Any, debug: bool) -> list[AbstractValue]:
    return []  # its effects are checkify's to say


functionalization_error: Final = ValueError(
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This probably "
    "means you tried to stage (jit/scan/pmap/...) a `check` without functionalizing it through "
    "`checkify.checkify`."
)
"""JAX raises this one object every time; so does Lamina."""
