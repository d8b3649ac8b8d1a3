"""resize_bilinear of the two innermost dims row by row (kernels_resize._resize_rows):
bit for bit the interpreter (DeepLabV3's 21 x 8 x 8 -> 128 x 128 and odd, shrinking,
single-column, rank-2 and rank-3 shapes, every coordinate mode, f16/f32/f64) and the element
loops; which resizes take it."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import f16, f32, f64

from glow_mlir.conversion.glow_ir_to_loops import kernels_resize
from glow_mlir.dialects import glow
from test_cpu_kernels_data import COORD_MODES, _resized, compare
from test_evaluator_common import single_op_module, t


@pytest.fixture
def rows(monkeypatch):
    """The resizes lowered by `_resize_rows`."""
    seen = []
    real = kernels_resize._resize_rows

    def counted(*args):
        seen.append(args)
        real(*args)

    monkeypatch.setattr(kernels_resize, "_resize_rows", counted)
    return seen


ELEM = {np.float16: f16, np.float32: f32, np.float64: f64}


def _module(shape, scale, coord, dtype):
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)
    module = single_op_module(glow.ResizeBilinearOp, [x], t(_resized(shape, scale),
                                                             ELEM[dtype]),
                              scale=scale, coordinate_transformation_mode=coord)
    return module, x


CASES = [  # shape, scale, dtype
    ((1, 21, 8, 8), [1, 1, 16, 16], np.float32),  # DeepLabV3-MobileNetV3's output
    ((2, 3, 5, 7), [1, 1, 3, 2.5], np.float32),
    ((1, 2, 9, 6), [1, 1, 0.5, 0.75], np.float32),  # shrinking: runs of one column
    ((1, 1, 4, 3), [1, 1, 2, 1 / 3], np.float32),  # one output column
    ((3, 6, 4), [1, 2, 4], np.float32),  # rank 3
    ((5, 6), [2, 1.5], np.float32),  # rank 2: one plane
    ((1, 2, 4, 5), [1, 1, 2, 3], np.float64),
    ((1, 2, 4, 5), [1, 1, 3, 2], np.float16),
]


@pytest.mark.parametrize("coord", COORD_MODES)
@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_rows_bit_for_bit(case, coord, rows, monkeypatch):
    shape, scale, dtype = case
    module, x = _module(shape, scale, coord, dtype)
    got = compare(module, [x], exact=True)  # the interpreter's bits
    assert len(rows) == 1
    monkeypatch.setattr(kernels_resize, "MAX_RUNS", 0)  # the element loops
    module, x = _module(shape, scale, coord, dtype)
    assert np.array_equal(compare(module, [x], exact=True)[0], got[0])
    assert len(rows) == 1


@pytest.mark.parametrize("scale", [[1, 2, 2, 2], [1, 1, 2, 1], [1, 1, 1, 2], [2, 1, 1, 1]],
                         ids=["channels_too", "rows_only", "columns_only", "batch_only"])
def test_other_dims_keep_the_element_loops(scale, rows):
    module, x = _module((2, 2, 3, 4), scale, "half_pixel", np.float32)
    compare(module, [x], exact=True)
    assert not rows


def test_run_cap_and_tables_switch(rows, monkeypatch):
    """Past MAX_RUNS, or without the tables (RESIZE_TABLES), the element loops."""
    shape, scale = (1, 2, 4, 6), [1, 1, 2, 2]
    # 12 output columns over 6 source columns: (lo, hi) = (0, 1) for the first three
    # (clamped), then pairs, the last one (5, 5)
    assert kernels_resize._runs("half_pixel", shape, [1, 2, 8, 12], {2: 2.0, 3: 2.0}) == [
        (0, 1, 0, 3), (1, 2, 3, 5), (2, 3, 5, 7), (3, 4, 7, 9), (4, 5, 9, 11),
        (5, 5, 11, 12)]
    for cap, tables, fires in [(5, True, False), (6, False, False), (6, True, True)]:
        rows.clear()
        monkeypatch.setattr(kernels_resize, "MAX_RUNS", cap)
        monkeypatch.setattr(kernels_resize, "RESIZE_TABLES", tables)
        module, x = _module(shape, scale, "half_pixel", np.float32)
        compare(module, [x], exact=True)
        assert bool(rows) is fires, (cap, tables)
