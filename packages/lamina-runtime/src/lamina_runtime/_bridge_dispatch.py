"""The runtime bridge (see `_bridge`): jit dispatch in C++.

jaxlib's `PjitFunction` [private] is a C++ jit dispatcher: it flattens the arguments, looks
their signature up in its cache and, on a hit, transfers host values, runs the executable and
builds the outputs without running Python. On a miss it calls `cache_miss`, which returns the
outputs and, when C++ may repeat the call, a `FastPath` (read field by field in pjit.cc,
stable from jaxlib 0.8 to 0.10). Entries are keyed on the argument signature (jaxlib's rules
for weak types and x64, which are Lamina's), the static arguments, and every jaxlib `Config`
in the jit key: `DISPATCH_CONTEXT` is Lamina's, rewritten by core whenever its options or
trace change (lamina_core.config._dispatch_context).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, Final, NamedTuple

import jax  # [public] config, device_put
import jaxlib._jax as _jax  # [private] pjit, PjitFunctionCache, pytree, config
import numpy as np

from lamina_runtime._bridge import DeviceArray
from lamina_runtime._bridge_devices import jax_aval, reshard, single_device_sharding

DISPATCH_CONTEXT: Final = _jax.config.Config(  # [private]
    "lamina_dispatch_context", 0, include_in_jit_key=True
)
DISPATCH_REGISTRY: Final = _jax.pytree.PyTreeRegistry()  # [private] None/tuple/list/dict/namedtuple
_DISPATCH_CACHE: Final = _jax.PjitFunctionCache(8192)  # [private] entries of all Lamina jits
_RESULT_LEAF: Final = object()
RESULT_LEAF: Final = _RESULT_LEAF
"""A leaf of an output tree for C++ that is an output as C++ made it (a device array), for a
node to wrap itself; `ResultSlot` wraps it as an array."""


class FastPath(NamedTuple):
    """What C++ needs to repeat a call: read attribute by attribute in pjit.cc."""

    xla_executable: Any
    out_pytree_def: Any
    in_shardings: Sequence[Any]
    out_shardings: Sequence[Any]
    out_avals: Sequence[Any]
    out_committed: Sequence[bool]
    kept_var_bitvec: Sequence[bool]
    in_device_local_layouts: Sequence[None]
    const_args: Sequence[Any]


class ResultSlot:
    """Stands for one output while its tree is built; C++ makes the output array in its place."""

    __slots__ = ("aval",)

    def __init__(self, aval: Any) -> None:
        self.aval = aval


class TaggedResultSlot(ResultSlot):
    """A `ResultSlot` for an output whose array carries a dispatch tag (a PRNG key array)."""

    __slots__ = ()


class HostResultSlot(ResultSlot):
    """A `ResultSlot` for an output the caller gets as a host value made from its type alone
    (a float0 array: C++ runs the program, whose buffer for it holds no data)."""

    __slots__ = ()


def result_slot(aval: Any, tag: object) -> ResultSlot:
    """The slot of an output of type `aval` whose arrays carry the dispatch tag `tag`."""
    return ResultSlot(aval) if tag is None else TaggedResultSlot(aval)


def register_host_results(make: Callable[[Any], Any]) -> None:
    """C++ makes the output of a `HostResultSlot` as `make(aval)`."""
    DISPATCH_REGISTRY.register_node(
        HostResultSlot, lambda slot: ((_RESULT_LEAF,), slot.aval), lambda aval, _: make(aval)
    )


def register_array_type(
    cls: type,
    field: str,
    tag: str,
    from_result: Callable[[Any, tuple[Any]], Any],
    from_tagged_result: Callable[[Any, tuple[Any]], Any],
) -> None:
    """Let C++ dispatch see through `cls` (an array wrapper holding a device array in `field`).

    The attribute `tag` is part of the call's signature: arrays whose device arrays are alike
    but which are not the same kind of value (a PRNG key array and its raw `uint32` data) must
    not share C++'s entries. C++ makes each output with `from_result(aval, (device_array,))`,
    or `from_tagged_result` for a `TaggedResultSlot`.
    """
    DISPATCH_REGISTRY.register_dataclass_node(cls, [field], [tag])  # attributes read in C++
    DISPATCH_REGISTRY.register_node(
        ResultSlot, lambda slot: ((_RESULT_LEAF,), slot.aval), from_result
    )
    DISPATCH_REGISTRY.register_node(
        TaggedResultSlot, lambda slot: ((_RESULT_LEAF,), slot.aval), from_tagged_result
    )


def register_holder_type(cls: type, field: str, key: str) -> None:
    """Let C++ dispatch see through `cls` (a holder of an array wrapper in `field`), its
    `key` attribute part of the call's signature; both read in C++, no Python call."""
    DISPATCH_REGISTRY.register_dataclass_node(cls, [field], [key])


