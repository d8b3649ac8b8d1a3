"""The interpreter target: the instruction IR run with numpy on one byte arena at the
planned offsets (`instr_interpreter.py`), each instruction by the reference kernel of its
graph op. The reference evaluator itself (the numpy semantics of each `glow` op and the
graph evaluator) is `glow_mlir.semantics`, re-exported here.
"""

from glow_mlir.semantics import (
    EvaluationError,
    evaluate_function,
    evaluate_module,
    evaluate_op,
)
from glow_mlir.targets.interpreter.instr_interpreter import InstrExecutor, run_instr_module

__all__ = ["evaluate_module", "evaluate_function", "evaluate_op", "EvaluationError"]
__all__ += ["InstrExecutor", "run_instr_module"]
