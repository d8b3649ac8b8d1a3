"""glow-opt: parse, verify, transform and print glow-mlir IR, the way mlir-opt does.

    glow-opt in.mlir --pass-a --pass-b=opt=val -o out.mlir     # MLIR-style flags, in order
    glow-opt in.mlir -p 'pass-a,pass-b{opt=val}'               # xDSL pipeline
    glow-opt in.mlir --pass-pipeline='builtin.module(pass-a)'  # mlir-opt's pipeline
    glow-opt in.mlir --pass-a -p pass-b --pass-c               # a, b, c: in the order given
    glow-opt invalid.mlir --split-input-file --verify-diagnostics

Built on xDSL's `xDSLOptMain` (its flags all work); what it adds: every op located at
file:line:col, diagnostics as `file:line:col: error: 'op' op message`, exit status 1 and no
traceback on bad input (`--debug` shows it), weights kept as resource blobs, MLIR's
`// expected-error` checking for `--verify-diagnostics`, and mlir-opt's `--split-input-file`
behaviour (every chunk is processed; a bad one is reported and makes the status 1),
`--time-passes` as mlir-opt's `-mlir-timing` tree on stderr (parse, the pipeline and
each pass in it, output; CPU and wall time). `-` names
stdin (and stdout for `-o`).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import traceback
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from io import StringIO
from types import UnionType
from typing import IO, NoReturn, Union, get_args, get_origin, get_type_hints

from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.transforms import get_all_passes
from xdsl.utils.arg_spec import _convert_arg_to_type, parse_pipeline  # xDSL's own check
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

import glow_mlir.backends  # noqa: F401 - the graph passes find backends through it
from glow_mlir.conversion.passes import GLOW_PASSES as PASSES
from glow_mlir.dialects.registry import DIALECTS
from glow_mlir.ir import progress
from glow_mlir.ir.errors import UserError, file_error
from glow_mlir.ir.file_kinds import not_mlir
from glow_mlir.ir.text import (
    DiagnosticError,
    OpDiagnostic,
    format_parse_error,
    parse_module,
    print_module,
    verify_after_pass,
    verify_module,
)
from glow_mlir.tools.errors import report, usage_error, user_errors_exit

_PASS_FLAG = re.compile(r"--?([A-Za-z0-9][A-Za-z0-9_-]*)(?:=(.*))?")


def pass_flag(arg: str, pass_names: Collection[str]) -> str | None:
    """The pipeline element an MLIR-style pass flag (`--name`, `--name=opts`) stands for,
    or None when `arg` is not one. `--name=a=1 b=2` is `name{a=1 b=2}`."""
    m = _PASS_FLAG.fullmatch(arg)
    if not m or m.group(1) not in pass_names:
        return None
    name, opts = m.group(1), m.group(2)
    return f"{name}{{{opts}}}" if opts else name


def split_pass_flags(argv: Sequence[str], pass_names: set[str]) -> tuple[list[str], list[str]]:
    """Pull MLIR-style pass flags out of argv, keeping their order."""
    rest: list[str] = []
    passes: list[str] = []
    for arg in argv:
        element = pass_flag(arg, pass_names)
        if element is None:
            rest.append(arg)
        else:
            passes.append(element)
    return rest, passes


_PIPELINE_FLAGS = ("-p", "--passes", "--pass-pipeline")


def is_pipeline_flag(arg: str) -> bool:
    """Whether `arg` gives a pass pipeline (xDSL's `-p`/`-pSPEC`/`--passes`, mlir-opt's
    `--pass-pipeline`), with or without `=SPEC`."""
    return arg.split("=", 1)[0] in _PIPELINE_FLAGS or (
        arg.startswith("-p") and not arg.startswith("--"))


def pipeline_flags(argv: Sequence[str], pass_names: Collection[str] = ()) -> list[str]:
    """The flags of `argv` that give a pass pipeline, as the user spelt them (a pass flag
    such as `-printf-to-llvm` is not one)."""
    return [a for a in argv if is_pipeline_flag(a) and pass_flag(a, pass_names) is None]


def pass_flags_before_pipeline(argv: Sequence[str], pass_names: set[str]) -> int:
    """How many pass flags come before the pipeline flag in `argv` (all of them when there
    is none): the pipeline runs where it stands among them, as mlir-opt runs its pass
    flags in the order they are given."""
    count = 0
    for arg in argv:
        if pass_flag(arg, pass_names) is not None:
            count += 1
        elif is_pipeline_flag(arg):
            return count
    return count


_ANCHOR = re.compile(r"\s*([A-Za-z_][\w.]*)\s*\(")


def strip_module_anchor(spec: str) -> str:
    """The pipeline inside mlir-opt's outer `builtin.module(...)` anchor, which xDSL's
    pipeline syntax lacks (every pass here runs on the module), with mlir-opt's spaces
    around commas dropped (xDSL's parser takes none). Any other anchor (`func.func(...)`,
    nested) is refused: xDSL has no pass nesting to run it."""
    original = spec

    def bad(what: str) -> UserError:
        return UserError(f"invalid pass pipeline '{original}': {what}")

    found = _ANCHOR.match(spec)
    offset = 0  # where `spec` starts in `original`
    if found and found.group(1) == "builtin.module":
        close = _closing_paren(spec, found.end() - 1)
        if close is None:
            raise bad(f"the '(' at column {found.end()} is never closed")
        if spec[close + 1:].strip():
            raise bad(f"unexpected text after the anchor's ')' at column {close + 2}")
        spec, offset = spec[found.end():close], found.end()
    depth, pieces, start = 0, [], 0
    for i, c in enumerate(spec):
        depth += (c == "{") - (c == "}")
        if depth:
            continue
        if c == "(":
            anchor = re.search(r"([\w.]*)\s*$", spec[:i]).group(1)  # type: ignore[union-attr]
            raise bad(f"the anchor '{anchor or c}(...)' is not supported: only an outer "
                      f"'builtin.module(...)', whose passes run on the module")
        if c == ")":
            raise bad("a ')' that closes nothing")
        if c == ",":
            pieces.append(spec[start:i].strip())
            start = i + 1
    if pieces and not spec[start:].strip():  # xDSL's parser takes a trailing ',' silently
        raise bad(f"the ',' at column {offset + start} has no pass after it")
    return ",".join([*pieces, spec[start:].strip()])


def _closing_paren(spec: str, open_at: int) -> int | None:
    """Index of the ')' closing the '(' at `open_at` (parentheses inside pass options'
    braces do not count), or None."""
    depth = braces = 0
    for i in range(open_at, len(spec)):
        braces += (spec[i] == "{") - (spec[i] == "}")
        if braces:
            continue
        depth += (spec[i] == "(") - (spec[i] == ")")
        if depth == 0:
            return i
    return None


# What a bad chunk of input can raise: reported per chunk, not as an internal error.
CHUNK_ERRORS: tuple[type[BaseException], ...] = (ParseError, OpDiagnostic, DiagnosticException,
                                                 UserError)


class GlowOptMain(xDSLOptMain):
    version_format = "glow-opt (glow-mlir) built on xdsl {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None):
        argv = list(sys.argv[1:] if args is None else args)
        names = set(get_all_passes()) | set(PASSES)
        given = pipeline_flags(argv, names)
        if len(given) > 1:  # argparse would keep the last one only
            usage_error("glow-opt", f"{' and '.join(given)}: give one pass pipeline (its "
                                    f"passes separated by commas), not {len(given)}")
        self.flags_before_pipeline = pass_flags_before_pipeline(argv, names)
        argv, self.flag_passes = split_pass_flags(argv, names)
        super().__init__(description="glow-mlir modular optimizer driver", args=argv)
        if self.args.input_file == "-":  # MLIR's name for stdin
            self.args.input_file = None
        if self.args.output_file == "-":
            self.args.output_file = None

    # ------------------------------------------------------------------ registration
    def register_all_dialects(self):
        for name, factory in get_all_dialects().items():
            if name not in DIALECTS:
                self.ctx.register_dialect(name, factory)
        for name, factory in DIALECTS.items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        for name, factory in {**get_all_passes(), **PASSES}.items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        """Only the outputs that work on our IR: `mlir` (text) and `llvm` (LLVM IR from a
        module in the LLVM dialect). xDSL's other targets (assembly, wasm, wgsl, csl, ...)
        read dialects we never produce and failed with internal errors or printed nothing."""
        super().register_all_targets()
        for name in list(self.available_targets):
            if name not in ("mlir", "llvm"):
                del self.available_targets[name]

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument("--debug", action="store_true",
                                help="show Python tracebacks of internal errors")
        # mlir-opt's spelling of -p, a flag of its own so that argparse names it in its
        # messages (`argument --pass-pipeline: expected one argument`) and in --help
        arg_parser.add_argument("--pass-pipeline", metavar="SPEC", default="",
                                help="mlir-opt's spelling of -p; an outer "
                                     "'builtin.module(...)' anchor is accepted")
        arg_parser.add_argument("--list-passes", action="store_true",
                                help="print every registered pass (glow-mlir's, then "
                                     "xDSL's) with its one-line description and its "
                                     "options with their defaults, then exit")
        arg_parser.epilog = (
            "Every registered pass is also a flag of its own, as in mlir-opt: --NAME or "
            "--NAME='OPT=VAL OPT2=VAL' (the names are listed under -p, described by "
            "--list-passes). Pass flags run in "
            "the order given, and a -p/--pass-pipeline pipeline runs where it stands "
            "among them.")

        # A bad flag (an unknown pass among them) is bad input: status 1, as every tool.
        def error(message: str) -> NoReturn:
            hint = " (not an option or a registered pass)" if "unrecognized" in message else ""
            usage_error("glow-opt", message + hint)

        # xDSL builds the parser, so its `error` is replaced on the instance
        arg_parser.error = error  # type: ignore[method-assign]

    # ------------------------------------------------------------------ pipeline
    def setup_pipeline(self) -> None:
        given = self.args.passes or self.args.pass_pipeline
        passes = strip_module_anchor(given) if given else ""
        before = self.flags_before_pipeline
        spec = ",".join(p for p in [*self.flag_passes[:before], passes,
                                    *self.flag_passes[before:]] if p)
        # --time-passes: each pass is timed (`progress.timed_pass`) from the callback before
        # it to the one after it, so verification and --print-ir-between-passes are not
        # charged to it; the passes a composite pass runs time themselves under it.
        self._pass_timer: AbstractContextManager[None] | None = None

        def after_each_pass(prev: ModulePass | None, module: ModuleOp,
                            nxt: ModulePass | None) -> None:
            if prev is not None:
                self._stop_pass_timer()
                if not self.args.disable_verify:
                    verify_after_pass(module)
                if nxt is not None and self.args.print_between_passes:
                    print(f"// -----// IR after {prev.name} //----- //", file=sys.stderr)
                    Printer(stream=sys.stderr).print_op(module)
                    print(file=sys.stderr)
            if nxt is not None:
                self._pass_timer = progress.timed_pass(nxt.name)
                self._pass_timer.__enter__()

        try:
            self.pipeline = PassPipeline.parse_spec(self.available_passes, spec, after_each_pass)
        except ArgSpecParseError as err:  # the syntax: xDSL's message is a caret diagram
            raise UserError(f"invalid pass pipeline '{spec}': "
                            f"{pipeline_syntax_error(spec, str(err))}") from None
        except ValueError as err:  # unknown pass, unknown or ill-typed pass option
            message = str(err)
            if message.startswith("Unrecognized passes"):
                message = message.replace("Unrecognized passes", "unknown pass(es)")
            else:
                message = pass_option_error(self.available_passes, spec) or message
            raise UserError(f"invalid pass pipeline '{spec}': {message}") from None

    def _stop_pass_timer(self) -> None:
        if self._pass_timer is not None:
            timer, self._pass_timer = self._pass_timer, None
            timer.__exit__(None, None, None)

    # ------------------------------------------------------------------ running
    def _chunks(self) -> list[tuple[str, int]]:
        stream, _ = self.get_input_stream()
        try:
            raw = stream.read()
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()
        hint = not_mlir(raw, self.get_input_name())
        if hint is not None:  # before "not UTF-8": say what the file is and what takes it
            raise UserError(hint)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            line = raw.count(b"\n", 0, err.start) + 1
            col = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
            raise UserError(
                f"{self.get_input_name()}:{line}:{col}: error: input is not UTF-8 text "
                f"(byte 0x{raw[err.start]:02x} at offset {err.start})"
            ) from None
        if not self.args.split_input_file:
            return [(text, 0)]
        chunks, offset = [], 0
        for chunk in text.split("// -----"):
            chunks.append((chunk, offset))
            offset += chunk.count("\n")
        return chunks

    def process_chunk(self, text: str, offset: int) -> str:
        with progress.stage("parse"):  # and verify, as mlir-opt's "Parser" row
            module = parse_module(self.ctx, text, self.get_input_name(), offset,
                                  implicit_module=not self.args.no_implicit_module)
            if not self.args.disable_verify:
                verify_module(module)
        with progress.stage("pipeline"):
            try:
                self.apply_passes(module)
            finally:  # a pass that failed stops its timer here
                self._stop_pass_timer()
        with progress.stage("output"):
            return self._output(module)

    def _output(self, module: ModuleOp) -> str:
        if self.args.target != "mlir":
            from glow_mlir.ir import resources

            try:
                with resources.blobs_for_printing(module):
                    return self.output_resulting_program(module)
            except NotImplementedError as err:  # xDSL's LLVM translation met another dialect
                raise UserError(f"-t {self.args.target} takes a module in the LLVM dialect "
                                f"(glow-compile --emit llvm prints one): {err}") from None
        out = StringIO()
        print_module(module, out, self.ctx, generic=self.args.print_op_generic,
                     debuginfo=self.args.print_debuginfo,
                     properties_as_attributes=self.args.print_no_properties)
        return out.getvalue()

    def prepare_output(self) -> IO[str]:
        try:
            return super().prepare_output()
        except OSError as err:
            raise file_error(self.args.output_file, err, action="write") from None

    def run(self):
        """Process every chunk, as mlir-opt does: a bad chunk is reported on stderr, the
        others are still processed and printed, and the exit status is 1 if any failed.
        With --time-passes, the times of every chunk are summed into one report, printed
        whether or not a chunk failed."""
        if not self.args.time_passes:
            return self._run()
        with progress.recording(show=False) as recorder:
            try:
                return self._run()
            finally:
                recorder.close()  # the clock stops before the report is printed
                recorder.print_report(sys.stderr, "Pass execution timing report")

    def _run(self):
        try:
            chunks = self._chunks()
        except OSError as err:
            raise file_error(self.get_input_name(), err) from None
        if self.args.verify_diagnostics:
            sys.exit(verify_diagnostics(self, chunks))
        output = self.prepare_output()
        failed = False
        try:
            for i, (text, offset) in enumerate(chunks):
                if i > 0:
                    output.write("// -----\n")
                try:
                    output.write(self.process_chunk(text, offset))
                except CHUNK_ERRORS as err:
                    if self.args.parsing_diagnostics and isinstance(err, ParseError):
                        print(format_parse_error(err))  # xdsl-opt: to stdout, status 0
                        continue
                    if len(chunks) == 1:
                        raise
                    if self.args.debug:
                        traceback.print_exc()
                    print(report("glow-opt", err), file=sys.stderr)
                    failed = True
                finally:
                    output.flush()  # a later chunk's error must not lose this one's output
        finally:
            if output is not sys.stdout:
                output.close()
        if failed:
            sys.exit(1)


# ====================================================================== --verify-diagnostics

_EXPECTED = re.compile(
    r"//\s*expected-(error|warning|remark|note)\s*(@[^\s{]+)?\s*\{\{(.*?)\}\}")


def pass_option_error(available: Mapping[str, Callable[[], type[ModulePass]]],
                      spec: str) -> str | None:
    """`pass: option device-memory-kib takes a whole number, got 'abc'` or `pass: unknown
    option bogus (its options: num-devices, ...)`, as glow-compile words its flags, for
    the first bad option in `spec`, every pass's: xDSL's `ModulePass.from_spec` says only
    `Incompatible types: given ('abc',), expected <class 'int'>`, or lists the options
    with the underscores of their Python fields. None when no option is at fault."""
    for pass_spec in parse_pipeline(spec):
        if pass_spec.name not in available:
            continue
        cls = available[pass_spec.name]()
        fields = [f for f in dataclasses.fields(cls) if f.init and f.name != "name"]
        types = get_type_hints(cls)
        known = {f.name.replace("_", "-"): f for f in fields}
        for given, value in pass_spec.parameters.items():
            option = given.replace("_", "-")
            field = known.get(option)
            if field is None:
                return (f"{pass_spec.name}: unknown option {option} (its options: "
                        f"{', '.join(known) or 'none'})")
            try:
                _convert_arg_to_type(value, types[field.name])
            except ValueError:
                shown = ",".join(map(str, value)) if value else ""
                return (f"{pass_spec.name}: option {option} takes "
                        f"{_kind_of_value(types[field.name])}, got '{shown}'")
    return None


def _kind_of_value(hint: object) -> str:
    """How an option's type reads to a user: `a whole number`, `true or false`, ..."""
    args = [a for a in get_args(hint) if a is not type(None)]
    if get_origin(hint) in (Union, UnionType) and len(args) == 1:
        return _kind_of_value(args[0])
    if get_origin(hint) is tuple:
        return f"a comma-separated list of {_kind_of_value(args[0]).removeprefix('a ')}s" \
            if args else "a comma-separated list"
    return {int: "a whole number", float: "a number", bool: "true or false",
            str: "a string"}.get(hint, str(hint))  # type: ignore[call-overload]


