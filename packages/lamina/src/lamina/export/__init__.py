"""`lamina.export`: JAX's `jax.export`, exporting jitted functions as StableHLO.

    exp = lamina.export.export(lamina.jit(f))(lamina.ShapeDtypeStruct((3,), np.float32))
    blob = exp.serialize(vjp_order=1)        # the module, its constants (once), its vjp
    lamina.export.deserialize(blob).call(x)  # in any process: eagerly, under jit, grad

Unlike JAX's, an export keeps the constants its function closed over as arguments of its
module (`Exported.const_args`) and serializes them beside it, each stored once. Not imported by
`import lamina`: first use of `lamina.export` imports it.

`symbolic_shape` and `symbolic_args_specs` build shapes with symbolic dimensions; a function
exported with them takes any sizes that fit (JAX's shape polymorphism, see docs/export.md).
"""

from lamina_runtime.export import (
    DisabledSafetyCheck,
    Exported,
    IncompatibleExportError,
    SerializedExportError,
    SymbolicScope,
    default_export_platform,
    deserialize,
    export,
    is_symbolic_dim,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
    register_namedtuple_serialization,
    register_pytree_node_serialization,
    symbolic_args_specs,
    symbolic_shape,
)

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "IncompatibleExportError",
    "SerializedExportError",
    "SymbolicScope",
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
