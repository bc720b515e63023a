"""lamina-core: Lamina's IR, trace machinery, transformations and array frontends.

This layer knows nothing of MLIR, XLA or JAX: it runs alone on NumPy. It is built as
subpackages in a strict order, each importing only those below it, each with an `__init__`
that is its interface (import-linter checks both; docs/architecture.md shows the layout):
`tree` < `config` < `ir` < `trace` < `interpreters` < `transforms` < `custom_derivatives` <
`lax` < `numpy` < `random` < `nn` < `scipy` < `sharding`, `checkpoint`, `callbacks`,
`jacobians`, `flatten_util`, `example_libraries`; `testing` beside, for tests. This module
gathers the names most users want.
"""

from lamina_core.ir import register_internal_path

register_internal_path(__file__)

# Importing each subpackage registers its rules into the tables below it (shard_map's and
# remat's transformation rules, custom_vmap, the printer).
from lamina_core import lax, numpy  # noqa: E402
from lamina_core import sharding as _sharding  # noqa: E402, F401
from lamina_core.checkpoint import (  # noqa: E402
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
    remat,
)
from lamina_core.config import config  # noqa: E402
from lamina_core.custom_derivatives import custom_jvp, custom_vjp  # noqa: E402
from lamina_core.interpreters import StagingTrace, StagingTracer, trace_to_jaxpr  # noqa: E402
from lamina_core.ir import (  # noqa: E402
    AbstractValue,
    Atom,
    ClosedJaxpr,
    DebugInfo,
    DropVar,
    DuplicateRuleError,
    Effect,
    Jaxpr,
    JaxprEqn,
    Literal,
    MissingRuleError,
    Primitive,
    RuleTable,
    ShapedArray,
    Var,
    abstract_eval_rules,
    dtypes,
    effects_rules,
    impl_rules,
    jaxprs_in_params,
)
from lamina_core.jacobians import hessian, jacfwd, jacobian, jacrev  # noqa: E402
from lamina_core.trace import (  # noqa: E402
    ConcretizationTypeError,
    EvalTrace,
    JaxprTypeError,
    ShapeDtypeStruct,
    Trace,
    Tracer,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
    check_jaxpr,
    current_trace,
    eval_jaxpr,
    install_eager_impl,
    install_materializer,
    jaxpr_as_fun,
    reference_impl,
    register_value_type,
    set_current_trace,
    typeof,
)
from lamina_core.transforms import (  # noqa: E402
    UNSPECIFIED,
    Jitted,
    eval_shape,
    grad,
    jit,
    jit_p,
    jvp,
    linear_transpose,
    linearize,
    make_jaxpr,
    stage_call,
    value_and_grad,
    vjp,
    vmap,
)
from lamina_core.tree import tree_util  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "UNSPECIFIED",
    "AbstractValue",
    "Atom",
    "ClosedJaxpr",
    "ConcretizationTypeError",
    "DebugInfo",
    "DropVar",
    "DuplicateRuleError",
    "Effect",
    "EvalTrace",
    "Jaxpr",
    "JaxprEqn",
    "JaxprTypeError",
    "Jitted",
    "Literal",
    "MissingRuleError",
    "Primitive",
    "RuleTable",
    "ShapeDtypeStruct",
    "ShapedArray",
    "StagingTrace",
    "StagingTracer",
    "Trace",
    "Tracer",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
    "Var",
    "__version__",
    "abstract_eval_rules",
    "check_jaxpr",
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "config",
    "current_trace",
    "custom_jvp",
    "custom_vjp",
    "dtypes",
    "effects_rules",
    "eval_jaxpr",
    "eval_shape",
    "grad",
    "hessian",
    "impl_rules",
    "install_eager_impl",
    "install_materializer",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jaxpr_as_fun",
    "jaxprs_in_params",
    "jit",
    "jit_p",
    "jvp",
    "lax",
    "linear_transpose",
    "linearize",
    "make_jaxpr",
    "numpy",
    "reference_impl",
    "register_value_type",
    "remat",
    "set_current_trace",
    "stage_call",
    "trace_to_jaxpr",
    "tree_util",
    "typeof",
    "value_and_grad",
    "vjp",
    "vmap",
]