def register_node_type(
    nodetype: type, flatten: Callable[[Any], tuple[Any, Any]], unflatten: Callable[[Any, Any], Any]
) -> None:
    """Mirror one of Lamina's pytree node types, so C++ dispatch flattens it the same way."""
    DISPATCH_REGISTRY.register_node(nodetype, flatten, unflatten)


def dispatch_leaves(tree: Any) -> list[Any]:
    """The leaves of `tree` as C++ dispatch sees them (array wrappers opened)."""
    leaves: list[Any] = DISPATCH_REGISTRY.flatten(tree)[0]
    return leaves


def result_tree(structure: Any) -> Any | None:
    """The output tree for C++ of a structure whose leaves are `ResultSlot`s; None if C++
    cannot rebuild it (it holds a node type only Lamina's tree registry knows)."""
    leaves, treedef = DISPATCH_REGISTRY.flatten(structure)
    return treedef if all(leaf is _RESULT_LEAF for leaf in leaves) else None


def fast_path(
    executable: Any,
    device: Any,
    out_tree: Any,
    out_avals: Sequence[tuple[tuple[int, ...], np.dtype, bool]],
    kept: Sequence[bool],
    const_bufs: Sequence[Any],
    shardings: tuple[Sequence[Any], Sequence[Any]] | None = None,
) -> FastPath:
    """The `FastPath` of an executable whose inputs are the kept flat arguments: on `device`,
    or placed as `shardings` (jax shardings of the inputs, const args first, and outputs)."""
    sharding = single_device_sharding(device)
    n_in = sum(kept)
    ins, outs = shardings or ([sharding] * n_in, [sharding] * len(out_avals))
    return FastPath(
        executable,
        out_tree,
        list(ins),
        list(outs),
        [jax_aval(*a) for a in out_avals],
        [True] * len(out_avals),
        list(kept),
        [None] * n_in,
        list(const_bufs),
    )


def _place_fallback(value: Any, sharding: Any, layout: Any) -> Any:
    """C++ asks for this when an argument is not where the executable wants it."""
    if type(value) is DeviceArray:
        return reshard(value, sharding)
    return jax.device_put(value, sharding)  # [public] host values on multi-device programs


def dispatcher(
    name: str,
    fun: Callable[..., Any],
    cache_miss: Callable[..., tuple[Any, FastPath | None, bool]],
    static_argnums: Sequence[int],
    static_argnames: Sequence[str],
    key: Hashable,
) -> Any:
    """A C++ jit dispatcher calling `cache_miss` when it has no entry for a call.

    Dispatchers of one `fun` with equal `key`s share their entries (a new `jit(f)` repeats
    the calls of an earlier one). `fun` runs instead when JAX's `disable_jit` is on; its
    entries are dropped when it dies.
    """
    return _jax.pjit(  # [private]
        name,
        fun,
        cache_miss,
        list(static_argnums),
        list(static_argnames),
        key,
        DISPATCH_REGISTRY,
        _place_fallback,
        _DISPATCH_CACHE,
    )


def jax_x64_enabled() -> bool:
    """JAX's own x64 flag: C++ dispatch converts host inputs by it."""
    return bool(jax.config.read("jax_enable_x64"))  # type: ignore[no-untyped-call]  # [public]
