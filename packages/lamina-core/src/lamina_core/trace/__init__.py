"""lamina_core.trace."""
