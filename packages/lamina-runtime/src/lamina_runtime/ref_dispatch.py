"""Jitted calls with Refs among their inputs: run by Python's `RefEntry`, or repeated by C++.

A Ref's buffer goes into the executable aliased with one of its outputs (donated), and the
Ref then holds that output: the same device memory, updated in place. Python's `RefEntry`
does this for any call; C++ dispatch repeats the calls whose Refs are all arguments (none
closed over), seeing each Ref as a node holding its current value (keyed by the Ref's
identity, so an entry is one set of Refs) and writing the Refs' final values back while it
builds the outputs (`RefResults`).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any, Final

from lamina_core import tree_util
from lamina_core.ir import ShapedArray
from lamina_refs import Ref
from lamina_runtime import _bridge_dispatch, _bridge_executables
from lamina_runtime.array import Array, dispatch_tag, to_buffer
from lamina_runtime.pipeline import CompiledCall

ALIASED: Final = object()
"""What an entry returns for a call it must not run: one Ref at two places, or arguments
placed over several devices."""


class RefEntry:
    """One compiled call with Refs among its inputs (arguments or closed over), reachable by
    `fast_key`: the Refs' buffers go in, and the Refs take the aliased outputs, in place.
    Identity is intended."""

    __slots__ = (
        "_keepalive",
        "_n_out",
        "_out_avals",
        "_refs",
        "_returns_none",
        "_run",
        "call",
        "closed",
    )

    def __init__(self, call: CompiledCall, closed: tuple[Any, ...], keepalive: tuple[Any, ...]):
        self.call = call
        self.closed = closed
        """The Refs the function closes over, passed after its arguments."""
        self._keepalive = keepalive
        executable = call.executable
        self._run = _bridge_executables.executor(executable.loaded, executable.handlers)
        self._out_avals = executable.out_avals
        self._refs = call.ref_inputs
        self._n_out = len(executable.out_avals) - len(call.ref_inputs)
        self._returns_none = call.out_tree == tree_util.tree_structure(None)

    def __call__(self, leaves: Sequence[Any]) -> Any:
        call = self.call
        closed = self.closed
        if closed:
            leaves = [*leaves, *closed]
        if call.kept is not None:
            leaves = [leaves[i] for i in call.kept]
        refs = [leaves[i] for i in self._refs]
        if (len(refs) > 1 or closed) and (
            len({id(r) for r in refs}) != len(refs)
            or any(x is c for x in leaves[: len(leaves) - len(closed)] for c in closed)
        ):
            return ALIASED
        bufs = list(call.const_bufs)
        for i, x in enumerate(leaves):
            kind = type(x)
            if kind is Ref:
                value = x._value
                bufs.append((value if value is not None else x.value())._buf)
            elif kind is Array:
                bufs.append(x._buf)
            else:
                executable = call.executable
                bufs.append(to_buffer(x, executable.in_avals[i], executable.device))
        outs = self._run(bufs)
        n_out = self._n_out
        avals = self._out_avals
        try:
            _give(refs, outs[n_out:], avals[n_out:])
        except BaseException:  # a KeyboardInterrupt midway: as in `_store_results`
            _give(refs, outs[n_out:], avals[n_out:])
            raise
        if not n_out and self._returns_none:
            return None
        wrap = Array._wrap
        results = [wrap(o, a) for o, a in zip(outs[:n_out], avals[:n_out], strict=True)]
        return tree_util.tree_unflatten(call.out_tree, results)


def _give(refs: Sequence[Ref], bufs: Sequence[Any], avals: Sequence[ShapedArray]) -> None:
    """Each Ref takes its final value, the call's output aliased with its buffer."""
    wrap = Array._wrap
    for ref, buf, aval in zip(refs, bufs, avals, strict=True):
        ref._value = wrap(buf, aval)


def ref_arguments(call: CompiledCall, leaves: Sequence[Any]) -> list[Ref] | None:
    """The Refs `call` updates, in the order of its aliased outputs, if every one of them is
    among the flat arguments `leaves` (and distinct); None otherwise."""
    taken = leaves if call.kept is None else [leaves[i] for i in call.kept]
    refs = [taken[i] for i in call.ref_inputs]
    if any(type(r) is not Ref for r in refs) or len({id(r) for r in refs}) != len(refs):
        return None
    return refs


def dispatch_value(ref: Ref) -> Any:
    """What C++ dispatch sees in `ref` (its value's device buffer), or None if it holds no
    device array."""
    value = ref._value
    return value._buf if type(value) is Array else None


class RefResults:
    """A call's results, and the Refs it updated, while C++ dispatch builds its outputs:
    rebuilding it gives the results and stores in each Ref its final value (the device array
    C++ made, wrapped with its type here: one Python call for the whole output)."""

    __slots__ = ("finals", "results", "stores")

    def __init__(self, results: Any, avals: Sequence[ShapedArray], refs: Sequence[Ref]) -> None:
        self.results = results
        self.finals = (_bridge_dispatch.RESULT_LEAF,) * len(refs)
        self.stores = tuple((weakref.ref(r), a) for r, a in zip(refs, avals, strict=True))


_Stores = tuple[tuple[weakref.ref[Ref], ShapedArray], ...]


def _flatten_results(node: RefResults) -> tuple[tuple[Any, ...], _Stores]:
    return (node.results, *node.finals), node.stores


def _store_results(stores: _Stores, children: Sequence[Any]) -> Any:
    # Called by C++ dispatch once per call, with the Refs' final device arrays (hot path).
    try:
        _store(stores, children)
    except BaseException:
        # A KeyboardInterrupt midway: the Refs' buffers went to the call, so they take its
        # results before it propagates (else they would hold deleted buffers). An interrupt
        # as this function starts still loses them, as JAX's write-back does.
        _store(stores, children)
        raise
    return children[0]


def _store(stores: _Stores, children: Sequence[Any]) -> None:
    i = 1
    for held, aval in stores:
        array = _new_array(Array)
        array._buf = children[i]
        array.aval = aval
        array._dispatch_tag = dispatch_tag(aval)
        ref = held()
        if ref is not None:
            ref._value = array
        i += 1


_new_array: Final = object.__new__


# C++ sees a Ref as its value, keyed by the Ref's identity (`_key`, a weak reference): an
# entry updates the Refs it was made for only, and the dispatch cache keeps no Ref alive.
_bridge_dispatch.register_holder_type(Ref, "_value", "_key")
_bridge_dispatch.register_node_type(RefResults, _flatten_results, _store_results)
