"""onnxruntime's `quantize_static` on a model in memory, for the benchmarks that put
onnxruntime's int8 next to ours (`int8_kernels.py`, `quantized_accuracy.py`)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable

import numpy as np


def quantize_static(model, calibration: Iterable[dict[str, np.ndarray]], **options):
    """The quantized ModelProto; `options` are quantize_static's (quant_format,
    activation_type, weight_type, per_channel, calibrate_method, ...)."""
    import onnx
    from onnxruntime import quantization

    class Reader(quantization.CalibrationDataReader):
        def __init__(self):
            self.it = iter(calibration)

        def get_next(self):
            return next(self.it, None)

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "f.onnx"), os.path.join(tmp, "q.onnx")
        onnx.save(model, src)
        quantization.quantize_static(src, dst, Reader(), **options)
        return onnx.load(dst)
