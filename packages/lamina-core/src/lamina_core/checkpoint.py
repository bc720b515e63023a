"""Rematerialization: `checkpoint` (= `remat`), its policies and `checkpoint_name`, as JAX's.

`checkpoint(f)` stages `f` as one `remat2` equation. Evaluation and staging run its jaxpr;
under reverse mode the jaxpr is split by `partial_eval_jaxpr_custom`: equations the policy
saves become residuals (float ones after a `reduce_precision`, as JAX inserts), the others are
recomputed in a `remat2[differentiated=True]` on the tangent side, while the primal outputs
are computed outside the remat. The transposed remat recomputes what it needs in its own body.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from lamina_core import tree_util
from lamina_core.api import func_src_info
from lamina_core.avals import AbstractValue, ShapedArray
from lamina_core.call import stage_call
from lamina_core.call_ad import jvp_jaxpr
from lamina_core.effects import Effects
from lamina_core.evaluate import eval_jaxpr
from lamina_core.interpreters.dce import dce_jaxpr
from lamina_core.interpreters.jvp import jvp_rules
from lamina_core.interpreters.partial_eval import SplitTrace, partial_eval_rules
from lamina_core.interpreters.staging import trace_to_jaxpr
from lamina_core.interpreters.transpose import (
    UndefinedPrimal,
    backward_pass,
    is_undefined,
    transpose_rules,
)
from lamina_core.interpreters.zeros import Zero, zero_of
from lamina_core.jaxpr import ClosedJaxpr, DebugInfo, Jaxpr, JaxprEqn, Literal, Var
from lamina_core.lax._linalg import dot_general_p
from lamina_core.lax._selection import reduce_precision_p
from lamina_core.primitive import Primitive
from lamina_core.rules import abstract_eval_rules, effects_rules, impl_rules
from lamina_core.tracing import running_under
from lamina_core.values import typeof

remat_p: Final = Primitive("remat2", multiple_results=True)
name_p: Final = Primitive("name")


@abstract_eval_rules.register(name_p)
def _name_abstract_eval(x: AbstractValue, *, name: str) -> AbstractValue:
    return x


@impl_rules.register(name_p)
def _name_impl(x: np.ndarray, *, name: str) -> np.ndarray:
    return x


def _name_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, name: str) -> Any:
    (x,), (t,) = primals, tangents
    return name_p.bind(x, name=name), t


jvp_rules.set(name_p, _name_jvp)


def checkpoint_name(x: Any, name: str) -> Any:
    """`x`, tagged `name` for the name-based checkpoint policies."""
    return tree_util.tree_map(lambda v: name_p.bind(v, name=name), x)


# --- policies ---------------------------------------------------------------------------------


Policy = Callable[..., bool]
"""`policy(prim, *avals, **params) -> bool`: whether the primitive's outputs are saved."""


def everything_saveable(*_: Any, **__: Any) -> bool:
    return True


def nothing_saveable(*_: Any, **__: Any) -> bool:
    return False


@dataclass(frozen=True)
class DotsSaveable:
    """Save the results of matrix multiplications (without batch dimensions, if asked)."""

    only_if_no_batch_dims: bool = False

    def __call__(self, prim: Primitive, *avals: Any, **params: Any) -> bool:
        if prim is not dot_general_p:
            return False
        if not self.only_if_no_batch_dims:
            return True
        (_, _), (lhs_b, rhs_b) = params["dimension_numbers"]
        return not lhs_b and not rhs_b


@dataclass(frozen=True)
class SaveOnlyTheseNames:
    """Save only values tagged with one of `saveable_names` (`checkpoint_name`)."""

    saveable_names: frozenset[str]

    def __call__(self, prim: Primitive, *avals: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] in self.saveable_names


@dataclass(frozen=True)
class SaveAnythingExceptTheseNames:
    """Save everything except values tagged with one of `names_not_to_save`."""

    names_not_to_save: frozenset[str]

    def __call__(self, prim: Primitive, *avals: Any, **params: Any) -> bool:
        return not (prim is name_p and params["name"] in self.names_not_to_save)


@dataclass(frozen=True)
class SaveFromBothPolicies:
    """Save what either policy saves."""

    policy_1: Policy
    policy_2: Policy

    def __call__(self, prim: Primitive, *avals: Any, **params: Any) -> bool:
        return bool(self.policy_1(prim, *avals, **params) or self.policy_2(prim, *avals, **params))


def save_only_these_names(*names: str) -> SaveOnlyTheseNames:
    return SaveOnlyTheseNames(frozenset(names))


