"""The activation memory planner and its trace driver (`python -m glow_mlir.tools.plan_memory`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glow_mlir.analysis import memory_planner
from glow_mlir.analysis.memory_planner import Buffer, Plan, check_plan, peak_live, plan
from glow_mlir.tools.plan_memory import TraceError, load_traces, main, parse_traces

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACES = os.path.join(REPO_ROOT, "tests", "data", "glow-memory-traces.txt")

needs_traces = pytest.mark.skipif(
    not os.path.exists(TRACES),
    reason=f"Glow's memory traces are not at {os.path.normpath(TRACES)}")


@pytest.fixture(scope="module")
def traces():
    return load_traces(TRACES)


# -- the 79 recorded models ------------------------------------------------------------------

@needs_traces
def test_traces_file_has_79_models(traces):
    assert len(traces) == 79
    assert all(t.glow_mem is not None and t.glow_eff is not None for t in traces)


@needs_traces
def test_at_least_glow_efficiency_on_every_model(traces):
    worse = []
    for t in traces:
        p = plan(t.buffers, alignment=t.alignment)
        check_plan(t.buffers, p)
        if p.efficiency < t.glow_eff - 5e-7 or p.size > t.glow_mem:
            worse.append((t.name, p.size, p.efficiency, t.glow_mem, t.glow_eff))
    assert not worse, worse


@needs_traces
def test_lower_bound_reached_on_every_model(traces):
    # The target: efficiency 1.0 on all 79 (Glow: 0.90 on the three ResNet v2).
    missed = [(t.name, p.size, p.lower_bound) for t in traces
              for p in [plan(t.buffers, alignment=t.alignment)] if p.size != p.lower_bound]
    assert not missed, missed


@needs_traces
def test_tool_summary(capsys):
    assert main([TRACES]) == 0
    out = capsys.readouterr().out
    assert "79/79 models reach the lower bound; 79/79 at least as good as Glow" in out
    assert "resnet50_v2.onnx" in out


# -- small cases -----------------------------------------------------------------------------

def test_disjoint_lives_share_memory():
    bufs = [Buffer("a", 100, 0, 1), Buffer("b", 100, 1, 2), Buffer("c", 64, 2, 3)]
    p = plan(bufs)
    assert p.size == 128 == p.lower_bound
    assert set(p.offsets.values()) == {0}


def test_overlapping_lives_are_stacked_and_aligned():
    bufs = [Buffer("a", 10, 0, 3), Buffer("b", 70, 1, 4), Buffer("c", 1, 2, 5)]
    p = plan(bufs, alignment=64)
    check_plan(bufs, p)
    assert p.lower_bound == 64 + 128 + 64 == p.size
    assert all(o % 64 == 0 for o in p.offsets.values())


def test_empty_and_zero_size():
    assert plan([]).size == 0
    p = plan([Buffer("z", 0, 0, 1), Buffer("a", 8, 0, 1)])
    assert p.size == 64 and p.efficiency == 1.0


def test_bad_buffers_rejected():
    with pytest.raises(ValueError, match="empty"):
        Buffer("a", 8, 3, 3)
    with pytest.raises(ValueError, match="unique"):
        plan([Buffer("a", 8, 0, 1), Buffer("a", 8, 1, 2)])
    with pytest.raises(ValueError, match="alignment"):
        plan([Buffer("a", 8, 0, 1)], alignment=0)


# -- property: a plan never overlaps live buffers ----------------------------------------------

@st.composite
def buffer_sets(draw):
    n = draw(st.integers(0, 25))
    bufs = []
    for k in range(n):
        start = draw(st.integers(0, 30))
        end = draw(st.integers(start + 1, start + 15))
        size = draw(st.one_of(st.integers(0, 300), st.sampled_from([64, 128, 4096, 1000])))
        bufs.append(Buffer(k, size, start, end))
    return bufs


@settings(max_examples=300, deadline=None)
@given(buffer_sets(), st.sampled_from([1, 8, 64, 128]))
def test_plan_never_overlaps_live_buffers(bufs, alignment):
    p = plan(bufs, alignment=alignment)
    assert set(p.offsets) == {b.id for b in bufs}
    for b in bufs:
        assert p.offsets[b.id] % alignment == 0
        assert 0 <= p.offsets[b.id] and p.offsets[b.id] + b.size <= p.size
    for a in bufs:
        for b in bufs:
            if a.id < b.id and a.start < b.end and b.start < a.end and a.size and b.size:
                oa, ob = p.offsets[a.id], p.offsets[b.id]
                assert oa + a.size <= ob or ob + b.size <= oa, (a, b, p.offsets)
    assert p.lower_bound == peak_live(bufs, alignment) <= p.size
    assert p.size <= sum(-(-b.size // alignment) * alignment for b in bufs)


@settings(max_examples=300, deadline=None)
@given(buffer_sets(), st.booleans())
def test_program_order_sweep_places_as_the_conflict_lists_do(bufs, best_fit):
    # The sweep (free list of the buffers live at each start) must make the placement the
    # pairwise version makes in program order: same offsets, same arena.
    p = memory_planner._Problem(bufs, 64)
    order = p.program_order()
    assert memory_planner._sweep_place(p, order, best_fit) == \
        memory_planner._place(p, order, best_fit)


@settings(max_examples=300, deadline=None)
@given(buffer_sets(), st.integers(0, 3))
def test_program_order_search_is_the_conflict_list_search(bufs, slack):
    # The same depth-first search over the same candidates, so the same answer (or none),
    # below limits from the lower bound (tight) to a little above it.
    p = memory_planner._Problem(bufs, 64)
    order = p.program_order()
    limit = peak_live(bufs, 64) + 64 * slack
    assert memory_planner._sweep_search(p, order, limit, 2000) == \
        memory_planner._search(p, order, limit, 2000)


def unrolled(steps: int) -> list[Buffer]:
    """An unrolled recurrence's buffers: each step's output lives to the end (where all
    are concatenated), its temporaries only within the step."""
    bufs, end = [], 4 * steps + 2
    for t in range(steps):
        bufs.append(Buffer(f"h{t}", 512, 4 * t + 2, end))
        bufs.append(Buffer(f"g{t}", 2048, 4 * t, 4 * t + 2))
        bufs.append(Buffer(f"c{t}", 1536, 4 * t + 1, 4 * t + 3))
    return bufs


def test_many_buffers_live_together_are_planned_without_pairs():
    # 300 outputs live together: ~45k pairs, beyond the budget, so no conflict list is
    # built (planning stays near-linear), and the plan still reaches the lower bound.
    bufs = unrolled(300)
    problem = memory_planner._Problem(bufs, 64)
    assert problem.pairs() > max(memory_planner.PAIR_BUDGET_PER_BUFFER * problem.n,
                                 memory_planner.PAIR_BUDGET_FLOOR)
    built = []
    original = memory_planner._Problem.conflicts.fget

    def spy(self):
        built.append(self)
        return original(self)

    memory_planner._Problem.conflicts = property(spy)
    try:
        p = plan(bufs)
    finally:
        memory_planner._Problem.conflicts = property(original)
    check_plan(bufs, p)
    assert not built
    assert p.size == p.lower_bound
    assert p.strategy.startswith(("program", "search/program"))


def test_pairs_are_counted_without_listing_them():
    bufs = unrolled(20)
    p = memory_planner._Problem(bufs, 64)
    assert p.pairs() == sum(len(c) for c in p.conflicts) // 2


def test_check_plan_finds_overlaps_among_many_live_buffers():
    # The sweep compares neighbours in memory only; an overlap with a buffer that is not
    # the nearest by offset must still be found.
    bufs = [Buffer("a", 64, 0, 10), Buffer("b", 64, 1, 10), Buffer("c", 192, 2, 10)]
    good = Plan({"a": 0, "b": 64, "c": 128}, 320, 320, "test", 64)
    check_plan(bufs, good)
    bad = Plan({"a": 0, "b": 128, "c": 0}, 320, 320, "test", 64)
    with pytest.raises(AssertionError, match="overlap in memory"):
        check_plan(bufs, bad)
    freed = [Buffer("a", 64, 0, 2), Buffer("b", 64, 2, 4)]  # a is free when b starts
    check_plan(freed, Plan({"a": 0, "b": 0}, 64, 64, "test", 64))


# -- malformed traces --------------------------------------------------------------------------

GOOD = """# comment
MODEL m
ALIGN 64
ALLOC 1 100
ALLOC 2 10
FREE 1
FREE 2
MEM 192
EFF 1.0
"""


def test_parse_good_trace():
    [t] = parse_traces(GOOD, "g.txt")
    assert t.name == "m" and t.alignment == 64 and t.glow_mem == 192
    assert [(b.id, b.size, b.start, b.end) for b in t.buffers] == \
        [("1", 100, 0, 2), ("2", 10, 1, 3)]


@pytest.mark.parametrize("text, line, message", [
    ("MODEL m\nALLOC 1 x\nFREE 1\n", 2, "size must be an integer"),
    ("MODEL m\nALLOC 1 -4\nFREE 1\n", 2, "must not be negative"),
    ("MODEL m\nALLOC 1 8\nFREE 2\n", 3, "freed but never allocated"),
    ("MODEL m\nALLOC 1 8\nFREE 1\nFREE 1\n", 4, "freed twice"),
    ("MODEL m\nALLOC 1 8\nFREE 1\nALLOC 1 8\n", 4, "allocated twice"),
    ("MODEL m\nALLOC 1 8\nMODEL n\n", 2, "never freed"),
    ("MODEL m\nALLOC 1 8\n", 2, "never freed"),
    ("ALLOC 1 8\n", 1, "before the first MODEL"),
    ("MODEL m\nGROW 1\n", 2, "unknown keyword"),
    ("MODEL m\nALLOC 1\n", 2, "ALLOC takes 2 argument"),
    ("MODEL m\nALIGN 0\n", 2, "alignment must be positive"),
    ("MODEL m\nEFF high\n", 2, "EFF must be a number"),
])
def test_malformed_trace(text, line, message):
    with pytest.raises(TraceError, match=message) as e:
        parse_traces(text, "bad.txt")
    assert str(e.value).startswith(f"bad.txt:{line}: error: ")


def test_tool_bad_input_exits_1_without_traceback(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("MODEL m\nALLOC 1 8\nFREE 7\n")
    for arg, expect in [(str(bad), f"{bad}:3: error: buffer 7 is freed but never allocated"),
                        (str(tmp_path / "missing.txt"),
                         f"plan_memory: error: cannot read '{tmp_path / 'missing.txt'}': "
                         f"no such file")]:
        r = subprocess.run([sys.executable, "-m", "glow_mlir.tools.plan_memory", arg],
                           capture_output=True, text=True)
        assert r.returncode == 1
        assert expect in r.stderr
        assert "Traceback" not in r.stderr
        assert r.stdout == ""
