"""lamina-core: Lamina's IR, trace machinery, transformations and array frontends.

This layer knows nothing of MLIR, XLA or JAX: it runs alone on NumPy.
"""

from lamina_core import source_info as _source_info

_source_info.register_internal_path(__file__)

from lamina_core import call_ad as _call_ad  # noqa: E402, F401  (registers jit rules)
from lamina_core import call_batching as _call_batching  # noqa: E402, F401  (jit's vmap rule)
from lamina_core import checkpoint_ad as _checkpoint_ad  # noqa: E402, F401  (remat2's reverse mode)
from lamina_core import checkpoint_batching as _checkpoint_batching  # noqa: E402, F401  (remat2's vmap)
from lamina_core import custom_batching as _custom_vmap  # noqa: E402, F401  (custom_vmap)
from lamina_core import dtypes, lax, numpy, tree_util  # noqa: E402
from lamina_core import pretty as _pretty  # noqa: E402, F401  (installs the printer)
from lamina_core import shard_map_ad as _shard_map_ad  # noqa: E402, F401  (shard_map's AD)
from lamina_core import shard_map_batching as _shard_map_vmap  # noqa: E402, F401  (its vmap)
from lamina_core import shard_map_pe as _shard_map_pe  # noqa: E402, F401  (its partial eval, DCE)
from lamina_core.api import make_jaxpr  # noqa: E402
from lamina_core.autodiff import grad, jvp, linear_transpose, linearize, value_and_grad, vjp  # noqa: E402
from lamina_core.avals import AbstractValue, ShapedArray  # noqa: E402
from lamina_core.call import UNSPECIFIED, jit_p, stage_call  # noqa: E402
from lamina_core.checkpoint import checkpoint, checkpoint_name, checkpoint_policies, remat  # noqa: E402
from lamina_core.config import config  # noqa: E402
from lamina_core.custom_derivatives import _batching as _custom_rules_vmap  # noqa: E402, F401
from lamina_core.custom_derivatives import custom_jvp, custom_vjp  # noqa: E402
from lamina_core.effects import Effect  # noqa: E402
from lamina_core.evaluate import eval_jaxpr, reference_impl  # noqa: E402
from lamina_core.interpreters.staging import StagingTrace, StagingTracer, trace_to_jaxpr  # noqa: E402
from lamina_core.jacobians import eval_shape, hessian, jacfwd, jacobian, jacrev  # noqa: E402
from lamina_core.jaxpr import (  # noqa: E402
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
from lamina_core.jit import Jitted, jit  # noqa: E402
from lamina_core.primitive import DuplicateRuleError, MissingRuleError, Primitive, RuleTable  # noqa: E402
from lamina_core.rules import abstract_eval_rules, effects_rules, impl_rules  # noqa: E402
from lamina_core.tracing import (  # noqa: E402
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
from lamina_core.typecheck import JaxprTypeError, check_jaxpr  # noqa: E402
from lamina_core.values import ShapeDtypeStruct, register_value_type, typeof  # noqa: E402
from lamina_core.vmap_api import vmap  # noqa: E402

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
