"""Rematerialization: `checkpoint`/`remat` and the `remat2` primitive (`_checkpoint`),
its differentiation and batching rules (`_checkpoint_ad`, `_checkpoint_batching`, registered
at import), and the saving policies with `checkpoint_name` (`_policies`).
"""

from lamina_core.checkpoint import _checkpoint_ad as _checkpoint_ad  # registers remat2's AD
from lamina_core.checkpoint import _checkpoint_batching as _checkpoint_batching  # its vmap
from lamina_core.checkpoint._checkpoint import (
    checkpoint as checkpoint,
)
from lamina_core.checkpoint._checkpoint import (
    checkpoint_name as checkpoint_name,
)
from lamina_core.checkpoint._checkpoint import (
    checkpoint_policies as checkpoint_policies,
)
from lamina_core.checkpoint._checkpoint import (
    remat as remat,
)
from lamina_core.checkpoint._checkpoint import (
    remat_p as remat_p,
)
from lamina_core.checkpoint._policies import (
    name_p as name_p,
)
