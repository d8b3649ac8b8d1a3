"""Quantized avg_pool and adaptive_avg_pool on the cpu run on the stored integers
(`kernels_qpool`): the window's bytes summed in i32, requantized in f64, the interpreter's
bits exactly (its reference dequantizes, averages in f64 and quantizes): global pools
(one flat plane sum), windows with padding and strides counted both ways (the i32 rows
and the window loop nest), NHWC, unsigned storage, round-half-even ties, 1/2/3 threads.
The backend takes global ones (`quantize-graph` now keeps them int8 on cpu); windowed
ones only with `kernels_pool.WINDOWED_STORED_AVERAGES` (float is faster), which the
kernel tests turn on."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir.backends import get_backend
from glow_mlir.conversion.glow_ir_to_loops import kernels_pool, kernels_qpool, parallel
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.native_runtime import POOL_BEGIN
from glow_mlir.ir.text import parse_module

QI = "!glow.quant<i8, scale = 0.0373, offset = -5>"
QU = "!glow.quant<ui8, scale = 0.021, offset = 120>"
QTIE = "!glow.quant<i8, scale = 0.25, offset = 3>"  # a power of two: exact halves


def _module(op: str, in_shape, out_shape, q: str, attrs: str = ""):
    def t(dims):
        return f"tensor<{'x'.join(map(str, dims))}x{q}>"

    return parse_module(make_context(), (
        f"func.func @main(%x: {t(in_shape)}) -> {t(out_shape)} {{\n"
        f"  %0 = {op} %x {attrs} : {t(in_shape)} -> {t(out_shape)}\n"
        f"  func.return %0 : {t(out_shape)}\n}}\n"))


@pytest.fixture
def stored_calls(monkeypatch):
    """The pools the stored-integer average generated code for, and "rows" for each
    NCHW i32 rows form; windowed ones taken by the backend."""
    monkeypatch.setattr(kernels_pool, "WINDOWED_STORED_AVERAGES", True)
    seen: list[str] = []
    real, rows = kernels_pool.average_stored, kernels_qpool._rows

    def spy(instr, *args):
        seen.append(instr.name)
        return real(instr, *args)

    def rows_spy(*args):
        seen.append("rows")
        return rows(*args)

    monkeypatch.setattr(kernels_pool, "average_stored", spy)
    monkeypatch.setattr(kernels_qpool, "_rows", rows_spy)
    return seen


def _bytes(shape, q: str, seed: int) -> np.ndarray:
    dtype = np.uint8 if "ui8" in q else np.int8
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, shape).astype(dtype)


def _both(case, threads=None):
    interp = glow_mlir.compile(_module(*case), backend="interpreter", cache=False,
                               progress=False)
    cpu = glow_mlir.compile(_module(*case), backend="cpu", cache=False, progress=False,
                            num_threads=threads)
    return interp, cpu


def _pool(k, s=1, pads=(0, 0, 0, 0), include=False, layout=None):
    a = f"kernels = array<i64: {k}, {k}>, strides = array<i64: {s}, {s}>, " \
        f"pads = array<i64: {', '.join(map(str, pads))}>"
    if include:
        a += ", count_include_pad = true"
    if layout:
        a += f', layout = "{layout}"'
    return "{" + a + "}"


AVG, ADAPTIVE = "glow.avg_pool", "glow.adaptive_avg_pool"
CASES = {
    # ResNet's / MobileNet's last pool (plane of 49: not a multiple of any vector)
    "global 7x7": (AVG, (1, 96, 7, 7), (1, 96, 1, 1), QI, _pool(7)),
    "global ui8": (AVG, (2, 5, 9, 6), (2, 5, 1, 1), QU, "{kernels = array<i64: 9, 6>}"),
    "3x3/2 pad 1": (AVG, (1, 6, 13, 13), (1, 6, 7, 7), QI, _pool(3, 2, (1, 1, 1, 1))),
    "3x3/2 pad 1 counted": (AVG, (1, 6, 13, 13), (1, 6, 7, 7), QU,
                            _pool(3, 2, (1, 1, 1, 1), True)),
    # Inception / GoogLeNet's branch pools: stride 1, the output the input's size
    "3x3/1 pad 1 counted": (AVG, (1, 8, 12, 12), (1, 8, 12, 12), QI,
                            _pool(3, 1, (1, 1, 1, 1), True)),
    "3x3/1 pad 1": (AVG, (1, 8, 12, 12), (1, 8, 12, 12), QI, _pool(3, 1, (1, 1, 1, 1))),
    "5x5 uneven pads": (AVG, (1, 4, 11, 11), (1, 4, 5, 5), QI, _pool(5, 2, (2, 1, 1, 2))),
    "NHWC 3x3/2 pad 1": (AVG, (1, 13, 13, 6), (1, 7, 7, 6), QU,
                         _pool(3, 2, (1, 1, 1, 1), layout="NHWC")),
    "NHWC global": (AVG, (1, 7, 7, 10), (1, 1, 1, 10), QI, _pool(7, layout="NHWC")),
    "2x2/2 ties": (AVG, (1, 4, 8, 8), (1, 4, 4, 4), QTIE, _pool(2, 2)),
    "adaptive 13x11 -> 4x3": (ADAPTIVE, (1, 6, 13, 11), (1, 6, 4, 3), QI, ""),
    "adaptive global": (ADAPTIVE, (1, 16, 7, 7), (1, 16, 1, 1), QU, ""),
}


ROWS = {"3x3/2 pad 1", "3x3/2 pad 1 counted", "3x3/1 pad 1 counted", "3x3/1 pad 1",
        "5x5 uneven pads", "2x2/2 ties"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_equals_the_interpreter(name, stored_calls):
    case = CASES[name]
    interp, cpu = _both(case)
    assert stored_calls == [case[0].replace("glow.", "glow_ir."), *(["rows"] * (name in ROWS))]
    for seed in (0, 1):
        x = _bytes(case[1], case[3], seed)
        (want,), (got,) = interp.run({"input0": x}), cpu.run({"input0": x})
        assert len(np.unique(want)) > 1
        np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("name", ["3x3/2 pad 1", "5x5 uneven pads", "3x3/1 pad 1 counted"])
def test_loop_nest_equals_the_rows(name, stored_calls, monkeypatch):
    """Without ROW_AVG the windowed pools take the per-output loop nest: the same bits."""
    monkeypatch.setattr(kernels_pool, "ROW_AVG", False)
    case = CASES[name]
    interp, cpu = _both(case)
    assert stored_calls == ["glow_ir.avg_pool"]
    x = _bytes(case[1], case[3], 3)
    np.testing.assert_array_equal(cpu.run({"input0": x})[0], interp.run({"input0": x})[0])


def test_the_backend_takes_global_averages(monkeypatch):
    """is_op_supported: a global 8-bit average (either layout, adaptive too) runs on the
    stored bytes; a windowed one only with WINDOWED_STORED_AVERAGES; 16-bit ones never."""
    from glow_mlir.transforms.graph.backend_hooks import NodeInfo

    cpu = get_backend("cpu")

    def takes(name, q=None):
        op, ins, outs, q0, attrs = CASES[name]
        fn = _module(op, ins, outs, q or q0, attrs).body.block.first_op
        return cpu.is_op_supported(NodeInfo.of(next(iter(fn.body.block.ops))))

    q16 = "!glow.quant<i16, scale = 0.5, offset = 0>"
    globals_ = ["global 7x7", "global ui8", "NHWC global", "adaptive global"]
    windowed = ["3x3/2 pad 1", "NHWC 3x3/2 pad 1", "adaptive 13x11 -> 4x3"]
    assert all(takes(n) for n in globals_)
    assert not any(takes(n) for n in windowed)
    assert not takes("global 7x7", q16)
    monkeypatch.setattr(kernels_pool, "WINDOWED_STORED_AVERAGES", True)
    assert all(takes(n) for n in windowed)
    assert not takes("3x3/2 pad 1", q16)


def test_ties_round_half_to_even(stored_calls):
    """Same scale in and out (a power of two): a 2x2 window of centred sum S stores
    round_half_even(S / 4), so sums of 2 mod 4 are ties (0.5 -> 0, 1.5 -> 2, 2.5 -> 2)."""
    interp, cpu = _both(CASES["2x2/2 ties"])
    sums = [2, 6, 10, -2, -6, 1, 3, 0]
    x = np.full((1, 4, 8, 8), 3, np.int8)  # the zero point everywhere: real 0
    for j, total in enumerate(sums):
        x[0, :, 2 * (j // 4), 2 * (j % 4)] += total
    (want,), (got,) = interp.run({"input0": x}), cpu.run({"input0": x})
    np.testing.assert_array_equal(got, want)
    stored = [int(got[0, 0, j // 4, j % 4]) - 3 for j in range(len(sums))]
    assert stored == [0, 2, 2, 0, -2, 0, 1, 0]


@pytest.mark.parametrize("name", ["global 7x7", "3x3/2 pad 1", "adaptive 13x11 -> 4x3"])
def test_threads_bit_identical(name, monkeypatch):
    """Split over channels however small (`PARALLEL_MIN_WORK` 0): the bits of one thread."""
    monkeypatch.setattr(parallel, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(kernels_pool, "WINDOWED_STORED_AVERAGES", True)
    case = CASES[name]
    x = _bytes(case[1], case[3], 7)
    outs = []
    for threads in (1, 2, 3):
        cpu = _both(case, threads)[1]
        split = any(getattr(op, "sym_name", None) is not None
                    and op.sym_name.data == POOL_BEGIN for op in cpu.module.ops)
        assert split == (threads > 1), threads
        outs.append(cpu.run({"input0": x})[0])
    for got in outs[1:]:
        np.testing.assert_array_equal(got, outs[0])


def test_quantize_graph_keeps_avg_pool_int8_on_cpu():
    """README's small CNN ends in a GlobalAveragePool: on cpu it is quantized (it was
    float, between a dequantize and a quantize), and the model agrees with the
    interpreter's int8 one."""
    from pathlib import Path

    model = Path(__file__).resolve().parents[2] / "examples" / "small_cnn.onnx"
    rng = np.random.default_rng(0)
    batches = [{"image": rng.standard_normal((1, 3, 32, 32)).astype(np.float32)}
               for _ in range(2)]
    profile = glow_mlir.profile(model, batches, backend="interpreter")
    cpu = glow_mlir.compile(model, backend="cpu", profile=profile, cache=False,
                            progress=False)
    report = cpu.quantization
    assert report.quantized["glow.avg_pool"] == 1, report.summary()
    assert not any(kind == "glow.avg_pool" for kind, _ in report.kept_float)
    assert "avg_pool 1 (backend" not in report.summary()
    interp = glow_mlir.compile(model, backend="interpreter", profile=profile, cache=False,
                               progress=False)
    x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.testing.assert_allclose(cpu(x)[0], interp(x)[0], atol=0.01)
