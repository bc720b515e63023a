"""The staging trace: runs a Python function on tracers and records a jaxpr.

Every primitive applied to a staging tracer becomes an equation. Constants become literals
(one canonical value object per distinct constant, so identity survives for the constants
pass); tracers of an enclosing trace are captured as constvars whose values are those tracers.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any, Final

from lamina_core.ir import (
    MESHES_SEEN,
    AbstractValue,
    Atom,
    AvalMutableQDD,
    AvalQDD,
    ClosedJaxpr,
    DebugInfo,
    DimExpr,
    Jaxpr,
    JaxprEqn,
    Literal,
    MutableQDD,
    PpContext,
    PpSettings,
    Primitive,
    RuleTable,
    ShapedArray,
    SourceInfo,
    Var,
    abstract_eval_rules,
    common_mesh,
    const_fold_rules,
    context_mesh,
    context_mesh_primitives,
    current_source_info,
    effects_rules,
    explicit_result,
    no_effects,
    pp,
    pp_eqn,
    qdd_final_rules,
    qdd_primitives,
    reset_name_stack,
    value_impl_rules,
)
from lamina_core.trace import (
    CHECKED_SCOPES,
    EVAL_TRACE,
    Trace,
    Tracer,
    by_reference_types,
    canonical_value,
    check_no_leaks,
    check_vma_enabled,
    checking_leaks,
    current_trace,
    is_hi_value,
    raise_escaped_tracer,
    set_current_trace,
    typeof,
    with_vma,
)

_compile_time_eval: ContextVar[bool] = ContextVar("lamina_compile_time_eval", default=False)

# The tables `process_primitive` reads for every equation, as live mappings (a dict lookup
# instead of a method call each: the staging hot path).
_ABSTRACT_EVAL_RULES: Final = abstract_eval_rules.rules
_CONST_FOLD_RULES: Final = const_fold_rules.rules
_EFFECTS_RULES: Final = effects_rules.rules

StagingRule = Callable[["StagingTrace", Sequence[Any], dict[str, Any]], "list[Any] | None"]
custom_staging_rules: RuleTable[StagingRule] = RuleTable("custom staging")
"""JAX's: `rule(trace, args, params)` stages a primitive otherwise than as its one equation (a
`jit(inline=True)` call as its callee's equations), or returns None to stage that equation."""
_CUSTOM_STAGING_RULES: Final = custom_staging_rules.rules


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Inside the block, a primitive applied to values that are not tracers is evaluated right
    away, even while a function is being staged (`jax.ensure_compile_time_eval`)."""
    previous = _compile_time_eval.get()
    try:
        _compile_time_eval.set(True)  # inside: an interrupt as it returns must not keep it set
        yield
    finally:
        _compile_time_eval.set(previous)


class StagingTracer(Tracer):
    """A tracer of a `StagingTrace`: it is a jaxpr variable."""

    # Not `var`: tracers answer array methods by attribute, and `x.var()` is the variance.
    __slots__ = ("jaxpr_var",)
    jax_name = "DynamicJaxprTracer"

    def short_repr(self) -> str:
        return f"JitTracer({self.aval})"

    def __init__(self, trace: StagingTrace, var: Var | Literal) -> None:
        self._trace = trace
        self.jaxpr_var = var
        """Its variable; a `Literal` for a constant lifted by `stage_value` (no equation)."""

    @property
    def aval(self) -> AbstractValue:
        return self.jaxpr_var.aval

    def where_created(self) -> str:
        trace = self._trace
        if isinstance(trace, StagingTrace) and isinstance(self.jaxpr_var, Var):
            eqn = trace.defining_eqn(self.jaxpr_var)
            if eqn is not None:
                return eqn.source_info.summary()
        return ""

    def _origin_msg(self) -> str:
        trace = self._trace
        if not isinstance(trace, StagingTrace) or trace.debug_info is None:
            return ""
        info = trace.debug_info
        origin = (
            f"The error occurred while tracing the function {info.func_src_info} for "
            f"{info.traced_for}. "
        )
        var = self.jaxpr_var
        if not isinstance(var, Var):  # a constant lifted into the trace
            return "\n" + origin
        positions = trace.argument_positions(var)
        if positions:
            names = info.arg_names
            arg_names = [
                names[i] if names is not None and i < len(names) else "unknown" for i in positions
            ]
            if len(arg_names) == 1:
                which = f"the argument {arg_names[0]}"
            elif len(arg_names) == 2:
                which = f"the arguments {arg_names[0]} and {arg_names[1]}"
            else:
                which = f"the arguments {', '.join(arg_names[:-1])}, and {arg_names[-1]}"
            plural = "s" if len(positions) > 1 else ""
            origin += (
                "This concrete value was not available in Python because it depends on the "
                f"value{plural} of {which}."
            )
        else:
            origin += _progenitors_text(trace.progenitor_eqns(var))
        return "\n" + origin


_PROGENITORS_SHOWN: Final = 5


def _progenitors_text(eqns: Sequence[JaxprEqn]) -> str:
    """JAX's list of the equations a value that depends on no argument came from."""
    if not eqns:
        return ""
    settings = PpSettings(print_shapes=True)
    shown = [
        f"  operation {pp.format_doc(pp_eqn(eqn, PpContext(), settings))}\n"
        f"    from line {eqn.source_info.summary()}"
        for eqn in eqns[:_PROGENITORS_SHOWN]
    ]
    text = "This value became a tracer due to JAX operations on these lines:\n\n"
    text += "\n\n".join(shown)
    if len(eqns) > _PROGENITORS_SHOWN:
        text += "\n\n(Additional originating lines are not shown.)"
    return text


