"""`jit` at the IR level: stage a Python function as one `jit` equation.

`Jitted` traces its function once per argument signature (tree structure, abstract values
with weak types, static arguments, tracing-relevant configuration) and binds `jit_p`. Its
caches are the function's, not the wrapper's (`_jit_cache`): a new `jit(f)` of the same `f`
reuses the traces of the previous ones. Under a transformation the call is staged as an
equation; outside any, it is evaluated by the installed eager evaluator (NumPy's reference in
core alone, XLA once lamina-runtime is imported). The runtime extends this class with
compilation and the AOT stages.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
import operator
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from lamina_core.config import (
    config,
    debug_nans,
    disable_jit,
    enable_checks,
    log_compiles,
    no_tracing,
)
from lamina_core.interpreters import axis_frame, bound_axis_names, trace_to_jaxpr
from lamina_core.ir import AbstractValue, ClosedJaxpr, DebugInfo, Var, concrete_context_mesh
from lamina_core.trace import (
    EVAL_TRACE,
    Tracer,
    check_jaxpr,
    check_no_aliased_args,
    check_no_returned,
    check_not_closed_over_and_passed,
    check_vma_enabled,
    cur_qdd,
    current_trace,
    shaped_abstractify,
    typeof,
    with_qdd,
)
from lamina_core.transforms._call import UNSPECIFIED, jit_p, jit_params
from lamina_core.transforms._jit_cache import FunctionCaches, JitCaches, Plan, trace_caches
from lamina_core.transforms._make_jaxpr import (
    argument_names,
    fun_name,
    func_src_info,
    not_an_array,
    wrap_as_jax,
)
from lamina_core.tree import tree_util


def _indices(value: int | Sequence[int] | None) -> tuple[int, ...]:
    """An argnums setting as a tuple of ints; TypeError (Python's text) for non-integers."""
    if value is None:
        return ()
    try:
        return (operator.index(value),)  # type: ignore[arg-type]  # checked at run time
    except TypeError:
        return tuple(operator.index(v) for v in value)  # type: ignore[union-attr]  # likewise


def _names(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """An argnames setting as a tuple of strings, as JAX checks it."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    names = tuple(value)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"argument is not a string: {name}")
    return names


_POSITIONAL: Final = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_KEYWORD: Final = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_NO_DONATION: Final = "no donation"
_DISPATCH_LOG: Final = logging.getLogger("jax._src.dispatch")
"""JAX's logger of traces and compilations (`jax_log_compiles`): programs written for JAX
listen to it (optax's tests count "Finished ... compilation" records)."""


def _log_level() -> int:
    """WARNING under `jax_log_compiles`, else DEBUG (cheap when the option was never set)."""
    on = "jax_log_compiles" in config.touched and log_compiles.value
    return logging.WARNING if on else logging.DEBUG


"""Ends the context of a staged call's key when NaN checks turned its donation off."""


def _check_argnums(params: list[inspect.Parameter], nums: tuple[int, ...], what: str) -> None:
    """JAX's check of `static_argnums`/`donate_argnums` against the signature: every position
    must exist (from either end) unless the function takes `*args`."""
    if not nums or any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return
    n_positional = sum(p.kind in _POSITIONAL for p in params)
    if -min(nums) > n_positional or max(nums) >= n_positional:
        raise ValueError(
            f"Jitted function has {what}={nums}, but only accepts {n_positional} positional "
            "arguments."
        )


def _check_argnames(params: list[inspect.Parameter], names: tuple[str, ...], what: str) -> None:
    """JAX's check of `static_argnames`/`donate_argnames`: each names a parameter that may be
    passed by keyword (any name, with `**kwargs`, except positional-only ones)."""
    if not names:
        return
    positional_only = {
        p.name
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL)
    }
    if bad := positional_only & set(names):
        raise ValueError(
            f"Jitted function has invalid argnames {bad} in {what}. These are positional-only"
        )
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return
    if bad := set(names) - {p.name for p in params if p.kind in _KEYWORD}:
        raise ValueError(
            f"Jitted function has invalid argnames {bad} in {what}. Function does not take "
            "these args."
        )


@dataclass(frozen=True, slots=True)
class Signature:
    """What a trace of a jitted function depends on; the key of its trace cache."""

    in_tree: Any
    in_avals: tuple[AbstractValue, ...]
    static_args: tuple[tuple[int | str, Hashable], ...]
    context: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Staged:
    """One trace of a jitted function: the callee and how to call it."""

    jaxpr: ClosedJaxpr
    out_tree: Any
    donated_invars: tuple[bool, ...]
    mutable_consts: tuple[Any, ...] = ()
    """Mutable values (Refs) the function closes over, passed after the arguments (as JAX's
    jit passes them): the callee's last inputs. Empty when it closes over a tracer: then its
    Refs lead, with the tracers."""
    hi_mutable_consts: tuple[Any, ...] = ()
    """Values of mutable hi types (boxes) the function closes over: its first inputs (JAX's
    jit moves them there). The trace holds while they hold what they held when traced."""


def _same_qdds(staged: Staged) -> bool:
    """Whether the boxes `staged` closes over hold values of the types they held when it
    was traced (its leading inputs' initial data)."""
    invars = staged.jaxpr.jaxpr.invars
    return all(
        cur_qdd(c) == v.initial_qdd for c, v in zip(staged.hi_mutable_consts, invars, strict=False)
    )


def _with_sorted_dicts(tree: Any) -> Any:
    """`tree` with its dicts' keys in sorted order, as JAX's jit returns them: optree's trees
    would rebuild dicts in the order the first trace made them. Custom nodes are left as they
    are; dicts whose keys do not sort keep their order."""
    kind = type(tree)
    if kind is dict:
        try:
            keys = sorted(tree)
        except TypeError:
            keys = list(tree)
        return {k: _with_sorted_dicts(tree[k]) for k in keys}
    if kind is list or kind is tuple:
        return kind(_with_sorted_dicts(x) for x in tree)
    return tree


ToplevelJit = Callable[["Jitted"], Callable[..., Any]]
"""`make(jitted)`: a callable running `jitted` as one compiled program outside any trace."""

_make_toplevel_jit: ToplevelJit | None = None


def install_toplevel_jit(make: ToplevelJit | None) -> ToplevelJit | None:
    """Replace how core's own jitted functions (the `jnp` helpers JAX also jits) run when no
    trace is active; returns the previous. lamina-runtime installs its C++ jit dispatcher, so a
    repeated eager call costs what a `lamina.jit` call costs; without one, a call binds `jit`
    on the eager evaluator."""
    global _make_toplevel_jit
    previous, _make_toplevel_jit = _make_toplevel_jit, make
    return previous


class Jitted:
    """A function staged as a `jit` call. Identity is intended; its caches are its function's
    (shared by every wrapper of that function with the same options), held in `_caches`."""

    _toplevel: Callable[..., Any] | None = None
    """The installed top-level runner for this function, made at its second eager call (a
    `Jitted` made and called once, around a closure, never pays for one)."""
    _toplevel_calls: int = 0

    def __init__(
        self,
        fun: Callable[..., Any],
        *,
        static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None,
        donate_argnums: int | Sequence[int] | None = None,
        donate_argnames: str | Sequence[str] | None = None,
        keep_unused: bool = False,
        inline: bool = False,
    ) -> None:
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {fun!r} of type {type(fun).__name__}")
        self.fun = fun
        self.static_argnums = _indices(static_argnums)
        self.static_argnames = _names(static_argnames)
        self.donate_argnums = _indices(donate_argnums)
        self.donate_argnames = _names(donate_argnames)
        self.keep_unused = keep_unused
        self.inline = inline
        function_caches = trace_caches.of(fun)
        self._params = self._parameters(function_caches)
        self._check_settings()
        # As JAX: a static or donated argument may be named by position or by name, and is
        # recognized however the call passes it.
        self.static_argnums, self.static_argnames = self._both_ways(
            self.static_argnums, self.static_argnames
        )
        self.donate_argnums, self.donate_argnames = self._both_ways(
            self.donate_argnums, self.donate_argnames
        )
        # As JAX, at `jit` time: an argument is static or donated, not both.
        if both := set(self.static_argnames) & set(self.donate_argnames):
            raise ValueError(
                "static_argnames and donate_argnames cannot intersect. Argument names "
                f"{both} appear in both static_argnames and donate_argnames"
            )
        if both_nums := set(self.static_argnums) & set(self.donate_argnums):
            raise ValueError(
                "static_argnums and donate_argnums cannot intersect. Argument positions "
                f"{both_nums} appear in both static_argnums and donate_argnums"
            )
        self._function_caches = function_caches
        try:
            caches = function_caches.for_options(
                (type(self), self._options_key()), self._new_caches
            )
        except TypeError:  # options that do not hash (a list of shardings): this wrapper's own
            caches = self._new_caches()
        self._caches = caches
        # The caches' own dicts, bound here: the hot paths read one attribute, as before.
        self._traces = function_caches.traces
        self._seen = function_caches.seen
        self._cache = caches.staged
        self._plans = caches.plans
        self._call_params = caches.call_params
        self._box_traces: dict[Any, list[Staged]] = {}
        """Per signature, its traces closing over boxes: one per set of types they held."""
        # `updated=()`: copying `fun.__dict__` could overwrite this object's own attributes
        # (a custom_jvp function has a `fun` too).
        wrap_as_jax(self, fun, updated=())

    def _check_settings(self) -> None:
        """JAX's checks of the argnums and argnames settings against `fun`'s signature."""
        if self._params is None:
            if self.donate_argnames:
                raise ValueError(
                    f"Getting the signature of function {self.fun} failed. Pass donate_argnums "
                    "instead of donate_argnames."
                )
            return
        _check_argnums(self._params, self.static_argnums, "static_argnums")
        _check_argnames(self._params, self.static_argnames, "static_argnames")
        _check_argnums(self._params, self.donate_argnums, "donate_argnums")
        _check_argnames(self._params, self.donate_argnames, "donate_argnames")

    def _both_ways(
        self, nums: tuple[int, ...], names: tuple[str, ...]
    ) -> tuple[tuple[int, ...], tuple[str, ...]]:
        """Complete argument positions from names and names from positions (by signature)."""
        if self._params is None:
            return nums, names
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        positional = [p for p in self._params if p.kind in kinds]
        all_nums, all_names = set(nums), set(names)
        for i, param in enumerate(positional):
            if param.name in all_names:
                all_nums.add(i)
            if i in all_nums and param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
                all_names.add(param.name)
        return tuple(sorted(all_nums)), tuple(sorted(all_names))

    def _parameters(self, caches: FunctionCaches) -> list[inspect.Parameter] | None:
        if caches.parameters is None:
            try:
                caches.parameters = (list(inspect.signature(self.fun).parameters.values()),)
            except (TypeError, ValueError):
                caches.parameters = (None,)
        return caches.parameters[0]

    def _options_key(self) -> tuple[Any, ...]:
        """What, besides the function, decides this wrapper's staged calls: its options (after
        normalization). The runtime adds its own."""
        return (
            self.static_argnums,
            self.static_argnames,
            self.donate_argnums,
            self.donate_argnames,
            self.keep_unused,
            self.inline,
        )

    def _new_caches(self) -> JitCaches:
        """Empty caches of the kind this class fills (the runtime's hold compiled calls)."""
        return JitCaches()

    @property
    def name(self) -> str:
        return fun_name(self.fun)

    def _plan(self, n: int) -> Plan:
        """For `n` positional arguments: the static positions (sorted), the dynamic ones, the
        static position set and the donated dynamic positions."""
        plan = self._plans.get(n)
        if plan is None:
            static_nums = {i % n if -n <= i < 0 else i for i in self.static_argnums}
            sorted_static = tuple(i for i in sorted(static_nums) if 0 <= i < n)
            dynamic = tuple(i for i in range(n) if i not in static_nums)
            donated = {i for i in self.donate_argnums if i not in static_nums}
            plan = self._plans[n] = (sorted_static, dynamic, static_nums, donated)
        return plan

    def _split(self, args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        sorted_static, dynamic, static_nums, donated_positions = self._plan(len(args))
        static: list[tuple[int | str, Hashable]] = [(i, args[i]) for i in sorted_static]
        static.extend((name, kwargs[name]) for name in self.static_argnames if name in kwargs)
        for where, value in static:
            try:
                hash(value)
            except TypeError:
                raise ValueError(
                    f"Non-hashable static arguments are not supported. An error occurred while "
                    f"trying to hash an object of type {type(value)}, {value!r}. The argument "
                    f"was {where!r} of {self.name}."
                ) from None
        dyn_args = tuple([args[i] for i in dynamic])
        dyn_kwargs = (
            {k: v for k, v in kwargs.items() if k not in self.static_argnames} if kwargs else {}
        )
        return dyn_args, dyn_kwargs, tuple(static), static_nums, donated_positions

    def stage(self, *args: Any, **kwargs: Any) -> tuple[Staged, list[Any], list[Any]]:
        """Trace (or reuse the trace of) this call: the staged callee, captures and flat args."""
        return self.stage_abstract(args, kwargs, typeof)

    def stage_abstract(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        abstractify: Callable[[Any], AbstractValue] = shaped_abstractify,
    ) -> tuple[Staged, list[Any], list[Any]]:
        """`stage`, reading the arguments' types with `abstractify`: by default as JAX's
        `trace` and `lower` read them, which take any object with `shape` and `dtype`."""
        dyn_args, dyn_kwargs, static, static_nums, donated = self._split(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        try:
            in_avals = tuple([abstractify(x) for x in leaves])
        except TypeError:
            raise not_an_array(self.fun, args, kwargs, leaves, static_nums, abstractify) from None
        in_avals = tuple(with_qdd(in_avals, leaves))
        # Named axes bound by enclosing vmaps are part of JAX's trace context (a collective's
        # trace depends on their sizes, `psum(1, 'i')` being one), and so is whether a checked
        # shard_map body encloses the call (its `psum`s bind `psum_invariant`), and the mesh in
        # context (its results are laid out over it).
        axes = tuple((n, axis_frame(n).size) for n in bound_axis_names())
        context = (*config.trace_context(), axes, check_vma_enabled(), concrete_context_mesh())
        signature = Signature(in_tree, in_avals, static, context)
        mutable_args = any(a.mutable for a in in_avals)
        # As JAX's, NaN checks turn donation off: a call that made a NaN runs again on its
        # arguments, de-optimized. The trace is the same; only this wrapper's staged call is not.
        undonated = bool(donated or self.donate_argnames) and debug_nans.value
        key = signature
        if undonated:
            key = dataclasses.replace(signature, context=(*context, _NO_DONATION))
        staged = self._cache.get(key)
        captured: list[Any] = []
        if staged is not None and staged.hi_mutable_consts and not _same_qdds(staged):
            # A box it closes over holds another type now: another trace, or a new one.
            staged = next((t for t in self._box_traces.get(key, ()) if _same_qdds(t)), None)
            if staged is not None:
                self._cache[key] = staged
        if staged is None:
            if mutable_args:
                check_no_aliased_args(self._debug(args, kwargs, static_nums), in_avals, leaves)
            traced = self._traces.get(signature)  # by another wrapper of the function
            if traced is not None and traced.hi_mutable_consts and not _same_qdds(traced):
                traced = None  # the boxes it closes over hold other types now
            cacheable = True
            if traced is None:
                traced, captured = self._trace(args, kwargs, static_nums, in_tree, in_avals)
                # A trace that captured tracers of an enclosing trace is only valid inside it.
                cacheable = not captured and not any(
                    isinstance(c, Tracer) for c in traced.mutable_consts
                )
                if cacheable:
                    self.on_cache_miss(signature)
                    self._traces[signature] = traced
            staged = traced
            if not undonated:
                staged = self._donating(traced, len(captured), dyn_args, dyn_kwargs, donated)
            if cacheable:
                self._cache[key] = staged
                if staged.hi_mutable_consts:
                    self._box_traces.setdefault(key, []).append(staged)
        elif mutable_args:
            check_no_aliased_args(staged.jaxpr.jaxpr.debug_info, in_avals, leaves)
        if staged.mutable_consts or captured:
            check_not_closed_over_and_passed(
                staged.jaxpr.jaxpr.debug_info, (*captured, *staged.mutable_consts), leaves
            )
        return staged, captured, leaves

    def _debug(
        self, args: Sequence[Any], kwargs: dict[str, Any], static_nums: set[int]
    ) -> DebugInfo:
        # Named now, not lazily: a closure would keep the arguments alive with the trace.
        return DebugInfo(
            "jit", func_src_info(self.fun), argument_names(self.fun, args, kwargs, static_nums)
        )

    def _trace(
        self,
        args: Sequence[Any],
        kwargs: dict[str, Any],
        static_nums: set[int],
        in_tree: Any,
        in_avals: tuple[AbstractValue, ...],
    ) -> tuple[Staged, list[Any]]:
        """A new trace of this call, donating nothing: the same for every set of options."""
        out_trees: list[Any] = []

        def flat_fun(*flat: Any) -> list[Any]:
            call_args, call_kwargs = tree_util.tree_unflatten(in_tree, flat)
            it = iter(call_args)
            full = [args[i] if i in static_nums else next(it) for i in range(len(args))]
            merged = {k: kwargs[k] if k in self.static_argnames else call_kwargs[k] for k in kwargs}
            out = _with_sorted_dicts(self.fun(*full, **merged))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_trees.append(out_tree)
            return out_leaves

        debug = self._debug(args, kwargs, static_nums)
        if "jax_no_tracing" in config.touched and no_tracing.value:
            raise RuntimeError(
                f"re-tracing function {debug.func_src_info} for `jit`, but 'no_tracing' is set"
            )
        level = _log_level()
        if _DISPATCH_LOG.isEnabledFor(level) and current_trace() is EVAL_TRACE:
            start = time.perf_counter()
            closed = trace_to_jaxpr(flat_fun, in_avals, debug)
            name = fun_name(self.fun)
            elapsed = time.perf_counter() - start
            _DISPATCH_LOG.log(level, "Finished tracing %s for jit in %.9f sec", name, elapsed)
        else:
            closed = trace_to_jaxpr(flat_fun, in_avals, debug)
        inner = closed.jaxpr
        check_no_returned(debug, inner)
        # As JAX's jit: when the function closes over a tracer, every value it closes over
        # (Refs too) becomes a leading input, in the order the trace met them; otherwise the
        # Refs it closes over become trailing inputs (JAX's staging rule moves them there),
        # and values of mutable hi types (boxes) leading ones.
        hi_mutable = tuple(
            c for c in closed.consts if not isinstance(c, Tracer) and typeof(c).has_qdd
        )
        box_vars: list[Var] = []
        if hi_mutable:
            boxes = [not isinstance(c, Tracer) and typeof(c).has_qdd for c in closed.consts]
            box_vars = [v for v, b in zip(inner.constvars, boxes, strict=True) if b]
            inner = inner.replace(
                constvars=tuple(v for v, b in zip(inner.constvars, boxes, strict=True) if not b)
            )
            closed = ClosedJaxpr(
                inner, [c for c, b in zip(closed.consts, boxes, strict=True) if not b]
            )
        if any(isinstance(c, Tracer) for c in closed.consts):
            lead = [True] * len(closed.consts)
        else:
            lead = [not typeof(c).mutable for c in closed.consts]
        captured = [c for c, first in zip(closed.consts, lead, strict=True) if first]
        refs = tuple(c for c, first in zip(closed.consts, lead, strict=True) if not first)
        leading = [v for v, first in zip(inner.constvars, lead, strict=True) if first]
        trailing = [v for v, first in zip(inner.constvars, lead, strict=True) if not first]
        jaxpr = ClosedJaxpr(
            inner.replace(constvars=(), invars=(*box_vars, *leading, *inner.invars, *trailing)),
            [],
        )
        if "jax_enable_checks" in config.touched and enable_checks.value:
            check_jaxpr(jaxpr)
        staged = Staged(jaxpr, out_trees[0], (False,) * len(jaxpr.in_avals), refs, hi_mutable)
        return staged, captured

    def _donating(
        self,
        traced: Staged,
        n_captured: int,
        dyn_args: tuple[Any, ...],
        dyn_kwargs: dict[str, Any],
        donated: set[int],
    ) -> Staged:
        """`traced` with this wrapper's donation (itself when nothing is donated)."""
        if not donated and not (self.donate_argnames and dyn_kwargs):
            return traced
        flags = self._donated_flags(dyn_args, dyn_kwargs, donated)
        n_refs = len(traced.mutable_consts)
        n_lead = n_captured + len(traced.hi_mutable_consts)
        donated_invars = (False,) * n_lead + flags + (False,) * n_refs
        return dataclasses.replace(traced, donated_invars=donated_invars)

    def _donated_flags(
        self, dyn_args: tuple[Any, ...], dyn_kwargs: dict[str, Any], donated: set[int]
    ) -> tuple[bool, ...]:
        flags: list[bool] = []
        original_index = 0
        for arg in dyn_args:
            while original_index in self.static_argnums:
                original_index += 1
            n = len(tree_util.tree_leaves(arg))
            flags.extend([original_index in donated] * n)
            original_index += 1
        for name, value in dyn_kwargs.items():
            n = len(tree_util.tree_leaves(value))
            flags.extend([name in self.donate_argnames] * n)
        return tuple(flags)

    def on_cache_miss(self, signature: Signature) -> None:
        """Called when a call is traced anew; the runtime explains misses here."""

    def staged_shardings(
        self, staged: Staged, args: tuple[Any, ...], kwargs: dict[str, Any], n_leaves: int
    ) -> tuple[Sequence[Any], Sequence[Any]] | None:
        """The shardings the caller gave for each flat argument and output (None where none
        was given), recorded on the staged `jit` equation as JAX's `in_shardings` and
        `out_shardings`; None when none were given. The runtime's `jit` has them."""
        return None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if "jax_disable_jit" in config.touched and disable_jit.value:
            return self.fun(*args, **kwargs)
        if _make_toplevel_jit is not None and current_trace() is EVAL_TRACE:
            runner = self._toplevel
            if runner is None and self._toplevel_calls > 0:
                runner = self._toplevel = _make_toplevel_jit(self)
            if runner is not None:
                return runner(*args, **kwargs)
            self._toplevel_calls += 1
        staged, captured, leaves = self.stage(*args, **kwargs)
        captured = [*staged.hi_mutable_consts, *captured]
        params = self._jit_params(staged)
        given = self.staged_shardings(staged, args, kwargs, len(leaves))
        if given is not None:
            params = dict(params)
            ins, outs_given = given
            before, after = len(captured), len(staged.mutable_consts)
            params["in_shardings"] = (
                *[UNSPECIFIED] * before,
                *[UNSPECIFIED if s is None else s for s in ins],
                *[UNSPECIFIED] * after,
            )
            params["out_shardings"] = tuple(UNSPECIFIED if s is None else s for s in outs_given)
        outs = jit_p.bind(*captured, *leaves, *staged.mutable_consts, **params)
        return tree_util.tree_unflatten(staged.out_tree, outs)

    def _jit_params(self, staged: Staged) -> dict[str, Any]:
        """The `jit` equation's parameters for `staged` (made once per trace; not to mutate)."""
        known = self._call_params.get(id(staged))
        if known is not None and known[0] is staged:
            return known[1]
        params = jit_params(
            staged.jaxpr,
            self.name,
            donated_invars=staged.donated_invars,
            keep_unused=self.keep_unused,
            inline=self.inline,
        )
        params["ctx_mesh"] = concrete_context_mesh()
        if len(self._call_params) > 2 * len(self._cache) + 8:
            self._call_params.clear()  # traces the cache no longer holds
        self._call_params[id(staged)] = (staged, params)
        return params

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        # Decorating a method: bind `self` like a function would.
        return self if instance is None else functools.partial(self, instance)

    def __repr__(self) -> str:
        return f"<Jitted {self.name}>"


class NotSpecified:
    """The default of `jit`'s function: omitted means `@jit(...)` (a decorator), while an
    explicit `None` is an error, as in JAX."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NotSpecified"


NOT_SPECIFIED: Final = NotSpecified()


def jit_decorator(make: Callable[..., Any], fun: Any, options: dict[str, Any]) -> Any:
    """`make(fun, **options)`, or a decorator doing that when `fun` is omitted (`@jit(...)`)."""

    def wrap(f: Any) -> Any:
        if not callable(f):
            raise TypeError(f"Expected a callable value, got {f}")
        return make(f, **options)

    return wrap if isinstance(fun, NotSpecified) else wrap(fun)


def jit(
    fun: Callable[..., Any] | NotSpecified = NOT_SPECIFIED,
    *,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Sequence[str] | None = None,
    keep_unused: bool = False,
    inline: bool = False,
) -> Any:
    """Stage `fun` as a `jit` call; usable as `@jit` or `@jit(static_argnums=...)`."""
    return jit_decorator(
        Jitted,
        fun,
        dict(
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            donate_argnames=donate_argnames,
            keep_unused=keep_unused,
            inline=inline,
        ),
    )
