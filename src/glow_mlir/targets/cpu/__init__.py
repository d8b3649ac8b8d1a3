"""The CPU target: planned glow_ir -> loop nests -> LLVM dialect -> llvmlite (JIT or an
object file for an AOT bundle)."""
