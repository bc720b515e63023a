"""lamina-refs: Refs (mutable arrays, seed 004) and their discharge to functional form.

`new_ref`, `freeze`, `ref_get`/`ref_set`/`ref_swap`/`ref_addupdate` and NumPy-style indexing
of `Ref`s; the primitives register their rules into core's tables (abstract evaluation,
printing, effects, evaluation, differentiation, batching); `discharge_state` turns a jaxpr
using Refs into a functional one, which the runtime lowers with the Refs' buffers aliased.
"""

import numpy as np

from lamina_core.trace._values import register_value_type, to_numpy
from lamina_refs import ad as _ad  # noqa: F401  (registers the differentiation rules)
from lamina_refs import batching as _batching  # noqa: F401  (registers the batching rules)
from lamina_refs.discharge import discharge_state, has_refs
from lamina_refs.primitives import (
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
from lamina_refs.types import AbstractRef, Ref

__version__ = "0.1.0"

register_value_type(
    Ref, lambda r: r.aval, lambda r: np.asarray(to_numpy(r.value())), by_reference=True
)

__all__ = [
    "REF_PRIMITIVES",
    "AbstractRef",
    "Ref",
    "__version__",
    "addupdate_p",
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
