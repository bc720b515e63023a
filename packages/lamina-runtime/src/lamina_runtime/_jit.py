"""`jit`: trace once per signature, plan constants, lower, compile, and run on XLA.

The pipeline of DESIGN.md: core's `Jitted` traces (and caches traces per signature, in caches
of the function shared by all its wrappers: `lamina_core.transforms.trace_caches`); the
constants plan comes from lamina-consts; lamina-mlir lowers with the constants as leading
`jax.const` arguments; the `Runtime` compiles once per module fingerprint. Constants reach the
device once per traced function: device arrays are passed as they are (never copied through
the host), NumPy constants are copied once. Under a transformation a jitted function is staged
as a `jit` equation instead.
"""

from __future__ import annotations

import itertools
import logging
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from lamina_core import ShapeDtypeStruct, config, tree_util
from lamina_core.config import disable_jit, dispatch_context, enable_x64
from lamina_core.ir import NamedSharding, ShapedArray, concrete_context_mesh, on_context_mesh_change
from lamina_core.trace import (
    EVAL_TRACE,
    Tracer,
    api_boundary,
    current_trace,
    raise_escaped_tracer,
    typeof,
)
from lamina_core.transforms import (
    NOT_SPECIFIED,
    JitCaches,
    Jitted,
    NotSpecified,
    Signature,
    Staged,
    jit_decorator,
    trace_caches,
    wrap_as_jax,
)
from lamina_refs import Ref
from lamina_runtime import (
    _bridge,
    _bridge_devices,
    _bridge_dispatch,
    _bridge_executables,
    guards,
    special_values,
)
from lamina_runtime import sharding as shardings
from lamina_runtime._jit_mutable import is_mutable_call, run_mutable
from lamina_runtime._lru import clear_registered_caches
from lamina_runtime.array import Array
from lamina_runtime.eager import clear_programs
from lamina_runtime.executable import runtime
from lamina_runtime.fast_dispatch import CallEntry, FastEntry, fast_key, fast_path_of
from lamina_runtime.pipeline import CompiledCall, Placement, compile_staged
from lamina_runtime.ref_dispatch import (
    ALIASED,
    RefEntry,
    dispatch_value,
    ref_arguments,
)
from lamina_runtime.stages import Traced

logger = logging.getLogger("lamina.jit")

dispatch_context.register_context_store(_bridge_dispatch.DISPATCH_CONTEXT)
tree_util.on_node_registered(_bridge_dispatch.register_node_type)

explain_cache_misses = config.define_bool(
    "jax_explain_cache_misses",
    False,
    "Log why a jitted function was traced again: which argument's type, weak type, static "
    "value or tree structure changed.",
)


_dispatch_serials: Final = itertools.count()
_NONE: Final = type(None)
"""A callable returning None: the dispatcher of a function that has made none yet."""


class RuntimeJitCaches(JitCaches):
    """What wrappers of one function with one set of options share at run time, besides the
    staged calls: compiled calls, Python's dispatch entries, C++'s fast paths, and the key of
    C++'s entries (so a new wrapper's dispatcher repeats calls an earlier one compiled)."""

    __slots__ = ("calls", "dispatch_key", "fast", "fast_paths")

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[Any, tuple[Staged, CompiledCall]] = {}
        """By staged call's id (and placement), holding it so the id stays its own."""
        self.fast: dict[tuple[Any, ...], FastEntry | RefEntry | CallEntry] = {}
        self.fast_paths: dict[int, tuple[CompiledCall, _bridge_dispatch.FastPath | None]] = {}
        """By compiled call's id, holding it so the id stays its own: a call that another
        thread's `clear_caches` dropped before its fast path was stored must not hand that
        fast path to a later call at its address (C++ then ran one program on another's
        arguments)."""
        self.dispatch_key: tuple[str, int] = ("lamina", next(_dispatch_serials))
        """The key of C++'s entries beside the function; a new one stales them all."""
        _live_caches.add(self)

    def clear(self) -> None:
        super().clear()
        self.calls.clear()
        self.forget_dispatch_entries()

    def forget_dispatch_entries(self) -> None:
        """Drop Python's dispatch entries, and C++'s for dispatchers made from now on (those
        alive clear their own)."""
        self.fast.clear()
        self.fast_paths.clear()
        self.dispatch_key = ("lamina", next(_dispatch_serials))


