"""Live tensor bytes: which values count, when they are live, and the peak."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.dialects.builtin import BFloat16Type, TensorType, f16, f32, i1, i8, i64

from glow_mlir.analysis.graph_memory import (
    body_ops,
    live_bytes_profile,
    live_ranges,
    peak_live_bytes,
    tensor_bytes,
)
from glow_mlir.dialects.glow_ops.types import QuantizedType
from test_schedule_graph import functions, parse, random_dags

# Step by step (1 KiB = tensor<256xf32>):
#   %c constant, %x input, %o output: never counted.
#   %s splat (1 KiB) live at steps 1..2; %a (1 KiB) steps 2..4 (its last user is %o);
#   %dead (16 B) only at its own step 3; %b (1 KiB) steps 3..4 is an output too, so 0.
GRAPH = """
func.func @f(%x: tensor<256xf32>) -> (tensor<256xf32>, tensor<256xf32>) {
  %c = glow.constant dense<1.0> : tensor<256xf32>
  %s = glow.splat {value = 2.0 : f32} : tensor<256xf32>
  %a = glow.add %s, %c : tensor<256xf32>
  %dead = glow.slice %a {start = array<i64: 0>} : tensor<256xf32> -> tensor<4xf32>
  %b = glow.mul %a, %x : tensor<256xf32>
  %o = glow.add %a, %b : tensor<256xf32>
  func.return %o, %b : tensor<256xf32>, tensor<256xf32>
}
"""


def test_profile_counts_activations_only():
    fn = functions(parse(GRAPH))[0]
    assert live_bytes_profile(fn) == [0, 1024, 2048, 1040, 1024, 1024]
    assert peak_live_bytes(fn) == 2048
    by_name = {r.value.name_hint: (r.nbytes, r.start, r.end) for r in live_ranges(fn)}
    assert by_name == {"s": (1024, 1, 2), "a": (1024, 2, 5), "dead": (16, 3, 3)}


def test_profile_follows_a_given_order():
    fn = functions(parse(GRAPH))[0]
    c, s, a, dead, b, o = body_ops(fn)[0]
    # The dead slice last: %a now lives to step 5, where %dead is also live.
    assert live_bytes_profile(fn, [c, s, a, b, o, dead]) == [0, 1024, 2048, 1024, 1024, 1040]


def test_invalid_orders_are_rejected():
    fn = functions(parse(GRAPH))[0]
    c, s, a, dead, b, o = body_ops(fn)[0]
    with pytest.raises(ValueError, match="uses a value of glow.splat"):
        peak_live_bytes(fn, [c, a, s, dead, b, o])
    with pytest.raises(ValueError, match="not a permutation"):
        peak_live_bytes(fn, [c, s, a, dead, b])
    with pytest.raises(ValueError, match="not a permutation"):
        peak_live_bytes(fn, [c, s, a, a, dead, b, o])


def test_empty_body_has_no_peak():
    fn = functions(parse("func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                         "  func.return %x : tensor<4xf32>\n}"))[0]
    assert live_bytes_profile(fn) == []
    assert peak_live_bytes(fn) == 0


@pytest.mark.parametrize("elem, nbytes", [
    (f32, 24), (f16, 12), (i8, 6), (i1, 6), (i64, 48), (BFloat16Type(), 12),
    (QuantizedType(i8, 0.5, 3), 6),
])
def test_tensor_bytes(elem, nbytes):
    assert tensor_bytes(TensorType(elem, [2, 3])) == nbytes


def test_tensor_bytes_of_scalars_and_dynamic_shapes():
    assert tensor_bytes(TensorType(f32, [])) == 4
    assert tensor_bytes(TensorType(f32, [0, 5])) == 0
    with pytest.raises(ValueError, match="dynamic"):
        tensor_bytes(TensorType(f32, [-1, 4]))


def simulated_profile(fn) -> list[int]:
    """The profile by running the ops: allocate results, free a value after its last
    reader has run (an independent formulation of the module's definition)."""
    ops, ret = body_ops(fn)
    outputs = set(ret.operands)
    live: dict = {}
    remaining = {}
    profile = []
    for op in ops:
        for r in op.results:
            if op.name != "glow.constant" and r not in outputs:
                live[r] = tensor_bytes(r.type)
                remaining[r] = len([u for u in r.uses])
        profile.append(sum(live.values()))
        for v in set(op.operands):
            if v in remaining:
                remaining[v] -= sum(1 for u in v.uses if u.operation is op)
        for r in [r for r in live if remaining[r] == 0]:
            del live[r]
    return profile


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_dags())
def test_profile_matches_a_simulation(case):
    fn = functions(parse(case[0]))[0]
    assert live_bytes_profile(fn) == simulated_profile(fn)