def save_anything_except_these_names(*names: str) -> SaveAnythingExceptTheseNames:
    return SaveAnythingExceptTheseNames(frozenset(names))


def save_and_offload_only_these_names(
    *, names_which_can_be_saved: Sequence[str], names_which_can_be_offloaded: Sequence[str],
    offload_src: str = "device", offload_dst: str = "pinned_host",
) -> SaveOnlyTheseNames:  # fmt: skip
    # On CPU host memory is the device's: offloading is saving.
    return SaveOnlyTheseNames(
        frozenset(names_which_can_be_saved) | frozenset(names_which_can_be_offloaded)
    )


def offload_dot_with_no_batch_dims(
    offload_src: str = "device", offload_dst: str = "pinned_host"
) -> DotsSaveable:
    return DotsSaveable(only_if_no_batch_dims=True)


def save_from_both_policies(policy_1: Policy, policy_2: Policy) -> SaveFromBothPolicies:
    return SaveFromBothPolicies(policy_1, policy_2)


class checkpoint_policies:
    """The policies of `jax.checkpoint_policies`."""

    everything_saveable = staticmethod(everything_saveable)
    nothing_saveable = staticmethod(nothing_saveable)
    dots_saveable = DotsSaveable(False)
    checkpoint_dots = dots_saveable
    dots_with_no_batch_dims_saveable = DotsSaveable(True)
    checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable
    offload_dot_with_no_batch_dims = staticmethod(offload_dot_with_no_batch_dims)
    save_anything_except_these_names = staticmethod(save_anything_except_these_names)
    save_any_names_but_these = staticmethod(save_anything_except_these_names)
    save_only_these_names = staticmethod(save_only_these_names)
    save_and_offload_only_these_names = staticmethod(save_and_offload_only_these_names)
    save_from_both_policies = staticmethod(save_from_both_policies)


# --- the primitive -----------------------------------------------------------------------------


@abstract_eval_rules.register(remat_p)
def _remat_abstract_eval(*args: AbstractValue, jaxpr: Jaxpr, **_: Any) -> list[AbstractValue]:
    return [v.aval for v in jaxpr.outvars]


@effects_rules.register(remat_p)
def _remat_effects(*args: AbstractValue, jaxpr: Jaxpr, **_: Any) -> Effects:
    return jaxpr.effects


@impl_rules.register(remat_p)
def _remat_impl(*args: Any, jaxpr: Jaxpr, **_: Any) -> list[Any]:
    return eval_jaxpr(jaxpr, (), *args)


def checkpoint(
    fun: Callable[..., Any],
    *,
    prevent_cse: bool = True,
    policy: Policy | None = None,
    static_argnums: int | Sequence[int] = (),
) -> Callable[..., Any]:
    """`fun`, whose intermediate values reverse mode recomputes rather than stores (except
    those `policy` saves)."""
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def remat_f(*args: Any) -> Any:
        n = len(args)
        fixed = {i % n: args[i % n] for i in statics}
        dyn = [a for i, a in enumerate(args) if i not in fixed]
        leaves, in_tree = tree_util.tree_flatten(tuple(dyn))
        out_trees: list[Any] = []

        def flat(*xs: Any) -> list[Any]:
            it = iter(tree_util.tree_unflatten(in_tree, xs))
            full = [fixed[i] if i in fixed else next(it) for i in range(n)]
            out_leaves, out_tree = tree_util.tree_flatten(fun(*full))
            out_trees.append(out_tree)
            return out_leaves

        closed, consts = stage_call(
            flat, [typeof(x) for x in leaves], DebugInfo("checkpoint", func_src_info(fun))
        )
        outs = remat_p.bind(
            *consts,
            *leaves,
            jaxpr=closed.jaxpr,
            prevent_cse=prevent_cse,
            differentiated=False,
            policy=policy,
        )
        return tree_util.tree_unflatten(out_trees[0], outs)

    return remat_f


remat = checkpoint


# --- forward mode ------------------------------------------------------------------------------


def _remat_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    jaxpr: Jaxpr = params["jaxpr"]
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    jvp_closed, out_nz = jvp_jaxpr(ClosedJaxpr(jaxpr, []), nonzeros)
    nz = [t for t in tangents if type(t) is not Zero]
    outs = remat_p.bind(*primals, *nz, **{**params, "jaxpr": _opened(jvp_closed)})
    n_out = len(jaxpr.outvars)
    primal_outs, nz_outs = outs[:n_out], iter(outs[n_out:])
    tangent_outs = [
        next(nz_outs) if n else zero_of(p) for p, n in zip(primal_outs, out_nz, strict=True)
    ]
    return primal_outs, tangent_outs


