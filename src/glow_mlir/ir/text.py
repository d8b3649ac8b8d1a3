"""Reading and writing IR text with MLIR's conventions.

- Every parsed op gets a `file:line:col` location (as mlir-opt does), so a verifier failure
  found later, even after passes, points back at the source line.
- Verification reports the innermost failing op as `file:line:col: error: 'op' op message`.
- Weight blobs go to and come from the module's resource table (`glow_mlir.ir.resources`).
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import (
    Builtin,
    FileLineColLoc,
    IntAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.printer import Printer
from xdsl.utils.exceptions import (
    MultipleSpansParseError,
    ParseError,
    PassFailedException,
    VerifyException,
)
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from glow_mlir.ir import progress, resources
from glow_mlir.ir.errors import UserError

MAX_INTEGER_WIDTH = (1 << 24) - 1
"""The widest integer type, as MLIR's IntegerType::kMaxWidth."""

MAX_DENSE_LITERAL_ELEMENTS = 1 << 26
"""The most elements a textual `dense<...>` literal may expand to."""

_OP_START = re.compile(r'(%[^=\n]*=\s*)?("?)([A-Za-z_][\w$.-]*)')
"""An op's results and name: `%a, %b = glow.x`, or the name in quotes (generic form)."""


class _Lexer(MLIRLexer):
    # xDSL's string-literal pattern nests `+` inside `*`: an unterminated string (`"abc`
    # up to the end of the line) backtracks exponentially, and 60 characters never end.
    # The same language, one character per repetition: linear.
    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


