"""A fused epilogue's constant source whose rows hold the same bits (a linear bias, [M]
broadcast to the product's [1, N, M] and folded to a constant, where `fold-matmul-add`
does not take it into a fully_connected: turned off here) is read from its first row only
(`epilogue.Finish._rows_equal`): the same numbers; a constant whose rows differ, even
only by the sign of a zero, is read whole."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import epilogue


def _linear(c: np.ndarray):
    """x [1, 37, 64] @ w [64, 80] + c (a constant of shape [80] or [1, 37, 80])."""
    rng = np.random.default_rng(1)
    w = (rng.standard_normal((64, 80)) * 0.1).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["p"]),
         helper.make_node("Add", ["p", "c"], ["y"])], "bias",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 37, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(c, "c")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=10)


NO_FOLD = ("fold-matmul-add",)
"""The bias would go into a fully_connected (no epilogue source left to decide on)."""


@pytest.fixture
def decided(monkeypatch):
    """Each `_constant_rows_equal` answer of a compile."""
    answers: list[bool] = []
    real = epilogue._constant_rows_equal

    def recorded(v, cols):
        answers.append(real(v, cols))
        return answers[-1]

    monkeypatch.setattr(epilogue, "_constant_rows_equal", recorded)
    return answers


def _bias():
    return np.random.default_rng(2).standard_normal(80).astype(np.float32)


def _tiled_but(row: int, col: int, value: float):
    c = np.tile(_bias(), (1, 37, 1))
    c[0, row, col] = value
    return c


CASES = {
    "folded bias": (np.tile(_bias(), (1, 37, 1)), True),
    "broadcast bias": (_bias(), True),
    "rows differ": (np.random.default_rng(3).standard_normal((1, 37, 80)).astype(np.float32),
                    False),
    "last row differs": (_tiled_but(36, 79, 5.0), False),
    "a zero's sign": (None, False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_first_row_read_only_when_every_row_has_its_bits(name, decided):
    c, want = CASES[name]
    if c is None:  # 0.0 in the first row, -0.0 in another: other bits (-0.0 + 0.0 is 0.0)
        b = _bias()
        b[5] = 0.0
        c = np.tile(b, (1, 37, 1))
        c[0, 20, 5] = -0.0
    model = _linear(c)
    compiled = glow_mlir.compile(model, num_threads=1, cache=False, disable_passes=NO_FOLD)
    assert decided and all(a is want for a in decided)
    x = np.random.default_rng(4).standard_normal((1, 37, 64)).astype(np.float32)
    ref = glow_mlir.compile(model, backend="interpreter", cache=False)(x)[0]
    got = compiled(x)[0]
    np.testing.assert_allclose(got, ref, rtol=2e-5, atol=2e-5)
    saved, epilogue.FUSE_EPILOGUES = epilogue.FUSE_EPILOGUES, False
    try:
        unfused = glow_mlir.compile(model, num_threads=1, cache=False,
                                    disable_passes=NO_FOLD)(x)[0]
    finally:
        epilogue.FUSE_EPILOGUES = saved
    assert got.tobytes() == unfused.tobytes()
