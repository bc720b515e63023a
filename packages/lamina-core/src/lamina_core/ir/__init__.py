"""The IR: what a traced program is made of, with no tracing machinery.

dtypes and promotion (`dtypes`, `_promotion`, `_dtype_queries`), abstract values and the aval
protocol (`_avals`), meshes and partition specs as types (`_mesh`, `_partition_spec`) with the
sharding rules of types over Explicit axes (`_explicit_sharding`), jaxprs (`_jaxpr`: `Var`,
`Literal`, `Jaxpr`, `ClosedJaxpr`, equations) and effects (`_effects`), typed Python scalars
(`_literals`), float0's host arrays (`_host_arrays`), `Primitive` and `RuleTable`
(`_primitive`) with the core rule tables (`_rules`), source info and name scopes
(`_source_info`, `_named_scopes`), and the printer
(`_pp`, the document combinators; `_pretty`, jaxprs printed as JAX prints them), and that
text read back: `parse` (`_jaxpr_io`, over the tokens of `_jaxpr_lex`, with the
per-primitive `param_decoders` and value and scope registries of `_jaxpr_decoders`; types
in `_jaxpr_types`, param values' bracketed forms in `_jaxpr_values`, equations printed in
forms of their own in `_jaxpr_forms`), `elided_constants` (`_jaxpr_elided`),
and the JSON form over that text, `to_json`/`from_json` (`_jaxpr_json`).
"""

