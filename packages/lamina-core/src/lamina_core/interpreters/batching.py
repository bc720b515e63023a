"""Batching: the vmap interpreter and its rule table.

A `BatchTrace` carries each value with the position of its mapped axis (`batch_dim`), or with
`None` when the value is the same for every element of the batch. A primitive whose operands
are all unmapped is applied by the parent trace alone; otherwise its rule from
`batching_rules` runs under the parent on the full (batched) values and says where the mapped
axis of each result is. Rules keep the mapped axis where it lands instead of moving it to the
front, as JAX's do, so transformed jaxprs print as JAX's.

The per-example type of a batched value comes from the aval protocol (`dec_rank`), so upper
layers' types batch without this module naming them. The rules themselves sit beside the
primitives (`lax/_*_batching.py`); this module names no primitive. The named axes a batched
function binds live in `trace._axis_env` (re-exported here).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from lamina_core.interpreters import vmappables
from lamina_core.ir import AbstractValue, Primitive, RuleTable
from lamina_core.trace import (
    AxisData,
    Trace,
    Tracer,
    axis_frame,
    bind_with_trace,
    bound_axis_names,
    check_no_leaks,
    checking_leaks,
    current_trace,
    extend_axis_env,
    running_under,
    set_current_trace,
    typeof,
)


class MappingSpec:
    """How a value of a hi type is mapped by `vmap`, where an array's mapped axis is an int.

    Hi types define subclasses (hashable and comparable, e.g. frozen dataclasses) and answer
    `dec_rank(size, spec)`/`inc_rank(size, spec)`; users pass instances in `in_axes` and
    `out_axes`. A spec never tells `vmap` the axis size: that comes from an array argument or
    `axis_size`.
    """

    __slots__ = ()


def is_mapping_spec(dim: Any) -> bool:
    return isinstance(dim, MappingSpec)


BatchDim: TypeAlias = int | None
"""Where a value's mapped axis is; `None`: the value is not mapped (the same for every element).
A hi-typed value's is a `MappingSpec` instead: only its own primitives' rules see it."""

not_mapped: None = None

BatchRule: TypeAlias = Callable[..., tuple[Any, Any]]
"""`rule(axis_data, vals, dims, **params) -> (out, out_dim)` (lists for multiple results)."""

batching_rules: RuleTable[BatchRule] = RuleTable("batching (vmap)")


class BatchTracer(Tracer):
    """A value of a batched computation: the full value and where its mapped axis is."""

    __slots__ = ("_aval", "batch_dim", "val")
    jax_name = "BatchTracer"

    _trace: BatchTrace

    def short_repr(self) -> str:
        return f"VmapTracer(aval={self.aval}, batched={typeof(self.val)})"

    def __init__(self, trace: BatchTrace, val: Any, batch_dim: Any) -> None:
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim
        self._aval: AbstractValue | None = None

    @property
    def aval(self) -> AbstractValue:
        aval = self._aval
        if aval is None:  # made once: rules and checks ask for it many times
            aval = typeof(self.val).dec_rank(self._trace.axis_data.size, self.batch_dim)
            self._aval = aval
        return aval

    def where_created(self) -> str:
        return self.val.where_created() if isinstance(self.val, Tracer) else ""

    def _origin_msg(self) -> str:
        return self.val._origin_msg() if isinstance(self.val, Tracer) else ""


class BatchTrace(Trace):
    """Batching inside `parent` over one mapped axis. Identity is intended.

    With `shared`, the trace also owns the tracers of any other `BatchTrace` of the same
    `axis_data` object (the same `vmap` call): a custom rule batched by that vmap runs in a
    trace of its own, later and elsewhere, but may close over the vmap's values (JAX's traces
    share the vmap's tag for this).
    """

    __slots__ = ("axis_data", "shared")

    def __init__(self, parent: Trace, axis_data: AxisData, shared: bool = False) -> None:
        super().__init__(parent)
        self.axis_data = axis_data
        self.shared = shared

    def describe(self) -> str:
        return "BatchTrace"

    def stands_for(self, other: Trace) -> bool:
        return self.shared and isinstance(other, BatchTrace) and other.axis_data is self.axis_data

    def cur_qdd(self, x: Any) -> Any:
        val, _ = self.to_batch_info(x)  # a mutable value's state is its value's
        assert self.parent is not None
        return self.parent.cur_qdd(val)

    def to_batch_info(self, x: Any) -> tuple[Any, BatchDim]:
        if isinstance(x, BatchTracer) and (
            x._trace is self or (self.shared and x._trace.axis_data is self.axis_data)
        ):
            return x.val, x.batch_dim
        return x, None

    def wrap(self, val: Any, dim: BatchDim) -> Any:
        return val if dim is None else BatchTracer(self, val, dim)

    def process_primitive(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        vals: list[Any] = []
        dims: list[BatchDim] = []
        for x in args:
            v, d = self.to_batch_info(x)
            vals.append(v)
            dims.append(d)
        parent = self.parent
        assert parent is not None
        rule = batching_rules.get(prim)
        if rule is None:
            if all(d is None for d in dims):
                return bind_with_trace(parent, prim, vals, params)
            raise NotImplementedError(f"Batching rule for '{prim.name}' not implemented")
        if all(d is None for d in dims) and prim not in needs_axis_rule:
            return bind_with_trace(parent, prim, vals, params)
        with running_under(parent):
            try:
                out, out_dims = rule(self.axis_data, vals, dims, **params)
            except (
                TypeError,
                ValueError,
                AttributeError,
                AssertionError,
                NotImplementedError,
            ) as err:
                spec = next((d for d in dims if is_mapping_spec(d)), None)
                if spec is None:
                    raise
                raise NotImplementedError(
                    f"vmap of '{prim.name}' with a hi-typed operand mapped by {spec!r} is not "
                    "supported: its batching rule handles array axes only"
                ) from err
        if prim.multiple_results:
            return [self.wrap(v, d) for v, d in zip(out, out_dims, strict=True)]
        return self.wrap(out, out_dims)


needs_axis_rule: set[Primitive] = set()
"""Primitives whose batching rule runs even when no operand is mapped: collectives over a
named axis (`psum(1, 'i')` is the axis size) and `axis_index`."""


# --- running a function batched ------------------------------------------------------------


class SpecMatchError(Exception):
    """An output's mapped axis cannot be placed where `out_axes` asks (`leaf`: which output)."""

    def __init__(self, leaf: int, src: BatchDim, dst: Any) -> None:
        super().__init__(leaf, src, dst)
        self.leaf, self.src, self.dst = leaf, src, dst


