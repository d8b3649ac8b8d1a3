"""glow-opt: parse, verify, transform and print glow-mlir IR, the way mlir-opt does.

    glow-opt in.mlir --pass-a --pass-b=opt=val -o out.mlir     # MLIR-style flags, in order
    glow-opt in.mlir -p 'pass-a,pass-b{opt=val}'               # xDSL pipeline
    glow-opt invalid.mlir --split-input-file --verify-diagnostics

Built on xDSL's `xDSLOptMain` (its flags all work); what it adds: every op located at
file:line:col, diagnostics as `file:line:col: error: 'op' op message`, exit status 1 and no
traceback on bad input (`--debug` shows it), weights kept as resource blobs, and MLIR's
`// expected-error` checking for `--verify-diagnostics`.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from io import StringIO

from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.transforms import get_all_passes
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from glow_mlir.ir.text import OpDiagnostic, location_text, parse_module, print_module, verify_module
from glow_mlir.tools.errors import UserError, user_errors_exit
from glow_mlir.universe import DIALECTS, PASSES


def split_pass_flags(argv: Sequence[str], pass_names: set[str]) -> tuple[list[str], list[str]]:
    """Pull MLIR-style pass flags (`--name`, `--name=opts`) out of argv, keeping their order.

    `--name=a=1 b=2` becomes the pipeline element `name{a=1 b=2}`.
    """
    rest: list[str] = []
    passes: list[str] = []
    for arg in argv:
        m = re.fullmatch(r"--?([A-Za-z0-9][A-Za-z0-9_-]*)(?:=(.*))?", arg)
        if m and m.group(1) in pass_names:
            name, opts = m.group(1), m.group(2)
            passes.append(f"{name}{{{opts}}}" if opts else name)
        else:
            rest.append(arg)
    return rest, passes


class GlowOptMain(xDSLOptMain):
    version_format = "glow-opt (glow-mlir) built on xdsl {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None):
        argv = list(sys.argv[1:] if args is None else args)
        names = set(get_all_passes()) | set(PASSES)
        argv, self.flag_passes = split_pass_flags(argv, names)
        super().__init__(description="glow-mlir modular optimizer driver", args=argv)

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

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument("--debug", action="store_true",
                                help="show Python tracebacks of internal errors")

    # ------------------------------------------------------------------ pipeline
    def setup_pipeline(self):
        spec = ",".join(p for p in [self.args.passes, *self.flag_passes] if p)

        def after_each_pass(prev: ModulePass | None, module: ModuleOp,
                            nxt: ModulePass | None) -> None:
            if prev is None:
                return
            if not self.args.disable_verify:
                verify_module(module)
            if nxt is not None and self.args.print_between_passes:
                print(f"// -----// IR after {prev.name} //----- //", file=sys.stderr)
                Printer(stream=sys.stderr).print_op(module)
                print(file=sys.stderr)

        self.pipeline = PassPipeline.parse_spec(self.available_passes, spec, after_each_pass)

    # ------------------------------------------------------------------ running
    def _chunks(self) -> list[tuple[str, int]]:
        stream, _ = self.get_input_stream()
        raw = stream.read()
        stream.close()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise UserError(
                f"{self.get_input_name()}: input is not UTF-8 text "
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
        module = parse_module(self.ctx, text, self.get_input_name(), offset)
        if not self.args.disable_verify:
            verify_module(module)
        self.apply_passes(module)
        out = StringIO()
        print_module(module, out, self.ctx, generic=self.args.print_op_generic,
                     debuginfo=self.args.print_debuginfo)
        return out.getvalue()

    def run(self):
        try:
            chunks = self._chunks()
        except OSError as err:
            raise UserError(f"cannot read {self.get_input_name()}: {err.strerror}") from None
        if self.args.verify_diagnostics:
            sys.exit(verify_diagnostics(self, chunks))
        output = self.prepare_output()
        try:
            for i, (text, offset) in enumerate(chunks):
                if i > 0:
                    output.write("// -----\n")
                output.write(self.process_chunk(text, offset))
                output.flush()  # a later chunk's error must not lose this one's output
        finally:
            if output is not sys.stdout:
                output.close()


# ====================================================================== --verify-diagnostics

_EXPECTED = re.compile(r"//\s*expected-(error|warning|remark|note)\s*(@[^\s{]+)?\s*\{\{(.*?)\}\}")


def _expectations(text: str, offset: int) -> list[tuple[int, str]]:
    """MLIR's `// expected-error @+1 {{message}}` annotations as (line, message)."""
    out = []
    for idx, line in enumerate(text.split("\n")):
        for m in _EXPECTED.finditer(line):
            if m.group(1) != "error":
                continue
            where = m.group(2)
            lineno = idx + 1 + offset
            if where:
                if where in ("@above",):
                    lineno -= 1
                elif where in ("@below",):
                    lineno += 1
                else:
                    lineno += int(where[1:])
            out.append((lineno, m.group(3)))
    return out


def _diagnostic_of(err: BaseException) -> tuple[int | None, str]:
    if isinstance(err, ParseError):
        return err.span.get_location().line, err.msg
    if isinstance(err, OpDiagnostic):
        where = location_text(err.op)
        line = int(where.rsplit(":", 2)[1]) if where else None
        return line, f"'{err.op.name}' op {err.message}"
    return None, str(err)


def verify_diagnostics(main: GlowOptMain, chunks: list[tuple[str, int]]) -> int:
    """Each chunk must fail with exactly the error its annotation expects (MLIR semantics).

    Without any `expected-error` annotation in the input, behave as xdsl-opt does: print
    each chunk's diagnostic to stdout and exit 0, so FileCheck can check it.
    """
    annotated = any(_expectations(text, off) for text, off in chunks)
    failures = 0
    name = main.get_input_name()
    for text, offset in chunks:
        expected = _expectations(text, offset)
        try:
            result = main.process_chunk(text, offset)
            got: tuple[int | None, str] | None = None
        except (ParseError, OpDiagnostic, DiagnosticException) as err:
            result = None
            got = _diagnostic_of(err)
            if not annotated:
                print(err)
        if not annotated:
            if got is None and result is not None:
                print(result, end="")
            continue
        if got is None:
            for line, msg in expected:
                print(f"{name}:{line}: error: expected error \"{msg}\" was not produced",
                      file=sys.stderr)
                failures += 1
            continue
        gline, gmsg = got
        matched = [e for e in expected if e[0] == gline and e[1] in gmsg]
        if not matched:
            print(f"{name}:{gline}: error: unexpected error: {gmsg}", file=sys.stderr)
            failures += 1
        for line, msg in expected:
            if (line, msg) not in matched:
                print(f"{name}:{line}: error: expected error \"{msg}\" was not produced",
                      file=sys.stderr)
                failures += 1
    return 1 if failures else 0


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    with user_errors_exit("glow-opt", "--debug" in argv):
        GlowOptMain(argv).run()


if __name__ == "__main__":
    main()