_live_caches: Final[weakref.WeakSet[RuntimeJitCaches]] = weakref.WeakSet()
"""Every set of runtime caches alive (a function's, though no wrapper of it may be), so that
a change of mesh reaches their dispatch entries."""


class JitFunction(Jitted):
    """`lamina.jit(f)`'s Python side: runs on XLA at top level, stages a `jit` equation under a
    trace. `lamina.jit` returns its C++ `dispatcher`, which repeats calls without Python and
    asks this object (`_cache_miss`) for the rest. Its caches are its function's, shared with
    every wrapper of it with the same options."""

    _caches: RuntimeJitCaches

    def __init__(
        self,
        fun: Callable[..., Any],
        *,
        compiler_options: Mapping[str, Any] | None = None,
        in_shardings: Any = None,
        out_shardings: Any = None,
        **options: Any,
    ) -> None:
        # Set before the caches are chosen: they are part of their key.
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        """JAX's arguments: a sharding (or bare `P`, over the mesh in context) for every input
        or output, or a tuple of them, one per positional argument or output."""
        self.compiler_options: dict[str, Any] = dict(compiler_options or {})
        """XLA options by name for every compilation of this function (JAX's argument)."""
        super().__init__(fun, **options)
        caches = self._caches
        self._calls = caches.calls
        self._fast = caches.fast
        self._fast_paths = caches.fast_paths
        self._fast_ok = not (
            in_shardings is not None
            or out_shardings is not None
            or self.static_argnums
            or self.static_argnames
            or self.donate_argnums
            or self.donate_argnames
        )
        self.dispatch_misses = 0
        """Calls C++ dispatch handed to Python (for tests and diagnostics)."""
        self._dispatcher: Callable[[], Any] = _NONE
        # Last: another thread's `clear_caches` may clear this function from now on.
        _live_functions.add(self)

    @property
    def dispatcher(self) -> Any | None:
        """The C++ dispatcher driving this function, if it is alive."""
        return self._dispatcher()

    def new_dispatcher(self) -> Any:
        """A C++ dispatcher driving this function (what `lamina.jit` returns).

        Held weakly here: it holds this object, and the cycle would keep the function alive
        (and so its caches: a bound method's, a `partial`'s) until a collection, where JAX's
        go with the last wrapper.
        """
        dispatcher = _bridge_dispatch.dispatcher(
            self.name,
            self.fun,
            self._cache_miss,
            self.static_argnums,  # C++ counts negative positions from the end, as Python does
            self.static_argnames,
            self._caches.dispatch_key,
        )
        wrap_as_jax(dispatcher, self.fun)
        # Instance attributes shadow the methods JAX installs on the C++ type for its own jit.
        dispatcher._lamina_jit = self
        dispatcher.trace = self.trace
        dispatcher.lower = self.lower
        dispatcher.eval_shape = self.eval_shape
        dispatcher.clear_cache = self.clear_cache
        self._dispatcher = weakref.ref(dispatcher)
        return dispatcher

    def _options_key(self) -> tuple[Any, ...]:
        compiler_options = tuple(sorted(self.compiler_options.items()))
        return (*super()._options_key(), compiler_options, self.in_shardings, self.out_shardings)

    def _new_caches(self) -> RuntimeJitCaches:
        return RuntimeJitCaches()

    def clear_cache(self) -> None:
        """Forget this function's traces and compiled calls, for every wrapper of it (C++
        dispatch entries included), as JAX's; the runtime's executables stay cached."""
        self._function_caches.clear()
        self._caches.clear()  # this wrapper's own, if its options kept it out of the function's
        dispatcher = self.dispatcher
        if dispatcher is not None:
            dispatcher._clear_cache()

    def _compiled(self, staged: Staged, placement: Placement | None = None) -> CompiledCall:
        key: Any = id(staged) if placement is None else (id(staged), placement)
        known = self._calls.get(key)
        if known is not None:
            return known[1]
        call = compile_staged(
            staged,
            self.name,
            keep_unused=self.keep_unused,
            compiler_options=self.compiler_options,
            placement=placement,
        )
        self._calls[key] = (staged, call)
        return call

    @property
    def _qualname(self) -> str:
        return str(getattr(self.fun, "__qualname__", self.name))

    def _placement(
        self, staged: Staged, args: tuple[Any, ...], leaves: Sequence[Any]
    ) -> Placement | None:
        """Where this call runs: on the mesh of its arguments placed over several devices or
        of its `in_shardings`/`out_shardings`, or None (one device)."""
        given = shardings.per_leaf(self.in_shardings, args, len(leaves), "in_shardings")
        outs = shardings.per_out(self.out_shardings, staged.out_tree)
        context = concrete_context_mesh()
        if (
            not any(given)
            and not any(outs)
            and all(
                _bridge_devices.is_single_device(x._buf)
                if type(x) is Array
                else _bridge_devices.is_single_device(x._value._buf)
                if type(x) is Ref and type(x._value) is Array
                else type(x) is not ShapeDtypeStruct or x.sharding is None
                for x in leaves
            )
        ):
            # Under `set_mesh` a call runs on the mesh in context (JAX's `ctx_mesh`).
            if context is None or context.size <= 1:
                return None
            return Placement(context, (None,) * len(leaves), ())
        debug = staged.jaxpr.jaxpr.debug_info
        names = (debug.arg_names if debug is not None else None) or ()
        placed: list[NamedSharding | None] = []
        named = []
        for i, (x, g) in enumerate(zip(leaves, given, strict=True)):
            s: Any = g
            held = x._value if type(x) is Ref else x  # a Ref is placed as the array it holds
            if (
                s is None
                and type(held) is Array
                and not _bridge_devices.is_single_device(held._buf)
            ):
                s = shardings.of_jax(held._buf.sharding)
            elif s is None and type(x) is ShapeDtypeStruct:  # lowering for a placement
                s = x.sharding
            placed.append(s if isinstance(s, NamedSharding) else None)
            name = names[i] if i < len(names) and names[i] else f"args[{i}]"
            named.append((f"argument {name} of {self._qualname}", typeof(x), s))
        named += [(f"output {i}", typeof(0.0), o) for i, o in enumerate(outs)]
        mesh = shardings.find_mesh(named)
        if mesh is None:
            if context is None or context.size <= 1:
                return None
            mesh = context
        return Placement(mesh, tuple(placed), tuple(outs))

    @api_boundary
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(args, kwargs)[0]

    def _call(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, CompiledCall | None, Sequence[Any]]:
        """The outputs, and the compiled call and flat arguments that made them (if run)."""
        if "jax_disable_jit" in config.touched and disable_jit.value:
            return self.fun(*args, **kwargs), None, ()
        if current_trace() is not EVAL_TRACE:
            return super().__call__(*args, **kwargs), None, ()
        guards.check_execution_allowed(f"jit({self.name})")
        if self._fast_ok and not kwargs:
            leaves, key = fast_key(args)
            if key is not None:
                entry: FastEntry | RefEntry | CallEntry | None = self._fast.get(key)
                if entry is None:
                    staged, _, leaves = self.stage(*args)
                    if is_mutable_call(staged):
                        return run_mutable(staged, leaves, self.name), None, ()
                    if self._placement(staged, args, leaves) is not None:
                        return self._general(args, kwargs)
                    call = self._compiled(staged)
                    if call.executable.mesh is not None:
                        return self._general(args, kwargs)
                    keepalive = tuple(x.aval for x in leaves if type(x) is Array)
                    if call.hi is not None or call.executable.host_outputs:
                        entry = CallEntry(call, staged.mutable_consts)
                    elif call.ref_inputs or staged.mutable_consts:
                        entry = RefEntry(call, staged.mutable_consts, keepalive)
                    else:
                        entry = FastEntry(call, keepalive)
                    self._fast[key] = entry
                out = entry(leaves)
                if out is not ALIASED:
                    if special_values.checking():
                        return self._checked(args, kwargs, out)
                    if type(entry) is RefEntry and entry.closed:
                        leaves = [*leaves, *entry.closed]  # the inputs the call took
                    return out, entry.call, leaves
                # A Ref passed twice (or passed and closed over), or arguments over several
                # devices: the general path.
        return self._general(args, kwargs)

    def _general(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, CompiledCall | None, Sequence[Any]]:
        staged, _, leaves = self.stage(*args, **kwargs)
        for leaf in leaves:
            if isinstance(leaf, Tracer):  # no trace is active: it escaped the one that made it
                raise_escaped_tracer(leaf, self.name)
        if is_mutable_call(staged):
            return run_mutable(staged, leaves, self.name), None, ()
        dyn_args = self._split(args, kwargs)[0]
        call = self._compiled(staged, self._placement(staged, dyn_args, leaves))
        if staged.mutable_consts:
            leaves = [*leaves, *staged.mutable_consts]
        if special_values.checking():
            return self._checked(args, kwargs, call(leaves))
        return call(leaves), call, leaves

    def _checked(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], outs: Any
    ) -> tuple[Any, None, tuple[()]]:
        """Outputs made under `jax_debug_nans`/`jax_debug_infs`, checked; with no compiled call
        to report, so C++ dispatch (which would not check) never repeats the call."""
        special_values.check_jit_outputs(self.name, self.fun, args, kwargs, outs)
        return outs, None, ()

    @api_boundary
    def _cache_miss(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, bool]:
        """C++ dispatch found no entry: run in Python, and say how C++ may repeat the call."""
        self.dispatch_misses += 1
        outs, call, leaves = self._call(args, kwargs)
        if call is None or call.hi is not None or call.executable.calls_host:
            # Hi values are lowered and raised by Python's path; a host callback's failure is
            # chained to its exception there (and the buffers it consumed marked).
            return outs, None, False
        return outs, self._fast_path(call, args, kwargs, leaves), False

    def _fast_path(
        self,
        call: CompiledCall,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        leaves: Sequence[Any],
    ) -> _bridge_dispatch.FastPath | None:
        """How C++ may repeat this call, or None where it would not do what Python did.

        C++ sees the arguments through jaxlib's tree registry and converts host values by JAX's
        x64 flag: both must agree with what Lamina did for this call. A call updating Refs is
        repeated only if they are all among its arguments (`leaves` holds the closed-over ones
        after the arguments, so C++ sees fewer leaves); its entry is for those Refs only.
        """
        dyn_args, dyn_kwargs, *_ = self._split(args, kwargs)
        try:
            seen = _bridge_dispatch.dispatch_leaves((dyn_args, dyn_kwargs))
        except Exception:  # e.g. dict keys jaxlib cannot sort: C++ would fail the same way
            return None
        if len(seen) != len(leaves):
            return None
        host_values = False
        for mine, theirs in zip(leaves, seen, strict=True):
            kind = type(mine)
            if kind is Array:
                mine = mine._buf
            elif kind is Ref:
                mine = dispatch_value(mine)
                if mine is None:
                    return None
            elif kind is not _bridge.DeviceArray:
                if kind not in _HOST_KINDS and not isinstance(mine, np.generic):
                    return None
                host_values = True
            if mine is not theirs:
                return None
        if host_values and enable_x64.value != _bridge_dispatch.jax_x64_enabled():
            return None
        if call.ref_inputs:
            refs = ref_arguments(call, leaves)
            return None if refs is None else fast_path_of(call, len(leaves), refs)
        known = self._fast_paths.get(id(call))
        if known is None or known[0] is not call:
            known = self._fast_paths[id(call)] = (call, fast_path_of(call, len(leaves)))
        return known[1]

    def staged_shardings(
        self, staged: Staged, args: tuple[Any, ...], kwargs: dict[str, Any], n_leaves: int
    ) -> tuple[Sequence[Any], Sequence[Any]] | None:
        if self.in_shardings is None and self.out_shardings is None:
            return None
        dyn_args = self._split(args, kwargs)[0]
        ins = shardings.per_leaf(self.in_shardings, dyn_args, n_leaves, "in_shardings")
        return ins, shardings.per_out(self.out_shardings, staged.out_tree)

    def on_cache_miss(self, signature: Signature) -> None:
        if explain_cache_misses.value:
            logger.warning(explain_miss(self.name, signature, self._seen))
        self._seen.append(signature)

    # ---- AOT stages ---------------------------------------------------------------------------

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        staged, captured, leaves = self.stage_abstract(args, kwargs)
        if captured:
            raise TypeError(f"jit({self.name}).trace: the function closes over traced values")
        placement = self._placement(staged, self._split(args, kwargs)[0], leaves)
        return Traced(
            self.name,
            staged,
            self._in_tree(args, kwargs),
            placement,
            compiler_options=self.compiler_options,
            keep_unused=self.keep_unused,
        )

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        """`jit(f).lower(*args)`: a `Lowered` (args may be arrays or `ShapeDtypeStruct`s)."""
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The outputs' shapes and dtypes as `ShapeDtypeStruct`s, from a trace (no compiling)."""
        return self.trace(*args, **kwargs).out_info

    def _in_tree(self, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        dyn_args, dyn_kwargs, *_ = self._split(args, kwargs)
        return tree_util.tree_structure((dyn_args, dyn_kwargs))


_live_functions: Final[weakref.WeakSet[JitFunction]] = weakref.WeakSet()
"""Every `JitFunction` alive, so that `clear_caches` reaches their own caches."""


def _jit_functions() -> list[JitFunction]:
    """The live jitted functions, read while other threads may be making new ones (a WeakSet
    changed during the copy raises: copy again)."""
    while True:
        try:
            return list(_live_functions)
        except RuntimeError:
            continue


def _forget_dispatch_entries() -> None:
    """The mesh in context changed: calls repeated by Python's and C++'s dispatch entries
    ran on the previous one (traces and compiled programs stay: they are keyed by it)."""
    for caches in list(_live_caches):
        caches.forget_dispatch_entries()
    for function in _jit_functions():
        dispatcher = function.dispatcher
        if dispatcher is not None:
            dispatcher._clear_cache()


on_context_mesh_change(_forget_dispatch_entries)


def clear_caches() -> None:
    """Empty the in-memory caches of traces and compiled programs, as `jax.clear_caches()`:
    every jitted function traces and compiles again on its next call. The persistent cache
    (on disk) keeps its entries."""
    for function in _jit_functions():
        function.clear_cache()
    trace_caches.clear()
    clear_programs()
    runtime().clear()
    clear_registered_caches()


_HOST_KINDS: Final = frozenset({np.ndarray, bool, int, float, complex})


def explain_miss(name: str, signature: Signature, seen: Sequence[Signature]) -> str:
    """Why `signature` missed the trace cache, against the closest earlier signature."""
    if not seen:
        return f"TRACING CACHE MISS at {name}: the first call, nothing to compare with."
    closest = seen[-1]
    reasons: list[str] = []
    if closest.in_tree != signature.in_tree:
        reasons.append(
            f"the argument tree structure changed from {closest.in_tree} to {signature.in_tree}"
        )
    else:
        for i, (old, new) in enumerate(zip(closest.in_avals, signature.in_avals, strict=True)):
            if old == new:
                continue
            if (
                isinstance(old, ShapedArray)
                and isinstance(new, ShapedArray)
                and old.normalize() == new.normalize()
            ):
                reasons.append(f"argument {i} changed weak type: {old!r} then {new!r}")
            else:
                reasons.append(
                    f"argument {i} changed type from {old.str_short(True)} to {new.str_short(True)}"
                )
    if closest.static_args != signature.static_args:
        reasons.append(
            f"static arguments changed from {closest.static_args} to {signature.static_args}"
        )
    if closest.context != signature.context:
        reasons.append(f"the configuration changed from {closest.context} to {signature.context}")
    return f"TRACING CACHE MISS at {name} because: " + "; ".join(reasons or ["unknown"])


def jit(
    fun: Callable[..., Any] | NotSpecified = NOT_SPECIFIED,
    *,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Sequence[str] | None = None,
    keep_unused: bool = False,
    inline: bool = False,
    compiler_options: Mapping[str, Any] | None = None,
    in_shardings: Any = None,
    out_shardings: Any = None,
    device: Any = None,
    backend: str | None = None,
) -> Any:
    """Compile `fun` with XLA; usable as `@jit` or `@jit(static_argnums=...)`, as `jax.jit`.

    `in_shardings`/`out_shardings` place the inputs and outputs on a device mesh, as JAX's:
    one sharding (`NamedSharding`, or a bare `P` over the mesh in context) for all, or a tuple
    with one per positional argument (or per output of a tuple result), None for "unspecified".

    `compiler_options` are XLA options by name, for example
    `{"xla_cpu_experimental_ynn_fusion_type": ""}`; they are part of the compilation cache key.

    The result is jaxlib's C++ dispatcher driven by a `JitFunction` (`jit_function_of` finds
    it): it has `trace` and `lower`, and repeats calls without running Python. `device` and
    `backend` are JAX's deprecated ways to name one device (`shardings.jit_placement`).
    """
    return jit_decorator(
        _dispatching_jit,
        fun,
        dict(
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            donate_argnames=donate_argnames,
            keep_unused=keep_unused,
            inline=inline,
            compiler_options=compiler_options,
            **shardings.jit_placement(device, backend, in_shardings, out_shardings),
        ),
    )


def _dispatching_jit(fun: Callable[..., Any], **options: Any) -> Any:
    return JitFunction(fun, **options).new_dispatcher()


def toplevel_dispatcher(fn: Callable[..., Any], static_argnames: tuple[str, ...]) -> Any:
    """How core runs its elementwise, reduction and product `jnp` functions outside any trace:
    as JAX does, each is a jitted function, one compiled program per argument signature and
    static values, repeated by C++ dispatch. XLA's error for a deleted or donated argument
    (C++ runs it) becomes the one Python's path raises."""
    dispatcher = JitFunction(fn, inline=True, static_argnames=static_argnames).new_dispatcher()

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return dispatcher(*args, **kwargs)
        except (ValueError, _bridge.JaxRuntimeError) as err:
            leaves = _bridge_dispatch.dispatch_leaves((args, kwargs))
            deleted = _bridge_executables.deleted_input(err, leaves)
            if deleted is None:
                raise
            raise deleted from deleted.__cause__

    return run


def toplevel_jit(jitted: Jitted) -> Any:
    """How core's own jitted functions (`_pad`, `convolve`, `det`, ...) run outside any trace:
    through the same C++ dispatcher as `lamina.jit`, with the function's own options."""
    return JitFunction(
        jitted.fun,
        static_argnums=jitted.static_argnums,
        static_argnames=jitted.static_argnames,
        donate_argnums=jitted.donate_argnums,
        donate_argnames=jitted.donate_argnames,
        keep_unused=jitted.keep_unused,
        inline=jitted.inline,
    ).new_dispatcher()


def jit_function_of(obj: Any) -> JitFunction | None:
    """The `JitFunction` behind what `jit` returned, or None if `obj` is not one."""
    found = getattr(obj, "_lamina_jit", None)
    return found if isinstance(found, JitFunction) else None
