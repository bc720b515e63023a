"""lamina-core: Lamina's IR, trace machinery, transformations and array frontends.

This layer knows nothing of MLIR, XLA or JAX: it runs alone on NumPy.
"""

from lamina_core.ir import _source_info

_source_info.register_internal_path(__file__)

from lamina_core import lax, numpy  # noqa: E402
from lamina_core.checkpoint import (  # noqa: E402
    _checkpoint_ad,  # noqa: F401  (remat2's reverse mode)
    _checkpoint_batching,  # noqa: F401  (remat2's vmap)
)
from lamina_core.checkpoint._checkpoint import (  # noqa: E402
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
    remat,
)
from lamina_core.config._config import config  # noqa: E402
from lamina_core.custom_derivatives import _batching as _custom_rules_vmap  # noqa: E402, F401
from lamina_core.custom_derivatives import _custom_batching as _custom_vmap  # noqa: E402, F401  (custom_vmap)
from lamina_core.custom_derivatives import custom_jvp, custom_vjp  # noqa: E402
from lamina_core.interpreters.staging import StagingTrace, StagingTracer, trace_to_jaxpr  # noqa: E402
from lamina_core.ir import (  # noqa: E402
    _pretty,  # noqa: F401  (installs the printer)
    dtypes,
)
from lamina_core.ir._avals import AbstractValue, ShapedArray  # noqa: E402
from lamina_core.ir._effects import Effect  # noqa: E402
from lamina_core.ir._jaxpr import (  # noqa: E402
    Atom,
    ClosedJaxpr,
    DebugInfo,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    Var,
    jaxprs_in_params,
)
from lamina_core.ir._primitive import DuplicateRuleError, MissingRuleError, Primitive, RuleTable  # noqa: E402
from lamina_core.ir._rules import abstract_eval_rules, effects_rules, impl_rules  # noqa: E402
from lamina_core.jacobians._jacobians import hessian, jacfwd, jacobian, jacrev  # noqa: E402
from lamina_core.sharding import (  # noqa: E402
    _shard_map_ad,  # noqa: F401  (shard_map's AD)
    _shard_map_pe,  # noqa: F401  (its partial eval, DCE)
)
from lamina_core.sharding import _shard_map_batching as _shard_map_vmap  # noqa: E402, F401  (its vmap)
from lamina_core.trace._evaluate import eval_jaxpr, reference_impl  # noqa: E402
from lamina_core.trace._tracing import (  # noqa: E402
    ConcretizationTypeError,
    EvalTrace,
    Trace,
    Tracer,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
    current_trace,
    install_eager_impl,
    install_materializer,
    set_current_trace,
)
from lamina_core.trace._typecheck import JaxprTypeError, check_jaxpr  # noqa: E402
from lamina_core.trace._values import ShapeDtypeStruct, register_value_type, typeof  # noqa: E402
from lamina_core.transforms import (  # noqa: E402
    _call_ad,  # noqa: F401  (registers jit rules)
    _call_batching,  # noqa: F401  (jit's vmap rule)
)
from lamina_core.transforms._autodiff import (  # noqa: E402
    grad,
    jvp,
    linear_transpose,
    linearize,
    value_and_grad,
    vjp,
)
from lamina_core.transforms._call import UNSPECIFIED, jit_p, stage_call  # noqa: E402
from lamina_core.transforms._eval_shape import eval_shape  # noqa: E402
from lamina_core.transforms._jit import Jitted, jit  # noqa: E402
from lamina_core.transforms._make_jaxpr import make_jaxpr  # noqa: E402
from lamina_core.transforms._vmap import vmap  # noqa: E402
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
