"""Trivial benchmarks: they exercise the harness itself."""

from __future__ import annotations

from typing import Any, assert_never

from tools.bench.registry import Side, Timed, benchmark


@benchmark("trivial.tree_flatten", params={"leaves": (10,)}, unit="leaf", unit_count="leaves")
def tree_flatten(side: Side, leaves: int) -> Timed:
    """Flatten a dict of NumPy arrays: optree in Lamina's namespace vs jax.tree_util."""
    import numpy as np

    # Any: optree's stubs make PyTree a nominal class, so a plain dict does not type-check as one.
    tree: Any = {f"x{i}": np.full((4,), i, dtype=np.float32) for i in range(leaves)}
    match side:
        case Side.LAMINA:
            import optree

            return lambda: optree.tree_flatten(tree, namespace="lamina")
        case Side.JAX:
            import jax

            return lambda: jax.tree_util.tree_flatten(tree)
        case _:
            assert_never(side)
