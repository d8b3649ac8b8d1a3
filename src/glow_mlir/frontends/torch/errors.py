"""What the PyTorch frontend tells a user: each a `UserError` (tools print one line)."""

from __future__ import annotations

from glow_mlir.ir.errors import UserError

EXPORTERS = {"dynamo": True, "torchscript": False}
"""The `exporter=` names and the `dynamo=` flag of `torch.onnx.export` each stands for."""

EXTRA = "torch"
"""The optional dependency group in pyproject.toml that brings torch and onnxscript."""

INSTALL = f'pip install "glow-mlir[{EXTRA}]"'


class MissingTorchError(UserError, ImportError):
    """torch (or onnxscript, which the dynamo exporter needs) is not installed. An
    `ImportError` too, which is what code probing for an optional dependency catches."""

    def __init__(self, missing: str, reason: str = ""):
        why = f" ({reason})" if reason else ""
        super().__init__(f"the PyTorch frontend needs '{missing}', which is not installed"
                         f"{why}: {INSTALL} (or, from a checkout, pip install -e \".[{EXTRA}]\")")
        self.missing = missing


class TorchInputError(UserError, TypeError):
    """Not a module, bad example inputs, an unknown exporter: what `from_torch` was given."""


class TorchExportError(UserError):
    """`torch.onnx.export` failed on the module: which exporter, torch's reason in one line,
    and the other exporter to try (after `note`, what else the user may change)."""

    def __init__(self, exporter: str, what: str, error: BaseException, note: str = ""):
        self.exporter = exporter
        self.reason = first_line(error)
        other = next(e for e in EXPORTERS if e != exporter)
        super().__init__(
            f"torch.onnx.export with the {exporter} exporter (dynamo={EXPORTERS[exporter]}) "
            f"could not export {what}: {self.reason}; {note}try exporter=\"{other}\"")


class TorchDynamicError(UserError):
    """`dynamic=` made dim 0 of an input the symbolic batch where it is not one: which
    inputs were made dynamic, on which dim, and how to name the batched ones."""


def choose_dynamic(made: str) -> str:
    """How to choose the inputs whose dim 0 is the batch, after `made` (which were)."""
    return (f"{made}; if dim 0 of an input is not a batch, name the inputs whose dim 0 "
            f"is: dynamic=[...]")


def first_line(error: BaseException) -> str:
    """The first line of the innermost cause: the dynamo exporter wraps the reason (a
    guard on a data-dependent value, an op without a translation) in a long message of
    generic advice, and keeps the reason as `__cause__`."""
    while error.__cause__ is not None and error.__cause__ is not error:
        error = error.__cause__
    lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
    text = _strip_ansi(lines[0]) if lines else "(no message)"
    return f"{type(error).__name__}: {text}"


def _strip_ansi(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)
