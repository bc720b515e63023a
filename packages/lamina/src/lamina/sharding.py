"""`lamina.sharding`: device meshes and shardings, as `jax.sharding`."""

from lamina_core.ir._mesh import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    get_abstract_mesh,
    get_concrete_mesh,
    set_mesh,
    use_mesh,
)
from lamina_core.ir._partition_spec import PartitionSpec
from lamina_runtime.reshard_api import reshard
from lamina_runtime.sharding import Sharding, SingleDeviceSharding

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
