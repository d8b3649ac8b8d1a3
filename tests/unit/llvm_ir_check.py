"""The two routes from the CPU backend's loop IR to LLVM IR, compared: the one-walk
translation (`conversion/loops_to_llvm_ir/`, what the JIT and bundles compile) and the
reference LLVM-dialect route (`lower_loops_to_llvm` + xDSL's `convert_module`). LLVM
parses both; each function's definition must be the same instruction for instruction
once value names are numbered in order of appearance (the routes name values
differently) and comments dropped. Equal definitions compile to the same machine code.

    assert_same_llvm_ir(loops_module, "main")   # loop IR after convert-glow-ir-to-loops
"""

from __future__ import annotations

import re

import llvmlite.binding as llvm

from glow_mlir.conversion.loops_to_llvm import lower_loops_to_llvm, prepare_loops
from glow_mlir.targets.cpu import jit

_LOCAL = re.compile(r'%("(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+)'
                    r'|^("(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+):', re.M)


def normalized_definitions(text: str) -> dict[str, str]:
    """Each defined function of LLVM IR `text` as LLVM prints it, local names numbered in
    order of appearance, comments and attribute-group numbers dropped, its attributes and
    linkage appended."""
    mod = llvm.parse_assembly(text)
    mod.verify()
    out = {}
    for f in mod.functions:
        if f.is_declaration:
            continue
        names: dict[str, str] = {}

        def number(m: re.Match) -> str:
            key = m.group(1) or m.group(2)
            n = names.setdefault(key, f"x{len(names)}")  # noqa: B023 (used in this iteration)
            return f"%{n}" if m.group(1) else f"{n}:"

        body = re.sub(r"[ \t]*;.*", "", str(f))
        body = re.sub(r" #\d+", "", body)
        out[f.name] = f"{f.linkage} {sorted(f.attributes)}\n{_LOCAL.sub(number, body)}"
    return out


def _definitions(texts: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for text in texts:
        for name, body in normalized_definitions(text).items():
            assert name not in out, f"@{name} defined twice"
            out[name] = body
    return out


def _holds_vector_ops(module) -> bool:
    """Whether the loop IR holds `vector` ops (gemm's micro-kernel, the VNNI products):
    the reference route has no lowering for them (`loops_to_llvm_ir/vector_ops.py`), so
    there is nothing to compare; their kernels are checked against the scalar loops' bits
    (`test_cpu_gemm_micro.py`) and the interpreter instead."""
    from xdsl.dialects import vector

    return any(isinstance(op, (vector.LoadOp, vector.StoreOp)) for op in module.walk())


def assert_same_llvm_ir(loops_module, entry: str) -> None:
    """The translation of loop-IR `loops_module` (left unchanged, apart from
    `prepare_loops`) equals the reference route's on a copy, function for function, in
    the JIT's split form and in the one-module form of bundles (not checked for a module
    holding vector ops: `_holds_vector_ops`)."""
    if _holds_vector_ops(loops_module):
        return
    prepare_loops(loops_module)
    reference = loops_module.clone()
    lower_loops_to_llvm(reference, prepared=True)
    for ours, theirs in [(_definitions([t for e, ks in [jit.split_ir(loops_module, entry)]
                                        for t in [e, *ks]]),
                          _definitions([t for e, ks in [jit.split_ir(reference, entry)]
                                        for t in [e, *ks]])),
                         (_definitions([jit.unoptimized_ir(loops_module)]),
                          _definitions([jit.unoptimized_ir(reference)]))]:
        assert ours.keys() == theirs.keys()
        for name in ours:
            assert ours[name] == theirs[name], f"@{name} differs:\n{ours[name]}\n---\n" \
                                               f"{theirs[name]}"
