"""Rematerialization: `checkpoint`/`remat` and the `remat2` primitive (`_checkpoint`),
its differentiation and batching rules (`_checkpoint_ad`, `_checkpoint_batching`, registered
at import), and the saving policies with `checkpoint_name` (`_policies`).
"""

from lamina_core.checkpoint import _checkpoint_ad as _checkpoint_ad  # registers remat2's AD
from lamina_core.checkpoint import _checkpoint_batching as _checkpoint_batching  # its vmap
