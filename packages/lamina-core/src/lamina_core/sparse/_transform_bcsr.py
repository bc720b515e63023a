"""`sparsify`'s rules JAX has for BCSR operands beyond the elementwise ones (`dot_general`,
`broadcast_in_dim`, `concatenate`, `stack`), `stack` for BCOO, and BCSR's
operators derived from `sparsify` (`@` and indexing, as JAX installs them)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.sparse._bcoo_ops import bcoo_broadcast_in_dim
from lamina_core.sparse._bcoo_shape import bcoo_concatenate
from lamina_core.sparse._bcsr import (
    BCSR,
    bcsr_broadcast_in_dim,
    bcsr_concatenate,
    bcsr_dot_general,
)
from lamina_core.sparse._transform import (
    SparsifyEnv,
    SparsifyValue,
    _standard_sparse_rule,
    arrays_to_spvalues,
    sparse_rules_bcoo,
    sparse_rules_bcsr,
    spvalues_to_arrays,
)
from lamina_core.sparse._transform_tracer import sparsify

sparse_rules_bcsr[lax.dot_general_p] = _standard_sparse_rule(lax.dot_general_p, bcsr_dot_general)
sparse_rules_bcsr[lax.broadcast_in_dim_p] = _standard_sparse_rule(
    lax.broadcast_in_dim_p, bcsr_broadcast_in_dim
)
sparse_rules_bcsr[lax.concatenate_p] = _standard_sparse_rule(
    lax.concatenate_p, lambda *a, **k: bcsr_concatenate(a, **k)
)


def _stack_sparse(
    spenv: SparsifyEnv,
    *spvalues: SparsifyValue,
    axis: int,
    broadcast_in_dim: Callable[..., Any],
    concatenate: Callable[..., Any],
) -> Any:
    # Each operand gains a unit dimension at `axis`; the results are concatenated along it.
    arrays = spvalues_to_arrays(spenv, spvalues)
    shape = tuple(arrays[0].shape)
    new_shape = (*shape[:axis], 1, *shape[axis:])
    dims = [d if d < axis else d + 1 for d in range(len(shape))]
    expanded = [broadcast_in_dim(x, shape=new_shape, broadcast_dimensions=dims) for x in arrays]
    return arrays_to_spvalues(spenv, [concatenate(expanded, dimension=axis)])


sparse_rules_bcoo[lax.stack_p] = functools.partial(
    _stack_sparse, broadcast_in_dim=bcoo_broadcast_in_dim, concatenate=bcoo_concatenate
)
sparse_rules_bcsr[lax.stack_p] = functools.partial(
    _stack_sparse, broadcast_in_dim=bcsr_broadcast_in_dim, concatenate=bcsr_concatenate
)


def _swap_args(f: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    return lambda a, b: f(b, a)


def _bcsr_getitem(arr: Any, idx: Any) -> Any:
    # Only the array is sparsified; the index stays as given (a static or dense index).
    return sparsify(lambda x: x[idx])(arr)


BCSR.__matmul__ = sparsify(jnp.matmul)  # type: ignore[method-assign]  # as JAX installs it
BCSR.__rmatmul__ = sparsify(_swap_args(jnp.matmul))  # type: ignore[method-assign]  # as JAX's
BCSR.__getitem__ = _bcsr_getitem  # type: ignore[method-assign]  # as JAX installs it

__all__: list[str] = []
