"""`jax.ad_checkpoint`: `checkpoint`, `checkpoint_name` and the policies."""

from lamina_core.checkpoint import checkpoint, checkpoint_name, checkpoint_policies, remat

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
