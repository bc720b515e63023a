"""`jax.experimental.multihost_utils`: synchronizing and exchanging data between processes.

JAX 0.10.2's names, with JAX's single-process semantics: with one process every host-local
array is already global, a broadcast or gather has only this process's data, and a barrier has
no one to wait for. Lamina's runtime does not run collectives across processes yet, so under a
multi-process `lamina.distributed.initialize` the functions that would exchange data raise
`NotImplementedError` rather than return one process's view as everyone's. The conversions
between host-local and global arrays are JAX's two primitives (`host_local_array_to_global_array_p`,
`global_array_to_host_local_array_p`), defined here through the public extension API as JAX
defines them: they stage into jaxprs, transpose to themselves, batch and lower to nothing.
Loaded on first import, never by `import lamina`.
"""

from __future__ import annotations

import contextlib
import zlib
from functools import partial
from typing import Any

import numpy as np

from lamina.extend.core import Primitive
from lamina.interpreters import ad, batching, mlir
from lamina_core.interpreters import AxisData
from lamina_core.ir import Mesh, NamedSharding, PartitionSpec, ShapedArray
from lamina_core.ir.dtypes import float0
from lamina_core.tree import tree_util
from lamina_runtime import Array, device_put, is_initialized, process_count


def _single_process(name: str) -> None:
    if process_count() != 1:
        raise NotImplementedError(
            f"multihost_utils.{name} across {process_count()} processes: Lamina's runtime runs "
            "no collectives between processes yet"
        )


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """The source process's `in_tree` on every process, as NumPy arrays.

    Args:
        in_tree: a pytree of arrays, of the same shapes on every process.
        is_source: whether this process is the source; by default process 0 is.

    Returns:
        `in_tree`'s structure with NumPy arrays holding the source's data.
    """
    del is_source  # with one process it is the source either way, as in JAX
    _single_process("broadcast_one_to_all")
    return tree_util.tree_map(np.asarray, in_tree)


def _gather_leaf(leaf: Any, tiled: bool) -> Any:
    if isinstance(leaf, Array) and not leaf.is_fully_addressable and not tiled:
        raise ValueError("Gathering global non-fully-addressable arrays only supports tiled=True")
    _single_process("process_allgather")
    out = np.asarray(leaf)
    return out if tiled else np.expand_dims(out, axis=0)


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every process's `in_tree`, stacked (or, with `tiled`, concatenated) along axis 0.

    Args:
        in_tree: a pytree of arrays, of the same shapes on every process.
        tiled: concatenate along the existing axis 0 instead of stacking on a new one.

    Returns:
        `in_tree`'s structure with NumPy arrays.
    """
    return tree_util.tree_map(lambda leaf: _gather_leaf(leaf, tiled), in_tree)


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """Check that every process holds the same values of `in_tree`.

    Raises:
        AssertionError: some process's values differ (never with one process, whose values
            are compared with themselves, as JAX does).
    """

    def repeated(leaf: Any) -> Any:
        x = np.asarray(leaf)
        if x.ndim == 0:
            x = np.expand_dims(x, axis=0)
        return np.concatenate([x] * process_count())

    out = process_allgather(in_tree, tiled=True)
    expected = tree_util.tree_map(repeated, in_tree)
    same = tree_util.tree_map(lambda *xs: np.all(np.equal(*xs)), expected, out)
    if not all(tree_util.tree_leaves(same)):
        raise AssertionError(f"{fail_message}. Expected: {out}; got: {in_tree}.")


def sync_global_devices(name: str) -> None:
    """A barrier across all processes; `name` must be the same on each."""
    digest = np.uint32(zlib.crc32(name.encode()))
    assert_equal(digest, f"sync_global_devices name mismatch ('{name}')")


def reached_preemption_sync_point(step_id: int) -> bool:
    """Whether every process has reached the step at which to checkpoint before preemption.

    Always False without a distributed runtime, as in JAX (nothing can be preempted).

    Raises:
        NotImplementedError: under `lamina.distributed.initialize`: Lamina has no preemption
            sync manager.
    """
    del step_id
    if not is_initialized():
        return False
    raise NotImplementedError(
        "reached_preemption_sync_point: Lamina's distributed runtime has no preemption service"
    )


def _flat_pspecs(what: str, inputs: Any, pspecs: Any) -> tuple[list[Any], Any, list[Any]]:
    """The inputs' leaves, their tree, and each leaf's spec (`pspecs` is a tree prefix)."""
    leaves, treedef = tree_util.tree_flatten(inputs)

    def is_spec(x: Any) -> bool:
        return x is None or isinstance(x, PartitionSpec)

    try:
        spread = tree_util.tree_broadcast(pspecs, inputs, is_leaf=is_spec)
    except ValueError as err:
        raise ValueError(f"{what} must be a tree prefix of the inputs: {err}") from None
    specs = tree_util.tree_leaves(spread, is_leaf=is_spec)
    return leaves, treedef, specs


def _checked_spec(pspec: Any) -> PartitionSpec:
    if pspec is None:
        raise ValueError(
            "`None` is not a valid input to the pspecs argument. Please use "
            "jax.sharding.PartitionSpec() if you wanted to replicate your input."
        )
    if not isinstance(pspec, PartitionSpec):
        raise TypeError(f"expected a PartitionSpec, got {pspec!r}")
    return pspec


def _host_value(arr: Any) -> Any:
    if not hasattr(arr, "shape"):
        arr = np.array(arr)
    if arr.dtype == float0:
        # float0 has no buffer to place: JAX places booleans of its shape instead.
        arr = np.zeros(arr.shape, dtype=np.dtype(bool))
    return arr


def host_local_array_to_global_array_impl(arr: Any, *, global_mesh: Mesh, pspec: Any) -> Any:
    """`host_local_array_to_global_array_p` on a value: one process's local data is the whole
    global array, placed over `global_mesh` by `pspec`."""
    spec = _checked_spec(pspec)
    if isinstance(arr, Array) and not arr.is_fully_addressable:
        return arr
    _single_process("host_local_array_to_global_array")
    return device_put(_host_value(arr), NamedSharding(global_mesh, spec))


def global_array_to_host_local_array_impl(arr: Any, *, global_mesh: Mesh, pspec: Any) -> Any:
    """`global_array_to_host_local_array_p` on a value: this process's part of a global array."""
    spec = _checked_spec(pspec)
    if isinstance(arr, Array) and arr.is_fully_addressable:
        return arr
    _single_process("global_array_to_host_local_array")
    return device_put(_host_value(arr), NamedSharding(global_mesh, spec))


