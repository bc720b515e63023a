"""Developer tools for the Lamina monorepo (not shipped in any distribution)."""
