"""What each `glow` op computes, in numpy: one clear reference kernel per op
(`kernels/<concept>.py`, registered with `@kernel`), the numerics they share
(`numerics.py`: quantization, fused activations) and the graph evaluator that runs a `glow`
function op by op (`graph_evaluator.py`).

It is the oracle for every graph pass and the frontend: clarity over speed. A layer of its
own between `dialects` and `analysis` (docs/architecture.md §2), so that graph passes
(`constant-fold`, `merge-constants`) evaluate ops with it and code generators in
`conversion` share its numerics, while `targets/interpreter` drives it (the instruction
interpreter runs each instruction with these kernels).
"""

from glow_mlir.semantics.graph_evaluator import (
    EvaluationError,
    evaluate_function,
    evaluate_module,
    evaluate_op,
)

__all__ = ["evaluate_module", "evaluate_function", "evaluate_op", "EvaluationError"]
