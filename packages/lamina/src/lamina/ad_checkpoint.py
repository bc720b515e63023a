"""`jax.ad_checkpoint`: `checkpoint_name`, the policies and the policies' answers.

(JAX 0.10 removed `jax.ad_checkpoint.checkpoint` and `remat`; use `lamina.checkpoint`.)
"""

from lamina_core.checkpoint import checkpoint_name, checkpoint_policies
from lamina_core.interpreters import Offloadable, Recompute, Saveable

__all__ = ["Offloadable", "Recompute", "Saveable", "checkpoint_name", "checkpoint_policies"]
