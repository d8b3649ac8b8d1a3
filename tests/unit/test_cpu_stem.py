"""Stem convolutions on cpu (kernels_stem.py: few input channels, stride 2): within float
tolerance of the interpreter and the same bits as the im2col forms they replace (each
output one chain of fused multiply-adds over (ic, kh, kw) from the bias either way); the
same bits for 1, 2 and 3 threads; which convolutions take it."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_conv
from glow_mlir.conversion.glow_ir_to_loops import kernels_stem as stem
from kernel_switch_testing import switched_run
from test_cpu_winograd import conv_model


@pytest.fixture
def calls(record_calls):
    """The convolutions compiled by the stem kernel."""
    return record_calls(kernels_conv, "convolution_stem", lambda em, instr, act: instr)


_run = switched_run(stem, "STEM")


# (n, c, h, w, o, kernel, pads, tail)
CASES = [
    (1, 3, 40, 40, 20, 7, (3, 3, 3, 3), "relu"),      # 20 columns (2 vectors), 20 rows of C
    (2, 3, 35, 35, 8, 3, (0, 0, 0, 0), None),         # 17 columns, unpadded, batch 2
    (1, 3, 140, 139, 12, 3, (1, 1, 1, 1), "residual"),  # 70 columns: a whole block + 1
    (1, 1, 33, 70, 8, 5, (0, 2, 1, 0), "relu"),       # one channel, asymmetric pads
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in range(len(CASES))])
def test_against_interpreter_and_im2col(case, calls, monkeypatch):
    n, c, h, w, o, kernel, pads, tail = case
    model, feeds = conv_model(n, c, h, w, o, pads=pads, strides=(2, 2), kernel=kernel,
                              tail=tail, seed=h + w)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    before = _run(model, feeds, False, monkeypatch)
    assert not calls
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(got, before)


def test_thread_counts_give_the_same_bits(calls, monkeypatch):
    """ResNet's stem on a 112x112 image (56 output rows: 7 bands, split over threads)."""
    model, feeds = conv_model(1, 3, 112, 112, 64, pads=(3, 3, 3, 3), strides=(2, 2),
                              kernel=7, tail="relu", seed=5)
    outs = [_run(model, feeds, True, monkeypatch, threads=t) for t in (1, 2, 3)]
    assert len(calls) == 3
    for other in outs[1:]:
        np.testing.assert_array_equal(outs[0], other)


@pytest.mark.parametrize("c,strides,dilations", [(8, (2, 2), (1, 1)), (3, (1, 1), (1, 1)),
                                                 (3, (2, 2), (2, 2))])
def test_other_convolutions_do_not_take_it(c, strides, dilations, calls, monkeypatch):
    """More input channels, stride 1, dilation: the im2col forms."""
    model, feeds = conv_model(1, c, 36, 36, 8, strides=strides, dilations=dilations,
                              seed=1)
    _run(model, feeds, True, monkeypatch)
    assert not calls


def test_gemm_rows_give_the_same_bits(calls, monkeypatch):
    """The rows on `gemm` (OWN_MICRO off), all channels per row (CHANNELS_OUTER off):
    the same bits as the default."""
    model, feeds = conv_model(1, 3, 36, 37, 10, pads=(1, 1, 1, 1), strides=(2, 2),
                              tail="relu", seed=3)
    default = _run(model, feeds, True, monkeypatch)
    monkeypatch.setattr(stem, "OWN_MICRO", False)
    monkeypatch.setattr(stem, "CHANNELS_OUTER", False)
    np.testing.assert_array_equal(_run(model, feeds, True, monkeypatch), default)
    assert len(calls) == 2
