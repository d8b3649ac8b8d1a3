"""The instruction passes do work linear in the size of the program (issue 14: no step
may be quadratic in the size of the model), measured without a clock: the ops each pass
visits (steps along a block's op list, reads of an op's operands) on a 2-layer
bidirectional LSTM unrolled over 8 and over 32 steps. Four times the steps is four times
the program; a pass that lists its block again after every rewrite, builds a whole-block
index per moved alloc or scans whole live intervals did 7.5x-16x the visits (seen on
optimize-inserts-extracts, share-buffers and the sink-alloc it calls)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.ir import Operation

from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.runtime.compiled_model import optimize_graph
from glow_mlir.transforms.instr.pipelines import instr_pass_names

HIDDEN, BATCH = 8, 4
SMALL, LARGE = 8, 32


def stacked_lstm(seq: int):
    """What torch.onnx.export writes for nn.LSTM(num_layers=2, bidirectional=True)
    (as benchmarks/recurrent.py builds it), with batch 4 and hidden size 8."""
    rng = np.random.default_rng(0)
    nodes, inits, prev, width = [], [], "x", HIDDEN
    for k in range(2):
        for name, shape in ((f"W{k}", (2, 4 * HIDDEN, width)), (f"R{k}", (2, 4 * HIDDEN, HIDDEN)),
                            (f"B{k}", (2, 8 * HIDDEN))):
            inits.append(numpy_helper.from_array(
                rng.uniform(-0.3, 0.3, shape).astype(np.float32), name))
        nodes.append(helper.make_node("LSTM", [prev, f"W{k}", f"R{k}", f"B{k}"],
                                      [f"y{k}", f"h{k}", f"c{k}"], hidden_size=HIDDEN,
                                      direction="bidirectional"))
        nodes.append(helper.make_node("Transpose", [f"y{k}"], [f"t{k}"], perm=[0, 2, 1, 3]))
        inits.append(numpy_helper.from_array(np.array([seq, BATCH, 2 * HIDDEN], np.int64), f"s{k}"))
        nodes.append(helper.make_node("Reshape", [f"t{k}", f"s{k}"], [f"l{k}"]))
        prev, width = f"l{k}", 2 * HIDDEN
    graph = helper.make_graph(
        nodes, "stacked", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, BATCH, HIDDEN])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [seq, BATCH, 2 * HIDDEN])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)
    return import_onnx(model)


def visits_per_pass(seq: int, monkeypatch) -> tuple[dict[str, int], dict[str, bool]]:
    """Op visits of each pass of the instruction pipeline (named by its place and name),
    and whether it changed the program."""
    module = stacked_lstm(seq)
    optimize_graph(module, "cpu")
    run_pipeline(module, "lower-to-instr", verify=False)
    count = [0]
    plain = {name: getattr(Operation, name) for name in ("next_op", "prev_op", "operands")}

    def counting(prop: property) -> property:
        def get(self):
            count[0] += 1
            return prop.fget(self)
        return property(get, prop.fset)

    visits, changes = {}, {}
    for k, name in enumerate(instr_pass_names()):
        with monkeypatch.context() as patch:
            for attr, prop in plain.items():
                patch.setattr(Operation, attr, counting(prop))
            count[0] = 0
            before = program_size(module)
            run_pipeline(module, name, verify=False)
        visits[f"{k}:{name}"] = count[0]
        changes[f"{k}:{name}"] = before != program_size(module)
    return visits, changes


def program_size(module) -> tuple[int, ...]:
    """How many of each kind of op: a pass that rewrites changes it."""
    kinds: dict[str, int] = {}
    for op in module.walk():
        kinds[op.name] = kinds.get(op.name, 0) + 1
    return tuple(sorted(kinds.items()))


@pytest.fixture(scope="module")
def visits():
    with pytest.MonkeyPatch.context() as patch:
        return visits_per_pass(SMALL, patch), visits_per_pass(LARGE, patch)


def test_every_instruction_pass_visits_ops_linearly(visits):
    (small, _), (large, _) = visits
    assert small.keys() == large.keys()
    ratios = {name: large[name] / small[name] for name in small if small[name]}
    assert {"optimize-inserts-extracts", "share-buffers", "sink-alloc"} <= {
        name.split(":")[1] for name in ratios}
    worst = max(ratios, key=ratios.__getitem__)
    assert ratios[worst] <= 5, f"{worst}: {ratios[worst]:.1f}x the op visits for 4x the steps"


def test_the_passes_rewrite_at_both_sizes(visits):
    """The measure means something only where the passes have work to do."""
    (_, small), (_, large) = visits
    for name in ("optimize-inserts-extracts", "share-buffers"):
        key = next(k for k in small if k.endswith(":" + name))
        assert small[key] and large[key], name


def test_positions_stay_in_block_order_through_many_moves():
    """`Positions` keys moved and new ops between their neighbours' keys; when a gap runs
    out it renumbers a window around the op, not the block (checked against the order of
    the block after 300 insertions into one spot, and at both ends)."""
    from xdsl.dialects.test import TestOp
    from xdsl.ir import Block

    from glow_mlir.transforms.instr.optimize_inserts_extracts import Positions

    block = Block([TestOp() for _ in range(1000)])
    positions = Positions()
    positions.of(block)
    anchor = list(block.ops)[500]
    for k in range(300):
        op = TestOp()
        if k % 10 == 0:
            block.insert_op_before(op, block.first_op)  # type: ignore[arg-type]
        elif k % 10 == 1:
            block.add_op(op)
        else:
            block.insert_op_before(op, anchor)
        positions.placed(op)
        if k % 25 == 0:  # an old op moves too
            moved = list(block.ops)[k]
            moved.detach()
            block.insert_op_before(moved, anchor)
            positions.placed(moved)
    keys = [positions.of(block)[op] for op in block.ops]
    assert keys == sorted(set(keys)) and len(keys) == 1300
    assert positions.numbered < 3 * 1000  # renumbering the block per full gap: ~15,000
