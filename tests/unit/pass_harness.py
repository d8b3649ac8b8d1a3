"""Checks every graph pass test uses: run a pass on a copy of a graph and compare numbers.

    from pass_harness import assert_pass_preserves_numbers
    @given(glow_graphs(max_ops=8))
    def test_my_pass(g):
        assert_pass_preserves_numbers(g.module, g.inputs, "my-pass")
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from glow_graphs import clone_module
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.ir.text import verify_module
from glow_mlir.targets.interpreter import evaluate_module


def copy_module(module: ModuleOp) -> ModuleOp:
    """A deep copy with its own resource table (through text, as a user would)."""
    return clone_module(module)


def assert_close(expected: list[np.ndarray], got: list[np.ndarray], rtol=1e-4, atol=1e-5,
                 what: str = "") -> None:
    assert len(expected) == len(got), f"{what}: {len(expected)} outputs vs {len(got)}"
    for i, (e, g) in enumerate(zip(expected, got)):
        assert e.shape == g.shape, f"{what}: output {i} shape {e.shape} vs {g.shape}"
        assert e.dtype == g.dtype, f"{what}: output {i} dtype {e.dtype} vs {g.dtype}"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"{what}: output {i}")


def assert_pass_preserves_numbers(module: ModuleOp, inputs: list[np.ndarray], spec: str,
                                  rtol=1e-4, atol=1e-5) -> ModuleOp:
    """Run `spec` on a copy of `module`; it must verify and give the same outputs.
    Returns the transformed copy so a test can also check what the pass did."""
    verify_module(module)  # a bad fixture should fail here, not as a kernel shape error
    before = evaluate_module(module, inputs)
    after_module = run_pipeline(copy_module(module), spec)
    verify_module(after_module)
    after = evaluate_module(after_module, inputs)
    assert_close(before, after, rtol, atol, what=spec)
    return after_module


def op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("glow.")]


def tensor_text(shape) -> str:
    """An f32 tensor type as IR text, for hand-written fixtures."""
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def constant_text(array: np.ndarray) -> str:
    """A glow.constant of `array` (f32) as IR text."""
    import json

    return f"glow.constant dense<{json.dumps(array.tolist())}> : {tensor_text(array.shape)}"


def ops_after_pass(text: str, inputs: list[np.ndarray], spec: str) -> Counter:
    """Parse `text`, run `spec` (numbers preserved), and count the glow ops left."""
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module

    after = assert_pass_preserves_numbers(parse_module(make_context(), text), inputs, spec)
    return Counter(op_names(after))