class LocatingParser(Parser):
    """xDSL's parser, plus a `file:line:col` location on every op it reads, and located
    parse errors where xDSL raises unlocated ones (ill-formed types, operands whose types
    break an op's constraints while its custom form is read, undefined values)."""

    line_offset: int = 0
    """Lines before this chunk in its file (`--split-input-file`)."""

    def __init__(self, ctx: Context, input: str | bytes, name: str = "<unknown>") -> None:
        super().__init__(ctx, "", name)
        text = input.decode("utf-8") if isinstance(input, bytes) else input
        self._parser_state = ParserState(_Lexer(Input(text, name)))

    def parse_operation(self) -> Operation:
        # As mlir-opt, locate an op at its name (`%0 = glow.relu ...`: at `glow.relu`).
        start = self._current_token.span
        m = _OP_START.match(self.lexer.input.content, start.start)
        if m is not None:
            start = Span(m.start(2), m.end(3) + len(m.group(2)), start.input)
        try:
            op = super().parse_operation()
        except VerifyException as err:
            name = f"'{m.group(3)}' op " if m else ""
            self.raise_error(f"{name}{_one_line(str(err))}", start)
        if isinstance(op.location, UnknownLoc):
            loc = start.get_location()
            op.location = FileLineColLoc(
                StringAttr(loc.file), IntAttr(loc.line + self.line_offset), IntAttr(loc.col)
            )
        return op

    def _parse_extended_type_or_attribute(self, attr_or_dialect_name: str, is_type: bool):
        # The `!name`/`#name` token is already consumed; point back at it when we can.
        sigil = "!" if is_type else "#"
        token = f"{sigil}{attr_or_dialect_name}"
        here = self._current_token.span.start
        content = self.lexer.input.content
        start = content.rfind(token, max(0, here - len(token) - 64), here)
        start = start if start >= 0 and not content[start + len(token):here].strip() else here
        try:
            return super()._parse_extended_type_or_attribute(  # type: ignore[call-overload]
                attr_or_dialect_name, is_type)
        except VerifyException as err:
            kind = "type" if is_type else "attribute"
            self.raise_error(f"invalid {kind} {token}: {_one_line(str(err))}",
                             start, max(self.pos, start + 1))

    def parse_optional_builtin_int_or_float_attr(self):
        # xDSL packs the literal into its type while parsing; a value the type cannot hold
        # (3.5e+38 : f32) escapes as OverflowError. Report it at the literal instead.
        start = self._current_token.span.start
        try:
            return super().parse_optional_builtin_int_or_float_attr()
        except (OverflowError, struct.error) as err:
            self.raise_error(f"literal does not fit its type: {err}", start,
                             max(self.pos, start + 1))

    def _parse_dense_literal_type(self):
        # xDSL builds a dense literal as a Python list of every element (a splat too):
        # `dense<1> : tensor<1099511627776xi8>` would take the machine's memory.
        start = self._current_token.span.start
        t = super()._parse_dense_literal_type()
        n = math.prod(t.get_shape())
        if n > MAX_DENSE_LITERAL_ELEMENTS:
            self.raise_error(
                f"dense literal of {n} elements is too large (at most "
                f"{MAX_DENSE_LITERAL_ELEMENTS}; keep large weights in dense_resource blobs)",
                start, max(self.pos, start + 1))
        return t

    def parse_dense_int_or_fp_elements_attr(self, type):  # type: ignore[override]
        # A value its element type cannot hold (`dense<300> : tensor<2xi8>`), or an element
        # type xDSL cannot pack (i3), escapes xDSL as ValueError/NotImplementedError.
        start = self._current_token.span.start
        try:
            return super().parse_dense_int_or_fp_elements_attr(type)
        except (ValueError, NotImplementedError, OverflowError, struct.error) as err:
            self.raise_error(f"invalid dense literal: {_one_line(str(err))}", start,
                             max(self.pos, start + 1))

    def _parse_optional_integer_or_float_type(self):
        # MLIR's limit; xDSL has none, and `1 : i429496729664` computed 1 << 429496729664.
        token = self._current_token
        m = self._builtin_integer_type_regex.match(token.text)
        if m is not None and int(m.group(1)) > MAX_INTEGER_WIDTH:
            self.raise_error(f"integer bitwidth is limited to {MAX_INTEGER_WIDTH} bits",
                             token.span)
        return super()._parse_optional_integer_or_float_type()

    def _parse_builtin_densearray_attr(self):
        # The same for `array<i8: 300>` and `array<i643>`.
        start = self._current_token.span.start
        try:
            return super()._parse_builtin_densearray_attr()
        except (ValueError, NotImplementedError, OverflowError, struct.error) as err:
            self.raise_error(f"invalid array attribute: {_one_line(str(err))}", start,
                             max(self.pos, start + 1))

    def _parse_block(self):
        # xDSL forgets where a block first referenced ahead (`cf.br ^head`) was defined, so
        # a second `^head:` fell through its re-declaration check into a KeyError.
        token = self._current_token
        if token.kind == MLIRTokenKind.CARET_IDENT:
            name = token.text[1:]
            entry = self.blocks.get(name)
            if entry is not None and entry[1] is None \
                    and name not in self.forward_block_references:
                self.raise_error(f"re-declaration of block '{name}'", token.span)
            self._check_block_name(token)
        return super()._parse_block()

    def parse_optional_successor(self):
        if self._current_token.kind == MLIRTokenKind.CARET_IDENT:
            self._check_block_name(self._current_token)
        return super().parse_optional_successor()

    def _check_block_name(self, token) -> None:
        # xDSL keeps a block's name as a hint, and its setter refuses names MLIR allows
        # (`^0`) with a ValueError.
        name = token.text[1:]
        if not Block.is_default_block_name(name) and not Block.is_valid_name(name):
            self.raise_error(f"block name '^{name}' is not supported (a name starts with a "
                             f"letter, or is ^bb followed by digits)", token.span)

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        if self._current_token.kind == MLIRTokenKind.EOF:  # nothing but blanks and comments
            if allow_implicit_module:  # mlir-opt: an empty input is an empty module
                return ModuleOp([])
            self.raise_error("reached the end of the input before any op: with "
                             "--no-implicit-module it must hold one top-level builtin.module",
                             self._current_token.span)
        try:
            return super().parse_module(allow_implicit_module)
        except RecursionError:
            # xDSL's parser is recursive descent: regions, types and dense literals nested
            # a few hundred deep exhaust Python's stack. Say where, as a parse error.
            self.raise_error("input nested too deeply (regions, types or literals nested "
                             "hundreds of levels deep)", self._current_token.span)
        except ParseError as err:
            if not err.msg.startswith("values used but not defined") \
                    or not self.forward_ssa_references:
                raise
            # xDSL reports this at the end of the input; MLIR at the use.
            name = next(iter(self.forward_ssa_references))
            content = self.lexer.input.content
            uses = (m for m in re.finditer(rf"%{re.escape(name)}(?![\w$.-])", content)
                    if "//" not in content[content.rfind("\n", 0, m.start()) + 1:m.start()])
            m = next(uses, None)
            if m is None:
                raise
            self.raise_error(f"use of undefined value '%{name}'", m.start(), m.end())


