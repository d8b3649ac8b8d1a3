"""Command-line tools: glow-opt, glow-compile, glow-run."""
