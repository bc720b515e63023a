"""`shard_map`: run a function on each device's piece of its arguments, as JAX's.

`shard_map(f, mesh=, in_specs=, out_specs=)` splits each argument over the mesh as its spec
says, runs `f` once per device on the pieces (the body sees per-device types), and assembles
the results as `out_specs` say. Inside, the mesh axes are named axes: collectives (`psum`,
`all_gather`, ...) act over them. It stages as one `shard_map` equation whose `jaxpr` is the
body traced once over the per-device types; values the body closes over become its leading
operands, replicated (`P()`).

Core evaluates a `shard_map` with NumPy (each device's piece, the collectives through `vmap`
over the mesh axes); the runtime runs it on the devices of the mesh.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from typing import Any, Final, cast

import numpy as np

from lamina_core.interpreters import AxisData, extend_axis_env, trace_to_jaxpr
from lamina_core.ir import (
    AbstractMesh,
    AbstractValue,
    AxisType,
    DebugInfo,
    Effects,
    Jaxpr,
    Mesh,
    PartitionSpec,
    Primitive,
    abstract_eval_rules,
    effects_rules,
    entry_axes,
    get_abstract_mesh,
    impl_rules,
    manual_mesh,
    register_open_jaxpr_params,
    spec_axis_names,
    use_abstract_mesh,
)
from lamina_core.sharding._shard_map_checks import (
    broadcast_specs,
    check_args,
    check_out_vma,
    check_outs,
    check_specs,
    check_specs_match_types,
    fun_name,
    inferred_spec,
)
from lamina_core.trace import (
    check_vma_scope,
    drop_vma,
    eval_jaxpr,
    pvary,
    sub_jaxpr_contexts,
    typeof,
)
from lamina_core.transforms import func_src_info, vmap
from lamina_core.tree import tree_util

shard_map_p: Final = Primitive("shard_map", multiple_results=True)
register_open_jaxpr_params(shard_map_p.name, ["jaxpr"])  # the body, read back (`ir.parse`)


class _InferFromArgs:
    __slots__ = ()

    def __repr__(self) -> str:
        return "Infer"


Infer: Final = _InferFromArgs()
"""The default `in_specs`: taken from the arguments' types (meshes of `Explicit` axes)."""


# --- the types a body sees ----------------------------------------------------------------------


def shard_aval(
    mesh: Mesh | AbstractMesh, manual: frozenset[Any], check_vma: bool, spec: Any, aval: Any
) -> Any:
    """The per-device type of a value of type `aval` split as `spec` says."""
    return aval.shard(mesh, manual, check_vma, spec)


def unshard_aval(mesh: Mesh | AbstractMesh, check_vma: bool, spec: Any, aval: Any) -> Any:
    """The type of the value assembled, as `spec` says, from per-device pieces of `aval`."""
    return aval.unshard(mesh, check_vma, spec)


# --- the primitive ------------------------------------------------------------------------------


@abstract_eval_rules.register(shard_map_p)
def _shard_map_abstract_eval(
    *avals: AbstractValue,
    jaxpr: Jaxpr,
    mesh: Mesh | AbstractMesh,
    in_specs: tuple[Any, ...],
    out_specs: tuple[Any, ...],
    check_vma: bool,
    newly_manual_axes: frozenset[Any],
) -> list[AbstractValue]:
    if len(avals) != len(in_specs) or len(jaxpr.out_avals) != len(out_specs):
        raise TypeError(
            f"shard_map: {len(avals)} operands for {len(in_specs)} in_specs, "
            f"{len(jaxpr.out_avals)} results for {len(out_specs)} out_specs"
        )
    return [
        unshard_aval(mesh, check_vma, s, a) for s, a in zip(out_specs, jaxpr.out_avals, strict=True)
    ]


@effects_rules.register(shard_map_p)
def _shard_map_effects(*avals: AbstractValue, jaxpr: Jaxpr, **params: Any) -> Effects:
    return frozenset(jaxpr.effects)


