"""Lowering jaxprs into functions: `lower_jaxpr_to_fun` and `jaxpr_subcomp`.

A function's arguments are, in order: dimension variables (symbolic shapes), one token per ordered
effect, its const args (each `{jax.const = true}`), then the jaxpr's inputs. Its results are
the tokens, then the jaxpr's outputs. Inside, `const_lowering` maps each const arg's value (by
identity) to its argument, and every literal is looked up there before it is emitted as a
`stablehlo.constant` (seed 000). `jaxpr_subcomp` lowers a jaxpr into the current block with
the enclosing function's map; control flow uses it for its regions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_consts import ConstArgs, jaxpr_const_args
from lamina_core.ir import (
    ClosedJaxpr,
    Effect,
    Jaxpr,
    JaxprEqn,
    Literal,
    ShapedArray,
    Var,
    format_name_stack,
)
from lamina_mlir import _dynamic, _hlo
from lamina_mlir._constants import ir_constant
from lamina_mlir._context import (
    NO_TOKENS,
    LoweringRuleContext,
    ModuleContext,
    TokenSet,
    lowering_rules,
    single_op_rules,
)
from lamina_mlir._explicit import constrain_results, constrains
from lamina_mlir._functions import new_function
from lamina_mlir._ir_types import aval_to_ir_type, tensor_type
from lamina_mlir._locations import eqn_location, name_location
from lamina_mlir._mlir_context import ContextCaches, IrValue


def jaxpr_subcomp(
    mctx: ModuleContext,
    jaxpr: Jaxpr,
    name_stack: str,
    tokens: TokenSet,
    consts_for_constvars: Sequence[IrValue],
    *args: IrValue,
    const_lowering: Mapping[int, IrValue],
) -> tuple[list[IrValue], TokenSet]:
    """Lower `jaxpr` into the current block; return its outputs and the tokens after it.

    Needs an active context, location and insertion point. No function is made: the body
    refers to the enclosing function's values, const args included (`const_lowering`).
    """
    if len(args) != len(jaxpr.invars) or len(consts_for_constvars) != len(jaxpr.constvars):
        raise ValueError(
            f"jaxpr_subcomp: the jaxpr takes {len(jaxpr.constvars)} consts and "
            f"{len(jaxpr.invars)} inputs, got {len(consts_for_constvars)} and {len(args)}"
        )
    caches = mctx.caches
    env: dict[Var, IrValue] = dict(zip(jaxpr.constvars, consts_for_constvars, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))
    # This loop runs once per equation; locals and the inlined location lookup are measured.
    rule_for = lowering_rules.get
    single_op_for = single_op_rules.get
    locations = mctx.locations
    # Over Explicit axes results are constrained to their types: every equation takes its
    # rule (no single-op shortcut).
    explicit = mctx.mesh is not None and mctx.mesh.has_explicit
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        invars = eqn.invars
        operands = [
            env[a] if type(a) is not Literal else ir_constant(caches, a.val, a.aval, const_lowering)  # type: ignore[index]
            for a in invars
        ]
        source = eqn.source_info
        eqn_stack = name_stack
        if source.name_stack:  # the scopes the equation was traced under, below the function's
            scopes = format_name_stack(source.name_stack)
            eqn_stack = f"{name_stack}/{scopes}" if name_stack else scopes
        location = locations.get((eqn_stack, prim.name, source.code, source.lasti))
        if location is None:
            location = eqn_location(mctx, eqn_stack, prim.name, source)
        single_op = None if explicit else single_op_for(prim)
        if single_op is not None:
            with location:
                out = _single_op(caches, single_op, eqn, operands)
            if out is not None:
                env[eqn.outvars[0]] = out
                continue
        rule = rule_for(prim)
        if rule is None:
            # JAX's error, type and text (JAX's own docs test for exactly NotImplementedError).
            missing = NotImplementedError(
                f"MLIR translation rule for primitive '{prim.name}' not found for platform cpu"
            )
            missing.add_note(
                "Lamina: lower hi types and Refs first (to-lojax, discharge), or register a rule "
                "in lamina_mlir.lowering_rules (jax.interpreters.mlir.register_lowering)"
            )
            raise missing
        ctx = LoweringRuleContext(
            module_context=mctx,
            primitive=prim,
            avals_in=[a.aval for a in invars],
            avals_out=[v.aval for v in eqn.outvars],
            tokens_in=tokens,
            const_lowering=const_lowering,
            name_stack=eqn_stack,
            source_info=source,
        )
        try:
            with location:
                outs = rule(ctx, *operands, **eqn.params)
        except Exception as e:
            e.add_note(f"while lowering '{prim.name}' from {source.summary()}")
            raise
        if len(outs) != len(eqn.outvars):
            raise ValueError(
                f"the lowering rule for '{prim.name}' returned {len(outs)} values for "
                f"{len(eqn.outvars)} outputs"
            )
        if explicit and constrains(prim):
            outs = constrain_results(ctx, outs)
        tokens_out = ctx.tokens_out
        if tokens_out is not None:
            tokens = tokens_out
        env.update(zip(eqn.outvars, outs, strict=False))  # lengths checked just above
    results = [
        ir_constant(caches, a.val, a.aval, const_lowering) if type(a) is Literal else env[a]  # type: ignore[index]
        for a in jaxpr.outvars
    ]
    return results, tokens


def _single_op(
    caches: ContextCaches, op: tuple[str, bool], eqn: JaxprEqn, operands: list[IrValue]
) -> IrValue | None:
    """The equation as the one op of `single_op_rules`, or None if the shortcut does not hold."""
    (out,) = eqn.outvars
    aval = out.aval
    if type(aval) is not ShapedArray or (op[1] and aval.dtype.kind == "c"):
        return None
    shape = aval.shape
    for a in eqn.invars:
        if getattr(a.aval, "shape", None) != shape:
            return None
    for value in eqn.params.values():
        if value is not None:
            return None
    return _hlo.emit1(op[0], aval_to_ir_type(caches, aval), *operands)


def _arg_attributes(
    mctx: ModuleContext,
    n_tokens: int,
    n_consts: int,
    n_args: int,
    input_output_aliases: Sequence[int | None],
    buffer_donors: Sequence[bool],
) -> list[dict[str, ir.Attribute]] | None:
    caches = mctx.caches
    true = _hlo.bool_attr(caches, True)
    attrs: list[dict[str, ir.Attribute]] = [{} for _ in range(n_tokens + n_consts + n_args)]
    for a in attrs[:n_tokens]:
        a["jax.token"] = true
    for a in attrs[n_tokens : n_tokens + n_consts]:
        a["jax.const"] = true
    real = attrs[n_tokens + n_consts :]
    for a, alias in zip(real, input_output_aliases, strict=False):
        if alias is not None:
            a["tf.aliasing_output"] = _hlo.i32_attr(caches, alias + n_tokens)
    for a, donor in zip(real, buffer_donors, strict=False):
        if donor:
            a["jax.buffer_donor"] = true
    return attrs if any(attrs) else None


def lower_jaxpr_to_fun(
    mctx: ModuleContext,
    name: str,
    jaxpr: Jaxpr | ClosedJaxpr,
    *,
    const_args: ConstArgs,
    effects: Sequence[Effect] = (),
    main: bool = False,
    arg_names: Sequence[str | None] | None = None,
    result_names: Sequence[str] | None = None,
    input_output_aliases: Sequence[int | None] = (),
    buffer_donors: Sequence[bool] = (),
    dim_vars: Sequence[str] = (),
) -> ir.Operation:
    """Lower `jaxpr` as a new function of the module: public `@main`, or private `@name`.

    Args:
        mctx: the module being built (its context must be active).
        name: the function's name; the symbol table makes it unique.
        jaxpr: the function body; a `ClosedJaxpr`'s consts become `stablehlo.constant`s.
        const_args: the constants this function takes as leading `jax.const` arguments;
            the caller passes them (see `jaxpr_const_args`). Other hoistable constants of the
            body are emitted once at the function's entry.
        effects: the ordered effects whose tokens the function takes and returns.
        main: lower the module's public entry point (named `main`, with the module's name
            stack in its locations).
        arg_names: names of the real arguments, shown as their locations.
        result_names: `jax.result_info` of each result.
        input_output_aliases: per real argument, the output it aliases, or None.
        buffer_donors: per real argument, whether XLA may reuse its buffer.
        dim_vars: the dimension variables of symbolic shapes, taken first as scalars marked
            `{jax.global_constant = "b"}` (JAX's), whose values the body's dynamic ops use.

    Returns:
        The `func.func` op, already inserted in the module.
    """
    consts: Sequence[Any] = ()
    if isinstance(jaxpr, ClosedJaxpr):
        consts, jaxpr = jaxpr.consts, jaxpr.jaxpr
    caches = mctx.caches
    token_type = hlo.TokenType.get()
    n_dims = len(dim_vars)
    in_types = [
        *(tensor_type(caches, (), _dynamic.dim_dtype()) for _ in dim_vars),
        *(token_type for _ in effects),
        *(mctx.ir_type(a) for a in const_args.avals),
        *(mctx.ir_type(v.aval) for v in jaxpr.invars),
    ]
    out_types = [*(token_type for _ in effects), *(mctx.ir_type(a.aval) for a in jaxpr.outvars)]
    unknown = ir.Location.unknown()
    names: Sequence[str | None] = arg_names if arg_names is not None else ()
    names = [*names, *[None] * (len(jaxpr.invars) - len(names))]
    arg_locs: list[ir.Location] = [unknown] * (n_dims + len(effects) + len(const_args))
    arg_locs += [ir.Location.name(n) if n else unknown for n in names]
    fn, entry = new_function(
        mctx, "main" if main else name, in_types, out_types, public=main, arg_locs=arg_locs
    )
    arg_attrs = _arg_attributes(
        mctx, len(effects), len(const_args), len(jaxpr.invars), input_output_aliases, buffer_donors
    )
    if dim_vars:
        marks: list[dict[str, ir.Attribute]] = [
            {"jax.global_constant": ir.StringAttr.get(v)} for v in dim_vars
        ]
        arg_attrs = [*marks, *(arg_attrs or [{} for _ in in_types[n_dims:]])]
    elif mctx.lowering_parameters.global_constant_computation:
        arg_attrs = arg_attrs or [{} for _ in in_types]
        for a in arg_attrs:
            a["jax.global_constant"] = ir.StringAttr.get("")
    if arg_attrs is not None:
        fn.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in arg_attrs])
    result_attrs: list[dict[str, ir.Attribute]] = [{} for _ in out_types]
    for a in result_attrs[: len(effects)]:
        a["jax.token"] = _hlo.bool_attr(caches, True)
    if result_names is not None and len(result_names) == len(jaxpr.outvars):
        for a, result_name in zip(result_attrs[len(effects) :], result_names, strict=True):
            a["jax.result_info"] = ir.StringAttr.get(result_name)
    if any(result_attrs):
        fn.attributes["res_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in result_attrs])
    name_stack = mctx.name_stack if main else ""
    with ir.InsertionPoint(entry), name_location(name_stack):
        block_args = list(entry.arguments)
        dim_values = dict(zip(dim_vars, block_args[:n_dims], strict=True))
        block_args = block_args[n_dims:]
        token_args = block_args[: len(effects)]
        const_values = block_args[len(effects) : len(effects) + len(const_args)]
        real_args = block_args[len(effects) + len(const_args) :]
        const_lowering: dict[int, IrValue] = {
            id(v): arg for v, arg in zip(const_args.values, const_values, strict=True)
        }
        for value, aval in jaxpr_const_args(jaxpr):
            # Constants the caller does not pass (hoisting is off): emitted once here, at
            # entry, rather than at every use.
            if id(value) not in const_lowering:
                const_lowering[id(value)] = ir_constant(caches, value, aval)
        unique: dict[int, IrValue] = {}
        for value, var in zip(consts, jaxpr.constvars, strict=True):
            if id(value) not in unique:
                unique[id(value)] = ir_constant(caches, value, var.aval)
        tokens = TokenSet(tuple(zip(effects, token_args, strict=True))) if effects else NO_TOKENS
        with _dynamic.dimension_values(dim_values, mctx):
            outs, tokens_out = jaxpr_subcomp(
                mctx,
                jaxpr,
                name_stack,
                tokens,
                [unique[id(c)] for c in consts],
                *real_args,
                const_lowering=const_lowering,
            )
        _hlo.return_([*tokens_out, *outs], "func.return")
    return fn
