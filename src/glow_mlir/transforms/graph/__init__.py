"""Graph passes on the `glow` dialect, one module per pass (name = pass name, kebab -> snake)."""
