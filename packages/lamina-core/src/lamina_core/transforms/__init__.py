"""lamina_core.transforms."""