def _one_line(message: str) -> str:
    return " ".join(ln.strip() for ln in message.strip().splitlines() if ln.strip())


def parse_module(ctx: Context, text: str, filename: str = "<stdin>", line_offset: int = 0,
                 *, implicit_module: bool = True) -> ModuleOp:
    """Parse `text`; the module owns its weight blobs (see resources).

    `line_offset` is the number of lines before `text` in its file (a `--split-input-file`
    chunk), so locations and parse errors name the line of the whole file. A blob of the
    wrong size raises `OpDiagnostic` at the op that refers to it.
    """
    # Parse with a private blob store: handles left in xDSL's process-wide store by an
    # earlier (maybe failed) parse must not make the parser rename ours.
    with resources.private_blob_store() as parsed_blobs:
        try:
            parser = LocatingParser(ctx, text, filename)  # lexes the first token already
            parser.line_offset = line_offset
            module = parser.parse_module(implicit_module)
        except ParseError as err:
            if line_offset:
                err.span = replace(err.span, line_offset=line_offset)
            err.msg = _clarify(err, ctx)
            raise
    try:
        resources.take_parsed_blobs(module, parsed_blobs)
    except resources.BlobError as err:
        raise OpDiagnostic(err.op, err.message) from None
    return module


def _clarify(err: ParseError, ctx: Context | None = None) -> str:
    """Make xDSL's parse errors say what was found, and where MLIR would say it.

    Some messages are only a suffix (" in block definition"); an unregistered op is
    reported at the token after its name; control characters are shown escaped.
    """
    msg = _printable(err.msg)
    content = err.span.input.content
    unknown = re.fullmatch(r"Operation (\S+) is not registered", msg)
    if unknown and isinstance(content, str):
        name = unknown.group(1)
        at = content.rfind(name, content.rfind("\n", 0, err.span.start) + 1, err.span.start)
        if at >= 0:
            err.span = replace(err.span, start=at, end=at + len(name))
        dialect = name.split(".", 1)[0]
        if "." in name and ctx is not None and ctx.get_optional_dialect(dialect) is None:
            return (f"unknown op '{name}' (no dialect '{dialect}'; "
                    f"--allow-unregistered-dialect accepts it)")
        return f"unknown op '{name}'"
    at_eof = err.span.start >= len(content)
    if at_eof and "end of" not in msg:
        return f"unexpected end of input{msg if msg.startswith(' ') else ': ' + msg}"
    if msg.startswith(" "):
        return f"unexpected '{_printable(err.span.text)}'{msg}"
    return msg


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() or c in "\n\t" else f"\\x{ord(c):02x}" for c in text)


def format_parse_error(err: ParseError) -> str:
    """A parse error as MLIR prints it: `file:line:col: error: message`, then the source
    line with carets under the offending text (and notes for other places involved)."""
    def located(span, kind: str, message: str) -> list[str]:
        context = _printable(span.print_with_context()).rstrip("\n").split("\n")[1:]
        return [f"{span.get_location()}: {kind}: {message}", *context]

    lines = located(err.span, "error", err.msg)
    if isinstance(err, MultipleSpansParseError):
        for span, msg in err.refs:
            span = replace(span, line_offset=err.span.line_offset)
            lines += located(span, "note", msg or (err.ref_text or "").rstrip(":"))
    return "\n".join(lines)


def print_module(module: ModuleOp, stream: IO[str], ctx: Context, *, generic: bool = False,
                 debuginfo: bool = False, properties_as_attributes: bool = False) -> None:
    """Print `module` and its `{-# dialect_resources #-}` section, as mlir-opt would."""
    printer = Printer(stream=stream, print_generic_format=generic, print_debuginfo=debuginfo,
                      print_properties_as_attributes=properties_as_attributes)
    with resources.blobs_for_printing(module):
        printer.print_op(module)
        # Our blobs live under `builtin`, which a context may not have loaded yet.
        printer.print_metadata([Builtin, *ctx.loaded_dialects])
    stream.write("\n")


def location_text(op: Operation) -> str | None:
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return None