def _tiled_shape(shape: tuple[int, ...], mesh: Mesh, pspec: Any) -> tuple[int, ...]:
    """Check that each dimension divides evenly over its mesh axes, as JAX's tiling asserts.

    With one process the local mesh is the global one, so tiling by one and untiling by the
    other gives the shape back: only the divisibility check remains.
    """
    sizes = mesh.shape
    for dim, entry in enumerate(_checked_spec(pspec)):
        for name in (entry,) if isinstance(entry, str) else entry or ():
            if shape[dim] % sizes[name]:
                raise AssertionError(
                    f"dimension {dim} of size {shape[dim]} does not divide over mesh axis "
                    f"{name!r} of size {sizes[name]}"
                )
    return shape


def ltg_abstract_eval(arr: Any, *, global_mesh: Mesh, pspec: Any) -> ShapedArray:
    """The global type of a host-local value (weak type dropped, as JAX's)."""
    return ShapedArray(_tiled_shape(arr.shape, global_mesh, pspec), arr.dtype)


def gtl_abstract_eval(arr: Any, *, global_mesh: Mesh, pspec: Any) -> ShapedArray:
    """The host-local type of a global value (see `ltg_abstract_eval`)."""
    return ShapedArray(_tiled_shape(arr.shape, global_mesh, pspec), arr.dtype)


def ltg_batcher(
    insert_axis: bool,
    axis_data: AxisData,
    vals_in: Any,
    dims_in: Any,
    global_mesh: Mesh,
    pspec: PartitionSpec,
) -> tuple[Any, Any]:
    """The mapped axis of `host_local_array_to_global_array` gets its own entry in the spec
    (the SPMD axes of the `vmap`, or none)."""
    del insert_axis
    (x,), (d,) = vals_in, dims_in
    entries = list(pspec)
    if d is not None:
        entries.insert(d, axis_data.spmd_name)
    y = host_local_array_to_global_array_p.bind(
        x, global_mesh=global_mesh, pspec=PartitionSpec(*entries)
    )
    return y, d


def _identity_lowering(ctx: Any, x: Any, *, global_mesh: Mesh, pspec: Any) -> list[Any]:
    del ctx, global_mesh, pspec
    return [x]


