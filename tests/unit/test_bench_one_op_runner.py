"""benchmarks/cpu_kernels.py's one-op path (`glow_runner`): the areas whose addresses the
timed call takes stay alive after `prepare` returns. Before, nothing held the activation
area; it was freed, the next arrays of its size took its memory and every call wrote into
them (`--cases fc` then crashed in a later allocation)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import numpy as np
import pytest

from cpu_upstream import have_tools

pytestmark = pytest.mark.skipif(not have_tools(), reason="mlir-opt-22 / mlir-translate-22 missing")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))


def test_the_timed_call_writes_only_its_own_areas():
    import cpu_kernels

    _, module, inputs, _, _ = cpu_kernels.case_fc()
    prepare, _ = cpu_kernels.glow_runner(module, opt=1)
    call, fast = prepare(inputs)
    gc.collect()
    from glow_mlir.targets.cpu.area_plan import AreaPlan

    areas = next(c.cell_contents for c in prepare.__closure__  # type: ignore[union-attr]
                 if isinstance(c.cell_contents, AreaPlan))
    size = areas.activations_size
    assert size
    # arrays of the activation area's size, made now, get any memory freed since
    others = [np.full(size, 0x5A, np.uint8) for _ in range(8)]
    fast()
    for a in others:
        assert (a == 0x5A).all()
    x, w, b = inputs
    np.testing.assert_allclose(call()[0], x @ w + b, rtol=1e-4, atol=1e-4)
