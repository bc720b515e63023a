"""Differentiation rules of the reductions, as JAX's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters.helpers import deflinear
from lamina_core.lax._reductions import reduce_sum_p
from lamina_core.lax._structural import broadcast_in_dim_p


def _reduce_sum_transpose(
    ct: Any, x: Any, *, axes: Sequence[int], out_sharding: Any
) -> Sequence[Any]:
    shape = x.aval.shape
    dims = tuple(np.delete(np.arange(len(shape)), axes))
    return [broadcast_in_dim_p.bind(ct, shape=shape, broadcast_dimensions=dims, sharding=None)]


deflinear(reduce_sum_p, _reduce_sum_transpose)
