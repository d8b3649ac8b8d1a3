"""Recommendation-net ops against numpy written from Caffe2's operator docs: the
rowwise-quantized embedding sums (tables encoded here as Caffe2's FloatToFused*Rowwise
ops lay them out, the reference summing the encoder's q * scale + bias), ScatterAssign,
SparseToDense, GatherND, Bucketize, BatchOneHot and LengthsRangeFill."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from caffe2_nets import add_op, fill
from caffe2_testing import close, randn
from glow_mlir.frontends.caffe2 import NetDef
from glow_mlir.ir.errors import UserError

INT32, INT64 = 2, 10
RNG = np.random.default_rng(11)


def _encode(rows: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, scale, bias) per row: q = round((x - min) / scale), scale = range / (2^bits - 1)."""
    lo, hi = rows.min(axis=1, keepdims=True), rows.max(axis=1, keepdims=True)
    scale = ((hi - lo) / (2**bits - 1)).astype(np.float32)
    if bits == 4:
        scale, lo = scale.astype(np.float16).astype(np.float32), lo.astype(np.float16).astype(
            np.float32)
    q = np.clip(np.round((rows - lo) / scale), 0, 2**bits - 1).astype(np.uint8)
    return q, scale, lo


def _table_bytes(kind: str, q: np.ndarray, scale: np.ndarray, bias: np.ndarray) -> np.ndarray:
    if kind == "Fused8BitRowwise":
        params = np.concatenate([scale, bias], axis=1).astype("<f4").view(np.uint8)
        return np.concatenate([q, params], axis=1)
    if kind == "Fused4BitRowwise":
        packed = (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8)
        params = np.concatenate([scale, bias], axis=1).astype("<f2").view(np.uint8)
        return np.concatenate([packed, params], axis=1)
    return q  # 8BitsRowwise: the scale and bias are an input of their own


