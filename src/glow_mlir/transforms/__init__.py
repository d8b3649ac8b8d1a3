"""Rewrite passes: graph/ (glow), later instr/ (glow_ir) and accel/ (glow_accel)."""
