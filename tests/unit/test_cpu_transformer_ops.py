"""A transformer layer's non-gemm kernels on the cpu: layer normalization kept as one
kernel (not lowered to reductions and broadcasts), soft-max rows with the specials an
attention mask makes (-inf, whole rows of -inf) and NaN/inf inputs, and the exported
GELU, each against the interpreter; whether the kernel is the one used (fires / does not
fire), and 1 and 2 threads bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from xdsl.dialects import func

import glow_mlir
from onnx_testing import make_model as _make_model
from onnx_testing import rand


def make_model(nodes, inputs, outputs, inits, opset=17):
    return _make_model(nodes, {k: (v, np.float32) for k, v in inputs.items()}, outputs,
                       inits, opset=opset)


def _kernel_names(compiled) -> list[str]:
    """The kinds of the kernel functions (`main_k3_layer_normalization` ->
    `layer_normalization`)."""
    return [f.sym_name.data.split("_k", 1)[1].split("_", 1)[1]
            for f in compiled.module.walk()
            if isinstance(f, func.FuncOp) and "glow.kernel" in f.attributes]


def _compare(model, feeds, rtol=1e-5, atol=1e-5, threads=1):
    """The cpu's outputs against the interpreter's (NaN where it has NaN); the kernel
    names of the cpu's program."""
    ref = glow_mlir.compile(model, "interpreter")
    cpu = glow_mlir.compile(model, "cpu", cache=False, num_threads=threads)
    want, got = ref.run(feeds), cpu.run(feeds)
    for w, g in zip(want, got):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    return _kernel_names(cpu), got


# ====================================================================== layer normalization


def _layer_norm_model(shape, axis=-1, eps=1e-5, residual=False):
    norm = shape[axis % len(shape):]
    nodes, inputs = [], {"x": shape}
    x = "x"
    if residual:
        nodes.append(helper.make_node("Add", ["x", "skip"], ["s"]))
        inputs["skip"] = shape
        x = "s"
    nodes.append(helper.make_node("LayerNormalization", [x, "g", "b"], ["y"], axis=axis,
                                  epsilon=eps))
    inits = {"g": rand(*norm, seed=1) + 1, "b": rand(*norm, seed=2)}
    return make_model(nodes, inputs, ["y"], inits)


@pytest.mark.parametrize("shape,axis", [((2, 5, 48), -1), ((3, 7), -1), ((2, 3, 4, 5), 2),
                                        ((1, 4, 768), -1)])
def test_layer_normalization_is_one_kernel(shape, axis):
    """Kept: one layer_normalization kernel, no reductions or broadcasts."""
    model = _layer_norm_model(shape, axis)
    names, _ = _compare(model, {"x": rand(*shape, seed=3) * 3})
    assert "layer_normalization" in names, names
    assert not any("reduce" in n or "broadcast" in n for n in names), names


def test_layer_normalization_specials():
    """Rows with a NaN, an inf, a -inf, constant rows (variance 0: epsilon alone) and
    huge values give the interpreter's results (NaN rows where it has them)."""
    x = rand(8, 32, seed=4)
    x[1, 5] = np.nan
    x[2, 0] = np.inf
    x[3, 31] = -np.inf
    x[4] = 7.0
    x[5] = 0.0
    x[6] *= 1e18
    names, got = _compare(_layer_norm_model((8, 32), eps=1e-3), {"x": x}, atol=1e-4)
    assert "layer_normalization" in names
    assert np.isnan(got[0][1:4]).all() and np.isfinite(got[0][[0, 4, 5, 6, 7]]).all()


def test_layer_normalization_after_residual_add():
    model = _layer_norm_model((2, 16, 96), eps=1e-12, residual=True)
    names, _ = _compare(model, {"x": rand(2, 16, 96, seed=5), "skip": rand(2, 16, 96, seed=6)})
    assert "layer_normalization" in names, names


def test_layer_normalization_threads_bit_identical():
    model = _layer_norm_model((64, 768))
    x = rand(64, 768, seed=7) * 2
    one = glow_mlir.compile(model, "cpu", cache=False, num_threads=1).run({"x": x})
    two = glow_mlir.compile(model, "cpu", cache=False, num_threads=2).run({"x": x})
    assert one[0].tobytes() == two[0].tobytes()


# ====================================================================== soft-max


def _softmax_model(shape, axis=-1, masked=False):
    """Softmax(x) (or, `masked`, of x + mask as attention adds its padding mask)."""
    nodes, inputs = [], {"x": shape}
    x = "x"
    if masked:
        nodes.append(helper.make_node("Add", ["x", "mask"], ["xm"]))
        inputs["mask"] = (1,) * (len(shape) - 1) + (shape[-1],)
        x = "xm"
    nodes.append(helper.make_node("Softmax", [x], ["y"], axis=axis))
    return make_model(nodes, inputs, ["y"], {})


