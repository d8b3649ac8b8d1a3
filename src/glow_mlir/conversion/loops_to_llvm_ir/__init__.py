"""The CPU backend's loop IR (func, scf, arith, math, memref on static memrefs: what
`convert-glow-ir-to-loops` and `convert-glow-accel-to-loops` emit, after `cse_pure`)
straight to LLVM IR text, in one walk per function.

    entry, kernels = split_texts(module, "NET", triple)   # one text per function (the JIT)
    text = module_text(module, triple)                     # one module (bundles, --emit llvm-ir)

Why: the LLVM-dialect route (`convert-loops-to-llvm`, then xDSL's `convert_module`)
builds every op three or four times as xDSL objects (scf -> cf, each dialect -> llvm
behind unrealized casts, then llvmlite objects) through xDSL's generic pattern
rewriter, ~0.6 ms per op: 4.5 s of ResNet-18's 7 s compile for 6,300 ops. Here each op
is one line of text (docs/architecture.md §5 records the decision). The dialect passes
stay, for glow-opt, FileCheck and `--emit llvm`, and
are the reference: this walk produces, instruction for instruction and block for block,
what they and `convert_module` produce (same order, same flags, same intrinsics and
libm calls), so LLVM compiles the same code (tests/unit/test_loops_to_llvm_ir.py
compares both after LLVM parses them, and the models' outputs bit for bit). Where the
text differs, it is in spelling only: values are named `%vN`, overloaded intrinsics
carry their type suffix (`llvm.exp.f32`; LLVM renames xDSL's `llvm.exp` so on parse),
fast-math flags are sorted (xDSL's come from a frozenset, whose order changes between
processes: a cache keyed by the text needs it stable).

What `lower_loops_to_llvm` guarantees, kept here (docs/architecture.md §5): memrefs are
bare pointers (the entry point is Glow's three-pointer bundle API), `index` is i64,
accesses are `getelementptr inbounds` off the `noalias` arguments with row-major
linear indices (`nsw`), no ptrtoint/inttoptr (they stop LLVM's vectorizer); kernel
functions (`glow.kernel`) are internal and `noinline` in one module (`module_text`:
a bundle exports its entry point only; inlined, the entry point would be one huge
function again) and external in their own modules for the JIT (`split_texts`).

A function holding an op this walk has no emitter for (a table keyed by op class, as
xDSL's interpreter keys its `@impl`s), or a type it does not translate, falls back to
the dialect route (`lower_function` on a copy, then `convert_module`): the result is
the same code, only slower, and an op neither route supports fails there with the
dialect passes' located message.

The package, by concept: `vocabulary.py` (LLVM's spelling of types, constants, names and
signatures), `writer.py` (the walk over one function and the emitter table),
`func_ops.py`, `scf_ops.py`, `arith_ops.py`, `math_ops.py`, `memref_ops.py`,
`vector_ops.py` (the emitters, one module per dialect), `outlining.py` (parallel loops
outlined into functions of their own), `fallback.py` (the dialect route) and
`assembly.py` (functions into modules). Importing the package registers every emitter.
"""

from glow_mlir.conversion.loops_to_llvm_ir import (  # noqa: F401 (they register emitters)
    arith_ops,
    func_ops,
    math_ops,
    memref_ops,
    outlining,
    scf_ops,
    vector_ops,
)
from glow_mlir.conversion.loops_to_llvm_ir.assembly import (
    module_text,
    split_texts,
    translate_function,
    translate_module,
)
from glow_mlir.conversion.loops_to_llvm_ir.vocabulary import (
    FunctionText,
    Untranslatable,
    declaration_of,
    global_name,
    type_text,
)
from glow_mlir.conversion.loops_to_llvm_ir.writer import EMITTERS, FunctionWriter, dead_ops, impl

__all__ = [
    "EMITTERS",
    "FunctionText",
    "FunctionWriter",
    "Untranslatable",
    "dead_ops",
    "declaration_of",
    "global_name",
    "impl",
    "module_text",
    "split_texts",
    "translate_function",
    "translate_module",
    "type_text",
]
