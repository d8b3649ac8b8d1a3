"""Int8 accuracy on real data: the digits CNN of benchmarks/trained_models.py (load_digits,
fixed split and seeds), profiled on its calibration split, loses at most 0.5 points of
top-1 accuracy on the disjoint test split, per tensor and per channel."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import glow_mlir

pytest.importorskip("torch")
pytest.importorskip("sklearn")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from trained_models import SEED, _split, accuracy, digits_cnn  # noqa: E402


@pytest.fixture(scope="module")
def trained():
    return digits_cnn(epochs=8)


def test_the_splits_are_disjoint_and_fixed():
    train, calib, test = _split(1797)
    assert not (set(train) & set(calib) or set(train) & set(test) or set(calib) & set(test))
    assert len(train) + len(calib) + len(test) == 1797
    np.testing.assert_array_equal(np.random.default_rng(SEED).permutation(1797)[:5], train[:5])


@pytest.mark.parametrize("per_channel", [False, True])
def test_digits_cnn_int8_is_within_half_a_point_of_float(trained, per_channel):
    fp = glow_mlir.compile(trained.model, backend="interpreter", progress=False)
    float_acc = accuracy([fp.run(b)[0] for b in trained.test], trained.test_labels)
    assert float_acc > 90  # trained: the comparison means something
    profile = glow_mlir.profile(trained.model, trained.calibration, backend="interpreter")
    config = glow_mlir.QuantizationConfig(channelwise_conv=per_channel, rowwise_fc=per_channel)
    q = glow_mlir.compile(trained.model, backend="interpreter", profile=profile,
                          quantization=config, progress=False)
    dense = ("glow.convolution", "glow.fully_connected",  # per tensor; per channel:
             "glow.channelwise_quantized_convolution", "glow.rowwise_quantized_fully_connected")
    assert sum(q.quantization.quantized[k] for k in dense) == 3  # every dense op in int8
    int8_acc = accuracy([q.run(b)[0] for b in trained.test], trained.test_labels)
    assert int8_acc >= float_acc - 0.5, (float_acc, int8_acc)
