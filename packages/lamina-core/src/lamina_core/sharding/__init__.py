"""lamina_core.sharding."""
