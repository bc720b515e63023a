"""Partial evaluation orders residuals as JAX's does: by its topological sort of the staged
values. The sort is checked against jaxlib's own on random graphs."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lamina_core.interpreters.partial_eval import _Node, _toposort

pytestmark = pytest.mark.oracle


class _Named(_Node):
    __slots__ = ("name",)

    def __init__(self, parents: list[_Node], name: str) -> None:
        super().__init__(parents)
        self.name = name


def _random_graph(seed: int) -> list[_Node]:
    rng = random.Random(seed)
    nodes: list[_Node] = []
    for i in range(rng.randint(1, 15)):
        parents = [rng.choice(nodes) for _ in range(rng.randint(0, min(3, len(nodes))))]
        # Leaves used once (a known value instantiated for one use) and shared ones.
        parents += [_Named([], f"leaf{i}.{j}") for j in range(rng.randint(0, 2))]
        rng.shuffle(parents)
        nodes.append(_Named(parents, f"n{i}"))
    return [rng.choice(nodes) for _ in range(rng.randint(1, 4))]


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=2**31))
def test_toposort_is_jaxlibs(seed: int) -> None:
    from jax._src.util import toposort as jax_toposort

    ends = _random_graph(seed)
    ours = [n.name for n in _toposort(ends)]  # type: ignore[attr-defined]
    theirs = [n.name for n in jax_toposort(ends)]
    assert ours == theirs
