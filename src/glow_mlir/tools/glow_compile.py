"""glow-compile: compile an ONNX model and emit one of its stages (grows with the pipeline)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from glow_mlir.tools.errors import UserError, user_errors_exit


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="glow-compile", description=__doc__)
    p.add_argument("model", help="ONNX model file")
    p.add_argument("--backend", default="interpreter", choices=["interpreter", "cpu", "accel"])
    p.add_argument("--emit", default="graph",
                   choices=["graph", "optimized-graph", "instr", "accel", "llvm", "llvm-ir"])
    p.add_argument("-o", "--output", help="output file (default: stdout)")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks")
    return p


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    with user_errors_exit("glow-compile", args.debug):
        raise UserError("the ONNX frontend is not built yet (issue 3); use glow-opt on .mlir files")


if __name__ == "__main__":
    main()