from lamina_core.ir import _pp
from lamina_core.ir import _pretty as _pretty  # installs the printer into Jaxpr's __str__
from lamina_core.ir._avals import (
    MESHES_SEEN as MESHES_SEEN,
)
from lamina_core.ir._avals import (
    AbstractValue as AbstractValue,
)
from lamina_core.ir._avals import (
    ShapedArray as ShapedArray,
)
from lamina_core.ir._avals import (
    common_mesh as common_mesh,
)
from lamina_core.ir._avals import (
    explicit_spec as explicit_spec,
)
from lamina_core.ir._avals import (
    physical_aval as physical_aval,
)
from lamina_core.ir._avals import (
    types_match as types_match,
)
from lamina_core.ir._dim_expr import (
    DimExpr as DimExpr,
)
from lamina_core.ir._dim_expr import (
    is_symbolic_dim as is_symbolic_dim,
)
from lamina_core.ir._dim_expr import (
    set_dimension_as_value as set_dimension_as_value,
)
from lamina_core.ir._dim_parse import (
    max_dim as max_dim,
)
from lamina_core.ir._dim_parse import (
    min_dim as min_dim,
)
from lamina_core.ir._dim_parse import (
    symbolic_shape as symbolic_shape,
)
from lamina_core.ir._dim_scope import (
    InconclusiveDimensionOperation as InconclusiveDimensionOperation,
)
from lamina_core.ir._dim_scope import (
    SymbolicScope as SymbolicScope,
)
from lamina_core.ir._dtype_queries import (
    itemsize_bits as itemsize_bits,
)
from lamina_core.ir._dtype_queries import (
    scalar_type_of as scalar_type_of,
)
from lamina_core.ir._effects import (
    Effect as Effect,
)
from lamina_core.ir._effects import (
    Effects as Effects,
)
from lamina_core.ir._effects import (
    KindEffect as KindEffect,
)
from lamina_core.ir._effects import (
    no_effects as no_effects,
)
from lamina_core.ir._explicit_sharding import (
    ShardingTypeError as ShardingTypeError,
)
from lamina_core.ir._explicit_sharding import (
    Spec as Spec,
)
from lamina_core.ir._explicit_sharding import (
    asked_spec as asked_spec,
)
from lamina_core.ir._explicit_sharding import (
    broadcast_sharding as broadcast_sharding,
)
from lamina_core.ir._explicit_sharding import (
    context_mesh_primitives as context_mesh_primitives,
)
from lamina_core.ir._explicit_sharding import (
    elementwise_rule as elementwise_rule,
)
from lamina_core.ir._explicit_sharding import (
    explicit_result as explicit_result,
)
from lamina_core.ir._explicit_sharding import (
    sharding_rules as sharding_rules,
)
from lamina_core.ir._explicit_sharding import (
    spec_of as spec_of,
)
from lamina_core.ir._host_arrays import (
    TypedNdArray as TypedNdArray,
)
from lamina_core.ir._host_arrays import (
    float0_zeros as float0_zeros,
)
from lamina_core.ir._jaxpr import (
    Atom as Atom,
)
from lamina_core.ir._jaxpr import (
    ClosedJaxpr as ClosedJaxpr,
)
from lamina_core.ir._jaxpr import (
    DebugInfo as DebugInfo,
)
from lamina_core.ir._jaxpr import (
    DropVar as DropVar,
)
from lamina_core.ir._jaxpr import (
    Jaxpr as Jaxpr,
)
from lamina_core.ir._jaxpr import (
    JaxprEqn as JaxprEqn,
)
from lamina_core.ir._jaxpr import (
    Literal as Literal,
)
from lamina_core.ir._jaxpr import (
    Var as Var,
)
from lamina_core.ir._jaxpr import (
    jaxprs_in_params as jaxprs_in_params,
)
from lamina_core.ir._jaxpr_decoders import (
    ParamDecoder as ParamDecoder,
)
from lamina_core.ir._jaxpr_decoders import (
    ValueForm as ValueForm,
)
from lamina_core.ir._jaxpr_decoders import (
    defaults_decoder as defaults_decoder,
)
from lamina_core.ir._jaxpr_decoders import (
    hide_default_params as hide_default_params,
)
from lamina_core.ir._jaxpr_decoders import (
    install_result_types as install_result_types,
)
from lamina_core.ir._jaxpr_decoders import (
    open_jaxpr_params as open_jaxpr_params,
)
from lamina_core.ir._jaxpr_decoders import (
    param_decoders as param_decoders,
)
from lamina_core.ir._jaxpr_decoders import (
    param_types as param_types,
)
from lamina_core.ir._jaxpr_decoders import (
    register_jaxpr_scope as register_jaxpr_scope,
)
from lamina_core.ir._jaxpr_decoders import (
    register_open_jaxpr_params as register_open_jaxpr_params,
)
from lamina_core.ir._jaxpr_decoders import (
    register_param_decoder as register_param_decoder,
)
from lamina_core.ir._jaxpr_decoders import (
    register_param_type as register_param_type,
)
from lamina_core.ir._jaxpr_decoders import (
    register_value_reader as register_value_reader,
)
from lamina_core.ir._jaxpr_decoders import (
    type_sharding as type_sharding,
)
from lamina_core.ir._jaxpr_elided import (
    elided_constants as elided_constants,
)
from lamina_core.ir._jaxpr_elided import (
    register_printed_operands as register_printed_operands,
)
from lamina_core.ir._jaxpr_forms import (
    EqnSource as EqnSource,
)
from lamina_core.ir._jaxpr_forms import (
    ReadEqn as ReadEqn,
)
from lamina_core.ir._jaxpr_forms import (
    register_eqn_form as register_eqn_form,
)
from lamina_core.ir._jaxpr_io import (
    parse as parse,
)
from lamina_core.ir._jaxpr_io import (
    parse_type as parse_type,
)
from lamina_core.ir._jaxpr_json import (
    JaxprJSONError as JaxprJSONError,
)
from lamina_core.ir._jaxpr_json import (
    from_json as from_json,
)
from lamina_core.ir._jaxpr_json import (
    register_constant_codec as register_constant_codec,
)
from lamina_core.ir._jaxpr_json import (
    to_json as to_json,
)
from lamina_core.ir._jaxpr_lex import (
    JaxprSyntaxError as JaxprSyntaxError,
)
from lamina_core.ir._jaxpr_types import (
    register_type_reader as register_type_reader,
)
from lamina_core.ir._layouts import (
    AutoLayout as AutoLayout,
)
from lamina_core.ir._layouts import (
    Format as Format,
)
from lamina_core.ir._layouts import (
    Layout as Layout,
)
from lamina_core.ir._literals import (
    TypedComplex as TypedComplex,
)
from lamina_core.ir._literals import (
    TypedFloat as TypedFloat,
)
from lamina_core.ir._literals import (
    TypedInt as TypedInt,
)
from lamina_core.ir._literals import (
    typed_scalar as typed_scalar,
)
from lamina_core.ir._mesh import (
    AbstractMesh as AbstractMesh,
)
from lamina_core.ir._mesh import (
    AxisType as AxisType,
)
from lamina_core.ir._mesh import (
    Mesh as Mesh,
)
from lamina_core.ir._mesh import (
    NamedSharding as NamedSharding,
)
from lamina_core.ir._mesh import (
    aval_mesh as aval_mesh,
)
from lamina_core.ir._mesh import (
    canonicalize_sharding as canonicalize_sharding,
)
from lamina_core.ir._mesh import (
    concrete_context_mesh as concrete_context_mesh,
)
from lamina_core.ir._mesh import (
    context_mesh as context_mesh,
)
from lamina_core.ir._mesh import (
    get_abstract_mesh as get_abstract_mesh,
)
from lamina_core.ir._mesh import (
    get_concrete_mesh as get_concrete_mesh,
)
from lamina_core.ir._mesh import (
    install_process_index as install_process_index,
)
from lamina_core.ir._mesh import (
    manual_mesh as manual_mesh,
)
from lamina_core.ir._mesh import (
    named_in_context as named_in_context,
)
from lamina_core.ir._mesh import (
    on_context_mesh_change as on_context_mesh_change,
)
from lamina_core.ir._mesh import (
    set_mesh as set_mesh,
)
from lamina_core.ir._mesh import (
    spec_axis_names as spec_axis_names,
)
from lamina_core.ir._mesh import (
    use_abstract_mesh as use_abstract_mesh,
)
from lamina_core.ir._mesh import (
    use_mesh as use_mesh,
)
from lamina_core.ir._named_scopes import (
    NameStack as NameStack,
)
from lamina_core.ir._named_scopes import (
    Transform as Transform,
)
from lamina_core.ir._named_scopes import (
    current_name_stack as current_name_stack,
)
from lamina_core.ir._named_scopes import (
    format_name_stack as format_name_stack,
)
from lamina_core.ir._named_scopes import (
    name_stack_var as name_stack_var,
)
from lamina_core.ir._named_scopes import (
    named_call as named_call,
)
from lamina_core.ir._named_scopes import (
    named_scope as named_scope,
)
from lamina_core.ir._named_scopes import (
    reset_name_stack as reset_name_stack,
)
from lamina_core.ir._named_scopes import (
    transform_name_stack as transform_name_stack,
)
from lamina_core.ir._partition_spec import (
    UNCONSTRAINED as UNCONSTRAINED,
)
from lamina_core.ir._partition_spec import (
    P as P,
)
from lamina_core.ir._partition_spec import (
    PartitionSpec as PartitionSpec,
)
from lamina_core.ir._partition_spec import (
    entry_axes as entry_axes,
)
from lamina_core.ir._pretty import (
    PpContext as PpContext,
)
from lamina_core.ir._pretty import (
    PpSettings as PpSettings,
)
from lamina_core.ir._pretty import (
    hide_params as hide_params,
)
from lamina_core.ir._pretty import (
    literal_text as literal_text,
)
from lamina_core.ir._pretty import (
    pp_eqn as pp_eqn,
)
from lamina_core.ir._pretty import (
    pp_eqn_rules as pp_eqn_rules,
)
from lamina_core.ir._pretty import (
    pp_eqn_with_params as pp_eqn_with_params,
)
from lamina_core.ir._pretty import (
    pp_vars as pp_vars,
)
from lamina_core.ir._primitive import (
    DuplicateRuleError as DuplicateRuleError,
)
from lamina_core.ir._primitive import (
    InvalidValueError as InvalidValueError,
)
from lamina_core.ir._primitive import (
    MissingRuleError as MissingRuleError,
)
from lamina_core.ir._primitive import (
    Primitive as Primitive,
)
from lamina_core.ir._primitive import (
    RuleTable as RuleTable,
)
from lamina_core.ir._primitive import (
    install_current_trace as install_current_trace,
)
from lamina_core.ir._primitive import (
    primitives_named as primitives_named,
)
from lamina_core.ir._qdd import (
    AvalMutableQDD as AvalMutableQDD,
)
from lamina_core.ir._qdd import (
    AvalQDD as AvalQDD,
)
from lamina_core.ir._qdd import (
    MutableQDD as MutableQDD,
)
from lamina_core.ir._qdd import (
    concrete_avals_qdd as concrete_avals_qdd,
)
from lamina_core.ir._qdd import (
    qdd_final_rules as qdd_final_rules,
)
from lamina_core.ir._qdd import (
    qdd_primitives as qdd_primitives,
)
from lamina_core.ir._rule_mapping import (
    RuleMapping as RuleMapping,
)
from lamina_core.ir._rules import (
    abstract_eval_rules as abstract_eval_rules,
)
from lamina_core.ir._rules import (
    body_evaluated_primitives as body_evaluated_primitives,
)
from lamina_core.ir._rules import (
    const_fold_rules as const_fold_rules,
)
from lamina_core.ir._rules import (
    effects_rules as effects_rules,
)
from lamina_core.ir._rules import (
    evaluated_on_values as evaluated_on_values,
)
from lamina_core.ir._rules import (
    host_effect_types as host_effect_types,
)
from lamina_core.ir._rules import (
    impl_rules as impl_rules,
)
from lamina_core.ir._rules import (
    python_impl_primitives as python_impl_primitives,
)
from lamina_core.ir._rules import (
    value_impl_rules as value_impl_rules,
)
from lamina_core.ir._source_info import (
    NO_SOURCE_INFO as NO_SOURCE_INFO,
)
from lamina_core.ir._source_info import (
    SourceInfo as SourceInfo,
)
from lamina_core.ir._source_info import (
    current_source_info as current_source_info,
)
from lamina_core.ir._source_info import (
    exclude_path as exclude_path,
)
from lamina_core.ir._source_info import (
    fix_source_info as fix_source_info,
)
from lamina_core.ir._source_info import (
    is_internal_code as is_internal_code,
)
from lamina_core.ir._source_info import (
    register_internal_path as register_internal_path,
)
from lamina_core.ir._source_info import (
    unfix_source_info as unfix_source_info,
)

pp = _pp
"""The document combinators jaxprs print with, for rules that print their own equations."""
