"""`pmap`: JAX's parallel map, as JAX 0.10.2 builds it: `jit` of a `shard_map`.

The mapped axis of each argument is split over a one-axis mesh of as many devices as its
size (`axis_name` names the mesh axis); each device's function sees its slice with the mapped
axis squeezed away, and results get it back (`expand_dims`) before they are concatenated
along `out_axes`. The staged program is `jit[name=_fun]` of one `shard_map` equation, printed
as JAX prints it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from lamina_core import lax, tree_util
from lamina_core.ir import Mesh, NamedSharding, PartitionSpec
from lamina_core.sharding import shard_map
from lamina_core.trace import EVAL_TRACE, current_trace
from lamina_core.transforms import flatten_axes
from lamina_runtime import _bridge_devices
from lamina_runtime._jit import jit


def _index_tuple(x: int | Iterable[int]) -> tuple[int, ...]:
    return (x,) if isinstance(x, int) else tuple(x)


def _axis_spec(axis_name: Any, axis: int | None) -> PartitionSpec:
    return PartitionSpec() if axis is None else PartitionSpec(*([None] * axis), axis_name)


def _check_axes(name: str, axes: Any) -> None:
    if not all(type(a) is int for a in tree_util.tree_leaves(axes)):
        raise TypeError(
            f"pmap {name} must be an int, None, or (nested) container with those types as "
            f"leaves, but got {axes}."
        )


def pmap(
    fun: Callable[..., Any],
    axis_name: Any = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    static_broadcasted_argnums: int | Iterable[int] = (),
    devices: Sequence[Any] | None = None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums: int | Iterable[int] = (),
) -> Any:
    """Map `fun` over the leading (`in_axes`) axis of its arguments, one device per index.

    Collectives over `axis_name` (`psum`, ...) act across the devices. Arguments named by
    `static_broadcasted_argnums` are static (hashable) and given to every device.
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if devices is not None:
        if not devices:
            raise ValueError("'devices' argument to pmap must be non-empty, or None.")
        devices = tuple(devices)
    name = "_internal_pmap_axis_name" if axis_name is None else axis_name
    static = _index_tuple(static_broadcasted_argnums)
    donated = _index_tuple(donate_argnums)
    _check_axes("in_axes", in_axes)
    _check_axes("out_axes", out_axes)
    cache: dict[Any, Any] = {}

    def mapped(
        dyn_fun: Callable[..., Any],
        tree: Any,
        axes: tuple[Any, ...],
        devs: tuple[Any, ...],
        donate: tuple[int, ...],
    ) -> Any:
        mesh = Mesh(np.array(devs, dtype=object), (name,))
        in_specs = tuple(_axis_spec(name, a) for a in axes)

        def _fun(*flat: Any) -> Any:
            leaves = [
                x if a is None else lax.squeeze(x, [a]) for x, a in zip(flat, axes, strict=True)
            ]
            args, kwargs = tree_util.tree_unflatten(tree, leaves)
            out = dyn_fun(*args, **kwargs)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_axes_flat = flatten_axes("pmap out_axes", out_tree, out_axes)
            expanded = [
                x if a is None else lax.expand_dims(x, [a])
                for x, a in zip(out_leaves, out_axes_flat, strict=True)
            ]
            return tree_util.tree_unflatten(out_tree, expanded)

        out_specs = tree_util.tree_map(
            lambda a: _axis_spec(name, a), out_axes, is_leaf=lambda x: x is None
        )
        sharded = shard_map(
            _fun,
            mesh=mesh,
            in_specs=in_specs,
            out_specs=out_specs,
            check_vma=False,
            axis_names={name},
        )
        # As JAX's pmap: at top level the jit places the inputs and outputs as the specs say
        # (its lowering carries their `sdy.sharding`s); under a trace it is a plain jit.
        as_named = functools.partial(NamedSharding, mesh)
        placed = jit(
            sharded,
            donate_argnums=donate,
            in_shardings=tuple(as_named(spec) for spec in in_specs),
            out_shardings=tree_util.tree_map(as_named, out_specs),
        )
        return jit(sharded, donate_argnums=donate), placed

    def prepare(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, list[Any]]:
        """The jitted shard_map for this call's structure, axes and statics; its flat args."""
        if static and max(static) >= len(args):
            raise ValueError(
                f"pmapped function has static_broadcasted_argnums={static} but was called with "
                f"only {len(args)} positional argument{'s' if len(args) > 1 else ''}. All "
                "static broadcasted arguments must be passed positionally."
            )
        static_vals = tuple(args[i] for i in static)
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static)
        dyn_in_axes = (
            tuple(a for i, a in enumerate(in_axes) if i not in static)
            if static and isinstance(in_axes, tuple)
            else in_axes
        )
        leaves, tree = tree_util.tree_flatten((dyn_args, kwargs))
        axes = tuple(flatten_axes("pmap in_axes", tree, (dyn_in_axes, 0), kws=True))
        size = next(
            (int(np.shape(x)[a]) for x, a in zip(leaves, axes, strict=True) if a is not None),
            None,
        )
        if size is None:
            raise ValueError("pmap requires at least one argument with a mapped axis.")
        if axis_size is not None and axis_size != size:
            raise ValueError(f"pmap got axis_size={axis_size} for a mapped axis of size {size}")
        devs = devices if devices is not None else tuple(_bridge_devices.local_devices(backend))
        if size > len(devs):
            raise ValueError(
                f"compiling computation that requires {size} logical devices, but only "
                f"{len(devs)} XLA devices are available (num_replicas={size})"
            )
        devs = devs[:size] if devices is None else devs
        if len(devs) != size:
            raise ValueError(f"pmap got {len(devs)} devices for a mapped axis of size {size}")

        def dyn_fun(*a: Any, **kw: Any) -> Any:
            it = iter(a)
            full = [
                static_vals[static.index(i)] if i in static else next(it) for i in range(len(args))
            ]
            return fun(*full, **kw)

        positions = [i for i in range(len(args)) if i not in static]
        donate: list[int] = []
        start = 0
        for i, a in zip(positions, dyn_args, strict=True):
            n = len(tree_util.tree_leaves(a))
            if i in donated:
                donate.extend(range(start, start + n))
            start += n
        key = (tree, axes, devs, static_vals, tuple(donate))
        try:
            jitted = cache.get(key)
        except TypeError as err:
            raise ValueError(
                f"Non-hashable static arguments are not supported. An error occurred while "
                f"trying to hash an object of type {type(static_vals)}, {static_vals}. The "
                f"error was:\n{err}"
            ) from None
        if jitted is None:
            jitted = cache[key] = mapped(dyn_fun, tree, axes, devs, tuple(donate))
        plain, placed = jitted
        return (placed if current_trace() is EVAL_TRACE else plain), leaves

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        jitted, leaves = prepare(args, kwargs)
        return jitted(*leaves)

    def lower(*args: Any, **kwargs: Any) -> Any:
        """The `jit` of `shard_map` this call runs, lowered (JAX's `pmap(f).lower`)."""
        jitted, leaves = prepare(args, kwargs)
        return jitted.lower(*leaves)

    wrapped.lower = lower  # type: ignore[attr-defined]
    return wrapped


__all__ = ["pmap"]
