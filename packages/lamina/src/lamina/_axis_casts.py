"""`auto_axes` and `explicit_axes`: run a function with some mesh axes retyped, as JAX's.

The body runs under the context mesh with the named axes made `Auto` (or `Explicit`); its
arguments and results are resharded across the change, so callers see their own axis types.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lamina_core import tree_util
from lamina_core.ir import (
    AbstractMesh,
    AxisType,
    NamedSharding,
    PartitionSpec,
    get_abstract_mesh,
    use_abstract_mesh,
)
from lamina_core.trace import typeof
from lamina_runtime import reshard


@dataclass(frozen=True, slots=True)
class _MeshChange:
    previous: AbstractMesh
    new: AbstractMesh
    axes: tuple[Any, ...]


def _sharding_mesh(shardings: Any, api: str) -> AbstractMesh | None:
    found: AbstractMesh | None = None
    for s in tree_util.tree_leaves(shardings):
        if isinstance(s, NamedSharding):
            mesh = s.mesh.abstract_mesh
            if found is not None and found != mesh:
                raise ValueError(
                    f"Shardings passed to {api} should have the same mesh. Got one mesh "
                    f"{found} and another {s.mesh}"
                )
            found = mesh
    return found


def _new_mesh(
    axes: Any, axis_type: AxisType, api: str, shardings: Any = None
) -> _MeshChange | None:
    current = get_abstract_mesh()
    from_shardings = _sharding_mesh(shardings, api)
    if from_shardings is None and current.empty:
        return None
    if from_shardings is not None and not current.empty and from_shardings != current:
        raise ValueError(
            f"Context mesh {current} must match the mesh passed to shardings {from_shardings}. "
            "Recommended approach is to use `jax.set_mesh` context manager."
        )
    mesh = current if not current.empty else from_shardings
    assert mesh is not None
    names = tuple(mesh.axis_names) if axes is None else axes if isinstance(axes, tuple) else (axes,)
    for a in names:
        if mesh._name_to_type[a] is AxisType.Manual:
            raise NotImplementedError(
                "Going from `Manual` AxisType to `Auto` or `Explicit` AxisType is not allowed. "
                "Please file a bug at https://github.com/jax-ml/jax/issues with your use case"
            )
    return _MeshChange(mesh, mesh.update_axis_types({a: axis_type for a in names}), names)


def _explicit_only(spec: Any, mesh: AbstractMesh) -> PartitionSpec:
    # A spec names only the Explicit axes of the mesh it is read under.
    def keep(name: Any) -> bool:
        return mesh._name_to_type[name] is AxisType.Explicit

    parts: list[Any] = []
    for p in spec:
        if p is None:
            parts.append(None)
        elif isinstance(p, tuple):
            parts.append(tuple(q for q in p if keep(q)))
        else:
            parts.append(p if keep(p) else None)
    return PartitionSpec(
        *parts,
        unreduced={u for u in spec.unreduced if keep(u)},
        reduced={u for u in spec.reduced if keep(u)},
    )


def _spec_of(x: Any) -> Any:
    return typeof(x).sharding.spec  # type: ignore[attr-defined]  # arrays carry a sharding


def auto_axes(
    f: Callable[..., Any] | None = None,
    /,
    *,
    axes: str | tuple[str, ...] | None = None,
    out_sharding: Any = None,
) -> Any:
    """`f` run with mesh `axes` (default: all) of the context mesh made `Auto`, its results
    resharded to `out_sharding` (also accepted as a keyword argument of the call)."""
    if f is None:
        return lambda g: _auto_axes(g, axes, out_sharding)
    return _auto_axes(f, axes, out_sharding)


def _auto_axes(fun: Callable[..., Any], axes: Any, out_sharding: Any) -> Callable[..., Any]:
    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if out_sharding is None:
            if "out_sharding" not in kwargs:
                raise TypeError("Missing required keyword argument: 'out_sharding'")
            target = kwargs.pop("out_sharding")
        else:
            target = out_sharding
        change = _new_mesh(axes, AxisType.Auto, "auto_axes", shardings=target)
        if change is None or set(change.previous.auto_axes) == set(change.axes):
            return fun(*args, **kwargs)
        with use_abstract_mesh(change.new):
            # Leaf by leaf: an argument without leaves (None weights) has no spec to give.
            leaves, tree = tree_util.tree_flatten(args)
            specs = [_explicit_only(_spec_of(a), change.new) for a in leaves]
            args = tree_util.tree_unflatten(tree, reshard(leaves, specs))
            out = fun(*args, **kwargs)
        return reshard(out, target)

    return wrapped


def explicit_axes(
    f: Callable[..., Any] | None = None,
    /,
    *,
    axes: str | tuple[str, ...] | None = None,
    in_sharding: Any = None,
) -> Any:
    """`f` run with mesh `axes` (default: all) of the context mesh made `Explicit`, its
    arguments resharded to `in_sharding` (also accepted as a keyword argument of the call)."""
    if f is None:
        return lambda g: _explicit_axes(g, axes, in_sharding)
    return _explicit_axes(f, axes, in_sharding)


def _explicit_axes(fun: Callable[..., Any], axes: Any, in_sharding: Any) -> Callable[..., Any]:
    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if in_sharding is None:
            if "in_sharding" not in kwargs:
                raise TypeError("Missing required keyword argument: 'in_sharding'")
            source = kwargs.pop("in_sharding")
        else:
            source = in_sharding
        change = _new_mesh(axes, AxisType.Explicit, "explicit_axes")
        if change is None:
            raise ValueError(
                "Context mesh cannot be empty. Please use `jax.set_mesh` API to enter into a "
                "mesh context when using `explicit_axes` API."
            )
        with use_abstract_mesh(change.new):
            args = reshard(args, source)
            out = fun(*args, **kwargs)
        outer = get_abstract_mesh()
        specs = tree_util.tree_map(lambda o: _explicit_only(_spec_of(o), outer), out)
        return reshard(out, specs)

    return wrapped
