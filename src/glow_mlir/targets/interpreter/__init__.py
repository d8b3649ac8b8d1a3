"""The reference evaluator: runs `glow` graphs with numpy, one clear kernel per op.

It is the oracle for every graph pass and the frontend: clarity over speed.
"""

from glow_mlir.targets.interpreter.graph_evaluator import (
    EvaluationError,
    evaluate_function,
    evaluate_module,
    evaluate_op,
)
from glow_mlir.targets.interpreter.instr_interpreter import InstrExecutor, run_instr_module

__all__ = ["evaluate_module", "evaluate_function", "evaluate_op", "EvaluationError"]
__all__ += ["InstrExecutor", "run_instr_module"]