def _block_index(
    shape: Sequence[int], spec: PartitionSpec, sizes: dict[Any, int], where: dict[Any, int]
) -> tuple[slice, ...]:
    """The slice of an array of `shape` that the device at mesh position `where` holds."""
    index = []
    parts = spec.partitions
    for d, size in enumerate(shape):
        names = entry_axes(parts[d]) if d < len(parts) else ()
        count, block = 1, 0
        for n in names:  # row-major over the axes the dimension is split over
            block = block * sizes[n] + where[n]
            count *= sizes[n]
        step = size // count
        index.append(slice(block * step, (block + 1) * step))
    return tuple(index)


@impl_rules.register(shard_map_p)
def _shard_map_impl(
    *args: Any,
    jaxpr: Jaxpr,
    mesh: Mesh | AbstractMesh,
    in_specs: tuple[Any, ...],
    out_specs: tuple[Any, ...],
    check_vma: bool,
    newly_manual_axes: frozenset[Any],
) -> list[Any]:
    # The reference semantics: each device's piece, stacked along one leading axis per manual
    # mesh axis, through nested vmaps that bind the mesh axis names (so collectives mean what
    # they mean on the devices).
    names = [n for n in mesh.axis_names if n in newly_manual_axes]
    sizes = mesh.shape
    positions = [
        dict(zip(names, pos, strict=True)) for pos in np.ndindex(*(sizes[n] for n in names))
    ]
    lead = tuple(sizes[n] for n in names)

    def stacked(x: Any, spec: PartitionSpec) -> np.ndarray:
        x = np.asarray(x)
        pieces = [x[_block_index(x.shape, spec, sizes, w)] for w in positions]
        return np.stack(pieces).reshape(*lead, *pieces[0].shape)

    # Each device's values carry no varying-manual-axes types: nor does the body run on them.
    plain = drop_vma(jaxpr) if check_vma else jaxpr

    def body(*xs: Any) -> list[Any]:
        return eval_jaxpr(plain, [], *xs)

    run: Callable[..., Any] = body
    for name in reversed(names):
        run = vmap(run, axis_name=name)
    outs = run(*(stacked(x, s) for x, s in zip(args, in_specs, strict=True)))
    results = []
    for out, spec, aval in zip(outs, out_specs, jaxpr.out_avals, strict=True):
        out = np.asarray(out)
        full_shape = unshard_aval(mesh, check_vma, spec, aval).shape
        mentioned = spec_axis_names(spec)
        full = np.zeros(full_shape, out.dtype)
        for pos, w in zip(np.ndindex(*lead), positions, strict=True):
            if any(w[n] for n in names if n not in mentioned):
                continue  # out_specs promise these copies are equal: one is taken
            full[_block_index(full_shape, spec, sizes, w)] = out[pos]
        results.append(full)
    return results


def _missing(spec: PartitionSpec, x: Any) -> tuple[Any, ...]:
    """The mesh axes `spec` names that `x` does not vary over yet (`pvary` orders them)."""
    have: frozenset[Any] = getattr(typeof(x), "vma", frozenset())
    return tuple(n for n in sorted(spec_axis_names(spec), key=str) if n not in have)


# --- the API ------------------------------------------------------------------------------------


def shard_map(
    f: Callable[..., Any] | None = None,
    /,
    *,
    out_specs: Any,
    in_specs: Any = Infer,
    mesh: Mesh | AbstractMesh | None = None,
    axis_names: frozenset[Any] | set[Any] = frozenset(),
    check_vma: bool = True,
) -> Any:
    """Map `f` over the pieces of its arguments on the devices of `mesh` (JAX's `shard_map`).

    Args:
        f: the function each device runs on its pieces.
        out_specs: a pytree prefix of `f`'s result: a `PartitionSpec` per result says how
            the per-device results are concatenated (a mesh axis it does not name promises
            the results are equal along it).
        in_specs: a pytree prefix of the arguments: how each is split (`None`: static). By
            default (`Infer`, manual axes all Explicit) each argument's spec is the manual
            axes of its type's; over a mesh all manual and Explicit, given specs must match
            the arguments' types.
        mesh: the mesh; by default the one in context (`set_mesh`).
        axis_names: the mesh axes `f` is manual over (default: all).
        check_vma: type the body's values with the manual axes they vary over (JAX's
            `{V:...}` types, `pvary` casts, `psum_invariant`) and check each result
            varies only over the axes its out_spec names.
    """
    kwargs = dict(
        mesh=mesh,
        in_specs=in_specs,
        out_specs=out_specs,
        axis_names=axis_names,
        check_vma=check_vma,
    )
    if f is None:
        return lambda g: _shard_map(g, **kwargs)
    return _shard_map(f, **kwargs)


