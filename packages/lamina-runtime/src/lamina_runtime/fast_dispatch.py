"""A jitted function's repeated calls, without tracing again.

Python's dispatch entries, found by `fast_key` (a key cheaper than a full signature): a
`FastEntry` runs a compiled call on one device, a `CallEntry` one taking or returning hi-typed
values (calls with Refs have `ref_dispatch.RefEntry`). And a compiled call described for C++
dispatch (`fast_path_of`), which then repeats it without Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core import config, tree_util
from lamina_refs import Ref
from lamina_runtime import _bridge_devices, _bridge_dispatch, _bridge_executables
from lamina_runtime import sharding as shardings
from lamina_runtime.array import Array, dispatch_tag, to_buffer
from lamina_runtime.executable import host_value, is_host_output
from lamina_runtime.pipeline import CompiledCall
from lamina_runtime.ref_dispatch import ALIASED, RefResults


def fast_key(args: tuple[Any, ...]) -> tuple[Sequence[Any], tuple[Any, ...] | None]:
    """The leaves of `args` and a dispatch key for them, cheaper than a full signature.

    Device arrays contribute the identity of their aval (outputs of one executable share aval
    objects, and the cache entry keeps them alive so identities are not reused); NumPy arrays
    their shape and dtype. Positional arrays skip flattening; other pytrees are flattened once.
    With any other kind of leaf the key is None and the call takes the general path.
    """
    token = config.token()
    if all(type(x) is Array for x in args):
        return args, (token, None, *[id(x.aval) for x in args])
    if all(type(x) is Array or type(x) is Ref for x in args):
        # Ref avals are keyed by value: each Ref has its own aval object.
        return args, (token, None, *[x.aval if type(x) is Ref else id(x.aval) for x in args])
    leaves, tree = tree_util.tree_flatten(args)
    key: list[Any] = [token, tree]
    for x in leaves:
        kind = type(x)
        if kind is Array:
            key.append(id(x.aval))
        elif kind is np.ndarray:
            key.append((x.shape, x.dtype))
        elif kind is Ref:
            key.append(x.aval)
        else:
            return leaves, None
    return leaves, tuple(key)


# An output C++ makes as a host value, as Python's path makes it (`host_output`).
_bridge_dispatch.register_host_results(host_value)


def fast_path_of(
    call: CompiledCall, n_args: int, refs: Sequence[Ref] = ()
) -> _bridge_dispatch.FastPath | None:
    """`call` described for C++ dispatch; None if C++ could not build its outputs. A call
    updating Refs (`refs`, one per aliased output) stores their final values in them."""
    executable = call.executable
    slots = [
        _bridge_dispatch.HostResultSlot(a)
        if is_host_output(a)
        else _bridge_dispatch.result_slot(a, dispatch_tag(a))
        for a in executable.out_avals
    ]
    n_out = len(slots) - len(refs)
    try:
        structure = tree_util.tree_unflatten(call.out_tree, slots[:n_out])
        if refs:
            structure = RefResults(structure, executable.out_avals[n_out:], refs)
        out_tree = _bridge_dispatch.result_tree(structure)
    except Exception:  # a custom node that refuses placeholder children: stay in Python
        return None
    if out_tree is None:
        return None
    kept = [True] * len(call.const_bufs) + (
        [True] * n_args if call.kept is None else [i in call.kept for i in range(n_args)]
    )
    placed = None
    if executable.mesh is not None:
        placed = (executable.in_shardings, [shardings.to_jax(s) for s in executable.out_shardings])
    return _bridge_dispatch.fast_path(
        executable.loaded,
        executable.device,
        out_tree,
        [(a.shape, a.dtype, a.weak_type) for a in executable.out_avals],
        kept,
        call.const_bufs,
        placed,
    )


class FastEntry:
    """One compiled call reachable by `fast_key`. Identity is intended."""

    __slots__ = (
        "_consts",
        "_device",
        "_in_avals",
        "_keepalive",
        "_kept",
        "_out_avals",
        "_out_tree",
        "_run",
        "_sharding",
        "_single",
        "call",
    )

    def __init__(self, call: CompiledCall, keepalive: tuple[Any, ...]) -> None:
        self.call = call
        executable = call.executable
        self._run = _bridge_executables.executor(executable.loaded, executable.handlers)
        self._consts = list(call.const_bufs)
        self._in_avals = executable.in_avals
        self._kept = call.kept
        self._out_avals = executable.out_avals
        self._out_tree = call.out_tree
        # `None` is a node without leaves, not a leaf: only a real single leaf takes the fast path.
        self._single = tree_util.treedef_is_leaf(call.out_tree) and call.out_tree.num_leaves == 1
        self._device = executable.device
        self._sharding = _bridge_devices.single_device_sharding(executable.device)
        self._keepalive = keepalive

    def __call__(self, leaves: Sequence[Any]) -> Any:
        if self._kept is not None:
            leaves = [leaves[i] for i in self._kept]
        bufs = self._consts.copy()
        sharding = self._sharding
        for i, x in enumerate(leaves):
            if type(x) is Array and x._buf.sharding is sharding:
                bufs.append(x._buf)  # already in place: the common case, checked inline
            elif type(x) is Array and not _bridge_devices.is_single_device(x._buf):
                return ALIASED  # placed over several devices: a program on their mesh
            else:
                bufs.append(to_buffer(x, self._in_avals[i], self._device))
        outs = self._run(bufs)
        if self._single:
            return Array._wrap(outs[0], self._out_avals[0])
        wrap = Array._wrap
        return tree_util.tree_unflatten(
            self._out_tree, [wrap(o, a) for o, a in zip(outs, self._out_avals, strict=True)]
        )


class CallEntry:
    """One compiled call taking or returning hi-typed values, reachable by `fast_key`: the
    compiled call lowers and raises them. Identity is intended."""

    __slots__ = ("_closed", "call")

    def __init__(self, call: CompiledCall, closed: tuple[Any, ...]) -> None:
        self.call = call
        self._closed = closed

    def __call__(self, leaves: Sequence[Any]) -> Any:
        return self.call([*leaves, *self._closed] if self._closed else leaves)