def test_soft_max_special_rows():
    """Rows as attention masks make them and worse: -inf entries, a whole row of -inf
    (NaN, as the interpreter's), +inf (one or two), NaN, huge and tiny values, a
    row the max is the first element of, and rows whose length is no multiple of a
    vector."""
    for n in (128, 37):
        x = rand(10, n, seed=8) * 4
        x[0, n // 2:] = -np.inf
        x[1] = -np.inf
        x[2, 3] = np.inf
        x[3, [0, n - 1]] = np.inf
        x[4, 7] = np.nan
        x[5] *= 1e30
        x[6] = -1e30
        x[6, 0] = 0.0
        x[7, 0] = 100.0  # the max at index 0: every other exp underflows
        x[8, 1:] = -200.0  # exp(x - max) below f32's denormals
        names, got = _compare(_softmax_model((10, n)), {"x": x}, atol=1e-6)
        assert "soft_max" in names, names
        y = got[0]
        # an inf makes the row's max inf and inf - inf NaN: the whole row, as numpy's
        assert np.isnan(y[1:5]).all() and np.isfinite(y[[0, 5, 6, 7, 8, 9]]).all()
        assert (y[0, n // 2:] == 0).all()


def test_soft_max_with_padding_mask():
    """A float32-min padding mask (transformers') over BERT-like rows, one row of which
    is entirely masked."""
    x = rand(2, 3, 5, 40, seed=9) * 3
    mask = np.zeros((1, 1, 1, 40), np.float32)
    mask[..., 30:] = np.finfo(np.float32).min
    x[0, 1, 2] = np.finfo(np.float32).min
    _compare(_softmax_model(x.shape, masked=True), {"x": x, "mask": mask}, atol=1e-6)


@pytest.mark.parametrize("axis", [0, 1])
def test_soft_max_strided_axis(axis):
    """Along a dim that is not the last one: the loops walk the axis with a stride."""
    x = rand(6, 7, 9, seed=10) * 5
    x[1, :, 2] = -np.inf
    _compare(_softmax_model((6, 7, 9), axis=axis), {"x": x}, atol=1e-6)


def test_soft_max_threads_bit_identical():
    model = _softmax_model((12, 128, 128), masked=True)
    x = rand(12, 128, 128, seed=11) * 3
    mask = np.zeros((1, 1, 128), np.float32)
    mask[..., 100:] = -np.inf
    feeds = {"x": x, "mask": mask}
    one = glow_mlir.compile(model, "cpu", cache=False, num_threads=1).run(feeds)
    two = glow_mlir.compile(model, "cpu", cache=False, num_threads=2).run(feeds)
    assert one[0].tobytes() == two[0].tobytes()


# ====================================================================== decomposed layer norm


def _decomposed_model(shape, axes=(-1,), square="Pow", exponent=2.0, gamma=None,
                      extra_output=None, eps_shape=(), scale=True, shift=True):
    """LayerNormalization as exporters before opset 17 wrote it: ReduceMean, Sub, Pow (or
    Mul), ReduceMean, Add eps, Sqrt, Div, Mul gamma (unless not `scale`), Add beta
    (unless not `shift`)."""
    dims = [a % len(shape) for a in axes]
    norm = tuple(shape[d] if d in dims else 1 for d in range(min(dims), len(shape)))
    nodes = [helper.make_node("ReduceMean", ["x"], ["mean"], axes=list(axes), keepdims=1),
             helper.make_node("Sub", ["x", "mean"], ["c"])]
    if square == "Pow":
        nodes.append(helper.make_node("Pow", ["c", "two"], ["sq"]))
    else:
        nodes.append(helper.make_node("Mul", ["c", "c"], ["sq"]))
    nodes += [helper.make_node("ReduceMean", ["sq"], ["var"], axes=list(axes), keepdims=1),
              helper.make_node("Add", ["var", "eps"], ["ve"]),
              helper.make_node("Sqrt", ["ve"], ["std"]),
              helper.make_node("Div", ["c", "std"], ["n" if scale or shift else "y"])]
    if scale:
        nodes.append(helper.make_node("Mul", ["n", "g"], ["s" if shift else "y"]))
    if shift:
        nodes.append(helper.make_node("Add", ["s" if scale else "n", "b"], ["y"]))
    inits = {"two": np.array(exponent, np.float32),
             "eps": np.full(eps_shape, 1e-5, np.float32) if eps_shape != "varying" else
             np.linspace(1e-5, 1e-3, int(np.prod(shape[:-1]))).astype(np.float32).reshape(
                 *shape[:-1], 1),
             "g": rand(*norm, seed=12) + 1 if gamma is None else gamma,
             "b": rand(*norm, seed=13)}
    if not scale:
        del inits["g"]
    if not shift:
        del inits["b"]
    outputs = ["y"] + ([extra_output] if extra_output else [])
    return make_model(nodes, {"x": shape}, outputs, inits)


@pytest.mark.parametrize("shape,axes,square", [((2, 16, 96), (-1,), "Pow"),
                                               ((2, 16, 96), (-1,), "Mul"),
                                               ((6, 5, 8), (1, 2), "Pow")])
def test_decomposed_layer_norm_fires(shape, axes, square):
    names, _ = _compare(_decomposed_model(shape, axes, square), {"x": rand(*shape, seed=14)})
    assert names.count("layer_normalization") == 1, names
    assert not any("reduce" in n for n in names), names


@pytest.mark.parametrize("scale,shift", [(True, False), (False, False), (False, True)])
def test_decomposed_layer_norm_fires_without_scale_or_shift(scale, shift):
    """nn.LayerNorm(bias=False) exports no Add, elementwise_affine=False no Mul either:
    they stayed reductions and broadcasts."""
    shape = (2, 16, 96)
    model = _decomposed_model(shape, scale=scale, shift=shift)
    names, _ = _compare(model, {"x": rand(*shape, seed=14) * 3})
    assert names.count("layer_normalization") == 1, names
    assert not any("reduce" in n for n in names), names


@pytest.mark.parametrize("opset", [14, 16])
@pytest.mark.parametrize("options", [{"bias": False}, {"elementwise_affine": False}],
                         ids=["no-bias", "no-affine"])
def test_torch_layer_norm_without_bias_is_one_kernel(opset, options):
    """torch.onnx.export of nn.LayerNorm before opset 17 (decomposed), on the cpu against
    onnxruntime."""
    import io

    import onnx
    import onnxruntime as ort
    import torch

    torch.manual_seed(0)
    net = torch.nn.LayerNorm(32, **options).eval()
    if options.get("elementwise_affine", True):
        with torch.no_grad():  # not the default ones, so that a lost scale shows
            net.weight.copy_(torch.rand(32) + 0.5)
    x = torch.randn(3, 7, 32) * 2
    buf = io.BytesIO()
    torch.onnx.export(net, (x,), buf, dynamo=False, input_names=["x"], opset_version=opset)
    model = onnx.load_from_string(buf.getvalue())
    feeds = {"x": x.numpy()}
    want = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"]).run(
        None, feeds)
    cpu = glow_mlir.compile(model, "cpu", cache=False)
    got = cpu.run(feeds)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    names = _kernel_names(cpu)
    assert "layer_normalization" in names and not any("reduce" in n for n in names), names


def _not_fused(model, shape):
    names, _ = _compare(model, {"x": rand(*shape, seed=15)})
    assert "layer_normalization" not in names and any("reduce" in n for n in names), names


def test_decomposed_layer_norm_does_not_fire():
    """Not a layer normalization, or one whose pieces are needed elsewhere: left as it is
    (and still right)."""
    shape = (2, 8, 24)
    _not_fused(_decomposed_model(shape, exponent=3.0), shape)
    _not_fused(_decomposed_model(shape, axes=(1,)), shape)  # not the trailing dims
    _not_fused(_decomposed_model(shape, extra_output="mean"), shape)
    _not_fused(_decomposed_model(shape, extra_output="c"), shape)
    _not_fused(_decomposed_model(shape, eps_shape="varying"), shape)


def test_a_gamma_that_differs_per_row_stays_outside():
    """A gamma that differs per row is no layer normalization's scale: the fused op ends
    at the division, the product and the shift after it."""
    shape = (2, 8, 24)
    model = _decomposed_model(shape, gamma=rand(8, 24, seed=16))
    names, _ = _compare(model, {"x": rand(*shape, seed=15)})
    assert names.count("layer_normalization") == 1 and "elementwise" in names, names
    assert not any("reduce" in n for n in names), names


# ====================================================================== decomposed GELU


def _gelu_model(shape, half="Mul", dtype=np.float32):
    """x * (erf(x / sqrt 2) + 1), then times 0.5 (`half="Mul"`) or divided by 2
    (`half="Div"`; `half=2.5`: divided by that), in `dtype`."""
    nodes = [helper.make_node("Div", ["x", "sq2"], ["d"]),
             helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["e1"]),
             helper.make_node("Mul", ["x", "e1"], ["g"])]
    if half == "Mul":
        nodes.append(helper.make_node("Mul", ["g", "h"], ["y"]))
        h = 0.5
    else:
        nodes.append(helper.make_node("Div", ["g", "h"], ["y"]))
        h = 2.0 if half == "Div" else half
    inits = {"sq2": np.array(np.sqrt(2), dtype), "one": np.array(1, dtype), "h": np.array(h, dtype)}
    return _make_model(nodes, {"x": (shape, dtype)}, ["y"], inits)


@pytest.mark.parametrize("half,dtype", [("Mul", np.float32), ("Div", np.float32),
                                        ("Mul", np.float16), ("Div", np.float16)])
def test_decomposed_gelu_is_one_gelu(half, dtype):
    """The half as a division by 2, and f16 graphs (whose sqrt 2 is f16's): they stayed
    an erf chain of four element-wise ops."""
    shape = (4, 40)
    x = (rand(*shape, seed=17) * 3).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 2e-3
    names, _ = _compare(_gelu_model(shape, half, dtype), {"x": x}, rtol=tol, atol=tol)
    assert names == ["gelu"], names


def test_decomposed_gelu_divided_by_another_value_is_left_alone():
    shape = (4, 40)
    names, _ = _compare(_gelu_model(shape, 2.5), {"x": rand(*shape, seed=18)})
    assert names and "gelu" not in names, names  # the erf chain, one element-wise loop