def position_text(op: Operation) -> str | None:
    """Where `op` is, for messages: `file:line:col`, else `#index in @func` for an op of a
    symbol's body (a `glow_ir.func` built in memory has no locations), else None."""
    loc = location_text(op)
    if loc is not None:
        return loc
    parent, block = op.parent_op(), op.parent_block()
    name = getattr(parent, "sym_name", None)
    if block is None or name is None:
        return None
    return f"#{list(block.ops).index(op)} in @{name.data}"


def node_text(op: Operation) -> str | None:
    """Where an op without a file location came from, for messages: the ONNX node it was
    imported from (`node 'conv1'`, its `NameLoc`), else its place in a symbol's body
    (`#3 in @main`), else None."""
    loc = op.location
    if isinstance(loc, NameLoc):
        return f"node '{loc.desc.data}'"
    return position_text(op)


@dataclass
class OpDiagnostic(Exception):
    """A diagnostic anchored at an op: prints as `file:line:col: error: 'name' op msg`
    (an op without a file location: `error: 'name' op msg (at node 'conv1')`)."""

    op: Operation
    message: str

    def __str__(self) -> str:
        where = location_text(self.op)
        if where:
            return f"{where}: error: '{self.op.name}' op {self.message}"
        at = node_text(self.op)
        return f"error: '{self.op.name}' op {self.message}" + (f" (at {at})" if at else "")

    @property
    def line(self) -> int | None:
        """The op's line in its file, when it has a file location."""
        loc = self.op.location
        return loc.line.data if isinstance(loc, FileLineColLoc) else None


class DiagnosticError(UserError, PassFailedException):
    """Errors attached to ops, reported together: each an `OpDiagnostic` (the op, so its
    location, and a message), after an optional `summary` line saying what they have in
    common. What a pass raises when it refuses its input (a `PassFailedException`), and
    the user's error where the input is the user's (a `UserError`: the tools print it
    without a traceback, `compile()` lets it through with its diagnostics).

    A pass collects every problem of the module before it raises (a whole model's
    problems in one report); `glow-opt --verify-diagnostics` checks each diagnostic
    against the `// expected-error` annotation of its op's line."""

    MAX_PRINTED = 20
    """Diagnostics `str()` lists; the others are counted (all stay in `diagnostics`)."""

    def __init__(self, diagnostics: OpDiagnostic | Sequence[OpDiagnostic],
                 summary: str | None = None):
        self.diagnostics: list[OpDiagnostic] = (
            [diagnostics] if isinstance(diagnostics, OpDiagnostic) else list(diagnostics))
        self.summary = summary
        super().__init__(str(self))

    @classmethod
    def at(cls, op: Operation, message: str, summary: str | None = None) -> DiagnosticError:
        """One error at `op`."""
        return cls([OpDiagnostic(op, message)], summary)

    def ops(self) -> list[Operation]:
        return [d.op for d in self.diagnostics]

    def __str__(self) -> str:
        lines = [self.summary] if self.summary else []
        lines += [str(d) for d in self.diagnostics[:self.MAX_PRINTED]]
        if len(self.diagnostics) > self.MAX_PRINTED:
            lines.append(f"... and {len(self.diagnostics) - self.MAX_PRINTED} more")
        return "\n".join(lines)

    def __reduce__(self):  # picklable (worker processes), with its text only
        return (UserError, (str(self),))


class Diagnostics:
    """Collects errors at ops while a pass looks at the whole module, then raises them in
    one `DiagnosticError` (`check`)."""

    def __init__(self) -> None:
        self.errors: list[OpDiagnostic] = []

    def error(self, op: Operation, message: str) -> None:
        self.errors.append(OpDiagnostic(op, message))

    def __bool__(self) -> bool:
        return bool(self.errors)

    def check(self, summary: str | None = None,
              cls: type[DiagnosticError] = DiagnosticError) -> None:
        """Raise the collected errors, if any (`summary` may be a function of them)."""
        if self.errors:
            raise cls(self.errors, summary)


def _walk_post_order(op: Operation) -> Iterator[Operation]:
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                yield from _walk_post_order(child)
    yield op


