"""`sparsify`'s rules for primitives holding jaxprs: `jit`, `cond`, `while`, `scan` (without
scanned-over values, as JAX's) and `custom_jvp_call`, each sparsifying its inner jaxprs."""

from __future__ import annotations

from typing import Any

from lamina_core import lax
from lamina_core.custom_derivatives import RuleName, custom_jvp_call_p
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import ClosedJaxpr
from lamina_core.sparse._transform import (
    SparsifyEnv,
    SparsifyValue,
    arrays_to_spvalues,
    eval_sparse,
    sparse_rules_bcoo,
    sparse_rules_bcsr,
    spvalues_to_arrays,
)
from lamina_core.trace import jaxpr_as_fun, typeof
from lamina_core.transforms import UNSPECIFIED, jit_p, jvp
from lamina_core.tree.tree_util import tree_flatten, tree_structure, tree_unflatten


def _sparsify_jaxpr(
    spenv: SparsifyEnv, jaxpr: ClosedJaxpr, *spvalues: SparsifyValue
) -> tuple[ClosedJaxpr, Any]:
    out_tree: Any = None
    args_flat, in_tree = tree_flatten(spvalues_to_arrays(spenv, spvalues))

    def wrapped(*flat: Any) -> list[Any]:
        nonlocal out_tree
        inner = arrays_to_spvalues(spenv, tree_unflatten(in_tree, flat))
        result = eval_sparse(jaxpr.jaxpr, jaxpr.consts, inner, spenv)
        out_flat, out_tree = tree_flatten(spvalues_to_arrays(spenv, result))
        return out_flat

    closed = trace_to_jaxpr(wrapped, [typeof(a) for a in args_flat])
    return closed, out_tree


def _jit_sparse(spenv: SparsifyEnv, *spvalues: SparsifyValue, **params: Any) -> Any:
    if any(params.get("donated_invars", ())):
        raise NotImplementedError("sparse xla_call with donated_invars")
    sp_jaxpr, out_tree = _sparsify_jaxpr(spenv, params["jaxpr"], *spvalues)
    args_flat, _ = tree_flatten(spvalues_to_arrays(spenv, spvalues))
    n_in, n_out = len(args_flat), len(sp_jaxpr.out_avals)
    new = dict(params, jaxpr=sp_jaxpr, donated_invars=(False,) * n_in)
    for key, n, fill in (
        ("in_shardings", n_in, UNSPECIFIED),
        ("out_shardings", n_out, UNSPECIFIED),
        ("in_layouts", n_in, None),
        ("out_layouts", n_out, None),
    ):
        if key in params:
            new[key] = tuple(params[key]) + (fill,) * (n - len(params[key]))
    out_flat = jit_p.bind(*args_flat, **new)
    return arrays_to_spvalues(spenv, tree_unflatten(out_tree, out_flat))


sparse_rules_bcoo[jit_p] = _jit_sparse


def _cond_sparse(
    spenv: SparsifyEnv, pred: SparsifyValue, *operands: SparsifyValue, branches: Any, **params: Any
) -> Any:
    sparsified = [_sparsify_jaxpr(spenv, jaxpr, *operands) for jaxpr in branches]
    sp_branches = tuple(b for b, _ in sparsified)
    trees = [t for _, t in sparsified]
    if any(t != trees[0] for t in trees[1:]) or any(
        b.out_avals != sp_branches[0].out_avals for b in sp_branches[1:]
    ):
        raise TypeError(
            "sparsified true_fun output and sparsified false_fun output must have identical "
            f"types, got {trees[0]} and {trees[-1]}."
        )
    args, _ = tree_flatten(spvalues_to_arrays(spenv, (pred, *operands)))
    out_flat = lax.cond_p.bind(*args, branches=sp_branches, **params)
    return arrays_to_spvalues(spenv, tree_unflatten(trees[0], out_flat))


sparse_rules_bcoo[lax.cond_p] = _cond_sparse


