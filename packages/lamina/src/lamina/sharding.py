"""`lamina.sharding`: device meshes and shardings, as `jax.sharding`."""

from lamina_core.ir import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    get_abstract_mesh,
    get_concrete_mesh,
    set_mesh,
    use_mesh,
)
from lamina_runtime import Sharding, SingleDeviceSharding, reshard

get_mesh = get_concrete_mesh

__all__ = [
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "get_abstract_mesh",
    "get_mesh",
    "reshard",
    "set_mesh",
    "use_mesh",
]
