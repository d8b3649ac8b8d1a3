"""The project's dialects: `glow` (graph IR); later `glow_ir` and `glow_accel`."""
