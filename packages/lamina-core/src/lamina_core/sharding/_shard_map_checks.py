"""`shard_map`'s checks of its specs against its arguments and results, with JAX's messages.

Specs are a pytree prefix of the arguments (or results): each leaf spec stands for the leaves
of the subtree it prefixes. A message names both sides by their paths: `in_specs[1]` in the
specs, `args[1]` in the arguments, and, when the call binds to the function's signature, the
parameter an argument is bound to.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.ir import (
    AbstractMesh,
    AxisType,
    Mesh,
    PartitionSpec,
    entry_axes,
    spec_axis_names,
)
from lamina_core.tree import keystr, tree_util


def is_spec(x: Any) -> bool:
    """A `PartitionSpec`, or a hi type's spec (a `HiPspec`: anything with `to_lo`)."""
    return isinstance(x, PartitionSpec) or (
        hasattr(x, "to_lo") and not isinstance(x, type) and not isinstance(x, (tuple, list, dict))
    )


def _spec_leaf(x: Any) -> bool:
    return x is None or is_spec(x)


class _Keyed:
    """A leaf spec and its path in the specs tree (itself a pytree leaf)."""

    __slots__ = ("path", "spec")

    def __init__(self, path: str, spec: Any) -> None:
        self.path, self.spec = path, spec


def broadcast_specs(which: str, specs: Any, tree: Any) -> list[tuple[str, Any]]:
    """For each leaf of the value tree `tree`: the path of its spec in `specs` and the spec."""
    keyed = tree_util.tree_map_with_path(
        lambda p, s: _Keyed(keystr(p), s), specs, is_leaf=_spec_leaf
    )
    dummy = tree_util.tree_unflatten(tree, [0] * tree.num_leaves)
    try:
        full = tree_util.tree_broadcast(keyed, dummy, is_leaf=lambda x: isinstance(x, _Keyed))
    except ValueError as err:
        raise ValueError(
            f"shard_map {which}_specs specification must be a tree prefix of the "
            f"corresponding value, got specification {specs} for value tree {tree}.\n"
            f"  Mismatch details: {err}"
        ) from None
    flat: list[tuple[str, Any]] = []
    tree_util.tree_map(
        lambda _, k: flat.append((k.path, k.spec)),
        dummy,
        full,
        is_leaf=lambda x: isinstance(x, _Keyed),
    )
    return flat


def check_specs(which: str, specs: Any, manual: frozenset[Any]) -> None:
    """`specs` are specs (or None, for arguments) naming only manual mesh axes."""
    if which == "in" and specs is None:
        raise TypeError(
            "shard_map in_specs argument must be a pytree of `jax.sharding.PartitionSpec` "
            "instances, but it was None.\nInstead of `in_specs=None`, did you mean "
            "`in_specs=P()`, where `P = jax.sharding.PartitionSpec`?"
        )
    paths, _ = tree_util.tree_flatten_with_path(specs, is_leaf=_spec_leaf)
    wrong = [
        f"  {which}_specs{keystr(p)} is {s} of type {type(s).__name__}, "
        for p, s in paths
        if s is not None and not is_spec(s)
    ]
    if wrong:
        raise TypeError(
            f"shard_map {which}_specs argument must be a pytree of "
            "`jax.sharding.PartitionSpec` instances, but:\n\n"
            + "\n\n".join(wrong)
            + f"\n\nCheck the {which}_specs values passed to shard_map."
        )
    # In entry order, repeats included, as JAX's; `UNCONSTRAINED` is no manual axis either.
    unknown = [
        f"  {which}_specs{keystr(p)} refers to {n!r}"
        for p, s in paths
        if isinstance(s, PartitionSpec)
        for entry in s.partitions
        for n in (entry if isinstance(entry, tuple) else (entry,))
        if n is not None and n not in manual
    ]
    if unknown:
        raise ValueError(
            f"shard_map {which}_specs argument must refer to an axis marked as manual "
            f"({manual}), but:\n\n"
            + "\n\n".join(unknown)
            + f"\n\nCheck the {which}_specs values passed to shard_map."
        )


def fun_name(f: Callable[..., Any]) -> str:
    while isinstance(f, functools.partial):
        f = f.func
    return getattr(f, "__name__", str(f))


def _binding_clause(f: Callable[..., Any], in_tree: Any, arg_path: tuple[Any, ...]) -> str:
    """`, where args[1] is bound to f's parameter 'x',` (or the varargs form), or `""` when
    the call does not bind to `f`'s signature."""
    try:
        dummy = tree_util.tree_unflatten(in_tree, [False] * in_tree.num_leaves)
        signature = inspect.signature(f)
        signature.bind(*dummy)
    except (TypeError, ValueError):
        return ""
    params = [
        p
        for p in signature.parameters.values()
        if p.kind not in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD)
    ]
    key = arg_path[0]
    index = getattr(key, "idx", 0)
    where = f"args{keystr((key,))}"
    name = fun_name(f)
    if index >= len(params) or params[index].kind == inspect.Parameter.VAR_POSITIONAL:
        return (
            f", where {where} is the index {index - len(params) + 1} component of {name}'s "
            f"varargs parameter '{params[-1].name}',"
        )
    return f", where {where} is bound to {name}'s parameter '{params[index]}',"


