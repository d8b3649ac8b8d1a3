"""The NCHW 1x1 int8 convolution with the pixels in the vector lanes
(conversion/glow_ir_to_loops/kernels_vnni_nchw1x1.py): it runs exactly for packed NCHW
1x1 convolutions without pads (a strided one on a copy of the pixels it reads) whose
input channels are a multiple of 4, with at most 256 input and output channels (more
from 196 pixels on) and at least 16 pixels, and otherwise the packed path's
channels-in-lanes kernel does; it matches the interpreter within one step (a rounding
tie) with s8 and u8 activations of non-zero zero point, with a weight zero point (the
per-pixel sums), with short last pixel and channel blocks and several images; two
threads give the bits of one."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_vnni
from glow_mlir.conversion.glow_ir_to_loops import kernels_vnni_nchw1x1 as nchw1x1
from glow_mlir.conversion.glow_ir_to_loops import kernels_vnni_packed as kvp
from onnx_testing import node_model
from test_int8_kernels import _batches, _conv, _int8_runs, _rand, _steps

vnni_host = pytest.mark.skipif(not kernels_vnni.host_has_vnni(),
                               reason="the host CPU has no AVX-512 VNNI")


@pytest.fixture
def kernels_used(monkeypatch):
    """'lanes' per convolution of this kernel, 'packed' per one of kernels_vnni_packed."""
    monkeypatch.setattr(kernels_vnni, "ENABLED", True)
    seen: list[str] = []
    real_lanes, real_packed = nchw1x1.convolution, kvp.convolution

    def lanes(*args):
        seen.append("lanes")
        return real_lanes(*args)

    def packed(*args):
        seen.append("packed")
        return real_packed(*args)

    monkeypatch.setattr(nchw1x1, "convolution", lanes)
    monkeypatch.setattr(kvp, "convolution", packed)
    return seen


ONE_BY_ONE = {  # n, c, h, w, o (1x1, stride 1, no pads)
    "resnet 64->64": (1, 64, 8, 8, 64),
    "7x7 pixels, o % 6": (1, 32, 7, 7, 20),
    "two images, short blocks": (2, 12, 5, 4, 7),
    "16 pixels exactly": (1, 8, 4, 4, 16),
    "more than 256 channels on 14x14 pixels": (1, 264, 14, 14, 12),
}


def _one_by_one(n, c, h, w, o, seed=5):
    return _conv(n, c, h, w, o, 1, 1, [0, 0, 0, 0], 1, 1, seed=seed)


@vnni_host
@pytest.mark.parametrize("schema", ["asymmetric", "symmetric", "symmetric_uint8"])
@pytest.mark.parametrize("name", sorted(ONE_BY_ONE))
def test_pixels_in_lanes_match_the_interpreter(kernels_used, name, schema):
    """asymmetric: s8 activations with a non-zero zero point; symmetric_uint8: u8."""
    assert _steps(_one_by_one(*ONE_BY_ONE[name]), schema) <= 1.0 + 1e-9
    assert kernels_used == ["lanes"]


@vnni_host
@pytest.mark.parametrize("name,shape", [
    ("3x3", (1, 8, 9, 9, 12, 3, 1, [1, 1, 1, 1])),
    ("1x1 padded", (1, 8, 6, 6, 12, 1, 1, [1, 1, 1, 1])),
    ("channels not a multiple of 4", (1, 6, 8, 8, 12, 1, 1, [0, 0, 0, 0])),
    ("fewer than 16 pixels", (1, 8, 3, 3, 12, 1, 1, [0, 0, 0, 0])),
    ("more than 256 output channels", (1, 8, 4, 4, 260, 1, 1, [0, 0, 0, 0])),
    ("more than 256 input channels", (1, 260, 4, 4, 8, 1, 1, [0, 0, 0, 0])),
    ("more than 256 channels on 13x15 pixels", (1, 260, 13, 15, 8, 1, 1, [0, 0, 0, 0]))])
def test_other_convolutions_keep_the_channels_in_lanes(kernels_used, name, shape):
    n, c, h, w, o, k, stride, pads = shape
    assert _steps(_conv(n, c, h, w, o, k, stride, pads, 1, 1, seed=3)) <= 1.0 + 1e-9
    assert kernels_used == ["packed"]


@vnni_host
@pytest.mark.parametrize("schema", ["asymmetric", "symmetric_uint8"])
def test_weights_with_a_zero_point_take_the_pixel_sums(kernels_used, schema):
    """Weights all of one sign get a zero point under the asymmetric schema."""
    n, c, h, w, o = 1, 24, 6, 5, 10
    weights = np.abs(_rand((o, c, 1, 1), 8, 0.3)) + 0.05
    model = node_model("Conv", {"x": _rand((n, c, h, w), 7)}, {},
                       consts={"w": weights, "b": _rand((o,), 9, 0.2)})
    assert _steps(model, schema) <= 1.0 + 1e-9
    assert kernels_used == ["lanes"]


@vnni_host
def test_two_threads_give_the_same_bits_as_one(kernels_used):
    model = _one_by_one(1, 32, 9, 11, 30, seed=2)
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    feeds = _batches(model, 1, seed=5)[0]
    outs = [glow_mlir.compile(model, backend="cpu", profile=profile, cache=False,
                              progress=False, num_threads=t).run(feeds)[0] for t in (1, 2)]
    assert kernels_used == ["lanes", "lanes"]
    assert len(np.unique(outs[0])) > 10
    np.testing.assert_array_equal(outs[0], outs[1])


@vnni_host
def test_a_fused_relu_and_a_residual_add_after_it(kernels_used):
    """conv 1x1 -> relu (fused into the kernel's epilogue) -> add of the input, as a
    ResNet bottleneck's last conv: no negative conv output, the sum against the
    interpreter."""
    from onnx import helper

    from onnx_testing import make_model

    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Add", ["r", "x"], ["y"])]
    model = make_model(nodes, {"x": _rand((1, 16, 6, 6), 1)}, ["y"],
                       {"w": _rand((16, 16, 1, 1), 2, 0.3), "b": _rand((16,), 3, 0.2)})
    assert _steps(model) <= 1.0 + 1e-9
    assert kernels_used == ["lanes"]


@vnni_host
def test_two_threads_split_a_layer_with_signed_activations(kernels_used):
    """Work past the parallel cut-off (the test above stays serial), s8 activations: the
    xor vector the kernel adds was made outside the outlined parallel body and gave wrong
    sums (and crashes) on two threads."""
    from glow_mlir.conversion.glow_ir_to_loops.parallel import PARALLEL_MIN_WORK

    n, c, h, w, o = 1, 64, 16, 17, 64
    assert c * o * h * w >= PARALLEL_MIN_WORK
    model = _one_by_one(n, c, h, w, o, seed=4)
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    feeds = _batches(model, 1, seed=6)[0]
    outs = [glow_mlir.compile(model, backend="cpu", profile=profile, cache=False,
                              progress=False, num_threads=t).run(feeds)[0] for t in (1, 2)]
    assert kernels_used == ["lanes", "lanes"]
    assert len(np.unique(outs[0])) > 10
    np.testing.assert_array_equal(outs[0], outs[1])


@vnni_host
def test_emit_llvm_ir_takes_the_kernel_compile_takes(kernels_used, tmp_path):
    """`glow-compile --emit llvm-ir` rewrites the weights into the forms the JIT's
    compile gives them (`targets/cpu/weight_forms.py`), so a 1x1 int8 convolution is the
    same kernel in the printed IR as in the compiled model (it read its filter unpacked
    there, and took another kernel)."""
    import onnx

    from glow_mlir.tools.glow_compile import main

    model = _one_by_one(*ONE_BY_ONE["resnet 64->64"])
    onnx.save(model, tmp_path / "m.onnx")
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    profile.save(tmp_path / "p.yaml")
    glow_mlir.compile(model, backend="cpu", profile=profile, cache=False, progress=False)
    compiled = list(kernels_used)
    kernels_used.clear()
    main([str(tmp_path / "m.onnx"), "--load-profile", str(tmp_path / "p.yaml"),
          "--emit", "llvm-ir", "-o", str(tmp_path / "out.ll")])
    assert compiled == ["lanes"]
    assert kernels_used == compiled
    assert "vpdpbusd" in (tmp_path / "out.ll").read_text()


@vnni_host
@pytest.mark.parametrize("schema", ["asymmetric", "symmetric_uint8"])
@pytest.mark.parametrize("shape", [(1, 16, 9, 9, 40, 2), (2, 8, 12, 10, 12, 2),
                                   (1, 12, 13, 13, 20, 3)],
                         ids=["1x1/2 odd", "two images", "1x1/3"])
def test_a_strided_1x1_takes_the_pixels_in_lanes_on_its_subsampled_input(
        kernels_used, schema, shape):
    """ResNet's downsampling 1x1 convolutions: the pixels a strided 1x1 reads are copied
    to a contiguous image first, then the stride-1 kernel runs on it."""
    n, c, h, w, o, stride = shape
    model = _conv(n, c, h, w, o, 1, stride, [0, 0, 0, 0], 1, 1, seed=4)
    assert _steps(model, schema) <= 1.0 + 1e-9
    assert kernels_used == ["lanes"]


@vnni_host
def test_accumulators_starting_from_the_weight_offset_term_give_the_same_bits(
        kernels_used, monkeypatch):
    """With a weight zero point the accumulators start from each pixel's -zb * rowsum
    (`ZTERM_INIT`): past the parallel cut-off, two images, 17 x 19 pixels (a short last
    block of pixels), 70 channels (the last block of 6 shifted back): 1, 2 and 3 threads
    and the epilogue's correction (`ZTERM_INIT` off) give the same bits, within a step
    of the interpreter."""
    from glow_mlir.conversion.glow_ir_to_loops.parallel import PARALLEL_MIN_WORK

    n, c, h, w, o = 2, 48, 17, 19, 70
    assert c * o * h * w >= PARALLEL_MIN_WORK
    weights = np.abs(_rand((o, c, 1, 1), 8, 0.3)) + 0.05  # one sign: a zero point
    model = node_model("Conv", {"x": _rand((n, c, h, w), 7)}, {},
                       consts={"w": weights, "b": _rand((o,), 9, 0.2)})
    offsets: list[int] = []
    real = nchw1x1.convolution

    def spy(prod, *args):
        offsets.append(prod.zb)
        return real(prod, *args)

    monkeypatch.setattr(nchw1x1, "convolution", spy)
    assert _steps(model) <= 1.0 + 1e-9
    run = _int8_runs(model, seed=6)

    outs = [run(t) for t in (1, 2, 3)]
    monkeypatch.setattr(nchw1x1, "ZTERM_INIT", False)
    outs.append(run(1))
    assert offsets and all(zb != 0 for zb in offsets)
    assert len(np.unique(outs[0])) > 10
    for other in outs[1:]:
        np.testing.assert_array_equal(outs[0], other)
