"""lamina_core.tree.tree."""
