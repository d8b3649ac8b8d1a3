"""Functions into LLVM modules: each function by the walk (`translate_function`) or,
when it cannot, by the dialect route (`fallback.py`); one module for bundles
(`module_text`, kernels internal and `noinline`) or one per function for the JIT
(`split_texts`)."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from glow_mlir.conversion.glow_ir_to_loops.functions import KERNEL_ATTR
from glow_mlir.conversion.loops_to_llvm_ir.fallback import fallback
from glow_mlir.conversion.loops_to_llvm_ir.vocabulary import (
    FunctionText,
    Untranslatable,
    declaration_of,
    global_name,
    signature,
)
from glow_mlir.conversion.loops_to_llvm_ir.writer import FunctionWriter


def translate_function(f: func.FuncOp, callees: dict[str, str]) -> FunctionText:
    """`f` in LLVM IR (Untranslatable if the walk cannot); `callees` maps each function
    of the module to its `declare` line."""
    name = f.sym_name.data
    kernel = KERNEL_ATTR in f.attributes
    result, arg_types, arg_attrs = signature(f)
    declaration = callees.get(name) or declaration_of(f)
    blocks = list(f.body.blocks)
    if not blocks:
        return FunctionText(name, kernel, declaration, None)
    if len(blocks) > 1:
        raise Untranslatable(f, "a body with several blocks")
    w = FunctionWriter(f, callees)
    params = []
    for arg, t, attrs in zip(blocks[0].args, arg_types, arg_attrs):
        w.refs[arg] = w.fresh()
        params.append(f"{t}{attrs} {w.refs[arg]}")
    w.start(w.label())
    w.ops(blocks[0])
    lines = [line for line in w.lines if line is not None]
    lines[1:1] = w.allocas
    body = "\n".join(lines)
    head = f"{result} {global_name(name)}({', '.join(params)})"
    extra = "".join("\n" + text for text in w.extra)

    def render(linkage: str, noinline: bool) -> str:
        return (f"define {linkage + ' ' if linkage else ''}{head}"
                f"{' noinline' if noinline else ''} {{\n{body}\n}}\n{extra}")

    return FunctionText(name, kernel, declaration, render, w.decls)


def translate_module(module: ModuleOp, triple: str) -> list[FunctionText]:
    """Each function of loop-IR `module`, in order: the walk, or the dialect route for a
    function it cannot translate. Untranslatable if the module holds other ops."""
    funcs = []
    for op in module.ops:
        if not isinstance(op, func.FuncOp):
            raise Untranslatable(op, "only func.func at the top of the module")
        funcs.append(op)
    callees: dict[str, str] = {}
    for f in funcs:
        try:
            callees[f.sym_name.data] = declaration_of(f)
        except Untranslatable:
            pass  # its fallback refuses it, located
    out = []
    for f in funcs:
        try:
            out.append(translate_function(f, callees))
        except Untranslatable:
            out.append(fallback(f, module, triple))
    return out


def _module(triple: str, decls: dict[str, str], defines: list[str]) -> str:
    head = f'; ModuleID = ""\ntarget triple = "{triple}"\ntarget datalayout = ""\n\n'
    return head + "".join(f"{d}\n\n" for d in decls.values()) + "\n".join(defines)


def module_text(module: ModuleOp, triple: str) -> str:
    """The whole loop-IR `module` as one LLVM module: kernel functions internal and
    `noinline` (see the module docstring), the others external."""
    texts = translate_module(module, triple)
    defined = {t.name for t in texts if t.render is not None}
    decls: dict[str, str] = {}
    defines = []
    for t in texts:
        if t.render is None:
            decls.setdefault(t.name, t.declaration)
            continue
        defines.append(t.define("internal", True) if t.kernel else t.define())
        for name, line in t.decls.items():
            if name not in defined:
                decls.setdefault(name, line)
    return _module(triple, decls, defines)


def split_texts(module: ModuleOp, entry: str, triple: str) -> tuple[str, list[str]]:
    """LLVM IR text of entry point `entry` (what it calls declared) and of each other
    function defined in loop-IR `module`, each its own module with external linkage (the
    JIT links them by name); what `jit.split_ir` gives for an LLVM-dialect module."""
    texts = translate_module(module, triple)
    mains = [t for t in texts if t.name == entry and t.render is not None]
    if len(mains) != 1:
        raise ValueError(f"no function @{entry} in the compiled module")
    kernels = []
    entry_text = ""
    for t in texts:
        if t.render is None:
            continue
        text = _module(triple, t.decls, [t.define()])
        if t is mains[0]:
            entry_text = text
        else:
            kernels.append(text)
    return entry_text, kernels
