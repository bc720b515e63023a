"""The trace machinery: the current trace, `bind`, tracers and values, evaluation.

`_tracing` (traces, tracers, `bind`, the eager evaluation trace and its errors), `_values`
(`typeof` and value types), `_evaluate` (the NumPy reference evaluator and `eval_jaxpr`),
`_vma` (varying manual axes in types), `_typecheck` (the jaxpr type checker),
`_mutable_checks` (the aliasing rules of mutable values), `_error_types` (`jax.errors` types
nothing raises yet), `_user_primitive` (primitives defined through JAX's public `def_impl` /
`def_abstract_eval` API).
"""

from lamina_core.trace._array_methods import (
    aval_method as aval_method,
)
from lamina_core.trace._array_methods import (
    aval_property as aval_property,
)
from lamina_core.trace._axis_env import (
    AxisData as AxisData,
)
from lamina_core.trace._axis_env import (
    axis_frame as axis_frame,
)
from lamina_core.trace._axis_env import (
    bound_axes as bound_axes,
)
from lamina_core.trace._axis_env import (
    bound_axis_names as bound_axis_names,
)
from lamina_core.trace._axis_env import (
    extend_axis_env as extend_axis_env,
)
from lamina_core.trace._error_types import (
    InconclusiveDimensionOperation as InconclusiveDimensionOperation,
)
from lamina_core.trace._error_types import (
    KeyReuseError as KeyReuseError,
)
from lamina_core.trace._evaluate import (
    eval_jaxpr as eval_jaxpr,
)
from lamina_core.trace._evaluate import (
    install_high_impl as install_high_impl,
)
from lamina_core.trace._evaluate import (
    jaxpr_as_fun as jaxpr_as_fun,
)
from lamina_core.trace._evaluate import (
    reference_impl as reference_impl,
)
from lamina_core.trace._leaks import (
    check_no_leaks as check_no_leaks,
)
from lamina_core.trace._leaks import (
    check_tracer_leaks as check_tracer_leaks,
)
from lamina_core.trace._leaks import (
    checking_leaks as checking_leaks,
)
from lamina_core.trace._mutable_checks import (
    check_no_aliased_args as check_no_aliased_args,
)
from lamina_core.trace._mutable_checks import (
    check_no_returned as check_no_returned,
)
from lamina_core.trace._mutable_checks import (
    check_not_closed_over_and_passed as check_not_closed_over_and_passed,
)
from lamina_core.trace._tracebacks import (
    UnfilteredStackTrace as UnfilteredStackTrace,
)
from lamina_core.trace._tracebacks import (
    api_boundary as api_boundary,
)
from lamina_core.trace._tracebacks import (
    traceback_filtering as traceback_filtering,
)
from lamina_core.trace._tracing import (
    EVAL_TRACE as EVAL_TRACE,
)
from lamina_core.trace._tracing import (
    ArrayMethods as ArrayMethods,
)
from lamina_core.trace._tracing import (
    ConcretizationTypeError as ConcretizationTypeError,
)
from lamina_core.trace._tracing import (
    EagerImpl as EagerImpl,
)
from lamina_core.trace._tracing import (
    EvalTrace as EvalTrace,
)
from lamina_core.trace._tracing import (
    JAXIndexError as JAXIndexError,
)
from lamina_core.trace._tracing import (
    JAXTypeError as JAXTypeError,
)
from lamina_core.trace._tracing import (
    NotAnArrayArgument as NotAnArrayArgument,
)
from lamina_core.trace._tracing import (
    Trace as Trace,
)
from lamina_core.trace._tracing import (
    Tracer as Tracer,
)
from lamina_core.trace._tracing import (
    TracerArrayConversionError as TracerArrayConversionError,
)
from lamina_core.trace._tracing import (
    TracerBoolConversionError as TracerBoolConversionError,
)
from lamina_core.trace._tracing import (
    TracerIntegerConversionError as TracerIntegerConversionError,
)
from lamina_core.trace._tracing import (
    UnexpectedTracerError as UnexpectedTracerError,
)
from lamina_core.trace._tracing import (
    _current_trace as _current_trace,
)
from lamina_core.trace._tracing import (
    bind_with_trace as bind_with_trace,
)
from lamina_core.trace._tracing import (
    call_under as call_under,
)
from lamina_core.trace._tracing import (
    concrete_or_error as concrete_or_error,
)
from lamina_core.trace._tracing import (
    cur_qdd as cur_qdd,
)
from lamina_core.trace._tracing import (
    current_trace as current_trace,
)
from lamina_core.trace._tracing import (
    dispatched_at_top_level as dispatched_at_top_level,
)
from lamina_core.trace._tracing import (
    eager_value as eager_value,
)
from lamina_core.trace._tracing import (
    install_eager_impl as install_eager_impl,
)
from lamina_core.trace._tracing import (
    install_materializer as install_materializer,
)
from lamina_core.trace._tracing import (
    install_toplevel_dispatch as install_toplevel_dispatch,
)
from lamina_core.trace._tracing import (
    raise_escaped_tracer as raise_escaped_tracer,
)
from lamina_core.trace._tracing import (
    register_operand_type as register_operand_type,
)
from lamina_core.trace._tracing import (
    register_tracer_method as register_tracer_method,
)
from lamina_core.trace._tracing import (
    running_under as running_under,
)
from lamina_core.trace._tracing import (
    set_current_trace as set_current_trace,
)
from lamina_core.trace._tracing import (
    with_qdd as with_qdd,
)
from lamina_core.trace._typecheck import (
    JaxprTypeError as JaxprTypeError,
)
from lamina_core.trace._typecheck import (
    check_jaxpr as check_jaxpr,
)
from lamina_core.trace._typecheck import (
    sub_jaxpr_contexts as sub_jaxpr_contexts,
)
from lamina_core.trace._user_primitive import (
    UserPrimitive as UserPrimitive,
)
from lamina_core.trace._values import (
    ShapeDtypeStruct as ShapeDtypeStruct,
)
from lamina_core.trace._values import (
    by_reference_types as by_reference_types,
)
from lamina_core.trace._values import (
    canonical_value as canonical_value,
)
from lamina_core.trace._values import (
    is_concrete_value as is_concrete_value,
)
from lamina_core.trace._values import (
    is_hi_value as is_hi_value,
)
from lamina_core.trace._values import (
    is_registered_value as is_registered_value,
)
from lamina_core.trace._values import (
    register_hi_value_type as register_hi_value_type,
)
from lamina_core.trace._values import (
    register_value_type as register_value_type,
)
from lamina_core.trace._values import (
    shaped_abstractify as shaped_abstractify,
)
from lamina_core.trace._values import (
    to_numpy as to_numpy,
)
from lamina_core.trace._values import (
    typeof as typeof,
)
from lamina_core.trace._vma import (
    CHECKED_SCOPES as CHECKED_SCOPES,
)
from lamina_core.trace._vma import (
    check_vma_enabled as check_vma_enabled,
)
from lamina_core.trace._vma import (
    check_vma_scope as check_vma_scope,
)
from lamina_core.trace._vma import (
    collective_vma as collective_vma,
)
from lamina_core.trace._vma import (
    drop_vma as drop_vma,
)
from lamina_core.trace._vma import (
    insert_collective_pvary as insert_collective_pvary,
)
from lamina_core.trace._vma import (
    insert_pvary as insert_pvary,
)
from lamina_core.trace._vma import (
    keep_abstract_eval as keep_abstract_eval,
)
from lamina_core.trace._vma import (
    pvary as pvary,
)
from lamina_core.trace._vma import (
    pvary_like as pvary_like,
)
from lamina_core.trace._vma import (
    pvary_p as pvary_p,
)
from lamina_core.trace._vma import (
    union_vma as union_vma,
)
from lamina_core.trace._vma import (
    vma_rules as vma_rules,
)
from lamina_core.trace._vma import (
    with_vma as with_vma,
)