host_local_array_to_global_array_p = Primitive("host_local_array_to_global_array")
host_local_array_to_global_array_p.def_impl(host_local_array_to_global_array_impl)
host_local_array_to_global_array_p.def_abstract_eval(ltg_abstract_eval)
# JAX's transpose of each conversion is the conversion itself, not its inverse.
ad.deflinear2(
    host_local_array_to_global_array_p,
    lambda ct, _, **params: (host_local_array_to_global_array_p.bind(ct, **params),),
)
batching.fancy_primitive_batchers[host_local_array_to_global_array_p] = partial(ltg_batcher, False)
mlir.register_lowering(host_local_array_to_global_array_p, _identity_lowering)

global_array_to_host_local_array_p = Primitive("global_array_to_host_local_array")
global_array_to_host_local_array_p.def_impl(global_array_to_host_local_array_impl)
global_array_to_host_local_array_p.def_abstract_eval(gtl_abstract_eval)
ad.deflinear2(
    global_array_to_host_local_array_p,
    lambda ct, _, **params: (global_array_to_host_local_array_p.bind(ct, **params),),
)
batching.defvectorized(global_array_to_host_local_array_p)
mlir.register_lowering(global_array_to_host_local_array_p, _identity_lowering)


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """Each process's local data as one global array sharded over `global_mesh` by `pspecs`.

    Under a trace it stages `host_local_array_to_global_array` equations, as JAX's does.

    Args:
        local_inputs: a pytree of host-local arrays.
        global_mesh: the mesh over all processes' devices.
        pspecs: a `PartitionSpec` per leaf (a tree prefix of `local_inputs`).

    Returns:
        A pytree of global arrays.

    Raises:
        ValueError: a spec is None (use `PartitionSpec()` to replicate), or `pspecs` is not a
            tree prefix of `local_inputs`.
    """
    leaves, treedef, specs = _flat_pspecs("input pspecs", local_inputs, pspecs)
    out = [
        host_local_array_to_global_array_p.bind(x, global_mesh=global_mesh, pspec=s)
        for x, s in zip(leaves, specs, strict=True)
    ]
    return tree_util.tree_unflatten(treedef, out)


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """Each global array's part on this process, as a host-local array (the inverse of
    `host_local_array_to_global_array`).

    Args:
        global_inputs: a pytree of global arrays.
        global_mesh: the mesh over all processes' devices.
        pspecs: a `PartitionSpec` per leaf (a tree prefix of `global_inputs`).

    Returns:
        A pytree of host-local arrays.

    Raises:
        ValueError: a spec is None, or `pspecs` is not a tree prefix of `global_inputs`.
    """
    leaves, treedef, specs = _flat_pspecs("output pspecs", global_inputs, pspecs)
    out = [
        global_array_to_host_local_array_p.bind(x, global_mesh=global_mesh, pspec=s)
        for x, s in zip(leaves, specs, strict=True)
    ]
    return tree_util.tree_unflatten(treedef, out)


class ProcessFailureError(Exception):
    """Raised by `live_devices` when processes failed during its block.

    Attributes:
        failed_devices: the devices of the processes that failed.
    """

    def __init__(self, failed_devices: set[Any]) -> None:
        self.failed_devices = failed_devices
        super().__init__(f"Devices failed: {failed_devices}")


class _LiveDevicesBlock:
    """What `with live_devices(devices)` enters: checked on entry, as JAX's context manager."""

    def __init__(self, devices: list[Any]) -> None:
        self.devices = devices

    def __enter__(self) -> list[Any]:
        if not is_initialized():
            raise RuntimeError("Distributed JAX not initialized.")
        raise NotImplementedError(
            "live_devices: Lamina's distributed runtime reports no process liveness"
        )

    def __exit__(self, *exc_info: object) -> None:
        return None


def live_devices(devices: list[Any]) -> contextlib.AbstractContextManager[list[Any]]:
    """A block run on the live subset of `devices`, agreed by every process (JAX's
    experimental fault-tolerance API).

    Raises (on entering the block):
        RuntimeError: the distributed runtime is not initialized, as in JAX.
        NotImplementedError: under `lamina.distributed.initialize`: Lamina cannot ask the
            coordination service which processes are alive.
    """
    return _LiveDevicesBlock(devices)


__all__ = [
    "ProcessFailureError",
    "assert_equal",
    "broadcast_one_to_all",
    "global_array_to_host_local_array",
    "host_local_array_to_global_array",
    "live_devices",
    "process_allgather",
    "reached_preemption_sync_point",
    "sync_global_devices",
]
