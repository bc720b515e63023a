"""lamina-hijax: user-defined high-level types and primitives, expanded to arrays to lower.

`HiType` subclasses are new types that appear in jaxprs as one value (`q8[2,3]`);
`register_hitype` names the Python class of their values; `VJPHiPrimitive` subclasses are the
operations on them, with their own derivative and batching rules; `MappingSpec` subclasses say
how `vmap` maps them. `to_lojax` expands all of it into arrays before lowering (seed 003).
"""

from lamina_hijax.primitives import (
    GradAccum,
    HiPrimitive,
    NullAccum,
    VJPHiPrimitive,
    call_hi_primitive_linearized_p,
    call_hi_primitive_p,
)
from lamina_hijax.to_lojax import (
    HiSignature,
    is_high,
    lower_values,
    raise_values,
    to_lojax,
    to_lojax_closed,
    to_lojax_rules,
)
from lamina_hijax.types import HiPspec, HiType, MappingSpec, lo_avals, register_hitype

__version__ = "0.1.0"

__all__ = [
    "GradAccum",
    "HiPrimitive",
    "HiPspec",
    "HiSignature",
    "HiType",
    "MappingSpec",
    "NullAccum",
    "VJPHiPrimitive",
    "__version__",
    "call_hi_primitive_linearized_p",
    "call_hi_primitive_p",
    "is_high",
    "lo_avals",
    "lower_values",
    "raise_values",
    "register_hitype",
    "to_lojax",
    "to_lojax_closed",
    "to_lojax_rules",
]
