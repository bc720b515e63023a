"""`jax.typing`: annotations for values that become arrays (`ArrayLike`) and for dtypes
(`DTypeLike`), unions that `isinstance` accepts as JAX's do."""

from typing import Any, TypeAlias

import numpy as np

from lamina_core.ir.dtypes import SupportsDType
from lamina_core.trace import Tracer
from lamina_runtime import Array

ArrayLike: TypeAlias = (
    Array | Tracer | np.ndarray | np.bool_ | np.number | bool | int | float | complex
)
DTypeLike: TypeAlias = str | type[Any] | np.dtype | SupportsDType

__all__ = ["ArrayLike", "DTypeLike"]
