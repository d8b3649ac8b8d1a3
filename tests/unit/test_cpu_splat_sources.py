"""Element-wise stacks reading a splat-filled source as the splat's constant
(`conversion/glow_ir_to_loops/splat_sources.py`): where it fires and where it must not,
and that the outputs are onnxruntime's / the instruction interpreter's, the same bits for
1, 2 and 3 threads."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import given
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import splat_sources
from instr_testing import instr_programs, needs_interpreter, parse, program, program_inputs, run
from instr_testing import random_settings as _settings

F = TensorProto.FLOAT


def _gelus(n: int = 2) -> onnx.ModelProto:
    """`n` GELUs in transformers' tanh form (`Pow(x, 3)`), each behind a Softmax: `cse`
    makes their constants one set of splats, so the GELUs after the first read them."""
    inits = {"three": 3.0, "k": 0.044715, "s": 0.7978845608, "one": 1.0, "half": 0.5}
    nodes, x = [], "x"
    for i in range(n):
        p = f"l{i}_"
        nodes += [helper.make_node("Pow", [x, "three"], [p + "p"]),
                  helper.make_node("Mul", [p + "p", "k"], [p + "m"]),
                  helper.make_node("Add", [x, p + "m"], [p + "a"]),
                  helper.make_node("Mul", [p + "a", "s"], [p + "b"]),
                  helper.make_node("Tanh", [p + "b"], [p + "t"]),
                  helper.make_node("Add", [p + "t", "one"], [p + "u"]),
                  helper.make_node("Mul", [x, "half"], [p + "h"]),
                  helper.make_node("Mul", [p + "h", p + "u"], [p + "g"]),
                  helper.make_node("Softmax", [p + "g"], [p + "y"], axis=-1)]
        x = p + "y"
    nodes[-1].output[0] = "y"
    graph = helper.make_graph(
        nodes, "gelus", [helper.make_tensor_value_info("x", F, [4, 64])],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=10)


def _spy(monkeypatch) -> list[dict]:
    """Every stack's splat-filled sources as `emit_block` gets them."""
    import glow_mlir.conversion.glow_ir_to_loops as loops

    found: list[dict] = []
    real = loops.splat_filled_sources

    def spy(*args):
        got = real(*args)
        found.extend(got)
        return got

    monkeypatch.setattr(loops, "splat_filled_sources", spy)
    return found


def _compile_run(model, feeds: dict, threads: int = 1) -> np.ndarray:
    out = glow_mlir.compile(model, backend="cpu", num_threads=threads, cache=False).run(feeds)
    return out["y"] if isinstance(out, dict) else out[0]


def test_shared_gelu_splats_read_as_constants(monkeypatch):
    import onnxruntime as ort

    model = _gelus(3)
    x = (np.random.default_rng(0).standard_normal((4, 64)) * 3).astype(np.float32)
    found = _spy(monkeypatch)
    outs = [_compile_run(model, {"x": x}, t) for t in (1, 2, 3)]
    values = sorted({s.attributes["value"].value.data for f in found for s in f.values()})
    # the GELUs after the first read all five shared splats (3.0 for the Pow among them)
    assert values == pytest.approx(sorted([3.0, 0.044715, 0.7978845608, 1.0, 0.5]))
    ref = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_allclose(outs[0], ref, rtol=1e-5, atol=1e-6)
    for o in outs[1:]:
        assert np.array_equal(o, outs[0])
    monkeypatch.setattr(splat_sources, "SPLAT_SOURCES", False)
    found.clear()
    off = _compile_run(model, {"x": x})
    assert not any(found)
    np.testing.assert_allclose(off, outs[0], rtol=1e-5, atol=1e-6)


PARTLY_OVERWRITTEN = program("""
%a = glow_ir.alloc_activation : memref<64xf32>
glow_ir.splat @out %a {value = 3.0 : f32} : memref<64xf32>
%p = glow_ir.tensor_view %x[0] : memref<64xf32> to memref<16xf32>
glow_ir.element_mul @out %y, @in %x, @in %a : memref<64xf32>
glow_ir.insert_tensor @inout %a, @in %p {offsets = array<i64: 8>} : memref<64xf32>, memref<16xf32>
glow_ir.element_mul @out %y, @in %y, @in %a : memref<64xf32>
glow_ir.dealloc_activation %a : memref<64xf32>
""", type="memref<64xf32>")
"""A splat read by a multiply, then partly overwritten by an insert (not element-wise:
it ends the stack): the second multiply must read the tensor."""

WHOLE = PARTLY_OVERWRITTEN.replace("insert_tensor @inout %a", "insert_tensor @inout %y")
"""The same insert into the output instead: the second multiply reads the splat as a
constant."""


@needs_interpreter
@pytest.mark.parametrize("text, fires", [(PARTLY_OVERWRITTEN, False), (WHOLE, True)])
def test_splat_sources_on_programs(text, fires, monkeypatch, tmp_path):
    path = tmp_path / "p.mlir"
    path.write_text(text)
    module = parse(text)
    inputs = program_inputs(module)
    want = run(module, inputs)[0]
    found = _spy(monkeypatch)
    outs = [_compile_run(str(path), {"x": inputs[0]}, t) for t in (1, 2, 3)]
    hits = [v.name_hint for f in found for v in f]
    assert hits == (["a"] * 3 if fires else [])  # one compile per thread count
    np.testing.assert_allclose(outs[0], want, rtol=1e-6, atol=1e-6)
    for o in outs[1:]:
        assert np.array_equal(o, outs[0])


@needs_interpreter
@_settings(12)
@given(text=instr_programs())
def test_random_programs_match_the_interpreter(text, tmp_path_factory):
    """Random programs (splats partly overwritten through views, inserts, in-place ops)
    compiled for the cpu give the interpreter's outputs."""
    module = parse(text)
    inputs = program_inputs(module)
    want = run(module, inputs)
    path = tmp_path_factory.mktemp("p") / "p.mlir"
    path.write_text(text)
    compiled = glow_mlir.compile(str(path), backend="cpu", num_threads=1, cache=False)
    out = compiled.run(dict(zip(compiled.input_names, inputs)))
    got = list(out.values()) if isinstance(out, dict) else list(out)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