def check_dominance(module: Operation) -> None:
    """Raise `OpDiagnostic` at the first op using a value its own block (or the block of
    one of its ancestors) defines later, or that the op itself defines: MLIR's "operand
    #N does not dominate this use". xDSL's parser and verifier accept such IR, and passes
    then crash on it (lower-to-instr with a KeyError; dse looped forever in `root_buffer`
    on a view of itself). One walk, linear in ops and operands: the values visible at an
    op are the arguments and earlier results of each block on the way down. A use of a
    value of another block of the same region (a CFG, as the LLVM lowering makes) is not
    checked: that needs the dominator tree, and our IR graphs are single blocks. So this
    never rejects valid IR, but misses an out-of-order CFG."""
    visible: set[SSAValue] = set()
    open_blocks: set[Block] = set()

    def walk(block: Block) -> None:
        open_blocks.add(block)
        defined: list[SSAValue] = list(block.args)
        visible.update(defined)
        for op in block.ops:
            for i, value in enumerate(op.operands):
                if value not in visible and _defining_block(value) in open_blocks:
                    raise OpDiagnostic(op, f"operand #{i} does not dominate this use "
                                           f"({_definition_text(value, op)})")
            for region in op.regions:
                for inner in region.blocks:
                    walk(inner)
            visible.update(op.results)
            defined.extend(op.results)
        visible.difference_update(defined)
        open_blocks.discard(block)

    for region in module.regions:
        for block in region.blocks:
            walk(block)


def _defining_block(value: SSAValue) -> Block | None:
    owner = value.owner
    return owner if isinstance(owner, Block) else owner.parent_block()


def _definition_text(value: SSAValue, user: Operation) -> str:
    """Where the value a use does not see is defined, as MLIR's note says it."""
    owner = value.owner
    if owner is user:
        return "defined by this op"
    where = location_text(owner) if isinstance(owner, Operation) else None
    return f"defined later, at {where}" if where else "defined later in the block"


VERIFY_EACH_STEP_ENV = "GLOW_MLIR_VERIFY_EACH_STEP"
"""Set (to anything but '' or '0'), the compiler verifies the IR it generates after every
internal step: each step of the graph pipeline, each pass of the instruction pipeline,
the generated loop IR. tests/conftest.py sets it for the test suite.

Unset (a user's compile), each pipeline's result is verified once (`run_pipeline`
verifies after the graph pipeline and after the instruction pipeline; LLVM verifies
every LLVM module it is given): verifying after every step was most of the graph and
instruction passes' time (ResNet-18: ~0.2 s of a 3 s compile; the loop IR alone ~1 s)
and only finds bugs of ours, which the tests look for with the switch on."""


def verify_each_step() -> bool:
    import os

    return os.environ.get(VERIFY_EACH_STEP_ENV, "") not in ("", "0")


def verify_step(module: Operation) -> None:
    """`verify_module` after an internal step, when `verify_each_step()`."""
    if verify_each_step():
        verify_module(module)


def verify_module(module: Operation) -> None:
    """Verify every op, inner ops first, raising `OpDiagnostic` for the first failure.
    Dominance comes first: op verifiers may follow operands (views to their root) and
    assume every value is defined before it is used."""
    check_dominance(module)
    for op in _walk_post_order(module):
        try:
            # verify_() first: it is the op's own checks, and on failure xDSL's verify()
            # would print the whole module into the exception (slow on real models).
            op.verify_()
            op.verify(verify_nested_ops=False)
        except VerifyException as err:
            message = _strip_xdsl_prefix(str(err))
            raise _symbol_redefinition(op, message) or OpDiagnostic(op, message) from err


def verify_after_pass(module: Operation) -> None:
    """`verify_module` between the passes of a pipeline, timed as a `progress.VERIFY` row
    (not charged to the pass, nor left in the pipeline's "(outside passes)")."""
    with progress.timed_pass(progress.VERIFY):
        verify_module(module)


def _symbol_redefinition(table: Operation, message: str) -> OpDiagnostic | None:
    """xDSL reports a symbol defined twice at the symbol table (an implicit module has no
    location); MLIR at the second definition."""
    m = re.fullmatch(r'Redefinition of symbol "(.*)"', message.strip())
    if m is None:
        return None
    seen = False
    for region in table.regions:
        for block in region.blocks:
            for child in block.ops:
                name = child.properties.get("sym_name") or child.attributes.get("sym_name")
                if isinstance(name, StringAttr) and name.data == m.group(1):
                    if seen:
                        return OpDiagnostic(child, f"redefinition of symbol named "
                                                   f"'{m.group(1)}'")
                    seen = True
    return None


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
    "check_dominance",
    "format_parse_error",
    "OpDiagnostic",
    "DiagnosticError",
    "Diagnostics",
    "location_text",
    "node_text",
    "ParseError",
]
