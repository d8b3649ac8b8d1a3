"""Accelerator passes on `glow_accel` programs (inside `glow_ir.func` program regions):
`accel-insert-dma` makes the blocking transfers asynchronous, `accel-double-buffer`
overlaps consecutive tile steps, `accel-plan-scratchpad` gives every tile a static
scratchpad offset. `program` holds the queries they share (which tile or main-memory
bytes an op reads and writes)."""
