"""`lamina.sharding`: device meshes and shardings, as `jax.sharding`."""

import importlib
from typing import Any

from lamina_core.ir import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    get_abstract_mesh,
    get_concrete_mesh,
    set_mesh,
    use_abstract_mesh,
    use_mesh,
)
from lamina_runtime import Sharding, SingleDeviceSharding, reshard

get_mesh = get_concrete_mesh

_LAZY = {
    "AbstractDevice": "lamina._sharding_types",
    "ManualAxisType": "lamina._sharding_types",
    "make_single_device_sharding": "lamina._sharding_types",
    "auto_axes": "lamina._axis_casts",
    "explicit_axes": "lamina._axis_casts",
}
"""Names whose modules are imported on first use (`import lamina` imports this module)."""

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
    "use_abstract_mesh",
    "use_mesh",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'lamina.sharding' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
