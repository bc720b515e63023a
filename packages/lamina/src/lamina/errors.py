"""`jax.errors`: the exceptions Lamina raises with JAX's names and messages."""

from lamina_core import (
    ConcretizationTypeError,
    JaxprTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from lamina_core.numpy._index_parse import NonConcreteBooleanIndexError
from lamina_core.trace._error_types import InconclusiveDimensionOperation, KeyReuseError
from lamina_core.trace._tracing import JAXIndexError, JAXTypeError
from lamina_runtime._bridge import JaxRuntimeError

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
