"""lamina-hijax: user-defined high-level types and primitives, expanded to arrays to lower.

`HiType` subclasses are new types that appear in jaxprs as one value (`q8[2,3]`);
`register_hitype` names the Python class of their values; `VJPHiPrimitive` subclasses are the
operations on them, with their own derivative and batching rules; `MappingSpec` subclasses say
how `vmap` maps them (a primitive with only a `batch_dim_rule` is batched as a `VmapOf`, as
JAX's default). `to_lojax` expands all of it into arrays before lowering (seed 003); upper
layers' primitives whose meaning on hi values is their rule on values (Refs holding hi values)
register `expand_on_values` as their to-lojax rule.
`call_layouts` says how each call primitive passes its operands to the jaxprs it holds, for
the passes that rewrite calls (to-lojax here, state discharge in lamina-refs). Printed hi
primitives read back by class name (`_jaxpr_io`); hi types by the reader their author
registers with `register_type_reader` (`lamina_core.ir`'s).
"""

from lamina_core.ir import register_type_reader
from lamina_hijax import _jaxpr_io as _jaxpr_io  # registers the reader of hi primitives
from lamina_hijax import _mutable_rules as _mutable_rules  # registers its rules
from lamina_hijax._calls import Callee, CallLayout, Group, Role, call_layouts, map_callee
from lamina_hijax._mutable import (
    LoVals,
    is_mutable_value,
    lower_mutable,
    lower_mutable_args,
    makes_mutable,
    mutable_lowering_rules,
    takes_mutable,
    write_back,
)
from lamina_hijax._primitives import (
    GradAccum,
    HiPrimitive,
    NullAccum,
    VJPHiPrimitive,
    call_hi_primitive_linearized_p,
    call_hi_primitive_p,
)
from lamina_hijax._to_lojax import (
    HiSignature,
    expand_on_values,
    expand_per_value,
    is_high,
    lower_values,
    raise_values,
    to_lojax,
    to_lojax_closed,
    to_lojax_rules,
)
from lamina_hijax._types import HiPspec, HiType, MappingSpec, lo_avals, register_hitype
from lamina_hijax._vmap_of import VmapOf

__version__ = "0.1.0"

__all__ = [
    "CallLayout",
    "Callee",
    "GradAccum",
    "Group",
    "HiPrimitive",
    "HiPspec",
    "HiSignature",
    "HiType",
    "LoVals",
    "MappingSpec",
    "NullAccum",
    "Role",
    "VJPHiPrimitive",
    "VmapOf",
    "__version__",
    "call_hi_primitive_linearized_p",
    "call_hi_primitive_p",
    "call_layouts",
    "expand_on_values",
    "expand_per_value",
    "is_high",
    "is_mutable_value",
    "lo_avals",
    "lower_mutable",
    "lower_mutable_args",
    "lower_values",
    "makes_mutable",
    "map_callee",
    "mutable_lowering_rules",
    "raise_values",
    "register_hitype",
    "register_type_reader",
    "takes_mutable",
    "to_lojax",
    "to_lojax_closed",
    "to_lojax_rules",
    "write_back",
]