def _segments(rows: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    ends = np.cumsum(lengths)
    return np.stack([rows[e - n:e].sum(axis=0) for n, e in zip(lengths, ends)])


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kind", ["8BitsRowwise", "Fused8BitRowwise", "Fused4BitRowwise"])
def test_rowwise_quantized_sparse_lengths_sum(kind: str, weighted: bool) -> None:
    floats = randn(12, 6)
    q, scale, bias = _encode(floats, 4 if "4Bit" in kind else 8)
    table = _table_bytes(kind, q, scale, bias)
    predict, init = NetDef(), NetDef()
    add_op(init, "GivenTensorByteStringToUInt8Fill", [], ["table"], shape=list(table.shape),
           values=table.tobytes())
    op = f"SparseLengths{'Weighted' if weighted else ''}Sum{kind}"
    inputs = ["table", *(["w"] if weighted else []), "idx", "len"]
    if kind == "8BitsRowwise":
        fill(init, "sb", np.concatenate([scale, bias], axis=1).astype(np.float32))
        inputs.append("sb")
    predict.external_input.extend(inputs)
    add_op(predict, op, inputs, ["y"])
    predict.external_output.append("y")
    shapes = {"idx": [INT64, [8]], "len": [INT32, [3]], "w": [1, [8]]}
    model = glow_mlir.compile((predict, init), backend="interpreter", input_shapes={
        k: v for k, v in shapes.items() if k in inputs})
    idx, lens, w = RNG.integers(0, 12, 8), np.array([3, 0, 5], np.int32), randn(8)
    y, = model.run({"idx": idx, "len": lens, **({"w": w} if weighted else {})})
    rows = (q.astype(np.float32) * scale + bias)[idx] * (w[:, None] if weighted else 1)
    np.testing.assert_allclose(y, _segments(rows, lens), rtol=1e-5, atol=1e-5)
    assert np.abs(y - _segments(floats[idx] * (w[:, None] if weighted else 1), lens)).max() < (
        0.5 if "4Bit" in kind else 0.05), "the decoded table is near the floats it encodes"


def test_a_short_fused_row_is_an_error() -> None:
    predict, init = NetDef(), NetDef()
    add_op(init, "GivenTensorByteStringToUInt8Fill", [], ["t"], shape=[2, 8], values=bytes(16))
    predict.external_input.extend(["t", "i", "l"])
    add_op(predict, "SparseLengthsSumFused8BitRowwise", ["t", "i", "l"], ["y"], name="sls")
    predict.external_output.append("y")
    with pytest.raises(UserError, match=r"'sls'.*8 bytes is too short"):
        glow_mlir.compile((predict, init), backend="interpreter",
                          input_shapes={"i": [INT64, [2]], "l": [INT32, [1]]})


def _run(type_: str, inputs: dict[str, np.ndarray], weights: dict[str, np.ndarray] | None = None,
         order: list[str] | None = None, **args) -> np.ndarray:
    """One op reading `order` (default: the inputs, then the weights)."""
    codes = {np.dtype(np.float32): 1, np.dtype(np.int32): INT32, np.dtype(np.int64): INT64}
    predict, init = NetDef(), NetDef()
    for name, array in (weights or {}).items():
        fill(init, name, array)
    predict.external_input.extend([*inputs, *(weights or {})])
    add_op(predict, type_, order or [*inputs, *(weights or {})], ["y"], name="op", **args)
    predict.external_output.append("y")
    shapes = {k: [codes[v.dtype], list(v.shape)] for k, v in inputs.items()}
    y, = glow_mlir.compile((predict, init), backend="interpreter", input_shapes=shapes).run(
        inputs)
    return y


def test_scatter_assign() -> None:
    data, slices = randn(6, 3), randn(2, 3)
    idx = np.array([4, 1], np.int64)
    want = data.copy()
    want[idx] = slices
    close(_run("ScatterAssign", {"data": data, "idx": idx, "s": slices}), want)


def test_sparse_to_dense_sums_repeated_indices() -> None:
    idx, vals = np.array([3, 0, 3, 1], np.int32), randn(4, 2)
    want = np.zeros((5, 2), np.float32)
    np.add.at(want, idx, vals)
    close(_run("SparseToDense", {"idx": idx, "v": vals, "like": randn(5)}), want)
    # the output's first dim from the (constant) indices
    got = _run("SparseToDense", {"v": vals}, weights={"idx": idx}, order=["idx", "v"])
    close(got, want[:4])
    ivals = np.array([5, 6, 7, 8], np.int32)
    got = _run("SparseToDense", {"idx": idx, "v": ivals, "like": randn(5)})
    assert got.dtype == np.int32 and got.tolist() == [6, 8, 0, 12, 0]


def test_gather_nd_bucketize_batch_one_hot_lengths_range_fill() -> None:
    data = randn(3, 4, 2)
    idx = np.array([[2, 1], [0, 3]], np.int64)
    close(_run("GatherND", {"d": data, "i": idx}), data[idx[:, 0], idx[:, 1]])
    x = np.array([[-1.0, 0.5, 1.0], [2.5, 3.0, 9.0]], np.float32)
    got = _run("Bucketize", {"x": x}, boundaries=[0.5, 1.0, 3.0])
    assert got.dtype == np.int32
    assert got.tolist() == np.searchsorted([0.5, 1.0, 3.0], x, side="left").tolist()
    xs = np.array([[1, 2], [3, 2]], np.int64)
    got = _run("BatchOneHot", {"x": xs}, weights={"lens": np.array([2, 1], np.int32),
                                                 "vals": np.array([1, 3, 2], np.int64)})
    assert got.tolist() == [[1, 0, 1], [0, 1, 1]]
    predict, init = NetDef(), NetDef()
    fill(init, "l", np.array([2, 0, 3], np.int32))
    predict.external_input.append("l")
    add_op(predict, "LengthsRangeFill", ["l"], ["r"])
    predict.external_output.append("r")
    r, = glow_mlir.compile((predict, init), backend="interpreter").run({})
    assert r.tolist() == [0, 1, 0, 1, 2]


def test_fill_examples_with_indicator() -> None:
    data = randn(3, 2)
    ind = np.array([0, 1, 1, 0, 1], np.int32)
    got = _run("FillExamplesWithIndicator", {"d": data, "i": ind})
    want = np.zeros((5, 2), np.float32)
    want[ind != 0] = data
    close(got, want)


def test_batch_sparse_to_dense() -> None:
    lengths = np.array([2, 0, 3], np.int32)
    idx = np.array([1, 3, 0, 3, 2], np.int64)
    vals = randn(5)
    got = _run("BatchSparseToDense", {"l": lengths, "i": idx, "v": vals}, dense_last_dim=4,
               default_value=-1.0)
    want = np.full((3, 4), -1.0, np.float32)
    for b, (n, end) in enumerate(zip(lengths, np.cumsum(lengths))):
        for k in range(end - n, end):
            want[b, idx[k]] = vals[k]
    close(got, want)


def test_sparse_to_dense_mask() -> None:
    """Per example, the value of each masked id (the default where it is missing)."""
    idx = np.array([7, 3, 9, 3, 5], np.int64)
    vals, default = randn(5, 2), randn(2)
    mask = [3, 5, 7]
    got = _run("SparseToDenseMask", {"i": idx, "v": vals, "d": default,
                                     "l": np.array([3, 0, 2], np.int32)}, mask=mask)
    want = np.tile(default, (3, 3, 1))
    for b, (lo, hi) in enumerate([(0, 3), (3, 3), (3, 5)]):
        for k in range(lo, hi):
            if idx[k] in mask:
                want[b, mask.index(idx[k])] = vals[k]
    close(got, want)
    got = _run("SparseToDenseMask", {"i": idx[:3], "v": vals[:3], "d": default}, mask=mask)
    close(got, want[0])


def test_gather_ranges() -> None:
    data = np.arange(10, 20).astype(np.float32)
    ranges = np.array([[[2, 3], [0, 0]], [[7, 2], [1, 1]]], np.int32)
    predict = NetDef()
    predict.external_input.extend(["d", "r"])
    add_op(predict, "GatherRanges", ["d", "r"], ["out", "len"], maxOutputSize=8)
    predict.external_output.extend(["out", "len"])
    out, lens = glow_mlir.compile((predict, NetDef()), backend="interpreter", input_shapes={
        "d": data.shape, "r": [INT32, [2, 2, 2]]}).run({"d": data, "r": ranges})
    want = np.concatenate([data[s:s + n] for s, n in ranges.reshape(-1, 2)])
    close(out, np.concatenate([want, np.zeros(8 - want.size, np.float32)]))
    assert lens.dtype == np.int32 and lens.tolist() == [3, 3]
