"""The interpreters: staging (`make_jaxpr`), forward mode, linearization, partial evaluation,
transposition, and dead-code elimination; evaluation is the bottom trace of `tracing`.

Each interpreter owns its trace type and its rule table. Rules for a primitive are registered
where the primitive is defined (the lax modules, call and control-flow primitives, upper
layers); an interpreter never names a primitive other than its own (`add_any`).
"""

from lamina_core.interpreters import helpers as _helpers  # noqa: F401  (registers add_any)
from lamina_core.interpreters.batching import (
    AxisData as AxisData,
)
from lamina_core.interpreters.batching import (
    BatchDim as BatchDim,
)
from lamina_core.interpreters.batching import (
    BatchRule as BatchRule,
)
from lamina_core.interpreters.batching import (
    BatchTrace as BatchTrace,
)
from lamina_core.interpreters.batching import (
    MappingSpec as MappingSpec,
)
from lamina_core.interpreters.batching import (
    SpecMatchError as SpecMatchError,
)
from lamina_core.interpreters.batching import (
    axis_frame as axis_frame,
)
from lamina_core.interpreters.batching import (
    batch_flat as batch_flat,
)
from lamina_core.interpreters.batching import (
    batching_rules as batching_rules,
)
from lamina_core.interpreters.batching import (
    bound_axis_names as bound_axis_names,
)
from lamina_core.interpreters.batching import (
    extend_axis_env as extend_axis_env,
)
from lamina_core.interpreters.batching import (
    install_match_axis as install_match_axis,
)
from lamina_core.interpreters.batching import (
    install_sum_axis as install_sum_axis,
)
from lamina_core.interpreters.batching import (
    match_axis as match_axis,
)
from lamina_core.interpreters.batching import (
    needs_axis_rule as needs_axis_rule,
)
from lamina_core.interpreters.batching import (
    sum_axis as sum_axis,
)
from lamina_core.interpreters.dce import (
    DceRule as DceRule,
)
from lamina_core.interpreters.dce import (
    dce_jaxpr as dce_jaxpr,
)
from lamina_core.interpreters.dce import (
    dce_jaxpr_keeping as dce_jaxpr_keeping,
)
from lamina_core.interpreters.dce import (
    dce_rules as dce_rules,
)
from lamina_core.interpreters.helpers import (
    defbilinear as defbilinear,
)
from lamina_core.interpreters.helpers import (
    deflinear as deflinear,
)
from lamina_core.interpreters.jvp import (
    JVPRule as JVPRule,
)
from lamina_core.interpreters.jvp import (
    JVPTrace as JVPTrace,
)
from lamina_core.interpreters.jvp import (
    JVPTracer as JVPTracer,
)
from lamina_core.interpreters.jvp import (
    defjvp as defjvp,
)
from lamina_core.interpreters.jvp import (
    defjvp2 as defjvp2,
)
from lamina_core.interpreters.jvp import (
    defjvp_zero as defjvp_zero,
)
from lamina_core.interpreters.jvp import (
    differentiated_always as differentiated_always,
)
from lamina_core.interpreters.jvp import (
    jvp_flat as jvp_flat,
)
from lamina_core.interpreters.jvp import jvp_rules
from lamina_core.interpreters.jvp import (
    linear_jvp as linear_jvp,
)
from lamina_core.interpreters.jvp import (
    not_differentiable as not_differentiable,
)
from lamina_core.interpreters.linearize import (
    LinearizeTrace as LinearizeTrace,
)
from lamina_core.interpreters.linearize import (
    LinearizeTracer as LinearizeTracer,
)
from lamina_core.interpreters.linearize import (
    TangentTrace as TangentTrace,
)
from lamina_core.interpreters.linearize import linearization_rules
from lamina_core.interpreters.linearize import (
    linearize_flat as linearize_flat,
)
from lamina_core.interpreters.linearize import (
    linearizing_for_vjp as linearizing_for_vjp,
)
from lamina_core.interpreters.linearize import (
    prune_residuals as prune_residuals,
)
from lamina_core.interpreters.linearize import (
    tangents_named_under_whole_stack as tangents_named_under_whole_stack,
)
from lamina_core.interpreters.partial_eval import (
    SplitTrace as SplitTrace,
)
from lamina_core.interpreters.partial_eval import (
    known_partial_eval_rules as known_partial_eval_rules,
)
from lamina_core.interpreters.partial_eval import (
    partial_eval_jaxpr_nounits as partial_eval_jaxpr_nounits,
)
from lamina_core.interpreters.partial_eval import (
    partial_eval_kept_effects as partial_eval_kept_effects,
)
from lamina_core.interpreters.partial_eval import (
    partial_eval_rules as partial_eval_rules,
)
from lamina_core.interpreters.partial_eval import (
    residuals_in_jax_order as residuals_in_jax_order,
)
from lamina_core.interpreters.partial_eval_custom import (
    Offloadable as Offloadable,
)
from lamina_core.interpreters.partial_eval_custom import (
    PartialEvalCustomResult as PartialEvalCustomResult,
)
from lamina_core.interpreters.partial_eval_custom import (
    Policy as Policy,
)
from lamina_core.interpreters.partial_eval_custom import (
    Recompute as Recompute,
)
from lamina_core.interpreters.partial_eval_custom import (
    RecomputeType as RecomputeType,
)
from lamina_core.interpreters.partial_eval_custom import (
    RematCase as RematCase,
)
from lamina_core.interpreters.partial_eval_custom import (
    Saveable as Saveable,
)
from lamina_core.interpreters.partial_eval_custom import (
    call_partial_eval_custom_rule as call_partial_eval_custom_rule,
)
from lamina_core.interpreters.partial_eval_custom import (
    closed_call_partial_eval_custom_rule as closed_call_partial_eval_custom_rule,
)
from lamina_core.interpreters.partial_eval_custom import (
    ensure_enum as ensure_enum,
)
from lamina_core.interpreters.partial_eval_custom import (
    partial_eval_jaxpr_custom as partial_eval_jaxpr_custom,
)
from lamina_core.interpreters.partial_eval_custom import (
    partial_eval_jaxpr_custom_rules as partial_eval_jaxpr_custom_rules,
)
from lamina_core.interpreters.staging import (
    StagingTrace as StagingTrace,
)
from lamina_core.interpreters.staging import (
    StagingTracer as StagingTracer,
)
from lamina_core.interpreters.staging import (
    custom_staging_rules as custom_staging_rules,
)
from lamina_core.interpreters.staging import (
    ensure_compile_time_eval as ensure_compile_time_eval,
)
from lamina_core.interpreters.staging import (
    trace_to_jaxpr as trace_to_jaxpr,
)
from lamina_core.interpreters.staging import (
    with_input_mesh as with_input_mesh,
)
from lamina_core.interpreters.transpose import (
    FancyTransposeRule as FancyTransposeRule,
)
from lamina_core.interpreters.transpose import (
    RefAccum as RefAccum,
)
from lamina_core.interpreters.transpose import (
    UndefinedPrimal as UndefinedPrimal,
)
from lamina_core.interpreters.transpose import (
    ValAccum as ValAccum,
)
from lamina_core.interpreters.transpose import (
    backward_pass as backward_pass,
)
from lamina_core.interpreters.transpose import (
    backward_pass_accums as backward_pass_accums,
)
from lamina_core.interpreters.transpose import (
    cotangents_per_arg as cotangents_per_arg,
)
from lamina_core.interpreters.transpose import (
    fancy_transpose_rules as fancy_transpose_rules,
)
from lamina_core.interpreters.transpose import (
    is_accum as is_accum,
)
from lamina_core.interpreters.transpose import (
    is_undefined as is_undefined,
)
from lamina_core.interpreters.transpose import (
    ref_transposition as ref_transposition,
)
from lamina_core.interpreters.transpose import (
    transpose_preparers as transpose_preparers,
)
from lamina_core.interpreters.transpose import transpose_rules
from lamina_core.interpreters.vmappables import (
    install_make_iota as install_make_iota,
)
from lamina_core.interpreters.vmappables import (
    is_vmappable as is_vmappable,
)
from lamina_core.interpreters.vmappables import (
    register_vmappable as register_vmappable,
)
from lamina_core.interpreters.vmappables import (
    spec_types as spec_types,
)
from lamina_core.interpreters.vmappables import (
    unregister_vmappable as unregister_vmappable,
)
from lamina_core.interpreters.zeros import Zero, add_any_p, instantiate_zeros
from lamina_core.interpreters.zeros import (
    add_tangents as add_tangents,
)
from lamina_core.interpreters.zeros import (
    empty_like_aval as empty_like_aval,
)
from lamina_core.interpreters.zeros import (
    is_float0 as is_float0,
)
from lamina_core.interpreters.zeros import (
    register_empty_maker as register_empty_maker,
)
from lamina_core.interpreters.zeros import (
    register_zeros_maker as register_zeros_maker,
)
from lamina_core.interpreters.zeros import (
    zero_of as zero_of,
)
from lamina_core.interpreters.zeros import (
    zeros_like_aval as zeros_like_aval,
)

__all__ = [
    "Zero",
    "add_any_p",
    "instantiate_zeros",
    "jvp_rules",
    "linearization_rules",
    "transpose_rules",
]
