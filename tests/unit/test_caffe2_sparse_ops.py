"""The embedding ops of Caffe2 recommendation nets against numpy loops written from
Caffe2's operator docs: Gather, BatchGather, SparseLengthsSum / WeightedSum / Mean,
LengthsSum, LengthsToRanges; lengths and indices are run-time inputs (empty segments
too), on the interpreter and the cpu backend."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from caffe2_nets import add_op, fill
from caffe2_testing import close, randn
from glow_mlir.frontends.caffe2 import NetDef
from glow_mlir.ir.errors import UserError

INT32, INT64 = 2, 10


def _segments(rows: np.ndarray, lengths: np.ndarray, mean: bool = False) -> np.ndarray:
    out, start = [], 0
    for n in lengths:
        seg = rows[start:start + n]
        total = seg.sum(axis=0) if n else np.zeros(rows.shape[1:], np.float32)
        out.append(total / max(n, 1) if mean else total)
        start += n
    return np.stack(out).astype(np.float32)


def _compile(predict: NetDef, init: NetDef, shapes: dict, backend: str = "interpreter"):
    return glow_mlir.compile((predict, init), backend=backend, input_shapes=shapes)


def test_gather_and_batch_gather() -> None:
    data = randn(5, 3, 2)
    idx = np.array([[4, 0], [2, 2]], np.int64)
    predict, init = NetDef(), NetDef()
    fill(init, "data", data)
    bidx = np.array([2, 0, 1, 1], np.int32)
    predict.external_input.extend(["data", "idx", "bidx"])
    add_op(predict, "Gather", ["data", "idx"], ["g"])
    add_op(predict, "BatchGather", ["data", "bidx"], ["bg"])
    predict.external_output.extend(["g", "bg"])
    g, bg = _compile(predict, init, {"idx": [INT64, [2, 2]], "bidx": [INT32, [4]]}).run(
        {"idx": idx, "bidx": bidx})
    close(g, data[idx])
    close(bg, data[:, bidx])


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("op", ["SparseLengthsSum", "SparseLengthsWeightedSum",
                                "SparseLengthsMean"])
def test_sparse_lengths_family(op: str, backend: str) -> None:
    """An embedding table filled by the init net; indices, weights, lengths at run time."""
    table = randn(10, 4)
    predict, init = NetDef(), NetDef()
    fill(init, "table", table)
    weighted = op == "SparseLengthsWeightedSum"
    inputs = ["table", *(["w"] if weighted else []), "idx", "len"]
    predict.external_input.extend(inputs)
    add_op(predict, op, inputs, ["y"])
    predict.external_output.append("y")
    shapes = {"idx": [INT64, [7]], "len": [INT32, [4]], "w": [1, [7]]}
    model = _compile(predict, init, {k: shapes[k] for k in inputs[1:]}, backend)
    rng = np.random.default_rng(5)
    for lengths in ([2, 0, 4, 1], [0, 0, 7, 0], [1, 1, 1, 4]):
        idx = rng.integers(0, 10, size=7).astype(np.int64)
        lens = np.array(lengths, np.int32)
        w = randn(7)
        feeds = {"idx": idx, "len": lens, **({"w": w} if weighted else {})}
        y, = model.run(feeds)
        rows = table[idx] * (w[:, None] if weighted else 1)
        np.testing.assert_allclose(y, _segments(rows, lens, mean=op == "SparseLengthsMean"),
                                   rtol=1e-5, atol=1e-6)


def test_lengths_sum_and_to_ranges() -> None:
    data = randn(6, 2, 3)
    lens = np.array([3, 0, 2, 1], np.int32)
    predict = NetDef()
    predict.external_input.extend(["data", "len"])
    add_op(predict, "LengthsSum", ["data", "len"], ["s"])
    add_op(predict, "LengthsToRanges", ["len"], ["r"])
    predict.external_output.extend(["s", "r"])
    s, r = _compile(predict, NetDef(), {"data": data.shape, "len": [INT32, [4]]}).run(
        {"data": data, "len": lens})
    close(s, _segments(data, lens))
    assert r.dtype == np.int32 and r.tolist() == [[0, 3], [3, 0], [3, 2], [5, 1]]


def test_bad_indices_and_weights_name_the_op() -> None:
    predict, init = NetDef(), NetDef()
    fill(init, "table", randn(4, 2))
    predict.external_input.extend(["table", "w", "idx", "len"])
    add_op(predict, "SparseLengthsWeightedSum", ["table", "w", "idx", "len"], ["y"],
           name="sls")
    predict.external_output.append("y")
    with pytest.raises(UserError, match=r"'sls' \(SparseLengthsWeightedSum\): the weights "
                                        r"3 must match the indices 5"):
        _compile(predict, init, {"w": [1, [3]], "idx": [INT64, [5]], "len": [INT32, [2]]})
    with pytest.raises(UserError, match=r"the indices \(input #2\) must be a 1-D integer"):
        _compile(predict, init, {"w": [1, [5]], "idx": [1, [5]], "len": [INT32, [2]]})


def test_embedding_with_a_pad_index() -> None:
    table = randn(6, 3)
    idx = np.array([[0, 2, 5], [2, 2, 1]], np.int64)
    predict, init = NetDef(), NetDef()
    fill(init, "t", table)
    predict.external_input.extend(["t", "i"])
    add_op(predict, "Embedding", ["t", "i"], ["e"], padIdx=2)
    add_op(predict, "Embedding", ["t", "i"], ["f"])
    predict.external_output.extend(["e", "f"])
    e, f = _compile(predict, init, {"i": [INT64, [2, 3]]}).run({"i": idx})
    want = table[idx]
    close(f, want)
    want[idx == 2] = 0
    close(e, want)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_embedding_bag_by_offsets(backend: str) -> None:
    """Bag b: indices [offsets[b], offsets[b + 1]), the last to the end; weighted."""
    table = randn(8, 4)
    predict, init = NetDef(), NetDef()
    fill(init, "t", table)
    predict.external_input.extend(["t", "w", "i", "o"])
    add_op(predict, "EmbeddingBag", ["t", "w", "i", "o"], ["y"])
    predict.external_output.append("y")
    model = _compile(predict, init, {"w": [1, [6]], "i": [INT32, [6]], "o": [INT32, [3]]},
                     backend)
    w, idx = randn(6), np.array([7, 0, 3, 3, 1, 6], np.int32)
    for offsets in ([0, 2, 2], [0, 1, 5]):
        o = np.array(offsets, np.int32)
        y, = model.run({"w": w, "i": idx, "o": o})
        lengths = np.diff(np.append(o, 6)).astype(np.int32)
        close(y, _segments(table[idx] * w[:, None], lengths))
