"""The mesh in context, as JAX's: `set_mesh`/`use_mesh`, `use_abstract_mesh` (a `shard_map`
body's manual mesh), and what tracing reads of them (`get_abstract_mesh`, `context_mesh`).

The types (`Mesh`, `AbstractMesh`, `NamedSharding`, ...) live in `_mesh_types` and are
re-exported here, where most code imports them from. Scopes are context variables; the few
module-level counters only say whether any scope is open, so the hot paths of tracing skip the
context lookups while none is.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from types import TracebackType
from typing import Any

from lamina_core.ir._mesh_types import (
    EMPTY_ABSTRACT_MESH,
    EMPTY_MESH,
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    _context_stack,
    install_process_index,
    manual_mesh,
    spec_axis_names,
)
from lamina_core.ir._partition_spec import PartitionSpec
from lamina_core.ir._source_info import current_source_info

# --- the mesh in context -----------------------------------------------------------------------

MESHES_SEEN: list[bool] = [False]
"""Whether any array type has had a mesh, or a mesh was put in context: until then staging
skips its sharding-in-types work."""
_global_mesh: list[Mesh | None] = [None]
"""The mesh `set_mesh(mesh)` set process-wide when called as a function."""
_context_scopes: list[int] = [0]
"""How many `with set_mesh(...)` blocks are open in any thread (see `context_mesh`)."""


def get_concrete_mesh() -> Mesh:
    """The mesh in context (`set_mesh`, `with mesh:`), or the empty mesh."""
    stack = _context_stack.get()
    if stack:
        return stack[-1]
    return _global_mesh[0] or EMPTY_MESH


_abstract_stack: contextvars.ContextVar[tuple[AbstractMesh, ...]] = contextvars.ContextVar(
    "lamina_abstract_mesh_context", default=()
)
_abstract_scopes: list[int] = [0]
"""How many `use_abstract_mesh` blocks are open in any thread: while none is, a new array type
needs no context lookup to know it has no mesh."""


def get_abstract_mesh() -> AbstractMesh:
    """The abstract mesh in context (`use_abstract_mesh`, e.g. inside a `shard_map` body), else
    the abstract mesh of the mesh in context, or the empty abstract mesh."""
    if _abstract_scopes[0]:
        stack = _abstract_stack.get()
        if stack:
            return stack[-1]
    mesh = get_concrete_mesh()
    return EMPTY_ABSTRACT_MESH if mesh.empty else mesh.abstract_mesh


def concrete_context_mesh() -> Mesh | None:
    """The mesh `set_mesh` put in context (JAX's `ctx_mesh` of a `jit`), or None: a list read
    while there is none."""
    if not (_context_scopes[0] or _global_mesh[0] is not None):
        return None
    mesh = get_concrete_mesh()
    return None if mesh.empty else mesh


_context_listeners: list[Callable[[], None]] = []


def on_context_mesh_change(listener: Callable[[], None]) -> None:
    """Call `listener` whenever `set_mesh` changes the mesh in context (the runtime forgets
    the dispatch entries it made for calls under the previous one)."""
    _context_listeners.append(listener)


def _context_changed() -> None:
    for listener in _context_listeners:
        listener()


def context_mesh() -> AbstractMesh | None:
    """The mesh a primitive's result is laid out over when none of its operands has one
    (JAX's `get_cur_mesh_sharding`): the abstract mesh in context, or None for the empty mesh.
    A list read while no mesh is in context."""
    if not (_abstract_scopes[0] or _context_scopes[0] or _global_mesh[0] is not None):
        return None
    mesh = get_abstract_mesh()
    return None if mesh.empty else mesh


def aval_mesh() -> AbstractMesh | None:
    """The mesh a new array type takes when nothing says otherwise: the abstract mesh a
    `use_abstract_mesh` block put in context, or None (the empty mesh)."""
    if not _abstract_scopes[0]:
        return None
    stack = _abstract_stack.get()
    if not stack or stack[-1].empty:
        return None
    return stack[-1]


class use_abstract_mesh:  # lower case as JAX's: a context manager named like a function
    """`with use_abstract_mesh(mesh):` traces the block under `mesh`: the array types made in
    it carry `mesh` (as JAX traces a `shard_map` body under its manual mesh)."""

    __slots__ = ("_token", "mesh")

    def __init__(self, mesh: AbstractMesh) -> None:
        if not isinstance(mesh, AbstractMesh):
            raise ValueError(f"Expected mesh of type `AbstractMesh`. Got {type(mesh)}")
        self.mesh = mesh
        self._token: contextvars.Token[tuple[AbstractMesh, ...]] | None = None

    def __enter__(self) -> AbstractMesh:
        self._token = _abstract_stack.set((*_abstract_stack.get(), self.mesh))
        _abstract_scopes[0] += 1
        return self.mesh

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._token is not None
        _abstract_stack.reset(self._token)
        _abstract_scopes[0] -= 1


class set_mesh:  # lower case as JAX's: it is used as a function and as a context manager
    """Make `mesh` the mesh in context: process-wide when called, for a block with `with`."""

    __slots__ = ("_previous", "_token", "mesh")

    def __init__(self, mesh: Mesh) -> None:
        if not isinstance(mesh, Mesh):
            raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
        self.mesh = mesh
        self._previous = _global_mesh[0]
        _global_mesh[0] = mesh
        MESHES_SEEN[0] = True
        if mesh is not self._previous:
            _context_changed()
        self._token: contextvars.Token[tuple[Mesh, ...]] | None = None

    def __enter__(self) -> Mesh:
        _global_mesh[0] = self._previous  # inside `with`, the mesh is scoped to the block
        self._token = _context_stack.set((*_context_stack.get(), self.mesh))
        _context_scopes[0] += 1
        _context_changed()
        return self.mesh

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._token is not None
        _context_stack.reset(self._token)
        _context_scopes[0] -= 1
        _context_changed()


def use_mesh(mesh: Mesh) -> set_mesh:
    """`with use_mesh(mesh):` makes `mesh` the mesh in context for the block."""
    return set_mesh(mesh)


def named_in_context(spec: PartitionSpec) -> NamedSharding:
    """A bare spec given for a sharding: over the abstract mesh in context (JAX's
    `canonicalize_sharding`), which `set_mesh` must have put there."""
    mesh = get_abstract_mesh()
    if mesh.empty:
        raise ValueError(
            "Using PartitionSpec when you are not under a mesh context is not allowed. "
            "Please pass a NamedSharding instance or enter into a mesh context via "
            f"`jax.set_mesh`. Got {spec}"
        )
    return NamedSharding(mesh, spec)


def canonicalize_sharding(sharding: Any, api_name: str) -> NamedSharding | None:
    """A user's `out_sharding=` as JAX's `canonicalize_sharding` makes it: None for none (or a
    sharding over the empty mesh); a bare spec over the abstract mesh in context; a concrete
    mesh's sharding over its abstract mesh.

    Raises:
        TypeError: `sharding` is neither a `NamedSharding` nor a `PartitionSpec`.
        ValueError: a bare spec with no mesh in context, a mesh that is not the context's, or
            a spec naming an Auto or Manual axis.
    """
    if sharding is None:
        return None
    if isinstance(sharding, NamedSharding) and sharding.mesh.empty:
        return None
    if not isinstance(sharding, (NamedSharding, PartitionSpec)):
        raise TypeError(
            f"`out_sharding` argument of {api_name} only supports instances of"
            f" `NamedSharding` or `PartitionSpec`. Got {sharding} of type:"
            f" {type(sharding)}"
        )
    context = get_abstract_mesh()
    if isinstance(sharding, PartitionSpec):
        named = named_in_context(sharding)
    else:
        mesh = sharding.mesh.abstract_mesh
        all_auto = not (mesh.explicit_axes or mesh.manual_axes)
        context_auto = not (context.explicit_axes or context.manual_axes)
        if not (all_auto and context_auto) and not context.empty and mesh != context:
            raise ValueError(
                f"Context mesh {context} should match the mesh of sharding {mesh} passed to "
                f"{api_name}. This error occurs at source:  "
                f"{current_source_info().summary()}"
            )
        named = NamedSharding(mesh, sharding.spec)
    spec = named.spec
    types = named.mesh._name_to_type
    for name in (*sorted(spec_axis_names(spec), key=_spec_order(spec)), *spec.unreduced,
                 *spec.reduced):  # fmt: skip
        if types[name] in (AxisType.Auto, AxisType.Manual):
            raise ValueError(
                f"PartitionSpec passed to {api_name} cannot contain axis names that are of "
                f"type Auto or Manual. Got PartitionSpec: {spec} with axis name: {name} of "
                f"type: {types[name]}. This error occurs at source:  "
                f"{current_source_info().summary()}"
            )
    return named


def _spec_order(spec: PartitionSpec) -> Callable[[Any], int]:
    """Axis names in the order the spec writes them (JAX reports the first offending one)."""
    order: dict[Any, int] = {}
    for entry in spec.partitions:
        for name in entry if isinstance(entry, tuple) else (entry,):
            order.setdefault(name, len(order))
    return lambda name: order.get(name, len(order))


__all__ = [
    "EMPTY_ABSTRACT_MESH",
    "EMPTY_MESH",
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "NamedSharding",
    "aval_mesh",
    "canonicalize_sharding",
    "concrete_context_mesh",
    "context_mesh",
    "get_abstract_mesh",
    "get_concrete_mesh",
    "install_process_index",
    "manual_mesh",
    "named_in_context",
    "on_context_mesh_change",
    "set_mesh",
    "spec_axis_names",
    "use_abstract_mesh",
    "use_mesh",
]
