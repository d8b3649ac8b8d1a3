"""Transposes folded into `batch_mat_mul` on cpu (`fold-transposes-into-batch-matmul`,
`conversion/glow_ir_to_loops/strided_operands.py`): attention's per-head Q, K, V
transposes read strided (K's packed per head), against the interpreter (which keeps the
transposes) and onnxruntime; bit for bit across thread counts; the op's rules for the
shuffles; the reference semantics of a folded op."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

import glow_mlir
from glow_mlir.dialects import glow
from glow_mlir.model_zoo import bert_layer
from glow_mlir.tools import glow_compile

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, inits=()) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "attention", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, F, None) for n in outputs],
        [numpy_helper.from_array(v, n) for n, v in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=8)


def attention(seq: int, heads: int, dim: int) -> onnx.ModelProto:
    """softmax(Q K^T) V per head, Q, K, V [1, seq, heads, dim] split as exporters do,
    the context transposed back."""
    shape = [1, seq, heads, dim]
    return _model([
        helper.make_node("Transpose", ["q"], ["qt"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v"], ["vt"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qt", "kt"], ["s"]),
        helper.make_node("Softmax", ["s"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "vt"], ["c"]),
        helper.make_node("Transpose", ["c"], ["y"], perm=[0, 2, 1, 3]),
    ], [("q", shape), ("k", shape), ("v", shape)], ["y"])


def transposed_rhs(b: int, n: int, k: int, m: int) -> onnx.ModelProto:
    """a [b, n, k] @ transpose(w [b, m, k]): a rank-3 transposed rhs."""
    return _model([
        helper.make_node("Transpose", ["w"], ["wt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["a", "wt"], ["y"]),
    ], [("a", [b, n, k]), ("w", [b, m, k])], ["y"])


def _inputs(model, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for i in model.graph.input:
        dims = [d.dim_value for d in i.type.tensor_type.shape.dim]
        out[i.name] = rng.standard_normal(dims).astype(np.float32)
    return out


CASES = {
    "attention_odd": lambda: attention(7, 3, 5),
    "attention_wide": lambda: attention(33, 2, 16),
    "rank3_rhs": lambda: transposed_rhs(3, 5, 6, 9),
    # whole blocks of lanes: K^T packed by register transposes (`_pack_by_blocks`)
    "attention_blocks": lambda: attention(32, 2, 16),
    "rank3_rhs_blocks": lambda: transposed_rhs(2, 5, 16, 48),
    # K^T in the micro-kernel's panels: two of 64 columns, the second partial (its
    # last vector zero-padded), blocks and the columns past them
    "attention_panels": lambda: attention(70, 2, 16),
}


def _instr(model, tmp_path, capsys) -> str:
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    with pytest.raises(SystemExit) as info:
        glow_compile.main([str(path), "--emit", "instr", "--quiet"])
        raise SystemExit(0)
    out = capsys.readouterr()
    assert info.value.code == 0, out.err
    return out.out


@pytest.mark.parametrize("name", sorted(CASES))
def test_folded_transposes_are_gone(name, tmp_path, capsys):
    """Every transpose feeding a batch matmul is folded: only the context's (attention)
    stays."""
    text = _instr(CASES[name](), tmp_path, capsys)
    want = 1 if name.startswith("attention") else 0
    assert text.count("glow_ir.transpose") == want, text
    assert "_perm = array" in text


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_interpreter_and_onnxruntime(name, static_parts):
    model = CASES[name]()
    x = _inputs(model)
    want = glow_mlir.compile(model, backend="interpreter").run(x)[0]
    ort_out = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"]).run(None, x)[0]
    got = {n: glow_mlir.compile(model, backend="cpu", num_threads=n).run(x)[0]
           for n in (1, 2, 3)}
    np.testing.assert_allclose(got[1], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], ort_out, rtol=1e-5, atol=1e-5)
    for n in (2, 3):
        assert np.array_equal(got[n], got[1]), f"{n} threads differ from 1"


@pytest.mark.parametrize("lanes", [8, 16])
@pytest.mark.parametrize("name", ["attention_blocks", "rank3_rhs_blocks"])
def test_packed_by_register_transposes(name, lanes, monkeypatch):
    """A strided rhs whose dims are whole blocks of the lanes is packed by shuffles (the
    kernel holds them), with AVX2's 8 lanes and AVX-512's 16: the interpreter's numbers,
    the same bits on 1, 2 and 3 threads."""
    from xdsl.dialects import llvm

    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    monkeypatch.setattr(gemm_micro, "LANES", lanes)
    model = CASES[name]()
    x = _inputs(model, seed=1)
    want = glow_mlir.compile(model, backend="interpreter").run(x)[0]
    compiled = {n: glow_mlir.compile(model, backend="cpu", num_threads=n, cache=False)
                for n in (1, 2, 3)}
    assert any(isinstance(op, llvm.ShuffleVectorOp) for op in compiled[1].module.walk())
    got = {n: m.run(x)[0] for n, m in compiled.items()}
    np.testing.assert_allclose(got[1], want, rtol=1e-5, atol=1e-5)
    for n in (2, 3):
        assert np.array_equal(got[n], got[1]), f"{n} threads differ from 1"


def test_bert_layer_against_interpreter_and_onnxruntime():
    """A small BERT layer: Q and K^T folded in the scores, V in the context."""
    model = bert_layer(seq=12, hidden=24, heads=3, ffn=48)
    rng = np.random.default_rng(1)
    x = {"hidden_states": rng.standard_normal((1, 12, 24)).astype(np.float32),
         "attention_mask": np.array([[1] * 9 + [0] * 3], np.int64)}
    want = glow_mlir.compile(model, backend="interpreter").run(x)[0]
    ort_out = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"]).run(None, x)[0]
    got = glow_mlir.compile(model, backend="cpu", num_threads=2).run(x)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got, ort_out, rtol=1e-4, atol=1e-5)


def _value(shape):
    """A detached tensor value of this shape (a block argument)."""
    return Block(arg_types=[TensorType(f32, shape)]).args[0]


def _bmm(lhs, rhs, result, **perms):
    return glow.BatchMatMulOp.make([_value(lhs), _value(rhs)], TensorType(f32, result),
                                   **perms)


def test_perm_rules():
    _bmm([1, 5, 3, 4], [1, 5, 3, 4], [3, 5, 5], lhs_perm=(0, 2, 1, 3),
         rhs_perm=(0, 2, 3, 1)).verify()
    bad = [
        (([2, 4, 3], [2, 4, 5], [2, 3, 5]), {"lhs_perm": (0, 2, 1)}, "keep the last dim"),
        (([2, 3, 4], [2, 5, 4], [2, 3, 5]), {"rhs_perm": (0, 1, 1)}, "not a permutation"),
        (([2, 3, 4], [2, 5, 4], [2, 3, 4]), {"rhs_perm": (0, 2, 1)}, "result"),
        (([2, 3, 4], [2, 4], [2, 3, 4]), {"rhs_perm": (1, 0)}, "rank >= 3"),
    ]
    for (lhs, rhs, res), perms, msg in bad:
        with pytest.raises(VerifyException, match=msg):
            _bmm(lhs, rhs, res, **perms).verify()


def test_reference_semantics_of_a_folded_op():
    """The evaluator's batch_mat_mul applies the shuffles: the folded op computes what the
    transposes and the plain op computed."""
    from glow_mlir.semantics.kernels.linalg import batch_mat_mul

    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((2, 1, 5, 3, 4)).astype(np.float32)
    op = _bmm([1, 5, 3, 4], [1, 5, 3, 4], [3, 5, 5], lhs_perm=(0, 2, 1, 3),
              rhs_perm=(0, 2, 3, 1))
    got = batch_mat_mul(op, q, k)
    want = np.matmul(q.transpose(0, 2, 1, 3).reshape(3, 5, 4).astype(np.float64),
                     k.transpose(0, 2, 3, 1).reshape(3, 4, 5).astype(np.float64))
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6)
