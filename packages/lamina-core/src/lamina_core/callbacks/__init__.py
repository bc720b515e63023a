"""lamina_core.callbacks._callbacks."""
