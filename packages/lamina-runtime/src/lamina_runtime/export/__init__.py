"""`lamina_runtime.export`: exporting jitted functions as StableHLO, with JAX's `jax.export` API.

    exp = export(jit(f))(ShapeDtypeStruct((3,), np.float32))   # trace, lower, check
    blob = exp.serialize(vjp_order=1)                           # module, constants, vjp
    exp2 = deserialize(blob)                                    # in any process
    exp2.call(x)                                                # eagerly, under jit, grad

Implementation: `_export` (tracing and lowering into an `Exported`), `_exported` (`Exported`,
`call`, `deserialize`), `_call` (the `call_exported` primitive and its rules), `_format` (the
serialized form), `_trees` (argument structures as JSON, registries of node types), `_safety`
(platforms and custom-call checks), `_shape_poly` (argument specs with symbolic dimensions,
whose algebra is core's `DimExpr`), `_solve` (a call's dimension variables, from its argument
shapes). Not imported by `lamina_runtime`: `import lamina` does not pay for it.
"""

from lamina_core.ir import (
    InconclusiveDimensionOperation,
    SymbolicScope,
    is_symbolic_dim,
    register_internal_path,
    symbolic_shape,
)
from lamina_runtime.export._call import call_exported_p
from lamina_runtime.export._export import (
    calling_convention_version,
    export,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
)
from lamina_runtime.export._exported import Exported, call, deserialize
from lamina_runtime.export._format import IncompatibleExportError, SerializedExportError
from lamina_runtime.export._safety import DisabledSafetyCheck, default_export_platform
from lamina_runtime.export._shape_poly import symbolic_args_specs
from lamina_runtime.export._trees import (
    register_namedtuple_serialization,
    register_pytree_node_serialization,
)

register_internal_path(__file__)

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "IncompatibleExportError",
    "InconclusiveDimensionOperation",
    "SerializedExportError",
    "SymbolicScope",
    "call",
    "call_exported_p",
    "calling_convention_version",
    "default_export_platform",
    "deserialize",
    "export",
    "is_symbolic_dim",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version",
    "register_namedtuple_serialization",
    "register_pytree_node_serialization",
    "symbolic_args_specs",
    "symbolic_shape",
]
