"""lamina_core.ir."""