def _check_mesh(
    mesh: Mesh | AbstractMesh | None, axis_names: Any
) -> tuple[Mesh | AbstractMesh, frozenset[Any]]:
    if mesh is None:
        mesh = get_abstract_mesh()
        if mesh.empty:
            raise ValueError(
                "The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a "
                "mesh context"
            )
    elif isinstance(mesh, (Mesh, AbstractMesh)):
        context = get_abstract_mesh()
        if not context.empty and mesh.abstract_mesh != context:
            raise ValueError(
                f"The context mesh {context} should match the mesh passed to shard_map {mesh}"
            )
    if not isinstance(mesh, (Mesh, AbstractMesh)):
        raise TypeError(
            "shard_map requires a `jax.sharding.Mesh` or a `jax.sharding.AbstractMesh` instance "
            f"for its second argument, but got {mesh} of type {type(mesh)}."
        )
    if mesh.empty:
        raise ValueError(f"shard_map requires a non-empty mesh. Got {mesh}")
    if not isinstance(axis_names, (frozenset, set)):
        raise TypeError(
            "`axis_names` argument of shard_map should be of type `frozenset` or `set`. Got "
            f"type: {type(axis_names)}"
        )
    # All axes by default, built as JAX builds them (a set difference, which re-inserts the
    # names): a set prints its names in table order, which depends on how it was built.
    names = frozenset(axis_names) or frozenset(mesh.axis_names) - frozenset()
    if not names <= frozenset(mesh.axis_names):
        raise ValueError(
            f"jax.shard_map requires axis_names={names} to be a subset of "
            f"mesh.axis_names={frozenset(mesh.axis_names)}"
        )
    return mesh, names


@contextlib.contextmanager
def manual_axes_env(
    mesh: Mesh | AbstractMesh, manual: frozenset[Any], check_vma: bool = False
) -> Any:
    """Bind the manual mesh axes as named axes (in mesh order) while a body is traced, with
    varying-manual-axes typing on or off as the body's `check_vma` says, under the manual
    mesh (the types made in it carry that mesh, as JAX's)."""
    with contextlib.ExitStack() as stack:
        for name, size in mesh.shape_tuple:
            if name in manual:
                stack.enter_context(extend_axis_env(AxisData(name, size)))
        stack.enter_context(use_abstract_mesh(manual_mesh(mesh, manual)))
        stack.enter_context(check_vma_scope(check_vma))
        yield


def _body_context(
    *,
    mesh: Mesh | AbstractMesh,
    newly_manual_axes: frozenset[Any],
    check_vma: bool,
    **params: Any,
) -> Any:
    return manual_axes_env(mesh, newly_manual_axes | frozenset(mesh.manual_axes), check_vma)


sub_jaxpr_contexts[shard_map_p] = _body_context