def _opened(closed: ClosedJaxpr) -> Jaxpr:
    if closed.consts:
        raise NotImplementedError("checkpoint of a jaxpr with constants")
    return closed.jaxpr


jvp_rules.set(remat_p, _remat_jvp)


# --- partial evaluation with a policy ----------------------------------------------------------


def partial_eval_jaxpr_custom(
    jaxpr: Jaxpr, in_unknowns: Sequence[bool], saveable: Policy
) -> tuple[Jaxpr, Jaxpr, list[bool], list[Var]]:
    """Split `jaxpr` by unknown inputs and a policy, as JAX's function of the same name.

    Returns `known: known ins -> [known outs, *residuals]`, `staged: [*residuals, *unknown
    ins] -> unknown outs`, which outputs are unknown, and the residual variables. Known
    equations the policy does not save are recomputed in `staged`.
    """
    jaxpr = _inline_remats(jaxpr)
    unknown: set[Var] = {v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if u}
    recomputed: set[Var] = set()
    saved: list[JaxprEqn] = []
    staged_eqns: list[JaxprEqn] = []
    for eqn in jaxpr.eqns:
        if any(isinstance(v, Var) and v in unknown for v in eqn.invars):
            staged_eqns.append(eqn)
            unknown.update(eqn.outvars)
            continue
        avals = [v.aval for v in eqn.invars]
        if saveable(eqn.primitive, *avals, **eqn.params):
            saved.append(eqn)
        else:
            staged_eqns.append(eqn)
            recomputed.update(eqn.outvars)
    out_unknowns = [isinstance(v, Var) and v in unknown for v in jaxpr.outvars]
    staged = jaxpr.replace(
        invars=jaxpr.invars,
        outvars=[v for v, u in zip(jaxpr.outvars, out_unknowns, strict=True) if u],
        eqns=staged_eqns,
    )
    staged, _ = dce_jaxpr(staged)
    defined = {v for e in staged.eqns for v in e.outvars}
    needed: set[Var] = set()
    for e in staged.eqns:
        needed.update(v for v in e.invars if isinstance(v, Var))
    needed.update(v for v in staged.outvars if isinstance(v, Var))
    needed -= defined | unknown
    # As JAX: values the known equations saved first (in equation order), then known inputs.
    residuals = [v for e in jaxpr.eqns for v in e.outvars if v in needed]
    residuals += [v for v in jaxpr.invars if v in needed and v not in residuals]
    unknown_ins = [v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if u]
    staged = staged.replace(invars=[*residuals, *unknown_ins])
    known_ins = [v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if not u]
    known = jaxpr.replace(
        invars=known_ins,
        outvars=[
            *[v for v, u in zip(jaxpr.outvars, out_unknowns, strict=True) if not u],
            *residuals,
        ],
        eqns=[
            e for e in jaxpr.eqns if not any(isinstance(v, Var) and v in unknown for v in e.invars)
        ],
    )
    known, _ = dce_jaxpr(known)
    return known, staged, out_unknowns, residuals


def _inline_remats(jaxpr: Jaxpr) -> Jaxpr:
    """`jaxpr` with nested `remat2` equations replaced by their bodies (fresh variables), so
    one policy splits the whole computation. (JAX keeps the nested remat as an equation of
    the split halves; the numbers are the same.)"""
    if not any(e.primitive is remat_p for e in jaxpr.eqns):
        return jaxpr
    renamed: dict[Var, Any] = {}

    def atom(a: Any) -> Any:
        return renamed.get(a, a) if isinstance(a, Var) else a

    eqns: list[JaxprEqn] = []
    for eqn in jaxpr.eqns:
        if eqn.primitive is not remat_p:
            eqns.append(eqn.replace(invars=tuple(atom(v) for v in eqn.invars)))
            continue
        body: Jaxpr = _inline_remats(eqn.params["jaxpr"])
        inner_names: dict[Var, Any] = {
            b: atom(o) for b, o in zip(body.invars, eqn.invars, strict=True)
        }
        for inner in body.eqns:
            outs = tuple(Var(v.aval) for v in inner.outvars)
            ins = tuple(inner_names.get(v, v) if isinstance(v, Var) else v for v in inner.invars)
            inner_names.update(zip(inner.outvars, outs, strict=True))
            eqns.append(inner.replace(invars=ins, outvars=outs))
        for outer_v, body_v in zip(eqn.outvars, body.outvars, strict=True):
            renamed[outer_v] = (
                inner_names.get(body_v, body_v) if isinstance(body_v, Var) else body_v
            )
    return jaxpr.replace(eqns=eqns, outvars=[atom(v) for v in jaxpr.outvars])


