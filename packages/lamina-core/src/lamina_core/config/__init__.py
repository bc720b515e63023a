"""lamina_core.config._config."""