def _shard_map(
    f: Callable[..., Any],
    *,
    mesh: Mesh | AbstractMesh | None,
    in_specs: Any,
    out_specs: Any,
    axis_names: Any,
    check_vma: bool,
) -> Any:
    if not callable(f):
        raise TypeError(
            f"shard_map requires a callable for its first argument, but got {f} of type {type(f)}."
        )

    @functools.wraps(f)
    def wrapped(*args: Any) -> Any:
        the_mesh, manual = _check_mesh(mesh, axis_names)
        if in_specs is Infer:
            types = ", ".join(str(the_mesh._name_to_type[a]) for a in sorted(manual, key=str))
            if not all(the_mesh._name_to_type[a] is AxisType.Explicit for a in manual):
                raise TypeError(
                    "shard_map in_specs argument must be a pytree of "
                    "`jax.sharding.PartitionSpec` instances, but it was `None` when "
                    f"axis_names={manual} are of type {types}"
                )
        else:
            check_specs("in", in_specs, manual)
        check_specs("out", out_specs, manual)
        leaves_with_paths, in_tree = tree_util.tree_flatten_with_path(args)
        leaves = [x for _, x in leaves_with_paths]
        if in_specs is Infer:
            # Every argument's type must say how it is split (`.sharding`), as in JAX.
            arg_types: list[Any] = [typeof(x) for x in leaves]
            keyed_specs = [("", inferred_spec(manual, t.sharding.spec)) for t in arg_types]
        else:
            keyed_specs = broadcast_specs("in", in_specs, in_tree)
        dynamic = [s is not None for _, s in keyed_specs]
        dyn_args = [x for x, d in zip(leaves, dynamic, strict=True) if d]
        dyn_keyed = [k for k, d in zip(keyed_specs, dynamic, strict=True) if d]
        dyn_specs = tuple(s for _, s in dyn_keyed)
        avals = [typeof(x) for x in dyn_args]
        check_args(
            f,
            the_mesh,
            in_tree,
            [p for (p, _), d in zip(leaves_with_paths, dynamic, strict=True) if d],
            dyn_keyed,
            avals,
        )
        check_specs_match_types(the_mesh, manual, dyn_specs, avals)
        newly_manual = manual - frozenset(the_mesh.manual_axes)
        body_avals = [
            shard_aval(the_mesh, manual, check_vma, s, a)
            for s, a in zip(dyn_specs, avals, strict=True)
        ]
        out_trees: list[Any] = []

        def flat_body(*dyn: Any) -> list[Any]:
            it = iter(dyn)
            full = [next(it) if d else x for x, d in zip(leaves, dynamic, strict=True)]
            out = f(*tree_util.tree_unflatten(in_tree, full))
            out_leaves, out_tree = tree_util.tree_flatten_with_path(out)
            out_trees.append((out_tree, [p for p, _ in out_leaves]))
            flat = [x for _, x in out_leaves]
            if not check_vma:
                return flat
            # A result its spec says varies over axes it does not vary over is cast to vary.
            keyed = broadcast_specs("out", out_specs, out_tree)
            return [
                x if not isinstance(s, PartitionSpec) else pvary(x, _missing(s, x))
                for x, (_, s) in zip(flat, keyed, strict=True)
            ]

        debug = DebugInfo("shard_map", func_src_info(f), lambda: None)
        with manual_axes_env(the_mesh, manual, check_vma):
            closed = trace_to_jaxpr(flat_body, body_avals, debug)
        out_tree, out_paths = out_trees[0]
        keyed_out_specs = broadcast_specs("out", out_specs, out_tree)
        check_outs(f, out_paths, keyed_out_specs, closed.jaxpr.out_avals)
        if check_vma:
            check_out_vma(f, the_mesh, keyed_out_specs, closed.jaxpr.out_avals)
        flat_out_specs = tuple(s for _, s in keyed_out_specs)
        consts = list(closed.consts)
        for c in consts:
            if typeof(c).mutable:
                raise ValueError(
                    f"shard_map can't close over the mutable array reference of type "
                    f"{typeof(c).str_short(True)} that {fun_name(f)} uses: pass it as an argument "
                    "with an in_specs entry instead"
                )
        jaxpr = closed.jaxpr
        if jaxpr.constvars:
            jaxpr = jaxpr.replace(constvars=(), invars=(*jaxpr.constvars, *jaxpr.invars))
        outs = shard_map_p.bind(
            *consts,
            *dyn_args,
            jaxpr=jaxpr,
            mesh=the_mesh,
            in_specs=(*(PartitionSpec() for _ in consts), *dyn_specs),
            out_specs=flat_out_specs,
            check_vma=check_vma,
            newly_manual_axes=newly_manual,
        )
        return tree_util.tree_unflatten(out_tree, outs)

    return cast(Any, wrapped)


__all__ = [
    "Infer",
    "manual_axes_env",
    "shard_aval",
    "shard_map",
    "shard_map_p",
    "unshard_aval",
]