_SPEC_COLUMN = re.compile(r"^pass-pipeline:\d+:(\d+)$", re.M)
_UNQUOTED_VALUE = re.compile(r"([\w-]+)=([^\s{}\"]+)")


def pipeline_syntax_error(spec: str, message: str) -> str:
    """One line for xDSL's ArgSpecParseError `message` on pipeline `spec`, which is
    "Error parsing ...", a `pass-pipeline:1:COL` line, the spec, a caret and the reason
    (it keeps only that text). An unquoted option value with a character xDSL's lexer
    takes only inside quotes (`profile=P2.yaml`: '.', '/') gets the quoted spelling."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    reason = lines[-1] if lines else message
    found = _SPEC_COLUMN.search(message)
    if found is None:
        return reason
    col = int(found.group(1))
    for option in _UNQUOTED_VALUE.finditer(spec):
        name, value = option.groups()
        if option.start(2) <= col - 1 < option.end(2):
            bad = next((c for c in value if not (c.isalnum() or c in "_-")), None)
            if bad is not None:
                return (f"option {name}: a value with '{bad}' must be quoted: "
                        f"{name}=\"{value}\"")
    return f"at column {col}: {reason[0].lower()}{reason[1:]}"


def _expectations(text: str, offset: int, name: str = "") -> list[tuple[int, str, str]]:
    """MLIR's `// expected-error @+1 {{message}}` annotations as (line, kind, message).

    `@+N`/`@-N` count from the annotation's line, `@above`/`@below` mean -1/+1.
    """
    out = []
    for idx, line in enumerate(text.split("\n")):
        for m in _EXPECTED.finditer(line):
            kind, where, message = m.group(1), m.group(2), m.group(3)
            lineno = idx + 1 + offset
            if where == "@above":
                lineno -= 1
            elif where == "@below":
                lineno += 1
            elif where:
                if not re.fullmatch(r"@[+-]\d+", where):
                    raise UserError(f"{name}:{lineno}: invalid expected-{kind} location "
                                    f"'{where}' (use @+N, @-N, @above or @below)")
                lineno += int(where[1:])
            out.append((lineno, kind, message))
    return out


def _diagnostics_of(err: BaseException) -> list[tuple[int | None, str]]:
    """(line, message) of every error `err` reports: a parse error, an op's verifier or
    pass diagnostic (`'op' op message`, at the op's line), each diagnostic a pass
    collected (`DiagnosticError`), or another error's text (no line)."""
    if isinstance(err, ParseError):
        return [(err.span.get_location().line, err.msg)]
    if isinstance(err, OpDiagnostic):
        return [(err.line, f"'{err.op.name}' op {err.message}")]
    if isinstance(err, DiagnosticError) and err.diagnostics:
        return [(d.line, f"'{d.op.name}' op {d.message}") for d in err.diagnostics]
    return [(None, str(err))]


def verify_diagnostics(main: GlowOptMain, chunks: list[tuple[str, int]]) -> int:
    """Each chunk must fail with exactly the errors its annotations expect (MLIR
    semantics): an error that no annotation expects, and an annotation whose diagnostic
    was not produced (at that line, containing that text), are both failures (exit
    status 1). A pass that collects several errors (`DiagnosticError`) has each checked
    against the annotations of its op's line.

    Without any `expected-*` annotation in the input, behave as xdsl-opt does: print
    each chunk's diagnostic (or output) to stdout and exit 0, so FileCheck can check it.
    """
    name = main.get_input_name()
    expectations = [_expectations(text, off, name) for text, off in chunks]
    annotated = any(expectations)
    failures = 0

    def fail(message: str) -> None:
        nonlocal failures
        print(message, file=sys.stderr)
        failures += 1

    for (text, offset), expected in zip(chunks, expectations):
        try:
            result = main.process_chunk(text, offset)
            got: list[tuple[int | None, str]] = []
        except (ParseError, OpDiagnostic, DiagnosticException) as err:
            result = None
            got = _diagnostics_of(err)
            if not annotated:
                print(format_parse_error(err) if isinstance(err, ParseError) else err)
        if not annotated:
            if not got and result is not None:
                print(result, end="")
            continue
        unmatched = [e for e in expected if e[1] == "error"]
        for gline, gmsg in got:
            match = next((e for e in unmatched if e[0] == gline and e[2] in gmsg), None)
            if match is None:
                where = f"{name}:{gline}" if gline is not None else name
                fail(f"{where}: error: unexpected error: {gmsg}")
            else:
                unmatched.remove(match)
        not_produced = [e for e in expected if e[1] != "error"] + unmatched
        for line, kind, msg in sorted(not_produced, key=lambda e: e[0]):
            fail(f"{name}:{line}: error: expected {kind} \"{msg}\" was not produced")
    return 1 if failures else 0


def describe_pass(cls: type[ModulePass]) -> tuple[str, str]:
    """(the first paragraph of the pass class's own docstring, on one line; its options
    as `opt=default`, space-separated): a dataclass without a docstring gets a generated
    signature, which says nothing, so it counts as none."""
    doc = cls.__dict__.get("__doc__") or ""
    if doc.startswith(f"{cls.__name__}("):
        doc = ""
    line = " ".join(doc.strip().split("\n\n")[0].split())  # the first paragraph
    options = []
    for f in dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ():
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = "(required)"
        if isinstance(default, bool):
            default = str(default).lower()
        elif isinstance(default, tuple | list):
            default = ",".join(map(str, default))
        options.append(f"{f.name.replace('_', '-')}={default}")
    return line, " ".join(options)


def pass_listing(groups: Mapping[str, Mapping[str, Callable[[], type[ModulePass]]]]) -> str:
    """`--list-passes`: under each group's title, every pass by name with its one-line
    description (`describe_pass`) and, on the next line, its options."""
    out = []
    for title, factories in groups.items():
        out.append(f"{title}:")
        for name in sorted(factories):
            try:
                line, options = describe_pass(factories[name]())
            except Exception as err:  # noqa: BLE001 - an optional dependency of xDSL's pass
                line, options = f"(cannot load: {err})", ""
            out.append(f"  {name:<34} {line}".rstrip())
            if options:
                out.append(f"  {'':<34} options: {options}")
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    # xDSL's --disable-verify replaces `Attribute.__post_init__` for the whole process and
    # never puts it back: restored here, or every attribute built after one in-process call
    # (a test, a notebook) would skip its verifier.
    post_init = Attribute.__post_init__
    try:
        with user_errors_exit("glow-opt", "--debug" in argv):
            opt = GlowOptMain(argv)
            if opt.args.list_passes:
                xdsl_passes = {k: v for k, v in get_all_passes().items() if k not in PASSES}
                sys.stdout.write(pass_listing({"glow-mlir passes": PASSES,
                                               "xDSL passes": xdsl_passes}))
                return
            opt.run()
    finally:
        Attribute.__post_init__ = post_init  # type: ignore[method-assign]  # undoes xDSL's patch


if __name__ == "__main__":
    main()
