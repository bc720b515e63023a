"""`jax.experimental.hijax`: user-defined types and primitives (seed 003).

Everything JAX 0.10.2 exports here that Lamina implements, and `MappingSpec`, which the seed
imports from here (JAX exports it from 0.11 on).
"""

from lamina.experimental._hijax_mutable import (
    AvalMutableQDD,
    AvalQDD,
    MutableHiType,
    control_flow_allowed_effects,
)
from lamina_core.interpreters import Zero, instantiate_zeros
from lamina_core.interpreters import is_undefined as is_undefined_primal
from lamina_core.ir import AbstractValue, ShapedArray
from lamina_core.trace import aval_method, aval_property
from lamina_hijax import (
    GradAccum,
    HiPrimitive,
    HiPspec,
    HiType,
    MappingSpec,
    NullAccum,
    VJPHiPrimitive,
    register_hitype,
)
from lamina_refs import AbstractRef, TransformedRef

__all__ = [
    "AbstractRef",
    "AbstractValue",
    "AvalMutableQDD",
    "AvalQDD",
    "GradAccum",
    "HiPrimitive",
    "HiPspec",
    "HiType",
    "MappingSpec",
    "MutableHiType",
    "NullAccum",
    "ShapedArray",
    "TransformedRef",
    "VJPHiPrimitive",
    "Zero",
    "aval_method",
    "aval_property",
    "control_flow_allowed_effects",
    "instantiate_zeros",
    "is_undefined_primal",
    "register_hitype",
]
