"""Reading and writing IR text with MLIR's conventions.

- Every parsed op gets a `file:line:col` location (as mlir-opt does), so a verifier failure
  found later, even after passes, points back at the source line.
- Verification reports the innermost failing op as `file:line:col: error: 'op' op message`.
- Weight blobs go to and come from the module's resource table (`glow_mlir.ir.resources`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from glow_mlir.ir import resources


class LocatingParser(Parser):
    """xDSL's parser, plus a `file:line:col` location on every op it reads."""

    line_offset: int = 0
    """Lines before this chunk in its file (`--split-input-file`)."""

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        op = super().parse_operation()
        if isinstance(op.location, UnknownLoc):
            loc = start.get_location()
            op.location = FileLineColLoc(
                StringAttr(loc.file), IntAttr(loc.line + self.line_offset), IntAttr(loc.col)
            )
        return op


def parse_module(ctx: Context, text: str, filename: str = "<stdin>", line_offset: int = 0) -> ModuleOp:
    """Parse `text`; the module owns its weight blobs (see resources)."""
    parser = LocatingParser(ctx, text, filename)
    parser.line_offset = line_offset
    try:
        module = parser.parse_module()
    except ParseError as err:
        if line_offset:
            err.span = replace(err.span, line_offset=line_offset)
        raise
    handles = [key for dialect, key in parser.dialect_resources if dialect == "builtin"]
    resources.take_parsed_blobs(module, handles)
    return module


def print_module(module: ModuleOp, stream: IO[str], ctx: Context, *, generic: bool = False,
                 debuginfo: bool = False) -> None:
    """Print `module` and its `{-# dialect_resources #-}` section, as mlir-opt would."""
    printer = Printer(stream=stream, print_generic_format=generic, print_debuginfo=debuginfo)
    with resources.blobs_for_printing(module):
        printer.print_op(module)
        printer.print_metadata(ctx.loaded_dialects)
    stream.write("\n")


def location_text(op: Operation) -> str | None:
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return None


@dataclass
class OpDiagnostic(Exception):
    """A diagnostic anchored at an op: prints as `file:line:col: error: 'name' op msg`."""

    op: Operation
    message: str

    def __str__(self) -> str:
        where = location_text(self.op)
        prefix = f"{where}: " if where else ""
        return f"{prefix}error: '{self.op.name}' op {self.message}"


def _walk_post_order(op: Operation) -> Iterator[Operation]:
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                yield from _walk_post_order(child)
    yield op


def verify_module(module: Operation) -> None:
    """Verify every op, inner ops first, raising `OpDiagnostic` for the first failure."""
    for op in _walk_post_order(module):
        try:
            # verify_() first: it is the op's own checks, and on failure xDSL's verify()
            # would print the whole module into the exception (slow on real models).
            op.verify_()
            op.verify(verify_nested_ops=False)
        except VerifyException as err:
            raise OpDiagnostic(op, _strip_xdsl_prefix(str(err))) from err


def _strip_xdsl_prefix(message: str) -> str:
    """xDSL wraps verifier messages in the printed module; keep only the message."""
    marker = "Operation does not verify: "
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()]
    for line in lines:
        if marker in line:
            return line.split(marker, 1)[1].strip()
    # IRDL constraint messages come as "what does not verify:" + "why" on the next line.
    return " ".join(lines) if lines else message


__all__ = [
    "LocatingParser",
    "parse_module",
    "print_module",
    "verify_module",
    "OpDiagnostic",
    "location_text",
    "ParseError",
]
