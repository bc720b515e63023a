"""lamina-mlir: lowering of Lamina jaxprs to StableHLO with jaxlib's MLIR bindings.

It lowers lojax, ref-free jaxprs (upper layers expand hi types and discharge Refs first) and
knows nothing of XLA's runtime: compiling and running modules is lamina-runtime's job.
Importing this package registers a lowering rule for every core primitive.
"""

from lamina_core.ir import register_internal_path

register_internal_path(__file__)

from lamina_mlir import (  # noqa: E402, F401  (importing the rule modules registers them)
    _rules_ann,
    _rules_barrier,
    _rules_bessel,
    _rules_call,
    _rules_callbacks,
    _rules_checkpoint,
    _rules_collectives,
    _rules_composite,
    _rules_control_flow,
    _rules_conv,
    _rules_custom,
    _rules_elementwise,
    _rules_ffi,
    _rules_fft,
    _rules_gather_scatter,
    _rules_igamma,
    _rules_key_compare,
    _rules_linalg,
    _rules_linalg_condensed,
    _rules_linalg_decomp,
    _rules_linalg_eig,
    _rules_linalg_lapack,
    _rules_linalg_products,
    _rules_misc,
    _rules_random,
    _rules_reductions,
    _rules_rng,
    _rules_scaled_dot,
    _rules_shape,
    _rules_shard_map,
    _rules_sharding_constraint,
    _rules_slicing,
    _rules_sorting,
    _rules_transcendental,
    _rules_windowed,
    _rules_zeta,
)
from lamina_mlir._constants import (  # noqa: E402
    ConstantHandler,
    constant_handlers,
    handled_constant,
    ir_constant,
)
from lamina_mlir._context import (  # noqa: E402
    LoweringParameters,
    LoweringRule,
    LoweringRuleContext,
    ModuleContext,
    TokenSet,
    lowering_rules,
    ordered_effect_types,
)
from lamina_mlir._ir_types import (  # noqa: E402
    IrTypeRule,
    aval_to_ir_type,
    dtype_to_ir_type,
    ir_type_rules,
)
from lamina_mlir._lower import jaxpr_subcomp, lower_jaxpr_to_fun  # noqa: E402
from lamina_mlir._merge import merge_modules  # noqa: E402
from lamina_mlir._mlir_context import ContextCaches, make_context  # noqa: E402
from lamina_mlir._module import LoweredModule, lower_jaxpr_to_module, verify  # noqa: E402
from lamina_mlir._portable import (  # noqa: E402
    PLATFORM_INDEX_ATTR,
    call_portable_artifact,
    custom_call_targets,
    portable_artifact_mismatch,
    portable_artifact_module,
    portable_artifact_text,
    serialize_portable_artifact,
)
from lamina_mlir._rules_callbacks import emit_python_callback  # noqa: E402
from lamina_mlir._rules_ffi import (  # noqa: E402
    build_ffi_lowering_function,
    custom_call,
    ffi_lowering,
    ir_attribute,
)
from lamina_mlir._tokens import tokens_made_inside  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "PLATFORM_INDEX_ATTR",
    "ConstantHandler",
    "ContextCaches",
    "IrTypeRule",
    "LoweredModule",
    "LoweringParameters",
    "LoweringRule",
    "LoweringRuleContext",
    "ModuleContext",
    "TokenSet",
    "__version__",
    "aval_to_ir_type",
    "build_ffi_lowering_function",
    "call_portable_artifact",
    "constant_handlers",
    "custom_call",
    "custom_call_targets",
    "dtype_to_ir_type",
    "emit_python_callback",
    "ffi_lowering",
    "handled_constant",
    "ir_attribute",
    "ir_constant",
    "ir_type_rules",
    "jaxpr_subcomp",
    "lower_jaxpr_to_fun",
    "lower_jaxpr_to_module",
    "lowering_rules",
    "make_context",
    "merge_modules",
    "ordered_effect_types",
    "portable_artifact_mismatch",
    "portable_artifact_module",
    "portable_artifact_text",
    "serialize_portable_artifact",
    "tokens_made_inside",
    "verify",
]
