"""What a user gets from a Caffe2 model the frontend cannot take: malformed or truncated
protobufs, an input with neither a fill nor a shape (missing weights), unsupported ops and
argument values (one message listing them all), each a `Caffe2ImportError` from the API
and one line, exit 1 and no traceback from glow-compile (and glow-run)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import caffe2_nets as nets
import glow_mlir
from caffe2_nets import add_op
from glow_mlir.frontends.caffe2 import (
    Caffe2ImportError,
    NetDef,
    UnsupportedCaffe2Error,
    import_caffe2,
)
from glow_mlir.tools import glow_compile, glow_run
from tool_testing import in_process

LENET_SHAPE = {"data": (2, 1, 28, 28)}


def _write(tmp: Path, predict: bytes, init: bytes) -> tuple[Path, Path]:
    p, i = tmp / "predict_net.pb", tmp / "init_net.pb"
    p.write_bytes(predict)
    i.write_bytes(init)
    return p, i


def _cli(capsys, tmp: Path, predict: bytes, init: bytes, *extra: str) -> str:
    """glow-compile --caffe2 on these bytes: exit 1, one line on stderr; returns it."""
    p, i = _write(tmp, predict, init)
    code, out, err = in_process(glow_compile.main, capsys, "--caffe2", p, i, *extra)
    assert code == 1, (out, err)
    lines = err.strip().splitlines()
    assert lines[0].startswith("glow-compile: error: "), err
    return err


# ---------------------------------------------------------------------- malformed input


def test_garbage_bytes_are_not_a_netdef(tmp_path, capsys) -> None:
    garbage = bytes(range(7, 250, 3)) * 4
    with pytest.raises(Caffe2ImportError, match=r"predict net \(bytes\) is not a valid "
                                                 "Caffe2 NetDef"):
        import_caffe2(garbage, b"", LENET_SHAPE)
    err = _cli(capsys, tmp_path, garbage, b"")
    assert "is not a valid Caffe2 NetDef" in err and "predict_net.pb" in err


@pytest.mark.parametrize("which", ["predict", "init"])
def test_truncated_protobufs(tmp_path, capsys, which: str) -> None:
    """Every cut of either net (every 7th length) is a Caffe2ImportError that says the file
    may be truncated: protobuf's parser refuses a cut inside a field; a cut between fields
    leaves a net that lacks outputs or weights or reads a blob nobody defines."""
    predict, init = nets.lenet().pair()
    whole = predict if which == "predict" else init
    for length in range(1, len(whole), 7):
        cut = whole[:length]
        pair = (cut, init) if which == "predict" else (predict, cut)
        with pytest.raises(Caffe2ImportError, match="truncated"):
            import_caffe2(*pair, LENET_SHAPE)
    cut = whole[: len(whole) * 2 // 3 + 1]
    pair = (cut, init) if which == "predict" else (predict, cut)
    err = _cli(capsys, tmp_path, *pair, "--input-shape", "data=2x1x28x28")
    assert "truncated" in err


def test_empty_predict_net_and_missing_files(tmp_path, capsys) -> None:
    with pytest.raises(Caffe2ImportError, match="empty, not a Caffe2 NetDef"):
        import_caffe2(b"", b"", {})
    with pytest.raises(Caffe2ImportError, match="no such file"):
        glow_mlir.compile((tmp_path / "nope.pb", tmp_path / "init.pb"))
    code, _, err = in_process(glow_compile.main, capsys, "--caffe2", tmp_path / "nope.pb",
                              tmp_path / "init.pb")
    assert code == 1 and "no such file" in err


def test_swapped_nets_are_named(tmp_path, capsys) -> None:
    predict, init = nets.lenet().pair()
    with pytest.raises(Caffe2ImportError, match="are the two swapped"):
        import_caffe2(init, predict, LENET_SHAPE)
    err = _cli(capsys, tmp_path, init, predict, "--input-shape", "data=2x1x28x28")
    assert "swapped" in err


def test_a_bad_pbtxt(tmp_path) -> None:
    (tmp_path / "p.pbtxt").write_text('op { type: "Relu" input: "x" ')
    with pytest.raises(Caffe2ImportError, match="not a valid NetDef in text format"):
        import_caffe2(tmp_path / "p.pbtxt", None, {"x": (1,)})


# ---------------------------------------------------------------------- weights and inputs


def test_missing_weights_name_the_blob(tmp_path, capsys) -> None:
    """The init net lacks conv2_w: with no input shape either, the error names it and the
    op that reads it."""
    model = nets.lenet()
    kept = [op for op in model.init.op if op.output[0] != "conv2_w"]
    del model.init.op[:]
    model.init.op.extend(kept)
    predict, init = model.pair()
    with pytest.raises(Caffe2ImportError, match=r"'conv2_w' \(read by op 'conv2' \(Conv\)\)"):
        import_caffe2(predict, init, LENET_SHAPE)
    err = _cli(capsys, tmp_path, predict, init, "--input-shape", "data=2x1x28x28")
    assert "'conv2_w'" in err and "init net" in err


def test_missing_input_shape_names_the_input(tmp_path, capsys) -> None:
    predict, init = nets.mlp().pair()
    with pytest.raises(Caffe2ImportError, match="no shape for the external input.*'data'"):
        glow_mlir.compile((predict, init))
    err = _cli(capsys, tmp_path, predict, init)
    assert "--input-shape data=" in err


def test_shapes_for_what_is_not_an_input() -> None:
    predict, init = nets.mlp().pair()
    with pytest.raises(Caffe2ImportError, match="'fc1_w', which the init net fills"):
        import_caffe2(predict, init, {"data": (4, 16), "fc1_w": (32, 16)})
    with pytest.raises(Caffe2ImportError, match="'image', which is not an external input.*"
                                                 "'data'"):
        import_caffe2(predict, init, {"data": (4, 16), "image": (1,)})
    with pytest.raises(Caffe2ImportError, match="non-negative ints, got \\(4, -16\\)"):
        import_caffe2(predict, init, {"data": (4, -16)})


def test_a_blob_nobody_defines() -> None:
    predict = NetDef()
    predict.external_input.append("x")
    add_op(predict, "Add", ["x", "y"], ["z"])
    predict.external_output.append("z")
    with pytest.raises(Caffe2ImportError, match="reads 'y', which no init-net fill"):
        import_caffe2(predict, NetDef(), {"x": (2,)})


def test_inconsistent_shapes_name_the_op() -> None:
    model = nets.mlp()
    with pytest.raises(Caffe2ImportError, match=r"^op 'fc1' \(FC\): input 4x17 flattened at "
                                                 r"axis 1 is 4x17, but the weights 32x16 "
                                                 r"take 16 features"):
        import_caffe2(*model.pair(), {"data": (4, 17)})


# ---------------------------------------------------------------------- unsupported


def test_unsupported_ops_and_values_in_one_message(tmp_path, capsys) -> None:
    """Every unsupported op type (in either net) and argument value, with the ops' names
    and counts, in one error."""
    predict, init = NetDef(), NetDef()
    add_op(init, "XavierFill", [], ["w"], shape=[4, 4])
    predict.external_input.extend(["x", "w"])
    add_op(predict, "SpatialBN", ["x", "x", "x", "x", "x"], ["bn"], name="bn", is_test=0)
    add_op(predict, "Softsign", ["x"], ["s1"], name="soft1")
    add_op(predict, "Softsign", ["s1"], ["s2"], name="soft2")
    add_op(predict, "RoIAlign", ["x", "x"], ["roi"], name="roi")
    add_op(predict, "FC", ["x", "w", "x"], ["fc"], name="fc")
    predict.external_output.extend(["bn", "s2", "roi", "fc"])
    with pytest.raises(UnsupportedCaffe2Error) as info:
        import_caffe2(predict, init, {"x": (4,)})
    message = str(info.value)
    assert "the model uses 5 unsupported" in message
    assert "XavierFill: a random fill" in message
    assert "SpatialBN: is_test=0" in message and "'bn'" in message
    assert "Softsign: op type not supported (2 times: 'soft1', 'soft2')" in message
    assert "RoIAlign" in message
    assert len(info.value.entries) == 5
    err = _cli(capsys, tmp_path, predict.SerializeToString(), init.SerializeToString(),
               "--input-shape", "x=4")
    assert "Softsign: op type not supported" in err and "XavierFill" in err


def test_glow_run_takes_caffe2_and_refuses_compare_onnxruntime(tmp_path, capsys) -> None:
    p, i = _write(tmp_path, *nets.mlp().pair())
    code, out, _ = in_process(glow_run.main, capsys, "--caffe2", p, i, "--input-shape",
                              "data=4x16", "--backend", "interpreter")
    assert code == 0 and "output prob: 4x10 float32" in out
    code, _, err = in_process(glow_run.main, capsys, "--caffe2", p, i, "--input-shape",
                              "data=4x16", "--compare-onnxruntime")
    assert code == 1 and "not one" in err
    code, _, err = in_process(glow_compile.main, capsys, p, "--caffe2", p, i)
    assert code == 1 and "either MODEL or --caffe2" in err
    code, _, err = in_process(glow_compile.main, capsys)
    assert code == 1 and "required: model (or --caffe2" in err


def test_glow_compile_prints_the_graph(tmp_path, capsys) -> None:
    p, i = _write(tmp_path, *nets.lenet().pair())
    code, out, _ = in_process(glow_compile.main, capsys, "--caffe2", p, i, "--input-shape",
                              "data=2x1x28x28")
    assert code == 0
    assert "glow.convolution" in out and '{glow.name = "softmax"}' in out


def test_the_docs_list_every_mapped_op() -> None:
    """docs/caffe2.md's table names every op type of the converter table, and no op it
    lists as Glow's unmapped one is mapped (the note stays true as ops are added)."""
    import re

    from glow_mlir.frontends.caffe2.table import CONVERTERS

    doc = (Path(__file__).resolve().parents[2] / "docs" / "caffe2.md").read_text()
    rows = [line.split("|")[1] for line in doc.splitlines()
            if line.startswith("| ") and "| yes |" in line]
    documented = {name for row in rows for name in re.findall(r"[A-Z]\w+", row)}
    assert set(CONVERTERS) <= documented, set(CONVERTERS) - documented
    unmapped = doc.split("not mapped here")[1]
    assert not [op for op in CONVERTERS if re.search(rf"\b{op}\b", unmapped)]


