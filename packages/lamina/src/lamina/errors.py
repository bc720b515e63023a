"""`jax.errors`: the exceptions Lamina raises with JAX's names and messages."""

from lamina_core import (
    ConcretizationTypeError,
    JaxprTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from lamina_core.numpy import NonConcreteBooleanIndexError
from lamina_core.trace import (
    InconclusiveDimensionOperation,
    JAXIndexError,
    JAXTypeError,
    KeyReuseError,
)
from lamina_runtime import JaxRuntimeError

__all__ = [
    "ConcretizationTypeError",
    "InconclusiveDimensionOperation",
    "JAXIndexError",
    "JAXTypeError",
    "JaxRuntimeError",
    "JaxprTypeError",
    "KeyReuseError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
]
