"""`smap`: `shard_map` over one mesh axis, with `vmap`-style axes instead of specs (JAX's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lamina_core import tree_util
from lamina_core.ir import AxisType, PartitionSpec, get_abstract_mesh
from lamina_core.sharding import shard_map


class _InferFromArgs:
    __slots__ = ()

    def __repr__(self) -> str:
        return "Infer"


_INFER = _InferFromArgs()
"""`smap`'s default `in_axes`: take the axes from the arguments' types (Explicit axes)."""


def _axis_spec(axis_name: Any, axis: int | None) -> PartitionSpec:
    if axis is None:
        return PartitionSpec()
    return PartitionSpec(*[None] * axis, axis_name)


def smap(
    f: Callable[..., Any] | None = None,
    /,
    *,
    in_axes: Any = _INFER,
    out_axes: Any,
    axis_name: Any,
) -> Any:
    """`f` mapped over mesh axis `axis_name` of the context mesh, one shard per device.

    Args:
        f: the function each device runs on its shard.
        in_axes: an int, None or a tuple (one per positional argument) saying which array
            axis each argument is split along (None: not split).
        out_axes: an int, None or a pytree prefix of the results, where the mapped axis goes.
        axis_name: the mesh axis `f` is manual over.
    """
    if f is None:
        return lambda g: _smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    return _smap(f, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)


def _is_axis(x: Any) -> bool:
    return x is None


def _smap(f: Callable[..., Any], *, in_axes: Any, out_axes: Any, axis_name: Any) -> Any:
    if isinstance(axis_name, (list, tuple)):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got {axis_name}")
    if in_axes is not None and in_axes is not _INFER and not isinstance(in_axes, (int, tuple)):
        raise TypeError(
            "smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of entries "
            "corresponding to the positional arguments passed to the function, but got "
            f"{in_axes}."
        )
    if in_axes is not _INFER and not all(
        isinstance(a, int) for a in tree_util.tree_leaves(in_axes)
    ):
        raise TypeError(
            "smap in_axes must be an int, None, jax.sharding.Infer, or (nested) container "
            f"with those types as leaves, but got {in_axes}."
        )
    if not all(isinstance(a, int) for a in tree_util.tree_leaves(out_axes)):
        raise TypeError(
            "smap out_axes must be an int, None, or (nested) container with those types as "
            f"leaves, but got {out_axes}."
        )
    out_specs = tree_util.tree_map(lambda a: _axis_spec(axis_name, a), out_axes, is_leaf=_is_axis)
    if in_axes is _INFER:
        mapped = shard_map(f, out_specs=out_specs, axis_names={axis_name})

        def inferred(*args: Any) -> Any:
            mesh = get_abstract_mesh()
            if not mesh.empty and mesh._name_to_type[axis_name] is not AxisType.Explicit:
                raise TypeError(
                    f"in_axes was not specified when axis_name={frozenset({axis_name})} was "
                    f"of type {mesh._name_to_type[axis_name]}"
                )
            return mapped(*args)

        return inferred
    in_specs = tree_util.tree_map(lambda a: _axis_spec(axis_name, a), in_axes, is_leaf=_is_axis)
    return shard_map(f, in_specs=in_specs, out_specs=out_specs, axis_names={axis_name})
