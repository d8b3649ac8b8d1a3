"""Element-wise sources whose memory holds a splat when their stack runs: the stack reads
the splat's value as a constant, not the tensor.

The graph's `cse` merges equal splats, so GPT-2's twelve GELUs (tanh form) share one
splat of 3.0, one of 0.044715, ...: the first GELU's stack has them and sees constants
(`element_pow` by 3.0 becomes two multiplies), the eleven others read 1.5 MB tensors of
them and call `powf` per element (3 ms a GELU over 128x3072, against onnxruntime's 0.24
ms FastGelu). Which memory a splat fills is followed through the planned program, run by
run: a write to any overlapping byte forgets it, a `glow_ir.if` or `glow_ir.loop` forgets
everything, and a splat whose store its stack skips (a dead key) is not recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Attribute, SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.dialects import glow, glow_ir

SPLAT_SOURCES = True
"""Whether stacks read splat-filled sources as constants (module docstring). GPT-2 (one
thread, `python benchmarks/cpu_layers_vs_onnxruntime.py gpt2 --runs 15 --stat min`): its
eleven GELU stacks that read shared splats, 2.9-3.1 ms each -> ~0.3 ms."""

SPLAT = glow_ir.instruction_of(glow.SplatOp)


@dataclass(frozen=True)
class _Fill:
    """Bytes [lo, hi) of area `base`, all holding `splat`'s value as `element`."""

    base: SSAValue
    lo: int
    hi: int
    element: Attribute
    splat: glow_ir.InstrOp


def _extent(em: Emitter, v: SSAValue) -> tuple[SSAValue, int, int]:
    base, offset = em.places[v]
    return base, offset, offset + glow_ir.buffer_bytes(v.type)  # type: ignore[arg-type]


def splat_filled_sources(runs: list[list[glow_ir.InstrOp]], em: Emitter,
                  is_stack, dead_keys, key) -> list[dict[SSAValue, glow_ir.InstrOp]]:
    """Per run (`stackable_runs`' order), for an element-wise stack (`is_stack(run)`),
    its sources whose bytes, when the stack starts, the splat given alone filled (as the
    same element type); `{}` for other runs. `dead_keys(run)` and `key(v)`: the stack's
    skipped stores and a buffer's key (`_dead_keys`, `_key`)."""
    fills: list[_Fill] = []
    out: list[dict[SSAValue, glow_ir.InstrOp]] = []
    for run in runs:
        if not SPLAT_SOURCES or isinstance(run[0], (glow_ir.IfOp, glow_ir.LoopOp)):
            fills = []
            out.append({})
            continue
        stack = is_stack(run)
        found: dict[SSAValue, glow_ir.InstrOp] = {}
        if stack:
            for instr in run:
                for v in instr.sources():  # type: ignore[attr-defined]
                    base, lo, hi = _extent(em, v)
                    element = v.type.get_element_type()  # type: ignore[attr-defined]
                    for f in fills:
                        if f.base is base and f.lo <= lo and hi <= f.hi and f.element == element:
                            found.setdefault(v, f.splat)
                            break
        dead = dead_keys(run) if stack else set()
        for instr in run:
            for v, kind in instr.accesses():
                if not kind.writes:
                    continue
                base, lo, hi = _extent(em, v)
                fills = [f for f in fills if not (f.base is base and f.lo < hi and lo < f.hi)]
                if isinstance(instr, SPLAT) and key(v) not in dead:
                    element = v.type.get_element_type()  # type: ignore[attr-defined]
                    fills.append(_Fill(base, lo, hi, element, instr))
        out.append(found)
    return out
