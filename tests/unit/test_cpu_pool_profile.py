"""The pool's measuring aids (`targets/cpu/thread_pool.py`): `profile_regions` (each
parallel region's CPU time per worker); and which serial steps of ResNet-50's
kernels now split (issue 17: the caller ran them while the other thread waited).
No time is asserted, only where times land and which loops split."""

from __future__ import annotations

import numpy as np

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_winograd as wg
from glow_mlir.conversion.glow_ir_to_loops.parallel import PARALLEL_ATTR
from glow_mlir.targets.cpu import thread_pool
from test_cpu_threads import resnet_block
from test_cpu_winograd import conv_model


def _loops(model) -> int:
    return sum(PARALLEL_ATTR in op.attributes for op in model.module.walk())


def _x():
    return {"x": np.random.default_rng(1).standard_normal((1, 16, 28, 28)).astype(np.float32)}


def test_profile_regions_fills_one_row_per_region_and_worker(static_parts):
    model = resnet_block()
    one = glow_mlir.compile(model, num_threads=1, cache=False).run(_x())
    two = glow_mlir.compile(model, num_threads=2, cache=False)
    regions = _loops(two)  # each kernel's loop runs once per call here (batch 1)
    assert regions >= 1
    table = thread_pool.profile_regions(regions + 3)
    try:
        got = two.run(_x())
    finally:
        assert thread_pool.profile_regions(0) is None
    assert [a.tobytes() for a in got] == [a.tobytes() for a in one]
    assert table is not None and table.shape == (regions + 4, thread_pool.MAX_THREADS)
    assert not table[0].any()  # rows count from 1
    assert (table[1:regions + 1, :2] > 0).all()  # static parts: worker w ran part w
    assert not table[regions + 1:].any() and not table[:, 2:].any()
    before = table.copy()
    two.run(_x())  # profiling off: the table is no longer written
    assert np.array_equal(table, before)


def test_regions_past_the_table_are_not_recorded(monkeypatch, static_parts):
    two, _ = _winograd(monkeypatch, 256, 14, 256, 2)  # three regions a run
    model, feeds = conv_model(1, 256, 14, 14, 256, seed=512)
    table = thread_pool.profile_regions(1)
    try:
        two.run(feeds)
    finally:
        thread_pool.profile_regions(0)
    assert table is not None and table.shape[0] == 2
    assert (table[1, :2] > 0).all() and not table[0].any()


def _winograd(monkeypatch, c, hw, o, threads):
    monkeypatch.setattr(wg, "WINOGRAD", "always")
    monkeypatch.setattr(wg, "WINOGRAD_4", "never")
    model, feeds = conv_model(1, c, hw, hw, o, seed=c + o)
    compiled = glow_mlir.compile(model, backend="cpu", num_threads=threads, cache=False)
    return compiled, compiled.run(feeds)[0]


def test_winograd_transforms_split_at_resnet50_sizes(monkeypatch):
    """256 channels at 14x14 (ResNet-50's layer3): input transform, product and output
    transform each split; the bits those of one thread."""
    one, want = _winograd(monkeypatch, 256, 14, 256, 1)
    two, got = _winograd(monkeypatch, 256, 14, 256, 2)
    assert _loops(one) == 0 and _loops(two) == 3
    assert got.tobytes() == want.tobytes()


def test_small_winograd_transforms_stay_serial(monkeypatch):
    """64 -> 128 channels at 7x7: the product splits, the transforms are below the
    cut-off (`TRANSFORM_WORK`)."""
    two, _ = _winograd(monkeypatch, 64, 7, 128, 2)
    assert _loops(two) == 1


def _strided(c, hw, o, threads):
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(c)
    w = (rng.standard_normal((o, c, 1, 1)) * 0.1).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], strides=[2, 2])], "down",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    compiled = glow_mlir.compile(model, backend="cpu", num_threads=threads, cache=False)
    x = rng.standard_normal((1, c, hw, hw)).astype(np.float32)
    return compiled, compiled.run({"x": x})[0]


def test_strided_pointwise_copy_splits_at_resnet50_sizes():
    """ResNet-50's layer3 downsampling (512 -> 1024, 28x28 stride 2): the copy of the
    sampled pixels splits as the product does (two loops); same bits as one thread."""
    one, want = _strided(512, 28, 1024, 1)
    two, got = _strided(512, 28, 1024, 2)
    assert _loops(one) == 0 and _loops(two) == 2
    assert got.tobytes() == want.tobytes()
