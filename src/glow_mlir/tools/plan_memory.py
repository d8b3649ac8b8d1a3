"""Run the activation memory planner on recorded allocation traces.

    python -m glow_mlir.tools.plan_memory TRACE_FILE

The trace format is that of the allocation traces Glow's memory allocator is tested on: per
model `MODEL <name>`, `ALIGN <bytes>`,
`ALLOC <id> <bytes>` / `FREE <id>` in program order, and Glow's result `MEM <bytes>` and
`EFF <ratio>`. Lines starting with `#` and blank lines are ignored.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from glow_mlir.analysis.memory_planner import Buffer, Plan, plan
from glow_mlir.ir.errors import UserError, file_error
from glow_mlir.tools.errors import ArgumentParser, report


class TraceError(Exception):
    """A malformed trace; the message starts with `file:line:`."""


@dataclass
class Trace:
    name: str
    line: int
    alignment: int = 64
    buffers: list[Buffer] = field(default_factory=list)
    glow_mem: int | None = None
    glow_eff: float | None = None


def _int(tok: str, what: str, where: str) -> int:
    try:
        v = int(tok)
    except ValueError:
        raise TraceError(f"{where}: error: {what} must be an integer, got {tok!r}") from None
    if v < 0:
        raise TraceError(f"{where}: error: {what} must not be negative, got {v}")
    return v


def parse_traces(text: str, filename: str = "<trace>") -> list[Trace]:
    traces: list[Trace] = []
    cur: Trace | None = None
    open_: dict[str, tuple[int, int, int]] = {}  # id -> (size, start, line)
    seen: set[str] = set()
    pos = 0

    def finish() -> None:
        if cur is None:
            return
        if open_:
            bid, (_, _, ln) = next(iter(open_.items()))
            raise TraceError(f"{filename}:{ln}: error: model {cur.name!r}: buffer {bid} "
                             f"is allocated but never freed")

    for lineno, raw in enumerate(text.splitlines(), 1):
        where = f"{filename}:{lineno}"
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        toks = line.split()
        kw, args = toks[0], toks[1:]
        arity = {"MODEL": 1, "ALIGN": 1, "ALLOC": 2, "FREE": 1, "MEM": 1, "EFF": 1}
        if kw not in arity:
            raise TraceError(f"{where}: error: unknown keyword {kw!r} (expected one of "
                             f"{', '.join(arity)})")
        if kw == "MODEL":
            if len(args) < 1:
                raise TraceError(f"{where}: error: MODEL needs a name")
            finish()
            cur = Trace(name=" ".join(args), line=lineno)
            traces.append(cur)
            open_, seen, pos = {}, set(), 0
            continue
        if len(args) != arity[kw]:
            raise TraceError(f"{where}: error: {kw} takes {arity[kw]} argument(s), "
                             f"got {len(args)}")
        if cur is None:
            raise TraceError(f"{where}: error: {kw} before the first MODEL line")
        if kw == "ALIGN":
            a = _int(args[0], "alignment", where)
            if a == 0:
                raise TraceError(f"{where}: error: alignment must be positive")
            cur.alignment = a
        elif kw == "ALLOC":
            bid = args[0]
            size = _int(args[1], "size", where)
            if bid in seen:
                raise TraceError(f"{where}: error: buffer {bid} is allocated twice")
            seen.add(bid)
            open_[bid] = (size, pos, lineno)
            pos += 1
        elif kw == "FREE":
            bid = args[0]
            if bid not in open_:
                what = "freed twice" if bid in seen else "freed but never allocated"
                raise TraceError(f"{where}: error: buffer {bid} is {what}")
            size, start, _ = open_.pop(bid)
            cur.buffers.append(Buffer(bid, size, start, pos))
            pos += 1
        elif kw == "MEM":
            cur.glow_mem = _int(args[0], "MEM", where)
        elif kw == "EFF":
            try:
                cur.glow_eff = float(args[0])
            except ValueError:
                raise TraceError(f"{where}: error: EFF must be a number, "
                                 f"got {args[0]!r}") from None
    finish()
    return traces


def load_traces(path: str) -> list[Trace]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise file_error(path, e) from None
    except UnicodeDecodeError as e:
        raise TraceError(f"{path}: error: not a text file: {e.reason}") from None
    traces = parse_traces(text, path)
    if not traces:
        raise TraceError(f"{path}: error: no MODEL in the file")
    return traces


def plan_trace(t: Trace) -> Plan:
    return plan(t.buffers, alignment=t.alignment)


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="plan_memory", description=__doc__.split("\n")[0])
    ap.add_argument("trace_file")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    try:
        traces = load_traces(args.trace_file)
    except TraceError as e:
        print(str(e), file=sys.stderr)  # already `file:line: error: ...`
        return 1
    except UserError as e:  # the file cannot be read
        print(report("plan_memory", e), file=sys.stderr)
        return 1
    w = max(len(t.name) for t in traces)
    print(f"{'model':<{w}} {'planned':>12} {'lower bound':>12} {'eff':>6} "
          f"{'glow MEM':>12} {'glow EFF':>8}  strategy")
    optimal = as_good = 0
    worst = 1.0
    for t in traces:
        p = plan_trace(t)
        eff = p.efficiency
        worst = min(worst, eff)
        optimal += p.size <= p.lower_bound
        good = (t.glow_mem is None or p.size <= t.glow_mem) and \
            (t.glow_eff is None or eff >= t.glow_eff - 5e-7)
        as_good += good
        gm = "-" if t.glow_mem is None else str(t.glow_mem)
        ge = "-" if t.glow_eff is None else f"{t.glow_eff:.6f}"
        print(f"{t.name:<{w}} {p.size:>12} {p.lower_bound:>12} {eff:>6.4f} "
              f"{gm:>12} {ge:>8}  {p.strategy}")
    dt = time.perf_counter() - t0
    n = len(traces)
    print(f"{optimal}/{n} models reach the lower bound; {as_good}/{n} at least as good as "
          f"Glow; worst efficiency {worst:.4f}; {dt:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
