"""Fails unless every op of a dialect's op list appears in a check line of FILE.

    python op_coverage.py [--dialect glow_ir] FILE [PREFIX ...]   # default: glow, CHECK

Used by dialects/*/roundtrip.mlir so a new op cannot be added without a round-trip test.
"""

import importlib
import re
import sys


def main() -> int:
    args = sys.argv[1:]
    dialect = "glow"
    if args[:1] == ["--dialect"]:
        dialect, args = args[1], args[2:]
    module = importlib.import_module(f"glow_mlir.dialects.{dialect}")
    ALL_OPS = [*module.ALL_OPS, *getattr(module, "CONTROL_FLOW_OPS", ())]
    path, prefixes = args[0], args[1:] or ["CHECK"]
    text = open(path, encoding="utf-8").read()
    check_lines = [ln for ln in text.splitlines()
                   if re.match(rf"\s*//\s*({'|'.join(prefixes)})(-NEXT|-SAME|-DAG|-LABEL)?:", ln)]
    checked = "\n".join(check_lines)
    missing = [op.name for op in ALL_OPS
               if not re.search(rf'(?<![\w.]){re.escape(op.name)}(?![\w])', checked)]
    if missing:
        print(f"{path}: ops without a {'/'.join(prefixes)} line: {', '.join(missing)}",
              file=sys.stderr)
        return 1
    print(f"all {len(ALL_OPS)} ops checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