def _mantissa_bits(dtype: np.dtype) -> tuple[int, int]:
    finfo = np.finfo(dtype)
    return int(finfo.nexp), int(finfo.nmant)


def _remat_partial_eval(trace: SplitTrace, *args: Any, **params: Any) -> list[Any]:
    jaxpr: Jaxpr = params["jaxpr"]
    policy = params["policy"] or nothing_saveable
    unknowns = [trace.is_unknown(a) for a in args]
    known, staged, out_unknowns, residuals = partial_eval_jaxpr_custom(jaxpr, unknowns, policy)
    # A saved residual the known half also reads is rounded once, so both halves see the
    # same value (JAX's `_insert_reduce_precision`).
    read_by_known = {v for e in known.eqns for v in e.invars if isinstance(v, Var)}
    saved_vars = {
        v for e in jaxpr.eqns for v in e.outvars if v in set(residuals) and v in read_by_known
    }
    known_args = [a for a, u in zip(args, unknowns, strict=True) if not u]
    parent = trace.parent
    assert parent is not None
    with running_under(parent):
        values = _eval_known(known, known_args, saved_vars)
    n_known = len(known.outvars) - len(residuals)
    known_outs, res_values = values[:n_known], values[n_known:]
    unknown_args = [a for a, u in zip(args, unknowns, strict=True) if u]
    staged_outs = iter(
        trace.bind_unknown(
            remat_p,
            [*res_values, *unknown_args],
            {**params, "jaxpr": staged, "differentiated": True},
        )
    )
    known_iter = iter(known_outs)
    return [next(staged_outs) if u else next(known_iter) for u in out_unknowns]


def _eval_known(known: Jaxpr, args: Sequence[Any], saved: set[Var]) -> list[Any]:
    """Run the known half; saved float residuals pass through `reduce_precision` (as JAX
    inserts it, so the saved value is exactly what the recomputation would see)."""
    env: dict[Var, Any] = dict(zip(known.invars, args, strict=True))

    def read(a: Any) -> Any:
        return a.val if isinstance(a, Literal) else env[a]

    for eqn in known.eqns:
        out = eqn.primitive.bind(*[read(v) for v in eqn.invars], **eqn.params)
        outs = out if eqn.primitive.multiple_results else [out]
        for v, o in zip(eqn.outvars, outs, strict=True):
            aval = v.aval
            if v in saved and isinstance(aval, ShapedArray) and aval.dtype.kind == "f":
                exp, mant = _mantissa_bits(aval.dtype)
                o = reduce_precision_p.bind(o, exponent_bits=exp, mantissa_bits=mant)
            env[v] = o
    return [read(v) for v in known.outvars]


partial_eval_rules.set(remat_p, _remat_partial_eval)


# --- transposition -----------------------------------------------------------------------------


def _remat_transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    jaxpr: Jaxpr = params["jaxpr"]
    linear = [is_undefined(a) for a in args]
    known = [a for a in args if not is_undefined(a)]
    nz_cts = [c for c in cts if type(c) is not Zero]
    ct_nz: list[bool] = []

    def transposed(*xs: Any) -> list[Any]:
        it_known, it_ct = iter(xs[: len(known)]), iter(xs[len(known) :])
        full = [
            UndefinedPrimal(v.aval) if lin else next(it_known)
            for v, lin in zip(jaxpr.invars, linear, strict=True)
        ]
        ct_in = [next(it_ct) if type(c) is not Zero else c for c in cts]
        out = backward_pass(jaxpr, (), full, ct_in)
        ct_nz.extend(type(c) is not Zero for c in out)
        return [c for c in out if type(c) is not Zero]

    avals = [typeof(k) for k in known] + [typeof(c) for c in nz_cts]
    closed = trace_to_jaxpr(transposed, avals, jaxpr.debug_info)
    outs = iter(
        remat_p.bind(
            *known, *nz_cts, **{**params, "jaxpr": _opened(closed), "differentiated": True}
        )
    )
    nz = iter(ct_nz)
    result: list[Any] = []
    for a in args:
        if not is_undefined(a):
            result.append(None)
        elif next(nz):
            result.append(next(outs))
        else:
            result.append(Zero(a.aval))
    return result


transpose_rules.set(remat_p, _remat_transpose)

__all__ = [
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "name_p",
    "partial_eval_jaxpr_custom",
    "remat",
    "remat_p",
]
