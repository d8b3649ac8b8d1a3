"""Does `plan-memory` grow linearly with an unrolled recurrent net? (issue 16)

An LSTM unrolled over T steps keeps every step's output live to the end of the program
(they are concatenated there), so the pairs of buffers live together grow as T squared.
This compiles a bidirectional LSTM (hidden 64, batch 2; benchmarks/recurrent.py's model) on
the interpreter at each length, records the buffers `plan-memory` plans, then times, in
this one process, the planner (`plan` and its `check_plan`) on them: CPU seconds (the
best of three runs), the arena, and with `--baseline REV` the planner of that git revision
on the same buffers (one run).

    python benchmarks/plan_memory_scaling.py [--steps 50,100,200] [--baseline REV]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parent.parent
PLANNER = "src/glow_mlir/analysis/memory_planner.py"


def planned_buffers(steps: int) -> tuple[list, int]:
    """The buffers and alignment `plan-memory` gets for the model unrolled `steps` times."""
    import glow_mlir
    from glow_mlir.analysis.instr_memory import activation_buffers
    from glow_mlir.transforms.instr import plan_memory
    from recurrent import stacked

    seen = []
    original = plan_memory.plan_function

    def recording(func, alignment=64):
        seen.append(([b for _, b in activation_buffers(func)], alignment))
        return original(func, alignment)

    plan_memory.plan_function = recording  # the pass looks it up in its module
    try:
        glow_mlir.compile(stacked("LSTM", 1, 64, steps, 2, "bidirectional"),
                          backend="interpreter", progress=False)
    finally:
        plan_memory.plan_function = original
    return seen[0]


def planner_at(rev: str):
    """The memory planner module as it was at git revision `rev`."""
    text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{PLANNER}"], check=True,
                          capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "baseline_memory_planner.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("baseline_memory_planner", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def timed(planner, buffers, alignment) -> tuple[float, int]:
    bufs = [planner.Buffer(b.id, b.size, b.start, b.end) for b in buffers]
    gc.collect()  # the compile's garbage is not the planner's time
    start = time.process_time()
    result = planner.plan(bufs, alignment=alignment)
    planner.check_plan(bufs, result)
    return time.process_time() - start, result.size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", default="50,100,200")
    parser.add_argument("--baseline", help="a git revision whose planner to time too")
    args = parser.parse_args(argv)
    from glow_mlir.analysis import memory_planner

    baseline = planner_at(args.baseline) if args.baseline else None
    print(f"{'steps':>5} {'buffers':>8} {'cpu s':>8} {'arena B':>9}"
          + (f" {'base cpu s':>10} {'base arena B':>12}" if baseline else ""))
    for steps in (int(s) for s in args.steps.split(",")):
        buffers, alignment = planned_buffers(steps)
        cpu, size = min(timed(memory_planner, buffers, alignment) for _ in range(3))
        line = f"{steps:>5} {len(buffers):>8} {cpu:>8.3f} {size:>9}"
        if baseline:
            base_cpu, base_size = timed(baseline, buffers, alignment)
            line += f" {base_cpu:>10.3f} {base_size:>12}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
