"""Instruction-IR passes (Glow's IROptimizer): one module per pass."""