MatchAxis: TypeAlias = Callable[[AxisData, BatchDim, Any, Any], Any]
"""`match(axis_data, src, dst, value)`: `value` with its mapped axis moved from `src` to `dst`
(broadcast when `src` is None). The lax layer installs it (it needs `transpose` and
`broadcast_in_dim`)."""

_match_axis: MatchAxis | None = None


def install_match_axis(match: MatchAxis) -> None:
    global _match_axis
    _match_axis = match


def match_axis(axis_data: AxisData, src: BatchDim, dst: Any, x: Any) -> Any:
    assert _match_axis is not None, "import lamina_core.lax to install the batching helpers"
    return _match_axis(axis_data, src, dst, x)


SumAxis: TypeAlias = Callable[[Any, int], Any]
"""`sum_axis(x, axis)`: `x` summed over its axis `axis` (a `reduce_sum`, as JAX's rules
emit). The lax layer installs it: a custom rule batched by vmap sums the cotangent of an
unmapped argument over the mapped axis."""

_sum_axis: SumAxis | None = None


def install_sum_axis(sum_axis: SumAxis) -> None:
    global _sum_axis
    _sum_axis = sum_axis


def sum_axis(x: Any, axis: int) -> Any:
    assert _sum_axis is not None, "import lamina_core.lax to install the batching helpers"
    return _sum_axis(x, axis)