def test_value_info_gives_types_and_shapes(tmp_path, capsys) -> None:
    """The Caffe2 model zoo's value_info.json, {name: [data type, shape]}: through the API
    and --value-info (an int32 input too); a type it cannot take is an error naming it."""
    predict = NetDef()
    predict.external_input.extend(["x", "k"])
    add_op(predict, "Relu", ["x"], ["y"])
    add_op(predict, "Add", ["k", "k"], ["k2"])
    predict.external_output.extend(["y", "k2"])
    info = {"x": [1, [2, 3]], "k": [2, [4]]}
    model = glow_mlir.compile((predict, NetDef()), backend="interpreter", input_shapes=info)
    assert model.input_shapes == {"x": (2, 3), "k": (4,)}
    assert [str(d) for d in model.input_dtypes.values()] == ["float32", "int32"]
    _, k2 = model.run({"x": np.ones((2, 3), np.float32), "k": np.arange(4, dtype=np.int32)})
    assert k2.tolist() == [0, 2, 4, 6]
    with pytest.raises(Caffe2ImportError, match="input 'k' has data type 4"):
        import_caffe2(predict, NetDef(), {"x": [1, [2, 3]], "k": [4, [4]]})
    p, i = _write(tmp_path, predict.SerializeToString(), b"")
    (tmp_path / "value_info.json").write_text('{"x": [1, [2, 3]], "k": [2, [4]]}')
    code, out, _ = in_process(glow_compile.main, capsys, "--caffe2", p, i, "--value-info",
                              tmp_path / "value_info.json", "--input-shape", "x=5x3")
    assert code == 0 and "tensor<5x3xf32>" in out and "tensor<4xi32>" in out
    (tmp_path / "bad.json").write_text("{")
    code, _, err = in_process(glow_compile.main, capsys, "--caffe2", p, i, "--value-info",
                              tmp_path / "bad.json")
    assert code == 1 and "is not JSON" in err
    code, _, err = in_process(glow_compile.main, capsys, p, "--value-info",
                              tmp_path / "value_info.json")
    assert code == 1 and "--value-info gives a Caffe2 model's input shapes" in err


