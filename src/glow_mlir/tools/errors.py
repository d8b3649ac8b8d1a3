"""How every tool ends on bad input: one clear message on stderr, exit status 1, and no
Python traceback unless `--debug` asks for it. Usage errors (an unknown flag, a bad or
out-of-range value) are bad input too: exit 1 as well, not argparse's 2, so a script
needs one test (`!= 0` or `== 1`) whatever the user got wrong."""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from typing import NoReturn

from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

from glow_mlir.ir.errors import UserError
from glow_mlir.ir.text import DiagnosticError, OpDiagnostic, format_parse_error

# Errors whose message is already a complete diagnostic for the user.
USER_ERRORS: tuple[type[BaseException], ...] = (
    UserError,
    ParseError,
    OpDiagnostic,
    DiagnosticException,
    ArgSpecParseError,
)


def usage_error(tool: str, message: str) -> NoReturn:
    """End a tool on a command-line mistake: `tool: error: message` on one line, exit 1."""
    print(f"{tool}: error: {message} (see {tool} --help)", file=sys.stderr)
    sys.exit(1)


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose usage errors end as `usage_error` does (argparse prints the usage
    and exits 2)."""

    def error(self, message: str) -> NoReturn:
        usage_error(self.prog, message)


class StoreOnce(argparse.Action):
    """Store a flag's value, refusing it a second time: argparse keeps only the last, so
    `--inputs a.npz --inputs b.npz` would silently ignore a.npz."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        if getattr(namespace, self.dest, None) is not None:
            parser.error(f"{option_string} given twice; give it once")
        setattr(namespace, self.dest, values)


def at_least(low: int) -> Callable[[str], int]:
    """An argparse type: a whole number >= low (`--runs 0` is a usage error, not a
    loop that never runs)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value
    return parse


def thread_count(text: str) -> int:
    """An argparse type: a number of threads the cpu backend can compile for (1 to
    `MAX_THREADS`)."""
    from glow_mlir.ir.native_runtime import MAX_THREADS

    value = at_least(1)(text)
    if value > MAX_THREADS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_THREADS}, got {value}")
    return value


def non_negative_float(text: str) -> float:
    """An argparse type for tolerances: a finite number >= 0 (a negative `--rtol` would
    make every comparison fail, NaN every comparison pass)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got '{text}'") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return value


def _located(text: str) -> bool:
    return bool(re.match(r"\S.*?:\d+:\d+: error: ", text))


def _diagnostic_line(tool: str, line: str) -> str:
    """A line of a DiagnosticError as the tool prints it: `file:line:col: error: ...` as it
    is, an error at an op without a file location (`error: 'op' op ... (at node 'x')`)
    and any other line (the summary, "... and 3 more") after the tool's name."""
    if _located(line):
        return line
    if line.startswith("error: "):
        return f"{tool}: {line}"
    return f"{tool}: error: {line}" if not line.startswith("... ") else line


def report(tool: str, err: BaseException) -> str:
    if isinstance(err, ParseError):
        return format_parse_error(err)
    text = str(err).rstrip()
    if isinstance(err, USER_ERRORS):
        if isinstance(err, DiagnosticError):  # the summary, then one line per op
            # once each: the instructions made from one node (a concat's inserts) would
            # say the same thing at the same place
            lines = dict.fromkeys(_diagnostic_line(tool, line) for line in text.split("\n"))
            return "\n".join(lines)
        if isinstance(err, OpDiagnostic) or _located(text):
            return text  # already `file:line:col: error: ...`
        return f"{tool}: error: {text}"
    return (f"{tool}: internal error: {type(err).__name__}: {text}\n"
            f"(this is a bug in glow-mlir; run with --debug for the traceback)")


@contextmanager
def user_errors_exit(tool: str, debug: bool, extra: tuple[type[BaseException], ...] = ()):
    """Turn exceptions into `report` + exit 1; `--debug` keeps the traceback. Warnings
    (an unwritable compile cache, ...) print as one line, `TOOL: warning: ...`, not as
    Python's two lines with a source path (`--debug` keeps those too)."""
    try:
        with warnings.catch_warnings():
            if not debug:
                warnings.showwarning = _one_line_warning(tool)
            yield
    except (KeyboardInterrupt, SystemExit):
        raise
    except BrokenPipeError:
        # The reader went away (`glow-opt x.mlir | head`): not an error of ours. Point
        # stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except BaseException as err:  # noqa: BLE001 - the tool's last line of defence
        if debug:
            traceback.print_exc()
        print(report(tool, err), file=sys.stderr)
        sys.exit(1)


def _one_line_warning(tool: str):
    def show(message, category, filename, lineno, file=None, line=None) -> None:
        print(f"{tool}: warning: {message}", file=sys.stderr)

    return show


def run_main(tool: str, main: Callable[[list[str]], int], argv: list[str]) -> int:
    debug = "--debug" in argv
    with user_errors_exit(tool, debug):
        return main(argv)
    return 1