class StagingTrace(Trace):
    """Builds one jaxpr. Identity is intended: tracers refer to their trace."""

    __slots__ = (
        "_arg_vars",
        "_captured",
        "_constants",
        "_defined_by",
        "_open",
        "_qdds",
        "consts",
        "constvars",
        "debug_info",
        "eqns",
        "lowering",
    )

    def __init__(
        self, parent: Trace | None, debug_info: DebugInfo | None = None, lowering: bool = False
    ) -> None:
        super().__init__(parent)
        self.lowering = lowering
        """Whether this trace lowers a program of mutable hi values (JAX's `requires_low`):
        their values are Python objects of this trace's tracers, which hi primitives apply
        their rules on values to (and `cur_qdd` asks), instead of being staged."""
        self.eqns: list[JaxprEqn] = []
        self.constvars: list[Var] = []
        self.consts: list[Any] = []
        self.debug_info = debug_info
        self._captured: dict[int, Var] = {}
        self._constants: dict[int, tuple[Any, Any, AbstractValue]] = {}
        self._defined_by: dict[Var, JaxprEqn] | None = None
        self._arg_vars: list[Var] = []
        self._open = True
        self._qdds: dict[Var, MutableQDD] = {}
        """The quasi-dynamic data of this trace's values of mutable hi types, as it is now."""

    def describe(self) -> str:
        info = self.debug_info
        if info is None:
            return "a staged function"
        return f"the function {info.func_src_info} traced for {info.traced_for}"

    def new_arg(self, aval: AbstractValue | AvalQDD) -> StagingTracer:
        """An input of type `aval`; an `AvalQDD` for a mutable hi value with its data."""
        if isinstance(aval, AvalQDD):
            var = Var(aval.aval, aval.qdd)
            self._qdds[var] = MutableQDD(aval.qdd)
        else:
            var = Var(aval)
        self._arg_vars.append(var)
        return StagingTracer(self, var)

    def cur_qdd(self, x: Any) -> Any:
        if self.lowering and not isinstance(x, Tracer):
            return x.cur_qdd()
        if isinstance(x, StagingTracer) and x._trace is self:
            atom = x.jaxpr_var
        elif isinstance(x, Tracer) and not self.encloses(x._trace):
            return super().cur_qdd(x)
        else:
            atom = self.to_atom(x)  # a mutable value closed over: captured now
        cell = self._qdds.get(atom) if isinstance(atom, Var) else None
        return None if cell is None else cell.cur_val

    def argument_positions(self, var: Var) -> list[int]:
        """The positions of the arguments `var`'s value depends on (for error messages)."""
        positions = {v: i for i, v in enumerate(self._arg_vars)}
        found: set[int] = set()
        seen: set[Var] = set()
        stack = [var]
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in positions:
                found.add(positions[v])
                continue
            eqn = self.defining_eqn(v)
            if eqn is not None:
                stack.extend(a for a in eqn.invars if isinstance(a, Var))
        return sorted(found)

    def progenitor_eqns(self, var: Var) -> list[JaxprEqn]:
        """The equations JAX names as where a value depending on no argument came from: every
        equation taking a literal, or a constvar `var` depends on (for error messages)."""
        active = {var}
        for eqn in reversed(self.eqns):
            if any(v in active for v in eqn.outvars):
                active.update(a for a in eqn.invars if isinstance(a, Var))
        consts = active.intersection(self.constvars)
        return [
            eqn
            for eqn in self.eqns
            if any(
                a in consts if isinstance(a, Var) else isinstance(a, Literal) for a in eqn.invars
            )
        ]

    def to_atom(self, x: Any) -> Atom:
        """The jaxpr atom for `x`: its var, a literal, or a captured constvar."""
        if isinstance(x, StagingTracer) and x._trace is self:
            return x.jaxpr_var
        if isinstance(x, Tracer):
            return self._capture(x)
        if type(x) is DimExpr:
            # A symbolic dimension (`x.shape[0]` returned) is staged as its value, computed
            # in this trace (JAX's `dim_as_value`), also after the function has returned.
            with set_current_trace(self):
                value = x.dimension_as_value()
            return self.to_atom(value)
        if type(x) in by_reference_types:
            return self._capture_reference(x)
        if is_hi_value(x) and typeof(x).has_qdd:
            return self._capture_mutable(x)
        key = id(x)
        known = self._constants.get(key)
        if known is not None and known[0] is x:
            return Literal(known[1], known[2])
        val, aval = canonical_value(x)
        if getattr(aval, "shape", ()):
            # Remember non-scalars by identity (holding `x` keeps its id unique meanwhile), so
            # that one array used twice embeds one canonical value: the constants pass then
            # makes it one const arg.
            self._constants[key] = (x, val, aval)
        return Literal(val, aval)

    def stage_value(self, value: Any) -> Any:
        if isinstance(value, StagingTracer) and value._trace is self:
            return value
        return StagingTracer(self, self.to_atom(value))

    def _capture(self, tracer: Tracer) -> Var:
        if not self._open or not self.encloses(tracer._trace) or tracer._trace is self:
            raise_escaped_tracer(tracer)
        known = id(tracer) in self._captured
        var = self._constvar_for(tracer, tracer.aval)
        if not known and var.aval.has_qdd:
            assert self.parent is not None
            self._qdds[var] = MutableQDD(self.parent.cur_qdd(tracer))
        return var

    def _capture_mutable(self, value: Any) -> Var:
        """A value of a mutable hi type closed over: a constvar holding the value, whose data
        starts as the value's own."""
        known = id(value) in self._captured
        var = self._constvar_for(value, typeof(value))
        if not known:
            # Its data now: as an enclosing trace has it (which may have updated it), else
            # its own.
            qdd = value.cur_qdd() if self.parent is None else self.parent.cur_qdd(value)
            self._qdds[var] = MutableQDD(qdd)
        return var

    def _capture_reference(self, value: Any) -> Var:
        """A mutable value (a Ref) closed over: a constvar whose const is the value itself."""
        return self._constvar_for(value, typeof(value))

    def _constvar_for(self, value: Any, aval: AbstractValue) -> Var:
        """The constvar standing for `value` (one per object), made on first use."""
        var = self._captured.get(id(value))
        if var is None:
            var = self._captured[id(value)] = Var(aval)
            self.constvars.append(var)
            self.consts.append(value)
        return var

    def process_primitive(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        if not self._open:
            raise RuntimeError(
                f"primitive '{prim.name}' applied in {self.describe()}, which has finished"
            )
        if _compile_time_eval.get() and not any(isinstance(x, Tracer) for x in args):
            return EVAL_TRACE.process_primitive(prim, args, params)
        if self.lowering and prim in qdd_primitives:
            return value_impl_rules[prim](*args, **params)
        custom = _CUSTOM_STAGING_RULES.get(prim)
        if custom is not None and (staged := custom(self, args, params)) is not None:
            return staged
        fold = _CONST_FOLD_RULES.get(prim)
        if fold is not None and not any(isinstance(x, Tracer) for x in args):
            folded = fold(*args, **params)
            if folded is not None:
                return folded
        # This trace's own tracers (most operands) without a call; `to_atom` for the rest.
        invars = tuple(
            [
                x.jaxpr_var if type(x) is StagingTracer and x._trace is self else self.to_atom(x)
                for x in args
            ]
        )
        in_avals = [v.aval for v in invars]
        if prim in qdd_primitives:
            return self._stage_with_qdd(prim, invars, in_avals, params)
        rule = _ABSTRACT_EVAL_RULES.get(prim)
        if rule is None:
            rule = abstract_eval_rules[prim]  # raises the table's error
        out_aval = rule(*in_avals, **params)
        if MESHES_SEEN[0]:
            out_aval = with_input_mesh(prim, in_avals, out_aval, params)
        if CHECKED_SCOPES[0] and check_vma_enabled():
            out_aval = with_vma(prim, in_avals, params, out_aval)
        effects_rule = _EFFECTS_RULES.get(prim)
        effects = no_effects if effects_rule is None else effects_rule(*in_avals, **params)
        if self._qdds:
            self._update_qdds(prim, invars, params)
        if prim.multiple_results:
            outvars = tuple([Var(a) for a in out_aval])  # type: ignore[union-attr]  # a sequence for multi-result primitives
            self.eqns.append(
                JaxprEqn(invars, outvars, prim, params, effects, current_source_info())
            )
            return [StagingTracer(self, v) for v in outvars]
        outvar = Var(out_aval)  # type: ignore[arg-type]  # one aval for single-result primitives
        self.eqns.append(JaxprEqn(invars, (outvar,), prim, params, effects, current_source_info()))
        return StagingTracer(self, outvar)

    def _stage_with_qdd(
        self,
        prim: Primitive,
        invars: tuple[Atom, ...],
        in_avals: list[AbstractValue],
        params: dict[str, Any],
    ) -> Any:
        """`prim` staged with its mutable operands seen as their data cells (which its
        abstract evaluation may update) and its new mutable results given theirs."""
        cells = self._qdds
        avals: list[Any] = [
            AvalMutableQDD(a, cells[v]) if isinstance(v, Var) and v in cells else a
            for v, a in zip(invars, in_avals, strict=True)
        ]
        out: Any = abstract_eval_rules[prim](*avals, **params)  # AvalQDD for new mutables
        effects_rule = _EFFECTS_RULES.get(prim)
        effects = no_effects if effects_rule is None else effects_rule(*avals, **params)
        outs: list[Any] = list(out) if prim.multiple_results else [out]
        outvars = tuple([self.new_var(a) for a in outs])
        self.eqns.append(JaxprEqn(invars, outvars, prim, params, effects, current_source_info()))
        tracers = [StagingTracer(self, v) for v in outvars]
        return tracers if prim.multiple_results else tracers[0]

    def _update_qdds(
        self, prim: Primitive, invars: tuple[Atom, ...], params: dict[str, Any]
    ) -> None:
        """After a call or loop of jaxprs taking mutable hi values: their data as the callee
        left it (its inputs' final data)."""
        rule = qdd_final_rules.get(prim)
        if rule is None:
            return
        for outer, final in zip(invars, rule(params, len(invars)), strict=False):
            cell = self._qdds.get(outer) if isinstance(outer, Var) else None
            if cell is not None and final is not None:
                cell.update(final)

    def new_var(self, aval: AbstractValue | AvalQDD) -> Var:
        """A variable of type `aval`; an `AvalQDD` gives a mutable value its initial data."""
        if not isinstance(aval, AvalQDD):
            return Var(aval)
        var = Var(aval.aval)
        self._qdds[var] = MutableQDD(aval.qdd)
        return var

    def inline_jaxpr(self, jaxpr: Jaxpr, args: Sequence[Any]) -> list[Any]:
        """Stage the equations of the effect-free, const-free `jaxpr` applied to `args` into
        this trace, as binding them one by one would (JAX's inlining of a `jit(inline=True)`
        call): an equation whose inputs are this trace's tracers and literals is recorded
        with the recorded result types; any other is bound (a constant input may fold)."""
        env: dict[Var, Any] = dict(zip(jaxpr.invars, args, strict=True))
        info = current_source_info()
        eqns = self.eqns
        for eqn in jaxpr.eqns:
            ins: list[Any] = []
            atoms: list[Atom] = []
            own, traced = True, False
            for a in eqn.invars:
                if type(a) is Literal:
                    ins.append(a.val)
                    atoms.append(a)
                    continue
                x = env[a]  # type: ignore[index]  # not a Literal: a Var
                ins.append(x)
                if own and type(x) is StagingTracer and x._trace is self:
                    atoms.append(x.jaxpr_var)
                    traced = True
                else:
                    own = False
            if not (own and traced):
                out = eqn.primitive.bind(*ins, **eqn.params)
                if eqn.primitive.multiple_results:
                    env.update(zip(eqn.outvars, out, strict=True))
                else:
                    env[eqn.outvars[0]] = out
                continue
            if not self._open:
                raise RuntimeError(
                    f"primitive '{eqn.primitive.name}' applied in {self.describe()}, which has "
                    "finished"
                )
            outvars = tuple([Var(v.aval) for v in eqn.outvars])
            names = eqn.source_info.name_stack
            here = SourceInfo(info.code, info.lasti, info.name_stack + names) if names else info
            eqns.append(
                JaxprEqn(tuple(atoms), outvars, eqn.primitive, eqn.params, eqn.effects, here)
            )
            for old, new in zip(eqn.outvars, outvars, strict=True):
                env[old] = StagingTracer(self, new)
        return [a.val if isinstance(a, Literal) else env[a] for a in jaxpr.outvars]

    def defining_eqn(self, var: Var) -> JaxprEqn | None:
        if self._defined_by is None or len(self._defined_by) < len(self.eqns):
            self._defined_by = {v: e for e in self.eqns for v in e.outvars}
        return self._defined_by.get(var)

    def finish(
        self, invars: Sequence[Var | Literal], outs: Sequence[Any]
    ) -> tuple[Jaxpr, list[Any]]:
        """The jaxpr of this trace with inputs `invars` (the variables of tracers `new_arg`
        made) and outputs `outs`, and the values of its constvars."""
        binders = [v for v in invars if isinstance(v, Var)]
        if len(binders) != len(invars):
            raise TypeError("a jaxpr's inputs are variables, not constants lifted into it")
        outvars = [self.to_atom(x) for x in outs]
        self._open = False
        self._constants.clear()
        for v in (*binders, *self.constvars):
            cell = self._qdds.get(v)
            if cell is not None:
                v.initial_qdd, v.final_qdd = cell.init_val, cell.cur_val
        effects = frozenset().union(*(e.effects for e in self.eqns)) if self.eqns else no_effects
        jaxpr = Jaxpr(self.constvars, binders, outvars, self.eqns, effects, self.debug_info)
        return jaxpr, list(self.consts)


def trace_to_jaxpr(
    fun: Callable[..., Sequence[Any]],
    in_avals: Sequence[AbstractValue | AvalQDD],
    debug_info: DebugInfo | None = None,
    *,
    lowering: bool = False,
) -> ClosedJaxpr:
    """Stage `fun` (flat arguments to a flat sequence of outputs) out into a closed jaxpr.

    The consts are the captured tracers of enclosing traces (empty at top level). With
    `lowering`, hi primitives apply their rules on values (see `StagingTrace.lowering`).
    """
    trace = StagingTrace(current_trace(), debug_info, lowering)
    args = [trace.new_arg(aval) for aval in in_avals]
    # Names of scopes are relative to the jaxpr: its equations start from an empty stack.
    with set_current_trace(trace), reset_name_stack():
        outs = fun(*args)
    jaxpr, consts = trace.finish([a.jaxpr_var for a in args], outs)
    if checking_leaks():
        del args, outs
        check_no_leaks(trace, "DynamicJaxprTrace")
    return ClosedJaxpr(jaxpr, consts)


def with_input_mesh(
    prim: Primitive, in_avals: Sequence[AbstractValue], out: Any, params: dict[str, Any]
) -> Any:
    """Results laid out over the mesh of the sharding the equation asks for (a `sharding` or
    `out_sharding` parameter), else over their operands' mesh (JAX's sharding rule under Auto
    and Manual axes), unless the rule gave them one. Over a mesh with Explicit axes, the
    primitive's sharding rule splits them (`explicit_sharding`)."""
    multiple = prim.multiple_results
    asked = params.get("sharding", params.get("out_sharding"))
    asked_mesh = getattr(asked, "mesh", None)
    if asked_mesh is not None and not asked_mesh.empty and not multiple:
        mesh = asked_mesh.abstract_mesh
        if mesh.has_explicit:
            return explicit_result(prim, in_avals, out, mesh, params)
        return out.update(mesh=mesh) if type(out) is ShapedArray else out
    mesh = common_mesh(in_avals)
    if mesh is None:
        # None of the operands has a mesh: the one in context, if any (JAX's rules ask for it
        # under Auto axes; under Explicit ones only some rules do).
        mesh = context_mesh()
        if mesh is None or (mesh.has_explicit and prim not in context_mesh_primitives):
            return out
    if mesh.has_explicit:
        return explicit_result(prim, in_avals, out, mesh, params)

    def place(a: Any) -> Any:
        return a.update(mesh=mesh) if type(a) is ShapedArray and a.mesh is None else a

    return [place(a) for a in out] if multiple else place(out)