@pytest.mark.parametrize("entry", ['[1, "1x3"]', '"x"', '[1, [1, 3, 8.5, 8]]',
                                   '[1, [2, true]]', '[1, [2, -3]]'])
def test_a_bad_value_info_shape_is_one_line(tmp_path, capsys, entry) -> None:
    """A shape that is not whole non-negative numbers (a string, 8.5: not truncated to 8)
    is the user's error, named by its input."""
    p, i = _write(tmp_path, *nets.mlp().pair())
    (tmp_path / "value_info.json").write_text(f'{{"data": {entry}}}')
    code, _, err = in_process(glow_compile.main, capsys, "--caffe2", p, i, "--value-info",
                              tmp_path / "value_info.json")
    assert code == 1
    assert err.startswith("glow-compile: error: the shape given for input 'data' must be a "
                          "sequence of non-negative ints, got "), err
    assert len(err.strip().splitlines()) == 1


def test_bad_fills_name_the_op() -> None:
    predict = NetDef()
    predict.external_input.append("w")
    predict.external_output.append("w")
    init = NetDef()
    add_op(init, "GivenTensorFill", [], ["w"], name="wfill", shape=[2, 3],
           values=[1.0, 2.0, 3.0])
    with pytest.raises(Caffe2ImportError, match=r"^op 'wfill' \(GivenTensorFill\): 'values' "
                                                 r"holds 3 value\(s\), but shape \[2, 3\] has 6"):
        import_caffe2(predict, init, {})
    init = NetDef()
    add_op(init, "GivenTensorIntFill", [], ["w"], shape=[1], values=[1 << 40])
    with pytest.raises(Caffe2ImportError, match="do not fit int32"):
        import_caffe2(predict, init, {})
    init = NetDef()
    add_op(init, "Int8GivenTensorFill", [], ["w"], shape=[2], values=b"\x01\x02",
           Y_scale=0.5)
    with pytest.raises(Caffe2ImportError, match="requires argument 'Y_zero_point'"):
        import_caffe2(predict, init, {})
