"""`shard_map` and its rules: the primitive and its checks against the specs
(`_shard_map`, `_shard_map_checks`), differentiation (`_shard_map_ad`), batching
(`_shard_map_batching`), partial evaluation and DCE (`_shard_map_pe`), registered at import;
meshes, shardings and specs read back from printed jaxprs, and `shard_map` bodies read under
their manual mesh (`_jaxpr_io`, for `ir.parse`). Collectives are lax's (`lax._collectives`);
meshes and specs as types are the IR's.
"""

from lamina_core.sharding import _shard_map_ad as _shard_map_ad  # registers its AD rules
from lamina_core.sharding import _shard_map_batching as _shard_map_batching  # its vmap rule
from lamina_core.sharding import _shard_map_pe as _shard_map_pe  # its partial eval and DCE
from lamina_core.sharding._jaxpr_io import (
    install_mesh_devices as install_mesh_devices,
)
from lamina_core.sharding._shard_map import (
    manual_axes_env as manual_axes_env,
)
from lamina_core.sharding._shard_map import (
    shard_map as shard_map,
)
from lamina_core.sharding._shard_map import (
    shard_map_p as shard_map_p,
)
