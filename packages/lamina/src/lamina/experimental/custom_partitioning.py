"""`jax.experimental.custom_partitioning`: a function with its own SPMD partitioning.

`custom_partitioning(f)` stages `f` into one `custom_partitioning` equation whose `call` is
`f`'s jaxpr, carrying the callbacks given to `def_partition`. Evaluated, or lowered for one
device, the equation is `f` itself, as in JAX. For a module over several devices JAX lowers a
custom call that XLA's SPMD partitioner hands back to the callbacks; Lamina has no such hook
into the partitioner and says so (`NotImplementedError`). As in JAX, the primitive has no
differentiation or batching rule: wrap it in `custom_vjp`/`custom_vmap` for those.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina import api_util, tree_util
from lamina.errors import UnexpectedTracerError
from lamina.experimental._sdy_sharding_rule import BATCHING as BATCHING
from lamina.experimental._sdy_sharding_rule import ArrayMapping as ArrayMapping
from lamina.experimental._sdy_sharding_rule import CompoundFactor as CompoundFactor
from lamina.experimental._sdy_sharding_rule import SdyShardingRule as SdyShardingRule
from lamina.experimental._sdy_sharding_rule import str_to_sdy_sharding_rule
from lamina.extend import linear_util as lu
from lamina.extend.core import ClosedJaxpr, Primitive, jaxpr_as_fun
from lamina.interpreters import mlir
from lamina.interpreters.partial_eval import trace_to_jaxpr_dynamic
from lamina_core.trace import Tracer, typeof

__all__ = [
    "BATCHING",
    "ArrayMapping",
    "CompoundFactor",
    "SdyShardingRule",
    "custom_partitioning",
    "custom_partitioning_p",
]

custom_partitioning_p = Primitive("custom_partitioning")
custom_partitioning_p.multiple_results = True


def _abstract_eval(*avals: Any, call: ClosedJaxpr, **params: Any) -> list[Any]:
    del avals, params
    return list(call.out_avals)


def _impl(*args: Any, call: ClosedJaxpr, **params: Any) -> list[Any]:
    del params
    return list(jaxpr_as_fun(call)(*args))


custom_partitioning_p.def_abstract_eval(_abstract_eval)
custom_partitioning_p.def_impl(_impl)


def _lowering(ctx: mlir.LoweringRuleContext, *values: Any, call: ClosedJaxpr, **params: Any) -> Any:
    mesh = ctx.module_context.mesh
    if mesh is not None and mesh.size > 1:
        raise NotImplementedError(
            "custom_partitioning over several devices: Lamina cannot hand the partition "
            "callbacks to XLA's SPMD partitioner; it lowers custom_partitioning for one "
            "device only"
        )
    del params
    return mlir.lower_fun(jaxpr_as_fun(call), multiple_results=True)(ctx, *values)


mlir.register_lowering(custom_partitioning_p, _lowering)


def _resolve_kwargs(fun: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    # The call binds positionally, so keyword arguments are bound to positions first.
    import inspect

    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError("keyword arguments could not be resolved to positions")
    return bound.args


def _check_for_tracers(x: Any) -> None:
    if any(isinstance(leaf, Tracer) for leaf in tree_util.tree_leaves(x)):
        raise UnexpectedTracerError(
            "Found a JAX Tracer object passed as an argument to acustom_partitioning "
            "function in a position indicated as static bystatic_argnums. "
        )


class custom_partitioning:
    """A function whose SPMD partitioning its author provides (`def_partition`)."""

    def __init__(self, fun: Callable[..., Any], static_argnums: Sequence[int] = ()) -> None:
        self.fun = fun
        self.static_argnums = tuple(static_argnums)
        self.partition: Callable[..., Any] | None = None
        self.propagate_user_sharding: Callable[..., Any] | None = None
        self.infer_sharding_from_operands: Callable[..., Any] | None = None
        self.sharding_rule: Any = None
        self.decode_shardings = True
        self.__wrapped__ = fun
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            if hasattr(fun, attr):
                setattr(self, attr, getattr(fun, attr))

    def def_partition(
        self,
        partition: Callable[..., Any],
        infer_sharding_from_operands: Callable[..., Any] | None = None,
        propagate_user_sharding: Callable[..., Any] | None = None,
        decode_shardings: bool = True,
        sharding_rule: Any = None,
        *,
        reduction_factors: tuple[str, ...] = (),
        need_replication_factors: tuple[str, ...] = (),
        permutation_factors: tuple[str, ...] = (),
        **factor_sizes: int,
    ) -> Callable[..., Any]:
        """Set the partitioning callbacks and the Shardy rule (an `SdyShardingRule`, an
        einsum-like string, or a callable making either); returns `partition`."""
        self.partition = partition
        self.propagate_user_sharding = propagate_user_sharding
        self.infer_sharding_from_operands = infer_sharding_from_operands
        self.decode_shardings = decode_shardings
        if (
            sharding_rule is None
            or callable(sharding_rule)
            or isinstance(sharding_rule, SdyShardingRule)
        ):
            # Special factors and sizes only go with a rule string.
            kinds = {
                "reduction_factors": reduction_factors,
                "need_replication_factors": need_replication_factors,
                "permutation_factors": permutation_factors,
            }
            extra = {**factor_sizes, **{k: v for k, v in kinds.items() if v}}
            if extra:
                raise ValueError(f"Unknown keyword arguments: {extra}")
            self.sharding_rule = sharding_rule
        else:
            self.sharding_rule = str_to_sdy_sharding_rule(
                sharding_rule,
                reduction_factors=reduction_factors,
                need_replication_factors=need_replication_factors,
                permutation_factors=permutation_factors,
                **factor_sizes,
            )
        return partition

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = _resolve_kwargs(self.fun, args, kwargs)
        debug = api_util.debug_info(
            "custom_partitioning", self.fun, args, {}, static_argnums=self.static_argnums
        )
        f: lu.WrappedFun = lu.wrap_init(self.fun, debug_info=debug)
        static_args: tuple[Any, ...] = ()
        dyn_args = tuple(args)
        if self.static_argnums:
            static = set(self.static_argnums)
            dyn_nums = [i for i in range(len(args)) if i not in static]
            f, dyn_args = api_util.argnums_partial(
                f, dyn_nums, args, require_static_args_hashable=False
            )
            static_args = tuple(args[i] for i in self.static_argnums)
            _check_for_tracers(static_args)
        args_flat, in_tree = tree_util.tree_flatten(dyn_args)
        flat_fun, out_tree = api_util.flatten_fun_nokwargs(f, in_tree)
        jaxpr, _, consts = trace_to_jaxpr_dynamic(flat_fun, [typeof(x) for x in args_flat])
        # Lamina uses the Shardy partitioner's rule, never the GSPMD callbacks (as JAX with
        # `jax_use_shardy_partitioner`, its default).
        if self.sharding_rule is None and (
            self.propagate_user_sharding is not None
            or self.infer_sharding_from_operands is not None
        ):
            raise NotImplementedError(
                "Shardy is used, but sharding propagation callbacks instead of sharding_rule "
                "are provided. Need to provide sharding_rule to migrate to Shardy."
            )
        out_flat = custom_partitioning_p.bind(
            *args_flat,
            call=ClosedJaxpr(jaxpr, consts),
            partition=self.partition,
            propagate_user_sharding=None,
            infer_sharding_from_operands=None,
            decode_shardings=self.decode_shardings,
            sharding_rule=self.sharding_rule,
            in_tree=in_tree,
            out_tree=out_tree(),
            static_args=static_args,
        )
        return tree_util.tree_unflatten(out_tree(), out_flat)