def _bulleted(msgs: list[str]) -> str:
    return "\n\n".join([msgs[0][2:]] if len(msgs) == 1 else msgs)


def check_args(
    f: Callable[..., Any],
    mesh: Mesh | AbstractMesh,
    in_tree: Any,
    arg_paths: Sequence[tuple[Any, ...]],
    specs: Sequence[tuple[str, Any]],
    avals: Sequence[Any],
) -> None:
    """Each argument has at least as many axes as its spec, and the mesh axes its spec names
    divide the array axes they split."""
    name = fun_name(f)
    too_long = []
    for path, (spec_path, s), a in zip(arg_paths, specs, avals, strict=True):
        if isinstance(s, PartitionSpec) and len(s) > len(a.shape):
            ndim = len(a.shape)
            too_long.append(
                f"* in_specs{spec_path} is {s} which has length {len(s)}, but the passed "
                f"args{keystr(path)}{_binding_clause(f, in_tree, path)} has shape "
                f"{a.str_short(short_dtypes=False)}, which has rank {ndim} (and {ndim} < "
                f"{len(s)})"
            )
    if too_long:
        msg = (
            f"shard_map applied to the function '{name}' was given an in_specs entry which is "
            "too long to be compatible with the corresponding input value from the "
            f"function:\n\n{_bulleted(too_long)}\n\nEntries in in_specs must be of length no "
            "greater than the number of axes in the corresponding input value.\n\nEither "
            f"revise the spec to be shorter, or modify '{name}' so that its inputs have "
            "sufficient rank."
        )
        if any(
            not a.shape
            for (_, s), a in zip(specs, avals, strict=True)
            if isinstance(s, PartitionSpec) and len(s) > len(a.shape)
        ):
            msg += (
                "\n\nFor scalar values (rank 0), consider using an in_specs entry of `P()`, "
                "where `P = jax.sharding.PartitionSpec`."
            )
        raise ValueError(msg)
    bad = []
    for path, (spec_path, s), a in zip(arg_paths, specs, avals, strict=True):
        if not isinstance(s, PartitionSpec):
            continue
        clause = _binding_clause(f, in_tree, path)
        for d, entry in enumerate(s.partitions):
            names = entry_axes(entry)
            n = math.prod(mesh.shape[x] for x in names)
            if names and a.shape[d] % n:
                axis = f"axes {names}" if len(names) > 1 else f"axis '{names[0]}'"
                total = "total " if len(names) > 1 else ""
                bad.append(
                    f"* the passed args{keystr(path)} of shape "
                    f"{a.str_short(short_dtypes=False)}{clause} corresponds to "
                    f"in_specs{spec_path} of value {s}, which maps array axis {d} (of size "
                    f"{a.shape[d]}) to mesh {axis} (of {total}size {n}), but {n} does not "
                    f"evenly divide {a.shape[d]}"
                )
    if bad:
        raise ValueError(
            f"shard_map applied to the function '{name}' was given argument arrays with axis "
            "sizes that are not evenly divisible by the corresponding mesh axis sizes:\n\n"
            f"The mesh given has shape {tuple(mesh.shape.values())} with corresponding axis "
            f"names {mesh.axis_names}.\n\n{_bulleted(bad)}\n\nArray arguments' axis sizes "
            "must be evenly divisible by the mesh axis or axes indicated by the corresponding "
            "elements of the argument's in_specs entry. Consider checking that in_specs are "
            "correct, and if so consider changing the mesh axis sizes or else padding the "
            f"input and adapting '{name}' appropriately."
        )


def check_outs(
    f: Callable[..., Any],
    out_paths: Sequence[tuple[Any, ...]],
    specs: Sequence[tuple[str, Any]],
    avals: Sequence[Any],
) -> None:
    """Each result has at least as many axes as its spec."""
    name = fun_name(f)
    failed = [
        (path, spec_path, s, a)
        for path, (spec_path, s), a in zip(out_paths, specs, avals, strict=True)
        if isinstance(s, PartitionSpec) and len(s) > len(a.shape)
    ]
    if not failed:
        return
    msgs = [
        f"* out_specs{spec_path} is {s} which has length {len(s)}, but "
        f"{name}(*args){keystr(path)} has shape {a.str_short(short_dtypes=False)}, which has "
        f"rank {len(a.shape)} (and {len(a.shape)} < {len(s)})"
        for path, spec_path, s, a in failed
    ]
    msg = (
        f"shard_map applied to the function '{name}' was given an out_specs entry which is "
        "too long to be compatible with the corresponding output value from the "
        f"function:\n\n{_bulleted(msgs)}\n\nEntries in out_specs must be of length no greater "
        "than the number of axes in the corresponding output value.\n\nEither revise the "
        f"spec to be shorter, or modify '{name}' so that its outputs have sufficient rank."
    )
    if any(not a.shape for *_, a in failed):
        msg += (
            "\n\nFor scalar values (rank 0), consider using an out_specs entry of `P()`, where "
            "`P = jax.sharding.PartitionSpec`. In particular, for rank 0 outputs which are not "
            "constant over the mesh, add at least one (singleton) axis to them so that they "
            "can be concatenated using out_specs."
        )
    raise ValueError(msg)


