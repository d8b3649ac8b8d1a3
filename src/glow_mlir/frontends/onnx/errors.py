"""What the ONNX importer tells a user whose model it cannot translate.

Every error is a `UserError`, so the tools print the message and exit 1 without a traceback.
An unsupported model is reported once, with every unsupported op type, attribute value and
element type found in the whole model (`UnsupportedOnnxError`), rather than one at a time.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from glow_mlir.ir.errors import UserError


class OnnxImportError(UserError):
    """A model the importer cannot read or translate: malformed, inconsistent, or unbound."""


class UnboundDimensionError(OnnxImportError):
    """A graph input has a symbolic (`dim_param`) or unknown dimension nobody bound.

    `problems` says each unbound dim; `inputs` names the inputs that have one, in graph
    order; `example` is the first of them with every unbound dim 1 (its declared dims
    otherwise), or None when it has no shape at all: a tool says how to bind them in its
    own flags (`with_fix`)."""

    def __init__(self, message: str, problems: Sequence[str] = (), inputs: Sequence[str] = (),
                 example: tuple[str, tuple[int, ...] | None] | None = None):
        # the message first, alone: an exception is unpickled as cls(*args)
        super().__init__(message)
        self.problems, self.inputs, self.example = list(problems), tuple(inputs), example

    def with_fix(self, fix: str) -> str:
        """The message with `fix` (how to bind them) after the unbound dims."""
        if not self.problems:
            return str(self.args[0])
        return f"the graph's shapes must be static, but {'; '.join(self.problems)}. {fix}"

    @classmethod
    def of(cls, problems: Sequence[str], fix: str, inputs: Sequence[str] = (),
           example: tuple[str, tuple[int, ...] | None] | None = None) -> UnboundDimensionError:
        err = cls("", problems, inputs, example)
        err.args = (err.with_fix(fix),)
        return err


@dataclass(frozen=True)
class Unsupported:
    """One occurrence of something the importer does not support."""

    what: str
    """The op type (`Resize`, `com.microsoft.FusedConv`), or `input`/`initializer`."""
    where: str
    """The node's label (its name, or `#index` when unnamed), or the value's name."""
    why: str


class UnsupportedOnnxError(OnnxImportError):
    """The model uses features the importer lacks; `entries` holds every occurrence."""

    MAX_NAMES = 5
    """Node names listed per line of the message; more are counted, not named."""

    def __init__(self, entries: list[Unsupported]):
        self.entries = list(entries)
        super().__init__(self._format())

    def _format(self) -> str:
        return describe_unsupported(self.entries, self.MAX_NAMES)


def describe_unsupported(entries: list[Unsupported], max_names: int = 5) -> str:
    """The one message for everything a model uses that an importer lacks: one line per
    (op type, reason), with the nodes that use it (the Caffe2 importer's too)."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for e in entries:
        groups[(e.what, e.why)].append(e.where)
    lines = [f"the model uses {len(entries)} unsupported op(s), attribute value(s) "
             f"or element type(s):"]
    for (what, why), wheres in groups.items():
        names = ", ".join(f"'{w}'" for w in wheres[:max_names])
        if len(wheres) > max_names:
            names += f", and {len(wheres) - max_names} more"
        times = "1 time" if len(wheres) == 1 else f"{len(wheres)} times"
        lines.append(f"  {what}: {why} ({times}: {names})")
    return "\n".join(lines)


class UnsupportedFeature(Exception):
    """Raised by a converter for an attribute value or type it cannot translate; the importer
    records it as an `Unsupported` entry and carries on, to report everything at once."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why
