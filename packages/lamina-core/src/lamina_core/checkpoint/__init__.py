"""lamina_core.checkpoint._checkpoint."""
