"""Differentiation of `shard_map`: jvp, linearization and transposition, as JAX 0.10.2's.

Each rule transforms the per-device body and binds `shard_map` again over the same mesh:

* jvp: one `shard_map` of the body's jvp, taking `[*primals, *nonzero tangents]` (tangents
  split as their primals are) and returning `[*outs, *nonzero tangent outs]`;
* linearization: a known `shard_map` returning `[*residuals, *outs]` and a tangent one taking
  `[*residuals, *nonzero tangents]`. Residuals that are not body inputs or outputs leave the
  known body concatenated along axis 0 over every newly manual mesh axis (scalars gain a
  leading axis of size 1 first, which the tangent body squeezes away);
* transposition: the body transposed with `backward_pass`. With `check_vma=False` an output
  cotangent replicated over mesh axes its spec does not name is divided by their size, and
  input cotangents are `psum`med over those axes; with `check_vma=True` the body's types
  (`pvary`, `psum_invariant`, which transpose into each other) already say so.

Bodies are traced with the manual mesh axes bound (`manual_axes_env`), so collectives in them
(and in the rules of their transposes) see their axes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.interpreters import (
    LinearizeTrace,
    LinearizeTracer,
    TangentTrace,
    UndefinedPrimal,
    Zero,
    backward_pass,
    bound_axis_names,
    cotangents_per_arg,
    is_float0,
    is_undefined,
    jvp_rules,
    linearization_rules,
    linearizing_for_vjp,
    prune_residuals,
    trace_to_jaxpr,
    transpose_rules,
    zero_of,
)
from lamina_core.ir import (
    AbstractMesh,
    AbstractValue,
    ClosedJaxpr,
    DebugInfo,
    Jaxpr,
    Literal,
    Mesh,
    PartitionSpec,
    spec_axis_names,
)
from lamina_core.lax import broadcast, psum, squeeze
from lamina_core.numpy import true_divide
from lamina_core.sharding._shard_map import manual_axes_env, shard_aval, shard_map_p
from lamina_core.trace import bound_axes, current_trace, eval_jaxpr, set_current_trace, typeof
from lamina_core.transforms import jvp_jaxpr, split_jvp_outs

# --- shared by the shard_map rules ---------------------------------------------------------


def spmd_axis_names() -> frozenset[Any]:
    """The mesh axes enclosing `vmap`s spread their mapped axes over (`spmd_axis_name`)."""
    names: set[Any] = set()
    for data in bound_axes():
        names.update(data.spmd_name or ())
    return frozenset(names)


def newly_manual_names(mesh: Mesh | AbstractMesh, manual: frozenset[Any]) -> tuple[Any, ...]:
    """The mesh axes (in mesh order) residuals are concatenated over: the newly manual ones
    that no enclosing `vmap` or `shard_map` already binds (JAX's
    `_all_newly_manual_mesh_names`)."""
    taken = spmd_axis_names() | frozenset(bound_axis_names())
    return tuple(n for n in mesh.axis_names if n in manual and n not in taken)


def residual_spec(names: tuple[Any, ...]) -> PartitionSpec:
    """The spec residuals leave a body with: axis 0 concatenated over `names`."""
    return PartitionSpec(names) if names else PartitionSpec()


def fresh_residual_specs(
    mesh: Mesh | AbstractMesh,
    manual: frozenset[Any],
    check_vma: bool,
    avals: Sequence[AbstractValue],
) -> list[PartitionSpec]:
    """The specs residuals of types `avals` leave a body with: concatenated over every newly
    manual axis, or, in a checked body, over the axes each varies over (JAX's `nospec`)."""
    if not check_vma:
        return [residual_spec(newly_manual_names(mesh, manual))] * len(avals)
    return [
        residual_spec(tuple(n for n in mesh.axis_names if n in getattr(a, "vma", ())))
        for a in avals
    ]


def trace_body(
    fun: Callable[..., Sequence[Any]],
    avals: Sequence[AbstractValue],
    debug_info: DebugInfo | None,
    mesh: Mesh | AbstractMesh,
    manual: frozenset[Any],
    check_vma: bool,
) -> ClosedJaxpr:
    """Stage a per-device body with the manual mesh axes bound as named axes."""
    with manual_axes_env(mesh, manual, check_vma):
        return trace_to_jaxpr(fun, avals, debug_info)


def body_params(
    closed: ClosedJaxpr,
    in_specs: Sequence[Any],
    out_specs: Sequence[Any],
    params: dict[str, Any],
) -> tuple[list[Any], dict[str, Any]]:
    """The leading operands (the body's captured consts, replicated) and the params of a
    `shard_map` over `closed`: JAX's `separate_consts` with `P()` specs for them."""
    consts = list(closed.consts)
    jaxpr = closed.jaxpr
    if jaxpr.constvars:
        jaxpr = jaxpr.replace(constvars=(), invars=(*jaxpr.constvars, *jaxpr.invars))
    new = dict(
        jaxpr=jaxpr,
        mesh=params["mesh"],
        in_specs=(*(PartitionSpec() for _ in consts), *in_specs),
        out_specs=tuple(out_specs),
        check_vma=params["check_vma"],
        newly_manual_axes=params["newly_manual_axes"],
    )
    return consts, new


def bind_body(
    closed: ClosedJaxpr,
    args: Sequence[Any],
    in_specs: Sequence[Any],
    out_specs: Sequence[Any],
    params: dict[str, Any],
) -> list[Any]:
    consts, new = body_params(closed, in_specs, out_specs, params)
    outs: list[Any] = shard_map_p.bind(*consts, *args, **new)
    return outs


def gather_residuals(
    in_fwd: Sequence[int | None],
    out_fwd: Sequence[int | None],
    ins: Sequence[Any],
    in_specs: Sequence[Any],
    outs: Sequence[Any],
    out_specs: Sequence[Any],
    fresh: Sequence[Any],
    fresh_specs: Sequence[Any],
) -> tuple[list[Any], list[Any]]:
    """Each residual and its spec: a forwarded input (`in_fwd[i]`), a forwarded output
    (`out_fwd[i]`), or the next of the `fresh` ones the known body returned (`fresh_specs`)."""
    new = iter(fresh)
    new_specs = iter(fresh_specs)
    residuals, specs = [], []
    for f1, f2 in zip(in_fwd, out_fwd, strict=True):
        if f1 is not None:
            residuals.append(ins[f1])
            specs.append(in_specs[f1])
        elif f2 is not None:
            residuals.append(outs[f2])
            specs.append(out_specs[f2])
        else:
            residuals.append(next(new))
            specs.append(next(new_specs))
    return residuals, specs


def add_singleton(x: Any) -> Any:
    return broadcast(x, (1,))


def remove_singleton(x: Any) -> Any:
    return squeeze(x, (0,))


def promote_scalar_residuals(
    jaxpr: Jaxpr, which: Sequence[bool], params: dict[str, Any]
) -> ClosedJaxpr:
    """`jaxpr` (leading invars: residuals) taking the residuals flagged in `which` with a
    leading axis of size 1, squeezed away first (JAX's `_promote_scalar_residuals_jaxpr`)."""
    n = len(which)
    avals = [v.aval for v in jaxpr.invars]
    in_avals = [a.inc_rank(1, 0) if w else a for a, w in zip(avals[:n], which, strict=True)]

    def fun(*args: Any) -> list[Any]:
        res = [remove_singleton(x) if w else x for x, w in zip(args[:n], which, strict=True)]
        return eval_jaxpr(jaxpr, [], *res, *args[n:])

    return trace_body(
        fun,
        [*in_avals, *avals[n:]],
        jaxpr.debug_info,
        params["mesh"],
        params["newly_manual_axes"],
        params["check_vma"],
    )


def _is_scalar(x: Any) -> bool:
    return getattr(typeof(x), "shape", None) == ()


# --- forward mode ---------------------------------------------------------------------------


def _shard_map_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[list[Any], list[Any]]:
    jaxpr: Jaxpr = params["jaxpr"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    nonzeros = tuple(type(t) is not Zero and not is_float0(typeof(t)) for t in tangents)
    with manual_axes_env(params["mesh"], params["newly_manual_axes"], params["check_vma"]):
        body, out_nz = jvp_jaxpr(ClosedJaxpr(jaxpr, []), nonzeros)
    nz_tangents = [t for t, nz in zip(tangents, nonzeros, strict=True) if nz]
    tangent_in = [s.to_tangent_spec() for s, nz in zip(in_specs, nonzeros, strict=True) if nz]
    tangent_out = [s.to_tangent_spec() for s, nz in zip(out_specs, out_nz, strict=True) if nz]
    outs = bind_body(
        body,
        [*primals, *nz_tangents],
        [*in_specs, *tangent_in],
        [*out_specs, *tangent_out],
        params,
    )
    primals_out, tangents_out = split_jvp_outs(outs, out_nz)
    return list(primals_out), tangents_out


jvp_rules.set(shard_map_p, _shard_map_jvp)


# --- linearization --------------------------------------------------------------------------


def _linearize_body(
    jaxpr: Jaxpr, nonzeros: Sequence[bool], primals: Sequence[Any]
) -> tuple[list[Any], list[bool], ClosedJaxpr]:
    """Evaluate the body on `primals` under a linearize trace: the primal outputs, which have
    a nonzero tangent, and the tangent jaxpr closed over its residuals (first-use order).

    JAX linearizes the user's function, where a constant such as the `2.0` of `x * 2.0` is
    an array: a tangent equation reading it makes it a residual. Lamina's body is a jaxpr
    whose constants are literals, so they are marked as computed values to be the same.
    """
    parent = current_trace()
    tangent_trace = TangentTrace(parent, jaxpr.debug_info)
    for eqn in jaxpr.eqns:
        for atom in eqn.invars:
            if isinstance(atom, Literal):
                tangent_trace.note_computed(atom.val)
    trace = LinearizeTrace(parent, tangent_trace, linearizing_for_vjp())
    avals = [v.aval for v in jaxpr.invars]
    tangent_args = [
        tangent_trace.new_arg(a.to_tangent_aval())
        for a, nz in zip(avals, nonzeros, strict=True)
        if nz
    ]
    it = iter(tangent_args)
    ins = [
        LinearizeTracer(trace, p, next(it)) if nz else p
        for p, nz in zip(primals, nonzeros, strict=True)
    ]
    with set_current_trace(trace):
        pairs = [trace.pair(o) for o in eval_jaxpr(jaxpr, [], *ins)]
    out_nz = [type(t) is not Zero for _, t in pairs]
    tangent, consts = tangent_trace.finish(
        [t.jaxpr_var for t in tangent_args], [t for _, t in pairs if type(t) is not Zero]
    )
    return [p for p, _ in pairs], out_nz, prune_residuals(tangent, consts)


def _shard_map_linearize(nonzeros: Sequence[bool], *primals: Any, **params: Any) -> Any:
    jaxpr: Jaxpr = params["jaxpr"]
    mesh, manual = params["mesh"], params["newly_manual_axes"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    closed = ClosedJaxpr(jaxpr, [])
    nz = tuple(
        n and not is_float0(a.to_tangent_aval())
        for n, a in zip(nonzeros, closed.in_avals, strict=True)
    )
    box: list[Any] = []

    def known_body(*ps: Any) -> list[Any]:
        outs, out_nz, tangent = _linearize_body(jaxpr, nz, ps)
        in_ids = {id(p): i for i, p in enumerate(ps)}
        out_ids = {id(o): i for i, o in enumerate(outs)}
        in_fwd = [in_ids.get(id(r)) for r in tangent.consts]
        out_fwd = [out_ids.get(id(r)) for r in tangent.consts]
        res = [
            r
            for r, f1, f2 in zip(tangent.consts, in_fwd, out_fwd, strict=True)
            if f1 is None and f2 is None
        ]
        promote = [
            _is_scalar(r) and f1 is None and f2 is None
            for r, f1, f2 in zip(tangent.consts, in_fwd, out_fwd, strict=True)
        ]
        box.extend([tangent, out_nz, in_fwd, out_fwd, promote])
        return [*(add_singleton(r) if _is_scalar(r) else r for r in res), *outs]

    known = trace_body(
        known_body, closed.in_avals, jaxpr.debug_info, mesh, manual, params["check_vma"]
    )
    tangent, out_nz, in_fwd, out_fwd, promote = box
    n_res = sum(f1 is None and f2 is None for f1, f2 in zip(in_fwd, out_fwd, strict=True))
    specs = fresh_residual_specs(mesh, manual, params["check_vma"], known.jaxpr.out_avals[:n_res])
    outs = bind_body(known, primals, in_specs, [*specs, *out_specs], params)
    fresh, primals_out = outs[:n_res], outs[n_res:]
    residuals, res_specs = gather_residuals(
        in_fwd, out_fwd, primals, in_specs, primals_out, out_specs, fresh, specs
    )
    t = tangent.jaxpr
    opened = t.replace(constvars=(), invars=(*t.constvars, *t.invars))
    tangent_body = promote_scalar_residuals(opened, promote, params)
    tangent_in = [
        *res_specs,
        *(s.to_tangent_spec() for s, n in zip(in_specs, nz, strict=True) if n),
    ]
    tangent_out = [s.to_tangent_spec() for s, n in zip(out_specs, out_nz, strict=True) if n]

    def linearized(res: Sequence[Any], *tangents: Any) -> list[Any]:
        nz_tangents = [x for x, n in zip(tangents, nz, strict=True) if n]
        nz_out = iter(
            bind_body(tangent_body, [*res, *nz_tangents], tangent_in, tangent_out, params)
        )
        return [next(nz_out) if n else zero_of(p) for p, n in zip(primals_out, out_nz, strict=True)]

    return primals_out, out_nz, residuals, linearized


linearization_rules.set(shard_map_p, _shard_map_linearize)


# --- transposition --------------------------------------------------------------------------


def unmentioned_axes(
    mesh: Mesh | AbstractMesh, spec: Any, manual: frozenset[Any]
) -> tuple[Any, ...]:
    """The manual mesh axes (in mesh order, but for `vmap`s' spmd axes) `spec` does not name
    (JAX's `_unmentioned2`)."""
    named = spec_axis_names(spec) if isinstance(spec, PartitionSpec) else frozenset()
    if isinstance(spec, PartitionSpec):
        named = named | spec.unreduced
    spmd = spmd_axis_names()
    return tuple(n for n in mesh.axis_names if n in manual and n not in spmd and n not in named)


def _divide(x: Any, n: int) -> Any:
    return x if n == 1 else true_divide(x, n)


def _shard_map_transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    jaxpr: Jaxpr = params["jaxpr"]
    mesh, manual = params["mesh"], params["newly_manual_axes"]
    check_vma: bool = params["check_vma"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    sizes = mesh.shape
    out_cts: list[Any] = []
    for spec, ct in zip(out_specs, cts, strict=True):
        ct_spec = spec.to_ct_spec()
        if type(ct) is Zero:
            out_cts.append(Zero(shard_aval(mesh, manual, check_vma, ct_spec, ct.aval)))
        elif check_vma or is_float0(typeof(ct)):
            out_cts.append(ct)  # a checked body's types say where cotangents vary
        else:
            n = math.prod(sizes[a] for a in unmentioned_axes(mesh, ct_spec, manual))
            out_cts.append(_divide(ct, n))
    linear = [is_undefined(a) for a in args]
    defined = [a for a in args if not is_undefined(a)]
    nz_cts = [c for c in out_cts if type(c) is not Zero]
    ct_avals = [
        shard_aval(mesh, manual, check_vma, s.to_ct_spec(), typeof(c))
        for s, c in zip(out_specs, out_cts, strict=True)
        if type(c) is not Zero
    ]
    defined_avals = [v.aval for v, lin in zip(jaxpr.invars, linear, strict=True) if not lin]
    left_nz: list[bool] = []

    def body(*flat: Any) -> list[Any]:
        it_ct, it_arg = iter(flat[: len(nz_cts)]), iter(flat[len(nz_cts) :])
        right = [c if type(c) is Zero else next(it_ct) for c in out_cts]
        full = [
            UndefinedPrimal(v.aval) if lin else next(it_arg)
            for v, lin in zip(jaxpr.invars, linear, strict=True)
        ]
        left = backward_pass(jaxpr, [], full, right)
        summed = []
        lin_specs = [s for s, lin in zip(in_specs, linear, strict=True) if lin]
        for spec, ct in zip(lin_specs, left, strict=True):
            if type(ct) is not Zero and not check_vma and not is_float0(typeof(ct)):
                axes = unmentioned_axes(mesh, spec.to_ct_spec(), manual)
                if axes:
                    ct = psum(ct, axes)
            summed.append(ct)
        left_nz.extend(type(c) is not Zero for c in summed)
        return [c for c in summed if type(c) is not Zero]

    transposed = trace_body(
        body, [*ct_avals, *defined_avals], jaxpr.debug_info, mesh, manual, check_vma
    )
    lin_specs = [s for s, lin in zip(in_specs, linear, strict=True) if lin]
    new_in = [
        *(s.to_ct_spec() for s, c in zip(out_specs, out_cts, strict=True) if type(c) is not Zero),
        *(s for s, lin in zip(in_specs, linear, strict=True) if not lin),
    ]
    new_out = [s.to_ct_spec() for s, nz in zip(lin_specs, left_nz, strict=True) if nz]
    outs = bind_body(transposed, [*nz_cts, *defined], new_in, new_out, params)
    return cotangents_per_arg(args, left_nz, outs)


transpose_rules.set(shard_map_p, _shard_map_transpose)


__all__ = [
    "add_singleton",
    "bind_body",
    "body_params",
    "fresh_residual_specs",
    "newly_manual_names",
    "promote_scalar_residuals",
    "remove_singleton",
    "residual_spec",
    "spmd_axis_names",
    "trace_body",
    "unmentioned_axes",
]
