"""`plan-memory` on glow_ir: random alloc/dealloc programs never put two buffers that are
live together on the same bytes, every offset is aligned, and data written into a planned
buffer is still there at its dealloc when the interpreter runs the program on one arena."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, StringAttr, f16, f32, i8, i64

from glow_mlir.analysis.instr_memory import activation_buffers
from glow_mlir.analysis.memory_planner import peak_live
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.text import verify_module
from glow_mlir.targets.interpreter import run_instr_module


@st.composite
def alloc_programs(draw, max_buffers: int = 12):
    """Events of a program: ("alloc", k, elements, dtype) and ("dealloc", k), where every
    dealloc follows its alloc and some buffers are never freed."""
    n = draw(st.integers(0, max_buffers))
    events: list[tuple] = []
    live: list[int] = []
    k = 0
    while k < n or (live and draw(st.booleans())):
        if k < n and (not live or draw(st.booleans())):
            events.append(("alloc", k, draw(st.integers(1, 200)),
                           draw(st.sampled_from([f32, f16, i8]))))
            live.append(k)
            k += 1
        else:
            events.append(("dealloc", live.pop(draw(st.integers(0, len(live) - 1)))))
    return events


def build(events, with_data: bool = False) -> tuple[ModuleOp, dict[int, glow_ir.AllocActivationOp]]:
    """The program of `events`. With `with_data`, every buffer (f32 only) is filled with
    the value k + 1 after its alloc, and its first and last elements are copied to output
    elements 2k and 2k + 1 just before its dealloc (or at the end)."""
    n = sum(e[0] == "alloc" for e in events)
    out_t = MemRefType(f32, [max(2 * n, 1)])
    func = glow_ir.FuncOp.make("main", [glow_ir.WeightOp.make("out", out_t, role="output")])
    out = func.body.args[0]
    allocs: dict[int, glow_ir.AllocActivationOp] = {}
    body = func.body

    def save(k: int) -> None:
        a = allocs[k]
        size = a.result.type.get_shape()[0]
        for j, at in enumerate((0, size - 1)):
            view = glow_ir.TensorViewOp.make(a.result, MemRefType(f32, [1]), [at])
            body.add_op(view)
            body.add_op(glow_ir.InsertTensorOp.make([out, view.result], offsets=[2 * k + j]))

    for e in events:
        if e[0] == "alloc":
            _, k, size, dtype = e
            alloc = glow_ir.AllocActivationOp.make(MemRefType(f32 if with_data else dtype, [size]))
            alloc.result.name_hint = f"b{k}"
            body.add_op(alloc)
            allocs[k] = alloc
            if with_data:
                body.add_op(glow_ir.SplatOp.make([alloc.result], value=float(k + 1)))
        else:
            if with_data:
                save(e[1])
            body.add_op(glow_ir.DeallocActivationOp.make(allocs[e[1]].result))
    if with_data:
        freed = {e[1] for e in events if e[0] == "dealloc"}
        for k in allocs:
            if k not in freed:
                save(k)
    return ModuleOp([func]), allocs


def offset(alloc: glow_ir.AllocActivationOp) -> int:
    assert alloc.offset is not None
    return alloc.offset.value.data


ALIGNMENTS = st.sampled_from([1, 4, 8, 16, 64, 256])


@settings(max_examples=200, deadline=None)
@given(alloc_programs(), ALIGNMENTS)
def test_live_buffers_never_overlap_and_offsets_are_aligned(events, alignment):
    module, _ = build(events)
    run_pipeline(module, f"plan-memory{{alignment={alignment}}}")
    verify_module(module)
    (func,) = [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)]
    size = func.activations_size.value.data
    assert func.alignment.value.data == alignment
    placed = activation_buffers(func)
    for alloc, b in placed:
        assert offset(alloc) % alignment == 0
        assert 0 <= offset(alloc) and offset(alloc) + b.size <= size
    for i, (a1, b1) in enumerate(placed):
        for a2, b2 in placed[i + 1:]:
            if b1.start < b2.end and b2.start < b1.end:  # live together
                o1, o2 = offset(a1), offset(a2)
                assert o1 + b1.size <= o2 or o2 + b2.size <= o1, (b1, b2, o1, o2)
    buffers = [b for _, b in placed]
    assert peak_live(buffers, alignment) <= size
    assert size <= sum(-(-b.size // alignment) * alignment for b in buffers)


@settings(max_examples=60, deadline=None)
@given(alloc_programs(max_buffers=8), ALIGNMENTS)
def test_planned_buffers_keep_their_data(events, alignment):
    """Run on one arena: every buffer still holds what was written into it when it is
    freed; the unplanned program (every alloc its own buffer) agrees."""
    n = sum(e[0] == "alloc" for e in events)
    want = np.repeat(np.arange(1, n + 1, dtype=np.float32), 2) if n else np.full(1, np.nan)
    module, _ = build(events, with_data=True)
    verify_module(module)
    (unplanned,) = run_instr_module(module, [])
    run_pipeline(module, f"plan-memory{{alignment={alignment}}}")
    (planned,) = run_instr_module(module, [])
    np.testing.assert_array_equal(unplanned, want)
    np.testing.assert_array_equal(planned, want)


def test_a_plan_that_shares_live_buffers_loses_data():
    """The check above has teeth: two buffers live together on the same bytes (a wrong
    plan, made by hand) lose the first one's data."""
    events = [("alloc", 0, 16, f32), ("alloc", 1, 16, f32), ("dealloc", 1), ("dealloc", 0)]
    module, allocs = build(events, with_data=True)
    run_pipeline(module, "plan-memory")
    assert offset(allocs[0]) != offset(allocs[1])
    allocs[1].attributes["offset"] = IntegerAttr(offset(allocs[0]), i64)
    (out,) = run_instr_module(module, [])
    np.testing.assert_array_equal(out[2:], [2, 2])  # b1 is fine ...
    assert not np.array_equal(out[:2], [1, 1])  # ... b0 was overwritten


def test_every_function_is_planned_and_replanning_is_stable():
    m1, _ = build([("alloc", 0, 10, f32), ("dealloc", 0), ("alloc", 1, 20, f32)])
    m2, _ = build([("alloc", 0, 100, i8), ("alloc", 1, 3, f16)])
    f1, f2 = (next(op for op in m.walk() if isinstance(op, glow_ir.FuncOp)) for m in (m1, m2))
    f1.detach()
    f2.detach()
    f2.properties["sym_name"] = StringAttr("second")
    module = ModuleOp([f1, f2])
    run_pipeline(module, "plan-memory")
    assert f1.activations_size.value.data == 128 and f2.activations_size.value.data == 192
    first = [offset(a) for a, _ in activation_buffers(f1) + activation_buffers(f2)]
    assert first == [0, 0, 0, 128]
    run_pipeline(module, "plan-memory{alignment=4}")
    assert f1.activations_size.value.data == 80 and f2.activations_size.value.data == 108
    run_pipeline(module, "plan-memory")
    assert [offset(a) for a, _ in activation_buffers(f1) + activation_buffers(f2)] == first


def test_bad_alignment_is_a_user_error():
    from xdsl.utils.exceptions import DiagnosticException

    module, _ = build([("alloc", 0, 4, f32)])
    with pytest.raises(DiagnosticException, match="alignment must be positive, got -8"):
        run_pipeline(module, "plan-memory{alignment=-8}")
    with pytest.raises(DiagnosticException, match="alignment must be a power of two, got 3"):
        run_pipeline(module, "plan-memory{alignment=3}")