def _while_sparse(
    spenv: SparsifyEnv,
    *spvalues: SparsifyValue,
    cond_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_jaxpr: ClosedJaxpr,
    body_nconsts: int,
) -> Any:
    cond_consts = spvalues[:cond_nconsts]
    body_consts = spvalues[cond_nconsts : cond_nconsts + body_nconsts]
    init = spvalues[cond_nconsts + body_nconsts :]
    cond_sp, _ = _sparsify_jaxpr(spenv, cond_jaxpr, *cond_consts, *init)
    body_sp, out_tree = _sparsify_jaxpr(spenv, body_jaxpr, *body_consts, *init)
    cond_flat, _ = tree_flatten(spvalues_to_arrays(spenv, cond_consts))
    body_flat, _ = tree_flatten(spvalues_to_arrays(spenv, body_consts))
    init_flat, _ = tree_flatten(spvalues_to_arrays(spenv, init))
    out_flat = lax.while_p.bind(
        *cond_flat,
        *body_flat,
        *init_flat,
        cond_nconsts=len(cond_flat),
        cond_jaxpr=cond_sp,
        body_nconsts=len(body_flat),
        body_jaxpr=body_sp,
    )
    return arrays_to_spvalues(spenv, tree_unflatten(out_tree, out_flat))


sparse_rules_bcoo[lax.while_p] = _while_sparse


def _scan_sparse(
    spenv: SparsifyEnv,
    *spvalues: SparsifyValue,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    **params: Any,
) -> Any:
    consts = spvalues[:num_consts]
    carry = spvalues[num_consts : num_consts + num_carry]
    if spvalues[num_consts + num_carry :]:
        raise NotImplementedError("sparse rule for scan with x values.")
    sp_jaxpr, _ = _sparsify_jaxpr(spenv, jaxpr, *consts, *carry)
    consts_flat, _ = tree_flatten(spvalues_to_arrays(spenv, consts))
    carry_flat, carry_tree = tree_flatten(spvalues_to_arrays(spenv, carry))
    out = lax.scan_p.bind(
        *consts_flat,
        *carry_flat,
        jaxpr=sp_jaxpr,
        num_consts=len(consts_flat),
        num_carry=len(carry_flat),
        **params,
    )
    carry_out = tree_unflatten(carry_tree, out[: len(carry_flat)])
    return arrays_to_spvalues(spenv, list(carry_out) + list(out[len(carry_flat) :]))


sparse_rules_bcoo[lax.scan_p] = _scan_sparse


def _custom_jvp_sparse(spenv: SparsifyEnv, *spvalues: SparsifyValue, **params: Any) -> Any:
    # As JAX's: the call stays, on the sparsified function (its operands and results the
    # sparse arrays' buffers). JAX cannot differentiate that call (its rule expects the dense
    # operands); here differentiating it differentiates the sparsified function itself, as
    # JAX's tracer-based sparsify does (which inlines the call).
    sp_jaxpr, out_tree = _sparsify_jaxpr(spenv, params["call_jaxpr"], *spvalues)
    args_flat, _ = tree_flatten(spvalues_to_arrays(spenv, spvalues))

    def rule(primals: Any, tangents: Any) -> Any:
        outs, out_tangents = jvp(jaxpr_as_fun(sp_jaxpr), list(primals), list(tangents))
        return list(outs), list(out_tangents)

    rule.__name__ = repr(params["jvp"])
    n_out = len(sp_jaxpr.out_avals)
    out_flat = custom_jvp_call_p.bind(
        *args_flat,
        call_jaxpr=sp_jaxpr,
        jvp=RuleName(rule),
        num_consts=0,
        symbolic_zeros=params["symbolic_zeros"],
        in_tree=tree_structure(tuple(args_flat)),
        out_tree=tree_structure([0] * n_out),
        fun_name=params["fun_name"],
    )
    return arrays_to_spvalues(spenv, tree_unflatten(out_tree, out_flat))


sparse_rules_bcoo[custom_jvp_call_p] = sparse_rules_bcsr[custom_jvp_call_p] = _custom_jvp_sparse

call_primitives = frozenset({jit_p, lax.cond_p, lax.while_p, lax.scan_p})
"""The primitives whose BCOO rule above sparsifies their jaxprs whatever the sparse format."""

__all__ = ["call_primitives"]
