"""`jax._src.tree_util` under `lamina.as_jax`: `_registry`, JAX's Python-side table of the node
types it flattens, which flax's `nnx.graphlib` asks whether a type is a pytree node.

Here it mirrors Lamina's registry: the built-in containers JAX lists (tuple, list, dict, None,
OrderedDict, defaultdict), then every type registered with Lamina so far and from now on
(`register_pytree_node`, `register_dataclass`...), each with its flatten and unflatten functions
in JAX's shapes. Namedtuples are nodes without being listed, as in JAX.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any, NamedTuple

from lamina_core.tree import tree_util


class _RegistryEntry(NamedTuple):
    to_iter: Callable[[Any], tuple[Any, Any]]
    from_iter: Callable[[Any, Any], Any]


def _sequence(xs: Any) -> tuple[Any, None]:
    return xs, None


def _mapping(xs: Any) -> tuple[list[Any], list[Any]]:
    keys = sorted(xs)
    return [xs[k] for k in keys], keys


def _none(_: Any) -> tuple[tuple[()], None]:
    return (), None


def _ordered_dict(xs: Any) -> tuple[list[Any], list[Any]]:
    return list(xs.values()), list(xs)


def _default_dict(xs: Any) -> tuple[list[Any], tuple[Any, list[Any]]]:
    keys = sorted(xs)
    return [xs[k] for k in keys], (xs.default_factory, keys)


_registry: dict[type[Any], _RegistryEntry] = {
    tuple: _RegistryEntry(_sequence, lambda _, xs: tuple(xs)),
    list: _RegistryEntry(_sequence, lambda _, xs: list(xs)),
    dict: _RegistryEntry(_mapping, lambda keys, xs: dict(zip(keys, xs, strict=True))),
    type(None): _RegistryEntry(_none, lambda _, xs: None),
    collections.OrderedDict: _RegistryEntry(
        _ordered_dict, lambda keys, xs: collections.OrderedDict(zip(keys, xs, strict=True))
    ),
    collections.defaultdict: _RegistryEntry(
        _default_dict,
        lambda aux, xs: collections.defaultdict(aux[0], zip(aux[1], xs, strict=True)),
    ),
}
"""Node type to its (flatten, unflatten), as JAX's table of the same name."""


def _record(nodetype: type[Any], flatten: Callable[[Any], tuple[Any, Any]], unflatten: Any) -> None:
    _registry[nodetype] = _RegistryEntry(flatten, unflatten)


tree_util.on_node_registered(_record)
