"""lamina-refs: Refs (mutable arrays, seed 004) and their discharge to functional form.

`new_ref`, `freeze`, `ref_get`/`ref_set`/`ref_swap`/`ref_addupdate` and NumPy-style indexing
of `Ref`s and of views of them (`ref.at[idx]`: `TransformedRef`); the primitives register
their rules into core's tables (abstract evaluation, printing, effects, evaluation,
differentiation, batching); `discharge_state` turns a jaxpr
using Refs into a functional one, which the runtime lowers with the Refs' buffers aliased.
Printed Ref types and Ref equations read back with `lamina_core.ir.parse` (`_jaxpr_io`).
"""

from lamina_refs import (
    _ad,  # noqa: F401  (registers the differentiation rules)
    _batching,  # noqa: F401  (registers the batching rules)
    _jaxpr_io,  # noqa: F401  (registers the readers of Ref types and equations)
)
from lamina_refs._discharge import check_freezes, discharge_state, has_refs
from lamina_refs._primitives import (
    REF_PRIMITIVES,
    addupdate_p,
    empty_ref,
    empty_ref_p,
    free_ref,
    free_ref_p,
    freeze,
    freeze_p,
    get_p,
    new_ref,
    new_ref_p,
    ref_addupdate,
    ref_get,
    ref_set,
    ref_swap,
    swap_p,
)
from lamina_refs._ref import Ref
from lamina_refs._types import AbstractRef
from lamina_refs._views import RefIndexer, TransformedRef, TransformedRefAvalError

__version__ = "0.1.0"

__all__ = [
    "REF_PRIMITIVES",
    "AbstractRef",
    "Ref",
    "RefIndexer",
    "TransformedRef",
    "TransformedRefAvalError",
    "__version__",
    "addupdate_p",
    "check_freezes",
    "discharge_state",
    "empty_ref",
    "empty_ref_p",
    "free_ref",
    "free_ref_p",
    "freeze",
    "freeze_p",
    "get_p",
    "has_refs",
    "new_ref",
    "new_ref_p",
    "ref_addupdate",
    "ref_get",
    "ref_set",
    "ref_swap",
    "swap_p",
]