def check_out_vma(
    f: Callable[..., Any],
    mesh: Mesh | AbstractMesh,
    specs: Sequence[tuple[str, Any]],
    avals: Sequence[Any],
) -> None:
    """With `check_vma`: no result varies over a mesh axis its spec does not name (the spec
    promises the value is the same along it); JAX's error otherwise."""
    msgs = []
    for (spec_path, s), a in zip(specs, avals, strict=True):
        if not isinstance(s, PartitionSpec):
            continue
        named = spec_axis_names(s)
        unmentioned = [n for n in mesh.axis_names if n not in named]
        vma: frozenset[Any] = getattr(a, "vma", frozenset())
        if not any(n in vma for n in unmentioned if n not in mesh.manual_axes):
            continue
        if len(unmentioned) > 1:
            need = ",".join(str(n) for n in mesh.axis_names if n in named)
            got = ",".join(str(n) for n in mesh.axis_names if n in vma)
            diff = ",".join(str(n) for n in unmentioned if n in vma)
            msgs.append(
                f"* out_specs{spec_path} is {s} which implies that the corresponding output "
                f"value is only varying across mesh axes {{{need}}} and not {{{diff}}}, but it "
                f"was inferred to be possibly varying over {{{got}}}"
            )
        else:
            msgs.append(
                f"* out_specs{spec_path} is {s} which implies that the corresponding output "
                f"value is replicated across mesh axis '{unmentioned[0]}', but could not infer "
                "replication over any axes"
            )
    if not msgs:
        return
    raise ValueError(
        f"shard_map applied to the function '{fun_name(f)}' was given out_specs which "
        "require replication which can't be statically inferred given the mesh:\n\n"
        f"The mesh given has shape {tuple(mesh.shape.values())} with corresponding axis "
        f"names {mesh.axis_names}.\n\n{_bulleted(msgs)}\n\nCheck if these output values "
        "are meant to be replicated over those mesh axes. If not, consider revising the "
        "corresponding out_specs entries. If so, consider disabling the check by passing the "
        "check_vma=False argument to `jax.shard_map`."
    )


def inferred_spec(manual: frozenset[Any], spec: PartitionSpec) -> PartitionSpec:
    """The in_spec `shard_map` takes, when none is given, from an argument typed as split by
    `spec`: the manual axes of each entry. An entry whose manual axes do not lead it (a
    non-manual axis splits the dimension first) cannot be a manual split: JAX's error."""
    out: list[Any] = []
    for entry in spec.partitions:
        if isinstance(entry, tuple):
            kept = [n if n in manual else None for n in entry]
            while kept and kept[-1] is None:
                kept.pop()
            if None in kept:
                raise ValueError(f"Invalid spec: {spec}")
            out.append(tuple(kept) or None)
        else:
            out.append(entry if entry in manual else None)
    return PartitionSpec(*out, unreduced=spec.unreduced, reduced=spec.reduced)


def check_specs_match_types(
    mesh: Mesh | AbstractMesh,
    manual: frozenset[Any],
    specs: Sequence[Any],
    avals: Sequence[Any],
) -> None:
    """Over a mesh all manual and Explicit, each argument's type already says how it is split:
    an in_spec saying otherwise would need a reshard, which JAX refuses to do implicitly."""
    if manual != frozenset(mesh.axis_names) or any(
        mesh._name_to_type[n] is not AxisType.Explicit for n in manual
    ):
        return
    for s, a in zip(specs, avals, strict=True):
        if not isinstance(s, PartitionSpec):
            continue
        s = s.update(partitions=(*s.partitions, *[None] * (a.ndim - len(s.partitions))))
        if a.sharding.spec != s:
            raise ValueError(
                f"in_specs passed to shard_map: {s} does not match the specs of the input: "
                f"{a.sharding.spec} for arg: {a}. `in_specs` is an optional argument so you "
                "can omit specifying it and shard_map will infer the in_specs from the "
                "arguments. If you want to reshard your inputs, you can use `jax.reshard` on "
                "the arguments and then pass those args to shard_map."
            )


__all__ = [
    "broadcast_specs",
    "check_args",
    "check_out_vma",
    "check_outs",
    "check_specs",
    "check_specs_match_types",
    "fun_name",
    "inferred_spec",
    "is_spec",
]
