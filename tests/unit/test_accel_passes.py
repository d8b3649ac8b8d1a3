"""accel-insert-dma, accel-double-buffer and accel-plan-scratchpad on random blocking
programs (as convert-glow-ir-to-accel emits them): the scheduled and planned program
computes the blocking program's numbers on a runner that completes transfers at their
waits, no two live tiles share scratchpad bytes, and the passes do move things."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.utils.exceptions import PassFailedException

from accel_testing_passes import (
    ScheduleError,
    blocking_peak,
    blocking_programs,
    func_of,
    parse,
    program_text,
    run,
)
from instr_testing import random_settings

from glow_mlir.dialects import glow_accel as acc
from glow_mlir.transforms.accel.double_buffer import double_buffer
from glow_mlir.transforms.accel.insert_dma import insert_dma
from glow_mlir.transforms.accel.plan_scratchpad import PEAK_ATTR, plan_scratchpad
from glow_mlir.conversion.pass_runner import run_pipeline

PIPELINE = "accel-insert-dma,accel-double-buffer,accel-plan-scratchpad"


def _capacity(lines, align, cap, factor) -> int:
    if cap:
        return cap
    peak = blocking_peak(lines, align)
    return -(-int(peak * factor) // align) * align


def check_plan(func) -> None:
    """No two tiles live at once share bytes; offsets aligned; inside the capacity."""
    target = acc.target_of(func)
    cap, align = target.value("scratchpad_bytes"), target.value("alignment")
    ops = list(func.body.ops)
    live: dict = {}
    peak = 0
    for op in ops:
        if isinstance(op, acc.ScratchpadAllocOp):
            off, size = op.offset_value, op.size_bytes
            assert off is not None and off % align == 0 and off + size <= cap
            for other in live.values():
                o2, s2 = other.offset_value, other.size_bytes
                assert off + size <= o2 or o2 + s2 <= off, "live tiles overlap"
            live[op.result] = op
            peak = max(peak, max(a.offset_value + a.size_bytes for a in live.values()))
        elif isinstance(op, acc.ScratchpadFreeOp):
            del live[op.tile]
    assert func.attributes[PEAK_ATTR].value.data >= peak


def order_changes(before: list, after: list) -> int:
    """How many ops of `before` still in `after` are at another place among those."""
    kept = [op for op in before if op in set(after)]
    now = [op for op in after if op in set(kept)]
    return sum(a is not b for a, b in zip(kept, now))


@random_settings(60)
@given(blocking_programs(), st.sampled_from([1.0, 1.5, 2.0, 3.0]))
def test_passes_keep_numbers_and_plan_never_overlaps(program, factor):
    lines, inputs, align, cap = program
    text = program_text(lines, align, _capacity(lines, align, cap, factor))
    expected = run(parse(text), inputs)
    module = parse(text)
    run_pipeline(module, PIPELINE)
    func = func_of(module)
    check_plan(func)
    got = run(module, inputs, planned=True)
    for name, want in expected.items():
        np.testing.assert_array_equal(got[name], want, err_msg=name)


@random_settings(40)
@given(blocking_programs(max_steps=4, inputs_only=True))
def test_independent_steps_overlap(program):
    """With room for two steps and no dependence, double buffering moves ops."""
    lines, inputs, align, _ = program
    module = parse(program_text(lines, align, 1 << 16))
    func = func_of(module)
    insert_dma(func)
    before = list(func.body.ops)
    moved = double_buffer(func)
    computes = sum(isinstance(op, acc.TileOp) for op in before)
    if computes >= 2:
        assert moved > 0 and order_changes(before, list(func.body.ops)) > 0
    plan_scratchpad(func)
    check_plan(func)
    expected = run(parse(program_text(lines, align, 1 << 16)), inputs)
    got = run(module, inputs, planned=True)
    for name, want in expected.items():
        np.testing.assert_array_equal(got[name], want, err_msg=name)


def test_insert_dma_moves_transfers():
    lines = [
        "%a = glow_accel.scratchpad_alloc : memref<2x2xf32, 1>",
        "%b = glow_accel.scratchpad_alloc : memref<2x2xf32, 1>",
        "%k1 = glow_accel.dma_start %w0[0, 0] -> %a[0, 0] sizes [2, 2] : memref<8x8xf32> "
        "-> memref<2x2xf32, 1>",
        "glow_accel.dma_wait %k1",
        "%k2 = glow_accel.dma_start %w1[0, 0] -> %b[0, 0] sizes [2, 2] : memref<8x8xf32> "
        "-> memref<2x2xf32, 1>",
        "glow_accel.dma_wait %k2",
        "glow_accel.elementwise @out %a, @in %a, @in %b {kind = \"element_add\"} : "
        "memref<2x2xf32, 1>, memref<2x2xf32, 1>, memref<2x2xf32, 1>",
        "%k3 = glow_accel.dma_start %a[0, 0] -> %w2[0, 0] sizes [2, 2] : "
        "memref<2x2xf32, 1> -> memref<8x8xf32>",
        "glow_accel.dma_wait %k3",
        "glow_accel.scratchpad_free %a : memref<2x2xf32, 1>",
        "glow_accel.scratchpad_free %b : memref<2x2xf32, 1>",
    ]
    module = parse(program_text(lines, 64, 4096))
    dropped, hoisted, sunk = insert_dma(func_of(module))
    assert (dropped, hoisted, sunk) == (0, 2, 0)  # each start right after its alloc
    names = [op.name.split(".")[1] for op in func_of(module).body.ops]
    assert names == ["scratchpad_alloc", "dma_start", "scratchpad_alloc", "dma_start",
                     "dma_wait", "dma_wait", "elementwise", "dma_start", "dma_wait",
                     "scratchpad_free", "scratchpad_free"]


def test_runner_catches_an_unwaited_read():
    lines = [
        "%a = glow_accel.scratchpad_alloc : memref<2x2xf32, 1>",
        "%c = glow_accel.scratchpad_alloc : memref<2x2xf32, 1>",
        "%k1 = glow_accel.dma_start %w0[0, 0] -> %a[0, 0] sizes [2, 2] : memref<8x8xf32> "
        "-> memref<2x2xf32, 1>",
        "glow_accel.elementwise @out %c, @in %a {kind = \"relu\"} : memref<2x2xf32, 1>, "
        "memref<2x2xf32, 1>",
        "glow_accel.dma_wait %k1",
        "glow_accel.scratchpad_free %a : memref<2x2xf32, 1>",
        "glow_accel.scratchpad_free %c : memref<2x2xf32, 1>",
    ]
    with pytest.raises(ScheduleError, match="in flight"):
        run(parse(program_text(lines, 64, 4096)),
            {f"w{i}": np.zeros((8, 8), np.float32) for i in range(4)})


def test_plan_fails_over_capacity_with_a_message():
    lines = [
        "%a = glow_accel.scratchpad_alloc : memref<8x8xf32, 1>",
        "%b = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>",
        "glow_accel.elementwise @out %b, @in %b {kind = \"relu\"} : memref<4x8xf32, 1>, "
        "memref<4x8xf32, 1>",
        "glow_accel.elementwise @out %a, @in %a {kind = \"copy\"} : memref<8x8xf32, 1>, "
        "memref<8x8xf32, 1>",
        "glow_accel.scratchpad_free %a : memref<8x8xf32, 1>",
        "glow_accel.scratchpad_free %b : memref<4x8xf32, 1>",
    ]
    module = parse(program_text(lines, 64, 256))
    with pytest.raises(PassFailedException) as err:
        plan_scratchpad(func_of(module))
    msg = str(err.value)
    assert "error: 'glow_accel.elementwise' op " in msg
    assert [op.name for op in err.value.ops()] == ["glow_accel.elementwise"]
    assert "live tiles need 384 bytes, 128 over the 256-byte scratchpad" in msg
    assert "largest live tile %a : memref<8x8xf32, 1" in msg


def test_bad_programs_fail_with_messages():
    one = [
        "%a = glow_accel.scratchpad_alloc : memref<2x2xf32, 1>",
        "%k1 = glow_accel.dma_start %w0[0, 0] -> %a[0, 0] sizes [2, 2] : memref<8x8xf32> "
        "-> memref<2x2xf32, 1>",
        "glow_accel.scratchpad_free %a : memref<2x2xf32, 1>",
    ]
    module = parse(program_text(one, 64, 4096))
    with pytest.raises(PassFailedException,
                       match=r"'glow_accel.dma_start' op needs exactly one later dma_wait "
                             r"in the same block \(every dma_start does\)"):
        insert_dma(func_of(module))
    text = program_text(one[:1] + one[2:], 64, 4096)
    text = text.replace(" attributes {glow_accel.target = ", " attributes {x = ")
    module = parse(text)
    with pytest.raises(PassFailedException, match="'glow_ir.func' op has glow_accel ops but no "
                                                  "glow_accel.target"):
        double_buffer(func_of(module))


def test_reload_reuses_the_tile_and_numbers_hold():
    """Two steps read the same box of %w0: the second load goes, the first tile lives on."""
    step = [
        "%a{i} = glow_accel.scratchpad_alloc : memref<2x4xf32, 1>",
        "%k{i} = glow_accel.dma_start %w0[2, 4] -> %a{i}[0, 0] sizes [2, 4] : "
        "memref<8x8xf32> -> memref<2x4xf32, 1>",
        "glow_accel.dma_wait %k{i}",
        "%c{i} = glow_accel.scratchpad_alloc : memref<2x4xf32, 1>",
        "glow_accel.elementwise @out %c{i}, @in %a{i} {{kind = \"relu\"}} : "
        "memref<2x4xf32, 1>, memref<2x4xf32, 1>",
        "glow_accel.scratchpad_free %a{i} : memref<2x4xf32, 1>",
        "%s{i} = glow_accel.dma_start %c{i}[0, 0] -> %w{i}[0, 0] sizes [2, 4] : "
        "memref<2x4xf32, 1> -> memref<8x8xf32>",
        "glow_accel.dma_wait %s{i}",
        "glow_accel.scratchpad_free %c{i} : memref<2x4xf32, 1>",
    ]
    lines = [ln.format(i=i) for i in (2, 3) for ln in step]
    inputs = {f"w{i}": np.arange(64, dtype=np.float32).reshape(8, 8) - 30 for i in range(4)}
    text = program_text(lines, 64, 4096)
    module = parse(text)
    dropped, _, _ = insert_dma(func_of(module))
    assert dropped == 1
    loads = [op for op in func_of(module).body.ops
             if isinstance(op, acc.DmaStartOp) and op.is_load]
    assert len(loads) == 1
    run_pipeline(module, "accel-double-buffer,accel-plan-scratchpad")
    got = run(module, inputs, planned=True)
    for name, want in run(parse(text), inputs).items():
        np.testing.assert_array_equal(got[name], want, err_msg=name)


def test_dma_boxes_conflict_only_when_they_intersect():
    """Boxes of one root compare as N-D boxes when seen through the same row layout (also
    through a view starting at a whole row), as byte ranges otherwise: a store of rows
    0..2, columns 6..8 spans bytes a load of rows 1..3, columns 0..2 spans too, yet the
    two share no element and may trade places."""
    from glow_mlir.transforms.accel.program import Effects

    def load(name, src, offs, ty):  # into a tile of its own: tiles are not the point
        return (f"%{name}_t = glow_accel.scratchpad_alloc : memref<2x2xf32, 1>\n"
                f"%{name} = glow_accel.dma_start {src}[{offs}] -> %{name}_t[0, 0] "
                f"sizes [2, 2] : {ty} -> memref<2x2xf32, 1>")

    lines = [
        "%t = glow_accel.scratchpad_alloc : memref<2x2xf32, 1>",
        "%s = glow_accel.dma_start %t[0, 0] -> %w0[0, 6] sizes [2, 2] : "
        "memref<2x2xf32, 1> -> memref<8x8xf32>",
        "%v = glow_ir.tensor_view %w0[2, 0] : memref<8x8xf32> to memref<4x8xf32>",
        "%f = glow_ir.tensor_view %w0[0, 0] : memref<8x8xf32> to memref<64xf32>",
        "%sv = glow_accel.dma_start %t[0, 0] -> %v[0, 6] sizes [2, 2] : "
        "memref<2x2xf32, 1> -> memref<4x8xf32>",
        load("apart", "%w0", "1, 0", "memref<8x8xf32>"),
        load("hit", "%w0", "1, 6", "memref<8x8xf32>"),
        load("below", "%w0", "3, 0", "memref<8x8xf32>"),
        load("under_view", "%w0", "3, 6", "memref<8x8xf32>"),
        "%u = glow_accel.scratchpad_alloc : memref<4xf32, 1>",
        "%flat = glow_accel.dma_start %f[9] -> %u[0] sizes [4] : "
        "memref<64xf32> -> memref<4xf32, 1>",
    ]
    module = parse(program_text(lines, 64, 4096))
    ops = {op.results[0].name_hint: op for op in func_of(module).body.ops if op.results}
    effects = Effects()

    def ordered(a, b):
        return effects.must_stay_ordered(ops[a], ops[b])

    assert not ordered("s", "apart")  # byte ranges overlap, boxes do not
    assert ordered("s", "hit")
    assert not ordered("s", "below")  # rows 3..4 vs rows 0..2
    # The view's box is rows 2..4, columns 6..8 of %w0.
    assert ordered("sv", "under_view")  # rows 3..5, columns 6..8
    assert not ordered("sv", "below")  # rows 3..5, columns 0..2
    assert not ordered("sv", "apart")
    # Row 1, columns 1..5 through a flat view: another row layout, so the byte ranges
    # decide (conservatively: the elements are apart).
    assert ordered("s", "flat")


_VIEWS = {  # name: (shape, first element in %w0)
    "w0": ((8, 8), 0),
    "rows": ((4, 8), 16),  # %w0[2, 0]
    "mid": ((2, 8), 12),  # %w0[1, 4]: boxes past column 3 wrap a row
    "flat": ((64,), 0),
}
_VIEW_VALUES: dict = {}


def _view_values() -> dict:
    """%w0 and its views in `_VIEWS`, parsed once (the property test draws hundreds)."""
    if not _VIEW_VALUES:
        lines = [
            "%rows = glow_ir.tensor_view %w0[2, 0] : memref<8x8xf32> to memref<4x8xf32>",
            "%mid = glow_ir.tensor_view %w0[1, 4] : memref<8x8xf32> to memref<2x8xf32>",
            "%flat = glow_ir.tensor_view %w0[0, 0] : memref<8x8xf32> to memref<64xf32>",
        ]
        func = func_of(parse(program_text(lines, 64, 4096)))
        _VIEW_VALUES.update({op.results[0].name_hint: op.results[0] for op in func.body.ops})
        _VIEW_VALUES["w0"] = _VIEW_VALUES["rows"].owner.operands[0]
    return _VIEW_VALUES


@random_settings(400)
@given(st.data())
def test_box_overlap_is_sound_and_exact_in_one_layout(data):
    """Any two boxes of %w0 (8x8), each through %w0 itself or a view (starting at a whole
    row, mid-row, or flat): `Effect.overlaps` is True whenever they share an element, and
    False whenever they do not and both are boxes of one row layout."""
    from glow_mlir.transforms.accel.program import box_effect

    values = _view_values()

    def a_box():
        name = data.draw(st.sampled_from(sorted(_VIEWS)))
        shape, base = _VIEWS[name]
        offs = [data.draw(st.integers(0, d - 1)) for d in shape]
        sizes = [data.draw(st.integers(1, d - o)) for d, o in zip(shape, offs)]
        elems = {base + int(np.ravel_multi_index(tuple(np.add(i, offs)), shape))
                 for i in np.ndindex(*sizes)}
        return box_effect(values[name], offs, sizes, True), elems

    (x, ex), (y, ey) = a_box(), a_box()
    assert x.root is y.root
    if ex & ey:
        assert x.overlaps(y) and y.overlaps(x)
    elif x.layout is not None and x.layout == y.layout:
        assert not x.overlaps(y) and not y.overlaps(x)
