"""glow-run: run an ONNX model on random or given inputs (grows with the pipeline)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from glow_mlir.tools.errors import UserError, user_errors_exit


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="glow-run", description=__doc__)
    p.add_argument("model", help="ONNX model file")
    p.add_argument("--backend", default="interpreter", choices=["interpreter", "cpu", "accel"])
    p.add_argument("--inputs", help=".npz file of inputs by name (random when absent)")
    p.add_argument("--compare-onnxruntime", action="store_true")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks")
    return p


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    with user_errors_exit("glow-run", args.debug):
        raise UserError("the ONNX frontend is not built yet (issue 3)")


if __name__ == "__main__":
    main()
