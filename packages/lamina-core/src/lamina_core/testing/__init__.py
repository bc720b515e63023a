"""lamina_core.testing._core."""