def batch_flat(
    fun: Callable[..., Sequence[Any]],
    axis_data: AxisData,
    in_vals: Sequence[Any],
    in_dims: Sequence[BatchDim],
    out_dims: Sequence[Any] | Callable[[int], Sequence[Any]] | None = None,
    *,
    sum_match: bool = False,
) -> tuple[list[Any], list[BatchDim]]:
    """Run `fun` (flat in, flat out) once per element of the mapped axis, as one program.

    `in_dims[i]` is where argument i's mapped axis is (`None`: not mapped). `out_dims` says
    where each output's mapped axis must end up (`None`: unmapped, an error for a mapped
    output); `None` keeps whatever the rules produced. A callable gets the number of outputs.
    With `sum_match`, a mapped output asked to be unmapped is summed over its mapped axis.
    Returns the outputs and where their mapped axes are.
    """
    trace = BatchTrace(current_trace(), axis_data)
    get_idx = functools.cache(lambda: trace.wrap(vmappables.make_iota(axis_data.size), 0))
    args = [
        vmappables.to_elt(trace.wrap, get_idx, v, d) for v, d in zip(in_vals, in_dims, strict=True)
    ]
    with set_current_trace(trace), extend_axis_env(axis_data):
        outs = fun(*args)
        results, dests = _unbatched(trace, axis_data, outs, out_dims, sum_match)
    if checking_leaks():
        del args, outs  # (the loop over outputs is a function of its own: no tracer is left
        check_no_leaks(trace, "BatchTrace")  # in a local of this frame for the check to see)
    return results, dests


def _unbatched(
    trace: BatchTrace,
    axis_data: AxisData,
    outs: Sequence[Any],
    out_dims: Sequence[Any] | Callable[[int], Sequence[Any]] | None,
    sum_match: bool,
) -> tuple[list[Any], list[BatchDim]]:
    """The batched function's outputs as values of the trace below, with where their mapped
    axes are (`out_dims`, or wherever the rules left them)."""
    if out_dims is None:
        infos = [trace.to_batch_info(o) for o in outs]
        return [v for v, _ in infos], [d for _, d in infos]
    dests = list(out_dims(len(outs)) if callable(out_dims) else out_dims)
    results = []
    for i, (out, dst) in enumerate(zip(outs, dests, strict=True)):
        match = functools.partial(_match_output, trace, i, sum_match)
        results.append(vmappables.from_elt(match, axis_data.size, out, dst))
    return results, dests


def _match_output(trace: BatchTrace, i: int, sum_match: bool, size: Any, out: Any, dst: Any) -> Any:
    """Output `i` of a batched function with its mapped axis moved to `dst` (summed away when
    `dst` is None and `sum_match`)."""
    v, d = trace.to_batch_info(out)
    if d == dst:
        return v
    if dst is None and sum_match and type(d) is int:
        with running_under(trace.parent or current_trace()):
            return sum_axis(v, d)
    if dst is None or is_mapping_spec(d) or is_mapping_spec(dst):
        # A hi type's values move between specs only through its own rules.
        raise SpecMatchError(i, d, dst)
    with running_under(trace.parent or current_trace()):
        return match_axis(trace.axis_data, d, dst, v)


__all__ = [
    "AxisData",
    "BatchDim",
    "BatchRule",
    "BatchTrace",
    "BatchTracer",
    "MappingSpec",
    "SpecMatchError",
    "axis_frame",
    "batch_flat",
    "batching_rules",
    "bound_axis_names",
    "extend_axis_env",
    "install_match_axis",
    "install_sum_axis",
    "match_axis",
    "needs_axis_rule",
    "not_mapped",
    "sum_axis",
]
