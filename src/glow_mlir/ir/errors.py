"""The error every layer raises for bad user input. It lives at the bottom (DESIGN.md
section 1) and imports nothing, so code that must stay light (loading a saved model
without xDSL) can raise it; `glow_mlir.tools.errors` re-exports it with the tools'
reporting."""


class UserError(Exception):
    """A problem with what the user gave us (file, flag, model, inputs); the message says
    where and what."""
