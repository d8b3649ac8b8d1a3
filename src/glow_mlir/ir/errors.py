"""The error every layer raises for bad user input. It lives at the bottom layer
(docs/architecture.md §2, §6) and imports nothing, so every package can raise it and code
that must stay light (loading a saved model without xDSL) can too; every module imports it
from here. How tools report it is `glow_mlir.tools.errors`."""


class UserError(Exception):
    """A problem with what the user gave us (file, flag, model, inputs); the message says
    where and what."""
