"""`select` staged as JAX 0.10.2's `jnp.select`: the conditions stacked behind a False row,
`argmax` for the first true one, then one `select_n` over the choices (index 0, the False
row, picks the default).

`lamina_core.numpy.select` computes the same values with a chain of `where`s, which prints
differently; scipy's functions use this one so their jaxprs match JAX's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import _promote as p


def select(conditions: Sequence[Any], choices: Sequence[Any], default: Any = 0) -> Any:
    """The choice of the first true condition, elementwise; `default` where none is."""
    p.check_arraylike("select", *conditions, *choices, default)
    conds = [jnp.asarray(c) for c in conditions]
    options = p.promote_dtypes(jnp.asarray(default), *[jnp.asarray(c) for c in choices])
    stacked = jnp.stack(p.broadcast_arrays(False, *conds))
    index = jnp.argmax(stacked.astype(bool), axis=0)
    return lax.select_n(*p.broadcast_arrays(index, *options))
