"""One compiled model called from several threads gives what sequential calls give, on
every backend (interpreter and accel: serialized by the executor's lock over their shared
memory; cpu: each call its own mutable and activation areas). The full figure, 8 threads
x 1,000 calls, is `python fuzz/concurrency.py`."""

from __future__ import annotations

import os
import sys

import pytest

import glow_mlir

FUZZ = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fuzz")
if FUZZ not in sys.path:
    sys.path.insert(0, FUZZ)

from concurrency import concurrency_model, hammer, pool_model  # noqa: E402


@pytest.mark.parametrize("backend", ["interpreter", "cpu", "accel"])
def test_threads_get_the_sequential_outputs(backend):
    model = glow_mlir.compile(concurrency_model(), backend=backend)
    made, wrong, errors = hammer(model, threads=8, calls=20)
    assert errors == []
    assert (made, wrong) == (160, 0)


@pytest.mark.parametrize("pool_threads", [2, 3])
def test_threads_through_the_native_pool(pool_threads):
    """Every kernel split (the pool busy on every call), 8 Python threads at once."""
    from glow_mlir.conversion.glow_ir_to_loops.parallel import PARALLEL_ATTR

    model = pool_model(pool_threads)
    assert any(PARALLEL_ATTR in op.attributes for op in model.module.walk())
    made, wrong, errors = hammer(model, threads=8, calls=20)
    assert errors == []
    assert (made, wrong) == (160, 0)
